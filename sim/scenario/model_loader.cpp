// Strict reader for model definitions (see model_loader.h). Layout of a model object:
//   id, display_name, developer, source[], aliases[], layers, hidden, ffn, vocab,
//   benchmark_vocab?, mlp "gated"|"plain", norm "rmsnorm"|"layernorm", norms_per_layer,
//   linear_bias, tied_embeddings, learned_positions, max_seq_len,
//   attention{kind "gqa"|"mla"|"shared_kv", heads, kv_heads, head_dim, qkv_bias, qk_norm,
//             q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim,
//             sliding_window, window_kind "sliding"|"chunked", window_pattern, window_layers,
//             output_gate, sparse_topk, indexer_heads, indexer_head_dim,
//             o_groups, o_lora_rank, sinks, compress_ratios[], csa_ratio (shared_kv only)},
//   moe?{experts, shared_experts, top_k, expert_ffn, shared_expert_ffn, first_k_dense,
//        layer_freq, shared_expert_gate, latent, hash_layers},
//   hyper_connections?{streams, sinkhorn_iters} (mHC residual streams),
//   blocks? "M*-EG..." (hybrid per-layer pattern, one character per layer: M Mamba-2,
//   * attention, - dense MLP, E MoE, G Gated DeltaNet),
//   mamba?{heads, head_dim, state, groups, conv_kernel, chunk},
//   gdn?{qk_heads, v_heads, qk_head_dim, v_head_dim, conv_kernel, chunk, kda},
//   mtp_layers, published_total_params?, published_active_params?,
//   unmodelled[{feature, impact "none"|"small"|"material", note}], origin?{field: text}, notes?
#include "scenario/model_loader.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "core/error.h"
#include "scenario/hf_config.h"
#include "scenario/json_reader.h"
#include "scenario/scenario.h"

