// Step times per cluster state (step_table.h): the healthy step time given, and one step
// simulation per slow-GPU clock level the run spec's gray failures can produce; the job's shape.
#include "run/step_table.h"

#include <algorithm>

namespace fleetsim {

StepTable build_step_table(const RunSpec& spec, const StepInput& base, double healthy_step_s,
                           const Topology& topo, const CollectiveParams& cp,
                           const ComputeModel& compute, Progress* progress) {
  StepTable t;
  t.healthy_s = healthy_step_s;
  const std::vector<int> levels = gray_levels(spec);
  const auto total = static_cast<int64_t>(levels.size());
  int64_t done = 0;
  if (progress != nullptr) progress->begin();
  for (int level : levels) {
    StepInput in = base;
    in.symmetry = false;
    in.want_trace = false;
    in.gpu_speed.assign(1, level / 20.0);
    t.slow_gpu_s[level] = simulate_step(in, topo, cp, compute).step_time_s;
    ++done;
    if (progress != nullptr) progress->show(done, total, done, 0, done == total);
  }
  return t;
}

JobShape job_shape(const ParallelConfig& par, int gpus_per_node, int domain_nodes) {
  JobShape j;
  j.gpus = par.tp * par.pp * par.cp * par.dp;
  j.gpus_per_node = std::max(1, gpus_per_node);
  j.nodes = (j.gpus + j.gpus_per_node - 1) / j.gpus_per_node;
  j.domain_nodes = std::max(1, domain_nodes);
  j.dp = par.dp;
  const int group = par.tp * par.cp;  // consecutive ranks of one DP replica and stage
  j.replicas_per_node = std::clamp(j.gpus_per_node / std::max(1, group), 1, par.dp);
  j.tokens_per_step = static_cast<double>(par.global_batch) * par.seq_len;
  return j;
}

}  // namespace fleetsim
