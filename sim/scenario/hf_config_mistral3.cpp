// Hugging Face config.json -> ModelSpec for Mistral 3 checkpoints (see hf_config.h): mistral3
// (Mistral3ForConditionalGeneration: Mistral Small 3.1 / 3.2), whose language model is a
// MistralConfig in text_config, read as mistral; here the keys around it and the Pixtral vision
// encoder's note, as transformers' modeling_mistral3.py and modeling_pixtral.py build them.
#include <string>

#include "scenario/hf_config_internal.h"

namespace fleetsim::hf_internal {
namespace {

// The Pixtral vision encoder (PixtralVisionModel: a bias-free patch convolution, ln_pre, layers
// of RMSNorm, q / k / v / o and a gated MLP) and the Mistral3MultiModalProjector (RMSNorm, the
// patch merger's spatial_merge_size^2 x width -> width matrix, linear_1 to the text width, act,
// linear_2): their parameters and the training FLOPs of their matrices per language-model token
// of an image (spatial_merge_size^2 patches), for the note that says what fleetsim leaves out.
void pixtral_note(HfReader& v, ModelSpec& m, double merge, bool projector_bias) {
  // Absent keys: PixtralVisionConfig's defaults.
  const auto get = [&v](const char* key, int64_t dflt) { return vision_size(v, key, dflt); };
  const double h = get("hidden_size", 1024);
  const double ffn = get("intermediate_size", 4096);
  const double layers = get("num_hidden_layers", 24);
  const double patch = get("patch_size", 16);
  const double channels = get("num_channels", 3);
  const double text = static_cast<double>(m.hidden);
  const double block_matrices = 4 * h * h + 3 * h * ffn;  // q, k, v, o; gate, up, down
  const double params = layers * (block_matrices + 2 * h) + channels * patch * patch * h + h;
  const double projector_matrices = merge * merge * h * h + h * text + text * text;
  const double projector =
      h + projector_matrices + (projector_bias ? 2 * text : 0.0);  // norm, merger, linear_1, _2
  const double per_token = merge * merge;
  const double flops = 6 * (layers * block_matrices * per_token + projector_matrices);
  add_vision_encoder_note(m, {.name = "Pixtral vision encoder",
                              .layers = layers,
                              .width = h,
                              .params = params,
                              .projector = projector,
                              .patches_per_token = per_token,
                              .flops = flops});
}

}  // namespace

void read_mistral3_wrapper(HfReader& r, ModelSpec& m) {
  for (const char* k : {"image_token_index", "image_token_id", "vision_feature_layer"})
    r.ignore(k);  // token ids; the encoder layer whose output is used (all layers run)
  if (r.present("projector_hidden_act")) {
    const std::string act = r.str("projector_hidden_act");
    if (act != "gelu" && act != "gelu_pytorch_tanh" && act != "silu")
      r.fail("/projector_hidden_act", "expected 'gelu', got '" + act + "'");
  }
  r.ignore("projector_hidden_act");  // element-wise
  const bool bias = r.boolean_or("multimodal_projector_bias", false, "");
  const double merge = static_cast<double>(r.integer_or("spatial_merge_size", 2, 1, 64, ""));
  read_vision_config(r, [&](HfReader& v) { pixtral_note(v, m, merge, bias); });
}

}  // namespace fleetsim::hf_internal
