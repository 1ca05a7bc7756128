// Keys a published config.json carries that have no effect on compute (sim/scenario/hf_reader.cpp
// kNoCompute and the families' ignore lists): every fixture of tests/scenario/hf_configs/, with the
// keys PretrainedConfig writes into every config.json and the config class's no-compute keys added
// at their defaults, imports to the same model; keys that change compute stay refused.
//
// The key lists are transcribed from huggingface/transformers: PretrainedConfig.__init__ of
// transformers 4.x (src/transformers/configuration_utils.py: output flags, fine-tuning-task
// fields, token ids, the generation parameters) and PreTrainedConfig of transformers 5 (commit
// 008e5743, dtype, attn / experts implementation); the config classes'
// src/transformers/models/<type>/configuration_<type>.py (llama, mixtral, qwen2_moe, qwen3_next,
// qwen3_5_moe, deepseek_v2, deepseek_v3 (commit 001f85b3), gpt_oss, glm4_moe, nemotron_h,
// granitemoehybrid).
#include <map>

#include <catch2/catch.hpp>

#include "core/error.h"
#include "scenario/hf_config.h"
#include "scenario/json_reader.h"
#include "scenario/model_loader.h"
#include "support/fixtures.h"

using namespace fleetsim;
using namespace fleetsim::test;
using jsonr::json;

namespace {
const std::string kDir = kRoot + "/tests/scenario/hf_configs/";

// PretrainedConfig's keys at their defaults (transformers 4.x __init__; 5.x fields).
const json kGeneric = json::parse(R"({
  "return_dict": true, "output_hidden_states": false, "output_attentions": false,
  "torchscript": false, "torch_dtype": "bfloat16", "dtype": "bfloat16", "use_bfloat16": false,
  "tf_legacy_loss": false, "pruned_heads": {}, "chunk_size_feed_forward": 0,
  "is_encoder_decoder": false, "is_decoder": false, "cross_attention_hidden_size": null,
  "add_cross_attention": false, "tie_encoder_decoder": false, "architectures": ["X"],
  "finetuning_task": null, "id2label": {"0": "LABEL_0", "1": "LABEL_1"},
  "label2id": {"LABEL_0": 0, "LABEL_1": 1}, "num_labels": 2, "tokenizer_class": null,
  "prefix": null, "bos_token_id": 1, "pad_token_id": null, "eos_token_id": 2,
  "sep_token_id": null, "decoder_start_token_id": null, "task_specific_params": null,
  "problem_type": null, "_name_or_path": "x", "_commit_hash": null,
  "_attn_implementation_autoset": true, "_attn_implementation_internal": null,
  "_experts_implementation_internal": null, "attn_implementation": null,
  "experts_implementation": null, "transformers_version": "4.57.1", "per_layer_config": null,
  "max_length": 20, "min_length": 0, "do_sample": false, "early_stopping": false,
  "num_beams": 1, "num_beam_groups": 1, "diversity_penalty": 0.0, "temperature": 1.0,
  "top_k": 50, "top_p": 1.0, "typical_p": 1.0, "repetition_penalty": 1.0,
  "length_penalty": 1.0, "no_repeat_ngram_size": 0, "encoder_no_repeat_ngram_size": 0,
  "bad_words_ids": null, "num_return_sequences": 1, "output_scores": false,
  "return_dict_in_generate": false, "forced_bos_token_id": null, "forced_eos_token_id": null,
  "remove_invalid_values": false, "exponential_decay_length_penalty": null,
  "suppress_tokens": null, "begin_suppress_tokens": null, "gradient_checkpointing": false,
  "use_return_dict": true, "output_past": true, "xla_device": null})");

