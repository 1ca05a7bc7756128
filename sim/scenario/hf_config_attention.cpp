// Hugging Face config.json attention readers shared by the importer's families (see
// hf_config.h): grouped-query attention, DeepSeek's multi-head latent attention and the lightning
// indexer of its sparse attention.
#include <string>
#include <vector>

#include "scenario/hf_config_internal.h"

namespace fleetsim::hf_internal {

void read_gqa(HfReader& r, ModelSpec& m) {
  AttentionSpec& a = m.attention;
  a.kind = AttentionKind::kGqa;
  a.heads = static_cast<int>(r.integer("num_attention_heads", 1, 4096, "/attention/heads"));
  a.kv_heads =
      r.present("num_key_value_heads")
          ? static_cast<int>(r.integer("num_key_value_heads", 1, 4096, "/attention/kv_heads"))
          : a.heads;
  if (!r.present("num_key_value_heads"))
    r.note("/attention/kv_heads", "num_key_value_heads absent: heads (multi-head attention)");
  if (a.heads % a.kv_heads != 0) {
    r.fail("/num_key_value_heads", "must divide num_attention_heads (" + std::to_string(a.heads) +
                                       "), got " + std::to_string(a.kv_heads));
  }
  if (r.present("head_dim")) {
    a.head_dim = static_cast<int>(r.integer("head_dim", 1, 4096, "/attention/head_dim"));
  } else {
    if (m.hidden % a.heads != 0)
      r.fail("/hidden_size",
             "head_dim absent and hidden_size is not a multiple of "
             "num_attention_heads (" +
                 std::to_string(a.heads) + ")");
    a.head_dim = static_cast<int>(m.hidden / a.heads);
    r.ignore("head_dim");  // null: derived, as the config classes' __post_init__ does
    r.note("/attention/head_dim", "head_dim absent: hidden_size / num_attention_heads");
  }
}

void read_indexer(HfReader& r, AttentionSpec& a) {
  a.sparse_topk =
      static_cast<int>(r.integer("index_topk", 1, int64_t{1} << 30, "/attention/sparse_topk"));
  a.indexer_heads =
      static_cast<int>(r.integer("index_n_heads", 1, 4096, "/attention/indexer_heads"));
  a.indexer_head_dim =
      static_cast<int>(r.integer("index_head_dim", 1, 4096, "/attention/indexer_head_dim"));
}

void read_mla(HfReader& r, ModelSpec& m) {
  AttentionSpec& a = m.attention;
  a.kind = AttentionKind::kMla;
  a.heads = static_cast<int>(r.integer("num_attention_heads", 1, 4096, "/attention/heads"));
  a.kv_heads = static_cast<int>(r.integer("num_key_value_heads", 1, 4096, "/attention/kv_heads"));
  if (a.heads % a.kv_heads != 0) r.fail("/num_key_value_heads", "must divide num_attention_heads");
  a.q_lora_rank =
      r.present("q_lora_rank")
          ? static_cast<int>(r.integer("q_lora_rank", 1, m.hidden, "/attention/q_lora_rank"))
          : 0;
  if (!r.present("q_lora_rank")) {
    r.ignore("q_lora_rank");
    r.note("/attention/q_lora_rank", "q_lora_rank null: q projected directly (0)");
  }
  a.kv_lora_rank =
      static_cast<int>(r.integer("kv_lora_rank", 1, m.hidden, "/attention/kv_lora_rank"));
  a.qk_nope_head_dim =
      static_cast<int>(r.integer("qk_nope_head_dim", 1, 4096, "/attention/qk_nope_head_dim"));
  a.qk_rope_head_dim =
      static_cast<int>(r.integer("qk_rope_head_dim", 0, 4096, "/attention/qk_rope_head_dim"));
  a.v_head_dim = static_cast<int>(r.integer("v_head_dim", 1, 4096, "/attention/v_head_dim"));
  a.head_dim = a.v_head_dim;
  r.note("/attention/head_dim", "MLA: the v head dim (v_head_dim)");
  r.ignore("head_dim");  // newer DeepseekV3Config: qk_rope_head_dim, derived
  // DeepseekV3Config stores the derived qk_nope_head_dim + qk_rope_head_dim as qk_head_dim.
  if (r.present("qk_head_dim") &&
      r.integer("qk_head_dim", 1, 8192, "") != a.qk_nope_head_dim + a.qk_rope_head_dim)
    r.fail("/qk_head_dim", "must equal qk_nope_head_dim + qk_rope_head_dim (" +
                               std::to_string(a.qk_nope_head_dim + a.qk_rope_head_dim) + ")");
  r.ignore("qk_head_dim");
  if (r.boolean_or("attention_bias", false, ""))
    r.fail("/attention_bias", "not supported with MLA");
  // DeepSeek-V3.2 (DeepseekV32Config): DeepSeek sparse attention, all three keys or none.
  const bool dsa =
      r.present("index_topk") || r.present("index_n_heads") || r.present("index_head_dim");
  if (dsa) {
    read_indexer(r, a);
    r.note("/attention/indexer_head_dim",
           "config.json:/index_head_dim; the indexer's key LayerNorm (weight and bias) counted");
  }
}

// GlmMoeDsaConfig's per-layer indexer schedule (indexer_types, or the index_topk_freq /
// index_skip_topk_offset / index_topk_pattern it is derived from): a "shared" layer reuses the
// previous layer's top-k instead of running its indexer, which fleetsim does not model; every
// layer "full" (GLM-5's) is read.
void read_indexer_schedule(HfReader& r, int layers) {
  if (r.present("indexer_types")) {
    const std::vector<std::string> t = r.string_list("indexer_types");
    if (static_cast<int>(t.size()) != layers)
      r.fail("/indexer_types", "expected one entry per layer (" + std::to_string(layers) +
                                   "), got " + std::to_string(t.size()));
    for (size_t i = 0; i < t.size(); ++i)
      if (t[i] != "full")
        r.fail("/indexer_types/" + std::to_string(i),
               "expected 'full': a layer that reuses another's top-k ('" + t[i] +
                   "') is not modelled");
  }
  r.ignore("indexer_types");
  if (r.present("index_topk_freq") && r.integer("index_topk_freq", 0, 1 << 20, "") > 1)
    r.fail("/index_topk_freq",
           "layers that reuse another's top-k are not modelled (only 1, every layer's own "
           "indexer)");
  if (r.is_string("index_topk_pattern") &&
      r.str("index_topk_pattern").find_first_not_of('F') != std::string::npos)
    r.fail("/index_topk_pattern", "'S' layers (reusing another's top-k) are not modelled");
  for (const char* k : {"index_topk_freq", "index_skip_topk_offset", "index_topk_pattern"})
    r.ignore(k);
}

}  // namespace fleetsim::hf_internal
