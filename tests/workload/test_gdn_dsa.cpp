// Gated DeltaNet (Qwen3-Next) and DeepSeek sparse attention (DeepSeek-V3.2): parameter counts by
// hand and against the published totals, FLOPs per token by hand, the model-file input errors,
// the parallel configurations Megatron-Core does not support, and the chunk-kernel / sparse-MLA
// times at measured calibration/sources/ssm-kernels.csv rows.
#include <catch2/catch.hpp>
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
#include "workload/task.h"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {
// A two-layer Qwen3-Next-like model (G E * E) as a zoo JSON text; `attention` / `extra` spliced.
std::string gdn_json(const std::string& blocks = "GE*E", const std::string& gdn = "",
                     const std::string& attention = "", const std::string& extra = "") {
  return R"({"id": "toy-gdn", "layers": 4, "hidden": 256, "vocab": 1000, "mlp": "gated",
    "tied_embeddings": false, "max_seq_len": 4096,
    "attention": {"kind": "gqa", "heads": 4, "kv_heads": 2, "head_dim": 64, "qk_norm": true,
                  "output_gate": true)" +
         attention + R"(},
    "moe": {"experts": 8, "shared_experts": 1, "top_k": 2, "expert_ffn": 128,
            "shared_expert_ffn": 128, "shared_expert_gate": true},
    "blocks": ")" +
         blocks + R"(",
    "gdn": {"qk_heads": 2, "v_heads": 4, "qk_head_dim": 32, "v_head_dim": 32, "conv_kernel": 4,
            "chunk": 64)" +
         gdn + "}" + extra + "}";
}
}  // namespace

