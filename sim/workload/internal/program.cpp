#include "workload/internal/program.h"

#include <algorithm>

#include "core/error.h"
#include "workload/internal/block_builder.h"
#include "workload/internal/schedule.h"

namespace fleetsim::step_internal {
namespace {

constexpr double kGradBytes = 2.0;   // gradients reduced in BF16 (README "Assumptions")
constexpr double kParamBytes = 2.0;  // parameters gathered in BF16

// Builds one stage's program: the schedule order unrolled, with the DP stream's buckets.
class StageBuilder {
 public:
  StageBuilder(const ProgramInput& in, int stage, CollCounts& counts)
      : in_(in),
        p_(in.par),
        fw_(in.fw),
        costs_(in.costs),
        s_(stage),
        V_(in.par.pp * in.par.vp),
        dist_(in.par.distributed_optimizer && !in.par.fsdp),
        grad_op_(dist_ ? CollOp::kReduceScatter : CollOp::kAllReduce),
        full_graph_(in.fw.cuda_graphs == CudaGraphs::kFullIteration),
        nccl_(full_graph_ ? Time::zero() : in.fw.host.nccl),
        counts_(counts) {}

  Stage build();

 private:
  // DP bucket: gradients reduced (and parameters gathered) together.
  struct Bucket {
    double dense = 0, expert = 0;  // parameters on this rank
    int slot_rs = -1, slot_ers = -1, slot_ag = -1, slot_eag = -1;
    bool launched = false;
  };

  void form_buckets(int chunk);
  void launch(Dim d, int slot, CollOp op, double bytes, const char* name);
  void wait(int slot);
  void emit_segments(const Block& blk, int moe_layer = -1, int mb = 0);
  void emit_send(uint8_t dir, int chunk, int mb, const char* name);
  void emit_recv(uint8_t dir, int chunk, int mb);
  void host_sync(const char* name);
  int span_index(const Segment& sg);
  void launch_grad_reduce(const Bucket& b);
  void launch_param_gather(const Bucket& b);
  void wait_param_gather(const Bucket& b);
  void fsdp_gather(int v, int i, std::vector<int>& ag_slot);
  void forward(const ScheduleStep& step);
  void backward(const ScheduleStep& step);
  void backward_layer(int c, int v, int i, bool last_mb, std::vector<int>& ag_slot, int mb);
  void finish();

