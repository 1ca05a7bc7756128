// Hugging Face config.json import (sim/scenario/hf_config.cpp): the fixtures of
// tests/scenario/hf_configs/ (published config.json files; SOURCES.md gives each URL) against
// their published parameter counts and, for the zoo's models, against the zoo definition;
// strictness (unknown model_type / keys, missing or out-of-range fields, unmodelled layers);
// Gemma 2 / 3 against their reports' non-embedding counts.
// The hybrid families (Mamba-2, linear and sparse attention) are in test_hf_config_hybrid.cpp.
#include <algorithm>
#include <filesystem>

#include <unistd.h>

#include <catch2/catch.hpp>

#include "core/csv.h"
#include "core/error.h"
#include "scenario/hf_config.h"
#include "scenario/model_loader.h"
#include "support/fixtures.h"
#include "support/hf_config_fixtures.h"

using namespace fleetsim;
using namespace fleetsim::test;

TEST_CASE("imported configs match their published parameter counts within 1 %") {
  struct Case {
    const char* file;
    double total;  // published total parameters (SOURCES.md)
  };
  const Case cases[] = {{"llama2-7b", 6.74e9},
                        {"llama3-8b", 8.03e9},
                        {"llama3.1-8b", 8.03e9},
                        {"llama3-70b", 70.6e9},
                        {"llama3.1-405b", 405.9e9},
                        {"mistral-7b", 7.24e9},
                        {"mixtral-8x7b", 46.7e9},
                        {"mixtral-8x22b", 141e9},
                        {"qwen2.5-7b", 7.61e9},
                        {"qwen3-8b", 8.2e9},
                        {"qwen3-30b-a3b", 30.5e9},
                        {"qwen3-235b-a22b", 235e9},
                        {"deepseek-v2-lite", 15.7e9},
                        {"deepseek-v3", 671e9},
                        {"gpt-oss-20b", 20.91e9},
                        {"gpt-oss-120b", 116.83e9},
                        {"gpt2", 124.44e6},
                        {"nemotron-3-nano-30b-a3b", 31.6e9},
                        {"qwen3-next-80b-a3b", 80e9},
                        {"deepseek-v3.2-exp", 671e9},
                        {"nemotron-3-super-120b-a12b", 120.6e9},
                        {"nemotron-3-ultra-550b-a55b", 550e9},
                        {"deepseek-v4-flash", 284e9},
                        {"granite-4.0-h-tiny", 6.94e9},
                        {"granite-4.0-h-1b", 1.46e9},
                        {"phi-4", 14.66e9}};
  for (const Case& c : cases) {
    INFO(c.file);
    const ModelSpec m = fixture(c.file).model;
    CHECK(static_cast<double>(total_params(m)) == Approx(c.total).epsilon(0.01));
  }
  CHECK(std::size(cases) >= 10);
}

TEST_CASE("imported MoE configs match their published active parameters") {
  // Mixtral (paper: 12.9B / 39B) and Qwen3 (model cards: 3.3B / 22B) count the input embedding;
  // OpenAI (gpt-oss model card: 3.61B / 5.13B) and DeepSeek-V2-Lite (2.4B) do not.
  CHECK(active_params(fixture("mixtral-8x7b").model) == Approx(12.9e9).epsilon(0.01));
  CHECK(active_params(fixture("mixtral-8x22b").model) == Approx(39e9).epsilon(0.01));
  CHECK(active_params(fixture("qwen3-235b-a22b").model) == Approx(22e9).epsilon(0.01));
  CHECK(active_params(fixture("qwen3-30b-a3b").model) == Approx(3.3e9).epsilon(0.02));
  for (const auto& [name, active] : {std::pair<const char*, double>{"gpt-oss-20b", 3.61e9},
                                     {"gpt-oss-120b", 5.13e9},
                                     {"deepseek-v2-lite", 2.4e9}}) {
    INFO(name);
    const ModelSpec m = fixture(name).model;
    // DeepSeek-V2-Lite's 2.4B has two digits: 2.45B is within its rounding (3 %).
    CHECK(static_cast<double>(active_params(m) - embedding_params(m)) ==
          Approx(active).epsilon(0.03));
  }
}

TEST_CASE("imported configs of zoo models equal the zoo definitions") {
  for (const char* id : {"llama2-7b", "llama3-8b", "llama3-70b", "llama3.1-405b", "mixtral-8x7b",
                         "mixtral-8x22b", "qwen3-30b-a3b", "qwen3-235b-a22b", "deepseek-v3",
                         "gpt-oss-20b", "gpt-oss-120b", "llama4-scout", "llama4-maverick"}) {
    INFO(id);
    const ModelSpec a = fixture(id).model;
    const ModelSpec z = zoo(id);
    CHECK(a.name == z.name);
    CHECK(a.layers == z.layers);
    CHECK(a.hidden == z.hidden);
    CHECK(a.ffn == z.ffn);
    CHECK(a.vocab == z.vocab);
    CHECK(a.mlp == z.mlp);
    CHECK(a.norm == z.norm);
    CHECK(a.linear_bias == z.linear_bias);
    CHECK(a.tied_embeddings == z.tied_embeddings);
    CHECK(a.max_seq_len == z.max_seq_len);
    CHECK(a.attention.kind == z.attention.kind);
    CHECK(a.attention.heads == z.attention.heads);
    CHECK(a.attention.kv_heads == z.attention.kv_heads);
    CHECK(a.attention.head_dim == z.attention.head_dim);
    CHECK(a.attention.q_lora_rank == z.attention.q_lora_rank);
    CHECK(a.attention.kv_lora_rank == z.attention.kv_lora_rank);
    CHECK(a.attention.qkv_bias == z.attention.qkv_bias);
    CHECK(a.attention.qk_norm == z.attention.qk_norm);
    CHECK(a.attention.sliding_window == z.attention.sliding_window);
    CHECK(a.attention.window_pattern == z.attention.window_pattern);
    CHECK(a.attention.window_layers == z.attention.window_layers);
    CHECK(a.attention.window_kind == z.attention.window_kind);
    CHECK(a.moe.experts == z.moe.experts);
    CHECK(a.moe.top_k == z.moe.top_k);
    CHECK(a.moe.expert_ffn == z.moe.expert_ffn);
    CHECK(a.moe.shared_experts == z.moe.shared_experts);
    CHECK(a.moe.shared_expert_ffn == z.moe.shared_expert_ffn);
    CHECK(a.moe.first_k_dense == z.moe.first_k_dense);
    CHECK(a.moe.layer_freq == z.moe.layer_freq);
    CHECK(a.mtp_layers == z.mtp_layers);
    CHECK(total_params(a) == total_params(z));
    CHECK(active_params(a) == active_params(z));
  }
}

