// Fine-tuning rows (finetune_rows.h).
//
// The recipes: Megatron-Bridge's performance recipes for the 26.06 rows
// (src/megatron/bridge/perf_recipes/llama/{h100,gb200,gb300}/llama3.py at
// NVIDIA-NeMo/Megatron-Bridge@4ab94dfad366, the commit of the rows' page): SFT and LoRA train on
// SQuAD packed offline to seq_len (dataset.offline_packing_specs.packed_sequence_size =
// seq_length, pad_to_max_length; recipes/utils/dataset_utils.py default_squad_config); LoRA sets
// peft.target_modules = ["linear_qkv"], and the Llama 3 70B PEFT recipe
// (recipes/llama/h100/llama3.py, llama3_70b_peft_8gpu_h100_bf16_config) dim = 16 (alpha 32,
// which changes no cost). The NeMo 24.07 rows note "SQuAD-v1.1 packed to 4096 tokens"; their
// adapter settings are not in the repository and are read as the same (an adapter of rank
// 16-32 on linear_qkv is < 0.1 % of a step's FLOPs).
//
// The mean document length: SQuAD v1.1 holds 98,169 examples (87,599 train + 10,570
// validation) in 94.06 MiB (tensorflow.org/datasets/catalog/squad, squad/v1.1): about 1,005
// bytes of text per example (context, question, answer, title, id), about 240 tokens at ~4 bytes
// per token of a Llama-3-class tokenizer, prompt template included.
//
// FLOPs per token as the pages count them:
//   Megatron-Bridge SFT: the pre-training formula over the whole packed sequence (flop_utils.py
//     has no packed-sequence term outside its LoRA branch; the published Llama 3 70B SFT pair,
//     1671 TFLOP/s at 3864 tokens/s = 432 GFLOP per token, is the causal 4096-token count);
//   Megatron-Bridge LoRA: flop_utils.py's LoRA branch: 2/3 of the frozen weights' 6 FLOPs per
//     weight per token, plus 12 · layers · h · Σ d² per packed sequence for attention over its
//     documents (all keys of each document), i.e. weight_flops 4 and non-causal document keys;
//   NeMo 2.0 (24.07): attention over the packed documents, causal (its SFT and LoRA pairs are
//     within 0.5 % of it), 6 or 4 FLOPs per weight.
#include "validate/finetune_rows.h"

#include <regex>

namespace fleetsim {

bool row_task(const std::string& notes, const std::string& source_url, TaskSpec* out,
              std::string* why) {
  static const std::regex task_re(R"(task=([A-Za-z-]+))");
  std::smatch m;
  *out = TaskSpec{};
  if (!std::regex_search(notes, m, task_re)) return true;
  const std::string task = m[1].str();
  if (task == "Pre-Training" || task == "pretrain") return true;
  if (task == "SFT" || task == "LoRA") {
    const bool nvidia_page = source_url.find("NVIDIA-NeMo/Megatron-Bridge") != std::string::npos ||
                             source_url.find("NVIDIA/NeMo/") != std::string::npos;
    if (!nvidia_page) {
      *why = "task '" + task +
             "' outside NVIDIA's NeMo / Megatron-Bridge performance pages: the dataset (mean " +
             "document length) and adapter settings are not known; give the scenario's " +
             "workload.task and workload.fine_tuning to `fleetsim run` instead";
      return false;
    }
    out->kind = task == "SFT" ? TrainingTask::kSft : TrainingTask::kLora;
    out->mean_document_tokens = kSquadMeanDocumentTokens;
    out->lora_rank = 16;
    out->lora_targets = kLoraQkv;
    return true;
  }
  *why = "task '" + task + "' is not modelled (pre-training, SFT and LoRA are)";
  return false;
}

double finetune_reported_flops_per_token(const ModelSpec& m, int seq_len, const TaskSpec& t,
                                         bool nemo_source) {
  FlopConvention c;
  c.benchmark_vocab = true;
  c.weight_flops = t.frozen_base() ? 4.0 : 6.0;
  if (nemo_source) {
    c.causal = true;
    c.document_tokens = t.mean_document_tokens;
  } else if (t.frozen_base()) {
    c.causal = false;
    c.document_tokens = t.mean_document_tokens;
  }
  return model_flops_per_token(m, seq_len, c);
}

}  // namespace fleetsim
