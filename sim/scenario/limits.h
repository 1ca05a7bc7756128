// Work limits checked from a scenario file alone, before anything is allocated (the loader calls
// them; the run-level events are checked by the study layer once the healthy step is known).
// Each refusal is an InputError naming the limit, the estimate and the flag that raises it.
#pragma once

#include <cstdint>
#include <string>

#include "scenario/scenario.h"

namespace fleetsim {

// Peak memory of a training step's simulation per forward/backward pass (events, per-unit
// state and the pass records), measured: the Llama 3.1 405B step on 131,072 B200 (4,194,304
// passes) peaks at 177 MiB and the same on 16,384 (524,288 passes) at 21 MiB, release build:
// (177 − 21) MiB / 3.67 M passes ≈ 45 bytes.
constexpr int64_t kBytesPerStepPass = 48;

// Estimated peak memory of simulating the scenario (s.collective or s.training set): its
// collective's largest plan, or the step's passes and its largest all-to-all.
int64_t estimated_sim_memory(const Scenario& s);

// Flows and memory of a collective scenario, passes, all-to-all flows and memory of a training
// scenario, against `options`. `pointer` is where the scenario sets the work's size (the JSON
// pointer the message names).
void check_collective_limits(const Scenario& s, const std::string& pointer,
                             const LoadOptions& options);
void check_training_limits(const Scenario& s, const std::string& pointer,
                           const LoadOptions& options);

}  // namespace fleetsim
