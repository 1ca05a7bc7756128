// Readers shared by the Hugging Face config.json importer's files (hf_config.cpp,
// hf_config_llama_like.cpp, hf_config_attention.cpp, hf_config_moe.cpp, hf_config_hybrid.cpp,
// hf_config_qwen_next.cpp, hf_config_v4.cpp, hf_config_gpt2.cpp); internal to sim/scenario.
#pragma once

#include <string>
#include <vector>

#include "scenario/hf_reader.h"
#include "workload/model.h"

namespace fleetsim::hf_internal {

// The families of model_types the importer maps (hf_config.cpp's table names them).
enum class Family {
  kLlama,
  kMistral,
  kMixtral,
  kQwen2,
  kQwen2Moe,
  kQwen3,
  kQwen3Moe,
  kDeepseek,
  kGptOss,
  kGpt2,
  kNemotron,
  kNemotronH,
  kQwen3Next,
  kKimiLinear,
  kDeepseekV4,
  kGlm4Moe,
  kGraniteMoeHybrid,
  kQwen35,
  kQwen35Moe,
  kGemma2,
  kGemma3,
  kPhi3,
  kLlama4,
  kBamba,
  kOlmo2,
  kOlmo3,
  kOlmoe,
  kMiniMaxM2,
  kSmolLM3,
  kSeedOss,
  kErnie45Moe
};

// The Llama-like families' decoder (hf_config_llama_like.cpp): attention, FFN, windows.
void read_llama_like(HfReader& r, ModelSpec& m, Family f);

void read_gqa(HfReader& r, ModelSpec& m);  // hf_config_attention.cpp, as read_mla, read_indexer
// hf_config_moe.cpp: the expert count (`experts_key`), num_experts_per_tok and the expert width
// (`ffn_key`); Qwen's MoE layers (`shared`: qwen2_moe's shared expert); DeepSeek's; GLM-4.5's
// additions to DeepSeek's.
MoeSpec read_moe_fields(HfReader& r, const char* experts_key, const char* ffn_key);
void read_qwen_moe(HfReader& r, ModelSpec& m, bool shared);
void read_deepseek_moe(HfReader& r, ModelSpec& m);
void read_glm4_moe(HfReader& r, ModelSpec& m);
void read_ernie_moe(HfReader& r, ModelSpec& m);
void read_nemotron_h(HfReader& r, ModelSpec& m);
void read_qwen3_next(HfReader& r, ModelSpec& m);  // hf_config_qwen_next.cpp
// Qwen3.5's language model (`r`: its text_config, or the file of a text-only class); `moe`:
// qwen3_5_moe. Then the other keys of a Qwen3.5 or Qwen3-VL file (vision_config, media token
// ids).
void read_qwen3_5(HfReader& r, ModelSpec& m, bool moe);
void read_qwen_vision_wrapper(HfReader& r, ModelSpec& m);
// Gemma 2 / Gemma 3's language model (hf_config_gemma.cpp; `r`: the file, or Gemma 3's
// text_config), absent keys at the config class's defaults; then a Gemma 3 checkpoint's other
// keys (the SigLIP vision_config, mm_tokens_per_image, image token ids).
void read_gemma(HfReader& r, ModelSpec& m, bool gemma3);
void read_gemma3_wrapper(HfReader& r, ModelSpec& m);
// A multimodal checkpoint's vision encoder, which is not simulated, as its `unmodelled` note
// says it (add_vision_encoder_note, hf_config.cpp): "<name> (vision_config: <layers> <unit> of
// width <width>, <params> B parameters<params_note>[, and a <projector> M projector]) not
// simulated ... each <token> would add about <flops> ...". `patches_per_token` > 0 is printed
// as what the FLOPs assume; `flops`: training FLOPs per such token, set against 6 x the model's
// active parameters.
struct VisionEncoderNote {
  std::string name;
  const char* unit = "layers";
  double layers = 0, width = 0, params = 0;
  std::string params_note;
  double projector = 0;  // parameters of a projector named apart (0: none)
  double patches_per_token = 0;
  const char* token = "image token";
  double flops = 0;
};
void add_vision_encoder_note(ModelSpec& m, const VisionEncoderNote& e);
// A multimodal file's vision_config: `note(v)` with its reader when the file has one; absent
// or null, nothing (no encoder).
template <class Note>
void read_vision_config(HfReader& r, Note note) {
  if (!r.present("vision_config")) {
    r.ignore("vision_config");
    return;
  }
  HfReader v = r.child("vision_config");
  note(v);
}
// An integer size of a vision_config, as a double: `dflt` (the config class's) when absent.
double vision_size(HfReader& v, const char* key, int64_t dflt, int64_t lo = 1);
// The layer_types list of sliding / full attention layers (hf_config.cpp).
void read_layer_types(HfReader& r, ModelSpec& m, int window);
// Whether the per-layer flags `on` repeat with a period whose first `count` layers are on and
// the rest off (fleetsim's window_pattern / window_layers); the shortest such period.
bool periodic_prefix(const std::vector<bool>& on, int& period, int& count);
// An integer key with a config-class default: `dflt` when absent or null, with an origin note
// naming `cls` (hf_config_gemma.cpp).
int64_t int_or_default(HfReader& r, const char* key, int64_t dflt, int64_t lo, int64_t hi,
                       const std::string& field, const char* cls);
void read_mla(HfReader& r, ModelSpec& m);
// The lightning indexer of DeepSeek sparse attention (V3.2's DSA, V4's CSA layers): index_topk,
// index_n_heads, index_head_dim, each required.
void read_indexer(HfReader& r, AttentionSpec& a);
void read_indexer_schedule(HfReader& r, int layers);  // glm_moe_dsa's indexer_types
void read_kimi_linear(HfReader& r, ModelSpec& m);
void read_deepseek_v4(HfReader& r, ModelSpec& m);  // hf_config_v4.cpp
void read_gpt2(HfReader& r, ModelSpec& m);         // hf_config_gpt2.cpp
void read_granite_moe_hybrid(HfReader& r, ModelSpec& m);
void read_bamba(HfReader& r, ModelSpec& m);  // hf_config_hybrid.cpp, as read_granite_moe_hybrid
// Llama 4's language model (hf_config_llama4.cpp; `r`: llama4's text_config, or a llama4_text
// file), absent keys at Llama4TextConfig's defaults; then a llama4 checkpoint's other keys (the
// vision_config, the image token ids).
void read_llama4(HfReader& r, ModelSpec& m);
void read_llama4_wrapper(HfReader& r, ModelSpec& m);
// The keys of a mistral3 file around its MistralConfig text_config (hf_config_mistral3.cpp): the
// Pixtral vision_config and the projector's.
void read_mistral3_wrapper(HfReader& r, ModelSpec& m);
// The keys of a kimi_k25 file around its DeepSeek-V3 text_config (hf_config_kimi_k25.cpp): the
// MoonViT vision_config and the media placeholders.
void read_kimi_k25_wrapper(HfReader& r, ModelSpec& m);
// The keys of a qwen2_vl / qwen2_5_vl file besides the language model's (hf_config_qwen2_vl.cpp):
// the media token ids, the vision_config, and (`nested`: the model was read from text_config)
// the top-level copy of the language model's keys.
void read_qwen2_vl_wrapper(HfReader& r, ModelSpec& m, bool nested);

}  // namespace fleetsim::hf_internal