TEST_CASE("an imported model written as zoo JSON loads back to the same model") {
  for (const char* name : {"deepseek-v2-lite", "gpt2", "mistral-7b", "qwen2.5-7b"}) {
    INFO(name);
    const HfImport imp = fixture(name);
    const ModelSpec back = parse(zoo_model_json(imp), "x.json");
    CHECK(total_params(back) == total_params(imp.model));
    CHECK(active_params(back) == active_params(imp.model));
    CHECK(back.attention.sliding_window == imp.model.attention.sliding_window);
  }
  // A scenario may name the config.json itself (load_model detects "model_type").
  CHECK(load_model(kHfConfigDir + "qwen3-8b.json", kRoot).attention.qk_norm);
}

TEST_CASE("config fields map as the families' modeling code defines them") {
  const HfImport v2 = fixture("deepseek-v2-lite");
  CHECK(v2.model.attention.q_lora_rank == 0);  // q_lora_rank null: q projected directly
  CHECK(v2.model.moe.shared_experts == 2);
  CHECK(v2.model.moe.shared_expert_ffn == 1408);
  CHECK(v2.model.moe.first_k_dense == 1);
  const ModelSpec mistral = fixture("mistral-7b").model;
  CHECK(mistral.attention.sliding_window == 4096);  // every layer windowed
  CHECK(mistral.attention.window_pattern == 1);
  const ModelSpec qwen2 = fixture("qwen2.5-7b").model;
  CHECK(qwen2.attention.qkv_bias);             // Qwen2Attention has q/k/v biases
  CHECK(qwen2.attention.sliding_window == 0);  // use_sliding_window false
  const ModelSpec gpt2 = fixture("gpt2").model;
  CHECK(total_params(gpt2) == 124'439'808);  // GPT2LMHeadModel.num_parameters()
  // Origins name the config key; keys without effect on compute are listed.
  const HfImport mx = fixture("mixtral-8x7b");
  bool found = false;
  for (const auto& [field, origin] : mx.origin)
    found = found || (field == "/moe/top_k" && origin == "config.json:/num_experts_per_tok = 2");
  CHECK(found);
  CHECK(std::find(mx.ignored.begin(), mx.ignored.end(), "rope_theta") != mx.ignored.end());
  // Qwen MoE: mlp_only_layers as a prefix is first_k_dense; dense layers elsewhere are refused.
  const std::string qmoe = R"({"model_type": "qwen3_moe", "num_hidden_layers": 4,
    "hidden_size": 256, "intermediate_size": 512, "moe_intermediate_size": 64,
    "num_attention_heads": 4, "num_key_value_heads": 2, "num_experts": 8,
    "num_experts_per_tok": 2, "vocab_size": 1000, "max_position_embeddings": 4096,)";
  CHECK(text(qmoe + R"("mlp_only_layers": [0, 1]})").model.moe.first_k_dense == 2);
  CHECK_THROWS_WITH(text(qmoe + R"("mlp_only_layers": [2]})"),
                    Catch::Contains("c.json:/mlp_only_layers: only a prefix"));
}

TEST_CASE("bad config.json files are input errors naming the key") {
  CHECK_NOTHROW(text(llama()));
  CHECK_THROWS_WITH(text(R"({"model_type": "falcon"})"),
                    Catch::Contains("c.json:/model_type: unknown model_type 'falcon'") &&
                        Catch::Contains("qwen3_moe"));
  CHECK_THROWS_WITH(text(R"({"hidden_size": 4})"),
                    Catch::Contains("c.json:/model_type: missing required key"));
  CHECK_THROWS_WITH(text(R"({"model_type": "llama", "num_hidden_layers": 2})"),
                    Catch::Contains("c.json:/hidden_size: missing required key 'hidden_size'"));
  CHECK_THROWS_WITH(text(R"({"model_type": "llama", "num_hidden_layers": -1})"),
                    Catch::Contains("c.json:/num_hidden_layers: expected an integer in [1,"));
  CHECK_THROWS_WITH(text(llama(R"(, "num_key_value_heads2": 3)")),
                    Catch::Contains("c.json:/num_key_value_heads2: key not understood"));
  CHECK_THROWS_WITH(text(llama(R"(, "sliding_window": 512)")),
                    Catch::Contains("c.json:/sliding_window: a window on every layer"));
  CHECK_THROWS_WITH(
      text(R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 256,
    "intermediate_size": 512, "num_attention_heads": 4, "num_key_value_heads": 3,
    "vocab_size": 1000, "max_position_embeddings": 4096})"),
      Catch::Contains("c.json:/num_key_value_heads: must divide num_attention_heads (4)"));
  CHECK_THROWS_WITH(text(llama(R"(, "layer_types": ["full_attention", "linear_attention"])")),
                    Catch::Contains("c.json:/layer_types/1: linear-attention"));
  CHECK_THROWS_WITH(text(R"({"model_type": "mamba2"})"),
                    Catch::Contains("c.json:/model_type: 'mamba2'"));
  // Architectures fleetsim recognises and says it does not model, each with what.
  for (const auto& [type, what] : {std::pair<const char*, const char*>{"jamba", "Mamba-1"},
                                   {"falcon_h1", "parallel mixers are not modelled"},
                                   {"minimax", "lightning (linear) attention"},
                                   {"zamba2", "shared attention blocks"},
                                   {"mllama", "cross-attention layers"},
                                   {"gemma4", "per-layer input embeddings"},
                                   {"gemma3n", "AltUp"}}) {
    INFO(type);
    CHECK_THROWS_WITH(text(std::string(R"({"model_type": ")") + type + R"("})"),
                      Catch::Contains(std::string("c.json:/model_type: '") + type + "'") &&
                          Catch::Contains(what));
  }
}

