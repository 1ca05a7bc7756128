// workload.task and workload.fine_tuning of a training scenario (workload/task.h;
// docs/scenarios.md).
#include "scenario/json_reader.h"
#include "scenario/training_loader.h"

namespace fleetsim {

using namespace jsonr;

const std::vector<std::string>& fine_tuning_keys() {
  static const std::vector<std::string> k = {"mean_document_tokens", "lora_rank", "lora_targets"};
  return k;
}

void read_task(const Obj& w, ParallelConfig* out) {
  TaskSpec& t = out->task;
  if (w.has("task")) parse_task(w.choice("task", {"pretrain", "sft", "lora"}), &t.kind);
  if (!w.has("fine_tuning")) return;
  const Obj f = w.object("fine_tuning", fine_tuning_keys());
  if (t.kind == TrainingTask::kPretrain)
    w.fail(w.at("fine_tuning"), "fine_tuning applies to task 'sft' or 'lora' (workload/task)");
  if (f.has("mean_document_tokens")) {
    t.mean_document_tokens = static_cast<int>(f.integer("mean_document_tokens", 1, 1 << 24));
    if (t.mean_document_tokens > out->seq_len)
      f.fail(f.at("mean_document_tokens"), "expected a mean document length of at most seq_len = " +
                                               std::to_string(out->seq_len) + ", got " +
                                               std::to_string(t.mean_document_tokens));
  }
  for (const char* k : {"lora_rank", "lora_targets"})
    if (f.has(k) && t.kind != TrainingTask::kLora)
      f.fail(f.at(k), std::string(k) + " applies to task 'lora' only");
  if (f.has("lora_rank")) t.lora_rank = static_cast<int>(f.integer("lora_rank", 1, 65536));
  if (f.has("lora_targets")) {
    const json& list = f.get("lora_targets");
    if (!list.is_array() || list.empty())
      f.fail(f.at("lora_targets"), "expected a non-empty array of module names");
    t.lora_targets = 0;
    for (size_t i = 0; i < list.size(); ++i) {
      unsigned bit = 0;
      if (!list[i].is_string() || !parse_lora_target(list[i].get<std::string>(), &bit))
        f.fail(f.at("lora_targets") + "/" + std::to_string(i),
               "expected one of linear_qkv, linear_proj, linear_fc1, linear_fc2, got " +
                   show(list[i]));
      t.lora_targets |= bit;
    }
  }
}

}  // namespace fleetsim
