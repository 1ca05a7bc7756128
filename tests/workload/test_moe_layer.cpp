// The MoE layer's kernel list (sim/workload/internal/moe_layer.cpp): launch counts in closed
// form against the number of local experts and the framework switches.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "coll/dispatch.h"
#include "compute/compute_model.h"
#include "scenario/model_loader.h"
#include "scenario/scenario.h"
#include "support/fixtures.h"
#include "workload/layer_costs.h"
#include "workload/step.h"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {

struct Setup {
  ModelSpec model = zoo("qwen3-30b-a3b");
  ParallelConfig par;
  FrameworkOptions fw;
  ComputeModel compute = gpu_compute("dgx-h100");
  bool flex = false;
  Setup() {
    par.ep = 8;
    par.dp = 8;
    par.seq_len = 4096;
    par.micro_batch = 1;
    par.global_batch = 64;
    fw.moe_grouped_gemm = true;
    fw.moe_permute_fusion = true;
  }
  // Kernels of MoE layer 0's forward or backward with `experts` routed experts.
  int kernels(int experts, bool backward) {
    ModelSpec m = model;
    m.moe.experts = experts;
    LayerCostModel lc(m, par, fw, compute, [](Dim, CollOp, double) { return Time::from_us(10); });
    if (flex) lc.set_ep_dispatch([](double, double) { return Time::from_us(10); });
    return lc.layer(0, backward).kernels;
  }
  // MoE layer 0's block (launches, host time per segment) with `experts` routed experts.
  Block block(int experts, bool backward) {
    ModelSpec m = model;
    m.moe.experts = experts;
    LayerCostModel lc(m, par, fw, compute, [](Dim, CollOp op, double) {
      return Time::from_us(op == CollOp::kAllGather ? 77 : 10);
    });
    if (flex) lc.set_ep_dispatch([](double, double) { return Time::from_us(10); });
    return lc.layer(0, backward);
  }
};

Time host_time(const Block& b) {
  Time h = Time::zero();
  for (const Segment& s : b.segs)
    h += s.host;
  return h;
}

}  // namespace

TEST_CASE("per-expert launches grow linearly with the local experts") {
  Setup s;
  REQUIRE(s.model.moe.experts == 128);
  REQUIRE(s.model.moe.shared_experts == 0);
  // Local experts G = experts / ep = 8, 16, 32. TE GroupedLinear launches per expert: forward
  // one GEMM for fc1 and one for fc2, each after one quantise in low precision (current scaling:
  // Float8CurrentScalingQuantizer::quantize_impl's zero-amax (launch_amax_kernel's one-thread
  // zero_amax_kernel), amax, scale and cast kernels, 4 in all); backward per linear a quantise
  // of the gradient, a dgrad and a wgrad.
  struct Case {
    PrecisionRecipe prec;
    bool grouped;
    int per_expert_fwd, per_expert_bwd;
  };
  const Case cases[] = {
      {PrecisionRecipe::kBf16, true, 2, 4},
      {PrecisionRecipe::kMxfp8, true, 2 * (1 + 1), 2 * (1 + 2)},
      {PrecisionRecipe::kFp8Current, true, 2 * (4 + 1), 2 * (4 + 2)},
      // SequentialMLP: per expert its own TE Linear pair and activation kernel.
      {PrecisionRecipe::kBf16, false, 2 + 1, 4 + 1},
      {PrecisionRecipe::kMxfp8, false, 2 * (1 + 1) + 1, 2 * (1 + 2) + 1},
  };
  for (const Case& c : cases) {
    s.par.precision = c.prec;
    s.fw.moe_grouped_gemm = c.grouped;
    for (bool bwd : {false, true}) {
      const int k8 = s.kernels(64, bwd), k16 = s.kernels(128, bwd), k32 = s.kernels(256, bwd);
      const int per = bwd ? c.per_expert_bwd : c.per_expert_fwd;
      CHECK(k16 - k8 == 8 * per);
      CHECK(k32 - k16 == 16 * per);
    }
  }
}

