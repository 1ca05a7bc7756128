#include "study/training_step.h"

namespace fleetsim {

TrainingRun simulate_training(const Scenario& s, const Topology& topo, const ComputeModel& compute,
                              bool want_trace) {
  const TrainingWorkload& w = *s.training;
  StepInput in;
  in.model = w.model;
  in.par = w.par;
  in.fw = w.fw;
  in.symmetry = w.symmetry;
  in.ranks_per_domain = w.ranks_per_domain;
  in.seed = s.seed;
  in.want_trace = want_trace;
  TrainingRun run;
  if (!w.routing || !is_moe(w.model)) {
    run.result = simulate_step(in, topo, s.collective_params, compute);
    return run;
  }
  const ParallelConfig& p = w.par;
  const ModelSpec& m = w.model;
  // Tokens one EP rank routes per micro-batch: the micro-batch's sequence share under CP, split
  // over TP with sequence parallelism (the layer cost model's convention).
  double tokens = static_cast<double>(p.micro_batch) * p.seq_len / p.cp;
  if (p.sequence_parallel && p.tp > 1) tokens /= p.tp;
  const RoutingResult routed = route_tokens(*w.routing, m.moe.experts, m.moe.top_k, p.ep,
                                            moe_layer_count(m), p.micro_batches(), tokens, s.seed);
  MoeRun moe;
  moe.spec = *w.routing;
  moe.summary = summarize(routed);
  in.moe = load_table(routed);
  run.result = simulate_step(in, topo, s.collective_params, compute);
  StepInput balanced = in;
  balanced.moe = MoeLoadTable{};
  balanced.want_trace = false;
  moe.balanced_step_s = simulate_step(balanced, topo, s.collective_params, compute).step_time_s;
  moe.slowdown_pct = moe.balanced_step_s > 0 ? (run.result.step_time_s - moe.balanced_step_s) /
                                                   moe.balanced_step_s * 100
                                             : 0;
  moe.all_to_all_share =
      run.result.step_time_s > 0 ? run.result.breakdown.ep_exposed / run.result.step_time_s : 0;
  // EPLB replicas: each extra expert slot holds one expert of every MoE layer of the stage:
  // BF16 weight, FP32 gradient and (sharded over the expert-data-parallel group) FP32 master
  // weight and Adam m, v.
  const int extra_slots = routed.slots_per_rank - m.moe.experts / p.ep;
  if (extra_slots > 0) {
    const double one_expert = static_cast<double>(layer_params(m, m.layers - 1).one_expert);
    const double layers_on_stage = static_cast<double>(moe_layer_count(m)) / p.pp;
    const double edp =
        static_cast<double>(p.tp) * p.cp * p.dp / (static_cast<double>(p.ep) * p.etp);
    moe.eplb_extra_bytes =
        extra_slots * one_expert * layers_on_stage * (2.0 + 4.0 + 12.0 / std::max(1.0, edp));
  }
  run.moe = moe;
  return run;
}

}  // namespace fleetsim
