// Work limits checked from the scenario file alone (limits.h).
#include "scenario/limits.h"

#include <algorithm>

#include "core/error.h"
#include "core/units.h"

namespace fleetsim {
namespace {

int collective_gpus(const Scenario& s) {
  const CollectiveWorkload& w = *s.collective;
  return w.group_gpus > 0 ? w.group_gpus : s.nodes * s.system.node.gpus;
}

// Flows of the step's expert all-to-all (one flow per ordered pair of the EP group), 0 without
// expert parallelism.
int64_t step_alltoall_flows(const TrainingWorkload& t) {
  const int64_t ep = t.par.ep;
  return is_moe(t.model) && ep > 1 ? ep * (ep - 1) : 0;
}

std::string mib(int64_t bytes) {
  return format_bytes(Bytes(bytes));
}

void check_memory(const Scenario& s, const std::string& pointer, const LoadOptions& o,
                  const std::string& how) {
  const int64_t need = estimated_sim_memory(s);
  if (need <= o.max_sim_memory) return;
  throw InputError(s.file, pointer,
                   "the simulation would take about " + mib(need) + " of memory (" + how +
                       "); the limit is " + mib(o.max_sim_memory) +
                       " (raise it with --max-sim-memory)");
}

}  // namespace

int64_t estimated_sim_memory(const Scenario& s) {
  if (s.collective) {
    const CollectiveWorkload& w = *s.collective;
    const FlowEstimate f =
        estimate_collective_flows(s.system, w.op, w.algorithm, collective_gpus(s));
    return f.largest_plan * kBytesPerPlanFlow;
  }
  if (s.training) {
    const TrainingWorkload& t = *s.training;
    return estimated_step_passes(t) * kBytesPerStepPass +
           step_alltoall_flows(t) * kBytesPerPlanFlow;
  }
  return 0;
}

void check_collective_limits(const Scenario& s, const std::string& pointer,
                             const LoadOptions& options) {
  FLEETSIM_ASSERT(s.collective.has_value());
  const CollectiveWorkload& w = *s.collective;
  const int n = collective_gpus(s);
  const FlowEstimate f = estimate_collective_flows(s.system, w.op, w.algorithm, n);
  const std::string what = std::string(to_string(w.op)) + " over " + std::to_string(n) + " GPUs (" +
                           to_string(w.algorithm) + ")";
  if (f.flows > options.max_flows) {
    throw InputError(s.file, pointer,
                     what + " simulates " + std::to_string(f.flows) + " flows per size" +
                         (w.op == CollOp::kAllToAll ? " (one per ordered GPU pair)" : "") +
                         "; the limit is " + std::to_string(options.max_flows) +
                         " (raise it with --max-flows)");
  }
  check_memory(s, pointer, options,
               what + ": " + std::to_string(f.largest_plan) + " flows in its largest plan × " +
                   std::to_string(kBytesPerPlanFlow) + " B");
}

void check_training_limits(const Scenario& s, const std::string& pointer,
                           const LoadOptions& options) {
  FLEETSIM_ASSERT(s.training.has_value());
  const TrainingWorkload& t = *s.training;
  const int64_t passes = estimated_step_passes(t);
  if (passes > options.max_passes) {
    throw InputError(s.file, pointer,
                     "the step has " + std::to_string(passes) +
                         " forward/backward passes to simulate (TP units × micro-batches per "
                         "pipeline × model chunks × 2); the limit is " +
                         std::to_string(options.max_passes) + " (raise it with --max-passes)");
  }
  const int64_t a2a = step_alltoall_flows(t);
  if (a2a > options.max_flows) {
    throw InputError(s.file, "/workload/parallelism/ep",
                     "the expert all-to-all over " + std::to_string(t.par.ep) +
                         " EP ranks simulates " + std::to_string(a2a) +
                         " flows (one per ordered pair); the limit is " +
                         std::to_string(options.max_flows) + " (raise it with --max-flows)");
  }
  check_memory(s, pointer, options,
               std::to_string(passes) + " passes × " + std::to_string(kBytesPerStepPass) + " B" +
                   (a2a > 0 ? " + " + std::to_string(a2a) + " all-to-all flows × " +
                                  std::to_string(kBytesPerPlanFlow) + " B"
                            : std::string()));
}

}  // namespace fleetsim