TEST_CASE("fused permute and router switches change the launch counts") {
  Setup s;
  // Alltoall dispatcher, ep = 8, 16 local experts. Forward: permute (fused: make_row_id_map's 3
  // Triton passes + the permute kernel; unfused: 4 index kernels + gather), two chunk sorts
  // (fused: make_chunk_sort_map + sort_chunks_by_map each; unfused: tokens and probs, 2 each),
  // unpermute (fused: 1; unfused: zeros + scatter_add).
  auto diff = [&](bool bwd) {
    s.fw.moe_permute_fusion = true;
    const int fused = s.kernels(128, bwd);
    s.fw.moe_permute_fusion = false;
    const int unfused = s.kernels(128, bwd);
    s.fw.moe_permute_fusion = true;
    return unfused - fused;
  };
  CHECK(diff(false) == (5 + 2 + 2 + 2) - (4 + 2 + 2 + 1));
  // Backward: unpermute's gather (1 either way), two chunk sorts, permute's scatter-add (fused:
  // 1; unfused: zeros + scatter_add).
  CHECK(diff(true) == (1 + 2 + 2 + 2) - (1 + 1 + 1 + 1));
  // Flex dispatcher (DeepEP): no chunk sorts.
  s.flex = true;
  s.fw.moe_dispatcher = MoeDispatcher::kDeepEp;
  CHECK(diff(false) == (5 + 2) - (4 + 1));
  CHECK(diff(true) == (1 + 2) - (1 + 1));
  // Alltoall against DeepEP, forward: the token counts (6 kernels) and 2 fused chunk sorts (2
  // each) against DeepEP's top-k of the probs, its dispatch layout and _indices_to_multihot's 16.
  const int flex = s.kernels(128, false);
  s.flex = false;
  s.fw.moe_dispatcher = MoeDispatcher::kAllToAll;
  CHECK(s.kernels(128, false) - flex == (6 + 2 * 2) - (1 + 1 + 16));
  // Router: fused scores + top-k (1) and aux loss (2) against 4 + 5 unfused; backward 2 + 1
  // (the aux loss's and the aux scores' backward, the top-k's) against 3 + 3.
  s.fw.moe_router_fusion = true;
  const int rf = s.kernels(128, false), rb = s.kernels(128, true);
  s.fw.moe_router_fusion = false;
  CHECK(s.kernels(128, false) - rf == (4 + 5) - (1 + 2));
  CHECK(s.kernels(128, true) - rb == (3 + 3) - (2 + 1));
}

TEST_CASE("host launches and per-expert host work of a grouped GEMM scale with the local experts") {
  Setup s;
  s.par.precision = PrecisionRecipe::kBf16;
  s.fw.host.op = Time::from_us(13);
  s.fw.host.module = Time::from_us(36);
  s.fw.host.launch = Time::from_us(2.5);
  s.fw.host.expert = Time::from_us(14);
  // BF16, TE GroupedLinear's per-expert path, G = experts / ep = 8, 16, 32 local experts. Per
  // local expert the host issues forward one GEMM launch for fc1 and one for fc2 and does the
  // per-expert work once per GEMM call (2 calls); backward a dgrad and a wgrad launch per linear
  // (4 launches) in 4 calls (dgrad and wgrad of fc1 and fc2). Nothing else in the layer depends
  // on G, so the differences are those items alone.
  for (bool bwd : {false, true}) {
    const int per_launches = bwd ? 4 : 2, calls = bwd ? 4 : 2;
    const Time per_host = Time::from_us(2.5) * per_launches + Time::from_us(14) * calls;
    const Block b8 = s.block(64, bwd), b16 = s.block(128, bwd), b32 = s.block(256, bwd);
    CHECK(b16.launches - b8.launches == 8 * per_launches);
    CHECK(b32.launches - b16.launches == 16 * per_launches);
    CHECK(host_time(b16) - host_time(b8) == per_host * 8);
    CHECK(host_time(b32) - host_time(b16) == per_host * 16);
  }
  // A single-launch grouped GEMM (TE PR #3175's device-side set-up): one launch per GEMM pass
  // over all experts, no per-expert host work: launches and host time do not depend on G.
  s.fw.moe_grouped_gemm_single_launch = true;
  for (bool bwd : {false, true}) {
    const Block b8 = s.block(64, bwd), b32 = s.block(256, bwd);
    CHECK(b32.launches == b8.launches);
    CHECK(host_time(b32) == host_time(b8));
    // Forward: fc1 and fc2 one GEMM launch each; backward dgrad + wgrad each.
    const Block per_expert_path = [&] {
      s.fw.moe_grouped_gemm_single_launch = false;
      Block blk = s.block(64, bwd);
      s.fw.moe_grouped_gemm_single_launch = true;
      return blk;
    }();
    CHECK(per_expert_path.launches - b8.launches == (8 - 1) * (bwd ? 4 : 2));
  }
}

