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

struct Segment {
  Time compute;       // kernel time at nominal speed
  Time tp;            // exposed TP communication
  int sync_dim = -1;  // Dim of a blocking synchronisation after the compute, or -1
  Time sync;          // its duration (once every member has arrived)
  const char* name = "";
  const char* sync_name = "";
  bool experts = false;  // the routed experts' kernels (scaled by the rank's MoE load)
};

struct CollCall {
  Dim dim;
  CollOp op;
  double bytes;
  bool operator<(const CollCall& o) const {
    if (dim != o.dim) return dim < o.dim;
    if (op != o.op) return op < o.op;
    return bytes < o.bytes;
  }
};

struct Block {
  std::vector<Segment> segs;
  std::vector<CollCall> colls;  // collectives inside (TP, EP, CP), for the link view
  double flops = 0;             // executed FLOPs on this rank (recompute included)
  int kernels = 0;
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