namespace fleetsim {
namespace {

using namespace jsonr;

const std::vector<std::string> kModelKeys = {"id",
                                             "display_name",
                                             "developer",
                                             "source",
                                             "aliases",
                                             "layers",
                                             "hidden",
                                             "ffn",
                                             "vocab",
                                             "benchmark_vocab",
                                             "mlp",
                                             "norm",
                                             "norms_per_layer",
                                             "linear_bias",
                                             "tied_embeddings",
                                             "learned_positions",
                                             "max_seq_len",
                                             "attention",
                                             "moe",
                                             "blocks",
                                             "mamba",
                                             "gdn",
                                             "hyper_connections",
                                             "mtp_layers",
                                             "published_total_params",
                                             "published_active_params",
                                             "unmodelled",
                                             "origin",
                                             "notes"};
const std::vector<std::string> kAttentionKeys = {
    "kind",        "heads",          "kv_heads",        "head_dim",         "qkv_bias",
    "qk_norm",     "q_lora_rank",    "kv_lora_rank",    "qk_nope_head_dim", "qk_rope_head_dim",
    "v_head_dim",  "sliding_window", "window_kind",     "window_pattern",   "window_layers",
    "output_gate", "sparse_topk",    "indexer_heads",   "indexer_head_dim", "o_groups",
    "o_lora_rank", "sinks",          "compress_ratios", "csa_ratio",        "qk_norm_all_heads"};
const std::vector<std::string> kMoeKeys = {"experts",    "shared_experts",     "top_k",
                                           "expert_ffn", "shared_expert_ffn",  "first_k_dense",
                                           "layer_freq", "shared_expert_gate", "latent",
                                           "hash_layers"};
const std::vector<std::string> kHyperKeys = {"streams", "sinkhorn_iters"};
const std::vector<std::string> kMambaKeys = {"heads",  "head_dim",    "state",
                                             "groups", "conv_kernel", "chunk"};
const std::vector<std::string> kGdnKeys = {"qk_heads",    "v_heads", "qk_head_dim", "v_head_dim",
                                           "conv_kernel", "chunk",   "kda"};
const std::vector<std::string> kUnmodelledKeys = {"feature", "impact", "note"};

constexpr int64_t kMaxWidth = int64_t{1} << 24;  // 16 M: hidden / FFN widths
constexpr int64_t kMaxVocab = int64_t{1} << 24;

std::vector<std::string> string_list(const Obj& o, const std::string& key) {
  const json& v = o.get(key);
  if (!v.is_array())
    o.fail(o.at(key), std::string("expected an array of strings, got ") + type_name(v));
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) {
      o.fail(o.at(key) + "/" + std::to_string(i),
             std::string("expected a string, got ") + type_name(v[i]));
    }
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

bool bool_or(const Obj& o, const std::string& key, bool dflt) {
  return o.has(key) ? o.boolean(key) : dflt;
}
int int_or(const Obj& o, const std::string& key, int64_t lo, int64_t hi, int dflt) {
  return o.has(key) ? static_cast<int>(o.integer(key, lo, hi)) : dflt;
}

// DeepSeek sparse attention: top-k and the lightning indexer's heads, all three or none; MLA only
// (DeepSeek-V3.2 runs MLA in MQA mode over the selected tokens).
void read_sparse(const Obj& a, AttentionSpec* s) {
  if (!a.has("sparse_topk")) {
    for (const char* k : {"indexer_heads", "indexer_head_dim"})
      if (a.has(k)) a.fail(a.at(k), "only valid with sparse_topk > 0");
    return;
  }
  s->sparse_topk = static_cast<int>(a.integer("sparse_topk", 1, int64_t{1} << 30));
  s->indexer_heads = static_cast<int>(a.integer("indexer_heads", 1, 4096));
  s->indexer_head_dim = static_cast<int>(a.integer("indexer_head_dim", 1, 4096));
  if (s->kind == AttentionKind::kGqa)
    a.fail(a.at("sparse_topk"),
           "DeepSeek sparse attention is only modelled with kind \"mla\" (MQA mode of MLA) and "
           "as the CSA indexer of kind \"shared_kv\"");
  if (s->kind == AttentionKind::kMla && s->sliding_window > 0)
    a.fail(a.at("sparse_topk"), "not modelled together with a sliding window");
}

std::vector<int> int_list(const Obj& o, const std::string& key, int64_t lo, int64_t hi) {
  const json& v = o.get(key);
  if (!v.is_array())
    o.fail(o.at(key), std::string("expected an array of integers, got ") + type_name(v));
  std::vector<int> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number_integer() || v[i].get<int64_t>() < lo || v[i].get<int64_t>() > hi)
      o.fail(o.at(key) + "/" + std::to_string(i),
             "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    out.push_back(v[i].get<int>());
  }
  return out;
}

// DeepSeek-V4's shared-KV attention (model.h AttentionKind::kSharedKv): q latent, one KV head,
// grouped low-rank output, sinks, a window on every layer and per-layer compress_ratios.
void read_shared_kv(const Obj& a, int64_t hidden, AttentionSpec* s) {
  s->q_lora_rank = static_cast<int>(a.integer("q_lora_rank", 1, hidden));
  s->qk_rope_head_dim = int_or(a, "qk_rope_head_dim", 0, s->head_dim, 0);
  s->o_groups = static_cast<int>(a.integer("o_groups", 1, s->heads));
  if (s->heads % s->o_groups != 0)
    a.fail(a.at("o_groups"), "must divide heads (" + std::to_string(s->heads) + ")");
  s->o_lora_rank = static_cast<int>(a.integer("o_lora_rank", 1, kMaxWidth));
  s->sinks = bool_or(a, "sinks", false);
  if (s->kv_heads != 1) a.fail(a.at("kv_heads"), "shared-KV attention has one KV head: expected 1");
  for (const char* k : {"kv_lora_rank", "qk_nope_head_dim", "v_head_dim", "output_gate"})
    if (a.has(k)) a.fail(a.at(k), "not valid with kind \"shared_kv\"");
  if (s->qk_norm || s->qkv_bias)
    a.fail(a.at(s->qk_norm ? "qk_norm" : "qkv_bias"),
           "not valid with kind \"shared_kv\" (its q latent and kv norms are counted)");
  if (s->sliding_window == 0 || s->window_pattern != 1 || s->window_kind != WindowKind::kSliding)
    a.fail(a.at("sliding_window"),
           "shared-KV attention has a sliding window on every layer (window_pattern 1)");
  s->compress_ratios = int_list(a, "compress_ratios", 0, int64_t{1} << 20);
  s->csa_ratio = int_or(a, "csa_ratio", 1, int64_t{1} << 20, 0);
  const bool csa =
      std::count(s->compress_ratios.begin(), s->compress_ratios.end(), s->csa_ratio) > 0 &&
      s->csa_ratio > 0;
  if (csa != (s->sparse_topk > 0))
    a.fail(a.at(csa ? "sparse_topk" : "csa_ratio"),
           csa ? "missing: layers of ratio csa_ratio (CSA) need the indexer (sparse_topk, "
                 "indexer_heads, indexer_head_dim)"
               : "no layer has ratio csa_ratio: the indexer keys are only valid with CSA layers");
}

AttentionSpec read_attention(const Obj& a, int64_t hidden) {
  AttentionSpec s;
  const std::string kind = a.choice("kind", {"gqa", "mla", "shared_kv"});
  s.kind = kind == "mla"         ? AttentionKind::kMla
           : kind == "shared_kv" ? AttentionKind::kSharedKv
                                 : AttentionKind::kGqa;
  s.heads = static_cast<int>(a.integer("heads", 1, 4096));
  s.kv_heads = static_cast<int>(a.integer("kv_heads", 1, 4096));
  s.head_dim = static_cast<int>(a.integer("head_dim", 1, 4096));
  s.qkv_bias = bool_or(a, "qkv_bias", false);
  s.qk_norm = bool_or(a, "qk_norm", false);
  s.qk_norm_all_heads = bool_or(a, "qk_norm_all_heads", false);
  if (s.qk_norm_all_heads && !s.qk_norm)
    a.fail(a.at("qk_norm_all_heads"), "only valid with qk_norm true");
  if (s.heads % s.kv_heads != 0) {
    a.fail(a.at("kv_heads"), "must divide heads (" + std::to_string(s.heads) + "), got " +
                                 std::to_string(s.kv_heads));
  }
  const std::vector<std::string> mla = {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
                                        "qk_rope_head_dim", "v_head_dim"};
  if (s.kind == AttentionKind::kMla) {
    s.q_lora_rank = static_cast<int>(a.integer("q_lora_rank", 0, hidden));
    s.kv_lora_rank = static_cast<int>(a.integer("kv_lora_rank", 1, hidden));
    s.qk_nope_head_dim = static_cast<int>(a.integer("qk_nope_head_dim", 1, 4096));
    s.qk_rope_head_dim = static_cast<int>(a.integer("qk_rope_head_dim", 0, 4096));
    s.v_head_dim = static_cast<int>(a.integer("v_head_dim", 1, 4096));
    if (s.head_dim != s.v_head_dim) {
      a.fail(a.at("head_dim"), "for MLA head_dim is the v head dim and must equal v_head_dim (" +
                                   std::to_string(s.v_head_dim) + "), got " +
                                   std::to_string(s.head_dim));
    }
    if (s.qk_norm) a.fail(a.at("qk_norm"), "not supported with MLA (its latent norms are counted)");
    if (s.qkv_bias) a.fail(a.at("qkv_bias"), "not supported with MLA");
  } else if (s.kind == AttentionKind::kGqa) {
    for (const auto& k : mla) {
      if (a.has(k)) a.fail(a.at(k), "only valid with kind \"mla\"");
    }
  }
  if (s.kind != AttentionKind::kSharedKv) {
    for (const char* k : {"o_groups", "o_lora_rank", "sinks", "compress_ratios", "csa_ratio"})
      if (a.has(k)) a.fail(a.at(k), "only valid with kind \"shared_kv\"");
  }
  s.output_gate = bool_or(a, "output_gate", false);
  if (s.output_gate && s.kind == AttentionKind::kMla)
    a.fail(a.at("output_gate"), "only modelled with kind \"gqa\" (Megatron attention_output_gate)");
  s.sliding_window = int_or(a, "sliding_window", 0, int64_t{1} << 30, 0);
  if (s.sliding_window > 0) {
    s.window_kind = a.choice("window_kind", {"sliding", "chunked"}) == "chunked"
                        ? WindowKind::kChunked
                        : WindowKind::kSliding;
    s.window_pattern = static_cast<int>(a.integer("window_pattern", 1, 1024));
    s.window_layers = static_cast<int>(a.integer("window_layers", 1, s.window_pattern));
  } else {
    for (const char* k : {"window_kind", "window_pattern", "window_layers"}) {
      if (a.has(k)) a.fail(a.at(k), "only valid with sliding_window > 0");
    }
  }
  read_sparse(a, &s);
  if (s.kind == AttentionKind::kSharedKv) read_shared_kv(a, hidden, &s);
  return s;
}

MoeSpec read_moe(const Obj& o, int layers) {
  MoeSpec s;
  s.experts = static_cast<int>(o.integer("experts", 1, 1 << 16));
  s.top_k = static_cast<int>(o.integer("top_k", 1, s.experts));
  s.expert_ffn = o.integer("expert_ffn", 1, kMaxWidth);
  s.shared_experts = int_or(o, "shared_experts", 0, 64, 0);
  s.shared_expert_ffn =
      o.has("shared_expert_ffn") ? o.integer("shared_expert_ffn", 0, kMaxWidth) : 0;
  if ((s.shared_experts > 0) != (s.shared_expert_ffn > 0)) {
    o.fail(o.at("shared_expert_ffn"),
           "must be > 0 exactly when shared_experts > 0 (shared_experts = " +
               std::to_string(s.shared_experts) + ")");
  }
  s.first_k_dense = int_or(o, "first_k_dense", 0, layers - 1, 0);
  s.layer_freq = int_or(o, "layer_freq", 1, std::max(1, layers - s.first_k_dense), 1);
  s.shared_expert_gate = bool_or(o, "shared_expert_gate", false);
  if (s.shared_expert_gate && s.shared_experts == 0)
    o.fail(o.at("shared_expert_gate"), "needs a shared expert (shared_experts > 0)");
  s.latent = o.has("latent") ? o.integer("latent", 1, kMaxWidth) : 0;
  s.hash_layers = int_or(o, "hash_layers", 0, layers, 0);
  return s;
}

GdnSpec read_gdn(const Obj& o) {
  GdnSpec s;
  s.qk_heads = static_cast<int>(o.integer("qk_heads", 1, 65536));
  s.v_heads = static_cast<int>(o.integer("v_heads", 1, 65536));
  s.qk_head_dim = static_cast<int>(o.integer("qk_head_dim", 1, 4096));
  s.v_head_dim = static_cast<int>(o.integer("v_head_dim", 1, 4096));
  s.conv_kernel = static_cast<int>(o.integer("conv_kernel", 1, 64));
  s.chunk = static_cast<int>(o.integer("chunk", 1, 65536));
  s.kda = bool_or(o, "kda", false);
  if (s.kda && (s.qk_heads != s.v_heads || s.qk_head_dim != s.v_head_dim))
    o.fail(o.at("kda"),
           "Kimi Delta Attention has one head count and head dim for q, k and v "
           "(qk_heads == v_heads, qk_head_dim == v_head_dim)");
  if (s.v_heads % s.qk_heads != 0) {
    o.fail(o.at("v_heads"), "must be a multiple of qk_heads (" + std::to_string(s.qk_heads) +
                                "; q and k are repeated to the v heads), got " +
                                std::to_string(s.v_heads));
  }
  return s;
}

MambaSpec read_mamba(const Obj& o) {
  MambaSpec s;
  s.heads = static_cast<int>(o.integer("heads", 1, 65536));
  s.head_dim = static_cast<int>(o.integer("head_dim", 1, 4096));
  s.state = static_cast<int>(o.integer("state", 1, 4096));
  s.groups = static_cast<int>(o.integer("groups", 1, s.heads));
  s.conv_kernel = static_cast<int>(o.integer("conv_kernel", 1, 64));
  s.chunk = static_cast<int>(o.integer("chunk", 1, 65536));
  if (s.heads % s.groups != 0) {
    o.fail(o.at("groups"),
           "must divide heads (" + std::to_string(s.heads) + "), got " + std::to_string(s.groups));
  }
  return s;
}

// The hybrid pattern: one block kind per layer, and the parts each kind needs.
void read_blocks(const Obj& root, ModelSpec* m) {
  const std::string text = root.str("blocks");
  size_t bad = 0;
  if (!parse_block_pattern(text, &m->blocks, &bad)) {
    root.fail(root.at("blocks"),
              text.empty() ? std::string("expected a non-empty pattern of M * - E G")
                           : "character " + std::to_string(bad) + " '" + text.substr(bad, 1) +
                                 "' is not a block kind (M Mamba-2, * attention, - MLP, E MoE, "
                                 "G Gated DeltaNet)");
  }
  if (static_cast<int>(m->blocks.size()) != m->layers) {
    root.fail(root.at("blocks"),
              "has " + std::to_string(m->blocks.size()) +
                  " blocks; expected one per layer (layers = " + std::to_string(m->layers) + ")");
  }
  auto count = [&](BlockKind k) { return std::count(m->blocks.begin(), m->blocks.end(), k); };
  if (count(BlockKind::kMamba) > 0 && !root.has("mamba"))
    root.fail(root.at("mamba"), "missing: the pattern has Mamba-2 blocks (M)");
  if (count(BlockKind::kMamba) == 0 && root.has("mamba"))
    root.fail(root.at("mamba"), "only valid when the pattern has Mamba-2 blocks (M)");
  if (count(BlockKind::kGdn) > 0 && !root.has("gdn"))
    root.fail(root.at("gdn"), "missing: the pattern has Gated DeltaNet blocks (G)");
  if (count(BlockKind::kGdn) == 0 && root.has("gdn"))
    root.fail(root.at("gdn"), "only valid when the pattern has Gated DeltaNet blocks (G)");
  if (count(BlockKind::kMoe) > 0 && !is_moe(*m))
    root.fail(root.at("moe"), "missing: the pattern has MoE blocks (E)");
  if (count(BlockKind::kMoe) == 0 && is_moe(*m))
    root.fail(root.at("blocks"), "has no MoE block (E) but the model defines \"moe\"");
  if (is_moe(*m) && (m->moe.first_k_dense != 0 || m->moe.layer_freq != 1))
    root.fail(root.at("moe"), "first_k_dense / layer_freq do not apply: the pattern places MoE");
}

// The hybrid parts: the mixers' specs and the block pattern that uses them.
void read_hybrid(const Obj& root, ModelSpec* m) {
  if (root.has("mamba")) m->mamba = read_mamba(root.object("mamba", kMambaKeys));
  if (root.has("gdn")) m->gdn = read_gdn(root.object("gdn", kGdnKeys));
  if (root.has("blocks")) read_blocks(root, m);
  if (!root.has("blocks") && root.has("mamba"))
    root.fail(root.at("mamba"), "only valid with a \"blocks\" pattern that has Mamba-2 blocks");
  if (!root.has("blocks") && root.has("gdn"))
    root.fail(root.at("gdn"),
              "only valid with a \"blocks\" pattern that has Gated DeltaNet blocks");
}

// DeepSeek-V4's parts that need the layer count: one compress ratio per layer and MTP module,
// the mHC streams, hash-routed layers among the MoE ones.
void read_v4_parts(const Obj& root, ModelSpec* m) {
  const auto& r = m->attention.compress_ratios;
  const size_t want = static_cast<size_t>(m->layers + m->mtp_layers);
  if (m->attention.kind == AttentionKind::kSharedKv && r.size() != want)
    root.fail(root.at("attention") + "/compress_ratios",
              "has " + std::to_string(r.size()) +
                  " entries; expected one per layer and MTP "
                  "module (" +
                  std::to_string(want) + ")");
  if (root.has("hyper_connections")) {
    const Obj h = root.object("hyper_connections", kHyperKeys);
    m->hyper.streams = static_cast<int>(h.integer("streams", 2, 64));
    m->hyper.sinkhorn_iters = static_cast<int>(h.integer("sinkhorn_iters", 1, 1000));
  }
  if (m->moe.hash_layers > moe_layer_count(*m))
    root.fail(root.at("moe") + "/hash_layers", "more hash-routed layers than MoE layers (" +
                                                   std::to_string(moe_layer_count(*m)) + ")");
}

// "origin": where each field came from (written by `fleetsim model import`), strings only.
void check_origin(const Obj& root) {
  const json& o = root.get("origin");
  if (!o.is_object()) root.fail(root.at("origin"), "expected an object of strings");
  for (const auto& [k, v] : o.items()) {
    if (!v.is_string())
      root.fail(root.at("origin") + "/" + escape_pointer_token(k),
                std::string("expected a string, got ") + type_name(v));
  }
}

std::string impact_of(const Obj& u) {
  return u.choice("impact", {"none", "small", "material"});
}

}  // namespace