TEST_CASE("recompute of the whole MoE layer replays its forward before the backward") {
  // With "moe" in recompute_modules Megatron-Core runs the MoE layer's forward (router,
  // dispatch, experts, combine) again in backward (moe_layer.py, tensor_parallel.checkpoint):
  // the backward gains the forward's launches. In the difference between two local-expert
  // counts, everything but the per-expert launches cancels, so the backward's extra launches
  // grow by exactly the forward's per-expert launches.
  Setup s;
  const int fwd8 = s.kernels(64, false), fwd16 = s.kernels(128, false);
  const int bwd8 = s.kernels(64, true), bwd16 = s.kernels(128, true);
  s.par.recompute = Recompute::kSelective;
  s.par.recompute_modules = kRecomputeMoe;
  const int rbwd8 = s.kernels(64, true), rbwd16 = s.kernels(128, true);
  CHECK(s.kernels(128, false) == fwd16);  // the forward is unchanged
  CHECK(rbwd8 > bwd8);
  CHECK((rbwd16 - bwd16) - (rbwd8 - bwd8) == fwd16 - fwd8);
  // The replayed forward executes the routed experts' GEMMs once more: 4096 tokens × 8 copies
  // × 2 · (2h·f (gated fc1) + f·h (fc2)) FLOPs = 2 · 4096 · 8 · 3 · 2048 · 768, and at most the
  // router's 2 · 4096 · 2048 · 128 besides.
  s.par.recompute_modules = kRecomputeCoreAttn;
  const double plain = s.block(128, true).flops;
  s.par.recompute_modules = kRecomputeCoreAttn | kRecomputeMoe;
  const double extra = s.block(128, true).flops - plain;
  const double experts = 2.0 * 4096 * 8 * 3 * 2048 * 768;
  const double router = 2.0 * 4096 * 2048 * 128;
  CHECK(extra >= experts * (1 - 1e-9));
  CHECK(extra <= (experts + router) * (1 + 1e-9));
}

TEST_CASE("mlp recompute skips MoE layers, shared_experts replays the shared expert") {
  // DeepSeek-V3 layer 10 (MoE, one shared expert): Megatron-Core's "mlp" module recomputes
  // dense MLPs only (transformer_layer.py), "shared_experts" the shared expert (moe_layer.py).
  Setup s;
  s.model = zoo("deepseek-v3");
  s.par.recompute = Recompute::kSelective;
  s.par.recompute_modules = kRecomputeCoreAttn;
  ModelSpec m = s.model;
  auto kernels = [&](unsigned modules) {
    s.par.recompute_modules = modules;
    LayerCostModel lc(m, s.par, s.fw, s.compute,
                      [](Dim, CollOp, double) { return Time::from_us(10); });
    return lc.layer(10, true).kernels;
  };
  const int base = kernels(kRecomputeCoreAttn);
  CHECK(kernels(kRecomputeCoreAttn | kRecomputeMlp) == base);
  // The shared expert's forward again: fc1, the activation, fc2 (three kernels in BF16).
  CHECK(kernels(kRecomputeCoreAttn | kRecomputeSharedExperts) == base + 3);
}

