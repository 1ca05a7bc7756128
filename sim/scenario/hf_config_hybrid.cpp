// Hugging Face config.json -> ModelSpec for the hybrid families (see hf_config.h): Nemotron-H /
// Nemotron 3 (nemotron_h).
#include <algorithm>

#include "core/error.h"
#include "scenario/hf_config_internal.h"
#include "scenario/hf_reader.h"

namespace fleetsim::hf_internal {
namespace {

// Nemotron-H / Nemotron 3 (transformers modeling_nemotron_h.py): one block per character of
// hybrid_override_pattern (M Mamba-2, * attention, - MLP, E MoE), each with one RMSNorm; the
// mixer's width is mamba_num_heads x mamba_head_dim (not expand x hidden); squared-ReLU MLPs;
// attention without position encoding.
// A value spelled two ways (the checkpoints' NemotronHConfig: n_groups, conv_kernel, chunk_size,
// use_conv_bias, expand; vLLM's copy: mamba_n_groups, mamba_d_conv, ...): whichever is present;
// both must then agree.
int64_t either(HfReader& r, const char* a, const char* b, int64_t lo, int64_t hi,
               const std::string& field) {
  if (r.present(a) && r.present(b) && r.integer(a, lo, hi, "") != r.integer(b, lo, hi, ""))
    r.fail(std::string("/") + b, std::string("disagrees with ") + a);
  return r.present(b) ? r.integer(b, lo, hi, field) : r.integer(a, lo, hi, field);
}

}  // namespace

void read_nemotron_h(HfReader& r, ModelSpec& m) {
  const std::string pattern = r.str("hybrid_override_pattern");
  size_t bad = 0;
  if (!parse_block_pattern(pattern, &m.blocks, &bad))
    r.fail("/hybrid_override_pattern",
           pattern.empty() ? std::string("expected a non-empty pattern of M * - E")
                           : "character " + std::to_string(bad) + " '" + pattern.substr(bad, 1) +
                                 "' is not a block kind (M Mamba-2, * attention, - MLP, E MoE)");
  if (static_cast<int>(m.blocks.size()) != m.layers)
    r.fail("/hybrid_override_pattern", "has " + std::to_string(m.blocks.size()) +
                                           " blocks; expected num_hidden_layers (" +
                                           std::to_string(m.layers) + ")");
  r.note("/blocks", "config.json:/hybrid_override_pattern");
  auto has = [&](BlockKind k) { return std::count(m.blocks.begin(), m.blocks.end(), k) > 0; };
  m.mlp = MlpKind::kPlain;
  if (r.present("mlp_hidden_act") && r.str("mlp_hidden_act") != "relu2")
    r.fail("/mlp_hidden_act", "expected 'relu2' (NemotronHMLP: up_proj, down_proj)");
  r.note("/mlp", "NemotronHMLP: up_proj, down_proj (relu2)");
  m.norms_per_layer = 2;
  r.note("/norm", "RMSNorm: one per block (norms_per_layer applies to MTP modules only)");
  read_gqa(r, m);
  for (const char* k : {"attention_bias", "mlp_bias", "use_bias", "mamba_proj_bias"})
    if (r.boolean_or(k, false, "")) r.fail(std::string("/") + k, "biases are not modelled here");
  for (const char* k : {"use_conv_bias", "mamba_conv_bias"})
    if (!r.boolean_or(k, true, ""))
      r.fail(std::string("/") + k, "a conv1d without bias is not modelled (fleetsim counts it)");
  m.ffn = has(BlockKind::kMlp) ? r.integer("intermediate_size", 1, int64_t{1} << 24, "/ffn") : 0;
  if (!has(BlockKind::kMlp)) r.ignore("intermediate_size");
  MambaSpec& s = m.mamba;
  s.heads = static_cast<int>(r.integer("mamba_num_heads", 1, 65536, "/mamba/heads"));
  s.head_dim = static_cast<int>(r.integer("mamba_head_dim", 1, 4096, "/mamba/head_dim"));
  s.state = static_cast<int>(r.integer("ssm_state_size", 1, 4096, "/mamba/state"));
  s.groups = static_cast<int>(either(r, "mamba_n_groups", "n_groups", 1, s.heads, "/mamba/groups"));
  s.conv_kernel =
      static_cast<int>(either(r, "mamba_d_conv", "conv_kernel", 1, 64, "/mamba/conv_kernel"));
  s.chunk = static_cast<int>(either(r, "mamba_chunk_size", "chunk_size", 1, 65536, "/mamba/chunk"));
  if (s.heads % s.groups != 0) r.fail("/n_groups", "must divide mamba_num_heads");
  for (const char* k : {"expand", "mamba_expand"}) {
    if (!r.present(k)) continue;
    r.ignore(k);
    r.note("/mamba/heads",
           "d_inner = mamba_num_heads x mamba_head_dim (modeling_nemotron_h.py); "
           "expand is not used");
  }
  if (has(BlockKind::kMoe)) {
    m.moe = read_moe_fields(r, "n_routed_experts", "moe_intermediate_size");
    m.moe.shared_expert_ffn = r.present("moe_shared_expert_intermediate_size")
                                  ? r.integer("moe_shared_expert_intermediate_size", 0,
                                              int64_t{1} << 24, "/moe/shared_expert_ffn")
                                  : 0;
    m.moe.shared_experts = m.moe.shared_expert_ffn > 0 ? 1 : 0;
    r.note("/moe/shared_experts",
           "one shared MLP of moe_shared_expert_intermediate_size (the total shared width)");
    r.ignore("n_shared_experts");
    m.unmodelled.push_back({"router_scoring", "none",
                            "sigmoid routing with expert bias (n_group, topk_group, "
                            "routed_scaling_factor): routing statistics are modelled in moe/"});
  }
  if (r.present("sliding_window")) r.fail("/sliding_window", "expected null (no windowed layers)");
  r.ignore("sliding_window");
  m.unmodelled.push_back({"position_encoding", "none", "no position encoding (NoPE)"});
  for (const char* k :
       {"mamba_hidden_act", "time_step_min", "time_step_max", "time_step_floor", "time_step_limit",
        "mamba_dt_min", "mamba_dt_max", "mamba_dt_limit", "mamba_dt_init_floor",
        "rescale_prenorm_residual", "residual_in_fp32", "num_logits_to_keep", "use_mamba_kernels"})
    r.ignore(k);
}

}  // namespace fleetsim::hf_internal
