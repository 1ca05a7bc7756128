// Hugging Face config.json -> ModelSpec for Gemma 2 and Gemma 3 (see hf_config.h): gemma2,
// gemma3_text, and gemma3 (Gemma3ForConditionalGeneration, whose text_config lists only what
// differs from Gemma3TextConfig's defaults).
#include <string>
#include <vector>

#include "scenario/hf_config_internal.h"

namespace fleetsim::hf_internal {
namespace {

// The config classes' defaults (transformers configuration_gemma2.py, configuration_gemma3.py):
// a key absent from the file takes them, as the class does.
struct GemmaDefaults {
  const char* cls;
  int64_t vocab, hidden, ffn, layers, heads, kv_heads, head_dim, max_seq, window;
};
constexpr GemmaDefaults kGemma2{"Gemma2Config", 256000, 2304, 9216, 26, 8, 4, 256, 8192, 4096};
constexpr GemmaDefaults kGemma3{
    "Gemma3TextConfig", 262208, 2304, 9216, 26, 8, 4, 256, 131072, 4096};

// Gemma 2: every other layer sliding (layer_idx % 2 == 0); Gemma 3: 5 of every 6
// (sliding_window_pattern, layer i full when (i + 1) % pattern == 0). A layer_types list, when
// present, says it per layer.
void read_gemma_window(HfReader& r, ModelSpec& m, bool gemma3, const GemmaDefaults& d) {
  const int window = static_cast<int>(int_or_default(
      r, "sliding_window", d.window, 1, int64_t{1} << 30, "/attention/sliding_window", d.cls));
  if (r.present("sliding_window_size") &&
      r.integer("sliding_window_size", 1, int64_t{1} << 30, "") != window)
    r.fail("/sliding_window_size", "disagrees with sliding_window");
  if (r.present("layer_types")) {
    r.ignore("sliding_window_pattern");
    read_layer_types(r, m, window);
    return;
  }
  r.ignore("layer_types");
  const int pattern =
      gemma3
          ? static_cast<int>(int_or_default(r, "sliding_window_pattern", 6, 1, m.layers, "", d.cls))
          : 2;
  if (pattern == 1) return;  // every layer full attention
  m.attention.sliding_window = window;
  m.attention.window_kind = WindowKind::kSliding;
  m.attention.window_pattern = pattern;
  m.attention.window_layers = pattern - 1;
  r.note("/attention/window_pattern",
         gemma3 ? "sliding_window_pattern: " + std::to_string(pattern - 1) + " sliding of every " +
                      std::to_string(pattern) + " layers"
                : std::string("Gemma2: even layers sliding, odd layers global"));
}

// Gemma 3's SigLIP vision encoder (transformers SiglipVisionModel without its head, and
// Gemma3MultiModalProjector): its parameters, and the training FLOPs of its matrices per
// language-model token of an image ((image_size / patch_size)^2 patches pooled to
// mm_tokens_per_image tokens), for the note that says what fleetsim leaves out.
void siglip_note(HfReader& v, ModelSpec& m, int64_t tokens_per_image) {
  // Absent keys: SiglipVisionConfig's defaults.
  const auto get = [&v](const char* key, int64_t dflt) { return vision_size(v, key, dflt); };
  const double h = get("hidden_size", 768);
  const double ffn = get("intermediate_size", 3072);
  const double layers = get("num_hidden_layers", 12);
  const double image = get("image_size", 224);
  const double patch = get("patch_size", 16);
  const double channels = get("num_channels", 3);
  const double patches = (image / patch) * (image / patch);
  const double block_matrices = 4 * h * h + 2 * h * ffn;
  const double block = block_matrices + 4 * h + ffn + h + 4 * h;  // biases, 2 LayerNorms
  const double projector = h * static_cast<double>(m.hidden) + h;
  const double params = layers * block + h * channels * patch * patch + h + patches * h + 2 * h;
  const double per_token = patches / static_cast<double>(tokens_per_image);
  const double flops =
      6 * (layers * block_matrices * per_token + h * static_cast<double>(m.hidden));
  add_vision_encoder_note(m, {.name = "SigLIP vision encoder",
                              .layers = layers,
                              .width = h,
                              .params = params,
                              .projector = projector,
                              .patches_per_token = per_token,
                              .flops = flops});
}

}  // namespace

int64_t int_or_default(HfReader& r, const char* key, int64_t dflt, int64_t lo, int64_t hi,
                       const std::string& field, const char* cls) {
  const bool absent = !r.present(key);
  const int64_t v = r.integer_or(key, dflt, lo, hi, field);
  if (absent && !field.empty())
    r.note(field,
           std::string(key) + " absent: " + std::to_string(dflt) + ", the default of " + cls);
  return v;
}

void read_gemma3_wrapper(HfReader& r, ModelSpec& m) {
  for (const char* k : {"boi_token_index", "eoi_token_index", "image_token_index", "boi_token_id",
                        "eoi_token_id", "image_token_id"})
    r.ignore(k);
  const int64_t per_image =
      r.present("mm_tokens_per_image") ? r.integer("mm_tokens_per_image", 1, 1 << 20, "") : 256;
  read_vision_config(r, [&](HfReader& v) { siglip_note(v, m, per_image); });
}

void read_gemma(HfReader& r, ModelSpec& m, bool gemma3) {
  const GemmaDefaults& d = gemma3 ? kGemma3 : kGemma2;
  if (r.present("model_type") && r.str("model_type") != (gemma3 ? "gemma3_text" : "gemma2"))
    r.fail("/model_type", std::string("expected '") + (gemma3 ? "gemma3_text" : "gemma2") + "'");
  m.layers = static_cast<int>(
      int_or_default(r, "num_hidden_layers", d.layers, 1, 100000, "/layers", d.cls));
  m.hidden = int_or_default(r, "hidden_size", d.hidden, 1, int64_t{1} << 24, "/hidden", d.cls);
  m.vocab = int_or_default(r, "vocab_size", d.vocab, 1, int64_t{1} << 24, "/vocab", d.cls);
  m.max_seq_len = static_cast<int>(int_or_default(r, "max_position_embeddings", d.max_seq, 1,
                                                  int64_t{1} << 30, "/max_seq_len", d.cls));
  m.tied_embeddings = r.boolean_or("tie_word_embeddings", true, "/tied_embeddings");
  if (!r.present("tie_word_embeddings"))
    r.note("/tied_embeddings",
           std::string("tie_word_embeddings absent: true, the default of ") + d.cls);
  AttentionSpec& a = m.attention;
  a.kind = AttentionKind::kGqa;
  a.heads = static_cast<int>(
      int_or_default(r, "num_attention_heads", d.heads, 1, 4096, "/attention/heads", d.cls));
  a.kv_heads = static_cast<int>(
      int_or_default(r, "num_key_value_heads", d.kv_heads, 1, 4096, "/attention/kv_heads", d.cls));
  if (a.heads % a.kv_heads != 0) r.fail("/num_key_value_heads", "must divide num_attention_heads");
  a.head_dim = static_cast<int>(
      int_or_default(r, "head_dim", d.head_dim, 1, 4096, "/attention/head_dim", d.cls));
  a.qk_norm = gemma3;
  if (gemma3) r.note("/attention/qk_norm", "Gemma3Attention: q_norm / k_norm");
  if (r.boolean_or("attention_bias", false, ""))
    r.fail("/attention_bias", "biases are not modelled for Gemma");
  if (r.boolean_or("use_bidirectional_attention", false, ""))
    r.fail("/use_bidirectional_attention",
           "bidirectional attention (EmbeddingGemma) is not modelled: a causal LM is");
  m.mlp = MlpKind::kGated;
  m.ffn = int_or_default(r, "intermediate_size", d.ffn, 1, int64_t{1} << 24, "/ffn", d.cls);
  // hidden_activation (hidden_act in Gemma 2's files too): GeGLU, the gated MLP of SwiGLU's shape.
  for (const char* k : {"hidden_activation", "hidden_act"}) {
    if (!r.present(k)) {
      r.ignore(k);
      continue;
    }
    const std::string act = r.str(k);
    if (act != "gelu_pytorch_tanh" && act != "gelu")
      r.fail(std::string("/") + k, "expected 'gelu_pytorch_tanh' (GeGLU), got '" + act + "'");
  }
  m.unmodelled.push_back({"activation", "none",
                          "GeGLU (gelu_pytorch_tanh) in place of SwiGLU: the same gated MLP, an "
                          "element-wise difference"});
  m.norms_per_layer = 4;
  r.note("/norms_per_layer",
         "Gemma: input, post_attention, pre_feedforward and post_feedforward RMSNorms");
  read_gemma_window(r, m, gemma3, d);
  // Soft-capping: tanh of the attention scores (inside the attention kernel) and of the logits;
  // Gemma2Config defaults both on (50, 30), Gemma3TextConfig both off (null).
  for (const char* k : {"attn_logit_softcapping", "final_logit_softcapping"}) {
    const bool on = r.present(k) ? r.number(k, 0.0, 1e9) > 0.0 : !gemma3 && !r.has(k);
    if (!r.present(k)) r.ignore(k);
    if (on)
      m.unmodelled.push_back({k, "small",
                              std::string("tanh soft-capping of the ") +
                                  (k[0] == 'a' ? "attention scores inside the attention kernel"
                                               : "logits, one element-wise pass") +
                                  ", not costed"});
  }
  // Scalars without parameters or GEMMs: the query scale, the local layers' RoPE base, the
  // inference cache type.
  for (const char* k : {"query_pre_attn_scalar", "rope_local_base_freq", "cache_implementation"})
    r.ignore(k);
}

}  // namespace fleetsim::hf_internal