TEST_CASE("HybridEP gathers every EP rank's routing map before each forward dispatch") {
  // deep_ep/hybrid_ep_buffer.py dispatch_with_permute without a handle: all_gather_into_tensor
  // of the [tokens x experts] bool routing map over the EP group, then the metadata-preprocess
  // kernel. Qwen3-30B-A3B, 4096 tokens per rank, 128 experts, ep = 8: 4096 · 128 · 8 =
  // 4,194,304 bytes gathered, once per forward; the backward reuses the handle.
  Setup s;
  s.flex = true;
  s.fw.moe_dispatcher = MoeDispatcher::kHybridEp;
  auto gathers = [](const Block& b, double* bytes) {
    int n = 0;
    for (const CollCall& c : b.colls)
      if (c.dim == Dim::kEp && c.op == CollOp::kAllGather) {
        ++n;
        *bytes = c.bytes;
      }
    return n;
  };
  double bytes = 0;
  const Block fwd = s.block(128, false);
  CHECK(gathers(fwd, &bytes) == 1);
  CHECK(bytes == 4096.0 * 128 * 8);
  int syncs = 0;
  for (const Segment& sg : fwd.segs)
    if (std::string(sg.sync_name) == "ep routing-map all-gather") {
      ++syncs;
      CHECK(sg.sync_dim == static_cast<int>(Dim::kEp));
      CHECK(sg.sync == Time::from_us(77));  // the EP all-gather's time from the comm model
    }
  CHECK(syncs == 1);
  CHECK(gathers(s.block(128, true), &bytes) == 0);
  // DeepEP computes its dispatch layout locally (get_dispatch_layout): no gather.
  s.fw.moe_dispatcher = MoeDispatcher::kDeepEp;
  CHECK(gathers(s.block(128, false), &bytes) == 0);
}

TEST_CASE("only a flex dispatcher's forward dispatch makes the host wait") {
  // From the libraries' source (moe_layer.cpp's header): DeepEP's dispatch without a handle
  // busy-waits on the host-mapped receive counter, HybridEP's runs cudaStreamSynchronize after
  // its metadata preprocess; the cached dispatch (backward of combine) and both combines never
  // wait. Each call's Torch API costs t_api beyond its kernels (sim/coll/dispatch.h): after the
  // forward dispatch's wait (one round trip d, the token-count sync) the rest, t_api - d, is host
  // work before the dispatch kernel; the other calls spend t_api on the host without waiting.
  // Host costs zero but d = 26 us, so the block's host time is the API's alone:
  //   forward  (t_api - d) + t_api   (dispatch after its wait, combine)
  //   backward 2 t_api                (combine's and dispatch's gradients, no wait)
  // and the host waits once per forward (before the dispatch), never in the backward.
  Setup s;
  s.flex = true;
  s.par.precision = PrecisionRecipe::kBf16;
  s.fw.host = HostCosts{};
  s.fw.host.d2h = Time::from_us(26);
  const Time d = s.fw.host.d2h;
  auto syncs = [](const Block& b) {
    int n = 0;
    for (const Segment& sg : b.segs)
      n += sg.d2h ? 1 : 0;
    return n;
  };
  struct Case {
    MoeDispatcher disp;
    Time api;
  };
  const Case cases[] = {{MoeDispatcher::kHybridEp, dispatch_globals().api_wait},
                        {MoeDispatcher::kDeepEp, dispatch_globals().api_wait_deepep}};
  for (const Case& c : cases) {
    s.fw.moe_dispatcher = c.disp;
    REQUIRE(c.api > d);
    const Block fwd = s.block(128, false), bwd = s.block(128, true);
    CHECK(host_time(fwd) == (c.api - d) + c.api);
    CHECK(host_time(bwd) == c.api * 2);
    // DeepEP's _indices_to_multihot reads back three output sizes after the dispatch.
    CHECK(syncs(fwd) == (c.disp == MoeDispatcher::kDeepEp ? 1 + 3 : 1));
    CHECK(syncs(bwd) == 0);
    // Per call: the segment that posts it holds its API host work; only the forward dispatch's
    // segment follows the wait (the segment before it ends in the token-count sync).
    for (const Block* b : {&fwd, &bwd})
      for (size_t i = 0; i < b->segs.size(); ++i) {
        const Segment& sg = b->segs[i];
        if (sg.sync_dim != static_cast<int>(Dim::kEp)) continue;
        const std::string name = sg.sync_name;
        if (name == "ep dispatch") {
          REQUIRE(i > 0);
          CHECK(b->segs[i - 1].d2h);
          CHECK(std::string(b->segs[i - 1].d2h_name) == "token counts (D2H)");
          CHECK(sg.host == c.api - d);
        } else if (name == "ep combine" || name == "ep combine (grad)" ||
                   name == "ep dispatch (grad)") {
          CHECK(!sg.d2h);
          CHECK(sg.host == c.api);
        }
      }
  }
  // HybridEP's fitted t_api is 122.5 us (calibration/fit_dispatch.py): 96.5 + 122.5 us forward.
  CHECK(dispatch_globals().api_wait == Time::from_us(122.5));
  // The alltoall dispatcher has no Torch API: only the forward's count sync, no host work.
  s.flex = false;
  s.fw.moe_dispatcher = MoeDispatcher::kAllToAll;
  CHECK(host_time(s.block(128, false)) == Time::zero());
  CHECK(syncs(s.block(128, false)) == 1);
  CHECK(syncs(s.block(128, true)) == 0);
}