  const ProgramInput& in_;
  const ParallelConfig& p_;
  const FrameworkOptions& fw_;
  LayerCostModel& costs_;
  const int s_, V_;
  const bool dist_;  // distributed optimizer (not FSDP): reduce-scatter, then all-gather
  const CollOp grad_op_;
  const bool full_graph_;  // cuda_graphs "full_iteration": no launches or syncs inside the step
  const Time nccl_;        // host time of one torch.distributed call
  CollCounts& counts_;
  std::map<const Segment*, int> span_of_;  // memoized segments → Stage::spans
  Stage st_;
  // Buckets per chunk, in backward order, and the bucket each layer's gradients land in.
  std::vector<std::vector<Bucket>> buckets_;
  std::vector<std::vector<int>> layer_bucket_;
  std::vector<int> fwd_seen_, bwd_seen_;  // passes of each chunk emitted so far
};

Stage StageBuilder::build() {
  buckets_.resize(p_.vp);
  layer_bucket_.resize(p_.vp);
  for (int c = 0; c < p_.vp; ++c)
    form_buckets(c);
  // Parameter all-gather of the distributed optimizer, overlapped with the forward pass:
  // launched at the start of the step (it belongs to the previous optimizer step).
  if (dist_ && fw_.overlap_param_gather) {
    // In forward order: buckets were formed backward, so the last bucket holds the first
    // layers.
    for (int c = 0; c < p_.vp; ++c)
      for (auto it = buckets_[c].rbegin(); it != buckets_[c].rend(); ++it)
        launch_param_gather(*it);
  }
  fwd_seen_.assign(p_.vp, 0);
  bwd_seen_.assign(p_.vp, 0);
  if (full_graph_) {  // one graph launch replays the whole forward-backward
    Instr x{Op::kCompute};
    x.h = x.d = fw_.host.op + fw_.host.graph;
    x.name = "cuda graph launch";
    st_.prog.push_back(x);
  }
  for (const ScheduleStep& step : schedule_order(p_.pp, p_.vp, in_.micro_batches, s_)) {
    if (step.forward)
      forward(step);
    else
      backward(step);
  }
  finish();
  return std::move(st_);
}

// DP buckets of chunk c: parameter counts in reverse layer order (backward order).
void StageBuilder::form_buckets(int c) {
  const int64_t bucket = std::max<int64_t>(fw_.bucket_params, int64_t{1'000'000} * p_.dp);
  const int v = c * p_.pp + s_;
  const int n = in_.layers_per_vstage[v];
  layer_bucket_[c].assign(n, 0);
  double acc = 0;
  buckets_[c].push_back({});
  for (int i = n - 1; i >= 0; --i) {
    const RankParams rp = costs_.rank_params(in_.first_layer[v] + i);
    if (acc > 0 && acc + rp.dense + rp.expert > static_cast<double>(bucket)) {
      buckets_[c].push_back({});
      acc = 0;
    }
    buckets_[c].back().dense += rp.dense;
    buckets_[c].back().expert += rp.expert;
    acc += rp.dense + rp.expert;
    layer_bucket_[c][i] = static_cast<int>(buckets_[c].size()) - 1;
  }
  if (v == 0) buckets_[c].back().dense += costs_.embedding_rank_params();
  if (v == V_ - 1) buckets_[c].front().dense += costs_.head_rank_params();
  if (p_.fsdp) return;  // FSDP reduces per layer, not per bucket
  const bool moe = is_moe(in_.model);
  for (auto& b : buckets_[c]) {
    if (p_.dp * p_.cp > 1 && b.dense > 0) {
      b.slot_rs = st_.dp_slots++;
      if (dist_) b.slot_ag = st_.dp_slots++;
    }
    if (moe && b.expert > 0 && (p_.tp * p_.cp * p_.dp) / (p_.ep * p_.etp) > 1) {
      b.slot_ers = st_.dp_slots++;
      if (dist_) b.slot_eag = st_.dp_slots++;
    }
  }
}

void StageBuilder::launch(Dim d, int slot, CollOp op, double bytes, const char* name) {
  if (slot < 0) return;
  counts_[CollCall{d, op, bytes}] += 1;
  Instr x{Op::kLaunch};
  x.dim = d;
  x.slot = slot;
  x.a = in_.comm.time(d, op, bytes);
  x.h = nccl_;
  x.name = name;
  st_.prog.push_back(x);
}

void StageBuilder::wait(int slot) {
  if (slot < 0) return;
  Instr x{Op::kWait};
  x.slot = slot;
  st_.prog.push_back(x);
}

void StageBuilder::emit_segments(const Block& blk, int moe_layer, int mb) {
  for (const CollCall& cc : blk.colls)
    counts_[cc] += 1;
  for (const Segment& sg : blk.segs) {
    if (sg.compute > Time::zero() || sg.tp > Time::zero() || sg.host > Time::zero()) {
      Instr x{Op::kCompute};
      x.a = sg.compute;
      x.b = sg.tp;
      x.h = sg.host;
      x.d = step_internal::host_span(sg.span, 1.0);
      x.span = span_index(sg);
      x.name = sg.name;
      x.mb = mb;
      if (sg.experts) x.moe = moe_layer;
      st_.prog.push_back(x);
    }
    if (sg.d2h) host_sync(sg.d2h_name);
    if (sg.sync_dim >= 0) {
      Instr x{Op::kSync};
      x.dim = static_cast<Dim>(sg.sync_dim);
      x.a = sg.sync;
      x.h = sg.sync_host;
      x.name = sg.sync_name;
      x.mb = mb;
      if (x.dim == Dim::kEp) x.moe = moe_layer;
      st_.prog.push_back(x);
    }
  }
}

void StageBuilder::emit_send(uint8_t dir, int chunk, int mb, const char* name) {
  counts_[CollCall{Dim::kPp, CollOp::kSendRecv, costs_.p2p_bytes()}] += 1;
  Instr x{Op::kSend, Dim::kPp, dir, chunk, mb};
  x.a = costs_.p2p_time();
  x.h = nccl_;
  x.name = name;
  st_.prog.push_back(x);
}

// A pipeline receive posted from the host. Without interleaving Megatron batches each
// send / receive pair (batch_isend_irecv) and calls torch.cuda.synchronize() after it
// (batch_p2p_sync), so the host waits there until the data has arrived; interleaved
// schedules overlap P2P without that sync (overlap_p2p_comm).
void StageBuilder::emit_recv(uint8_t dir, int chunk, int mb) {
  Instr x{Op::kRecv, Dim::kPp, dir, chunk, mb};
  x.h = nccl_;
  st_.prog.push_back(x);
  if (p_.vp == 1 && !full_graph_) host_sync("p2p sync");
}

// The host waits until the GPU has reached this point, then a device-to-host round trip.
void StageBuilder::host_sync(const char* name) {
  Instr x{Op::kHostSync};
  x.a = fw_.host.d2h;
  x.name = name;
  st_.prog.push_back(x);
}

int StageBuilder::span_index(const Segment& sg) {
  auto it = span_of_.find(&sg);
  if (it != span_of_.end()) return it->second;
  st_.spans.push_back(sg.span);
  const int i = static_cast<int>(st_.spans.size()) - 1;
  span_of_.emplace(&sg, i);
  return i;
}

void StageBuilder::launch_grad_reduce(const Bucket& b) {
  launch(Dim::kDp, b.slot_rs, grad_op_, b.dense * kGradBytes, "grad reduce");
  launch(Dim::kEdp, b.slot_ers, grad_op_, b.expert * kGradBytes, "expert grad reduce");
}

void StageBuilder::launch_param_gather(const Bucket& b) {
  launch(Dim::kDp, b.slot_ag, CollOp::kAllGather, b.dense * kParamBytes, "param all-gather");
  launch(Dim::kEdp, b.slot_eag, CollOp::kAllGather, b.expert * kParamBytes,
         "expert param all-gather");
}

void StageBuilder::wait_param_gather(const Bucket& b) {
  wait(b.slot_ag);
  wait(b.slot_eag);
}

// FSDP gathers each layer's parameters one layer ahead (prefetch), as PyTorch FSDP and
// Megatron-FSDP do: layer i of virtual stage v, into ag_slot[i].
void StageBuilder::fsdp_gather(int v, int i, std::vector<int>& ag_slot) {
  const int n = static_cast<int>(ag_slot.size());
  if (!p_.fsdp || i < 0 || i >= n) return;
  ag_slot[i] = st_.dp_slots++;
  launch(Dim::kDp, ag_slot[i], CollOp::kAllGather,
         costs_.rank_params(in_.first_layer[v] + i).dense * kParamBytes, "fsdp all-gather");
}

void StageBuilder::forward(const ScheduleStep& step) {
  const int c = step.chunk, v = c * p_.pp + s_;
  const int n = in_.layers_per_vstage[v];
  if (v > 0) emit_recv(0, c, step.mb);
  // The chunk's first forward waits, layer by layer, for the bucket holding the layer.
  const bool first_fwd = fwd_seen_[c]++ == 0 && dist_ && fw_.overlap_param_gather;
  if (first_fwd && v == 0) wait_param_gather(buckets_[c].back());
  if (v == 0) emit_segments(costs_.embedding(false));
  std::vector<int> ag_slot(n, -1);
  fsdp_gather(v, 0, ag_slot);
  for (int i = 0; i < n; ++i) {
    const int layer = in_.first_layer[v] + i;
    fsdp_gather(v, i + 1, ag_slot);
    if (p_.fsdp) wait(ag_slot[i]);
    if (first_fwd) wait_param_gather(buckets_[c][layer_bucket_[c][i]]);
    emit_segments(costs_.layer(layer, false), in_.moe_index[layer], step.mb);
  }
  if (first_fwd && v == V_ - 1) wait_param_gather(buckets_[c].front());
  if (v == V_ - 1) emit_segments(costs_.head(false));
  if (v < V_ - 1) emit_send(0, c, step.mb, "send activations");
}

void StageBuilder::backward(const ScheduleStep& step) {
  const int c = step.chunk, v = c * p_.pp + s_;
  const int n = in_.layers_per_vstage[v];
  const bool last_mb = ++bwd_seen_[c] == in_.micro_batches;
  if (v < V_ - 1) emit_recv(1, c, step.mb);
  if (v == V_ - 1) emit_segments(costs_.head(true));
  std::vector<int> ag_slot(n, -1);
  fsdp_gather(v, n - 1, ag_slot);
  for (int i = n - 1; i >= 0; --i)
    backward_layer(c, v, i, last_mb, ag_slot, step.mb);
  if (v == 0) emit_segments(costs_.embedding(true));
  // Buckets not launched yet (the embedding's, or a chunk holding only the embedding or
  // the loss) are reduced once the chunk's backward is done.
  if (last_mb && !p_.fsdp && fw_.overlap_grad_reduce) {
    for (Bucket& b : buckets_[c]) {
      if (b.launched) continue;
      b.launched = true;
      launch_grad_reduce(b);
    }
  }
  if (v > 0) emit_send(1, c, step.mb, "send gradients");
}

// Backward of layer i of virtual stage v (chunk c), with its FSDP / DP-bucket reductions.
void StageBuilder::backward_layer(int c, int v, int i, bool last_mb, std::vector<int>& ag_slot,
                                  int mb) {
  const int layer = in_.first_layer[v] + i;
  fsdp_gather(v, i - 1, ag_slot);
  if (p_.fsdp) wait(ag_slot[i]);
  emit_segments(costs_.layer(layer, true), in_.moe_index[layer], mb);
  if (p_.fsdp) {
    const int slot = st_.dp_slots++;
    launch(Dim::kDp, slot, CollOp::kReduceScatter, costs_.rank_params(layer).dense * kGradBytes,
           "fsdp reduce-scatter");
    if (!fw_.overlap_grad_reduce) wait(slot);
  }
  // Last micro-batch: a bucket is reduced as soon as all its layers have gradients.
  if (last_mb && !p_.fsdp && fw_.overlap_grad_reduce && !(i == 0 && v == 0) &&
      (i == 0 || layer_bucket_[c][i - 1] != layer_bucket_[c][i])) {
    Bucket& b = buckets_[c][layer_bucket_[c][i]];
    b.launched = true;
    launch_grad_reduce(b);
  }
}

// After the last backward: gradient reductions not overlapped, the waits for every reduction,
// the optimizer step and a parameter all-gather not overlapped with the next forward.
void StageBuilder::finish() {
  if (!p_.fsdp && !fw_.overlap_grad_reduce) {
    for (int c = 0; c < p_.vp; ++c)
      for (const auto& b : buckets_[c])
        launch_grad_reduce(b);
  }
  if (p_.fsdp) {
    for (int slot = 0; slot < st_.dp_slots; ++slot)
      wait(slot);
  } else {
    for (int c = 0; c < p_.vp; ++c)
      for (const auto& b : buckets_[c]) {
        wait(b.slot_rs);
        wait(b.slot_ers);
      }
  }
  // The gradient norm (clipping) and the inf / NaN check read a value on the host: the host
  // waits for the gradients before it launches the optimizer.
  host_sync("grad-norm / inf check (D2H)");
  Instr x{Op::kOptimizer};
  x.a = costs_.optimizer_time(s_);
  x.h = fw_.host.op;
  x.name = "optimizer";
  st_.prog.push_back(x);
  if (dist_ && !fw_.overlap_param_gather) {
    for (int c = 0; c < p_.vp; ++c)
      for (const auto& b : buckets_[c]) {
        launch_param_gather(b);
        wait_param_gather(b);
      }
  }
}

}  // namespace

std::vector<int> moe_layer_index(const ModelSpec& m, const MoeLoadTable& moe, int micro_batches,
                                 int ep) {
  std::vector<int> index(m.layers, -1);
  int k = 0;
  for (int l = 0; l < m.layers; ++l)
    if (is_moe_layer(m, l)) index[l] = k++;
  if (!moe.empty()) {
    FLEETSIM_ASSERT(moe.moe_layers == k && moe.micro_batches == micro_batches && moe.ep == ep);
  }
  return index;
}

Stage build_stage_program(const ProgramInput& in, int stage, CollCounts* counts) {
  return StageBuilder(in, stage, *counts).build();
}

}  // namespace fleetsim::step_internal
