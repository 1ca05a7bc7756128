// Memory rows of a reference CSV (validation/memory-measured.csv's columns): builds the model,
// parallel layout and framework memory options a row describes and predicts the measured
// statistic with the memory estimator (sim/workload/memory.h).
//
// Metrics: peak_allocated_gib / _gb (torch.cuda.max_memory_allocated) → the allocated peak;
// peak_reserved_gib (max_memory_reserved) → allocated + the caching allocator's reserve;
// allocated_after_step_gib (Megatron's mem-allocated-bytes after the optimizer step) → the
// persistent state (weights, gradients, optimizer); device_memory_used_gib (nvidia-smi) →
// reserved + CUDA context and NCCL buffers. Rows repeating another row of the same run
// (peak_allocated_max_over_run_gib) and statistics the source does not name are skipped with
// the reason.
//
// Row conventions read from `notes` (the CSV's documented KEY=value knobs): layers=N (proxy
// models with fewer decoder layers), dense_layers=N, num_experts=N, mtp=none /
// mtp_num_layers=N, the rank the source reports (rank=pp stage K, last stage / last global
// rank, or the maximum over all ranks), framework=..., expandable_segments,
// attention_backend=unfused, grad_accum_fp32 / grad_reduce_in_fp32, moe capacity factor,
// recipe=megatron-bridge-perf (start from megatron_bridge_perf_options(): a run of
// Megatron-Bridge's performance recipes).
#pragma once

#include <map>
#include <string>

#include "validate/validate.h"
#include "workload/memory.h"

namespace fleetsim {

// Whether `metric` is one of the memory metrics above.
bool is_memory_metric(const std::string& metric);

// Fills v->predicted (GiB or GB as the metric says), v->config and v->memory_fits, or returns
// false with the reason it cannot model the row in *why. `fields` maps column name to value.
bool predict_memory_row(const std::map<std::string, std::string>& fields,
                        const std::string& data_dir, ValidationRow* v, std::string* why);

// Source label of a memory row for the per-source summary (SimuMax, Megatron-LM CI,
// torchtitan, torchao, ...), from its source_url.
std::string memory_row_source(const std::string& source_url);

}  // namespace fleetsim
