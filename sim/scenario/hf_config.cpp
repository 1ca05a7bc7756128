// Hugging Face config.json -> ModelSpec (see hf_config.h). The mapping of each family follows
// its transformers modeling code (modeling_<model_type>.py): which matrices a layer has, which
// of them carry biases, which layers are MoE. docs/models.md tabulates it.
#include "scenario/hf_config.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "core/error.h"
#include "scenario/hf_config_internal.h"
#include "scenario/hf_reader.h"
#include "scenario/json_reader.h"
#include "scenario/model_loader.h"

namespace fleetsim {
namespace {

using namespace jsonr;
using namespace hf_internal;

const std::map<std::string, Family> kFamilies = {{"llama", Family::kLlama},
                                                 {"mistral", Family::kMistral},
                                                 {"mixtral", Family::kMixtral},
                                                 {"qwen2", Family::kQwen2},
                                                 {"qwen2_moe", Family::kQwen2Moe},
                                                 {"qwen3", Family::kQwen3},
                                                 {"qwen3_moe", Family::kQwen3Moe},
                                                 {"deepseek_v2", Family::kDeepseek},
                                                 {"deepseek_v3", Family::kDeepseek},
                                                 {"kimi_k2", Family::kDeepseek},
                                                 {"gpt_oss", Family::kGptOss},
                                                 {"gpt2", Family::kGpt2},
                                                 {"nemotron", Family::kNemotron},
                                                 {"nemotron_h", Family::kNemotronH},
                                                 {"qwen3_next", Family::kQwen3Next},
                                                 {"deepseek_v32", Family::kDeepseek},
                                                 {"kimi_linear", Family::kKimiLinear},
                                                 {"deepseek_v4", Family::kDeepseekV4},
                                                 {"glm4_moe", Family::kGlm4Moe},
                                                 {"granitemoehybrid", Family::kGraniteMoeHybrid},
                                                 {"qwen3_5", Family::kQwen35},
                                                 {"qwen3_5_text", Family::kQwen35},
                                                 {"qwen3_5_moe", Family::kQwen35Moe},
                                                 {"qwen3_5_moe_text", Family::kQwen35Moe},
                                                 {"gemma2", Family::kGemma2},
                                                 {"gemma3", Family::kGemma3},
                                                 {"gemma3_text", Family::kGemma3},
                                                 {"phi3", Family::kPhi3},
                                                 {"llama4", Family::kLlama4},
                                                 {"llama4_text", Family::kLlama4},
                                                 {"bamba", Family::kBamba},
                                                 {"qwen3_vl", Family::kQwen3},
                                                 {"qwen3_vl_moe", Family::kQwen3Moe},
                                                 {"olmo2", Family::kOlmo2},
                                                 {"olmo3", Family::kOlmo3},
                                                 {"olmoe", Family::kOlmoe},
                                                 {"minimax_m2", Family::kMiniMaxM2},
                                                 {"glm_moe_dsa", Family::kDeepseek},
                                                 {"kimi_k25", Family::kDeepseek},
                                                 {"glm4_moe_lite", Family::kDeepseek},
                                                 {"ministral", Family::kMistral},
                                                 {"ministral3", Family::kMistral},
                                                 {"smollm3", Family::kSmolLM3},
                                                 {"seed_oss", Family::kSeedOss},
                                                 {"ernie4_5_moe", Family::kErnie45Moe},
                                                 {"qwen2_vl", Family::kQwen2},
                                                 {"qwen2_5_vl", Family::kQwen2},
                                                 {"mistral3", Family::kMistral}};

// model_types that name a published architecture fleetsim recognises but does not model yet.
const std::map<std::string, std::string> kNotModelled = {
    {"mamba2", "pure Mamba-2 models (MambaConfig layout) are not mapped; nemotron_h is"},
    {"jamba",
     "Jamba (Mamba + attention + MoE layers): its Mamba-1 selective-scan layers are not "
     "modelled (Mamba-2 is, for nemotron_h)"},
    {"falcon_h1",
     "Falcon-H1 runs attention and a Mamba-2 mixer side by side in every layer; parallel mixers "
     "are not modelled (one mixer per block is: nemotron_h, granitemoehybrid, bamba)"},
    {"minimax",
     "MiniMax-01's lightning (linear) attention layers are not modelled (minimax_m2, all full "
     "attention, is)"},
    {"zamba2",
     "Zamba2's shared attention blocks (one set of weights reused across layers, with LoRA "
     "adapters) are not modelled"},
    {"mllama",
     "Llama 3.2 Vision's cross-attention layers (to the image encoder's states) are not "
     "modelled"},
    {"gemma4",
     "Gemma 4's full-attention layers differ from its sliding ones (global_head_dim, their own "
     "KV heads, keys shared as values), and its per-layer input embeddings and KV-shared layers "
     "are not modelled (Gemma 2 / 3 are)"},
    {"gemma4_text", "as gemma4: per-layer attention shapes and input embeddings, not modelled"},
    {"gemma3n",
     "Gemma 3n's per-layer embeddings, AltUp and Laurel blocks are not modelled (Gemma 3 is)"}};

// Multimodal model_types whose language model is the text_config object: its config class, the
// model_types it may carry when it names one (empty: the family's reader checks it), and whether
// the language model's keys may instead be at the top level (no text_config).
struct NestedText {
  const char* cls;
  std::vector<std::string> model_types;
  bool optional;
};
const std::map<std::string, NestedText> kNestedText = {
    {"gemma3", {"Gemma3TextConfig", {}, false}},
    {"llama4", {"Llama4TextConfig", {}, false}},
    {"qwen3_5", {"Qwen3_5TextConfig", {}, true}},
    {"qwen3_5_moe", {"Qwen3_5MoeTextConfig", {}, true}},
    {"qwen3_vl", {"Qwen3VLTextConfig", {"qwen3_vl_text"}, false}},
    {"qwen3_vl_moe", {"Qwen3VLMoeTextConfig", {"qwen3_vl_moe_text"}, false}},
    {"qwen2_vl", {"Qwen2VLTextConfig", {"qwen2_vl_text"}, true}},
    {"qwen2_5_vl", {"Qwen2_5_VLTextConfig", {"qwen2_5_vl_text"}, true}},
    {"mistral3", {"MistralConfig", {"mistral", "ministral3"}, false}},
    {"kimi_k25", {"DeepseekV3Config", {"deepseek_v3", "kimi_k2"}, false}}};

std::string family_class(const std::string& model_type) {
  static const std::map<std::string, std::string> names = {
      {"llama", "LlamaConfig"},
      {"mistral", "MistralConfig"},
      {"mixtral", "MixtralConfig"},
      {"qwen2", "Qwen2Config"},
      {"qwen2_moe", "Qwen2MoeConfig"},
      {"qwen3", "Qwen3Config"},
      {"qwen3_moe", "Qwen3MoeConfig"},
      {"deepseek_v2", "DeepseekV2Config"},
      {"deepseek_v3", "DeepseekV3Config"},
      {"kimi_k2", "DeepseekV3Config (Kimi K2)"},
      {"gpt_oss", "GptOssConfig"},
      {"gpt2", "GPT2Config"},
      {"nemotron", "NemotronConfig"},
      {"nemotron_h", "NemotronHConfig"},
      {"qwen3_next", "Qwen3NextConfig"},
      {"deepseek_v32", "DeepseekV32Config"},
      {"kimi_linear", "KimiLinearConfig"},
      {"deepseek_v4", "DeepseekV4Config"},
      {"glm4_moe", "Glm4MoeConfig"},
      {"granitemoehybrid", "GraniteMoeHybridConfig"},
      {"qwen3_5", "Qwen3_5Config"},
      {"qwen3_5_text", "Qwen3_5TextConfig"},
      {"qwen3_5_moe", "Qwen3_5MoeConfig"},
      {"qwen3_5_moe_text", "Qwen3_5MoeTextConfig"},
      {"gemma2", "Gemma2Config"},
      {"gemma3", "Gemma3Config"},
      {"gemma3_text", "Gemma3TextConfig"},
      {"phi3", "Phi3Config"},
      {"llama4", "Llama4Config"},
      {"llama4_text", "Llama4TextConfig"},
      {"bamba", "BambaConfig"},
      {"qwen3_vl", "Qwen3VLConfig"},
      {"qwen3_vl_moe", "Qwen3VLMoeConfig"},
      {"olmo2", "Olmo2Config"},
      {"olmo3", "Olmo3Config"},
      {"olmoe", "OlmoeConfig"},
      {"minimax_m2", "MiniMaxM2Config"},
      {"glm_moe_dsa", "GlmMoeDsaConfig"},
      {"kimi_k25", "KimiK25Config"},
      {"glm4_moe_lite", "Glm4MoeLiteConfig"},
      {"ministral", "MinistralConfig"},
      {"ministral3", "Ministral3Config"},
      {"smollm3", "SmolLM3Config"},
      {"seed_oss", "SeedOssConfig"},
      {"ernie4_5_moe", "Ernie4_5_MoeConfig"},
      {"qwen2_vl", "Qwen2VLConfig"},
      {"qwen2_5_vl", "Qwen2_5_VLConfig"},
      {"mistral3", "Mistral3Config"}};
  return names.at(model_type);
}

std::string default_name(const std::string& file) {
  const std::filesystem::path p(file);
  std::string stem = p.stem().string();
  if (stem == "config" && p.has_parent_path()) {
    const std::string dir = p.parent_path().filename().string();
    if (!dir.empty() && dir != "." && dir != "..") stem = dir;
  }
  return stem.empty() ? "imported" : stem;
}

}  // namespace

namespace hf_internal {

void add_vision_encoder_note(ModelSpec& m, const VisionEncoderNote& e) {
  char head[256], projector[48] = "", detail[48] = "", tail[256];
  if (e.projector > 0)
    std::snprintf(projector, sizeof projector, ", and a %.1f M projector", e.projector / 1e6);
  std::snprintf(head, sizeof head,
                "%s (vision_config: %.0f %s of width %.0f, %.3f B parameters%s%s)", e.name.c_str(),
                e.layers, e.unit, e.width, e.params / 1e9, e.params_note.c_str(), projector);
  if (e.patches_per_token > 0)
    std::snprintf(detail, sizeof detail, "%.0f patches per token, ", e.patches_per_token);
  const double lm = 6 * static_cast<double>(active_params(m));
  std::snprintf(tail, sizeof tail,
                "%.1f GFLOP of encoder matrices (%sforward + backward, its attention not "
                "counted), %.0f %% of the language model's %.1f GFLOP (6 x active parameters)",
                e.flops / 1e9, detail, 100 * e.flops / lm, lm / 1e9);
  m.unmodelled.push_back({"vision_encoder", "small",
                          std::string(head) +
                              " not simulated: the step is the language model's on text "
                              "tokens; each " +
                              e.token + " would add about " + tail});
}

double vision_size(HfReader& v, const char* key, int64_t dflt, int64_t lo) {
  return static_cast<double>(v.integer_or(key, dflt, lo, int64_t{1} << 24, ""));
}

}  // namespace hf_internal

namespace {

// A multimodal config.json's own tie_word_embeddings, beside its text_config's: the text
// config's decides; the outer one must agree with it, or stands for it when the text config has
// none (`text_ties`).
void read_outer_tie(HfReader& r, ModelSpec& m, bool text_ties) {
  if (!r.present("tie_word_embeddings")) return;
  const bool tied = r.boolean_or("tie_word_embeddings", false, "");
  if (!text_ties) {
    m.tied_embeddings = tied;
    r.note("/tied_embeddings", std::string("config.json:/tie_word_embeddings = ") +
                                   (tied ? "true" : "false") + " (the text config has none)");
  } else if (tied != m.tied_embeddings) {
    r.fail("/tie_word_embeddings", "disagrees with /text_config/tie_word_embeddings");
  }
}

// The decoder's fields from `b` (the file, or Qwen3.5's text_config): the sizes every family has,
// then the family's reader.
void read_decoder(HfReader& b, ModelSpec& m, Family f, const std::string& model_type) {
  if (f == Family::kGpt2) {
    read_gpt2(b, m);
  } else if (f == Family::kGemma2 || f == Family::kGemma3) {
    read_gemma(b, m, f == Family::kGemma3);
  } else if (f == Family::kLlama4) {
    read_llama4(b, m);
  } else {
    // Nemotron 3 checkpoints may leave num_hidden_layers null and list layers_block_type.
    const bool layers_from_blocks = f == Family::kNemotronH && !b.present("num_hidden_layers") &&
                                    b.present("layers_block_type");
    if (layers_from_blocks) b.ignore("num_hidden_layers");
    m.layers = layers_from_blocks
                   ? 0
                   : static_cast<int>(b.integer("num_hidden_layers", 1, 100000, "/layers"));
    m.hidden = b.integer("hidden_size", 1, int64_t{1} << 24, "/hidden");
    m.vocab = b.integer("vocab_size", 1, int64_t{1} << 24, "/vocab");
    m.max_seq_len =
        static_cast<int>(b.integer("max_position_embeddings", 1, int64_t{1} << 30, "/max_seq_len"));
    m.tied_embeddings = b.boolean_or("tie_word_embeddings", false, "/tied_embeddings");
    if (!b.present("tie_word_embeddings"))
      b.note("/tied_embeddings",
             "tie_word_embeddings absent: false, the default of " + family_class(model_type));
    if (f == Family::kNemotronH) {
      read_nemotron_h(b, m);
    } else if (f == Family::kQwen3Next) {
      read_qwen3_next(b, m);
    } else if (f == Family::kKimiLinear) {
      read_kimi_linear(b, m);
    } else if (f == Family::kDeepseekV4) {
      read_deepseek_v4(b, m);
    } else if (f == Family::kQwen35 || f == Family::kQwen35Moe) {
      read_qwen3_5(b, m, f == Family::kQwen35Moe);
    } else if (f == Family::kGraniteMoeHybrid) {
      read_granite_moe_hybrid(b, m);
    } else if (f == Family::kBamba) {
      read_bamba(b, m);
    } else {
      read_llama_like(b, m, f);
    }
  }
}

// The language model: from text_config for the multimodal model_types of kNestedText (their
// text-only classes, and where kNestedText says so the checkpoint's own file too, keep it at the
// top level), else from the file itself. Whether it was text_config.
bool read_language_model(HfReader& r, ModelSpec& m, Family f, const std::string& type) {
  const auto nested = kNestedText.find(type);
  if (nested == kNestedText.end() || (nested->second.optional && !r.present("text_config"))) {
    read_decoder(r, m, f, type);
    return false;
  }
  HfReader b = r.child("text_config");
  read_decoder(b, m, f, type);
  const std::vector<std::string>& want = nested->second.model_types;
  if (!want.empty() && b.present("model_type") &&
      std::find(want.begin(), want.end(), b.str("model_type")) == want.end())
    b.fail("/model_type", "expected '" + want.front() +
                              (want.size() > 1 ? "' or '" + want.back() : std::string()) +
                              "' (the text config of " + type + " that fleetsim maps)");
  if (type == "qwen2_vl" || type == "qwen2_5_vl")
    for (const char* k : {"image_token_id", "video_token_id", "vision_start_token_id",
                          "vision_end_token_id", "vision_token_id"})
      b.ignore(k);  // the media token ids transformers copies into text_config
  const bool text_ties = b.present("tie_word_embeddings");
  b.finish(nested->second.cls);
  r.adopt(b);
  read_outer_tie(r, m, text_ties);
  return true;
}

// The keys of a file besides its language model's: a multimodal checkpoint's (the vision
// encoder, media token ids), and DeepSeek sparse attention's required indexer.
void read_other_keys(HfReader& r, ModelSpec& m, Family f, const std::string& type, bool nested) {
  if (f == Family::kQwen35 || f == Family::kQwen35Moe || type == "qwen3_vl" ||
      type == "qwen3_vl_moe")
    read_qwen_vision_wrapper(r, m);
  if (type == "mistral3") read_mistral3_wrapper(r, m);
  if (type == "kimi_k25") read_kimi_k25_wrapper(r, m);
  if (type == "qwen2_vl" || type == "qwen2_5_vl") read_qwen2_vl_wrapper(r, m, nested);
  if (type == "gemma3") read_gemma3_wrapper(r, m);
  if (type == "llama4") read_llama4_wrapper(r, m);
  if ((type == "deepseek_v32" || type == "glm_moe_dsa") && m.attention.sparse_topk == 0)
    r.fail("/index_topk", "missing: " + family_class(type) +
                              " needs index_topk, index_n_heads and index_head_dim (DeepSeek "
                              "sparse attention)");
  if (type == "glm_moe_dsa") read_indexer_schedule(r, m.layers);
}

}  // namespace

std::vector<std::string> hf_model_types() {
  std::vector<std::string> out;
  for (const auto& [k, v] : kFamilies)
    out.push_back(k);
  return out;
}

bool is_hf_config(const std::string& json_text, const std::string& file) {
  const json j = parse_strict(json_text, file);
  return j.is_object() && j.contains("model_type");
}

HfImport import_hf_config(const std::string& json_text, const std::string& file,
                          const std::string& name) {
  const json j = parse_strict(json_text, file);
  HfReader r(j, file);
  HfImport imp;
  imp.model_type = r.model_type();
  if (const auto it = kNotModelled.find(imp.model_type); it != kNotModelled.end())
    r.fail("/model_type", "'" + imp.model_type + "': " + it->second);
  const auto fam = kFamilies.find(imp.model_type);
  if (fam == kFamilies.end()) {
    std::string list;
    for (const auto& t : hf_model_types())
      list += (list.empty() ? "" : ", ") + t;
    r.fail("/model_type", "unknown model_type '" + imp.model_type + "' (supported: " + list + ")");
  }
  const Family f = fam->second;
  ModelSpec& m = imp.model;
  m.name = name.empty() ? default_name(file) : name;
  if (m.name.find('/') != std::string::npos)
    throw InputError("--name", "", "expected a model id without '/', got '" + m.name + "'");
  m.display_name = r.present("_name_or_path") ? r.str("_name_or_path") : m.name;
  m.file = file;
  m.sources = {file + " (Hugging Face config.json, model_type " + imp.model_type + ")"};
  m.source = m.sources.front();
  const bool nested = read_language_model(r, m, f, imp.model_type);
  read_other_keys(r, m, f, imp.model_type, nested);
  if (m.moe.experts > 0) m.experts_field = file + ":" + r.origin_of("/moe/experts");
  r.finish(family_class(imp.model_type));
  imp.origin = r.origin();
  imp.ignored = r.ignored();
  // The model loader's cross-checks (some layer MoE, MTP shape, ...) on what was mapped; the
  // result is exactly what the written zoo file loads to.
  ModelSpec checked;
  try {
    checked = parse_model_text(zoo_model_json(imp), file, "");
  } catch (const InputError& e) {
    throw InputError(
        file, "",
        "the mapped model is invalid at fleetsim field " + e.pointer() + ": " + e.message());
  }
  checked.file = file;
  checked.experts_field = m.experts_field;
  imp.model = std::move(checked);
  return imp;
}

}  // namespace fleetsim

namespace fleetsim {

std::string hf_config_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) return path;
  const std::string file = (std::filesystem::path(path) / "config.json").string();
  if (!std::filesystem::is_regular_file(file, ec))
    throw InputError(path, "",
                     "a folder without a config.json: expected a Hugging Face config.json or a "
                     "checkpoint folder holding one");
  return file;
}

HfImport import_hf_config_file(const std::string& path, const std::string& name) {
  const std::string file = hf_config_file(path);
  return import_hf_config(jsonr::read_file(file), file, name);
}

}  // namespace fleetsim
