// Hugging Face config.json import of the hybrid families (sim/scenario/hf_config_hybrid.cpp):
// Qwen3-Next and Qwen3.5 / 3.6, DeepSeek-V3.2 / V4, Nemotron-H and Nemotron 3, Kimi Linear and
// Granite 4.0-H fixtures against the zoo definitions and hand counts, and their bad keys named. The
// other families are in test_hf_config.cpp.
#include <algorithm>

#include <catch2/catch.hpp>

#include "core/csv.h"
#include "core/error.h"
#include "scenario/hf_config.h"
#include "scenario/model_loader.h"
#include "support/fixtures.h"
#include "support/hf_config_fixtures.h"

using namespace fleetsim;
using namespace fleetsim::test;

TEST_CASE("Qwen3-Next and DeepSeek-V3.2 config.json equal the zoo definitions") {
  const ModelSpec q = fixture("qwen3-next-80b-a3b").model;
  const ModelSpec qz = zoo("qwen3-next-80b-a3b");
  CHECK(block_pattern_text(q.blocks) == block_pattern_text(qz.blocks));
  CHECK(q.layers == 96);
  CHECK(q.gdn.qk_heads == qz.gdn.qk_heads);
  CHECK(q.gdn.v_heads == qz.gdn.v_heads);
  CHECK(q.gdn.qk_head_dim == qz.gdn.qk_head_dim);
  CHECK(q.gdn.v_head_dim == qz.gdn.v_head_dim);
  CHECK(q.gdn.conv_kernel == qz.gdn.conv_kernel);
  CHECK(q.gdn.chunk == qz.gdn.chunk);
  CHECK(q.attention.output_gate);
  CHECK(q.attention.qk_norm == qz.attention.qk_norm);
  CHECK(q.moe.shared_expert_gate == qz.moe.shared_expert_gate);
  CHECK(total_params(q) == total_params(qz));
  CHECK(active_params(q) == active_params(qz));
  // config.json names no MTP depth: the importer takes the checkpoint's one MTP module (as the
  // zoo row, from Megatron-Bridge's mapping); num_nextn_predict_layers overrides it.
  CHECK(q.mtp_layers == 1);
  CHECK(q.mtp_layers == qz.mtp_layers);
  CHECK(model_flops_per_token(q, 4096) == Approx(model_flops_per_token(qz, 4096)));
  {
    std::string t = read_text_file(kHfConfigDir + "qwen3-next-80b-a3b.json");
    t.replace(t.find("\"use_cache\": true"), 17,
              "\"use_cache\": true, \"num_nextn_predict_layers\": 0");
    CHECK(text(t).model.mtp_layers == 0);
  }
  const ModelSpec d = fixture("deepseek-v3.2-exp").model;
  const ModelSpec dz = zoo("deepseek-v3.2-exp");
  CHECK(d.attention.sparse_topk == 2048);
  CHECK(d.attention.indexer_heads == dz.attention.indexer_heads);
  CHECK(d.attention.indexer_head_dim == dz.attention.indexer_head_dim);
  CHECK(total_params(d) == total_params(dz));
  CHECK(active_params(d) == active_params(dz));
  CHECK(model_flops_per_token(d, 4096) == Approx(model_flops_per_token(dz, 4096)));
}

TEST_CASE("bad Qwen3-Next / DeepSeek-V3.2 config.json files name the key") {
  const std::string qn = read_text_file(kHfConfigDir + "qwen3-next-80b-a3b.json");
  const std::string ds = read_text_file(kHfConfigDir + "deepseek-v3.2-exp.json");
  const auto with = edited;
  CHECK_NOTHROW(text(qn));
  CHECK_NOTHROW(text(ds));
  CHECK_THROWS_WITH(text(with(qn, "\"linear_num_key_heads\": 16,", "")),
                    Catch::Contains("c.json:/linear_num_key_heads: missing required key"));
  CHECK_THROWS_WITH(
      text(with(qn, "\"linear_num_value_heads\": 32", "\"linear_num_value_heads\": 24")),
      Catch::Contains("c.json:/linear_num_value_heads: must be a multiple"));
  CHECK_THROWS_WITH(
      text(with(qn, "\"mlp_only_layers\": []", "\"layer_types\": [\"full_attention\", \"mamba\"]")),
      Catch::Contains("c.json:/layer_types: expected one entry per layer (48)"));
  CHECK_THROWS_WITH(text(with(qn, "\"use_sliding_window\": false", "\"use_sliding_window\": true")),
                    Catch::Contains("c.json:/use_sliding_window"));
  CHECK_THROWS_WITH(
      text(with(qn, "\"use_cache\": true", "\"use_cache\": true, \"linear_rank\": 4")),
      Catch::Contains("c.json:/linear_rank: key not understood"));
  CHECK_THROWS_WITH(text(with(ds, "\"index_topk\": 2048,", "")),
                    Catch::Contains("c.json:/index_topk: missing required key"));
  CHECK_THROWS_WITH(
      text(with(with(with(ds, "\"index_topk\": 2048,", ""), "\"index_n_heads\": 64,", ""),
                "\"index_head_dim\": 128,", "")),
      Catch::Contains("c.json:/index_topk: missing: DeepseekV32Config needs index_topk"));
  CHECK_THROWS_WITH(text(with(ds, "\"n_routed_experts\": 256", "\"n_routed_experts\": -4")),
                    Catch::Contains("c.json:/n_routed_experts"));
}

