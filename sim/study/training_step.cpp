// One training step of a scenario (training_step.h): step input, MoE routing, the balanced step
// for the slowdown, and the memory of EPLB's redundant experts.
#include "study/training_step.h"

#include <algorithm>

#include "core/error.h"

namespace fleetsim {

namespace {

// Tokens one EP rank routes per micro-batch: the micro-batch's sequence share under CP, split
// over TP with sequence parallelism (the layer cost model's convention).
double tokens_per_ep_rank(const ParallelConfig& p) {
  double tokens = static_cast<double>(p.micro_batch) * p.seq_len / p.cp;
  if (p.sequence_parallel && p.tp > 1) tokens /= p.tp;
  return tokens;
}

// EPLB replicas: each extra expert slot holds one expert of every MoE layer of the stage:
// BF16 weight, FP32 gradient and (sharded over the expert-data-parallel group) FP32 master
// weight and Adam m, v. 0 without extra slots.
double eplb_extra_bytes(const ModelSpec& m, const ParallelConfig& p, int slots_per_rank) {
  const int extra_slots = slots_per_rank - m.moe.experts / p.ep;
  if (extra_slots <= 0) return 0;
  const double one_expert = static_cast<double>(layer_params(m, m.layers - 1).one_expert);
  const double layers_on_stage = static_cast<double>(moe_layer_count(m)) / p.pp;
  const double edp = static_cast<double>(p.tp) * p.cp * p.dp / (static_cast<double>(p.ep) * p.etp);
  return extra_slots * one_expert * layers_on_stage * (2.0 + 4.0 + 12.0 / std::max(1.0, edp));
}

// framework.release switches recorded but not applied: never dropped silently.
void add_release_notes(const TrainingWorkload& w, StepResult* r) {
  r->warnings.insert(r->warnings.end(), w.release_notes.begin(), w.release_notes.end());
}

}  // namespace

StepInput training_step_input(const TrainingWorkload& w, uint64_t seed, bool want_trace) {
  StepInput in;
  in.model = w.model;
  in.par = w.par;
  in.fw = w.fw;
  in.symmetry = w.symmetry;
  in.ranks_per_domain = w.ranks_per_domain;
  in.seed = seed;
  in.want_trace = want_trace;
  return in;
}

StepOutcome simulate_training_step(const TrainingWorkload& w, uint64_t seed,
                                   const StudyCluster& cluster, bool want_trace) {
  FLEETSIM_ASSERT(cluster.compute != nullptr);
  const ComputeModel& compute = *cluster.compute;
  StepOutcome out;
  out.input = training_step_input(w, seed, want_trace);
  StepInput& in = out.input;
  if (!w.routing || !is_moe(w.model)) {
    out.result = simulate_step(in, cluster.topo, cluster.collective, compute);
    add_release_notes(w, &out.result);
    return out;
  }
  const ParallelConfig& p = w.par;
  const ModelSpec& m = w.model;
  const RoutingResult routed =
      route_tokens(*w.routing, m.moe.experts, m.moe.top_k, p.ep, moe_layer_count(m),
                   p.micro_batches(), tokens_per_ep_rank(p), seed);
  MoeOutcome moe;
  moe.spec = *w.routing;
  moe.summary = summarize(routed);
  in.moe = load_table(routed);
  out.result = simulate_step(in, cluster.topo, cluster.collective, compute);
  StepInput balanced = in;
  balanced.moe = MoeLoadTable{};
  balanced.want_trace = false;
  moe.balanced_step_s =
      simulate_step(balanced, cluster.topo, cluster.collective, compute).step_time_s;
  const double step_s = out.result.step_time_s;
  moe.slowdown_pct =
      moe.balanced_step_s > 0 ? (step_s - moe.balanced_step_s) / moe.balanced_step_s * 100 : 0;
  moe.all_to_all_share = step_s > 0 ? out.result.breakdown.ep_exposed / step_s : 0;
  moe.eplb_extra_bytes = eplb_extra_bytes(m, p, routed.slots_per_rank);
  out.moe = moe;
  add_release_notes(w, &out.result);
  return out;
}

StepOutcome simulate_training_step(const Scenario& s, const StudyCluster& cluster,
                                   bool want_trace) {
  FLEETSIM_ASSERT(s.training.has_value());
  return simulate_training_step(*s.training, s.seed, cluster, want_trace);
}

}  // namespace fleetsim