TEST_CASE("GLM-4.5 config.json (glm4_moe): DeepSeek's MoE layer under GQA, published counts") {
  // zai-org model cards: GLM-4.5 355B total / 32B active, GLM-4.5-Air 106B / 12B; the active
  // figures leave out the embedding and the output layer (GLM-4.5: 32.08B without them, 33.63B
  // with), and the MTP layer is not in either total.
  const ModelSpec big = fixture("glm-4.5").model;
  const ModelSpec air = fixture("glm-4.5-air").model;
  CHECK(static_cast<double>(total_params(big)) == Approx(355e9).epsilon(0.01));
  CHECK(static_cast<double>(total_params(air)) == Approx(106e9).epsilon(0.01));
  const auto without_embeddings = [](const ModelSpec& m) {
    return static_cast<double>(active_params(m) - 2 * m.vocab * m.hidden);
  };
  CHECK(without_embeddings(big) == Approx(32e9).epsilon(0.01));
  // "12B" has two digits: 12.18B is within its rounding (2 %).
  CHECK(without_embeddings(air) == Approx(12e9).epsilon(0.02));
  // modeling_glm4_moe.py: first_k_dense_replace dense layers of intermediate_size, then MoE
  // layers of n_routed_experts plus n_shared_experts of moe_intermediate_size; q, k, v biases.
  CHECK(air.attention.kind == AttentionKind::kGqa);
  CHECK(air.attention.heads == 96);
  CHECK(air.attention.kv_heads == 8);
  CHECK(air.attention.head_dim == 128);
  CHECK(air.attention.qkv_bias);
  CHECK_FALSE(air.attention.qk_norm);
  CHECK(big.attention.qk_norm);
  CHECK(air.ffn == 10944);
  CHECK(air.moe.experts == 128);
  CHECK(air.moe.top_k == 8);
  CHECK(air.moe.expert_ffn == 1408);
  CHECK(air.moe.shared_experts == 1);
  CHECK(air.moe.shared_expert_ffn == 1408);
  CHECK(air.moe.first_k_dense == 1);
  CHECK(big.moe.first_k_dense == 3);
  CHECK(air.mtp_layers == 1);
  CHECK_FALSE(air.tied_embeddings);
  // The one attention difference from the Llama layer: biases on q, k and v only, so the
  // attention of a layer is hidden x (heads + 2 kv_heads) x head_dim + its biases + the output.
  const HfImport imp = fixture("glm-4.5-air");
  bool o_bias_unmodelled = false;
  for (const auto& u : imp.model.unmodelled)
    o_bias_unmodelled |= u.feature == "o_proj_bias";
  CHECK_FALSE(o_bias_unmodelled);
}

TEST_CASE("bad GLM-4.5 config.json files name the key") {
  const std::string air = read_text_file(kHfConfigDir + "glm-4.5-air.json");
  const auto with = [&](const std::string& from, const std::string& to) {
    return edited(air, from, to);
  };
  const auto fails_at = [](const std::string& json, const std::string& ptr) {
    try {
      text(json);
      FAIL("no error");
    } catch (const InputError& e) {
      CHECK(e.pointer() == ptr);
    }
  };
  fails_at(with("\"n_routed_experts\": 128", "\"n_routed_experts\": 0"), "/n_routed_experts");
  fails_at(with("\"first_k_dense_replace\": 1", "\"first_k_dense_replace\": 46"),
           "/first_k_dense_replace");
  fails_at(with("\"use_qk_norm\": false", "\"use_qk_norm\": 1"), "/use_qk_norm");
  fails_at(with("\"use_qk_norm\": false", "\"use_qk_norm\": false, \"moe_layer_freq\": 2"),
           "/moe_layer_freq");
}

TEST_CASE("Gemma 2 / Gemma 3 config.json: non-embedding parameters equal the reports' counts") {
  // Gemma 2 report (arXiv 2408.00118) Table 1, non-embedding parameters: each layer's four
  // RMSNorms (input, post-attention, pre- and post-feedforward) are in them, so the count is exact
  // only with norms_per_layer 4.
  for (const auto& [file, non_embedding] :
       {std::pair<const char*, int64_t>{"gemma-2-2b", 2024517888},
        {"gemma-2-9b", 8324201984},
        {"gemma-2-27b", 26047480320}}) {
    INFO(file);
    const ModelSpec m = fixture(file).model;
    CHECK(m.norms_per_layer == 4);
    CHECK(m.tied_embeddings);
    CHECK(total_params(m) - embedding_params(m) == non_embedding);
    // Every other layer sliding (even layers), window 4096.
    CHECK(m.attention.sliding_window == 4096);
    CHECK(m.attention.window_pattern == 2);
    CHECK(m.attention.window_layers == 1);
    CHECK(std::any_of(m.unmodelled.begin(), m.unmodelled.end(), [](const UnmodelledFeature& u) {
      return u.feature == "attn_logit_softcapping";
    }));
  }
  // Gemma 3 report (arXiv 2503.19786) Table 1, in millions: 1B 302 embedding / 698 non-embedding;
  // 12B 10,759 non-embedding and a 417 M vision encoder. The 12B checkpoint's text_config lists
  // only what differs from Gemma3TextConfig (vocab 262208, head_dim 256, tied by default).
  const ModelSpec g1 = fixture("gemma-3-1b").model;
  CHECK(static_cast<double>(embedding_params(g1)) == Approx(302e6).margin(0.5e6));
  CHECK(static_cast<double>(total_params(g1) - embedding_params(g1)) ==
        Approx(698e6).margin(0.5e6));
  CHECK(g1.attention.qk_norm);
  CHECK(g1.attention.sliding_window == 512);
  CHECK(g1.attention.window_pattern == 6);
  CHECK(g1.attention.window_layers == 5);
  const HfImport i12 = fixture("gemma-3-12b");
  const ModelSpec& g12 = i12.model;
  CHECK(i12.model_type == "gemma3");
  CHECK(g12.vocab == 262208);
  CHECK(g12.attention.head_dim == 256);
  CHECK(g12.tied_embeddings);
  CHECK(g12.attention.sliding_window == 1024);
  CHECK(static_cast<double>(total_params(g12) - embedding_params(g12)) ==
        Approx(10759e6).margin(0.5e6));
  const auto vision =
      std::find_if(g12.unmodelled.begin(), g12.unmodelled.end(),
                   [](const UnmodelledFeature& u) { return u.feature == "vision_encoder"; });
  REQUIRE(vision != g12.unmodelled.end());
  CHECK_THAT(vision->note, Catch::Contains("27 layers of width 1152, 0.417 B parameters"));
  CHECK(std::none_of(g12.unmodelled.begin(), g12.unmodelled.end(), [](const UnmodelledFeature& u) {
    return u.feature == "attn_logit_softcapping";
  }));
  const auto origin = [&i12](const std::string& field) {
    for (const auto& [f, t] : i12.origin)
      if (f == field) return t;
    return std::string();
  };
  CHECK(origin("/vocab") == "vocab_size absent: 262208, the default of Gemma3TextConfig");
  CHECK(origin("/hidden") == "config.json:/text_config/hidden_size = 3840");
}