TEST_CASE("MoE permute kernels off H200 borrow its rows and the step says so") {
  // moe_ops.cpp: the permute / unpermute rows were measured on H200; other GPUs scale their
  // bandwidth by the datasheet HBM ratio, a fallback a MoE model's step reports as a warning.
  Setup s;
  const ComputeModel h200 = ComputeModel::load(load_system("hgx-h200", kRoot).gpu, kRoot);
  CHECK(h200.moe_ops_warning().empty());
  // H100 3.35 TB/s over H200's 4.8: the fused permute's 1780 GB/s x 0.698 = 1242 GB/s.
  CHECK(s.compute.moe_ops_warning() ==
        "H100: no MoE permute / unpermute rows of its own; uses H200's measured bandwidths x "
        "0.698 (datasheet HBM ratio, fallback)");
}

TEST_CASE("Megatron's DeepEP and HybridEP dispatch BF16 tokens in FP8 recipes") {
  // megatron/core/transformer/moe/fused_a2a.py: HybridEP's fp8_dispatch is forced off and
  // DeepEP's dispatch gets the BF16 hidden states; a library outside Megatron-Core's managers
  // (pplx) sends FP8 tokens with one FP32 scale per 128 values. Qwen3-30B-A3B, hidden 2048:
  // 2 · 2048 = 4096 bytes per BF16 copy, 2048 · (1 + 4/128) = 2112 per FP8 copy; the combine
  // is BF16 either way.
  Setup s;
  s.par.precision = PrecisionRecipe::kFp8Current;
  auto copy_bytes = [&](MoeDispatcher d) {
    s.fw.moe_dispatcher = d;
    std::vector<double> seen;
    LayerCostModel lc(s.model, s.par, s.fw, s.compute,
                      [](Dim, CollOp, double) { return Time::from_us(10); });
    lc.set_ep_dispatch([&](double, double bytes) {
      seen.push_back(bytes);
      return Time::from_us(10);
    });
    lc.layer(0, false);
    return seen;
  };
  const std::vector<double> bf16 = {4096, 4096};
  CHECK(copy_bytes(MoeDispatcher::kHybridEp) == bf16);
  CHECK(copy_bytes(MoeDispatcher::kDeepEp) == bf16);
  CHECK(copy_bytes(MoeDispatcher::kPplx) == std::vector<double>{2112, 4096});
}

