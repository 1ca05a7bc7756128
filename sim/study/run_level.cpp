#include "study/run_level.h"

#include <algorithm>
#include <cmath>

#include "run/step_table.h"

namespace fleetsim {

RunOutcome simulate_run(const Scenario& s, const Topology& topo, const ComputeModel& compute,
                        const TrainingRun& step, int threads, bool want_events) {
  const TrainingWorkload& w = *s.training;
  const RunSpec& spec = *s.run;
  // The same step input as simulate_training, so slow-GPU states differ only in gpu_speed.
  StepInput in;
  in.model = w.model;
  in.par = w.par;
  in.fw = w.fw;
  in.symmetry = w.symmetry;
  in.ranks_per_domain = w.ranks_per_domain;
  in.seed = s.seed;
  if (w.routing && is_moe(w.model)) {
    const ParallelConfig& p = w.par;
    double tokens = static_cast<double>(p.micro_batch) * p.seq_len / p.cp;
    if (p.sequence_parallel && p.tp > 1) tokens /= p.tp;
    in.moe = load_table(route_tokens(*w.routing, w.model.moe.experts, w.model.moe.top_k, p.ep,
                                     moe_layer_count(w.model), p.micro_batches(), tokens, s.seed));
  }
  RunOutcome out;
  out.job = job_shape(w.par, s.system.node.gpus, s.system.scale_up.domain_nodes);
  out.steps =
      build_step_table(spec, in, step.result.step_time_s, topo, s.collective_params, compute);
  out.summary = run_monte_carlo(spec, out.job, out.steps, s.seed, threads, want_events);
  return out;
}

EttrCurve ettr_vs_interval(const RunSpec& spec, const JobShape& job, const StepTable& steps,
                           uint64_t seed, int replicas, int threads) {
  EttrCurve out;
  out.configured_s = resolved_interval_s(spec, job, steps);
  RunSpec auto_spec = spec;
  auto_spec.checkpoint.interval_kind = IntervalKind::kAuto;
  out.auto_s = resolved_interval_s(auto_spec, job, steps);
  const double center = out.auto_s > 0         ? out.auto_s
                        : out.configured_s > 0 ? out.configured_s
                                               : 1800;
  std::vector<double> grid;
  for (double f : {0.5, 1.0, 2.0, 4.0, 8.0})
    grid.push_back(std::max(steps.healthy_s, center * f));
  if (out.configured_s > 0) grid.push_back(out.configured_s);
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end(),
                         [](double a, double b) { return std::abs(a - b) <= 1e-9 * b; }),
             grid.end());
  for (double tau : grid) {
    RunSpec r = spec;
    r.replicas = std::max(1, replicas);
    r.checkpoint.interval_kind = IntervalKind::kMinutes;
    r.checkpoint.interval_minutes = tau / 60.0;
    const RunSummary m = run_monte_carlo(r, job, steps, seed, threads, false);
    out.points.push_back({tau, m.ettr_mean, m.ettr_p10, m.ettr_p90});
  }
  return out;
}

}  // namespace fleetsim