TEST_CASE("Nemotron-H config.json: blocks, Mamba-2 and MoE fields equal the zoo definitions") {
  for (const auto& [file, id] :
       {std::pair<const char*, const char*>{"nemotron-h-8b", "nemotron-h-8b"},
        {"nemotron-3-nano-30b-a3b", "nemotron3-nano-30b-a3b"}}) {
    INFO(file);
    const ModelSpec a = fixture(file).model;
    const ModelSpec z = zoo(id);
    CHECK(block_pattern_text(a.blocks) == block_pattern_text(z.blocks));
    CHECK(a.mamba.heads == z.mamba.heads);
    CHECK(a.mamba.head_dim == z.mamba.head_dim);
    CHECK(a.mamba.state == z.mamba.state);
    CHECK(a.mamba.groups == z.mamba.groups);
    CHECK(a.mamba.conv_kernel == z.mamba.conv_kernel);
    CHECK(a.mamba.chunk == z.mamba.chunk);
    CHECK(a.ffn == z.ffn);
    CHECK(a.moe.experts == z.moe.experts);
    CHECK(a.moe.shared_expert_ffn == z.moe.shared_expert_ffn);
    CHECK(total_params(a) == total_params(z));
    CHECK(active_params(a) == active_params(z));
    CHECK(model_flops_per_token(a, 8192) == Approx(model_flops_per_token(z, 8192)));
  }
  // Nano: 3.2B active without the input embedding (report).
  const ModelSpec nano = fixture("nemotron-3-nano-30b-a3b").model;
  CHECK(static_cast<double>(active_params(nano) - embedding_params(nano)) ==
        Approx(3.2e9).epsilon(0.01));
}

TEST_CASE("Nemotron 3 Super / Ultra config.json (LatentMoE) equal the zoo definitions") {
  for (const auto& [file, id] : {std::pair<const char*, const char*>{"nemotron-3-super-120b-a12b",
                                                                     "nemotron3-super-120b-a12b"},
                                 {"nemotron-3-ultra-550b-a55b", "nemotron3-ultra-550b-a55b"}}) {
    INFO(file);
    const ModelSpec a = fixture(file).model;
    const ModelSpec z = zoo(id);
    CHECK(block_pattern_text(a.blocks) == block_pattern_text(z.blocks));
    CHECK(a.layers == z.layers);
    CHECK(a.hidden == z.hidden);
    CHECK(a.vocab == z.vocab);
    CHECK(a.mamba.heads == z.mamba.heads);
    CHECK(a.mamba.state == z.mamba.state);
    CHECK(a.mamba.groups == z.mamba.groups);
    CHECK(a.moe.experts == z.moe.experts);
    CHECK(a.moe.top_k == z.moe.top_k);
    CHECK(a.moe.expert_ffn == z.moe.expert_ffn);
    CHECK(a.moe.shared_expert_ffn == z.moe.shared_expert_ffn);
    CHECK(a.moe.latent == z.moe.latent);
    CHECK(a.moe.latent > 0);
    CHECK(total_params(a) == total_params(z));
    CHECK(active_params(a) == active_params(z));
    // The checkpoint holds one MTP module (num_nextn_predict_layers 1, pattern "*E"); NVIDIA's
    // training recipes run it at 2 depths with shared weights (mtp_num_layers 2,
    // mtp_use_repeated_layer), which the zoo row models: the FLOPs agree at equal depth.
    CHECK(a.mtp_layers == 1);
    CHECK(z.mtp_layers == 2);
    ModelSpec a2 = a;
    a2.mtp_layers = z.mtp_layers;
    CHECK(model_flops_per_token(a2, 8192) == Approx(model_flops_per_token(z, 8192)));
  }
  // Super: 12.7B active with the embeddings (the NVIDIA summary's figure).
  CHECK(static_cast<double>(active_params(fixture("nemotron-3-super-120b-a12b").model)) ==
        Approx(12.7e9).epsilon(0.01));
}

TEST_CASE("bad Nemotron 3 LatentMoE / MTP / layers_block_type keys name the key") {
  const std::string sup = read_text_file(kHfConfigDir + "nemotron-3-super-120b-a12b.json");
  const std::string ult = read_text_file(kHfConfigDir + "nemotron-3-ultra-550b-a55b.json");
  const auto with = edited;
  CHECK_NOTHROW(text(sup));
  CHECK_NOTHROW(text(ult));
  CHECK_THROWS_WITH(text(with(sup, "\"moe_latent_size\": 1024", "\"moe_latent_size\": -1")),
                    Catch::Contains("c.json:/moe_latent_size"));
  CHECK_THROWS_WITH(text(with(sup, "\"mtp_hybrid_override_pattern\": \"*E\"",
                              "\"mtp_hybrid_override_pattern\": \"M*E\"")),
                    Catch::Contains("c.json:/mtp_hybrid_override_pattern: expected '*E'"));
  CHECK_THROWS_WITH(text(with(ult, "\"mamba\",", "\"ssm\",")),
                    Catch::Contains("c.json:/layers_block_type/0: expected 'mamba'"));
  CHECK_THROWS_WITH(text(with(ult, "\"num_hidden_layers\": null", "\"num_hidden_layers\": 100")),
                    Catch::Contains("c.json:/layers_block_type: has 108 blocks; expected "
                                    "num_hidden_layers (100)"));
}

