// What a training job trains: pre-training, full supervised fine-tuning (SFT) on packed
// sequences, or LoRA (low-rank adapters on frozen base weights).
//
// Packed sequences (Megatron-Core's THD layout with cu_seqlens, as Megatron-Bridge's
// offline-packed SFT datasets feed it): each micro-batch sequence of seq_len tokens holds
// documents of mean_document_tokens tokens, and attention runs within each document only, so
// the attention cost follows the documents' lengths (Σ d² / 2 per causal sequence), not the
// packed length. fleetsim lays a packed sequence out as floor(S / d) documents of d tokens and
// one of the remaining S mod d tokens. The loss mask of SFT (answer tokens only) changes no
// compute: logits and cross entropy run over every token and the mask multiplies the loss.
//
// LoRA (Hu et al. 2021; Megatron-Bridge src/megatron/bridge/peft/lora.py): every base weight is
// frozen, so no weight-gradient GEMM (wgrad) runs for it and it has no main gradient, master
// copy or Adam state; each targeted linear layer gets an adapter B·A (A: k → r, B: r → n) whose
// two GEMMs run forward, and whose dgrad and wgrad GEMMs run backward. The DP gradient
// reduction and the optimizer cover the adapter parameters only. The adapter's alpha (a scale)
// changes no cost. Targets are Megatron-Core's module names: linear_qkv, linear_proj (attention
// output), linear_fc1, linear_fc2 (dense MLP and shared experts); the defaults are those of
// Megatron-Bridge's LoRA class (rank 32, all four targets). Not modelled: adapters on routed
// experts and on MLA projections (the base GEMMs there are still frozen), and the activation
// memory a frozen linear no longer saves for its wgrad.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workload/model.h"

namespace fleetsim {

enum class TrainingTask { kPretrain, kSft, kLora };

// Megatron-Core linear modules a LoRA adapter may target (bit flags).
enum LoraTarget : unsigned {
  kLoraQkv = 1u << 0,   // linear_qkv: fused q / k / v projection (GQA)
  kLoraProj = 1u << 1,  // linear_proj: attention output projection
  kLoraFc1 = 1u << 2,   // linear_fc1: MLP up (and gate) projection
  kLoraFc2 = 1u << 3,   // linear_fc2: MLP down projection
};
constexpr unsigned kLoraAllTargets = kLoraQkv | kLoraProj | kLoraFc1 | kLoraFc2;

struct TaskSpec {
  TrainingTask kind = TrainingTask::kPretrain;
  // Packed sequences: mean tokens per document (0 = one document per sequence, i.e. unpacked
  // or pre-training). At most seq_len.
  int mean_document_tokens = 0;
  int lora_rank = 32;                       // LoRA only: adapter rank r
  unsigned lora_targets = kLoraAllTargets;  // LoRA only: LoraTarget bits
  bool frozen_base() const { return kind == TrainingTask::kLora; }
};

const char* to_string(TrainingTask t);
bool parse_task(const std::string& s, TrainingTask* out);     // pretrain, sft, lora
bool parse_lora_target(const std::string& s, unsigned* bit);  // linear_qkv, ...
std::string lora_targets_string(unsigned targets);            // "linear_qkv,linear_proj"

// The documents of one packed sequence of seq_len tokens: (count, length) groups, longest
// first; {(1, seq_len)} when mean_document_tokens is 0 or >= seq_len.
struct DocumentGroup {
  int count = 0;
  int tokens = 0;
};
std::vector<DocumentGroup> packed_documents(int seq_len, int mean_document_tokens);

// LoRA adapter parameters of decoder layer `layer` (unsharded): r · (k + n) per targeted
// linear layer [k → n]; 0 unless t is LoRA. Routed experts and MLA projections get none.
int64_t lora_adapter_params(const ModelSpec& m, const TaskSpec& t, int layer);
int64_t lora_adapter_params(const ModelSpec& m, const TaskSpec& t);  // every decoder layer

// Model FLOPs of one training step per token of the task, in closed form:
//   pretrain: model_flops_per_token(m, seq_len, c);
//   sft:      the same weights term (6 per weight per token), attention over each packed
//             document (keys from packed_attended_keys);
//   lora:     4 per frozen weight per token (forward and dgrad, no wgrad), the same document
//             attention (3× forward: the dgrad of q, k, v still runs; DeepSeek sparse
//             attention's indexer scoring 1×, it has no backward), plus 6 per adapter
//             parameter per token.
double task_flops_per_token(const ModelSpec& m, int seq_len, const FlopConvention& c,
                            const TaskSpec& t);

}  // namespace fleetsim
