// An imported config.json written as a zoo model file (see hf_config.h): the keys of
// workloads/models/*.json in their usual order, "origin" for each field and the keys found to
// have no effect on compute in "notes".
#include <algorithm>

#include "core/error.h"
#include "scenario/hf_config.h"
#include "scenario/json_reader.h"

namespace fleetsim {
namespace {

using ojson = nlohmann::ordered_json;

ojson attention_json(const AttentionSpec& a) {
  ojson o;
  o["kind"] = a.kind == AttentionKind::kMla        ? "mla"
              : a.kind == AttentionKind::kSharedKv ? "shared_kv"
                                                   : "gqa";
  o["heads"] = a.heads;
  o["kv_heads"] = a.kv_heads;
  o["head_dim"] = a.head_dim;
  if (a.kind == AttentionKind::kMla) {
    o["q_lora_rank"] = a.q_lora_rank;
    o["kv_lora_rank"] = a.kv_lora_rank;
    o["qk_nope_head_dim"] = a.qk_nope_head_dim;
    o["qk_rope_head_dim"] = a.qk_rope_head_dim;
    o["v_head_dim"] = a.v_head_dim;
  }
  if (a.kind == AttentionKind::kSharedKv) {
    o["q_lora_rank"] = a.q_lora_rank;
    o["qk_rope_head_dim"] = a.qk_rope_head_dim;
    o["o_groups"] = a.o_groups;
    o["o_lora_rank"] = a.o_lora_rank;
    o["sinks"] = a.sinks;
  }
  o["qkv_bias"] = a.qkv_bias;
  o["qk_norm"] = a.qk_norm;
  if (a.qk_norm_all_heads) o["qk_norm_all_heads"] = true;
  if (a.output_gate) o["output_gate"] = true;
  if (a.sparse_topk > 0) {
    o["sparse_topk"] = a.sparse_topk;
    o["indexer_heads"] = a.indexer_heads;
    o["indexer_head_dim"] = a.indexer_head_dim;
  }
  if (a.sliding_window > 0) {
    o["sliding_window"] = a.sliding_window;
    o["window_kind"] = a.window_kind == WindowKind::kChunked ? "chunked" : "sliding";
    o["window_pattern"] = a.window_pattern;
    o["window_layers"] = a.window_layers;
  }
  if (a.kind == AttentionKind::kSharedKv) {
    o["compress_ratios"] = a.compress_ratios;
    if (a.csa_ratio > 0) o["csa_ratio"] = a.csa_ratio;
  }
  return o;
}

ojson moe_json(const MoeSpec& s) {
  ojson o;
  o["experts"] = s.experts;
  o["shared_experts"] = s.shared_experts;
  o["top_k"] = s.top_k;
  o["expert_ffn"] = s.expert_ffn;
  o["shared_expert_ffn"] = s.shared_expert_ffn;
  o["first_k_dense"] = s.first_k_dense;
  o["layer_freq"] = s.layer_freq;
  if (s.shared_expert_gate) o["shared_expert_gate"] = true;
  if (s.latent > 0) o["latent"] = s.latent;
  if (s.hash_layers > 0) o["hash_layers"] = s.hash_layers;
  return o;
}

}  // namespace

std::string zoo_model_json(const HfImport& imp) {
  const ModelSpec& m = imp.model;
  ojson o;
  o["id"] = m.name;
  o["display_name"] = m.display_name;
  o["source"] = m.sources;
  o["layers"] = m.layers;
  o["hidden"] = m.hidden;
  o["ffn"] = m.ffn;
  o["vocab"] = m.vocab;
  o["mlp"] = m.mlp == MlpKind::kGated ? "gated" : "plain";
  o["norm"] = m.norm == NormKind::kLayer ? "layernorm" : "rmsnorm";
  o["norms_per_layer"] = m.norms_per_layer;
  o["linear_bias"] = m.linear_bias;
  o["tied_embeddings"] = m.tied_embeddings;
  o["learned_positions"] = m.learned_positions;
  o["max_seq_len"] = m.max_seq_len;
  o["attention"] = attention_json(m.attention);
  if (is_moe(m)) o["moe"] = moe_json(m.moe);
  if (is_hybrid(m)) {
    o["blocks"] = block_pattern_text(m.blocks);
    if (std::count(m.blocks.begin(), m.blocks.end(), BlockKind::kMamba) > 0) {
      const MambaSpec& s = m.mamba;
      o["mamba"] = {{"heads", s.heads},   {"head_dim", s.head_dim},       {"state", s.state},
                    {"groups", s.groups}, {"conv_kernel", s.conv_kernel}, {"chunk", s.chunk}};
    }
    if (std::count(m.blocks.begin(), m.blocks.end(), BlockKind::kGdn) > 0) {
      const GdnSpec& g = m.gdn;
      o["gdn"] = {{"qk_heads", g.qk_heads},       {"v_heads", g.v_heads},
                  {"qk_head_dim", g.qk_head_dim}, {"v_head_dim", g.v_head_dim},
                  {"conv_kernel", g.conv_kernel}, {"chunk", g.chunk}};
      if (g.kda) o["gdn"]["kda"] = true;
    }
  }
  if (m.hyper.streams > 0)
    o["hyper_connections"] = {{"streams", m.hyper.streams},
                              {"sinkhorn_iters", m.hyper.sinkhorn_iters}};
  o["mtp_layers"] = m.mtp_layers;
  ojson un = ojson::array();
  for (const auto& u : m.unmodelled)
    un.push_back({{"feature", u.feature}, {"impact", u.impact}, {"note", u.note}});
  o["unmodelled"] = un;
  ojson origin = ojson::object();
  for (const auto& [field, text] : imp.origin)
    origin[field] = text;
  o["origin"] = origin;
  std::string ignored;
  for (const auto& k : imp.ignored)
    ignored += (ignored.empty() ? "" : ", ") + k;
  o["notes"] = "Imported by `fleetsim model import` from a Hugging Face config.json (model_type " +
               imp.model_type + "). Keys read and found to have no effect on compute: " +
               (ignored.empty() ? "none" : ignored) + ".";
  return o.dump(2) + "\n";
}

}  // namespace fleetsim