TEST_CASE("Kimi Linear config.json (KDA + MLA) equals the zoo definition") {
  const ModelSpec a = fixture("kimi-linear-48b-a3b").model;
  const ModelSpec z = zoo("kimi-linear-48b-a3b");
  CHECK(block_pattern_text(a.blocks) == block_pattern_text(z.blocks));
  CHECK(a.layers == 54);
  CHECK(a.gdn.kda);
  CHECK(a.gdn.qk_heads == z.gdn.qk_heads);
  CHECK(a.gdn.v_head_dim == z.gdn.v_head_dim);
  CHECK(a.gdn.conv_kernel == z.gdn.conv_kernel);
  CHECK(a.gdn.chunk == z.gdn.chunk);
  CHECK(a.attention.kind == AttentionKind::kMla);
  CHECK(a.attention.q_lora_rank == 0);
  CHECK(a.attention.kv_lora_rank == z.attention.kv_lora_rank);
  CHECK(a.moe.experts == z.moe.experts);
  CHECK(a.moe.top_k == z.moe.top_k);
  CHECK(a.moe.shared_expert_ffn == z.moe.shared_expert_ffn);
  CHECK(a.ffn == z.ffn);
  CHECK(a.mtp_layers == z.mtp_layers);
  CHECK(total_params(a) == total_params(z));
  CHECK(active_params(a) == active_params(z));
  CHECK(model_flops_per_token(a, 4096) == Approx(model_flops_per_token(z, 4096)));
  // Published 48B is the name (the routed experts alone are 47.1B): 49.12B counted, as llama.cpp
  // counts the checkpoint's tensors (model-configs-hybrid.csv total_params_exact; test_model.cpp).
  CHECK(static_cast<double>(total_params(a)) == Approx(48e9).epsilon(0.03));
  CHECK(static_cast<double>(total_params(a)) == Approx(49.12e9).epsilon(0.01));
}

TEST_CASE("bad Kimi Linear config.json files name the key") {
  const std::string good = read_text_file(kHfConfigDir + "kimi-linear-48b-a3b.json");
  const auto with = [&](const std::string& from, const std::string& to) {
    return edited(good, from, to);
  };
  CHECK_NOTHROW(text(good));
  CHECK_THROWS_WITH(text(with("\"num_heads\": 32,", "\"num_heads\": 32, \"gate_rank\": 8,")),
                    Catch::Contains("c.json:/linear_attn_config/gate_rank: key not understood"));
  CHECK_THROWS_WITH(text(with("\"short_conv_kernel_size\": 4", "\"short_conv_kernel_size\": 0")),
                    Catch::Contains("c.json:/linear_attn_config/short_conv_kernel_size"));
  CHECK_THROWS_WITH(text(with(",\n      27\n", "\n")),
                    Catch::Contains("c.json:/linear_attn_config/kda_layers: layer 27"));
  CHECK_THROWS_WITH(text(with(",\n      27\n", ",\n      26\n")),
                    Catch::Contains("c.json:/linear_attn_config/full_attn_layers: layer 26 is "
                                    "listed twice"));
  CHECK_THROWS_WITH(text(with("\"moe_layer_freq\": 1", "\"moe_layer_freq\": 2")),
                    Catch::Contains("c.json:/moe_layer_freq"));
  CHECK_THROWS_WITH(text(with("\"num_experts_per_token\": 8,", "")),
                    Catch::Contains("c.json:/num_experts_per_token: missing required key"));
  // A misspelt list key is a missing one (fuzz_hf_config's first finding: the list readers
  // indexed the object without checking the key, an internal error, exit 1).
  CHECK_THROWS_WITH(
      text(with("\"full_attn_layers\"", "\"full_attn_laqers\"")),
      Catch::Contains("c.json:/linear_attn_config/full_attn_layers: missing required key"));
}

