// Hugging Face config.json -> ModelSpec for Kimi K2.5 checkpoints (see hf_config.h): kimi_k25
// (KimiK25ForConditionalGeneration), whose language model is Kimi K2's DeepSeek-V3 decoder in
// text_config, read as deepseek_v3; here the keys around it and the MoonViT vision encoder's note,
// as the checkpoint's remote code and TensorRT-LLM's KimiK25VisionModel build it.
#include <string>
#include <vector>

#include "scenario/hf_config_internal.h"

namespace fleetsim::hf_internal {
namespace {

// MoonViT (SigLIP's block: LayerNorms, qkv and output projections, a two-matrix GELU MLP, with
// biases) and its patch-merger projector (LayerNorm over merge_kernel_size patches, two
// matrices to the text width): the parameters of its matrices, biases and norms (the position
// embedding, fixed or interpolated, is not counted) and the training FLOPs of its matrices per
// language-model token of an image.
void moonvit_note(HfReader& v, ModelSpec& m) {
  const double h = vision_size(v, "vt_hidden_size", 1152);
  const double layers = vision_size(v, "vt_num_hidden_layers", 27);
  const double ffn = vision_size(v, "vt_intermediate_size", 4304);
  const double patch = vision_size(v, "patch_size", 14);
  const double mm = vision_size(v, "mm_hidden_size", static_cast<int64_t>(h));
  double merge = 4;
  if (v.present("merge_kernel_size")) {
    const std::vector<int64_t> k = v.int_list("merge_kernel_size", 1, 64);
    if (k.size() != 2) v.fail("/merge_kernel_size", "expected two sizes (height, width)");
    merge = static_cast<double>(k[0] * k[1]);
  }
  if (v.present("text_hidden_size") &&
      v.integer("text_hidden_size", 1, int64_t{1} << 24, "") != m.hidden)
    v.fail("/text_hidden_size", "disagrees with the language model's hidden_size");
  const double text = static_cast<double>(m.hidden);
  const double block_matrices = 4 * h * h + 2 * h * ffn;                     // qkv, o; fc0, fc1
  const double block = block_matrices + 4 * h + ffn + h + 4 * h;             // biases, 2 LayerNorms
  const double params = layers * block + 3 * patch * patch * h + h + 2 * h;  // + patch, final LN
  const double mm_in = mm * merge;
  const double projector_matrices = mm_in * mm_in + mm_in * text;
  const double projector = 2 * mm_in + projector_matrices + mm_in + text;
  const double flops = 6 * (layers * block_matrices * merge + projector_matrices);
  add_vision_encoder_note(m, {.name = "MoonViT vision encoder",
                              .layers = layers,
                              .width = h,
                              .params = params,
                              .params_note = " without its position embedding",
                              .projector = projector,
                              .patches_per_token = merge,
                              .token = "image or video token",
                              .flops = flops});
}

}  // namespace

void read_kimi_k25_wrapper(HfReader& r, ModelSpec& m) {
  // Media token ids, the video placeholder string and the processor's chunking switch.
  for (const char* k :
       {"media_placeholder_token_id", "video_placeholder", "use_unified_vision_chunk"})
    r.ignore(k);
  read_vision_config(r, [&](HfReader& v) { moonvit_note(v, m); });
}

}  // namespace fleetsim::hf_internal
