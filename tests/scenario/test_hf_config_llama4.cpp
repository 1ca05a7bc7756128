// Llama 4 config.json import (sim/scenario/hf_config_llama4.cpp): Scout and Maverick against a
// hand count of their matrices, Meta's published totals (which include the vision encoder); the
// class defaults of a sparse text_config; the text-only llama4_text class; the chunked-attention
// and MoE layer patterns; bad files naming the key.
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

namespace {

const UnmodelledFeature* find_unmodelled(const ModelSpec& m, const std::string& feature) {
  const auto it = std::find_if(m.unmodelled.begin(), m.unmodelled.end(),
                               [&](const UnmodelledFeature& u) { return u.feature == feature; });
  return it == m.unmodelled.end() ? nullptr : &*it;
}

// Llama 4's language model by hand (modeling_llama4.py): per layer q / o 5120 x 40·128, k / v
// 5120 x 8·128, two RMSNorms; an MoE layer a router 5120 x E, E experts and one shared expert of
// gate / up / down 5120 x 8192; a dense layer a Llama4TextMLP of 16384; untied 202048 x 5120
// embedding and head; the final norm.
constexpr int64_t kH = 5120, kVocab = 202048;
constexpr int64_t kAttention = 2 * kH * 40 * 128 + 2 * kH * 8 * 128;
constexpr int64_t kExpert = 3 * kH * 8192;
int64_t moe_layer(int64_t experts, int64_t routed) {
  return kAttention + kH * experts + (routed + 1) * kExpert + 2 * kH;
}
constexpr int64_t kDenseLayer = kAttention + 3 * kH * 16384 + 2 * kH;
constexpr int64_t kEmbeddings = 2 * kVocab * kH + kH;

// The vision encoder by hand (Llama4VisionModel, vision_config 34 x 1408, MLP 5632, 336 px in
// 14 px patches): class token 1408, positions 577 x 1408, patch linear 588 x 1408, pre / post
// LayerNorms 4 x 1408; per layer q, k, v, o with biases 4 (1408^2 + 1408), fc1 / fc2 with biases
// 2 x 1408 x 5632 + 5632 + 1408, two LayerNorms 4 x 1408; the pixel-shuffle adapter 5632 x 4096
// + 4096^2. The projector (Llama4MultiModalProjector) 4096 x 5120.
constexpr int64_t kV = 1408;
constexpr int64_t kVisionLayer = 4 * (kV * kV + kV) + 2 * kV * 5632 + 5632 + kV + 4 * kV;
constexpr int64_t kVision =
    kV + 577 * kV + 588 * kV + 4 * kV + 34 * kVisionLayer + 5632 * 4096 + 4096 * 4096;
constexpr int64_t kProjector = 4096 * kH;

}  // namespace

TEST_CASE("Llama 4 config.json (llama4): hand counts and Meta's published totals") {
  const HfImport scout = fixture("llama4-scout");
  const HfImport maverick = fixture("llama4-maverick");
  CHECK(scout.model_type == "llama4");
  // Scout: 48 MoE layers of 16 experts, top-1.
  CHECK(total_params(scout.model) == 48 * moe_layer(16, 16) + kEmbeddings);
  CHECK(total_params(scout.model) == 107769861120);
  CHECK(active_params(scout.model) == 48 * moe_layer(16, 1) + kEmbeddings);
  // Maverick: 24 dense and 24 MoE layers of 128 experts (interleave_moe_layer_step 2), top-1.
  CHECK(total_params(maverick.model) == 24 * (kDenseLayer + moe_layer(128, 128)) + kEmbeddings);
  CHECK(active_params(maverick.model) == 24 * (kDenseLayer + moe_layer(128, 1)) + kEmbeddings);
  CHECK_FALSE(is_moe_layer(maverick.model, 0));
  CHECK(is_moe_layer(maverick.model, 1));
  CHECK(is_moe_layer(maverick.model, 47));
  // Meta: "17B active, 109B total" (Scout) and "17B active, 400B total" (Maverick), the whole
  // multimodal model: the language model plus the vision encoder and projector, which the note
  // counts (0.851 B + 21.0 M). The 17B has two digits (the zoo's tolerance, test_model.cpp).
  CHECK(kVision == 850960896);
  for (const auto* imp : {&scout, &maverick}) {
    const UnmodelledFeature* v = find_unmodelled(imp->model, "vision_encoder");
    REQUIRE(v != nullptr);
    CHECK_THAT(v->note, Catch::Contains("34 layers of width 1408, 0.851 B parameters"));
    CHECK_THAT(v->note, Catch::Contains("a 21.0 M projector"));
    CHECK_THAT(v->note, Catch::Contains("4 patches per token"));
    CHECK(static_cast<double>(active_params(imp->model)) == Approx(17e9).epsilon(0.02));
  }
  CHECK(static_cast<double>(total_params(scout.model) + kVision + kProjector) ==
        Approx(109e9).epsilon(0.01));
  CHECK(static_cast<double>(total_params(maverick.model) + kVision + kProjector) ==
        Approx(400e9).epsilon(0.01));
  // test_hf_config.cpp checks every field against the zoo's llama4-scout / llama4-maverick.
  // Scout's RoPE layers L2-normalise q and k (use_qk_norm); Maverick's do not.
  CHECK(find_unmodelled(scout.model, "qk_l2_norm") != nullptr);
  CHECK(find_unmodelled(maverick.model, "qk_l2_norm") == nullptr);
}

