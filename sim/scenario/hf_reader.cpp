// HfReader (see hf_reader.h) and the list of config.json keys without effect on compute.
#include "scenario/hf_reader.h"

#include <algorithm>

#include "core/error.h"

namespace fleetsim {
namespace {

using namespace jsonr;

// Keys that change neither parameters nor FLOPs nor memory of a training step: identifiers,
// token ids, dtype and library versions, initialisation, dropout, norm epsilons, RoPE
// constants and scaling (position encoding costs no GEMM), auxiliary-loss coefficients and
// routing details whose statistics sim/moe models, inference-only switches.
const std::vector<std::string> kNoCompute = {
    "_name_or_path", "architectures", "auto_map", "bos_token_id", "eos_token_id", "pad_token_id",
    "torch_dtype", "dtype", "transformers_version", "initializer_range", "use_cache",
    "rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon", "norm_eps", "rope_theta",
    "rope_scaling", "rope_parameters", "rope_interleave", "partial_rotary_factor",
    "attention_dropout", "hidden_dropout", "resid_pdrop", "embd_pdrop", "attn_pdrop",
    "pretraining_tp", "router_aux_loss_coef", "aux_loss_alpha", "output_router_logits",
    "router_jitter_noise", "seq_aux", "norm_topk_prob", "scoring_func", "topk_method", "n_group",
    "topk_group", "routed_scaling_factor", "ep_size", "quantization_config",
    "initial_context_length", "swiglu_limit", "summary_activation", "summary_first_dropout",
    "summary_proj_to_labels", "summary_type", "summary_use_proj", "task_specific_params",
    "scale_attn_weights", "reorder_and_upcast_attn", "scale_attn_by_inverse_layer_idx",
    "use_return_dict", "tokenizer_class", "id2label", "label2id", "use_mla", "bias", "rope_type",
    "chat_template", "unsloth_fixed", "decoder_start_token_id", "max_length", "is_decoder",
    "use_mrope", "output_past",
    // gpt_oss: sigmoid gain of the clamped SwiGLU (element-wise, like swiglu_limit).
    "swiglu_alpha",
    // PretrainedConfig's output flags (what forward() returns; no GEMM, nothing stored).
    "return_dict", "output_hidden_states", "output_attentions", "output_scores",
    "return_dict_in_generate", "torchscript",
    // PretrainedConfig's fine-tuning-task and tokenizer fields (a classification head is not
    // the LM); model_max_length (KimiLinearConfig): the tokenizer / serving length, positions
    // are max_position_embeddings.
    "finetuning_task", "num_labels", "problem_type", "prefix", "sep_token_id", "model_max_length",
    // Library state: commit hash, TF / XLA leftovers, attention / experts kernel selectors
    // (fleetsim picks its own kernels).
    "_commit_hash", "use_bfloat16", "tf_legacy_loss", "xla_device", "_attn_implementation_autoset",
    "_attn_implementation_internal", "attn_implementation", "_experts_implementation_internal",
    "experts_implementation",
    // Generation settings (PretrainedConfig of transformers 4.x; GenerationConfig since):
    // inference only.
    "min_length", "do_sample", "early_stopping", "num_beams", "num_beam_groups",
    "diversity_penalty", "temperature", "top_k", "top_p", "typical_p", "repetition_penalty",
    "length_penalty", "no_repeat_ngram_size", "encoder_no_repeat_ngram_size", "bad_words_ids",
    "num_return_sequences", "forced_bos_token_id", "forced_eos_token_id", "remove_invalid_values",
    "exponential_decay_length_penalty", "suppress_tokens", "begin_suppress_tokens"};

// PretrainedConfig keys with a default that has no effect on compute but other values that
// do: the default (or null) is ignored, any other value refused with what is not modelled.
struct DefaultOnly {
  const char* key;
  json dflt;
  const char* why;
};
const std::vector<DefaultOnly>& default_only() {
  static const std::vector<DefaultOnly> k = {
      {"is_encoder_decoder", false, "encoder-decoder models are not modelled"},
      {"add_cross_attention", false, "cross-attention layers (to an encoder) are not modelled"},
      {"tie_encoder_decoder", false, "encoder-decoder weight tying is not modelled"},
      {"cross_attention_hidden_size", json(), "cross-attention layers are not modelled"},
      {"pruned_heads", json::object(),
       "pruned attention heads (fewer heads in some layers) are not modelled"},
      {"chunk_size_feed_forward", 0,
       "feed-forward chunking (its lower activation memory) is not modelled"},
      {"gradient_checkpointing", false,
       "the config's activation checkpointing switch is not read: set recompute in the "
       "scenario (workload / release recompute)"},
      {"per_layer_config", json(),
       "per-layer overrides of the config (transformers' heterogeneous configs) are not "
       "modelled"}};
  return k;
}

}  // namespace

HfReader::HfReader(const json& j, std::string file) : HfReader(j, std::move(file), "") {}

HfReader::HfReader(const json& j, std::string file, std::string prefix)
    : j_(j), file_(std::move(file)), prefix_(std::move(prefix)) {
  if (!j_.is_object()) fail("", std::string("expected a JSON object, got ") + type_name(j_));
}

HfReader HfReader::child(const std::string& key) {
  use(key);
  if (!present(key)) fail("/" + escape_pointer_token(key), "missing required key '" + key + "'");
  return HfReader(j_.at(key), file_, prefix_ + "/" + escape_pointer_token(key));
}

void HfReader::adopt(const HfReader& c) {
  for (const Origin& o : c.origin_)
    record(o.field, o.text, o.key.empty() ? o.key : c.prefix_ + o.key);
  for (const std::string& k : c.ignored_)
    ignored_.push_back(c.prefix_.substr(1) + "/" + k);
}

void HfReader::fail(const std::string& ptr, const std::string& msg) const {
  throw InputError(file_, prefix_ + ptr, msg);
}

const json& HfReader::required(const std::string& key) {
  use(key);
  if (!j_.contains(key))
    fail("/" + escape_pointer_token(key), "missing required key '" + key + "'");
  return j_.at(key);
}

bool HfReader::present(const std::string& key) const {
  return j_.contains(key) && !j_.at(key).is_null();
}

bool HfReader::is_string(const std::string& key) const {
  return present(key) && j_.at(key).is_string();
}

bool HfReader::is_number(const std::string& key) const {
  return present(key) && j_.at(key).is_number();
}

std::string HfReader::str(const std::string& key) {
  const json& v = required(key);
  if (!v.is_string()) fail("/" + key, std::string("expected a string, got ") + type_name(v));
  return v.get<std::string>();
}

std::string HfReader::model_type() {
  if (!j_.contains("model_type")) fail("/model_type", "missing required key 'model_type'");
  return str("model_type");
}

int64_t HfReader::integer(const std::string& key, int64_t lo, int64_t hi,
                          const std::string& field) {
  use(key);
  const json& v = j_.contains(key) ? j_.at(key) : json();
  const std::string ptr = "/" + escape_pointer_token(key);
  if (!j_.contains(key)) fail(ptr, "missing required key '" + key + "'");
  if (!v.is_number_integer() && !v.is_number_unsigned())
    fail(ptr, std::string("expected an integer, got ") + type_name(v) + " " + show(v));
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi))
    fail(ptr, "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                  "], got " + show(v));
  const int64_t x = v.get<int64_t>();
  if (x < lo || x > hi) {
    fail(ptr, "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                  "], got " + std::to_string(x));
  }
  if (!field.empty())
    record(field, "config.json:" + prefix_ + ptr + " = " + std::to_string(x), ptr);
  return x;
}

