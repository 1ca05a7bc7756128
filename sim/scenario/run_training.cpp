#include "scenario/run_training.h"

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

}  // namespace fleetsim