// Each config class's keys without effect on compute, at the class defaults (null where the
// class derives the value in __post_init__).
const std::map<std::string, json> kFamily = {
    {"llama", json::parse(R"({"hidden_act": "silu", "initializer_range": 0.02,
      "rms_norm_eps": 1e-6, "use_cache": true, "pretraining_tp": 1, "rope_theta": 10000.0,
      "rope_scaling": null, "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0},
      "attention_dropout": 0.0, "head_dim": null})")},
    {"mistral", json::parse(R"({"hidden_act": "silu", "use_cache": true,
      "sliding_window": null, "attention_dropout": 0.0, "head_dim": null,
      "layer_types": null})")},
    {"mixtral", json::parse(R"({"sliding_window": null, "attention_dropout": 0.0,
      "output_router_logits": false, "router_aux_loss_coef": 0.001,
      "router_jitter_noise": 0.0, "head_dim": null, "layer_types": null})")},
    {"qwen2", json::parse(R"({"use_sliding_window": false, "sliding_window": null,
      "max_window_layers": 28, "layer_types": null, "attention_dropout": 0.0,
      "head_dim": null})")},
    {"qwen2_moe", json::parse(R"({"use_sliding_window": false, "sliding_window": 4096,
      "max_window_layers": 28, "decoder_sparse_step": 1, "norm_topk_prob": false,
      "output_router_logits": false, "router_aux_loss_coef": 0.001, "mlp_only_layers": [],
      "qkv_bias": true, "layer_types": null})")},
    {"qwen3", json::parse(R"({"attention_bias": false, "use_sliding_window": false,
      "sliding_window": null, "max_window_layers": 28, "layer_types": null,
      "attention_dropout": 0.0})")},
    {"qwen3_moe", json::parse(R"({"attention_bias": false, "use_sliding_window": false,
      "sliding_window": null, "max_window_layers": 28, "layer_types": null,
      "decoder_sparse_step": 1, "output_router_logits": false, "router_aux_loss_coef": 0.001,
      "mlp_only_layers": []})")},
    {"deepseek_v2", json::parse(R"({"mlp_bias": false, "pretraining_tp": 1,
      "topk_method": "greedy", "n_group": null, "topk_group": null,
      "routed_scaling_factor": 1.0, "norm_topk_prob": false, "attention_bias": false,
      "attention_dropout": 0.0, "aux_loss_alpha": 0.001, "seq_aux": true,
      "moe_layer_freq": 1, "ep_size": 1, "scoring_func": "softmax",
      "num_nextn_predict_layers": 0, "mlp_layer_types": null})")},
    {"deepseek_v3", json::parse(R"({"pretraining_tp": 1, "rope_interleave": true,
      "attention_bias": false, "attention_dropout": 0.0, "qk_head_dim": 192, "head_dim": 64,
      "mlp_bias": false, "moe_layer_freq": 1, "ep_size": 1, "aux_loss_alpha": 0.001,
      "seq_aux": true, "mlp_layer_types": null})")},
    {"gpt_oss", json::parse(R"({"swiglu_alpha": 1.702, "swiglu_limit": 7.0,
      "router_aux_loss_coef": 0.001, "output_router_logits": false, "use_cache": true,
      "attention_dropout": 0.0})")},
    {"gpt2", json::parse(R"({"activation_function": "gelu_new", "resid_pdrop": 0.1,
      "embd_pdrop": 0.1, "attn_pdrop": 0.1, "layer_norm_epsilon": 1e-5,
      "summary_type": "cls_index", "summary_use_proj": true, "summary_activation": null,
      "summary_proj_to_labels": true, "summary_first_dropout": 0.1,
      "scale_attn_weights": true, "scale_attn_by_inverse_layer_idx": false,
      "reorder_and_upcast_attn": false, "n_ctx": 1024})")},
    {"nemotron", json::parse(R"({"hidden_act": "relu2", "norm_eps": 1e-5,
      "partial_rotary_factor": 0.5, "attention_bias": false, "attention_dropout": 0.0,
      "mlp_bias": false, "head_dim": null})")},
    {"nemotron_h", json::parse(R"({"num_logits_to_keep": 1, "use_mamba_kernels": true,
      "mamba_hidden_act": "silu", "mamba_ssm_cache_dtype": "float32", "time_step_min": 0.001,
      "time_step_max": 0.1, "time_step_floor": 1e-4, "moe_shared_expert_overlap": true,
      "n_group": 1, "topk_group": 1, "norm_topk_prob": true, "routed_scaling_factor": 1.0,
      "use_bias": false, "residual_in_fp32": false, "hidden_dropout": 0.0,
      "rescale_prenorm_residual": true, "layer_norm_epsilon": 1e-5, "attention_dropout": 0.0,
      "sliding_window": null, "mlp_bias": false, "mamba_proj_bias": false,
      "use_conv_bias": true, "expand": 2, "mlp_hidden_act": "relu2",
      "attention_bias": false})")},
    {"qwen3_next", json::parse(R"({"partial_rotary_factor": 0.25, "decoder_sparse_step": 1,
      "mlp_only_layers": [], "norm_topk_prob": true, "output_router_logits": false,
      "router_aux_loss_coef": 0.001, "attention_bias": false, "attention_dropout": 0.0,
      "use_sliding_window": false, "sliding_window": null, "layer_types": null})")},
    // Qwen3_5MoeTextConfig (the text-only class: its keys at the top level).
    {"qwen3_5_moe_text", json::parse(R"({"attention_bias": false, "attention_dropout": 0.0,
      "output_router_logits": false, "router_aux_loss_coef": 0.001,
      "partial_rotary_factor": 0.25, "pad_token_id": null})")},
    {"glm4_moe", json::parse(R"({"partial_rotary_factor": 0.5, "attention_bias": false,
      "attention_dropout": 0.0, "n_group": 1, "topk_group": 1, "norm_topk_prob": true,
      "output_router_logits": false, "routed_scaling_factor": 1.0,
      "decoder_sparse_step": 1, "mlp_layer_types": null})")},
    {"granitemoehybrid", json::parse(R"({"embedding_multiplier": 1.0,
      "logits_scaling": 1.0, "residual_multiplier": 1.0, "attention_multiplier": 1.0,
      "output_router_logits": false, "router_aux_loss_coef": 0.001,
      "attention_dropout": 0.0, "mamba_conv_bias": true, "mamba_proj_bias": false})")},
    {"kimi_linear", json::parse(R"({"moe_renormalize": true,
      "moe_router_activation_func": "sigmoid", "use_grouped_topk": true,
      "moe_layer_freq": 1, "attention_dropout": 0.0, "model_max_length": 1048576})")},
    {"deepseek_v4", json::parse(R"({"attention_bias": false, "attention_dropout": 0.0,
      "mlp_bias": false, "hidden_act": "silu", "rope_interleave": true,
      "output_router_logits": false, "router_aux_loss_coef": 0.001})")},
};