TEST_CASE("Phi-4 config.json (phi3): Llama's matrices, fused, and a window on every layer") {
  // 40 layers of 5120: qkv_proj 5120 x (40 + 2 x 10) x 128, o_proj 5120^2, gate_up_proj
  // 5120 x 2 x 17920, down_proj 17920 x 5120, 2 norms; untied 100352 x 5120 embedding and head;
  // the final norm: 14,659,507,200 (the Hub's 14.66 B).
  const ModelSpec m = fixture("phi-4").model;
  const int64_t h = 5120;
  const int64_t layer = h * 7680 + h * h + h * 2 * 17920 + 17920 * h + 2 * h;
  CHECK(total_params(m) == 40 * layer + 2 * 100352 * h + h);
  CHECK(total_params(m) == 14659507200);
  CHECK(m.attention.sliding_window == 0);  // sliding_window null
  // Phi-3-mini's window (2047 of 4096 positions) applies to every layer, as Phi3Attention's.
  const ModelSpec w =
      text(edited(edited(read_text_file(kHfConfigDir + "phi-4.json"), "\"sliding_window\": null",
                         "\"sliding_window\": 2047"),
                  "\"max_position_embeddings\": 16384", "\"max_position_embeddings\": 4096"))
          .model;
  CHECK(w.attention.sliding_window == 2047);
  CHECK(w.attention.window_pattern == 1);
  CHECK(w.attention.window_layers == 1);
}

TEST_CASE("bad Gemma config.json files name the key") {
  const std::string g2 = read_text_file(kHfConfigDir + "gemma-2-9b.json");
  const std::string g3 = read_text_file(kHfConfigDir + "gemma-3-12b.json");
  CHECK_NOTHROW(text(g2));
  CHECK_NOTHROW(text(g3));
  CHECK_THROWS_WITH(text(edited(g2, "\"hidden_activation\": \"gelu_pytorch_tanh\"",
                                "\"hidden_activation\": \"relu\"")),
                    Catch::Contains("c.json:/hidden_activation: expected 'gelu_pytorch_tanh'"));
  CHECK_THROWS_WITH(
      text(edited(g2, "\"sliding_window_size\": 4096", "\"sliding_window_size\": 2048")),
      Catch::Contains("c.json:/sliding_window_size: disagrees with sliding_window"));
  CHECK_THROWS_WITH(text(edited(g3, "\"sliding_window\": 1024",
                                "\"sliding_window\": 1024, \"use_bidirectional_attention\": true")),
                    Catch::Contains("c.json:/text_config/use_bidirectional_attention"));
  CHECK_THROWS_WITH(text(edited(g3, "\"num_hidden_layers\": 48", "\"num_hidden_layers\": 0")),
                    Catch::Contains("c.json:/text_config/num_hidden_layers: expected an integer"));
  CHECK_THROWS_WITH(text(R"({"model_type": "gemma3", "vision_config": {}})"),
                    Catch::Contains("c.json:/text_config: missing required key"));
  CHECK_THROWS_WITH(
      text(edited(g3, "\"sliding_window\": 1024", "\"sliding_window\": 1024, \"moe\": 2")),
      Catch::Contains("c.json:/text_config/moe: key not understood by fleetsim's "
                      "Gemma3TextConfig mapping"));
}

TEST_CASE("Qwen3-VL config.json (qwen3_vl, qwen3_vl_moe): Qwen3's decoders in text_config") {
  // Qwen3-VL-2B's language model is Qwen3-1.7B's (hidden 2048, 28 layers, 16 heads and 8 KV
  // heads of 128, FFN 6144, tied 151936 vocabulary): per layer q / o 2048 x 2048, k / v 2048 x
  // 1024, q_norm / k_norm 2 x 128, MLP 3 x 2048 x 6144, two norms; the Qwen3-1.7B model card:
  // 1.7B parameters, 1.4B non-embedding.
  const HfImport vl = fixture("qwen3-vl-2b");
  const ModelSpec& m = vl.model;
  const int64_t h = 2048;
  const int64_t layer = 2 * h * h + 2 * h * 1024 + 2 * 128 + 3 * h * 6144 + 2 * h;
  CHECK(m.tied_embeddings);
  CHECK(m.attention.qk_norm);
  CHECK(total_params(m) == 28 * layer + 151936 * h + h);
  CHECK(static_cast<double>(total_params(m) - embedding_params(m)) == Approx(1.4e9).epsilon(0.01));
  CHECK(static_cast<double>(total_params(m)) == Approx(1.7e9).epsilon(0.02));
  // Its vision encoder (24 blocks of 1024, FFN 4096, 16-pixel patches over 2 frames, 2304
  // positions, 2 x 2 merge to 2048, three deepstack mergers) by hand: blocks 24 x (4 x 1024^2 +
  // 2 x 1024 x 4096 + biases and norms 13,312) = 302,309,376; patch embedding 1,573,888;
  // positions 2,359,296; merger 25,174,016; deepstack mergers 3 x 25,180,160: 406,957,056.
  const auto v =
      std::find_if(m.unmodelled.begin(), m.unmodelled.end(),
                   [](const UnmodelledFeature& u) { return u.feature == "vision_encoder"; });
  REQUIRE(v != m.unmodelled.end());
  CHECK_THAT(v->note, Catch::Contains("24 blocks of width 1024, 0.407 B parameters"));
  // Qwen3-VL-30B-A3B's text_config is Qwen3-30B-A3B's decoder: wrapped as qwen3_vl_moe, the
  // Qwen3-30B-A3B fixture imports to the same model.
  const std::string moe = read_text_file(kHfConfigDir + "qwen3-30b-a3b.json");
  const std::string wrapped =
      R"({"model_type": "qwen3_vl_moe", "text_config": )" +
      edited(moe, "\"model_type\": \"qwen3_moe\"", "\"model_type\": \"qwen3_vl_moe_text\"") + "}";
  const ModelSpec w = text(wrapped).model;
  CHECK(total_params(w) == total_params(fixture("qwen3-30b-a3b").model));
  CHECK(active_params(w) == active_params(fixture("qwen3-30b-a3b").model));
  CHECK_THROWS_WITH(
      text(R"({"model_type": "qwen3_vl_moe", "text_config": )" + moe + "}"),
      Catch::Contains("c.json:/text_config/model_type: expected 'qwen3_vl_moe_text'"));
  CHECK_THROWS_WITH(text(R"({"model_type": "qwen3_vl", "vision_config": {}})"),
                    Catch::Contains("c.json:/text_config: missing required key"));
}