TEST_CASE("Llama 4 text configs: class defaults, llama4_text, and the derived layer patterns") {
  const ModelSpec scout = fixture("llama4-scout").model;
  // The minimal Scout text_config a public test carries (most keys at Llama4TextConfig's
  // defaults: intermediate_size 8192, intermediate_size_mlp 16384, head_dim 128,
  // attention_chunk_size 8192, a NoPE layer every 4th) imports to the same model.
  const std::string minimal = R"({"model_type": "llama4", "text_config": {
    "hidden_act": "silu", "hidden_size": 5120, "max_position_embeddings": 10485760,
    "num_attention_heads": 40, "num_experts_per_tok": 1, "num_hidden_layers": 48,
    "num_key_value_heads": 8, "num_local_experts": 16, "vocab_size": 202048}})";
  const HfImport m = text(minimal);
  CHECK(total_params(m.model) == total_params(scout));
  CHECK(m.model.attention.window_kind == WindowKind::kChunked);
  CHECK(m.model.attention.sliding_window == 8192);
  CHECK(m.model.attention.window_pattern == 4);
  CHECK(m.model.attention.window_layers == 3);
  CHECK(find_unmodelled(m.model, "vision_encoder") == nullptr);
  const auto origin = [&m](const std::string& field) {
    for (const auto& [f, t] : m.origin)
      if (f == field) return t;
    return std::string();
  };
  CHECK(origin("/moe/expert_ffn") ==
        "intermediate_size absent: 8192, the default of Llama4TextConfig");
  CHECK_THAT(origin("/attention/window_pattern"),
             Catch::StartsWith("no_rope_layer_interval 4 (the default of Llama4TextConfig)"));
  // The text-only class (Llama4ForCausalLM) with the keys at the top level.
  const HfImport t = text(R"({"model_type": "llama4_text", "hidden_size": 5120,
    "num_hidden_layers": 48, "num_local_experts": 16, "interleave_moe_layer_step": 2,
    "layer_types": )" + [] {
    std::string s = "[";
    for (int i = 0; i < 48; ++i)
      s += std::string(i ? ", " : "") + (i % 2 ? "\"full_attention\"" : "\"chunked_attention\"");
    return s + "]";
  }() + "}");
  CHECK(t.model.moe.layer_freq == 2);
  CHECK(t.model.max_seq_len == 131072);  // max_position_embeddings' default, 4096 x 32
  CHECK(t.model.attention.window_pattern == 2);
  CHECK(t.model.attention.window_layers == 1);
  // Every layer chunked (no_rope_layers all 1): a window on every layer.
  std::string all_rope = "[1";
  for (int i = 1; i < 48; ++i)
    all_rope += ", 1";
  const ModelSpec r = text(edited(minimal, "\"vocab_size\"",
                                  "\"no_rope_layers\": " + all_rope + "], \"vocab_size\""))
                          .model;
  CHECK(r.attention.window_pattern == 1);
  CHECK(r.attention.window_layers == 1);
  // moe_layers [] : every layer a dense MLP of intermediate_size_mlp.
  const ModelSpec dense =
      text(edited(minimal, "\"vocab_size\"", "\"moe_layers\": [], \"vocab_size\"")).model;
  CHECK(dense.moe.experts == 0);
  CHECK(total_params(dense) == 48 * kDenseLayer + kEmbeddings);
}

TEST_CASE("bad Llama 4 config.json files name the key") {
  const std::string s = read_text_file(kHfConfigDir + "llama4-scout.json");
  CHECK_NOTHROW(text(s));
  CHECK_THROWS_WITH(text(edited(s, "\"moe_layers\": [\n      0,\n      1,",
                                "\"moe_layers\": [\n      0,\n      5,")),
                    Catch::Contains("c.json:/text_config/moe_layers: only every k-th layer MoE"));
  CHECK_THROWS_WITH(
      text(edited(s, "\"attention_chunk_size\": 8192", "\"attention_chunk_size\": null")),
      Catch::Contains("c.json:/text_config/attention_chunk_size: null, but layers "
                      "are chunked_attention"));
  CHECK_THROWS_WITH(
      text(edited(s, "\"no_rope_layers\": [\n      1,", "\"no_rope_layers\": [\n      2,")),
      Catch::Contains("c.json:/text_config/no_rope_layers/0: expected an integer in "
                      "[0, 1], got 2"));
  CHECK_THROWS_WITH(text(edited(s, "\"hidden_act\": \"silu\"", "\"hidden_act\": \"gelu\"")),
                    Catch::Contains("c.json:/text_config/hidden_act: expected 'silu'"));
  CHECK_THROWS_WITH(text(edited(s, "\"num_local_experts\": 16", "\"num_local_experts\": 0")),
                    Catch::Contains("c.json:/text_config/num_local_experts: expected an integer"));
  CHECK_THROWS_WITH(text(edited(s, "\"use_qk_norm\": true", "\"use_qk_norm\": true, \"mla\": 1")),
                    Catch::Contains("c.json:/text_config/mla: key not understood by fleetsim's "
                                    "Llama4TextConfig mapping"));
  CHECK_THROWS_WITH(text(R"({"model_type": "llama4", "vision_config": {}})"),
                    Catch::Contains("c.json:/text_config: missing required key"));
  // A NoPE pattern fleetsim's window_pattern cannot express (chunked layers not first).
  std::string odd = "[0";
  for (int i = 1; i < 48; ++i)
    odd += i % 4 == 3 ? ", 0" : ", 1";
  CHECK_THROWS_WITH(
      text(R"({"model_type": "llama4_text", "no_rope_layers": )" + odd + "]}"),
      Catch::Contains("c.json:/no_rope_layers: the chunked / full pattern is not periodic"));
}