TEST_CASE("the expert activation moves 3 / 5 BF16 passes gated, 2 / 3 non-gated") {
  // Alltoall dispatcher, BF16, grouped GEMM, fused permute: the experts segment between the
  // dispatch and the combine is the chunk sort, fc1, the activation, fc2 and the sort back.
  // Qwen3-30B-A3B layer 0 at 4096 tokens: 32768 token copies over 16 local experts (2048
  // each), expert width 768, hidden 2048. SwiGLU reads 2·768 and writes 768 BF16 values per
  // copy forward, and backward reads the gradient and both inputs and writes both gradients;
  // the same expert as squared ReLU / GELU (MlpKind::kPlain, fc1 768 wide) reads 768 and
  // writes 768, and backward reads the gradient and the input and writes one gradient.
  Setup s;
  const double rows = 4096.0 * 8, fe = 768, h = 2048;
  const Time sort = s.compute.memory_bound(2.0 * rows * h * 2.0 + 2.0 * rows * 4.0);
  const Time sort_map = s.compute.memory_bound(rows * 4.0);  // forward: make_chunk_sort_map
  using Pass = ComputeModel::GemmPass;
  auto gg = [&](double n, double k, Pass pass) {
    return s.compute.grouped_gemm(16, 2048, static_cast<int64_t>(n), static_cast<int64_t>(k),
                                  DType::kBf16, pass);
  };
  auto experts = [&](MlpKind mlp, bool bwd) {
    ModelSpec m = s.model;
    m.mlp = mlp;
    LayerCostModel lc(m, s.par, s.fw, s.compute,
                      [](Dim, CollOp, double) { return Time::from_us(10); });
    // The segments named "experts" (forward: the empty one between the tokens' and the probs'
    // all-to-all, then the experts).
    Time t = Time::zero();
    for (const Segment& seg : lc.layer(0, bwd).segs)
      if (std::string(seg.name) == "experts") t += seg.compute;
    return t;
  };
  for (const bool glu : {true, false}) {
    const double up = glu ? 2 * fe : fe;
    const Time act_f = s.compute.memory_bound(rows * fe * 2.0 * (glu ? 3.0 : 2.0));
    const Time act_b = s.compute.memory_bound(rows * fe * 2.0 * (glu ? 5.0 : 3.0));
    const Time fwd = sort_map + sort + gg(up, h, Pass::kForward) + act_f +
                     gg(h, fe, Pass::kForward) + sort_map + sort;
    const Time bwd = sort + gg(h, fe, Pass::kDgrad) + gg(h, fe, Pass::kWgrad) + act_b +
                     gg(up, h, Pass::kDgrad) + gg(up, h, Pass::kWgrad) + sort;
    const MlpKind kind = glu ? MlpKind::kGated : MlpKind::kPlain;
    // Each GEMM pass is split evenly over the 16 launches (rounded to picoseconds).
    CHECK(std::abs((experts(kind, false) - fwd).ps()) <= 2 * 16);
    CHECK(std::abs((experts(kind, true) - bwd).ps()) <= 4 * 16);
  }
}

TEST_CASE("a Qwen3-30B-A3B layer launches the kernels counted in Megatron-Core 0.16 and TE 2.9") {
  // Hand count of one layer and micro-batch (BF16, tp 1, ep 8: 16 local experts, fused router
  // and permute, docs/training-model.md "Kernels of one MoE layer"):
  //   attention forward: input norm, QKV GEMM, q_layernorm, k_layernorm, the q reshape copy,
  //     RoPE q, RoPE k, attention, output projection, residual                         = 10
  //   pre-MLP norm + residual                                                            =  2
  //   router forward: GEMM, fused top-k, fused aux scores + aux loss (2), tokens per expert,
  //     the aux-loss tracker's division and add                                          =  7
  //   alltoall: token counts (6), permute (3 row-id-map passes + 1), 2 chunk sorts (map +
  //     sort each), unpermute (1)                                                        = 15
  //   HybridEP: dispatch layout, the gathered routing map's preprocess, permute (4),
  //     unpermute (1)                                                                     =  7
  //   experts: 16 fc1 GEMMs, the activation, 16 fc2 GEMMs                                = 33
  // Backward: attention 18 (input norm + its finalize and main_grad add, QKV dgrad + wgrad, each
  // qk norm's backward + finalize + main_grad add, the q / k / v gradients' cat, 2 RoPE,
  // attention, projection dgrad + wgrad, residual); pre-MLP norm + finalize + main_grad add and
  // the residual 4; router 9 (ones_like and mul of the aux-loss scaler, 2 aux backward, top-k
  // backward, the logits' gradient sum, dgrad, wgrad, main_grad add); the MoE input's gradient
  // sum 1; experts 4 x 16 + 1 = 65; alltoall unpermute, 2 chunk sorts, permute 4 (HybridEP 2).
  Setup s;
  s.par.precision = PrecisionRecipe::kBf16;
  s.fw.moe_router_fusion = true;
  CHECK(s.kernels(128, false) == 10 + 2 + 7 + 15 + 33);
  CHECK(s.kernels(128, true) == 18 + 4 + 9 + 1 + 65 + 4);
  s.flex = true;
  s.fw.moe_dispatcher = MoeDispatcher::kHybridEp;
  CHECK(s.kernels(128, false) == 10 + 2 + 7 + 7 + 33);
  CHECK(s.kernels(128, true) == 18 + 4 + 9 + 1 + 65 + 2);
  // The component check's layout (ep 16: 8 local experts): 43 + 67 = 110 kernels per layer and
  // micro-batch (84 before these were counted; the Nsight profile: 151).
  s.par.ep = 16;
  s.par.dp = 16;
  CHECK(s.kernels(128, false) + s.kernels(128, true) == 110);
  // FP8 current scaling: 4 quantise launches before each of the 8 experts' 2 GEMM calls and the
  // QKV / projection GEMMs, both ways (the router stays BF16): 43 + 8 · 8 + 8 and 67 + 8 · 8 + 8.
  s.par.precision = PrecisionRecipe::kFp8Current;
  CHECK(s.kernels(128, false) == 115);
  CHECK(s.kernels(128, true) == 139);
}