TEST_CASE("OLMo 2 / 3 and OLMoE config.json: q / k norms over all heads, post-norm, OLMoE's MoE") {
  // OLMoE-1B-7B by hand (modeling_olmoe.py): per layer q, k, v, o 2048 x 2048, q_norm and
  // k_norm 2 x 2048, router 2048 x 64, 64 experts 3 x 2048 x 1024, two norms; untied 50304 x
  // 2048 embedding and head; the final norm. The OLMoE paper (arXiv:2409.02060): 6.9B total,
  // 1.3B active (8 experts).
  const HfImport oe = fixture("olmoe-1b-7b");
  const ModelSpec& m = oe.model;
  const int64_t h = 2048, expert = 3 * h * 1024, emb = 2 * 50304 * h + h;
  CHECK(m.attention.qk_norm);
  CHECK(m.attention.qk_norm_all_heads);
  CHECK(total_params(m) == 16 * (4 * h * h + 2 * h + h * 64 + 64 * expert + 2 * h) + emb);
  CHECK(active_params(m) == 16 * (4 * h * h + 2 * h + h * 64 + 8 * expert + 2 * h) + emb);
  CHECK(static_cast<double>(total_params(m)) == Approx(6.9e9).epsilon(0.01));
  CHECK(static_cast<double>(active_params(m)) == Approx(1.3e9).epsilon(0.02));
  // Written as zoo JSON, the full-width norms load back; without qk_norm they are an error.
  const std::string zoo_json = zoo_model_json(oe);
  CHECK(total_params(parse(zoo_json, "x.json")) == total_params(m));
  CHECK_THROWS_WITH(parse(edited(zoo_json, "\"qk_norm\": true", "\"qk_norm\": false"), "x.json"),
                    Catch::Contains("qk_norm_all_heads: only valid with qk_norm true"));
  // OLMo 2 1B's shape (its model card: 16 layers, hidden 2048, 16 heads, 4096 positions; FFN
  // 8192, vocabulary 100352): per layer 4 x 2048^2, q_norm and k_norm 2 x 2048 (not 2 x 128),
  // MLP 3 x 2048 x 8192, the two post-norms.
  const std::string olmo2 = R"({"model_type": "olmo2", "hidden_size": 2048,
    "intermediate_size": 8192, "num_hidden_layers": 16, "num_attention_heads": 16,
    "num_key_value_heads": 16, "max_position_embeddings": 4096, "vocab_size": 100352,
    "rope_theta": 500000, "tie_word_embeddings": false})";
  const HfImport o2 = text(olmo2);
  CHECK(total_params(o2.model) ==
        16 * (4 * h * h + 2 * h + 3 * h * 8192 + 2 * h) + 2 * 100352 * h + h);
  CHECK(o2.model.attention.sliding_window == 0);
  const auto origin = [&o2](const std::string& field) {
    for (const auto& [f, t] : o2.origin)
      if (f == field) return t;
    return std::string();
  };
  CHECK_THAT(origin("/norm"), Catch::Contains("post-norm"));
  // OLMo 3: Olmo3Config's windows (4096 tokens, every 4th layer full) when layer_types is absent;
  // the same from the per-layer list.
  const std::string olmo3 = edited(olmo2, "\"olmo2\"", "\"olmo3\"");
  const ModelSpec o3 = text(olmo3).model;
  CHECK(o3.attention.sliding_window == 4096);
  CHECK(o3.attention.window_pattern == 4);
  CHECK(o3.attention.window_layers == 3);
  std::string types = "[";
  for (int i = 0; i < 16; ++i)
    types +=
        std::string(i ? ", " : "") + ((i + 1) % 4 ? "\"sliding_attention\"" : "\"full_attention\"");
  const ModelSpec o3l =
      text(edited(olmo3, "\"rope_theta\"",
                  "\"sliding_window\": 4096, \"layer_types\": " + types + "], \"rope_theta\""))
          .model;
  CHECK(o3l.attention.window_pattern == 4);
  CHECK(o3l.attention.window_layers == 3);
  CHECK(total_params(o3l) == total_params(o2.model));
}

TEST_CASE("Mistral 3 config.json (mistral3): Mistral Small 3.2's decoder and its Pixtral note") {
  // Mistral Small 3.2 24B's language model by hand: per layer q 5120 x 4096, k / v 5120 x 1024,
  // o 4096 x 5120, MLP 3 x 5120 x 32768, two norms; untied 131072 x 5120 embedding and head;
  // the final norm: 23,572,403,200. Its Pixtral encoder (24 layers of 1024: 4 x 1024^2 + 3 x
  // 1024 x 4096 + two norms each, a 3 x 14 x 14 x 1024 patch convolution, ln_pre) 403,305,472 and
  // projector (norm 1024, merger 4096 x 1024, linear_1 1024 x 5120, linear_2 5120^2) 35,652,608:
  // 24.01 B in all, Mistral's "24B".
  const HfImport imp = fixture("mistral-small-3.2-24b");
  const ModelSpec& m = imp.model;
  const int64_t h = 5120;
  const int64_t layer = h * 4096 + 2 * h * 1024 + 4096 * h + 3 * h * 32768 + 2 * h;
  CHECK(total_params(m) == 40 * layer + 2 * 131072 * h + h);
  CHECK(m.attention.sliding_window == 0);
  const auto v =
      std::find_if(m.unmodelled.begin(), m.unmodelled.end(),
                   [](const UnmodelledFeature& u) { return u.feature == "vision_encoder"; });
  REQUIRE(v != m.unmodelled.end());
  CHECK_THAT(v->note, Catch::Contains("24 layers of width 1024, 0.403 B parameters, and a 35.7 M "
                                      "projector"));
  CHECK(static_cast<double>(total_params(m) + 403305472 + 35652608) == Approx(24e9).epsilon(0.01));
  const std::string good = read_text_file(kHfConfigDir + "mistral-small-3.2-24b.json");
  // Ministral 3's text config (Ministral3Config): Mistral's matrices, another RoPE.
  const ModelSpec m3 =
      text(edited(good, "\"model_type\": \"mistral\"", "\"model_type\": \"ministral3\"")).model;
  CHECK(total_params(m3) == total_params(m));
  CHECK_THROWS_WITH(text(edited(good, "\"model_type\": \"mistral\"", "\"model_type\": \"qwen3\"")),
                    Catch::Contains("c.json:/text_config/model_type: expected 'mistral' or "
                                    "'ministral3'"));
  // Ministral (MinistralConfig): Mistral's layer with sliding / full attention per layer.
  const ModelSpec mi =
      text(edited(llama(R"(, "sliding_window": 4096, "layer_types": ["sliding_attention",
                                                                   "full_attention"])"),
                  "\"llama\"", "\"ministral\""))
          .model;
  CHECK(mi.attention.sliding_window == 4096);
  CHECK(mi.attention.window_pattern == 2);
  CHECK(mi.attention.window_layers == 1);
  CHECK_THROWS_WITH(text(edited(good, "\"projector_hidden_act\": \"gelu\"",
                                "\"projector_hidden_act\": \"relu6\"")),
                    Catch::Contains("c.json:/projector_hidden_act"));
}