json load(const std::string& name) {
  return jsonr::parse_strict(jsonr::read_file(kDir + name + ".json"), name);
}

HfImport import(const json& j) {
  return import_hf_config(j.dump(), "c.json", "t");
}

// `base` with every key of `extra` it lacks added.
json with_defaults(json base, const json& extra) {
  for (const auto& [k, v] : extra.items())
    if (!base.contains(k)) base[k] = v;
  return base;
}

json family_keys(const std::string& model_type) {
  const std::string t = model_type == "kimi_k2" || model_type == "deepseek_v32"
                            ? std::string("deepseek_v3")
                            : model_type;
  const auto it = kFamily.find(t);
  return it == kFamily.end() ? json::object() : it->second;
}

void same_model(const std::string& what, const json& base) {
  INFO(what);
  const HfImport a = import(base);
  const std::string type = base.at("model_type").get<std::string>();
  const HfImport b = import(with_defaults(with_defaults(base, kGeneric), family_keys(type)));
  CHECK(total_params(b.model) == total_params(a.model));
  CHECK(active_params(b.model) == active_params(a.model));
  CHECK(b.model.layers == a.model.layers);
  CHECK(b.model.attention.head_dim == a.model.attention.head_dim);
  CHECK(b.model.attention.qkv_bias == a.model.attention.qkv_bias);
  CHECK(b.ignored.size() > a.ignored.size());
}

std::string refusal(const json& j) {
  try {
    import(j);
  } catch (const InputError& e) {
    return e.pointer() + ": " + e.message();
  }
  return "";
}
}  // namespace

