// Fine-tuning rows of a reference CSV (notes "task=SFT" / "task=LoRA"): the task NVIDIA's
// benchmark recipes ran and the FLOPs per token their pages count (finetune_rows.cpp).
#pragma once

#include <string>

#include "workload/model.h"
#include "workload/task.h"

namespace fleetsim {

// Mean tokens per document of SQuAD v1.1 as NVIDIA's fine-tuning benchmarks pack it (see
// finetune_rows.cpp for the derivation).
constexpr int kSquadMeanDocumentTokens = 240;

// The row's task from its notes ("task=Pre-Training", "task=SFT", "task=LoRA"; none =
// pre-training) with the settings of NVIDIA's fine-tuning recipes, for rows of NVIDIA's NeMo /
// Megatron-Bridge performance pages (source_url). false (and *why) for a task fleetsim does
// not model, or a fine-tuning row of another source (its dataset and adapters are not known).
bool row_task(const std::string& notes, const std::string& source_url, TaskSpec* out,
              std::string* why);

// FLOPs per token NVIDIA's page counts for a fine-tuning row (task sft / lora) at seq_len, for
// the TFLOP/s/GPU metric: nemo_source = the NeMo 2.0 pages (24.07), else Megatron-Bridge's.
double finetune_reported_flops_per_token(const ModelSpec& m, int seq_len, const TaskSpec& t,
                                         bool nemo_source);

}  // namespace fleetsim