TEST_CASE("MiniMax-M2 config.json (minimax_m2): full-width q / k norms, 256 experts, no MTP") {
  // MiniMax-M2.7 by hand (modeling_minimax_m2.py): per layer q 3072 x 6144, k / v 3072 x 1024,
  // o 6144 x 3072, q_norm 6144 and k_norm 1024 (qk_norm_type per_layer), router 3072 x 256, 256
  // experts 3 x 3072 x 1536, two norms; untied 200064 x 3072 embedding and head; the final norm.
  // The router's 256 correction-bias values per layer (15,872 in all) are not counted, as for
  // DeepSeek (not trained by gradient). Published (third-party architecture notes, SOURCES.md):
  // 229.9B total, 9.8B active.
  const HfImport imp = fixture("minimax-m2.7");
  const ModelSpec& m = imp.model;
  const int64_t h = 3072, attention = h * 6144 + 2 * h * 1024 + 6144 * h + 6144 + 1024;
  const int64_t expert = 3 * h * 1536, emb = 2 * int64_t{200064} * h;
  CHECK(m.attention.qk_norm_all_heads);
  CHECK(m.mtp_layers == 0);
  CHECK(total_params(m) == 62 * (attention + h * 256 + 256 * expert + 2 * h) + emb + h);
  CHECK(total_params(m) == 228689748992);
  CHECK(active_params(m) == 62 * (attention + h * 256 + 8 * expert + 2 * h) + emb + h);
  CHECK(static_cast<double>(total_params(m)) == Approx(229.9e9).epsilon(0.01));
  CHECK(static_cast<double>(active_params(m) - emb - h) == Approx(9.8e9).epsilon(0.01));
  const std::string good = read_text_file(kHfConfigDir + "minimax-m2.7.json");
  // qk_norm_type per_head: Qwen3's per-head norms, 2 x 128 weights per layer.
  const ModelSpec ph = text(edited(good, "\"per_layer\"", "\"per_head\"")).model;
  CHECK_FALSE(ph.attention.qk_norm_all_heads);
  CHECK(total_params(m) - total_params(ph) == 62 * (6144 + 1024 - 2 * 128));
  CHECK_THROWS_WITH(
      text(edited(good,
                  "1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, "
                  "1, 1, 1, 1, 1,\n",
                  "0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, "
                  "1, 1, 1, 1, 1,\n")),
      Catch::Contains("c.json:/attn_type_list/0: 0 is a lightning (linear) attention layer"));
  CHECK_THROWS_WITH(
      text(edited(good, "\"shared_intermediate_size\": 0", "\"shared_intermediate_size\": 512")),
      Catch::Contains("c.json:/shared_intermediate_size: a shared expert is not part"));
}

TEST_CASE("Qwen2-VL / Qwen2.5-VL config.json: Qwen2's decoder, nested or at the top level") {
  // Qwen2.5-VL-7B's language model is Qwen2.5-7B's decoder: the same count as that fixture.
  // Its vision encoder by hand (32 blocks of 1280: qkv / proj 4 x 1280^2 with biases 4 x 1280,
  // SwiGLU 3 x 1280 x 3420 with biases 2 x 3420 + 1280, two RMSNorms 2 x 1280 = 19,702,200 each;
  // Conv3d patch embedding 3 x 2 x 14 x 14 x 1280 = 1,505,280; merger: RMSNorm 1280, 5120 x
  // 5120 + 5120, 5120 x 3584 + 3584 = 44,574,464): 676,550,144, the 8.29 B of the checkpoint with
  // the language model's 7.62 B.
  const std::string file = read_text_file(kHfConfigDir + "qwen2.5-vl-7b.json");
  const HfImport vl = fixture("qwen2.5-vl-7b");
  CHECK(total_params(vl.model) == total_params(fixture("qwen2.5-7b").model));
  CHECK(vl.model.attention.qkv_bias);
  const auto vision = [](const ModelSpec& m) {
    const auto v =
        std::find_if(m.unmodelled.begin(), m.unmodelled.end(),
                     [](const UnmodelledFeature& u) { return u.feature == "vision_encoder"; });
    return v == m.unmodelled.end() ? std::string() : v->note;
  };
  CHECK_THAT(vision(vl.model), Catch::Contains("32 blocks of width 1280, 0.677 B parameters"));
  CHECK(static_cast<double>(total_params(vl.model) + 676550144) == Approx(8.29e9).epsilon(0.001));
  // The checkpoint's own file (transformers 4.49) has no text_config: the top-level keys.
  const size_t from = file.find("  \"text_config\": {"), to = file.find("\n  },\n", from);
  REQUIRE(to != std::string::npos);
  const std::string flat = file.substr(0, from) + file.substr(to + 5);
  CHECK(total_params(text(flat).model) == total_params(vl.model));
  // A top-level size that disagrees with text_config's.
  CHECK_THROWS_WITH(
      text(edited(file, "\"hidden_size\": 3584", "\"hidden_size\": 4096")),
      Catch::Contains("c.json:/hidden_size: disagrees with /text_config/hidden_size"));
  // Qwen2-VL's encoder (embed_dim 1280, plain MLP of mlp_ratio 4, LayerNorms with biases) by
  // hand: 32 x 19,677,440 + 1,505,280 + merger 44,575,744 = 675,759,104.
  const std::string q2 = edited(edited(flat, "\"qwen2_5_vl\",\n  \"num_attention_heads\"",
                                       "\"qwen2_vl\",\n  \"num_attention_heads\""),
                                "\"hidden_size\": 1280", "\"embed_dim\": 1280, \"mlp_ratio\": 4");
  CHECK_THAT(vision(text(q2).model), Catch::Contains("Qwen2-VL vision encoder (vision_config: 32 "
                                                     "blocks of width 1280, 0.676 B parameters)"));
}