TEST_CASE("the moe_router and moe_preprocess graphs capture the router's and the counts' ops") {
  // Alltoall, fused router and permute, host costs op 10 us, graph 3 us, NCCL 20 us. The scopes
  // replace the eager launches of the router (7 kernels forward, 9 backward) and of the
  // preprocess (6 token-count kernels, the count all-gather's NCCL call, the permute's 4;
  // backward the permute's 1) by one graph launch each (op + graph); the 4 D2H copies of the
  // counts stay eager. Forward: 17 ops less (the NCCL call's host time is the sync's, not the
  // segments'), 2 graph launches more.
  Setup s;
  s.par.precision = PrecisionRecipe::kBf16;
  s.fw.moe_router_fusion = true;
  s.fw.host = HostCosts{};
  s.fw.host.op = Time::from_us(10);
  s.fw.host.graph = Time::from_us(3);
  s.fw.host.nccl = Time::from_us(20);
  const Time launch = s.fw.host.op + s.fw.host.graph;
  const Block eager_f = s.block(128, false), eager_b = s.block(128, true);
  s.fw.cuda_graphs = CudaGraphs::kScopes;
  s.fw.cuda_graph_scopes = kGraphMoeRouter | kGraphMoePreprocess;
  const Block g_f = s.block(128, false), g_b = s.block(128, true);
  CHECK(host_time(eager_f) - host_time(g_f) == s.fw.host.op * 17 - launch * 2);
  CHECK(host_time(eager_b) - host_time(g_b) == s.fw.host.op * 10 - launch * 2);
  CHECK(eager_f.launches - g_f.launches == 17);
  CHECK(g_f.graphs == 2);
}

TEST_CASE("forced balancing adds RandomSTE's two kernels, experimental fuses DeepEP's multihot") {
  Setup s;
  s.par.precision = PrecisionRecipe::kBf16;
  s.fw.moe_router_fusion = true;
  const int f = s.kernels(128, false), b = s.kernels(128, true);
  s.fw.moe_router_force_load_balancing = true;
  // logits.clone().normal_() forward; RandomSTE.backward returns the gradient as it is.
  CHECK(s.kernels(128, false) - f == 2);
  CHECK(s.kernels(128, true) == b);
  // Both inside the moe_router graph: no extra launch with the scope on.
  s.fw.cuda_graphs = CudaGraphs::kScopes;
  s.fw.cuda_graph_scopes = kGraphMoeRouter;
  const int with = s.block(128, false).launches;
  s.fw.moe_router_force_load_balancing = false;
  CHECK(s.block(128, false).launches == with);
  // DeepEP: _indices_to_multihot's 16 kernels and 3 host syncs forward (3 kernels backward)
  // against fused_indices_to_multihot's one kernel each way under --enable-experimental.
  s.fw.cuda_graphs = CudaGraphs::kNone;
  s.flex = true;
  s.fw.moe_dispatcher = MoeDispatcher::kDeepEp;
  auto syncs = [](const Block& blk) {
    int n = 0;
    for (const Segment& sg : blk.segs)
      n += sg.d2h ? 1 : 0;
    return n;
  };
  const int df = s.kernels(128, false), db = s.kernels(128, true);
  CHECK(syncs(s.block(128, false)) == 1 + 3);
  s.fw.megatron_experimental = true;
  CHECK(df - s.kernels(128, false) == 16 - 1);
  CHECK(db - s.kernels(128, true) == 3 - 1);
  CHECK(syncs(s.block(128, false)) == 1);
}