TEST_CASE("bad Nemotron-H config.json files name the key") {
  const std::string good = read_text_file(kHfConfigDir + "nemotron-h-8b.json");
  const auto with = [&](const std::string& from, const std::string& to) {
    return edited(good, from, to);
  };
  CHECK_NOTHROW(text(good));
  CHECK_THROWS_WITH(text(with("\"M-M-M-M*", "\"M-M-X-M*")),
                    Catch::Contains("c.json:/hybrid_override_pattern: character 4 'X'"));
  CHECK_THROWS_WITH(text(with("M-M-M-M-M-\"", "M-M-M-M-\"")),
                    Catch::Contains("c.json:/hybrid_override_pattern: has 50 blocks; expected "
                                    "num_hidden_layers (52)"));
  CHECK_THROWS_WITH(text(with("\"n_groups\": 8", "\"n_groups\": 3")),
                    Catch::Contains("c.json:/n_groups: must divide mamba_num_heads"));
  CHECK_THROWS_WITH(text(with("\"ssm_state_size\": 128,", "")),
                    Catch::Contains("c.json:/ssm_state_size: missing required key"));
  CHECK_THROWS_WITH(text(with("\"mlp_hidden_act\": \"relu2\"", "\"mlp_hidden_act\": \"silu\"")),
                    Catch::Contains("c.json:/mlp_hidden_act: expected 'relu2'"));
  CHECK_THROWS_WITH(text(with("\"use_cache\": true", "\"use_cache\": true, \"mamba_rank\": 4")),
                    Catch::Contains("c.json:/mamba_rank: key not understood"));
  CHECK_THROWS_WITH(
      text(with("\"chunk_size\": 128", "\"chunk_size\": 128, \"mamba_chunk_size\": 256")),
      Catch::Contains("c.json:/chunk_size: disagrees with mamba_chunk_size"));
  CHECK_THROWS_WITH(text(with("M-M-M-M*", "M-M-M-E*")),
                    Catch::Contains("c.json:/n_routed_experts: missing required key"));
}

TEST_CASE("DeepSeek-V4-Flash config.json equals the zoo definition") {
  const ModelSpec a = fixture("deepseek-v4-flash").model;
  const ModelSpec z = zoo("deepseek-v4-flash");
  CHECK(a.attention.kind == AttentionKind::kSharedKv);
  CHECK(a.layers == z.layers);
  CHECK(a.hidden == z.hidden);
  CHECK(a.vocab == z.vocab);
  CHECK(a.attention.heads == z.attention.heads);
  CHECK(a.attention.kv_heads == 1);
  CHECK(a.attention.head_dim == z.attention.head_dim);
  CHECK(a.attention.q_lora_rank == z.attention.q_lora_rank);
  CHECK(a.attention.qk_rope_head_dim == z.attention.qk_rope_head_dim);
  CHECK(a.attention.o_groups == z.attention.o_groups);
  CHECK(a.attention.o_lora_rank == z.attention.o_lora_rank);
  CHECK(a.attention.sinks == z.attention.sinks);
  CHECK(a.attention.sliding_window == z.attention.sliding_window);
  CHECK(a.attention.compress_ratios == z.attention.compress_ratios);
  CHECK(a.attention.csa_ratio == z.attention.csa_ratio);
  CHECK(a.attention.sparse_topk == z.attention.sparse_topk);
  CHECK(a.attention.indexer_heads == z.attention.indexer_heads);
  CHECK(a.attention.indexer_head_dim == z.attention.indexer_head_dim);
  CHECK(a.moe.experts == z.moe.experts);
  CHECK(a.moe.top_k == z.moe.top_k);
  CHECK(a.moe.shared_expert_ffn == z.moe.shared_expert_ffn);
  CHECK(a.moe.hash_layers == 3);
  CHECK(a.moe.hash_layers == z.moe.hash_layers);
  CHECK(a.hyper.streams == z.hyper.streams);
  CHECK(a.hyper.sinkhorn_iters == z.hyper.sinkhorn_iters);
  CHECK(a.mtp_layers == z.mtp_layers);
  CHECK(total_params(a) == total_params(z));
  CHECK(active_params(a) == active_params(z));
  CHECK(model_flops_per_token(a, 4096) == Approx(model_flops_per_token(z, 4096)));
  // Published 284B total / 13B active (model card): 284.33B (llama.cpp's count of the converted
  // checkpoint too); 13.27B without the input embedding, the published figure's two digits
  // (2.1 %; test_v4.cpp; the 13.81B derived from the checkpoint: test_model.cpp).
  CHECK(static_cast<double>(total_params(a)) == Approx(284e9).epsilon(0.01));
  CHECK(static_cast<double>(active_params(a) - embedding_params(a)) == Approx(13e9).epsilon(0.025));
}

TEST_CASE("bad DeepSeek-V4 config.json files name the key") {
  const std::string good = read_text_file(kHfConfigDir + "deepseek-v4-flash.json");
  const auto with = [&](const std::string& from, const std::string& to) {
    return edited(good, from, to);
  };
  CHECK_NOTHROW(text(good));
  CHECK_THROWS_WITH(text(with("4, 0]", "4, 0, 0, 0]")),
                    Catch::Contains("c.json:/compress_ratios: expected one ratio per layer and "
                                    "MTP module (num_hidden_layers + num_nextn_predict_layers = "
                                    "44), got 46"));
  CHECK_THROWS_WITH(text(with("[0, 0, 4, 128,", "[0, 0, 8, 128,")),
                    Catch::Contains("c.json:/compress_ratios/2: expected 0 (sliding window only), "
                                    "4 (CSA) or 128 (HCA)"));
  CHECK_THROWS_WITH(text(with("\"num_key_value_heads\": 1", "\"num_key_value_heads\": 8")),
                    Catch::Contains("c.json:/num_key_value_heads: DeepSeek-V4 attention has one "
                                    "shared KV head"));
  CHECK_THROWS_WITH(text(with("\"o_groups\": 8", "\"o_groups\": 7")),
                    Catch::Contains("c.json:/o_groups: must divide num_attention_heads"));
  CHECK_THROWS_WITH(text(with("\"hc_mult\": 4,", "")),
                    Catch::Contains("c.json:/hc_mult: missing required key"));
  CHECK_THROWS_WITH(text(with("\"index_topk\": 512,", "")),
                    Catch::Contains("c.json:/index_topk: missing required key"));
  CHECK_THROWS_WITH(text(with("\"num_hidden_layers\": 43", "\"num_hidden_layers\": -1")),
                    Catch::Contains("c.json:/num_hidden_layers: expected an integer in"));
  CHECK_THROWS_WITH(text(with("\"hidden_size\": 4096,", "")),
                    Catch::Contains("c.json:/hidden_size: missing required key"));
  CHECK_THROWS_WITH(
      text(with("\"use_cache\": true", "\"use_cache\": true, \"dspark_block_size\": 5")),
      Catch::Contains("c.json:/dspark_block_size: key not understood"));
}