TEST_CASE("GLM-5 config.json (glm_moe_dsa): DeepSeek-V3.2's layer at GLM-5's sizes") {
  // The GLM-5 report (arXiv:2602.15763, its architecture table): 744B total, 40B activated; 3
  // dense and 75 MoE layers, one MTP layer; DSA with a 32-head, 128-wide indexer.
  const HfImport imp = fixture("glm-5");
  const ModelSpec& m = imp.model;
  CHECK(m.attention.kind == AttentionKind::kMla);
  CHECK(m.attention.sparse_topk == 2048);
  CHECK(m.attention.indexer_heads == 32);
  CHECK(m.moe.first_k_dense == 3);
  CHECK(m.mtp_layers == 1);
  CHECK(static_cast<double>(total_params(m)) == Approx(744e9).epsilon(0.01));
  // Activated without the embedding and output matrices (154880 x 6144 each), as GLM counts.
  const double emb = 2.0 * 154880 * 6144;
  CHECK(static_cast<double>(active_params(m)) - emb == Approx(40e9).epsilon(0.01));
  const std::string good = read_text_file(kHfConfigDir + "glm-5.json");
  std::string shared = "[\"full\"";
  for (int i = 1; i < 78; ++i)
    shared += i == 5 ? ", \"shared\"" : ", \"full\"";
  CHECK_THROWS_WITH(text(edited(good, "\"intermediate_size\"",
                                "\"indexer_types\": " + shared + "], \"intermediate_size\"")),
                    Catch::Contains("c.json:/indexer_types/5: expected 'full'"));
  CHECK_THROWS_WITH(text(edited(good, "\"index_topk\": 2048,", "")),
                    Catch::Contains("c.json:/index_topk: missing required key"));
  const std::string no_dsa =
      edited(edited(edited(good, "\"index_topk\": 2048,", ""), "\"index_n_heads\": 32,", ""),
             "\"index_head_dim\": 128,", "");
  CHECK_THROWS_WITH(text(no_dsa),
                    Catch::Contains("c.json:/index_topk: missing: GlmMoeDsaConfig needs"));
}

TEST_CASE("Kimi K2.5 config.json (kimi_k25): Kimi K2's decoder in text_config, MoonViT noted") {
  // The language model is Kimi K2's: field for field and count for count the zoo's kimi-k2
  // (Moonshot's Kimi K2 README table, 1T total / 32B active).
  const HfImport imp = fixture("kimi-k2.5");
  const ModelSpec& m = imp.model;
  const ModelSpec z = zoo("kimi-k2");
  CHECK(m.layers == z.layers);
  CHECK(m.attention.kind == AttentionKind::kMla);
  CHECK(m.moe.experts == z.moe.experts);
  CHECK(m.moe.first_k_dense == z.moe.first_k_dense);
  CHECK(total_params(m) == total_params(z));
  CHECK(active_params(m) == active_params(z));
  // MoonViT by hand (SigLIP's block at 1152 x 27, MLP 4304: 4 x 1152^2 + 2 x 1152 x 4304 +
  // biases and LayerNorms 14,672 = 15,239,504 per layer; patch convolution 3 x 14^2 x 1152 + 1152;
  // final LayerNorm 2 x 1152): 412,147,440, Moonshot's "MoonViT, 400M".
  const auto v =
      std::find_if(m.unmodelled.begin(), m.unmodelled.end(),
                   [](const UnmodelledFeature& u) { return u.feature == "vision_encoder"; });
  REQUIRE(v != m.unmodelled.end());
  CHECK_THAT(v->note, Catch::Contains("27 layers of width 1152, 0.412 B parameters without its "
                                      "position embedding"));
  const std::string good = read_text_file(kHfConfigDir + "kimi-k2.5.json");
  CHECK_NOTHROW(
      text(edited(good, "\"model_type\": \"deepseek_v3\"", "\"model_type\": \"kimi_k2\"")));
  CHECK_THROWS_WITH(
      text(edited(good, "\"model_type\": \"deepseek_v3\"", "\"model_type\": \"qwen3\"")),
      Catch::Contains("c.json:/text_config/model_type: expected 'deepseek_v3' or "
                      "'kimi_k2'"));
  CHECK_THROWS_WITH(text(edited(good, "\"text_hidden_size\": 7168", "\"text_hidden_size\": 4096")),
                    Catch::Contains("c.json:/vision_config/text_hidden_size: disagrees"));
}

TEST_CASE("a checkpoint folder stands for its config.json") {
  // As transformers' from_pretrained: the folder holding config.json; its name becomes the id.
  const auto dir = std::filesystem::temp_directory_path() /
                   ("fleetsim-hf-folder-" + std::to_string(::getpid())) / "Qwen3-8B";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(kHfConfigDir + "qwen3-8b.json", dir / "config.json",
                             std::filesystem::copy_options::overwrite_existing);
  const HfImport imp = import_hf_config_file(dir.string(), "");
  CHECK(imp.model.name == "Qwen3-8B");
  CHECK(total_params(imp.model) == total_params(fixture("qwen3-8b").model));
  CHECK(total_params(load_model(dir.string(), kRoot)) == total_params(imp.model));
  const auto empty = dir.parent_path() / "empty";
  std::filesystem::create_directories(empty);
  CHECK_THROWS_WITH(import_hf_config_file(empty.string(), ""),
                    Catch::Contains("a folder without a config.json"));
  CHECK_THROWS_WITH(load_model(empty.string(), kRoot),
                    Catch::Contains("a folder without a config.json"));
  std::filesystem::remove_all(dir.parent_path());
}