TEST_CASE("generic and no-compute config.json keys at their defaults do not change the model") {
  for (const char* f : {"deepseek-v2-lite",
                        "deepseek-v3.2-exp",
                        "deepseek-v3",
                        "deepseek-v4-flash",
                        "glm-4.5-air",
                        "glm-4.5",
                        "gpt-oss-120b",
                        "gpt-oss-20b",
                        "gemma-2-27b",
                        "gemma-2-2b",
                        "gemma-2-9b",
                        "gemma-3-12b",
                        "gemma-3-1b",
                        "gpt2",
                        "granite-4.0-h-1b",
                        "granite-4.0-h-tiny",
                        "kimi-linear-48b-a3b",
                        "llama2-7b",
                        "llama3-70b",
                        "llama3-8b",
                        "llama3.1-405b",
                        "llama3.1-8b",
                        "mistral-7b",
                        "mixtral-8x22b",
                        "mixtral-8x7b",
                        "nemotron-3-nano-30b-a3b",
                        "nemotron-3-super-120b-a12b",
                        "nemotron-3-ultra-550b-a55b",
                        "nemotron-h-8b",
                        "phi-4",
                        "qwen2.5-7b",
                        "qwen3-235b-a22b",
                        "qwen3-30b-a3b",
                        "qwen3-8b",
                        "qwen3-next-80b-a3b",
                        "qwen3.5-35b-a3b",
                        "qwen3.5-35b-a3b-text",
                        "qwen3.6-27b"})
    same_model(f, load(f));
  // The families without a fixture, from a fixture of the same layout.
  json k2 = load("deepseek-v3");
  k2["model_type"] = "kimi_k2";
  same_model("kimi_k2", k2);
  json q2 = load("qwen3-30b-a3b");
  q2["model_type"] = "qwen2_moe";
  q2.erase("head_dim");
  q2.erase("attention_bias");  // Qwen2MoeConfig has qkv_bias instead
  q2["shared_expert_intermediate_size"] = 5632;
  same_model("qwen2_moe", q2);
  json nm = load("llama3-8b");
  nm["model_type"] = "nemotron";
  nm["hidden_act"] = "relu2";
  same_model("nemotron", nm);
}

TEST_CASE("the defaults' null / derived values are read as the config class derives them") {
  // head_dim null: hidden / heads (llama3-8b: 4096 / 32).
  json l = load("llama3-8b");
  l["head_dim"] = nullptr;
  CHECK(import(l).model.attention.head_dim == 128);
  // DeepseekV3Config's qk_head_dim = qk_nope_head_dim + qk_rope_head_dim (128 + 64).
  json d = load("deepseek-v3");
  d["qk_head_dim"] = 192;
  CHECK(total_params(import(d).model) == total_params(import(load("deepseek-v3")).model));
  // transformers 5's mlp_layer_types: first_k_dense_replace (3) dense, then sparse.
  std::vector<std::string> types(61, "sparse");
  std::fill_n(types.begin(), 3, "dense");
  d["mlp_layer_types"] = types;
  CHECK(import(d).model.moe.first_k_dense == 3);
  // DeepseekV32Config (transformers 5): num_experts = n_routed_experts, every layer DSA.
  json v = load("deepseek-v3.2-exp");
  const int layers = v.at("num_hidden_layers").get<int>();
  v["num_experts"] = v.at("n_routed_experts");
  v["layer_types"] =
      std::vector<std::string>(static_cast<size_t>(layers), "dynamic_sparse_attention");
  CHECK(total_params(import(v).model) == total_params(import(load("deepseek-v3.2-exp")).model));
  v["layer_types"][0] = "full_attention";
  CHECK_THROWS_WITH(import(v), Catch::Contains("expected 'dynamic_sparse_attention'"));
  // Qwen3MoeConfig (transformers 5): the expert count saved as num_local_experts.
  json q = load("qwen3-30b-a3b");
  q["num_local_experts"] = q.at("num_experts");
  q.erase("num_experts");
  CHECK(import(q).model.moe.experts == 128);
  q["num_experts"] = 64;
  CHECK_THROWS_WITH(import(q), Catch::Contains("/num_local_experts: disagrees with num_experts"));
  // Granite 4.0-H layer_types in transformers 5's names.
  json gr = load("granite-4.0-h-tiny");
  for (auto& t : gr["layer_types"])
    t = t.get<std::string>() == "mamba" ? "linear_attention" : "full_attention";
  CHECK(total_params(import(gr).model) == total_params(import(load("granite-4.0-h-tiny")).model));
  // Glm4MoeConfig (transformers 5): num_mtp_layers, the MTP module count.
  json g = load("glm-4.5");
  const int mtp = g.at("num_nextn_predict_layers").get<int>();
  g.erase("num_nextn_predict_layers");
  g["num_mtp_layers"] = mtp;
  CHECK(import(g).model.mtp_layers == mtp);
  g["num_nextn_predict_layers"] = mtp + 1;
  CHECK_THROWS_WITH(import(g), Catch::Contains("/num_mtp_layers: disagrees"));
  // Nemotron-H layers_block_type in transformers 5's names (linear_attention, full_attention).
  json h = load("nemotron-h-8b");
  const std::string pat = h.at("hybrid_override_pattern").get<std::string>();
  std::vector<std::string> blocks;
  for (char c : pat)
    blocks.push_back(c == 'M' ? "linear_attention" : c == '*' ? "full_attention" : "mlp");
  h["layers_block_type"] = blocks;
  CHECK(total_params(import(h).model) == total_params(import(load("nemotron-h-8b")).model));
}