TEST_CASE("DeepSeek-V4 in transformers' layout (layer_types, mlp_layer_types) maps the same") {
  std::string t = read_text_file(kHfConfigDir + "deepseek-v4-flash.json");
  auto swap = [&](const std::string& from, const std::string& to) { t = edited(t, from, to); };
  // transformers' DeepseekV4Config: the checkpoint's ratios as layer types (the MTP entry is
  // not a layer), the hash layers as mlp_layer_types, qk_rope_head_dim derived.
  std::string types = "[\"sliding_attention\", \"sliding_attention\"";
  for (int i = 0; i < 20; ++i)
    types += ", \"compressed_sparse_attention\", \"heavily_compressed_attention\"";
  types += ", \"compressed_sparse_attention\"]";
  std::string mlp = "[\"hash_moe\", \"hash_moe\", \"hash_moe\"";
  for (int i = 3; i < 43; ++i)
    mlp += ", \"moe\"";
  mlp += "]";
  const size_t at = t.find("\"compress_ratios\": [");
  REQUIRE(at != std::string::npos);
  t.replace(at, t.find(']', at) + 1 - at,
            "\"layer_types\": " + types +
                ", \"compress_rates\": {\"compressed_sparse_attention\": 4, "
                "\"heavily_compressed_attention\": 128}, \"mlp_layer_types\": " +
                mlp);
  swap("\"num_hash_layers\": 3,", "");
  swap("\"qk_rope_head_dim\": 64,", "");
  const ModelSpec a = text(t).model;
  const ModelSpec b = fixture("deepseek-v4-flash").model;
  CHECK(a.attention.compress_ratios == b.attention.compress_ratios);
  CHECK(a.attention.csa_ratio == 4);
  CHECK(a.attention.qk_rope_head_dim == 64);
  CHECK(a.moe.hash_layers == 3);
  CHECK(total_params(a) == total_params(b));
  CHECK(model_flops_per_token(a, 4096) == Approx(model_flops_per_token(b, 4096)));
  auto with = [&](const std::string& from, const std::string& to) { return edited(t, from, to); };
  CHECK_THROWS_WITH(text(with("[\"sliding_attention\", \"sliding_attention\"",
                              "[\"sliding_attention\", \"full_attention\"")),
                    Catch::Contains("c.json:/layer_types/1: expected 'sliding_attention'"));
  CHECK_THROWS_WITH(text(with("[\"hash_moe\", \"hash_moe\", \"hash_moe\", \"moe\"",
                              "[\"hash_moe\", \"moe\", \"hash_moe\", \"moe\"")),
                    Catch::Contains("c.json:/mlp_layer_types/2: expected 'hash_moe' (a prefix"));
  CHECK_THROWS_WITH(
      text(with("\"heavily_compressed_attention\": 128}", "\"heavily_compressed_attention\": 4}")),
      Catch::Contains("c.json:/compress_rates: the CSA and HCA rates must differ"));
}

