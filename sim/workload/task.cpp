// Training tasks (task.h): names, the documents of a packed sequence, LoRA adapter parameters
// and the task's model FLOPs per token.
#include "workload/task.h"

namespace fleetsim {

const char* to_string(TrainingTask t) {
  switch (t) {
    case TrainingTask::kPretrain:
      return "pretrain";
    case TrainingTask::kSft:
      return "sft";
    case TrainingTask::kLora:
      return "lora";
  }
  return "?";
}

bool parse_task(const std::string& s, TrainingTask* out) {
  for (TrainingTask t : {TrainingTask::kPretrain, TrainingTask::kSft, TrainingTask::kLora}) {
    if (s == to_string(t)) {
      *out = t;
      return true;
    }
  }
  return false;
}

namespace {
struct TargetName {
  unsigned bit;
  const char* name;
};
constexpr TargetName kTargets[] = {{kLoraQkv, "linear_qkv"},
                                   {kLoraProj, "linear_proj"},
                                   {kLoraFc1, "linear_fc1"},
                                   {kLoraFc2, "linear_fc2"}};
}  // namespace

bool parse_lora_target(const std::string& s, unsigned* bit) {
  for (const TargetName& t : kTargets) {
    if (s == t.name) {
      *bit = t.bit;
      return true;
    }
  }
  return false;
}

std::string lora_targets_string(unsigned targets) {
  std::string out;
  for (const TargetName& t : kTargets) {
    if (targets & t.bit) out += std::string(out.empty() ? "" : ",") + t.name;
  }
  return out;
}

std::vector<DocumentGroup> packed_documents(int seq_len, int mean_document_tokens) {
  if (mean_document_tokens <= 0 || mean_document_tokens >= seq_len) return {{1, seq_len}};
  std::vector<DocumentGroup> g{{seq_len / mean_document_tokens, mean_document_tokens}};
  if (seq_len % mean_document_tokens != 0) g.push_back({1, seq_len % mean_document_tokens});
  return g;
}

int64_t lora_adapter_params(const ModelSpec& m, const TaskSpec& t, int layer) {
  if (t.kind != TrainingTask::kLora) return 0;
  const int64_t r = t.lora_rank, h = m.hidden;
  const AttentionSpec& a = m.attention;
  int64_t n = 0;
  auto adapter = [&](unsigned bit, int64_t k, int64_t out) {
    if (t.lora_targets & bit) n += r * (k + out);
  };
  // A hybrid model's blocks have attention or an FFN or neither (Mamba-2: no adapter).
  if (has_attention(m, layer)) {
    // linear_qkv: q, k, v, and with Qwen3-Next's output gate (attention_output_gate) the gate,
    // heads · head_dim wide: the GEMM the step's adapter follows (decoder_layer.cpp).
    const int gate = a.output_gate ? a.heads : 0;
    if (a.kind == AttentionKind::kGqa)
      adapter(kLoraQkv, h, int64_t{a.heads + gate + 2 * a.kv_heads} * a.head_dim);
    const int64_t dv = a.kind == AttentionKind::kMla ? a.v_head_dim : a.head_dim;
    adapter(kLoraProj, int64_t{a.heads} * dv, h);
  }
  // linear_fc1 / linear_fc2: the dense MLP, or on MoE layers the shared experts.
  const int64_t ffn =
      is_moe_layer(m, layer) ? m.moe.shared_expert_ffn * m.moe.shared_experts : m.ffn;
  if (has_ffn(m, layer) && ffn > 0) {
    adapter(kLoraFc1, h, (m.mlp == MlpKind::kGated ? 2 : 1) * ffn);
    adapter(kLoraFc2, ffn, h);
  }
  return n;
}

int64_t lora_adapter_params(const ModelSpec& m, const TaskSpec& t) {
  int64_t n = 0;
  for (int i = 0; i < m.layers; ++i)
    n += lora_adapter_params(m, t, i);
  return n;
}

double task_flops_per_token(const ModelSpec& m, int seq_len, const FlopConvention& c,
                            const TaskSpec& t) {
  FlopConvention tc = c;
  if (t.kind != TrainingTask::kPretrain) tc.document_tokens = t.mean_document_tokens;
  if (t.frozen_base()) tc.weight_flops = 4.0;
  return model_flops_per_token(m, seq_len, tc) +
         6.0 * static_cast<double>(lora_adapter_params(m, t));
}

}  // namespace fleetsim