int64_t HfReader::integer_or(const std::string& key, int64_t dflt, int64_t lo, int64_t hi,
                             const std::string& field) {
  if (present(key)) return integer(key, lo, hi, field);
  ignore(key);  // null: the default
  return dflt;
}

bool HfReader::boolean_or(const std::string& key, bool dflt, const std::string& field) {
  use(key);
  if (!present(key)) return dflt;
  const json& v = j_.at(key);
  const std::string ptr = "/" + escape_pointer_token(key);
  if (!v.is_boolean()) fail(ptr, std::string("expected true or false, got ") + type_name(v));
  const bool b = v.get<bool>();
  if (!field.empty())
    record(field, "config.json:" + prefix_ + ptr + " = " + (b ? "true" : "false"), ptr);
  return b;
}

double HfReader::number(const std::string& key, double lo, double hi) {
  const json& v = required(key);
  const std::string ptr = "/" + escape_pointer_token(key);
  if (!v.is_number()) fail(ptr, std::string("expected a number, got ") + type_name(v));
  const double x = v.get<double>();
  if (!(x >= lo && x <= hi))
    fail(ptr,
         "expected a number in [" + show(json(lo)) + ", " + show(json(hi)) + "], got " + show(v));
  return x;
}

std::vector<std::string> HfReader::string_list(const std::string& key) {
  const json& v = required(key);
  if (!v.is_array()) fail("/" + key, "expected an array of strings, got " + show(v));
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string())
      fail("/" + key + "/" + std::to_string(i), "expected a string, got " + show(v[i]));
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

