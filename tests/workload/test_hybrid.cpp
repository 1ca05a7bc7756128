// Hybrid models (Mamba-2 / attention / MLP / MoE block patterns): the Mamba-2 mixer's parameter
// and FLOP closed forms by hand, the pattern parser and its input errors, the SSD kernel time at
// a measured calibration/sources/ssm-kernels.csv row, the hybrid zoo models against their
// published parameter counts, and a Nemotron 3 Nano step.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "compute/compute_model.h"
#include "core/error.h"
#include "scenario/model_loader.h"
#include "scenario/scenario.h"
#include "support/fixtures.h"
#include "workload/layer_costs.h"
#include "workload/memory.h"
#include "workload/model.h"
#include "workload/step.h"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {
// A small hybrid model as a zoo JSON text, with `blocks` and `extra` spliced in.
std::string hybrid_json(const std::string& blocks, const std::string& extra = "") {
  return R"({"id": "toy-hybrid", "layers": 4, "hidden": 256, "ffn": 512, "vocab": 1000,
    "mlp": "plain", "tied_embeddings": false, "max_seq_len": 4096,
    "attention": {"kind": "gqa", "heads": 4, "kv_heads": 2, "head_dim": 64},
    "mamba": {"heads": 8, "head_dim": 64, "state": 16, "groups": 2, "conv_kernel": 4,
              "chunk": 64},
    "blocks": ")" +
         blocks + "\"" + extra + "}";
}

std::string error_of(const std::string& text) {
  try {
    parse(text, "toy.json");
  } catch (const InputError& e) {
    return e.pointer() + ": " + e.message();
  }
  return "";
}
}  // namespace

