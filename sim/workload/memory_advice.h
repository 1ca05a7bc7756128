// What to change when a training configuration does not fit in HBM: single changes to the
// parallel layout or the framework's memory options, each re-estimated with the memory
// estimator (memory.h), listed cheapest first.
//
// The order is the usual throughput cost of each change (a rule of thumb, not simulated):
//   1. the distributed optimizer (no compute, the same communication volume);
//   2. a smaller micro-batch (the same global batch in more micro-batches: smaller GEMMs);
//   3. selective recompute (core attention, then the MLP / expert activation / MLA
//      up-projections: a few % more compute);
//   4. more pipeline stages on the same GPUs (pp × 2 or × 4, dp divided: a larger bubble);
//   5. fine-grained activation offloading (PCIe traffic overlapped with compute);
//   6. full recompute of the fewest layers per model chunk that fits (one more forward of them);
//   7. optimizer CPU offload of the smallest fraction that fits (the optimizer step on the CPU).
#pragma once

#include <string>
#include <vector>

#include "workload/memory.h"

namespace fleetsim {

struct MemoryFix {
  std::string change;  // e.g. "micro-batch 2 -> 1", "pp 8 -> 16 (dp 32 -> 16)"
  ParallelConfig par;  // the configuration with the change applied
  MemoryOptions options;
  MemoryBreakdown result;  // its estimate (fits)
};

// The changes above that make (m, p, o) fit in `hbm_bytes`, in that order; empty when it fits
// already or nothing single does. O(candidates · layers · pp).
std::vector<MemoryFix> memory_fixes(const ModelSpec& m, const ParallelConfig& p, int64_t hbm_bytes,
                                    const MemoryOptions& o);

// One line per fix: "  CHANGE: PEAK GiB reserved + device".
std::string format_memory_fixes(const std::vector<MemoryFix>& fixes);

}  // namespace fleetsim
