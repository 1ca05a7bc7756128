// Pipeline schedules of the step simulator: the 1F1B / interleaved 1F1B order of a stage and
// the split of the decoder layers over the virtual stages (pp·vp of them; virtual stage
// v = chunk·pp + stage).
#pragma once

#include <string>
#include <vector>

#include "workload/layer_costs.h"
#include "workload/step.h"

namespace fleetsim::step_internal {

// Megatron-LM's interleaved 1F1B order (schedules.py): the k-th forward runs chunk
// (k mod (pp·vp)) / pp of micro-batch (k / (pp·vp))·pp + k mod pp; backwards mirror the chunks.
struct ScheduleStep {
  bool forward;
  int chunk;
  int mb;
};

// The forward and backward passes pipeline stage `stage` runs, in order, for M micro-batches:
// warm-up forwards, steady one-forward-one-backward, cool-down backwards.
std::vector<ScheduleStep> schedule_order(int pp, int vp, int M, int stage);

// Splits `layers` over `vstages` virtual stages as evenly as possible; the first and last
// virtual stages (which also hold the embedding and the LM head) get the smaller share.
std::vector<int> split_layers(int layers, int vstages);

// Contiguous partition of items [embedding, layer 0 .. layer n−1, head] into `parts` groups
// minimising the largest group's cost; the embedding stays in the first group and the head in
// the last. Returns the number of decoder layers per group. O(parts · n²).
std::vector<int> balanced_split(const std::vector<double>& items, int parts);

// Decoder layers per virtual stage (`vstages` of them): an even split (Megatron's default) when
// the layers divide evenly, otherwise the contiguous split that balances the stages' estimated
// time (forward + backward from `costs`), the way NeMo's recipes lay out uneven pipelines
// (pipeline_model_parallel_layout); kEven / kBalanced force one or the other. A balanced split
// adds a line to `warnings`.
std::vector<int> layers_per_vstage(const ModelSpec& m, PipelineSplit split, int vstages,
                                   LayerCostModel& costs, std::vector<std::string>* warnings);

}  // namespace fleetsim::step_internal