TEST_CASE("config.json keys that change compute are still refused, naming what is not modelled") {
  const json l = load("llama3-8b");
  auto with = [](json j, const std::string& k, const json& v) {
    j[k] = v;
    return j;
  };
  CHECK_THAT(refusal(with(l, "add_cross_attention", true)),
             Catch::Contains("/add_cross_attention: only false (the default) is read") &&
                 Catch::Contains("cross-attention layers"));
  CHECK_THAT(refusal(with(l, "is_encoder_decoder", true)),
             Catch::Contains("/is_encoder_decoder") && Catch::Contains("encoder-decoder"));
  CHECK_THAT(refusal(with(l, "pruned_heads", json::parse(R"({"0": [1]})"))),
             Catch::Contains("/pruned_heads") && Catch::Contains("pruned attention heads"));
  CHECK_THAT(refusal(with(l, "chunk_size_feed_forward", 64)),
             Catch::Contains("/chunk_size_feed_forward") && Catch::Contains("chunking"));
  CHECK_THAT(refusal(with(l, "gradient_checkpointing", true)),
             Catch::Contains("/gradient_checkpointing") && Catch::Contains("recompute"));
  CHECK_THAT(refusal(with(l, "per_layer_config", json::parse(R"({"0": {"hidden_size": 8}})"))),
             Catch::Contains("/per_layer_config"));
  CHECK_THAT(refusal(with(l, "moe_layer_period", 2)),
             Catch::Contains("/moe_layer_period: key not understood"));
  CHECK_THAT(refusal(with(l, "hidden_act", "gelu")),
             Catch::Contains("/hidden_act: expected 'silu'") && Catch::Contains("not modelled"));
  CHECK_THAT(refusal(with(load("qwen3-8b"), "use_sliding_window", true)),
             Catch::Contains("/use_sliding_window") && Catch::Contains("not modelled"));
  const json d = load("deepseek-v3");
  CHECK_THAT(refusal(with(d, "moe_layer_freq", 2)), Catch::Contains("/moe_layer_freq"));
  CHECK_THAT(refusal(with(d, "qk_head_dim", 128)),
             Catch::Contains("/qk_head_dim: must equal qk_nope_head_dim + qk_rope_head_dim (192)"));
  CHECK_THAT(refusal(with(d, "mlp_layer_types", std::vector<std::string>(61, "sparse"))),
             Catch::Contains("/mlp_layer_types: expected 3 'dense' then 'sparse'"));
  CHECK_THAT(refusal(with(d, "num_experts", 128)),
             Catch::Contains("/num_experts: must equal n_routed_experts (256)"));
  CHECK_THAT(refusal(with(load("glm-4.5"), "decoder_sparse_step", 2)),
             Catch::Contains("/decoder_sparse_step") && Catch::Contains("not modelled"));
  json q = load("qwen2.5-7b");
  q["qkv_bias"] = false;  // qkv_bias is read: it disagrees with attention_bias only if given
  q["attention_bias"] = true;
  CHECK_THAT(refusal(q), Catch::Contains("/qkv_bias: disagrees with attention_bias"));
}