// Granite 4.0-H (granitemoehybrid): each layer a Mamba-2 or attention mixer, then the MoE with
// its shared SwiGLU MLP (or, with num_local_experts 0, the shared MLP alone), two blocks per
// layer. Counts by hand from the layout of modular_granitemoehybrid.py (BambaMixer,
// GraniteMoeSharedAttention / MoE / MLP) for H-Tiny: tied embedding 100352 x 1536 =
// 154,140,672 + final norm 1,536; per layer two norms 3,072; a Mamba mixer in_proj 1536 x
// (3072 + 3328 + 48) = 9,904,128, conv 3328 x 4 + 3328 bias = 16,640, A_log, D, dt_bias 144,
// gated norm 3,072, out_proj 4,718,592 (14,642,576); an attention mixer q and o 1536 x 1536,
// k and v 1536 x 512 (6,291,456); the MoE router 1536 x 64 = 98,304, 64 experts 3 x 1536 x 512
// (150,994,944), the shared MLP 3 x 1536 x 1024 = 4,718,592. 36 Mamba and 4 attention layers:
// 6,939,037,248, llama.cpp's "6.94 B" for IBM's GGUF of the checkpoint (SOURCES.md). Active:
// 6 experts, 1,465,470,528 (IBM's card names 1B, the name's "A1B": no count with more digits
// was found). H-1B (the dense twin, shared MLP 4096): 1,461,538,368, llama.cpp's "1.46 B".
TEST_CASE("Granite 4.0-H config.json: blocks, Mamba-2 and MoE fields and hand counts") {
  const ModelSpec t = fixture("granite-4.0-h-tiny").model;
  CHECK(t.layers == 80);
  CHECK(t.tied_embeddings);
  CHECK(t.mlp == MlpKind::kGated);
  CHECK(t.blocks.size() == 80);
  CHECK(t.blocks[10] == BlockKind::kAttention);  // layer 5: layer_types[5] == "attention"
  CHECK(t.blocks[11] == BlockKind::kMoe);
  CHECK(t.blocks[0] == BlockKind::kMamba);
  CHECK(std::count(t.blocks.begin(), t.blocks.end(), BlockKind::kMamba) == 36);
  CHECK(std::count(t.blocks.begin(), t.blocks.end(), BlockKind::kAttention) == 4);
  CHECK(std::count(t.blocks.begin(), t.blocks.end(), BlockKind::kMoe) == 40);
  CHECK(t.mamba.heads == 48);
  CHECK(t.mamba.head_dim == 64);
  CHECK(t.mamba.state == 128);
  CHECK(t.mamba.groups == 1);
  CHECK(t.mamba.chunk == 256);
  CHECK(t.attention.head_dim == 128);
  CHECK(t.moe.experts == 64);
  CHECK(t.moe.top_k == 6);
  CHECK(t.moe.expert_ffn == 512);
  CHECK(t.moe.shared_experts == 1);
  CHECK(t.moe.shared_expert_ffn == 1024);
  CHECK(total_params(t) == 6'939'037'248);
  CHECK(active_params(t) == 1'465'470'528);
  CHECK(static_cast<double>(total_params(t)) == Approx(6.94e9).margin(0.005e9));
  const ModelSpec d = fixture("granite-4.0-h-1b").model;
  CHECK(d.moe.experts == 0);
  CHECK(d.ffn == 4096);
  CHECK(std::count(d.blocks.begin(), d.blocks.end(), BlockKind::kMlp) == 40);
  CHECK(total_params(d) == 1'461'538'368);
  CHECK(static_cast<double>(total_params(d)) == Approx(1.46e9).margin(0.005e9));
}

TEST_CASE("bad Granite 4.0-H config.json files name the key") {
  const std::string good = read_text_file(kHfConfigDir + "granite-4.0-h-tiny.json");
  const auto with = [&](const std::string& from, const std::string& to) {
    return edited(good, from, to);
  };
  CHECK_NOTHROW(text(good));
  CHECK_THROWS_WITH(text(with("\"attention\",", "\"mlp\",")),
                    Catch::Contains("c.json:/layer_types/5: expected 'mamba' or 'attention'"));
  CHECK_THROWS_WITH(text(with("\"num_hidden_layers\": 40", "\"num_hidden_layers\": 39")),
                    Catch::Contains("c.json:/layer_types: expected one entry per layer (39)"));
  CHECK_THROWS_WITH(text(with("\"mamba_d_head\": 64", "\"mamba_d_head\": 32")),
                    Catch::Contains("c.json:/mamba_d_head: mamba_n_heads x mamba_d_head must "
                                    "equal mamba_expand x hidden_size (3072)"));
  CHECK_NOTHROW(text(with("\"mamba_d_head\": 64", "\"mamba_d_head\": \"auto\"")));
  CHECK_THROWS_WITH(
      text(with("\"vocab_size\": 100352", "\"vocab_size\": 100352, \"layers_block_type\": []")),
      Catch::Contains("c.json:/layers_block_type: disagrees with layer_types"));
  CHECK_THROWS_WITH(text(with("\"mamba_proj_bias\": false", "\"mamba_proj_bias\": true")),
                    Catch::Contains("c.json:/mamba_proj_bias"));
  CHECK_THROWS_WITH(text(with("\"hidden_act\": \"silu\"", "\"hidden_act\": \"gelu\"")),
                    Catch::Contains("c.json:/hidden_act: expected 'silu'"));
  CHECK_THROWS_WITH(text(with("\"num_local_experts\": 64,", "")),
                    Catch::Contains("c.json:/num_local_experts: missing required key"));
  CHECK_THROWS_WITH(text(with("\"vocab_size\": 100352",
                              "\"vocab_size\": 100352, "
                              "\"mamba_rank\": 4")),
                    Catch::Contains("c.json:/mamba_rank: key not understood"));
}

TEST_CASE("Qwen3.5 / 3.6 config.json: the text_config's language model, counted by hand") {
  // Qwen3.6-27B: a checkpoint inventory lists every tensor of its 15 safetensors files, 27,781,
  // 427,952 parameters (SOURCES.md): the 27 vision blocks, merger, patch and position embeddings
  // (model.visual.*: 460,730,096, summed from the listed shapes) and the MTP module (mtp.*:
  // fc 5120 x 10240, one gated-attention layer, a SwiGLU MLP of 17408 and 5 norms: 424,699,392)
  // are the rest.
  const HfImport d = fixture("qwen3.6-27b");
  const ModelSpec& m = d.model;
  CHECK(d.model_type == "qwen3_5");
  CHECK(m.layers == 128);
  CHECK(block_pattern_text(m.blocks).substr(0, 8) == "G-G-G-*-");
  CHECK(std::count(m.blocks.begin(), m.blocks.end(), BlockKind::kAttention) == 16);
  CHECK(std::count(m.blocks.begin(), m.blocks.end(), BlockKind::kGdn) == 48);
  CHECK(m.ffn == 17408);
  CHECK(m.gdn.v_heads == 48);
  CHECK(m.attention.output_gate);
  CHECK(m.mtp_layers == 1);
  const int64_t visual = 460730096;
  CHECK(total_params(m) == 26895998464);
  CHECK(mtp_params(m) == 424699392);
  CHECK(total_params(m) + mtp_params(m) + visual == 27781427952);
  // The vision encoder is not simulated, and says so with its size (the same 0.461 B).
  const auto v =
      std::find_if(m.unmodelled.begin(), m.unmodelled.end(),
                   [](const UnmodelledFeature& u) { return u.feature == "vision_encoder"; });
  REQUIRE(v != m.unmodelled.end());
  CHECK(v->impact == "small");
  CHECK_THAT(v->note, Catch::Contains("27 blocks of width 1152, 0.461 B parameters"));
  // Origins name the nested keys.
  const auto origin = [&d](const std::string& field) {
    for (const auto& [f, t] : d.origin)
      if (f == field) return t;
    return std::string();
  };
  CHECK(origin("/hidden") == "config.json:/text_config/hidden_size = 5120");
  CHECK(origin("/attention/output_gate") == "config.json:/text_config/attn_output_gate = true");

  // Qwen3.5-35B-A3B, hand counts from its text_config: per MoE layer 256 experts of 3 x 2048 x
  // 512, the shared expert and its gate, the router, 2 norms; 30 Gated DeltaNet mixers (in_proj
  // qkv 2048 x 8192, z 2048 x 4096, b and a 2048 x 32, conv 8192 x 4, A_log, dt_bias, norm 128,
  // out 4096 x 2048); 10 gated attentions (q 2048 x 8192, k and v 2048 x 512, o 4096 x 2048,
  // q / k norms); embedding and head 248320 x 2048; the final norm.
  const int64_t h = 2048, vocab = 248320;
  const int64_t gdn = h * 8192 + h * 4096 + 2 * h * 32 + 8192 * 4 + 32 + 32 + 128 + 4096 * h;
  const int64_t attn = h * 8192 + 2 * h * 512 + 4096 * h + 2 * 256;
  const int64_t shared = 3 * h * 512 + h * 256 + h + 2 * h;
  const int64_t base = 30 * gdn + 10 * attn + 2 * vocab * h + h;
  const ModelSpec q = fixture("qwen3.5-35b-a3b").model;
  CHECK(total_params(q) == base + 40 * (256 * 3 * h * 512 + shared));
  CHECK(active_params(q) == base + 40 * (8 * 3 * h * 512 + shared));
  CHECK(block_pattern_text(q.blocks).substr(0, 8) == "GEGEGE*E");
  CHECK(q.ffn == 0);
  CHECK(q.moe.shared_expert_gate);
  CHECK(q.mtp_layers == 1);
  // The text-only class (the same text_config at the top level) maps to the same model, without
  // the vision note.
  const ModelSpec t = fixture("qwen3.5-35b-a3b-text").model;
  CHECK(block_pattern_text(t.blocks) == block_pattern_text(q.blocks));
  CHECK(total_params(t) == total_params(q));
  CHECK(active_params(t) == active_params(q));
  CHECK(model_flops_per_token(t, 4096) == Approx(model_flops_per_token(q, 4096)));
  CHECK(std::none_of(t.unmodelled.begin(), t.unmodelled.end(),
                     [](const UnmodelledFeature& u) { return u.feature == "vision_encoder"; }));
}

TEST_CASE("bad Qwen3.5 config.json files name the key") {
  const std::string q = read_text_file(kHfConfigDir + "qwen3.5-35b-a3b.json");
  const std::string d = read_text_file(kHfConfigDir + "qwen3.6-27b.json");
  const auto with = edited;
  CHECK_NOTHROW(text(q));
  CHECK_NOTHROW(text(d));
  CHECK_THROWS_WITH(text(with(q, "\"mlp_only_layers\": []", "\"mlp_only_layers\": [3]")),
                    Catch::Contains("c.json:/text_config/mlp_only_layers: Qwen3_5MoeTextConfig "
                                    "has no dense layers"));
  CHECK_THROWS_WITH(
      text(with(q, "\"num_experts\": 256", "\"num_experts\": 256, \"moe_layers\": 2")),
      Catch::Contains("c.json:/text_config/moe_layers: key not understood by "
                      "fleetsim's Qwen3_5MoeTextConfig mapping"));
  CHECK_THROWS_WITH(
      text(with(q, "\"model_type\": \"qwen3_5_moe_text\"", "\"model_type\": \"qwen3_5_text\"")),
      Catch::Contains("c.json:/text_config/model_type: expected 'qwen3_5_moe_text'"));
  CHECK_THROWS_WITH(text(with(d, "\"mtp_use_dedicated_embeddings\": false",
                              "\"mtp_use_dedicated_embeddings\": true")),
                    Catch::Contains("c.json:/text_config/mtp_use_dedicated_embeddings"));
  CHECK_THROWS_WITH(text(with(d, "\"hidden_size\": 5120", "\"hidden_size\": -1")),
                    Catch::Contains("c.json:/text_config/hidden_size: expected an integer"));
  // The top-level tie_word_embeddings must agree with the text config's.
  const std::string tied = with(d, "\"tie_word_embeddings\": false,\n    \"transformers_version\"",
                                "\"tie_word_embeddings\": true,\n    \"transformers_version\"");
  CHECK_THROWS_WITH(text(tied), Catch::Contains("c.json:/tie_word_embeddings: disagrees with "
                                                "/text_config/tie_word_embeddings"));
  // language_model_only: a checkpoint without the vision tower, no vision note.
  const ModelSpec lm =
      text(with(d, "\"language_model_only\": false", "\"language_model_only\": true")).model;
  CHECK(std::none_of(lm.unmodelled.begin(), lm.unmodelled.end(),
                     [](const UnmodelledFeature& u) { return u.feature == "vision_encoder"; }));
}

// Bamba-9B (bamba): Granite 4.0-H's Mamba-2 mixer with a SwiGLU MLP on every layer and attention
// at the layers attn_layer_indices lists. By hand (modeling_bamba.py): untied 128256 x 4096
// embedding and head, 1,050,673,152, + final norm 4,096; per layer two norms 8,192 and the MLP
// 3 x 4096 x 14336 = 176,160,768; a Mamba mixer in_proj 4096 x (2 x 8192 + 2 x 128 + 128) =
// 68,681,728, conv (8192 + 256) x 4 + bias 8,448 = 42,240, A_log, D, dt_bias 384, gated norm
// 8,192, out_proj 8192 x 4096 = 33,554,432 (102,286,976); an attention mixer q and o 4096^2, k
// and v 4096 x 1024 (41,943,040). 29 Mamba and 3 attention layers: 9,780,235,392. IBM's blog
// (huggingface/blog bamba.md, "Model architecture"): 8.8B non-embedding parameters, "1B in
// embeddings"; the checkpoint is named Bamba-9.8b (BambaConfig's docstring).
TEST_CASE("Bamba config.json: attention layers by index, Mamba-2 and MLP blocks, hand counts") {
  const ModelSpec m = fixture("bamba-9b").model;
  CHECK(m.layers == 64);
  CHECK(std::count(m.blocks.begin(), m.blocks.end(), BlockKind::kAttention) == 3);
  CHECK(std::count(m.blocks.begin(), m.blocks.end(), BlockKind::kMamba) == 29);
  CHECK(std::count(m.blocks.begin(), m.blocks.end(), BlockKind::kMlp) == 32);
  CHECK(m.blocks[18] == BlockKind::kAttention);  // layer 9
  CHECK(m.blocks[19] == BlockKind::kMlp);
  CHECK(m.mamba.heads == 128);
  CHECK(m.mamba.head_dim == 64);
  CHECK(m.mamba.state == 128);
  CHECK(m.ffn == 14336);
  const int64_t h = 4096, mlp = 3 * h * 14336 + 2 * h;
  const int64_t mamba =
      h * (2 * 8192 + 2 * 128 + 128) + 8448 * 4 + 8448 + 3 * 128 + 8192 + 8192 * h;
  const int64_t attention = 2 * h * h + 2 * h * 1024;
  const int64_t embeddings = 2 * 128256 * h;
  CHECK(total_params(m) == 29 * (mamba + mlp) + 3 * (attention + mlp) + embeddings + h);
  CHECK(total_params(m) == 9'780'235'392);
  CHECK(static_cast<double>(total_params(m)) == Approx(9.8e9).epsilon(0.01));
  CHECK(static_cast<double>(total_params(m) - embedding_params(m) - output_params(m)) ==
        Approx(8.8e9).epsilon(0.01));
  // No attn_layer_indices: every layer Mamba-2 (BambaConfig's layers_block_type).
  const std::string good = read_text_file(kHfConfigDir + "bamba-9b.json");
  const ModelSpec pure =
      text(edited(good, "\"attn_layer_indices\": [\n    9,\n    18,\n    27\n  ],", "")).model;
  CHECK(std::count(pure.blocks.begin(), pure.blocks.end(), BlockKind::kMamba) == 32);
  CHECK_THROWS_WITH(
      text(edited(good, "    27\n", "    32\n")),
      Catch::Contains("c.json:/attn_layer_indices/2: expected an integer in [0, 31], got 32"));
  CHECK_THROWS_WITH(text(edited(good, "\"mlp_bias\": false", "\"mlp_bias\": true")),
                    Catch::Contains("c.json:/mlp_bias: biases are not modelled for bamba"));
  CHECK_THROWS_WITH(
      text(edited(good, "\"mamba_d_head\": 64", "\"mamba_d_head\": 32")),
      Catch::Contains("equal mamba_expand x hidden_size (8192), as BambaConfig requires"));
}
