// Hugging Face config.json -> ModelSpec for Llama 4 (see hf_config.h): llama4_text
// (Llama4ForCausalLM) and llama4 (Llama4ForConditionalGeneration, the language model in
// text_config), as transformers' configuration_llama4.py / modeling_llama4.py define them. A key
// absent from the file takes Llama4TextConfig's default, as the class does.
#include <algorithm>
#include <string>
#include <vector>

#include "scenario/hf_config_internal.h"

namespace fleetsim::hf_internal {
namespace {

constexpr const char* kCls = "Llama4TextConfig";

// Which layers run chunked attention. Llama4TextConfig.__post_init__: layer_types when given;
// else a RoPE layer (no_rope_layers[i] == 1) is "chunked_attention" and a NoPE layer
// "full_attention"; no_rope_layers absent or empty: every no_rope_layer_interval-th layer NoPE.
std::vector<bool> chunked_layers(HfReader& r, int layers, std::string& from) {
  if (r.present("layer_types")) {
    r.ignore("no_rope_layers");  // with layer_types given, RoPE only (no GEMM)
    r.ignore("no_rope_layer_interval");
    from = "layer_types";
    return r.word_flags("layer_types", layers, "chunked_attention", "full_attention");
  }
  std::vector<bool> chunked(static_cast<size_t>(layers));
  std::vector<int64_t> rope;
  if (r.present("no_rope_layers")) rope = r.int_list("no_rope_layers", 0, 1);
  if (!rope.empty()) {
    // "at least the same length as the number of layers" (the class docstring)
    if (static_cast<int>(rope.size()) < layers)
      r.fail("/no_rope_layers", "expected at least one entry per layer (" + std::to_string(layers) +
                                    "), got " + std::to_string(rope.size()));
    for (int i = 0; i < layers; ++i)
      chunked[i] = rope[i] == 1;
    r.ignore("no_rope_layer_interval");
    from = "no_rope_layers (1: RoPE, chunked)";
    return chunked;
  }
  if (rope.empty() && !r.present("no_rope_layers")) r.ignore("no_rope_layers");  // null
  const bool given = r.present("no_rope_layer_interval");
  const int64_t interval =
      int_or_default(r, "no_rope_layer_interval", 4, 1, int64_t{1} << 20, "", kCls);
  for (int i = 0; i < layers; ++i)
    chunked[i] = (i + 1) % interval != 0;
  from = "no_rope_layer_interval " + std::to_string(interval) +
         (given ? "" : std::string(" (the default of ") + kCls + ")") + ": every such layer NoPE";
  return chunked;
}

// Chunked attention (attention_chunk_size) on the RoPE layers, full attention on the NoPE ones.
void read_llama4_window(HfReader& r, ModelSpec& m) {
  std::string from;
  const std::vector<bool> chunked = chunked_layers(r, m.layers, from);
  const bool any = std::find(chunked.begin(), chunked.end(), true) != chunked.end();
  if (r.has("attention_chunk_size") && !r.present("attention_chunk_size")) {
    r.ignore("attention_chunk_size");
    if (any)
      r.fail("/attention_chunk_size",
             "null, but layers are chunked_attention (their RoPE layers): expected a chunk size");
    return;
  }
  const int chunk = static_cast<int>(int_or_default(
      r, "attention_chunk_size", 8192, 1, int64_t{1} << 30, "/attention/sliding_window", kCls));
  if (!any) return;
  int p = 0, w = 0;
  if (!periodic_prefix(chunked, p, w))
    r.fail(r.present("layer_types") ? "/layer_types" : "/no_rope_layers",
           "the chunked / full pattern is not periodic with the chunked layers first in each "
           "period; fleetsim cannot express it");
  AttentionSpec& a = m.attention;
  a.sliding_window = chunk;
  a.window_kind = WindowKind::kChunked;
  a.window_pattern = p;
  a.window_layers = w;
  r.note("/attention/window_kind",
         "Llama 4: chunked attention (attention_chunk_size) on the RoPE layers");
  r.note("/attention/window_pattern", from + ": " + std::to_string(w) +
                                          " chunked (RoPE) of every " + std::to_string(p) +
                                          " layers, the rest NoPE and full");
}

// MoE layers: moe_layers when given, else every interleave_moe_layer_step-th layer (layer i when
// (i + 1) % step == 0, fleetsim's layer_freq); each a Llama4TextMoe (router, routed experts, one
// shared expert of intermediate_size); the other layers a Llama4TextMLP of
// intermediate_size_mlp.
void read_llama4_moe(HfReader& r, ModelSpec& m) {
  m.ffn = int_or_default(r, "intermediate_size_mlp", 16384, 1, int64_t{1} << 24, "/ffn", kCls);
  r.note("/ffn", "intermediate_size_mlp: the dense layers' Llama4TextMLP");
  int step = static_cast<int>(
      int_or_default(r, "interleave_moe_layer_step", 1, 1, m.layers, "/moe/layer_freq", kCls));
  if (r.present("moe_layers")) {
    const std::vector<int64_t> list = r.int_list("moe_layers", 0, m.layers - 1);
    step = list.empty() ? 0 : static_cast<int>(list[0]) + 1;
    std::vector<int64_t> want;
    for (int i = step - 1; step > 0 && i < m.layers; i += step)
      want.push_back(i);
    if (list != want)
      r.fail("/moe_layers",
             "only every k-th layer MoE (k-1, 2k-1, ..., as interleave_moe_layer_step makes it) "
             "can be expressed");
    if (step > 0)
      r.note("/moe/layer_freq", step == 1 ? std::string("moe_layers lists every layer")
                                          : "moe_layers: layers " + std::to_string(step - 1) +
                                                ", " + std::to_string(2 * step - 1) + ", ...");
  }
  const auto keep = [&r](const char* k) { r.ignore(k); };
  if (step == 0) {  // moe_layers []: every layer a dense MLP
    for (const char* k : {"num_local_experts", "num_experts_per_tok", "intermediate_size"})
      keep(k);
    r.note("/moe/experts", "moe_layers is empty: no MoE layer");
    return;
  }
  MoeSpec& s = m.moe;
  s.experts = static_cast<int>(
      int_or_default(r, "num_local_experts", 16, 1, 1 << 16, "/moe/experts", kCls));
  s.top_k = static_cast<int>(
      int_or_default(r, "num_experts_per_tok", 1, 1, s.experts, "/moe/top_k", kCls));
  s.expert_ffn =
      int_or_default(r, "intermediate_size", 8192, 1, int64_t{1} << 24, "/moe/expert_ffn", kCls);
  s.layer_freq = step;
  s.shared_experts = 1;
  s.shared_expert_ffn = s.expert_ffn;
  r.note("/moe/shared_experts", "Llama4TextMoe: one shared_expert on every MoE layer");
  r.note("/moe/shared_expert_ffn", "the shared expert is a Llama4TextMLP of intermediate_size");
  m.unmodelled.push_back({"router_scoring", "none",
                          "sigmoid of the top-k router logits scales the expert input; the "
                          "shared expert always runs; routing statistics are modelled in moe/"});
}

// Llama 4's vision encoder (transformers Llama4VisionModel with its pixel-shuffle adapter, and
// Llama4MultiModalProjector): its parameters and the training FLOPs of its matrices per
// language-model token of an image (1 / pixel_shuffle_ratio^2 patches), for the note that says
// what fleetsim leaves out.
void llama4_vision_note(HfReader& v, ModelSpec& m) {
  // Absent keys: Llama4VisionConfig's defaults.
  const auto get = [&v](const char* key, int64_t dflt) { return vision_size(v, key, dflt); };
  const double h = get("hidden_size", 768);
  const double layers = get("num_hidden_layers", 34);
  const double ffn = get("intermediate_size", 5632);
  const double out = get("vision_output_dim", 7680);
  const double image = get("image_size", 448);
  const double patch = get("patch_size", 14);
  const double channels = get("num_channels", 3);
  const double pin = get("projector_input_dim", 4096);
  const double pout = get("projector_output_dim", 4096);
  const double ratio =
      v.present("pixel_shuffle_ratio") ? v.number("pixel_shuffle_ratio", 0.01, 1) : 0.5;
  const double block_matrices = 4 * h * h + 2 * h * ffn;           // q, k, v, o; fc1, fc2
  const double block = block_matrices + 4 * h + ffn + h + 4 * h;   // biases, 2 LayerNorms
  const double positions = (image / patch) * (image / patch) + 1;  // + the class token
  const double adapter = ffn * pin + pout * pout;                  // vision_adapter fc1, fc2
  const double params =
      layers * block + channels * patch * patch * h + h + positions * h + 4 * h + adapter;
  const double projector = out * static_cast<double>(m.hidden);
  const double per_token = 1 / (ratio * ratio);
  const double flops = 6 * (layers * block_matrices * per_token + adapter + projector);
  add_vision_encoder_note(m, {.name = "vision encoder",
                              .layers = layers,
                              .width = h,
                              .params = params,
                              .params_note = " with its pixel-shuffle adapter",
                              .projector = projector,
                              .patches_per_token = per_token,
                              .flops = flops});
}

}  // namespace

void read_llama4(HfReader& r, ModelSpec& m) {
  if (r.present("model_type") && r.str("model_type") != "llama4_text")
    r.fail("/model_type", "expected 'llama4_text'");
  m.layers =
      static_cast<int>(int_or_default(r, "num_hidden_layers", 48, 1, 100000, "/layers", kCls));
  m.hidden = int_or_default(r, "hidden_size", 5120, 1, int64_t{1} << 24, "/hidden", kCls);
  m.vocab = int_or_default(r, "vocab_size", 202048, 1, int64_t{1} << 24, "/vocab", kCls);
  m.max_seq_len = static_cast<int>(int_or_default(r, "max_position_embeddings", 4096 * 32, 1,
                                                  int64_t{1} << 30, "/max_seq_len", kCls));
  m.tied_embeddings = r.boolean_or("tie_word_embeddings", false, "/tied_embeddings");
  m.mlp = MlpKind::kGated;
  r.note("/mlp", "gated (gate_proj, up_proj, down_proj; the experts' fused gate_up_proj)");
  r.note("/norm", "RMSNorm, pre-norm: input_layernorm and post_attention_layernorm");
  if (r.present("hidden_act") && r.str("hidden_act") != "silu")
    r.fail("/hidden_act",
           "expected 'silu' (the gated MLP's SwiGLU); another activation is not "
           "modelled");
  r.ignore("hidden_act");
  AttentionSpec& a = m.attention;
  a.kind = AttentionKind::kGqa;
  a.heads = static_cast<int>(
      int_or_default(r, "num_attention_heads", 40, 1, 4096, "/attention/heads", kCls));
  a.kv_heads = static_cast<int>(
      int_or_default(r, "num_key_value_heads", 8, 1, 4096, "/attention/kv_heads", kCls));
  if (a.heads % a.kv_heads != 0) r.fail("/num_key_value_heads", "must divide num_attention_heads");
  a.head_dim =
      static_cast<int>(int_or_default(r, "head_dim", 128, 1, 4096, "/attention/head_dim", kCls));
  a.qkv_bias = r.boolean_or("attention_bias", false, "/attention/qkv_bias");
  if (a.qkv_bias)
    m.unmodelled.push_back({"o_proj_bias", "small", "attention_bias: hidden values per layer"});
  read_llama4_moe(r, m);
  read_llama4_window(r, m);
  if (r.boolean_or("use_qk_norm", true, ""))
    m.unmodelled.push_back({"qk_l2_norm", "none",
                            "use_qk_norm: a parameter-free L2 norm of q and k on the RoPE layers"});
  m.unmodelled.push_back(
      {"nope_layers", "none", "the NoPE layers skip RoPE (position encoding costs no GEMM)"});
  // transformers 4.51 wrote attn_temperature_tuning as an integer (4); later ones as a bool.
  const bool tuning = r.is_number("attn_temperature_tuning")
                          ? r.number("attn_temperature_tuning", -1e9, 1e9) != 0
                          : r.boolean_or("attn_temperature_tuning", true, "");
  if (tuning)
    m.unmodelled.push_back({"attn_temperature_tuning", "none",
                            "the NoPE layers scale q by position (floor_scale, attn_scale): "
                            "element-wise"});
  for (const char* k : {"floor_scale", "attn_scale", "for_llm_compressor", "cache_implementation"})
    r.ignore(k);
}

void read_llama4_wrapper(HfReader& r, ModelSpec& m) {
  for (const char* k : {"boi_token_index", "eoi_token_index", "image_token_index", "boi_token_id",
                        "eoi_token_id", "image_token_id"})
    r.ignore(k);
  read_vision_config(r, [&](HfReader& v) { llama4_vision_note(v, m); });
}

}  // namespace fleetsim::hf_internal