TEST_CASE("Nemotron 3 Nano Mamba-2 mixer parameters by hand") {
  const ModelSpec m = zoo("nemotron3-nano-30b-a3b");
  // d_inner = 64·64 = 4096; in_proj width 2·4096 + 2·8·128 + 64 = 10,304.
  CHECK(m.mamba.d_inner() == 4096);
  CHECK(m.mamba.in_proj_width() == 10'304);
  // in_proj 2688·10,304 = 27,697,152; conv (4096 + 2048)·4 + 6144 bias = 30,720; A_log, D,
  // dt_bias 3·64 = 192; gated norm 4096; out_proj 4096·2688 = 11,010,048 → 38,742,208.
  CHECK(mamba_params(m) == 38'742'208);
  REQUIRE(block_kind(m, 0) == BlockKind::kMamba);
  const LayerParams p = layer_params(m, 0);
  CHECK(p.attention == 38'742'208);
  CHECK(p.norms == 2688);  // one pre-norm per block
  CHECK(p.dense_mlp + p.routed_experts + p.shared_experts + p.router == 0);
  // Block 5 is attention: q, o 2688·4096 each, k, v 2688·256 each → 23,396,352.
  REQUIRE(block_kind(m, 5) == BlockKind::kAttention);
  CHECK(layer_params(m, 5).attention == 23'396'352);
  CHECK(layer_params(m, 5).routed_experts == 0);
  // Block 1 is MoE: 128 experts of 2·2688·1856 = 9,977,856; the shared MLP of width 3712
  // (2·2688·3712 = 19,955,712); router 2688·128 = 344,064.
  REQUIRE(block_kind(m, 1) == BlockKind::kMoe);
  const LayerParams e = layer_params(m, 1);
  CHECK(e.one_expert == 9'977'856);
  CHECK(e.routed_experts == 128 * 9'977'856LL);
  CHECK(e.shared_experts == 19'955'712);
  CHECK(e.router == 344'064);
  CHECK(e.attention == 0);
}

TEST_CASE("Nemotron 3 Nano parameter count by hand and against the published 31.6B / 3.6B") {
  const ModelSpec m = zoo("nemotron3-nano-30b-a3b");
  // 23 Mamba blocks of 38,744,896 = 891,132,608; 6 attention blocks of 23,399,040 =
  // 140,394,240; 23 MoE blocks of 1,297,468,032 = 29,841,764,736; embedding and untied head
  // 131072·2688 = 352,321,536 each, final norm 2688 → 31,577,937,344.
  CHECK(total_params(m) == 31'577'937'344);
  CHECK(static_cast<double>(total_params(m)) == Approx(m.published_total_params).epsilon(0.01));
  // Active: 891,132,608 + 140,394,240 + 23·(6·9,977,856 + 19,955,712 + 344,064 + 2688)
  // + 704,645,760 = 3,580,073,408; published 3.2B without the input embedding, 3.6B with.
  CHECK(active_params(m) == 3'580'073'408);
  CHECK(static_cast<double>(active_params(m)) == Approx(m.published_active_params).epsilon(0.01));
  CHECK(static_cast<double>(active_params(m) - embedding_params(m)) == Approx(3.2e9).epsilon(0.01));
}

TEST_CASE("hybrid zoo models match their published parameter counts") {
  // Published totals of Nemotron-H are names ("8B", "47B", "56B"); Nano's report gives 31.6B.
  // Lightning publishes no figure (its name's "30B"); it has Nano's architecture, so Nano's
  // count applies to its decoder (MTP modules excluded from totals, as for DeepSeek-V3).
  struct Case {
    const char* id;
    double tol;
  };
  const Case cases[] = {{"nemotron-h-8b", 0.015},  // 8.10B named "8B"
                        {"nemotron-h-47b", 0.01},  // 46.7B
                        {"nemotron-h-56b", 0.01},  // 56.4B
                        {"nemotron3-nano-30b-a3b", 0.01}};
  for (const Case& c : cases) {
    const ModelSpec m = zoo(c.id);
    INFO(c.id << ": " << total_params(m));
    REQUIRE(m.published_total_params > 0);
    CHECK(static_cast<double>(total_params(m)) == Approx(m.published_total_params).epsilon(c.tol));
  }
  const ModelSpec light = zoo("nemotron3.5-lightning-30b-a3b");
  CHECK(light.published_total_params == 0);
  CHECK(total_params(light) == total_params(zoo("nemotron3-nano-30b-a3b")));
  CHECK(light.mtp_layers == 2);
}

// Nemotron-H totals by hand from their patterns (model-configs-hybrid.csv): untied embedding and
// head 2 x 131072 x h and the final norm; per block its RMSNorm h and a Mamba-2 mixer (in_proj
// h x (2 d + 2 g n + H), conv (d + 2 g n) x (4 + 1 bias), A_log / D / dt_bias 3H, gated norm
// d, out_proj d x h, with d = H x 64), a GQA attention (2 h x 128 heads + 2 h x 128 x 8 for k,
// v) or a relu2 MLP 2 h f. No figure with more digits than the names 8B / 47B / 56B was found
// (docs/models.md): these are the counts the names round.
TEST_CASE("Nemotron-H 8B / 47B / 56B totals by hand") {
  const auto total = [](const std::string& pattern, int64_t h, int64_t f, int64_t heads,
                        int64_t mheads, int64_t state) {
    const int64_t d = mheads * 64, conv = d + 2 * 8 * state;
    const int64_t mamba = h * (d + conv + mheads) + conv * 5 + 3 * mheads + d + d * h;
    const int64_t attn = 2 * h * heads * 128 + 2 * h * 8 * 128;
    int64_t n = 2 * 131072 * h + h;
    for (char c : pattern)
      n += h + (c == 'M' ? mamba : c == '*' ? attn : 2 * h * f);
    return n;
  };
  const std::string p8 = "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-";
  const std::string p47 =
      "M-M-M-M-M-M-M-M-M*-M-M-M-M-M-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-M-M---MM---M-M*-M-"
      "M-M-M-M-";
  std::string p56 = "M-M-M-M*-";  // then 9 x "M-M-M-M-M*-" and "M-M-M-M-M-": 118 blocks
  for (int i = 0; i < 9; ++i)
    p56 += "M-M-M-M-M*-";
  p56 += "M-M-M-M-M-";
  CHECK(p56.size() == 118);
  CHECK(block_pattern_text(zoo("nemotron-h-8b").blocks) == p8);
  CHECK(block_pattern_text(zoo("nemotron-h-47b").blocks) == p47);
  CHECK(block_pattern_text(zoo("nemotron-h-56b").blocks) == p56);
  CHECK(total(p8, 4096, 21504, 32, 128, 128) == 8'100'852'736);
  CHECK(total(p47, 8192, 30720, 64, 256, 256) == 46'791'554'816);
  CHECK(total(p56, 8192, 32768, 64, 256, 256) == 56'324'350'464);
  CHECK(total_params(zoo("nemotron-h-8b")) == 8'100'852'736);
  CHECK(total_params(zoo("nemotron-h-47b")) == 46'791'554'816);
  CHECK(total_params(zoo("nemotron-h-56b")) == 56'324'350'464);
}

TEST_CASE("Mamba-2 FLOPs per token by hand") {
  const ModelSpec m = zoo("nemotron3-nano-30b-a3b");
  // SSD: 2·Q·G·N + 4·d·N + Q·d = 2·128·8·128 + 4·4096·128 + 128·4096 = 2,883,584.
  CHECK(ssd_scan_flops_per_token(m.mamba) == Approx(2'883'584.0));
  // Executed: projections 2·2688·(10,304 + 4096) = 77,414,400, conv 2·4·6144 = 49,152, SSD.
  CHECK(mamba_forward_flops_per_token(m) == Approx(80'347'136.0));
  // Megatron's term with d = 2·2688 = 5376: 2·2688·(10,752 + 2048 + 64) + 7·5376·128
  // + 2·5376·2688 = 69,156,864 + 4,816,896 + 28,901,376.
  CHECK(megatron_mamba_flops_per_token(m) == Approx(102'875'136.0));
  // Whole model at 8192 tokens (Megatron, causal), forward × 3: 23 Mamba terms, 6 attention
  // blocks (2·2688·8704 + 2·4096·8192 = 113,967,104 each... as 6·w + 3·core below), 23 MoE
  // blocks 2·(6·9,977,856 + 19,955,712) and the head 2·2688·131072.
  const double attn = 6.0 * (2688.0 * 8704) + 3.0 * 2.0 * 4096 * 8192;
  const double moe = 6.0 * (6 * 9'977'856.0 + 19'955'712.0);
  const double head = 6.0 * 2688.0 * 131072;
  const double expect = 23 * 3.0 * 102'875'136.0 + 6 * attn + 23 * moe + head;
  CHECK(model_flops_per_token(m, 8192) == Approx(expect));
  // NVIDIA's Nano rows: 328 TFLOP/s/GPU at 14,719 tokens/s/GPU (DGX-H100, 26.06) = 22.28 GFLOP.
  CHECK(model_flops_per_token(m, 8192) == Approx(328e12 / 14719).epsilon(0.005));
}

TEST_CASE("hybrid pattern parser") {
  std::vector<BlockKind> b;
  size_t bad = 99;
  REQUIRE(parse_block_pattern("M-*E", &b, &bad));
  CHECK(b == std::vector<BlockKind>{BlockKind::kMamba, BlockKind::kMlp, BlockKind::kAttention,
                                    BlockKind::kMoe});
  CHECK(block_pattern_text(b) == "M-*E");
  CHECK_FALSE(parse_block_pattern("MM-X*", &b, &bad));
  CHECK(bad == 3);
  CHECK_FALSE(parse_block_pattern("", &b, &bad));
  CHECK_FALSE(parse_block_pattern("M-*E/*E", &b, &bad));  // MTP suffix: not a block
  CHECK(bad == 4);
}

TEST_CASE("hybrid model files: good pattern loads, bad ones name /blocks or /mamba") {
  const ModelSpec m = parse(hybrid_json("M-*-"), "toy.json");
  CHECK(m.blocks.size() == 4);
  CHECK(is_hybrid(m));
  CHECK(has_attention(m, 2));
  CHECK_FALSE(has_attention(m, 0));
  CHECK(has_ffn(m, 1));
  CHECK_FALSE(has_ffn(m, 0));
  // Each block: its norm (256) and its mixer / MLP; embedding + head 2·1000·256 + final norm.
  const int64_t mamba = mamba_params(m);
  const int64_t attn = 256 * (256 + 2 * 128) + 256 * 256;
  const int64_t mlp = 2 * 256 * 512;
  CHECK(total_params(m) == 4 * 256 + mamba + attn + 2 * mlp + 2 * 1000 * 256 + 256);
  CHECK(error_of(hybrid_json("M-X-")).find("/blocks: character 2 'X' is not a block kind") == 0);
  CHECK(error_of(hybrid_json("M-*")).find("/blocks: has 3 blocks; expected one per layer") == 0);
  CHECK(error_of(hybrid_json("")).find("/blocks: expected a non-empty pattern") == 0);
  CHECK(error_of(hybrid_json("M-*E")).find("/moe: missing: the pattern has MoE blocks") == 0);
  CHECK(error_of(hybrid_json("*-*-")).find("/mamba: only valid when the pattern has Mamba-2") == 0);
  // groups must divide heads
  std::string t = hybrid_json("M-*-");
  t.replace(t.find("\"groups\": 2"), 11, "\"groups\": 3");
  CHECK(error_of(t).find("/mamba/groups: must divide heads (8)") == 0);
}

TEST_CASE("SSD chunk_scan time at a measured ssm-kernels.csv row (H800)") {
  GpuSpec h800;
  h800.model = "H800";
  h800.hbm_bandwidth = Bandwidth::gbytes_per_second(3350);
  h800.peak_dense_tflops = {{"tf32", 494.5}, {"bf16", 989}, {"fp8", 1979}};
  const ComputeModel c = ComputeModel::load(h800, kRoot);
  // TileLang benchmark: batch 8, 4096 tokens, 80 heads x 64, state 128, chunk 256: 645 us.
  SsdShape s;
  s.batch = 8;
  s.seq = 4096;
  s.heads = 80;
  s.head_dim = 64;
  s.state = 128;
  s.groups = 1;
  s.chunk = 256;
  CHECK(c.ssd_chunk_scan(s).us() == Approx(645).epsilon(0.001));
  s.seq = 32768;
  CHECK(c.ssd_chunk_scan(s).us() == Approx(5076).epsilon(0.001));
  bool fallback = true;
  CHECK(c.ssd_source(&fallback).find("mamba2 ssd: 6 measured chunk_scan rows on H800") == 0);
  CHECK_FALSE(fallback);
  // mamba_ssm 2.3.1's forward (ssd_combined.py _mamba_chunk_scan_combined_fwd): chunk_cumsum,
  // chunk_state, state_passing, bmm_chunk, chunk_scan. At this shape chunk_scan is compute-bound
  // (the measured 645 us), and chunk_state's 2·d·N = 2·5120·128 FLOPs per token equal chunk_scan's
  // Q·d + 2·d·N = 256·5120 + 2·5120·128 halved: 645 / 2 us at the same rate.
  s.seq = 4096;
  const auto fwd = c.ssd_kernels(s, false);
  REQUIRE(fwd.size() == 5);
  CHECK(std::string(fwd[4].name) == "chunk_scan_fwd");
  CHECK(fwd[4].time.us() == Approx(645).epsilon(0.001));
  CHECK(std::string(fwd[1].name) == "chunk_state_fwd");
  CHECK(fwd[1].time.us() == Approx(645.0 / 2).epsilon(0.001));
  // state_passing has no FLOPs to speak of: the fp32 chunk states in, bf16 out. 8 sequences of
  // 4096 / 256 = 16 chunks, 80 heads x 64 x 128 state values per chunk: 128 · 655,360 · (4 + 2)
  // = 503,316,480 bytes at the memory-bound bandwidth.
  const double Bps = 1e9 / (c.memory_bound(1e9).us() * 1e-6);
  CHECK(std::string(fwd[2].name) == "state_passing_fwd");
  CHECK(fwd[2].time.us() == Approx(503'316'480.0 / Bps * 1e6).epsilon(0.001));
  // Backward (_mamba_chunk_scan_combined_bwd): 15 Triton kernels (the recomputed cumsum, C·Bᵀ,
  // chunk states and fp32 state passing; dz, dstates, state_passing_bwd, dx, dB, dC, dC·Bᵀ, two
  // bmm_chunk_bwd, ddA_cumsum, cumsum_bwd) and 22 PyTorch ops: dt.clone(); 7 workspace zeroings
  // (torch.zeros dD and the autotune pre-hooks' init_to_zero of dx's ddt and dD, dB's ddA, dC's
  // ddA_prev, cumsum_bwd's dA and ddt_bias); the sums of dz's dD, state_passing's ddA, dx's dD,
  // dB, dC, dC·Bᵀ and the ddA partials; dB's ddA cumsum; ddA_prev[..., -1] +=; flip, cumsum,
  // flip; ddA_next + ddA_prev; ddA += — 37.
  const auto bwd = c.ssd_kernels(s, true);
  CHECK(bwd.size() == 37);
  // The backward's state passing keeps fp32 states: 128 · 655,360 · (4 + 4) bytes.
  CHECK(std::string(bwd[4].name) == "state_passing_fwd");
  CHECK(bwd[4].time.us() == Approx(671'088'640.0 / Bps * 1e6).epsilon(0.001));
  Time sum = Time::zero();
  for (const auto& k : bwd)
    sum += k.time;
  CHECK(c.ssd_scan(s, true) == sum);
}

TEST_CASE("SSD on a GPU without rows: H800 rate times the bf16 peak ratio, with a warning") {
  const ComputeModel c = gpu_compute("dgx-b200");
  SsdShape s;
  s.batch = 8;
  s.seq = 4096;
  s.heads = 80;
  s.head_dim = 64;
  s.state = 128;
  s.groups = 1;
  s.chunk = 256;
  CHECK(c.ssd_chunk_scan(s).us() == Approx(645 * 989.0 / 2250).epsilon(0.001));
  // Nemotron 3 Nano's shape at MBS 2 (2 x 8192 tokens, 64 heads x 64, state 128, 8 groups,
  // chunk 128): chunk_state reads x (16,384 · 4096 · 2 = 134,217,728 B), B (16,384 · 8 · 128 · 2
  // = 33,554,432), dt_out and dA_cumsum (2 · 128 chunks · 128 · 64 · 4 = 8,388,608) and writes
  // the fp32 states (128 · 4096 · 128 · 4 = 268,435,456): 444,596,224 bytes, more time at the
  // memory-bound bandwidth than its 2·d·N FLOPs per token (2/3 of chunk_scan's Q·d + 2·d·N) take.
  SsdShape nano{2, 8192, 64, 64, 128, 8, 128};
  const double Bps = 1e9 / (c.memory_bound(1e9).us() * 1e-6);
  const auto k = c.ssd_kernels(nano, false);
  CHECK(k[1].time.us() == Approx(444'596'224.0 / Bps * 1e6).epsilon(0.001));
  CHECK(k[1].time.us() > c.ssd_chunk_scan(nano).us() * 2.0 / 3.0);
  bool fallback = false;
  CHECK(c.ssd_source(&fallback).find("B200: no Mamba-2 SSD rows") == 0);
  CHECK(fallback);
}

TEST_CASE("Nemotron 3 Nano step on DGX-H100: runs, reports the SSD source, checks TP / CP") {
  const SystemSpec sys = load_system("dgx-h100", kRoot);
  const CollectiveParams cp = load_collective_params(sys, kRoot);
  const ComputeModel compute = ComputeModel::load(sys.gpu, kRoot);
  Topology topo{sys, sys.fabric, 1};
  StepInput in;
  in.model = zoo("nemotron3-nano-30b-a3b");
  in.par.tp = 1;
  in.par.dp = 8;
  in.par.ep = 8;
  in.par.seq_len = 8192;
  in.par.micro_batch = 1;
  in.par.global_batch = 64;
  in.par.precision = PrecisionRecipe::kFp8Current;
  const StepResult r = simulate_step(in, topo, cp, compute);
  CHECK(r.step_time_s > 0);
  bool ssd = false;
  for (const auto& s : r.compute_sources)
    ssd = ssd || s.find("H100: no Mamba-2 SSD rows") == 0;
  CHECK(ssd);
  ParallelConfig p = in.par;
  p.tp = 4;  // 64 heads, 8 groups: fine
  p.dp = 2;
  CHECK_NOTHROW(check_parallel_config(in.model, p, 8, 8, "s.json", ""));
  p.tp = 8;
  p.dp = 1;
  p.ep = 1;
  CHECK_NOTHROW(check_parallel_config(in.model, p, 8, 8, "s.json", ""));
  ModelSpec few = in.model;
  few.mamba.groups = 4;  // 4 B/C groups cannot split over tp = 8
  CHECK_THROWS_WITH(check_parallel_config(few, p, 8, 8, "s.json", ""),
                    Catch::Contains("must divide the model's 64 Mamba-2 heads and its 4 B/C"));
  p.tp = 2;
  p.cp = 2;
  p.dp = 2;
  CHECK_THROWS_WITH(check_parallel_config(in.model, p, 8, 8, "s.json", ""),
                    Catch::Contains("context parallelism with Mamba-2 layers is not modelled"));
}

TEST_CASE("a hybrid model's MTP module is an attention + MoE layer") {
  const ModelSpec light = zoo("nemotron3.5-lightning-30b-a3b");
  const ModelSpec nano = zoo("nemotron3-nano-30b-a3b");
  REQUIRE(light.mtp_layers == 2);
  // Per module: attention 6·2688·8704 + 3·2·4096·8192 at 8192 tokens, MoE 6·(6·9,977,856 +
  // 19,955,712), the 2h x h projection 6·2·2688², another head 6·2688·131072.
  const double attn = 6.0 * (2688.0 * 8704) + 3.0 * 2.0 * 4096 * 8192;
  const double moe = 6.0 * (6 * 9'977'856.0 + 19'955'712.0);
  const double one = attn + moe + 6.0 * 2.0 * 2688.0 * 2688 + 6.0 * 2688.0 * 131072;
  CHECK(model_flops_per_token(light, 8192) - model_flops_per_token(nano, 8192) == Approx(2 * one));
  // Parameters: attention 23,396,352, norms 2·2688, MoE 1,297,465,344 (without its block norm),
  // plus the module's 2 input norms, 2h x h projection and final norm.
  const int64_t layer = 23'396'352 + 2 * 2688 + 1'297'465'344;
  CHECK(mtp_params(light) == 2 * (layer + 2 * 2688 + 2 * 2688LL * 2688 + 2688));
}

TEST_CASE("LoRA step of a small hybrid model: frozen mixer projections run no wgrad GEMM") {
  // M * M - at 4096 tokens, tp 1, BF16: the decoder layers of one pretrain step against the
  // same LoRA step (rank 32, all four targets; the mixers' in_proj / out_proj are no target).
  const ModelSpec m = parse(hybrid_json("M*M-"), "toy.json");
  const ComputeModel c = gpu_compute("dgx-h100");
  FrameworkOptions fw;
  const ParallelConfig pre = one_gpu(4096);
  ParallelConfig lora = pre;
  lora.task.kind = TrainingTask::kLora;
  LayerCostModel a(m, pre, fw, c, no_comm);
  LayerCostModel l(m, lora, fw, c, no_comm);
  const double T = 4096;
  // Mamba block per token: in_proj 2·256·1096 = 561,152 (1096 = 2·512 + 2·2·16 + 8), conv
  // 2·4·576 = 4,608, SSD 2·64·2·16 + 4·512·16 + 64·512 = 69,632, out_proj 2·512·256 = 262,144.
  // Forward: pre-norm, in_proj, conv, A = -exp(A_log) (exp, neg) and dt_bias.float(), 5 SSD
  // kernels, norm, out_proj, residual = 14.
  CHECK(a.layer(0, false).flops == Approx(T * 897'536));
  CHECK(a.layer(0, false).kernels == 14);
  CHECK(l.layer(0, false).flops == Approx(T * 897'536));
  CHECK(l.layer(0, false).kernels == 14);
  // Backward: pre-norm, dgrad and wgrad of both projections, the conv's forward again (4,608)
  // and its backward (twice), the 3 small ops' backward, 37 SSD kernels, the norm and its
  // weight gradient's sum and cast, residual = 51. SSD FLOPs per token (Q 64, G 2, N 16, d 512):
  // recomputed C·Bᵀ 2·64·2·16 = 4,096 and states 2·512·16 = 16,384; dstates, dB, dC 16,384
  // each; dx 64·512 + 16,384 = 49,152; dC·Bᵀ and ddA_cumsum 64·512 = 32,768 each; two
  // bmm_chunk_bwd 4,096 each: 192,512 (before: twice the forward's 69,632 = 139,264). LoRA
  // drops the two wgrad GEMMs (2 kernels, T·(561,152 + 262,144) FLOPs).
  CHECK(a.layer(0, true).flops == Approx(T * (1'799'680 - 139'264 + 192'512)));
  CHECK(a.layer(0, true).kernels == 51);
  CHECK(l.layer(0, true).flops == Approx(T * (976'384 - 139'264 + 192'512)));
  CHECK(l.layer(0, true).kernels == 49);
  CHECK(l.layer(2, true).kernels == 49);
  // Attention block: linear_qkv [256 → 512] and linear_proj [256 → 256] lose their wgrad
  // (T·2·256·512, T·2·256·256) and gain adapters of rank 32: forward x·A, ·B (2 kernels,
  // 2·32·(256 + 512) = 49,152 and 2·32·512 = 32,768 per token), backward twice that in 4.
  CHECK(l.layer(1, false).flops - a.layer(1, false).flops == Approx(T * (49'152 + 32'768)));
  CHECK(l.layer(1, false).kernels - a.layer(1, false).kernels == 4);
  CHECK(l.layer(1, true).flops - a.layer(1, true).flops ==
        Approx(T * (2 * (49'152 + 32'768) - 262'144 - 131'072)));
  // (and the frozen input norm's main_grad add).
  CHECK(l.layer(1, true).kernels - a.layer(1, true).kernels == 8 - 2 - 1);
  // MLP block (plain, 512): fc1 [256 → 512], fc2 [512 → 256], 49,152 adapter FLOPs each.
  CHECK(l.layer(3, false).flops - a.layer(3, false).flops == Approx(T * 2 * 49'152));
  CHECK(l.layer(3, true).flops - a.layer(3, true).flops == Approx(T * (4 * 49'152 - 2 * 262'144)));
  CHECK(l.layer(3, true).kernels - a.layer(3, true).kernels == 8 - 2 - 1);
}

TEST_CASE("LoRA model FLOPs of a hybrid: frozen mixer projections count 4 FLOPs per weight") {
  const ModelSpec m = parse(hybrid_json("M*M-"), "toy.json");
  // Megatron's Mamba projections, d = 2·256: 2·256·(2·512 + 2·2·16 + 8) + 2·512·256.
  CHECK(megatron_mamba_projection_flops_per_token(m) == Approx(823'296));
  TaskSpec lora;
  lora.kind = TrainingTask::kLora;  // rank 32, all four targets
  const FlopConvention c;
  // LoRA − pretrain per token: 2 FLOPs fewer per frozen weight (two Mamba blocks 2·823,296 / 2
  // each; attention 256·512 + 256·256, MLP 2·256·512, head 256·1000 weights), 6 per adapter
  // parameter: 32·(256 + 512) + 32·(256 + 256) + 2·32·(256 + 512) = 90,112.
  const double diff = -2 * 823'296.0 - 2.0 * (196'608 + 262'144 + 256'000) + 6.0 * 90'112;
  CHECK(task_flops_per_token(m, 4096, c, lora) - task_flops_per_token(m, 4096, c, TaskSpec{}) ==
        Approx(diff));
}

TEST_CASE("Mamba-2 block: the [l, b] -> [b, l] copies of a multi-sequence micro-batch") {
  // M of the toy model at 2 x 2048 against 1 x 4096 tokens, BF16, tp 1: the same kernels and
  // FLOPs but for MambaMixer._ssm_training's .contiguous() copies, each read + write of BF16:
  // forward zxBCdt (in_proj width 2·512 + 2·2·16 + 8 = 1096) and y (d_inner 512), backward
  // the zxBCdt gradient before in_proj's backward. Both layouts run the same SSD shape but for
  // the batch, so the SSD and every other kernel cancel in the difference.
  const ModelSpec m = parse(hybrid_json("M*M-"), "toy.json");
  const ComputeModel c = gpu_compute("dgx-h100");
  FrameworkOptions fw;
  const ParallelConfig one = one_gpu(4096);
  ParallelConfig two = one;
  two.micro_batch = 2;
  two.seq_len = 2048;
  two.global_batch = 2;
  LayerCostModel a(m, one, fw, c, no_comm);
  LayerCostModel b(m, two, fw, c, no_comm);
  auto compute = [](const Block& blk) {
    Time t = Time::zero();
    for (const Segment& s : blk.segs)
      t += s.compute;
    return t;
  };
  const double T = 4096;
  CHECK(b.layer(0, false).kernels == a.layer(0, false).kernels + 2);
  CHECK(b.layer(0, true).kernels == a.layer(0, true).kernels + 1);
  CHECK(b.layer(0, false).flops == Approx(a.layer(0, false).flops));
  CHECK(compute(b.layer(0, false)) - compute(a.layer(0, false)) ==
        c.memory_bound(T * 1096 * 4.0) + c.memory_bound(T * 512 * 4.0));
  CHECK(compute(b.layer(0, true)) - compute(a.layer(0, true)) == c.memory_bound(T * 1096 * 4.0));
}