std::vector<bool> HfReader::word_flags(const std::string& key, int layers, const std::string& on,
                                       const std::string& off) {
  const std::vector<std::string> words = string_list(key);
  const std::string ptr = "/" + escape_pointer_token(key);
  if (static_cast<int>(words.size()) != layers)
    fail(ptr, "expected one entry per layer (" + std::to_string(layers) + "), got " +
                  std::to_string(words.size()));
  std::vector<bool> flags(words.size());
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i] != on && words[i] != off)
      fail(ptr + "/" + std::to_string(i),
           "expected '" + on + "' or '" + off + "', got '" + words[i] + "'");
    flags[i] = words[i] == on;
  }
  return flags;
}

std::vector<int64_t> HfReader::int_list(const std::string& key, int64_t lo, int64_t hi) {
  const json& v = required(key);
  if (!v.is_array()) fail("/" + key, "expected an array of integers, got " + show(v));
  std::vector<int64_t> out;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string ptr = "/" + key + "/" + std::to_string(i);
    if (!v[i].is_number_integer()) fail(ptr, "expected an integer, got " + show(v[i]));
    const int64_t x = v[i].get<int64_t>();
    if (x < lo || x > hi)
      fail(ptr, "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                    "], got " + std::to_string(x));
    out.push_back(x);
  }
  return out;
}

void HfReader::ignore(const std::string& key) {
  use(key);
  if (j_.contains(key) && std::find(ignored_.begin(), ignored_.end(), key) == ignored_.end())
    ignored_.push_back(key);
}

void HfReader::record(const std::string& field, const std::string& text, const std::string& key) {
  for (Origin& o : origin_) {
    if (o.field == field) {
      o = {field, text, key};
      return;
    }
  }
  origin_.push_back({field, text, key});
}

void HfReader::note(const std::string& field, const std::string& text) {
  record(field, text, "");
}

std::string HfReader::origin_of(const std::string& field) const {
  for (const Origin& o : origin_)
    if (o.field == field) return o.key;
  return "";
}

void HfReader::finish(const std::string& config_class) {
  for (const auto& [k, v] : j_.items()) {
    if (std::find(used_.begin(), used_.end(), k) != used_.end()) continue;
    if (std::find(kNoCompute.begin(), kNoCompute.end(), k) != kNoCompute.end()) {
      ignored_.push_back(k);
      continue;
    }
    const auto& d = default_only();
    // A named copy of the binding: Clang 14 does not let a lambda capture a structured binding.
    const std::string& key = k;
    const auto it =
        std::find_if(d.begin(), d.end(), [&](const DefaultOnly& x) { return key == x.key; });
    if (it != d.end()) {
      if (v.is_null() || v == it->dflt) {
        ignored_.push_back(k);
        continue;
      }
      fail("/" + escape_pointer_token(k), std::string("only ") + show(it->dflt) +
                                              " (the default) is read, got " + show(v) + ": " +
                                              it->why);
    }
    fail("/" + escape_pointer_token(k),
         "key not understood by fleetsim's " + config_class +
             " mapping; it may change compute, so it is not dropped silently "
             "(docs/models.md lists the keys read)");
  }
  std::sort(ignored_.begin(), ignored_.end());
}

std::vector<std::pair<std::string, std::string>> HfReader::origin() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Origin& o : origin_)
    out.emplace_back(o.field, o.text);
  return out;
}

}  // namespace fleetsim
