// Hugging Face config.json -> ModelSpec for GPT-2 (model_type gpt2; transformers
// modeling_gpt2.py). docs/models.md.
#include "core/error.h"
#include "scenario/hf_config_internal.h"
#include "scenario/hf_reader.h"

namespace fleetsim::hf_internal {

// GPT-2: learned positions, LayerNorm, biases everywhere, plain GELU MLP, tied head.
void read_gpt2(HfReader& r, ModelSpec& m) {
  m.layers = static_cast<int>(r.integer("n_layer", 1, 100000, "/layers"));
  m.hidden = r.integer("n_embd", 1, int64_t{1} << 24, "/hidden");
  m.vocab = r.integer("vocab_size", 1, int64_t{1} << 24, "/vocab");
  m.max_seq_len = static_cast<int>(r.integer("n_positions", 1, int64_t{1} << 30, "/max_seq_len"));
  AttentionSpec& a = m.attention;
  a.heads = static_cast<int>(r.integer("n_head", 1, 4096, "/attention/heads"));
  if (m.hidden % a.heads != 0) r.fail("/n_head", "must divide n_embd");
  a.kv_heads = a.heads;
  a.head_dim = static_cast<int>(m.hidden / a.heads);
  a.qkv_bias = true;
  m.ffn = r.present("n_inner") ? r.integer("n_inner", 1, int64_t{1} << 24, "/ffn") : 4 * m.hidden;
  if (!r.present("n_inner")) {
    r.ignore("n_inner");
    r.note("/ffn", "n_inner null: 4 x n_embd");
  }
  m.mlp = MlpKind::kPlain;
  m.norm = NormKind::kLayer;
  m.linear_bias = true;
  m.learned_positions = true;
  m.tied_embeddings = true;
  r.ignore("activation_function");
  r.ignore("tie_word_embeddings");
  r.note("/mlp", "GPT2MLP: c_fc, c_proj with biases (plain)");
  r.note("/tied_embeddings", "GPT2LMHeadModel ties lm_head to wte");
  r.note("/learned_positions", "wpe: n_positions x n_embd");
  for (const char* k : {"n_ctx"})
    r.ignore(k);
}

}  // namespace fleetsim::hf_internal