std::vector<std::string> model_keys() {
  return kModelKeys;
}

std::string normalize_model_name(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.' || c == ' ') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

ModelSpec parse_model_text(const std::string& json_text, const std::string& file,
                           const std::string& pointer_prefix) {
  const json j = parse_strict(json_text, file);
  const Obj root(j, file, pointer_prefix, kModelKeys);
  ModelSpec m;
  m.file = file;
  m.name = root.str("id");
  if (m.name.empty() || m.name.find('/') != std::string::npos)
    root.fail(root.at("id"), "expected a non-empty id without '/'");
  m.display_name = root.str_or("display_name", m.name);
  if (root.has("developer")) root.str("developer");
  if (root.has("source")) m.sources = string_list(root, "source");
  if (!m.sources.empty()) m.source = m.sources.front();
  if (root.has("aliases")) m.aliases = string_list(root, "aliases");
  if (root.has("notes")) root.str("notes");
  if (root.has("origin")) check_origin(root);

  m.layers = static_cast<int>(root.integer("layers", 1, 100000));
  m.hidden = root.integer("hidden", 1, kMaxWidth);
  m.vocab = root.integer("vocab", 1, kMaxVocab);
  m.benchmark_vocab =
      root.has("benchmark_vocab") ? root.integer("benchmark_vocab", 1, kMaxVocab) : 0;
  m.mlp = root.choice("mlp", {"gated", "plain"}) == "gated" ? MlpKind::kGated : MlpKind::kPlain;
  m.norm = root.has("norm") && root.choice("norm", {"rmsnorm", "layernorm"}) == "layernorm"
               ? NormKind::kLayer
               : NormKind::kRms;
  m.norms_per_layer = int_or(root, "norms_per_layer", 0, 8, 2);
  m.linear_bias = bool_or(root, "linear_bias", false);
  m.tied_embeddings = root.boolean("tied_embeddings");
  m.learned_positions = bool_or(root, "learned_positions", false);
  m.max_seq_len = static_cast<int>(root.integer("max_seq_len", 1, int64_t{1} << 30));
  m.attention = read_attention(root.object("attention", kAttentionKeys), m.hidden);
  if (root.has("moe")) m.moe = read_moe(root.object("moe", kMoeKeys), m.layers);
  m.mtp_layers = int_or(root, "mtp_layers", 0, 16, 0);
  read_hybrid(root, &m);
  read_v4_parts(root, &m);

  // The dense FFN width is needed when some layer is dense.
  const bool any_dense = is_hybrid(m)
                             ? std::count(m.blocks.begin(), m.blocks.end(), BlockKind::kMlp) > 0
                             : !is_moe(m) || m.layers > moe_layer_count(m);
  m.ffn = root.has("ffn") ? root.integer("ffn", 0, kMaxWidth) : 0;
  if (any_dense && m.ffn == 0) {
    root.fail(root.at("ffn"), std::string("expected an FFN width > 0: ") +
                                  (is_moe(m) ? "some layers are dense (first_k_dense / layer_freq)"
                                             : "the model is dense"));
  }
  if (is_moe(m) && moe_layer_count(m) == 0) {
    root.fail(root.at("moe"), "no layer is MoE with these first_k_dense / layer_freq values");
  }
  if (m.mtp_layers > 0 && is_moe(m) && !is_hybrid(m) && !is_moe_layer(m, m.layers - 1)) {
    root.fail(root.at("mtp_layers"),
              "MTP modules take the shape of the last layer, which must then be an MoE layer");
  }
  if (root.has("published_total_params"))
    m.published_total_params = root.number("published_total_params", 1, 1e16);
  if (root.has("published_active_params"))
    m.published_active_params = root.number("published_active_params", 1, 1e16);

  if (root.has("unmodelled")) {
    const json& list = root.get("unmodelled");
    if (!list.is_array()) {
      root.fail(root.at("unmodelled"),
                std::string("expected an array of objects, got ") + type_name(list));
    }
    for (size_t i = 0; i < list.size(); ++i) {
      const Obj u(list[i], file, root.at("unmodelled") + "/" + std::to_string(i), kUnmodelledKeys);
      UnmodelledFeature f{u.str("feature"), impact_of(u), u.str("note")};
      if (f.impact == "material") {
        u.fail(u.at("impact"), "model '" + m.name + "' has the feature '" + f.feature + "' (" +
                                   f.note +
                                   ") which changes compute materially and which fleetsim "
                                   "cannot model; refusing to approximate it");
      }
      m.unmodelled.push_back(std::move(f));
    }
  }
  return m;
}

std::vector<std::string> known_models(const std::string& data_dir) {
  return jsonr::json_stems(std::filesystem::path(data_dir) / "workloads" / "models");
}

ModelSpec load_model(const std::string& name_or_path, const std::string& data_dir) {
  const bool is_path =
      name_or_path.find('/') != std::string::npos ||
      (name_or_path.size() > 5 && name_or_path.compare(name_or_path.size() - 5, 5, ".json") == 0);
  if (is_path) {
    // A checkpoint folder stands for its config.json.
    const std::string file = hf_config_file(name_or_path);
    const std::string text = read_file(file);
    // A Hugging Face config.json (it has "model_type") is mapped by hf_config.cpp.
    if (is_hf_config(text, file)) return import_hf_config(text, file, "").model;
    return parse_model_text(text, file, "");
  }

  const auto dir = std::filesystem::path(data_dir) / "workloads" / "models";
  const auto ids = known_models(data_dir);
  const std::string want = normalize_model_name(name_or_path);
  // Exact id first, then normalised id, then aliases (which needs every file read).
  auto read = [&](const std::string& id) {
    const std::string path = (dir / (id + ".json")).string();
    ModelSpec m = parse_model_text(read_file(path), path, "");
    if (m.name != id) {
      throw InputError(path, "/id", "must equal the file name '" + id + "', got '" + m.name + "'");
    }
    return m;
  };
  for (const auto& id : ids) {
    if (id == name_or_path) return read(id);
  }
  std::vector<std::string> names;
  for (const auto& id : ids) {
    ModelSpec m = read(id);
    bool hit = normalize_model_name(id) == want;
    for (const auto& a : m.aliases)
      hit = hit || normalize_model_name(a) == want;
    if (hit) return m;
    names.push_back(id);
  }
  std::string lower;
  for (char c : name_or_path)
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  throw InputError("", "",
                   jsonr::unknown_name_message("model", name_or_path, lower, names,
                                               "; or give a path to a model JSON file"));
}

}  // namespace fleetsim
