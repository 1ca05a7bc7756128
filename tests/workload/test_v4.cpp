// DeepSeek-V4 as a model (sim/workload/model_v4.cpp): closed-form parameters of a tiny V4-style
// model counted by hand from transformers' modeling_deepseek_v4.py layout, its model FLOPs by
// hand from Megatron-Bridge's dsv4_hybrid terms, the zoo's DeepSeek-V4-Flash against its
// published 284B / 13B, and the step's refusal (exit 2) of what it does not model.
#include <catch2/catch.hpp>

#include "core/error.h"
#include "scenario/model_loader.h"
#include "support/fixtures.h"
#include "workload/model.h"
#include "workload/parallel.h"
#include "workload/step_check.h"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {
// h 64, 3 layers (window only, CSA ratio 4, HCA ratio 128), 4 heads x 16, q LoRA 8, 2 output
// groups of rank 8, window 8, indexer 2 x 8 top-4, 4 experts top-2 of width 32 + 1 shared, one
// hash-routed layer, 2 mHC streams, vocabulary 100.
std::string tiny(const std::string& attention_extra = "", const std::string& extra = "") {
  return R"({"id": "tiny-v4", "layers": 3, "hidden": 64, "ffn": 0, "vocab": 100, "mlp": "gated",
    "tied_embeddings": false, "max_seq_len": 4096,
    "attention": {"kind": "shared_kv", "heads": 4, "kv_heads": 1, "head_dim": 16,
      "q_lora_rank": 8, "qk_rope_head_dim": 4, "o_groups": 2, "o_lora_rank": 8, "sinks": true,
      "sparse_topk": 4, "indexer_heads": 2, "indexer_head_dim": 8, "sliding_window": 8,
      "window_kind": "sliding", "window_pattern": 1, "window_layers": 1,
      "compress_ratios": [0, 4, 128], "csa_ratio": 4)" +
         attention_extra + R"(},
    "moe": {"experts": 4, "shared_experts": 1, "top_k": 2, "expert_ffn": 32,
      "shared_expert_ffn": 32, "hash_layers": 1},
    "hyper_connections": {"streams": 2, "sinkhorn_iters": 20})" +
         extra + "}";
}
}  // namespace

TEST_CASE("a tiny DeepSeek-V4-style model's parameters, counted by hand") {
  const ModelSpec m = parse(tiny(), "t.json");
  // Attention of every layer: q_a 64·8 + q_a_norm 8 + q_b 8·64 + kv_proj 64·16 + kv_norm 16
  // + o_a (4·16)·8 + o_b 2·8·64 + 4 sinks = 512 + 8 + 512 + 1024 + 16 + 512 + 1024 + 4.
  const int64_t attn = 3612;
  // CSA (ratio 4): kv_proj and gate_proj 64 -> 32 (both series), position bias 4 x 32, norm 16;
  // indexer: its kv / gate 64 -> 16, bias 4 x 16, norm 8, q_b 8 -> 2·8, weights_proj 64 -> 2.
  const int64_t csa = (2 * 64 * 32 + 4 * 32 + 16) + (2 * 64 * 16 + 4 * 16 + 8 + 8 * 16 + 64 * 2);
  CHECK(csa == 6616);
  // HCA (ratio 128): kv_proj and gate_proj 64 -> 16, position bias 128 x 16, norm 16.
  const int64_t hca = 2 * 64 * 16 + 128 * 16 + 16;
  CHECK(compressor_params(m, 0) == 0);
  CHECK(compressor_params(m, 1) == csa);
  CHECK(compressor_params(m, 2) == hca);
  // Two RMSNorms and two mHC modules: fn (2 + 2)·2 x 2·64, base 8, scale 3 each.
  const int64_t norms = 2 * 64 + 2 * (8 * 128 + 8 + 3);
  CHECK(hyper_connection_params(m) == 2 * (8 * 128 + 8 + 3));
  const LayerParams p0 = layer_params(m, 0);
  CHECK(p0.attention == attn);
  CHECK(p0.norms == norms);
  CHECK(p0.router == 4 * 64);
  CHECK(p0.one_expert == 3 * 64 * 32);
  CHECK(p0.routed_experts == 4 * 6144);
  CHECK(p0.shared_experts == 6144);
  CHECK(layer_params(m, 1).attention == attn + csa);
  CHECK(layer_params(m, 2).attention == attn + hca);
  const int64_t layer = attn + norms + 256 + 4 * 6144 + 6144;  // 36,786
  // Embedding 100·64; the final norm, LM head and mHC head (2 x 128, 2, 1).
  CHECK(output_params(m) == 64 + 6400 + (2 * 128 + 2 + 1));
  const int64_t total = 3 * layer + csa + hca + 6400 + 64 + 6400 + 259;
  CHECK(total == 134209);
  CHECK(total_params(m) == total);
  // Active: two of the four routed experts in each layer.
  CHECK(active_params(m) == total - 3 * 2 * 6144);
}