TEST_CASE("SmolLM3 and Seed-OSS config.json: Llama's layer, their NoPE layers and biases") {
  // SmolLM3-3B by hand (its card's sizes: 36 layers of 2048, 16 heads and 4 KV heads of 128, FFN
  // 11008, tied 128256 vocabulary): 3,075,098,624, named "3B" (2.5 % over the rounded name).
  const ModelSpec s = fixture("smollm3-3b").model;
  const int64_t h = 2048;
  CHECK(total_params(s) == 36 * (2 * h * h + 2 * h * 512 + 3 * h * 11008 + 2 * h) + 128256 * h + h);
  CHECK(static_cast<double>(total_params(s)) == Approx(3e9).epsilon(0.03));
  CHECK(s.attention.sliding_window == 0);
  CHECK(std::any_of(s.unmodelled.begin(), s.unmodelled.end(),
                    [](const UnmodelledFeature& u) { return u.feature == "nope_layers"; }));
  // Seed-OSS-36B by hand (its card: 64 layers of 5120, 80 / 8 / 8 heads of 128, FFN 27648,
  // vocabulary 155136; q / k / v biases, none on o_proj): 36,151,104,512, the card's "36B".
  const ModelSpec o = fixture("seed-oss-36b").model;
  const int64_t w = 5120, q = 80 * 128, kv = 8 * 128;
  CHECK(o.attention.qkv_bias);
  CHECK(std::none_of(o.unmodelled.begin(), o.unmodelled.end(),
                     [](const UnmodelledFeature& u) { return u.feature == "o_proj_bias"; }));
  CHECK(total_params(o) ==
        64 * (w * q + q + 2 * (w * kv + kv) + q * w + 3 * w * 27648 + 2 * w) + 2 * 155136 * w + w);
  CHECK(static_cast<double>(total_params(o)) == Approx(36e9).epsilon(0.01));
  const std::string good = read_text_file(kHfConfigDir + "seed-oss-36b.json");
  const ModelSpec ob =
      text(edited(good, "\"attention_out_bias\": false", "\"attention_out_bias\": true")).model;
  CHECK(std::any_of(ob.unmodelled.begin(), ob.unmodelled.end(),
                    [](const UnmodelledFeature& u) { return u.feature == "o_proj_bias"; }));
  const std::string smol = read_text_file(kHfConfigDir + "smollm3-3b.json");
  CHECK_THROWS_WITH(
      text(edited(smol, "\"use_sliding_window\": false", "\"use_sliding_window\": true")),
      Catch::Contains("c.json:/use_sliding_window"));
}

TEST_CASE("GLM-4.7-Flash config.json (glm4_moe_lite): DeepSeek-V3's layer, dense layers by list") {
  // Glm4MoeLiteConfig: MLA (q / kv ranks 768 / 512, 20 heads, nope 192, rope 64, v 256) and
  // DeepSeek's MoE (64 experts of 1536, top 4, one shared); no first_k_dense_replace, its
  // mlp_layer_types (by default one dense layer of 10240, then MoE) decides. NVIDIA's
  // Megatron-Bridge page: "about 30B total parameters and 3B active" (the name's 30B-A3B).
  const HfImport imp = fixture("glm-4.7-flash");
  const ModelSpec& m = imp.model;
  CHECK(m.attention.kind == AttentionKind::kMla);
  CHECK(m.moe.first_k_dense == 1);
  CHECK(static_cast<double>(total_params(m)) == Approx(30e9).epsilon(0.01));
  const double emb = 2.0 * 154880 * 2048;
  CHECK(static_cast<double>(active_params(m)) - emb == Approx(3e9).epsilon(0.1));  // "A3B"
  const std::string good = read_text_file(kHfConfigDir + "glm-4.7-flash.json");
  std::string types = "[\"dense\", \"dense\"";
  for (int i = 2; i < 47; ++i)
    types += ", \"sparse\"";
  CHECK(text(edited(good, "\"n_group\"", "\"mlp_layer_types\": " + types + "], \"n_group\""))
            .model.moe.first_k_dense == 2);
  CHECK_THROWS_WITH(text(edited(good, "\"n_group\"",
                                "\"mlp_layer_types\": [\"sparse\", \"dense\"], \"n_group\"")),
                    Catch::Contains("c.json:/mlp_layer_types: expected 0 'dense' then 'sparse'"));
}

TEST_CASE("ERNIE 4.5 config.json (ernie4_5_moe): MoE from moe_layer_start_index, a shared MLP") {
  // ERNIE-4.5-21B-A3B (Ernie4_5_MoeConfig's defaults) by hand: per layer q / o 2560 x 2560, k / v
  // 2560 x 512, two norms; layer 0 a SwiGLU MLP of 12288; layers 1-27 a router 2560 x 64, 64
  // experts 3 x 2560 x 1536 and one shared MLP of 2 x 1536; tied 103424 x 2560 embedding:
  // 21,825,436,160 (Baidu names it 21B total, 3B activated).
  const ModelSpec m = fixture("ernie-4.5-21b-a3b").model;
  const int64_t h = 2560, attention = 2 * h * h + 2 * h * 512 + 2 * h;
  CHECK(m.moe.first_k_dense == 1);
  CHECK(m.moe.shared_expert_ffn == 3072);
  CHECK(total_params(m) == attention + 3 * h * 12288 +
                               27 * (attention + h * 64 + 64 * 3 * h * 1536 + 3 * h * 3072) +
                               103424 * h + h);
  CHECK(total_params(m) == 21825436160);
  CHECK(static_cast<double>(active_params(m) - embedding_params(m)) == Approx(3e9).epsilon(0.04));
  // moe_layer_interval 2 from index 1: layers 1, 3, 5, ... (fleetsim's first_k_dense 0, freq 2).
  const std::string good = read_text_file(kHfConfigDir + "ernie-4.5-21b-a3b.json");
  const ModelSpec e2 =
      text(edited(good, "\"moe_layer_interval\": 1", "\"moe_layer_interval\": 2")).model;
  CHECK(e2.moe.layer_freq == 2);
  CHECK_FALSE(is_moe_layer(e2, 0));
  CHECK(is_moe_layer(e2, 1));
  CHECK_FALSE(is_moe_layer(e2, 2));
  CHECK_THROWS_WITH(
      text(edited(good, "\"moe_layer_end_index\": 27", "\"moe_layer_end_index\": 20")),
      Catch::Contains("c.json:/moe_layer_end_index: MoE layers that stop before the last"));
  CHECK_THROWS_WITH(text(edited(good, "\"use_bias\": false", "\"use_bias\": true")),
                    Catch::Contains("c.json:/use_bias"));
}