TEST_CASE("Qwen3-Next parameters by hand: GDN, gated attention, MoE with gated shared expert") {
  const ModelSpec m = zoo("qwen3-next-80b-a3b");
  REQUIRE(m.layers == 96);
  REQUIRE(block_kind(m, 0) == BlockKind::kGdn);
  REQUIRE(block_kind(m, 6) == BlockKind::kAttention);
  REQUIRE(block_kind(m, 7) == BlockKind::kMoe);
  // GDN: in_proj 2048·(2·2048 + 2·4096 + 2·32) = 25,296,896; conv (2·2048 + 4096)·4 = 32,768;
  // A_log, dt_bias 2·32; norm 128; out_proj 4096·2048 = 8,388,608.
  CHECK(gdn_params(m) == 33'718'464);
  CHECK(layer_params(m, 0).attention == 33'718'464);
  CHECK(layer_params(m, 0).norms == 2048);
  // Gated attention: q_proj 2048·(4096 + 4096 gate), k, v 2048·512 each, o 4096·2048, q/k norm
  // 2·256 = 16,777,216 + 2,097,152 + 8,388,608 + 512.
  CHECK(layer_params(m, 6).attention == 27'263'488);
  // MoE: 512 experts of 3·2048·512 = 3,145,728; shared 3,145,728 + its gate 2048; router
  // 2048·512 = 1,048,576.
  const LayerParams e = layer_params(m, 7);
  CHECK(e.one_expert == 3'145'728);
  CHECK(e.routed_experts == 512LL * 3'145'728);
  CHECK(e.shared_experts == 3'145'728 + 2048);
  CHECK(e.router == 1'048'576);
  // 36·33,718,464 + 12·27,263,488 + 48·1,614,809,088 + 96·2048 norms + 2·151936·2048 + 2048.
  CHECK(total_params(m) == 79'674'391'296);
  // Published 80B (model card); the checkpoint's tensor count less MTP is the same 79.67B.
  CHECK(static_cast<double>(total_params(m)) == Approx(m.published_total_params).epsilon(0.01));
  // Active: total less 48 layers' 502 idle experts = 3,874,929,408 (the card rounds to "3B";
  // 3.25B without the two embedding matrices).
  CHECK(active_params(m) == 79'674'391'296LL - 48LL * 502 * 3'145'728);
  CHECK(active_params(m) == 3'874'929'408);
}

TEST_CASE("Gated DeltaNet FLOPs per token by hand") {
  const ModelSpec m = zoo("qwen3-next-80b-a3b");
  // Chunk kernel: 32 heads · (6·128·128 + 1.5·64·256 + 64²) = 32·126,976.
  CHECK(gdn_chunk_flops_per_token(m.gdn) == Approx(4'063'232.0));
  // Executed: projections 2·2048·(12,352 + 4096) = 67,371,008, conv 2·4·8192 = 65,536.
  CHECK(gdn_forward_flops_per_token(m) == Approx(71'499'776.0));
  // Megatron-Bridge: 2·[2048·12,352 + 4·8192 + 4·32·128² + 2048·4096] = 2·35,815,424.
  CHECK(megatron_gdn_flops_per_token(m) == Approx(71'630'848.0));
  // Whole model at 4096 tokens: 36 GDN blocks × 3, 12 gated-attention blocks (weights
  // 2048·(8192 + 1024) + 4096·2048 = 27,262,976, core 2·2048·(4096 + 4096)), 48 MoE blocks
  // (10 routed + 1 shared expert of 3,145,728), the head and one MTP module (attention + MoE,
  // the 2h×h projection, another head).
  const double gdn = 3.0 * 71'630'848.0;
  const double attn = 6.0 * 27'262'976.0 + 3.0 * 2.0 * 2048 * 8192;
  const double moe = 6.0 * 11 * 3'145'728.0;
  const double head = 6.0 * 2048.0 * 151936;
  const double mtp = attn + moe + 6.0 * 2 * 2048.0 * 2048 + head;
  CHECK(model_flops_per_token(m, 4096) == Approx(36 * gdn + 12 * attn + 48 * moe + head + mtp));
}

TEST_CASE("DeepSeek-V3.2 parameters: DeepSeek-V3 plus a lightning indexer in each layer") {
  const ModelSpec v32 = zoo("deepseek-v3.2-exp");
  const ModelSpec v3 = zoo("deepseek-v3");
  REQUIRE(is_sparse_attention(v32));
  // wq_b 1536·64·128 = 12,582,912, wk 7168·128 = 917,504, weights_proj 7168·64 = 458,752, the
  // key's LayerNorm 2·128.
  CHECK(indexer_params(v32) == 13'959'424);
  CHECK(indexer_params(v3) == 0);
  CHECK(total_params(v32) - total_params(v3) == 61LL * 13'959'424);
  CHECK(active_params(v32) - active_params(v3) == 61LL * 13'959'424);
  // 671.88B against the published 671B (DeepSeek-V3's figure: the report names the indexer the
  // only architectural change). Active: DeepSeek-V3's 37.55B (2.3 % over its README's 37B, see
  // test_model.cpp) plus the 0.85B of indexers every token runs: 38.40B, 3.8 % over 37B.
  CHECK(static_cast<double>(total_params(v32)) == Approx(671e9).epsilon(0.01));
  CHECK(static_cast<double>(active_params(v32)) == Approx(37e9).epsilon(0.04));
}

TEST_CASE("DeepSeek sparse attention FLOPs per token by hand") {
  const ModelSpec v32 = zoo("deepseek-v3.2-exp");
  const ModelSpec v3 = zoo("deepseek-v3");
  // Keys attended at 4096 tokens with top-2048: 2048 − 2048²/(2·4096) = 1536; at 1024 tokens all
  // of the causal prefix, 512.
  CHECK(sparse_attended_keys(2048, 4096) == Approx(1536.0));
  CHECK(sparse_attended_keys(2048, 1024) == Approx(512.0));
  CHECK(attended_keys(v32, 0, 4096) == Approx(1536.0));
  // Per layer at 4096: sparse core 3·2·1536·128·(2·512 + 64), indexer scoring 3·2·2048·64·129,
  // indexer projections 4·13,959,168; the dense MLA core it replaces is 3·2·2048·128·(192 + 128).
  const double dsa = 3.0 * 2 * 1536 * 128 * 1088 + 3.0 * 2 * 2048 * 64 * 129 + 4.0 * 13'959'168;
  const double dense = 3.0 * 2 * 2048 * 128 * 320;
  // 61 decoder layers and the MTP module's layer.
  CHECK(model_flops_per_token(v32, 4096) - model_flops_per_token(v3, 4096) ==
        Approx(62 * (dsa - dense)));
}

TEST_CASE("Gated DeltaNet and DSA model files: good ones load, bad ones name the field") {
  const ModelSpec m = parse(gdn_json());
  // GDN 256·(2·64 + 2·128 + 8) + 256·4 + 8 + 32 + 128·256 = 100,352 + 1024 + 40 + 32,768.
  CHECK(gdn_params(m) == 134'184);
  CHECK(layer_params(m, 2).attention == 256 * (256 + 256 + 128 + 128) + 256 * 256 + 128);
  CHECK_THROWS_WITH(parse(gdn_json("GE*X")), Catch::Contains("m.json:/blocks: character 3 'X'"));
  CHECK_THROWS_WITH(parse(gdn_json("ME*E")), Catch::Contains("/mamba: missing"));
  CHECK_THROWS_WITH(parse(gdn_json("GE*E", R"(, "v_heads": 3)")),
                    Catch::Contains("m.json:/gdn/v_heads"));
  CHECK_THROWS_WITH(parse(gdn_json("GE*E", R"(, "chunk": 0)")),
                    Catch::Contains("m.json:/gdn/chunk"));
  CHECK_THROWS_WITH(parse(gdn_json("GE*E", R"(, "state": 4)")),
                    Catch::Contains("m.json:/gdn/state"));
  CHECK_THROWS_WITH(parse(gdn_json("-E*E")),
                    Catch::Contains("m.json:/gdn: only valid when the pattern has Gated DeltaNet"));
  CHECK_THROWS_WITH(parse(gdn_json("GE*E", "", R"(, "sparse_topk": 64)")),
                    Catch::Contains("m.json:/attention/indexer_heads: missing"));
  CHECK_THROWS_WITH(
      parse(gdn_json("GE*E", "", R"(, "sparse_topk": 64, "indexer_heads": 2,
                                   "indexer_head_dim": 16)")),
      Catch::Contains("m.json:/attention/sparse_topk: DeepSeek sparse attention is only modelled "
                      "with kind \"mla\""));
  CHECK_THROWS_WITH(
      parse(gdn_json("GE*E", "", R"(, "indexer_heads": 2)")),
      Catch::Contains("m.json:/attention/indexer_heads: only valid with sparse_topk"));
}

TEST_CASE("Gated DeltaNet / DSA parallelism: TP divides the heads, no CP, no packed sequences") {
  const ModelSpec m = zoo("qwen3-next-80b-a3b");
  ParallelConfig p;
  p.tp = 4;  // 16 key heads, 32 value heads, 16 attention heads, 2 KV heads: tp 4 divides
  p.dp = 2;
  p.ep = 8;
  p.seq_len = 4096;
  p.micro_batch = 1;
  p.global_batch = 64;
  ModelSpec few = m;
  few.gdn.qk_heads = 2;  // 2 key heads cannot split over tp = 4
  few.gdn.v_heads = 4;
  CHECK_THROWS_WITH(check_parallel_config(few, p, 8, 8, "s.json", ""),
                    Catch::Contains("s.json:/parallelism/tp") &&
                        Catch::Contains("2 Gated DeltaNet key heads and its 4 value heads"));
  ParallelConfig c = p;
  c.tp = 2;
  c.cp = 2;
  CHECK_THROWS_WITH(check_parallel_config(m, c, 8, 8, "s.json", ""),
                    Catch::Contains("s.json:/parallelism/cp: context parallelism with Gated "
                                    "DeltaNet layers is not supported"));
  ParallelConfig packed = p;
  packed.task.kind = TrainingTask::kSft;
  packed.task.mean_document_tokens = 512;
  CHECK_THROWS_WITH(check_parallel_config(m, packed, 8, 8, "s.json", ""),
                    Catch::Contains("s.json:/fine_tuning/mean_document_tokens: packed sequences "
                                    "with Gated DeltaNet layers"));
  const ModelSpec v32 = zoo("deepseek-v3.2-exp");
  ParallelConfig d = p;
  d.tp = 2;
  d.cp = 2;
  d.ep = 2;
  CHECK_THROWS_WITH(check_parallel_config(v32, d, 8, 8, "s.json", ""),
                    Catch::Contains("s.json:/parallelism/cp: context parallelism with DeepSeek "
                                    "sparse attention is not supported"));
  packed.ep = 8;
  CHECK_THROWS_WITH(check_parallel_config(v32, packed, 8, 8, "s.json", ""),
                    Catch::Contains("packed sequences with DeepSeek sparse attention"));
}

TEST_CASE("Gated DeltaNet activations: saved tensors per token by hand") {
  const ModelSpec m = zoo("qwen3-next-80b-a3b");
  ParallelConfig p;
  p.seq_len = 4096;
  p.micro_batch = 1;
  MemoryOptions o;
  // One GDN block, bf16, no TP: norm input 2·2048 + attn_in 2·2048 (replicated), then per token
  // 2 B · (8192 conv in + 4096 norm in q/k + 2·32·128 + 4096 kernel q, k, v) + (4 + 2 + 4)·32
  // (g, β, α) + 2·32·64 (A) + 2·4096 (z) + 2·4096 (o) + 2·4096 (out_proj input).
  const int64_t per_token =
      4 * 2048 + 2 * (8192 + 4096 + 8192 + 4096) + 10 * 32 + 2 * 32 * 64 + 3 * 2 * 4096;
  CHECK(layer_activation_bytes(m, 0, p, o, Recompute::kNone) == per_token * 4096);
}

TEST_CASE("Gated DeltaNet chunk kernel at measured FLA rows (GB200) and the H800 fallback") {
  const ComputeModel c = gpu_compute("dgx-gb200-nvl72");
  // FLA README benchmark on GB200: batch 4, 4096 tokens, 64 heads x 128: 1581 us forward.
  GdnShape s;
  s.batch = 4;
  s.seq = 4096;
  s.heads = 64;
  s.head_dim_k = 128;
  s.head_dim_v = 128;
  s.chunk = 64;
  CHECK(c.gdn_chunk(s, false).us() == Approx(1581).epsilon(0.001));
  // Backward: the mean (fwd+bwd − fwd) / fwd of the six GB200 pairs of the same README.
  const double ratio = ((4738.0 - 1265) / 1265 + (3616.0 - 1029) / 1029 + (2085.0 - 753) / 753 +
                        (5964.0 - 1581) / 1581 + (1974.0 - 631) / 631 + (8644.0 - 1831) / 1831) /
                       6;
  CHECK(c.gdn_chunk(s, true).us() == Approx(1581 * ratio).epsilon(0.001));
  bool fallback = true;
  CHECK(c.gdn_source(&fallback).find("gated deltanet: 6 measured FLA rows on GB200") == 0);
  CHECK_FALSE(fallback);
  // H100 has no row: H800's (Paddle port of FLA; batch 2, 16384 tokens, 16 heads: 1342 us) at
  // the bf16 peak ratio 989 / 989.
  const ComputeModel ch = gpu_compute("dgx-h100");
  s.batch = 2;
  s.seq = 16384;
  s.heads = 16;
  CHECK(ch.gdn_chunk(s, false).us() == Approx(1342).epsilon(0.001));
  CHECK(ch.gdn_source(&fallback).find("H100: no Gated DeltaNet rows; the H800 FLA rate") == 0);
  CHECK(fallback);
}

TEST_CASE("sparse MLA at TileLang's rates: H200's measured backward, H800's forward borrowed") {
  const ComputeModel c = gpu_compute("hgx-h200");
  SparseMlaShape s;
  s.seq = 4096;
  s.heads = 128;
  s.topk = 2048;
  s.kv_lora_rank = 512;
  s.rope_dim = 64;
  // 2·4096·128·1536 keys·1088 FLOPs at 600 TFLOP/s (H800 x 989 / 989); backward 2.5x at 115.
  const double fwd = 2.0 * 4096 * 128 * 1536 * 1088;
  CHECK(c.sparse_mla(s, false).us() == Approx(fwd / 600e12 * 1e6).epsilon(0.001));
  CHECK(c.sparse_mla(s, true).us() == Approx(2.5 * fwd / 115e12 * 1e6).epsilon(0.001));
  bool fallback = false;
  CHECK(c.sparse_mla_source(&fallback).find("H200: no sparse MLA row for the forward") == 0);
  CHECK(fallback);
}

TEST_CASE("Gated DeltaNet block: executed FLOPs and kernel count by hand (tp 1, bf16)") {
  const ModelSpec m = parse(gdn_json());
  const ComputeModel c = gpu_compute("dgx-h100");
  const ParallelConfig p = one_gpu(4096);
  FrameworkOptions fw;
  LayerCostModel costs(m, p, fw, c, no_comm);
  // Per token: in_proj 2·256·392, conv 2·4·256, chunk 4·(6·32² + 1.5·64·64 + 64²) = 65,536,
  // out_proj 2·128·256; backward: dgrad + wgrad of each GEMM, twice the conv and the chunk.
  const Block& f = costs.layer(0, false);
  CHECK(f.flops == Approx(4096.0 * (200'704 + 2'048 + 65'536 + 65'536)));
  // pre-norm, in_proj, conv, L2 norm, repeat, gates, 6 chunk kernels, gated norm, out_proj,
  // residual.
  CHECK(f.kernels == 15);
  const Block& b = costs.layer(0, true);
  CHECK(b.flops == Approx(4096.0 * (2 * 200'704 + 4'096 + 131'072 + 2 * 65'536)));
  CHECK(b.kernels == 23);
  // The attention block is gated: q_proj's output and the gate product add to a plain block.
  const Block& a = costs.layer(2, false);
  CHECK(a.flops > 0);
}

TEST_CASE("Gated DeltaNet block under LoRA: the frozen in_proj / out_proj run no wgrad") {
  const ModelSpec m = parse(gdn_json());
  const ComputeModel c = gpu_compute("dgx-h100");
  ParallelConfig p = one_gpu(4096);
  p.task.kind = TrainingTask::kLora;
  FrameworkOptions fw;
  LayerCostModel costs(m, p, fw, c, no_comm);
  // Forward as pre-training (the mixer projections are no LoRA target: no adapter); backward
  // without the two wgrad GEMMs: 4096·(200,704 + 65,536) FLOPs and 2 kernels fewer than 23.
  CHECK(costs.layer(0, false).flops == Approx(4096.0 * (200'704 + 2'048 + 65'536 + 65'536)));
  CHECK(costs.layer(0, false).kernels == 15);
  const Block& b = costs.layer(0, true);
  CHECK(b.flops == Approx(4096.0 * (200'704 + 4'096 + 131'072 + 65'536)));
  CHECK(b.kernels == 21);
  // Model FLOPs with frozen weights: 2 per weight fewer, the GDN projections (2 per weight
  // forward) among them; the other weights: gated attention 256·512 + 2·256·128 + 256·256,
  // two MoE blocks of top-2 + 1 shared gated experts 3·(3·256·128), the head 256·1000.
  CHECK(megatron_gdn_projection_flops_per_token(m) == Approx(200'704 + 65'536));
  FlopConvention frozen;
  frozen.weight_flops = 4.0;
  CHECK(model_flops_per_token(m, 4096) - model_flops_per_token(m, 4096, frozen) ==
        Approx(266'240 + 2.0 * (262'144 + 2 * 294'912 + 256'000)));
}

TEST_CASE("Qwen3-Next and DeepSeek-V3.2 steps run and report their kernel sources") {
  const SystemSpec sys = load_system("dgx-h100", kRoot);
  const CollectiveParams cp = load_collective_params(sys, kRoot);
  const ComputeModel compute = ComputeModel::load(sys.gpu, kRoot);
  Topology topo{sys, sys.fabric, 1};
  StepInput in;
  in.model = zoo("qwen3-next-80b-a3b");
  in.par.tp = 2;
  in.par.dp = 4;
  in.par.ep = 8;
  in.par.seq_len = 4096;
  in.par.micro_batch = 1;
  in.par.global_batch = 32;
  in.par.sequence_parallel = true;
  const StepResult r = simulate_step(in, topo, cp, compute);
  CHECK(r.step_time_s > 0);
  bool gdn = false;
  for (const auto& s : r.compute_sources)
    gdn = gdn || s.find("H100: no Gated DeltaNet rows; the H800 FLA rate") == 0;
  CHECK(gdn);
  StepInput d = in;
  d.model = zoo("deepseek-v3.2-exp");
  d.model.layers = 4;  // 3 dense + 1 MoE layer of DeepSeek-V3.2's shapes, to fit one node
  d.model.mtp_layers = 0;
  d.par.tp = 8;
  d.par.dp = 1;
  d.par.global_batch = 8;
  const StepResult rd = simulate_step(d, topo, cp, compute);
  CHECK(rd.step_time_s > 0);
  bool sparse = false;
  for (const auto& s : rd.compute_sources)
    sparse = sparse || s.find("H100: no sparse MLA row for the forward backward") == 0;
  CHECK(sparse);
}

TEST_CASE("DeepSeek sparse attention block: executed FLOPs and kernels by hand against dense MLA") {
  const std::string mla = R"({"id": "toy-dsa", "layers": 2, "hidden": 256, "ffn": 512,
    "vocab": 1000, "mlp": "gated", "tied_embeddings": false, "max_seq_len": 4096,
    "attention": {"kind": "mla", "heads": 4, "kv_heads": 4, "head_dim": 16, "q_lora_rank": 64,
                  "kv_lora_rank": 32, "qk_nope_head_dim": 16, "qk_rope_head_dim": 8,
                  "v_head_dim": 16)";
  const ModelSpec dense = parse(mla + "}}");
  const ModelSpec dsa =
      parse(mla + R"(, "sparse_topk": 512, "indexer_heads": 2, "indexer_head_dim": 16}})");
  const ComputeModel c = gpu_compute("dgx-h100");
  const ParallelConfig p = one_gpu(2048);
  FrameworkOptions fw;
  LayerCostModel ld(dense, p, fw, c, no_comm), ls(dsa, p, fw, c, no_comm);
  // Dense core 2·4·2048·1024·(24 + 16) = 671,088,640. DSA: indexer projections
  // 2·2048·(2·16·64 + 16·256 + 2·256) = 27,262,976, scoring 2·2048·1024·2·16 = 134,217,728,
  // core over 512 − 512²/4096 = 448 keys 2·2048·4·448·72 = 528,482,304, KL target 40/72 of it.
  const double core = 528'482'304.0;
  const double fwd = 27'262'976.0 + 134'217'728.0 + core + core * 40 / 72;
  CHECK(ls.layer(0, false).flops - ld.layer(0, false).flops == Approx(fwd - 671'088'640.0));
  // Kernels: 3 projections, key norm, RoPE + rotation, scoring, logits, indices, core, KL
  // target, KL terms in place of one attention kernel.
  CHECK(ls.layer(0, false).kernels - ld.layer(0, false).kernels == 10);
  // Backward: the projections' weight gradients, twice the scoring, 2.5x the core.
  const double bwd = 27'262'976.0 + 2 * 134'217'728.0 + 2.5 * core;
  CHECK(ls.layer(0, true).flops - ld.layer(0, true).flops == Approx(bwd - 2.5 * 671'088'640.0));
  CHECK(ls.layer(0, true).kernels - ld.layer(0, true).kernels == 8);
  // LoRA: nothing in the indexer trains (frozen weights, detached inputs), so it has no
  // backward: the DSA block's backward is the sparse core's 2.5x alone, one kernel in place
  // of the dense attention kernel.
  ParallelConfig lora = p;
  lora.task.kind = TrainingTask::kLora;
  LayerCostModel lld(dense, lora, fw, c, no_comm), lls(dsa, lora, fw, c, no_comm);
  CHECK(lls.layer(0, false).flops - lld.layer(0, false).flops == Approx(fwd - 671'088'640.0));
  CHECK(lls.layer(0, true).flops - lld.layer(0, true).flops ==
        Approx(2.5 * core - 2.5 * 671'088'640.0));
  CHECK(lls.layer(0, true).kernels - lld.layer(0, true).kernels == 0);
  // Model FLOPs agree: LoRA takes the indexer's backward out of the DSA model's count, which
  // the dense model does not have. Per token and layer at s = 2048: the projections' wgrad
  // 2·(64·2·16 + 256·16 + 256·2) = 2·6,656 and two of the scoring's three passes
  // 2·[2·1024·2·(16 + 1)] = 2·69,632; the adapters (linear_proj, linear_fc1 / fc2, the same in
  // both models) cancel. Two layers: 2·(13,312 + 139,264) = 305,152.
  TaskSpec lt;
  lt.kind = TrainingTask::kLora;
  const FlopConvention fc;
  const auto drop = [&](const ModelSpec& m) {
    return task_flops_per_token(m, 2048, fc, TaskSpec{}) - task_flops_per_token(m, 2048, fc, lt);
  };
  CHECK(drop(dsa) - drop(dense) == Approx(305'152.0));
}

TEST_CASE("LoRA linear_qkv adapter of gated attention: q, gate, k, v, in parameters and step") {
  TaskSpec t;
  t.kind = TrainingTask::kLora;  // rank 32, the four targets
  const ModelSpec m = zoo("qwen3-next-80b-a3b");
  // Gated attention block: linear_qkv 2048 → (16 + 16 gate + 2·2)·256 = 9216:
  // 32·(2048 + 9216) = 360,448; linear_proj 16·256 → 2048: 32·(4096 + 2048) = 196,608. MoE
  // block: the shared expert's fc1 2048 → 2·512 32·3072 = 98,304 and fc2 32·(512 + 2048) =
  // 81,920. Gated DeltaNet blocks: none (in_proj / out_proj are no target).
  CHECK(lora_adapter_params(m, t, 6) == 360'448 + 196'608);
  CHECK(lora_adapter_params(m, t, 7) == 98'304 + 81'920);
  CHECK(lora_adapter_params(m, t, 0) == 0);
  // 12 attention blocks and 48 MoE blocks.
  CHECK(lora_adapter_params(m, t) == 12 * 557'056 + 48 * 180'224);  // 15,335,424
  // The step's adapter GEMMs on the toy model's gated attention block (h 256, 4 heads of 64 +
  // the gate, 2 KV heads; rank 16): adding linear_qkv to linear_proj adds forward 2·T·r·(k + n)
  // and backward 4·T·r·(k + n) with k + n = 256 + (4 + 4 + 2·2)·64 = 1024, 6·4096·16·1024
  // FLOPs, the parameters' 6 per token.
  const ModelSpec toy = parse(gdn_json());
  const ComputeModel c = gpu_compute("dgx-h100");
  ParallelConfig p = one_gpu(4096);
  p.task = t;
  p.task.lora_rank = 16;
  p.task.lora_targets = kLoraProj;
  ParallelConfig q = p;
  q.task.lora_targets = kLoraProj | kLoraQkv;
  FrameworkOptions fw;
  LayerCostModel proj(toy, p, fw, c, no_comm), both(toy, q, fw, c, no_comm);
  const auto fb = [](LayerCostModel& l) {
    return l.layer(2, false).flops + l.layer(2, true).flops;
  };
  CHECK(fb(both) - fb(proj) == Approx(6.0 * 4096 * 16 * 1024));
  TaskSpec qkv = q.task;
  qkv.lora_targets = kLoraQkv;
  CHECK(lora_adapter_params(toy, qkv, 2) == 16 * 1024);
}