TEST_CASE("a tiny DeepSeek-V4-style model's FLOPs follow Megatron-Bridge's dsv4_hybrid terms") {
  const ModelSpec m = parse(tiny(), "t.json");
  // Per layer, s = 64: projections q 8·(64 + 64 + 1), kv 64·16 + 16, o 64·8 + 2·8·64 (3,608
  // weights); window core 2·4·8·16 = 1,024.
  const double l0 = 6.0 * 3608 + 6.0 * 1024;
  // CSA: + 4·64·16 + 4·64·8 + 8·2·8 + 64·2 weights; k' = min(4, 64/4) = 4 selected entries,
  // c = 4·(1 − 4·4/128) = 3.5, core + 2·4·3.5·16; scoring 2·8/4 per Σ L² / T = 64.
  const double l1 = 6.0 * (3608 + 6400) + 6.0 * (1024 + 448 + 4.0 * 64);
  // HCA: + 2·64·16 weights; core 4·16/128 per Σ L² / T.
  const double l2 = 6.0 * (3608 + 2048) + 6.0 * (1024 + 0.5 * 64);
  const double moe = 6.0 * (2 * 6144 + 6144);
  const double head = 6.0 * 64 * 100;
  CHECK(l0 + l1 + l2 + 3 * moe + head == 508656.0);
  CHECK(model_flops_per_token(m, 64) == Approx(508656.0).epsilon(1e-12));
  // Packed documents of 32 tokens: the quadratic terms see Σ L² / T = 32 instead of 64.
  FlopConvention packed;
  packed.document_tokens = 32;
  const double less = 6.0 * (4.0 * 32 + 0.5 * 32);
  CHECK(model_flops_per_token(m, 64, packed) == Approx(508656.0 - less).epsilon(1e-12));
}

TEST_CASE("DeepSeek-V4-Flash matches its published 284B total and 13B active and Bridge FLOPs") {
  const ModelSpec m = zoo("deepseek-v4-flash");
  // 43 layers: 21 CSA, 20 HCA, 2 window-only; MTP (ratio 0) excluded from the totals.
  int csa = 0, hca = 0;
  for (int i = 0; i < m.layers; ++i) {
    csa += compress_ratio(m, i) == 4 ? 1 : 0;
    hca += compress_ratio(m, i) == 128 ? 1 : 0;
  }
  CHECK(csa == 21);
  CHECK(hca == 20);
  CHECK(compress_ratio(m, m.layers) == 0);
  // Hand total: attention 106,956,352 + norms and mHC 8,192 + 786,486 + router 1,048,576 +
  // 257 experts of 25,165,824 per layer; CSA 19,142,272, HCA 4,260,352; embedding and head
  // 2 x 529,530,880 + 4,096 + mHC head 4·4·4096 + 4 + 1.
  const int64_t layer = 106956352 + 8192 + 786486 + 1048576 + int64_t{257} * 25165824;
  const int64_t total = 43 * layer + 21 * int64_t{19142272} + 20 * int64_t{4260352} +
                        2 * int64_t{529530880} + 4096 + 65541;
  CHECK(total_params(m) == total);
  CHECK(static_cast<double>(total) == Approx(284e9).epsilon(0.01));  // 284.33B
  // Active without the input embedding (DeepSeek's convention for V3's 37B): 13.27B against
  // the published "13B" (two digits): 2.1 % over.
  const double active = static_cast<double>(active_params(m) - embedding_params(m));
  CHECK(active == Approx(13e9).epsilon(0.025));
  CHECK(active == Approx(13.270091351e9).epsilon(1e-9));
  // Megatron-Bridge flop_utils.py dsv4_hybrid at seq_length 4096, transcribed by hand
  // (44 layers with the MTP module's, MTP projection and two LM heads): 90,781,470,720 per
  // token, of which 73,728 are the MTP norms' term fleetsim leaves out for every model.
  CHECK(model_flops_per_token(m, 4096) == Approx(90781470720.0 - 73728.0).epsilon(1e-9));
}

TEST_CASE("bad DeepSeek-V4 model fields exit 2 naming the field") {
  CHECK_NOTHROW(parse(tiny(), "t.json"));
  auto bad = [](const std::string& att, const std::string& extra, const std::string& msg) {
    std::string text = tiny(att, extra);
    CHECK_THROWS_WITH(parse(text, "t.json"), Catch::Contains(msg));
  };
  bad(R"(, "kv_lora_rank": 8)", "", "t.json:/attention/kv_lora_rank: not valid with kind");
  bad(R"(, "o_groups": 3)", "", "t.json:/attention/o_groups");
  std::string t = tiny();
  t.replace(t.find("[0, 4, 128]"), 11, "[0, 4]");
  CHECK_THROWS_WITH(parse(t, "t.json"),
                    Catch::Contains("t.json:/attention/compress_ratios: has 2 entries; expected "
                                    "one per layer and MTP module (3)"));
  std::string k = tiny();
  const std::string idx = R"("sparse_topk": 4, "indexer_heads": 2, "indexer_head_dim": 8, )";
  k.replace(k.find(idx), idx.size(), "");
  CHECK_THROWS_WITH(parse(k, "t.json"),
                    Catch::Contains("t.json:/attention/sparse_topk: missing: layers of ratio "
                                    "csa_ratio (CSA) need the indexer"));
  std::string h = tiny();
  h.replace(h.find("\"hash_layers\": 1"), 16, "\"hash_layers\": 4");
  CHECK_THROWS_WITH(parse(h, "t.json"), Catch::Contains("t.json:/moe/hash_layers"));
}

TEST_CASE("the step refuses DeepSeek-V4 with exit 2 naming what is not modelled") {
  const ModelSpec m = zoo("deepseek-v4-flash");
  ParallelConfig p;
  p.ep = 8;
  p.dp = 8;
  p.seq_len = 4096;
  p.micro_batch = 1;
  p.global_batch = 64;
  CHECK_THROWS_AS(check_parallel_config(m, p, 8, 8, "s.json", "/workload"), InputError);
  CHECK_THROWS_WITH(check_parallel_config(m, p, 8, 8, "s.json", "/workload"),
                    Catch::Contains("s.json:/workload/model: the step model of DeepSeek-V4") &&
                        Catch::Contains("is not implemented"));
}
