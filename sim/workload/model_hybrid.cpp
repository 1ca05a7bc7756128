// Hybrid models (Nemotron-H / Nemotron 3: Mamba-2, attention, MLP and MoE blocks in a per-layer
// pattern; Qwen3-Next: Gated DeltaNet or gated attention, then MoE): the pattern parser and the
// closed-form parameter and FLOP counts of a Mamba-2 and a Gated DeltaNet mixer (see model.h).
// Sources: Megatron-Core megatron/core/ssm/mamba_mixer.py and gated_delta_net.py (parameter
// layouts), mamba_ssm's ssd_combined.py (the SSD sub-kernels), workloads/sources/
// hybrid-models.md (the Megatron FLOP model and its conventions).
#include <string>
#include <vector>

#include "core/error.h"
#include "workload/model.h"

namespace fleetsim {

bool is_hybrid(const ModelSpec& m) {
  return !m.blocks.empty();
}

BlockKind block_kind(const ModelSpec& m, int i) {
  FLEETSIM_ASSERT(is_hybrid(m) && i >= 0 && i < static_cast<int>(m.blocks.size()));
  return m.blocks[static_cast<size_t>(i)];
}

bool has_attention(const ModelSpec& m, int i) {
  return !is_hybrid(m) || i >= m.layers || block_kind(m, i) == BlockKind::kAttention;
}

bool has_ffn(const ModelSpec& m, int i) {
  if (!is_hybrid(m) || i >= m.layers) return true;
  const BlockKind k = block_kind(m, i);
  return k == BlockKind::kMlp || k == BlockKind::kMoe;
}

bool parse_block_pattern(const std::string& text, std::vector<BlockKind>* out, size_t* bad) {
  out->clear();
  for (size_t i = 0; i < text.size(); ++i) {
    switch (text[i]) {
      case 'M':
        out->push_back(BlockKind::kMamba);
        break;
      case '*':
        out->push_back(BlockKind::kAttention);
        break;
      case '-':
        out->push_back(BlockKind::kMlp);
        break;
      case 'E':
        out->push_back(BlockKind::kMoe);
        break;
      case 'G':
        out->push_back(BlockKind::kGdn);
        break;
      default:
        *bad = i;
        return false;
    }
  }
  if (out->empty()) {
    *bad = 0;
    return false;
  }
  return true;
}

std::string block_pattern_text(const std::vector<BlockKind>& blocks) {
  std::string s;
  for (BlockKind k : blocks) {
    switch (k) {
      case BlockKind::kMamba:
        s += 'M';
        break;
      case BlockKind::kAttention:
        s += '*';
        break;
      case BlockKind::kMlp:
        s += '-';
        break;
      case BlockKind::kMoe:
        s += 'E';
        break;
      case BlockKind::kGdn:
        s += 'G';
        break;
    }
  }
  return s;
}

int64_t mamba_params(const ModelSpec& m) {
  const MambaSpec& s = m.mamba;
  const int64_t h = m.hidden;
  const int64_t in_proj = h * s.in_proj_width();
  const int64_t conv = s.conv_channels() * s.conv_kernel + s.conv_channels();  // weight + bias
  const int64_t per_head = 3 * int64_t{s.heads};                               // A_log, D, dt_bias
  const int64_t norm = s.d_inner();                                            // gated RMSNorm
  const int64_t out_proj = s.d_inner() * h;
  return in_proj + conv + per_head + norm + out_proj;
}

// Per token, L tokens, chunk Q, d = d_inner = H·P, groups G, state N (mamba_ssm ssd_combined):
//   bmm_chunk      C·Bᵀ inside each chunk, per group             2·Q·G·N
//   chunk_state    each chunk's final state Bᵀ·x, per head         2·d·N
//   chunk_scan     intra-chunk (CBᵀ ∘ decay)·x, causal half        Q·d
//                  + inter-chunk C·state                           2·d·N
//   state_passing, chunk_cumsum: O(d·N / Q) and O(H) per token, not counted.
// The chunk_scan terms are the TileLang benchmark's formula (2·b·L·Q·h·p·0.5 + 2·b·L·h·p·N).
double ssd_scan_flops_per_token(const MambaSpec& s) {
  const double d = static_cast<double>(s.d_inner());
  const double Q = s.chunk, G = s.groups, N = s.state;
  return 2.0 * Q * G * N + 2.0 * d * N + Q * d + 2.0 * d * N;
}

double mamba_forward_flops_per_token(const ModelSpec& m) {
  const MambaSpec& s = m.mamba;
  const double h = static_cast<double>(m.hidden);
  const double proj = 2.0 * h * static_cast<double>(s.in_proj_width() + s.d_inner());
  const double conv = 2.0 * s.conv_kernel * static_cast<double>(s.conv_channels());
  return proj + conv + ssd_scan_flops_per_token(s);
}

double megatron_mamba_flops_per_token(const ModelSpec& m) {
  const MambaSpec& s = m.mamba;
  const double h = static_cast<double>(m.hidden);
  const double d = 2.0 * h;
  const double GN = static_cast<double>(s.groups) * s.state;
  return 2.0 * h * (2.0 * d + 2.0 * GN + s.heads) + 7.0 * d * s.state + 2.0 * d * h;
}

double megatron_mamba_projection_flops_per_token(const ModelSpec& m) {
  const MambaSpec& s = m.mamba;
  const double h = static_cast<double>(m.hidden);
  const double d = 2.0 * h;
  const double GN = static_cast<double>(s.groups) * s.state;
  return 2.0 * h * (2.0 * d + 2.0 * GN + s.heads) + 2.0 * d * h;
}

int64_t gdn_params(const ModelSpec& m) {
  const GdnSpec& s = m.gdn;
  const int64_t h = m.hidden;
  const int64_t in_proj = h * s.in_proj_width();
  const int64_t conv = s.conv_channels() * s.conv_kernel;  // depthwise, no bias (MCore default)
  // A_log and dt_bias per head (GDN); KDA: A_log per head, dt_bias per channel of the decay.
  const int64_t per_head = s.kda ? s.v_heads + s.qk_dim() : 2 * int64_t{s.v_heads};
  const int64_t norm = s.v_head_dim;  // gated RMSNorm, shared by the heads
  const int64_t out_proj = s.v_dim() * h;
  return in_proj + s.low_rank_up() + conv + per_head + norm + out_proj;
}

double gdn_chunk_flops_per_token(const GdnSpec& s) {
  const double dk = s.qk_head_dim, dv = s.v_head_dim, C = s.chunk;
  return s.v_heads * (6.0 * dk * dv + 1.5 * C * (dk + dv) + C * C);
}

double gdn_forward_flops_per_token(const ModelSpec& m) {
  const GdnSpec& s = m.gdn;
  const double h = static_cast<double>(m.hidden);
  const double proj = 2.0 * h * static_cast<double>(s.in_proj_width() + s.v_dim()) +
                      2.0 * static_cast<double>(s.low_rank_up());
  const double conv = 2.0 * s.conv_kernel * static_cast<double>(s.conv_channels());
  return proj + conv + gdn_chunk_flops_per_token(s);
}

double megatron_gdn_flops_per_token(const ModelSpec& m) {
  const GdnSpec& s = m.gdn;
  const double h = static_cast<double>(m.hidden);
  const double q = static_cast<double>(s.qk_dim()), v = static_cast<double>(s.v_dim());
  const double dv = s.v_head_dim;
  const double in_w = static_cast<double>(s.in_proj_width());  // GDN: 2q + 2v + 2·Hv
  return 2.0 * (h * in_w + static_cast<double>(s.low_rank_up()) + s.conv_kernel * (2.0 * q + v) +
                4.0 * s.v_heads * dv * dv + h * v);
}

double megatron_gdn_projection_flops_per_token(const ModelSpec& m) {
  const GdnSpec& s = m.gdn;
  const double h = static_cast<double>(m.hidden);
  return 2.0 * (h * static_cast<double>(s.in_proj_width()) + static_cast<double>(s.low_rank_up()) +
                h * static_cast<double>(s.v_dim()));
}

}  // namespace fleetsim
