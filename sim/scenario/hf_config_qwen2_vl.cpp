// Hugging Face config.json -> ModelSpec for Qwen2-VL and Qwen2.5-VL checkpoints (see hf_config.h):
// qwen2_vl and qwen2_5_vl, whose language model is Qwen2's decoder, read as qwen2 from the top
// level (the checkpoints' own files) or from text_config (files transformers 4.53+ saved, which
// keep a copy of it at the top level); here the keys around it and the vision encoder's note, as
// transformers' modeling_qwen2_vl.py and modeling_qwen2_5_vl.py build them.
#include <string>

#include "scenario/hf_config_internal.h"

namespace fleetsim::hf_internal {
namespace {

// Qwen2.5-VL's vision encoder (Qwen2_5_VisionTransformerPretrainedModel: a bias-free Conv3d patch
// embedding, blocks of RMSNorm, qkv and proj with biases, a SwiGLU MLP with biases; the patch
// merger: RMSNorm, 4h -> 4h -> out_hidden_size with biases) or Qwen2-VL's (LayerNorms with
// biases, a plain MLP of mlp_ratio x embed_dim): parameters and the training FLOPs of their
// matrices per language-model token of an image (spatial_merge_size^2 patches).
void qwen2_vl_vision_note(HfReader& v, ModelSpec& m, bool v2_5) {
  // Absent keys: Qwen2_5_VLVisionConfig's / Qwen2VLVisionConfig's defaults.
  const auto get = [&v](const char* key, int64_t dflt) { return vision_size(v, key, dflt); };
  const double h = v2_5 ? get("hidden_size", 3584) : get("embed_dim", 1280);
  const double depth = get("depth", 32);
  const double ffn = v2_5 ? get("intermediate_size", 3420) : h * get("mlp_ratio", 4);
  const double out = v2_5 ? get("out_hidden_size", 3584) : get("hidden_size", 3584);
  const double merge = get("spatial_merge_size", 2);
  const double patch = get("patch_size", 14);
  const double tpatch = get("temporal_patch_size", 2);
  const double channels = get("in_channels", 3);
  const double mlp = v2_5 ? 3 * h * ffn : 2 * h * ffn;
  const double block_matrices = 4 * h * h + mlp;                 // qkv, proj, the MLP
  const double norms = v2_5 ? 2 * h : 4 * h;                     // RMSNorm / LayerNorm weights
  const double biases = 4 * h + (v2_5 ? 2 * ffn + h : ffn + h);  // qkv, proj; the MLP's
  const double hm = h * merge * merge;
  const double merger_matrices = hm * hm + hm * out;
  const double merger = (v2_5 ? h : 2 * h) + merger_matrices + hm + out;
  const double params =
      depth * (block_matrices + norms + biases) + channels * tpatch * patch * patch * h + merger;
  const double flops = 6 * (depth * block_matrices * merge * merge + merger_matrices);
  add_vision_encoder_note(m,
                          {.name = v2_5 ? "Qwen2.5-VL vision encoder" : "Qwen2-VL vision encoder",
                           .unit = "blocks",
                           .layers = depth,
                           .width = h,
                           .params = params,
                           .token = "image or video token",
                           .flops = flops});
}

}  // namespace

void read_qwen2_vl_wrapper(HfReader& r, ModelSpec& m, bool nested) {
  const bool v2_5 = r.str("model_type") == "qwen2_5_vl";
  for (const char* k : {"image_token_id", "video_token_id", "vision_start_token_id",
                        "vision_end_token_id", "vision_token_id"})
    r.ignore(k);
  if (nested) {
    // transformers 4.53+ saves the language model in text_config and keeps its keys at the top
    // level too: the sizes must agree with text_config's, the rest is that copy.
    const std::pair<const char*, int64_t> sizes[] = {{"hidden_size", m.hidden},
                                                     {"vocab_size", m.vocab},
                                                     {"num_attention_heads", m.attention.heads},
                                                     {"num_key_value_heads", m.attention.kv_heads},
                                                     {"num_hidden_layers", m.layers},
                                                     {"intermediate_size", m.ffn}};
    for (const auto& [k, value] : sizes)
      if (r.present(k) && r.integer(k, 0, int64_t{1} << 40, "") != value)
        r.fail(std::string("/") + k, std::string("disagrees with /text_config/") + k);
    for (const char* k : {"max_position_embeddings", "max_window_layers", "rope_scaling",
                          "rope_theta", "sliding_window", "use_sliding_window", "hidden_act",
                          "rms_norm_eps", "attention_dropout", "initializer_range", "layer_types"})
      r.ignore(k);
  }
  read_vision_config(r, [&](HfReader& v) { qwen2_vl_vision_note(v, m, v2_5); });
}

}  // namespace fleetsim::hf_internal
