// Per-rank cost of one transformer layer (and of the embedding, the LM head and the optimizer)
// for one micro-batch, as the kernels Megatron-LM / Transformer Engine run: norms, QKV / MLA
// projections, fused attention, output projection, (gated) MLP or MoE router + permute +
// grouped expert GEMMs + shared experts, residuals; FP8 / MXFP8 / NVFP4 casts; TP all-gather /
// reduce-scatter with sequence parallelism; CP ring exchanges; EP all-to-all dispatch / combine.
// Kernel times come from the ComputeModel, collective times from the topology (a callback).
//
// A layer becomes a list of Segments: compute (plus the TP communication it exposes, which is
// deterministic inside a TP group) up to the next point where ranks of other TP groups must
// synchronise (an EP all-to-all or a CP exchange).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "coll/collective.h"
#include "compute/compute_model.h"
#include "workload/model.h"
#include "workload/parallel.h"

namespace fleetsim {

struct FrameworkOptions;

// Parallel dimensions, in the order the step simulator uses as integers.
enum class Dim { kTp, kCp, kDp, kEdp, kEp, kPp };
const char* dim_name(Dim d);

// One line of a segment's host span D(s) = a + s·b (see Segment::span).
struct HostLine {
  Time a;  // host time up to a launch, plus the unscaled GPU time (exposed TP) from it on
  Time b;  // the scaled GPU time (kernels) from that launch on
};

// The kernels of a Segment run in order on one stream, issued in order by one host thread.
// With the host free at time h0 and the stream free at g0, kernel j starts at
// max(h0 + H_1..j, end of kernel j−1), so the segment ends at max(g0 + T, h0 + D) with
// D = max_j (H_1..j + t_j + … + t_n) (max-plus algebra), and the host is free again at h0 + H.
// Kernel times are scaled at replay by s = MoE load / GPU speed (TP time is not), so D is kept
// as the upper envelope of its lines over s > 0: D(s) = max over `span` of a + s·b.
struct Segment {
  Time compute;                // kernel time at nominal speed
  Time tp;                     // exposed TP communication
  Time host;                   // H: host time issuing the segment's launches
  std::vector<HostLine> span;  // D(s), the lines that reach the maximum for some s > 0
  bool d2h = false;            // after the segment the host waits for the GPU (device-to-host sync)
  const char* d2h_name = "";   // what the host waits for there (the trace's name)
  Time sync_host;              // host time launching the synchronisation below
  int sync_dim = -1;           // Dim of a blocking synchronisation after the compute, or -1
  Time sync;                   // its duration (once every member has arrived)
  const char* name = "";
  const char* sync_name = "";
  bool experts = false;  // the routed experts' kernels (scaled by the rank's MoE load)
};

struct CollCall {
  Dim dim;
  CollOp op;
  double bytes;
  // The call's time where the collective model does not give it (a flex dispatcher's dispatch /
  // combine: the expert-dispatch model); zero = the collective model's time of (dim, op, bytes).
  Time time = Time::zero();
  bool operator<(const CollCall& o) const {
    if (dim != o.dim) return dim < o.dim;
    if (op != o.op) return op < o.op;
    if (bytes != o.bytes) return bytes < o.bytes;
    return time < o.time;
  }
};

struct Block {
  std::vector<Segment> segs;
  std::vector<CollCall> colls;  // collectives inside (TP, EP, CP), for the link view
  double flops = 0;             // executed FLOPs on this rank (recompute included)
  int kernels = 0;
  int launches = 0;  // kernel launches the host issues (kernels minus those in CUDA graphs)
  int graphs = 0;    // CUDA graph launches
};

// Parameters of a layer one rank trains (gradients, DP reduction, optimizer): all it holds,
// or with LoRA (task.h) only its adapters.
struct RankParams {
  double dense = 0;   // parameters of this layer held by one rank, outside routed experts
  double expert = 0;  // routed-expert parameters held by one rank
};

class LayerCostModel {
 public:
  using CommFn = std::function<Time(Dim, CollOp, double)>;
  // EP dispatch / combine with a DeepEP-style dispatcher: `tokens` per rank, `bytes` per token
  // copy (one copy per destination GPU in the node, one per destination node across it).
  using EpFn = std::function<Time(double tokens, double bytes)>;
  void set_ep_dispatch(EpFn fn) { ep_ = std::move(fn); }
  LayerCostModel(const ModelSpec& m, const ParallelConfig& p, const FrameworkOptions& fw,
                 const ComputeModel& compute, CommFn comm);

  const Block& layer(int layer, bool backward);
  const Block& embedding(bool backward);
  const Block& head(bool backward);  // final norm, LM head, loss (and MTP modules)
  RankParams rank_params(int layer) const;
  double embedding_rank_params() const;
  double head_rank_params() const;
  Time p2p_time();                 // one pipeline send (activations or gradients)
  double p2p_bytes() const;        // bytes per GPU per send
  Time optimizer_time(int stage);  // Adam step on the rank's shard

  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  Block build_layer(int layer, bool backward);
  Block build_head(bool backward);
  Block build_embedding(bool backward);

  const ModelSpec& m_;
  const ParallelConfig& p_;
  const FrameworkOptions& fw_;
  const ComputeModel& c_;
  CommFn comm_;
  EpFn ep_;
  std::map<std::pair<int, bool>, Block> layer_memo_;
  std::map<bool, Block> head_memo_, emb_memo_;
  std::vector<std::string> warnings_;
};

}  // namespace fleetsim
