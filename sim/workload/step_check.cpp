// Validation of a parallel configuration against the model and the cluster (step_check.h).
#include <algorithm>
#include <string>

#include "core/error.h"
#include "workload/step_check.h"

namespace fleetsim {

// ---------------------------------------------------------------------------------------------
// Configuration checks

namespace {

// Mamba-2 blocks under Megatron-Core's MambaMixer: TP splits heads and B/C groups (both must
// divide, mamba_mixer.py asserts ngroups % tp == 0). Megatron-Core's Mamba context parallelism
// (an all-to-all from sequence to head shards around conv1d + SSD) is not modelled.
//
// Gated DeltaNet blocks under Megatron-Core's GatedDeltaNet (megatron/core/ssm/gated_delta_net.py):
// TP splits the key and value heads (both must divide); it has no context parallelism ("TODO:
// support CP") and refuses packed sequences (NotImplementedError), so cp > 1 and packed SFT are
// input errors.
//
// DeepSeek sparse attention under Megatron-Core's DSAttention (experimental_attention_variant/
// dsa.py): the indexer scores the local sequence only and asserts that no packed sequence is
// given, so cp > 1 and packed SFT are input errors; its projections are duplicated on every TP
// rank (no TP constraint beyond the attention heads').
template <class Fail>
void check_gdn_dsa_parallel(const ModelSpec& m, const ParallelConfig& p, const Fail& fail) {
  const std::string par = "/parallelism";
  const bool packed = p.task.mean_document_tokens > 0 && p.task.mean_document_tokens < p.seq_len;
  if (std::count(m.blocks.begin(), m.blocks.end(), BlockKind::kGdn) > 0) {
    if (m.gdn.qk_heads % p.tp != 0 || m.gdn.v_heads % p.tp != 0)
      fail(par + "/tp", "tp = " + std::to_string(p.tp) + " must divide the model's " +
                            std::to_string(m.gdn.qk_heads) + " Gated DeltaNet key heads and its " +
                            std::to_string(m.gdn.v_heads) + " value heads");
    if (m.gdn.kda && p.tp > 1)
      fail(par + "/tp",
           "tensor parallelism with Kimi Delta Attention layers is not modelled (Megatron-Core "
           "has no KDA layer to follow for its low-rank gate projections; use tp = 1)");
    if (p.cp > 1)
      fail(par + "/cp",
           "context parallelism with Gated DeltaNet layers is not supported by Megatron-Core's "
           "GatedDeltaNet (use cp = 1)");
    if (packed)
      fail("/fine_tuning/mean_document_tokens",
           "packed sequences with Gated DeltaNet layers are not supported by Megatron-Core's "
           "GatedDeltaNet (use unpacked sequences)");
  }
  if (is_sparse_attention(m)) {
    if (p.cp > 1)
      fail(par + "/cp",
           "context parallelism with DeepSeek sparse attention is not supported by Megatron-Core's "
           "DSAttention (its indexer scores the local sequence only; use cp = 1)");
    if (packed)
      fail("/fine_tuning/mean_document_tokens",
           "packed sequences with DeepSeek sparse attention are not supported by Megatron-Core's "
           "DSAttention (use unpacked sequences)");
  }
}

template <class Fail>
void check_hybrid_parallel(const ModelSpec& m, const ParallelConfig& p, const Fail& fail) {
  // DeepSeek-V4: parameters and model FLOPs are modelled (model_v4.cpp), its step is not.
  if (is_compressed_attention(m))
    fail("/model",
         "the step model of DeepSeek-V4 (shared-KV attention with CSA / HCA compressors and the "
         "lightning indexer, grouped low-rank output projection, mHC residual streams, hash "
         "routing) is not implemented: parameter and FLOP counts only (docs/models.md)");
  check_gdn_dsa_parallel(m, p, fail);
  bool mamba = false;
  for (BlockKind k : m.blocks)
    mamba = mamba || k == BlockKind::kMamba;
  if (!mamba) return;
  const std::string par = "/parallelism";
  if (m.mamba.heads % p.tp != 0 || m.mamba.groups % p.tp != 0)
    fail(par + "/tp", "tp = " + std::to_string(p.tp) + " must divide the model's " +
                          std::to_string(m.mamba.heads) + " Mamba-2 heads and its " +
                          std::to_string(m.mamba.groups) + " B/C groups");
  if (p.cp > 1)
    fail(par + "/cp", "context parallelism with Mamba-2 layers is not modelled (use cp = 1)");
}

}  // namespace

void check_parallel_config(const ModelSpec& m, const ParallelConfig& p, int world_gpus,
                           int gpus_per_domain, const std::string& file, const std::string& ptr) {
  auto fail = [&](const std::string& key, const std::string& msg) {
    throw InputError(file, ptr + key, msg);
  };
  const std::string par = "/parallelism";
  if (p.tp < 1 || p.pp < 1 || p.cp < 1 || p.vp < 1 || p.ep < 1 || p.etp < 1)
    fail(par, "every parallel degree must be >= 1");
  const int64_t denom = int64_t{p.tp} * p.cp * p.pp;
  if (world_gpus % denom != 0) {
    fail(par, "tp·cp·pp = " + std::to_string(denom) + " must divide the " +
                  std::to_string(world_gpus) + " GPUs of the cluster");
  }
  if (p.dp * denom != world_gpus) {
    fail(par + "/dp", "dp = " + std::to_string(p.dp) +
                          " but world / (tp·cp·pp) = " + std::to_string(world_gpus / denom));
  }
  const int heads = m.attention.heads;
  if (heads % p.tp != 0)
    fail(par + "/tp", "tp = " + std::to_string(p.tp) + " must divide the model's " +
                          std::to_string(heads) + " attention heads");
  if (m.attention.kind == AttentionKind::kGqa && m.attention.kv_heads % p.tp != 0 &&
      p.tp % m.attention.kv_heads != 0) {
    fail(par + "/tp", "tp = " + std::to_string(p.tp) + " and the model's " +
                          std::to_string(m.attention.kv_heads) +
                          " KV heads must divide one another");
  }
  if (p.tp > gpus_per_domain) {
    fail(par + "/tp", "tp = " + std::to_string(p.tp) + " exceeds the " +
                          std::to_string(gpus_per_domain) +
                          " GPUs of one NVLink domain; TP across the fabric is not modelled");
  }
  const int vstages = p.pp * p.vp;
  // The embedding and the loss may each take a virtual stage of their own (Megatron's
  // pipeline layouts), so pp·vp may exceed the decoder layers by two.
  if (m.layers + 2 < vstages) {
    fail(par + "/pp", "pp·vp = " + std::to_string(vstages) + " exceeds the model's " +
                          std::to_string(m.layers) + " layers + embedding + loss");
  }
  if (p.vp > 1 && p.pp == 1) fail(par + "/vp", "vp > 1 needs pp > 1 (interleaved schedule)");
  if (p.seq_len < 1) fail("/batch/seq_len", "expected a sequence length >= 1");
  if (p.seq_len % p.cp != 0)
    fail(par + "/cp",
         "cp = " + std::to_string(p.cp) + " must divide seq_len " + std::to_string(p.seq_len));
  if (p.cp > 1 && p.seq_len % (2 * p.cp) != 0)
    fail(par + "/cp", "ring attention with load balancing needs seq_len divisible by 2·cp");
  if (p.micro_batch < 1) fail("/batch/micro", "expected a micro-batch size >= 1");
  if (p.global_batch < 1) fail("/batch/global", "expected a global batch size >= 1");
  if (p.global_batch % (int64_t{p.micro_batch} * p.dp) != 0) {
    fail("/batch/global", "global batch " + std::to_string(p.global_batch) +
                              " must be a multiple of micro_batch·dp = " +
                              std::to_string(int64_t{p.micro_batch} * p.dp));
  }
  const int mbs = p.micro_batches();
  if (p.vp > 1 && mbs % p.pp != 0) {
    fail("/batch/global", "the interleaved schedule needs the number of micro-batches (" +
                              std::to_string(mbs) +
                              ") to be a multiple of pp = " + std::to_string(p.pp));
  }
  const int64_t stage_ranks = int64_t{p.tp} * p.cp * p.dp;
  if (stage_ranks % (int64_t{p.ep} * p.etp) != 0) {
    fail(par + "/ep", "ep·etp = " + std::to_string(p.ep * p.etp) +
                          " must divide tp·cp·dp = " + std::to_string(stage_ranks));
  }
  if (is_moe(m)) {
    if (m.moe.experts % p.ep != 0)
      fail(par + "/ep", "ep = " + std::to_string(p.ep) + " must divide the model's " +
                            std::to_string(m.moe.experts) + " experts" +
                            (m.experts_field.empty() ? "" : " (" + m.experts_field + ")"));
  } else if (p.ep > 1) {
    fail(par + "/ep", "ep > 1 needs a mixture-of-experts model");
  }
  check_hybrid_parallel(m, p, fail);
  if (p.fsdp && p.pp > 1)
    fail(par + "/fsdp", "FSDP with pipeline parallelism is not modelled (use pp = 1)");
  check_task(p, file, ptr);
}

// The task's settings (task.h) against the batch; pointers under `ptr` + "/fine_tuning".
void check_task(const ParallelConfig& p, const std::string& file, const std::string& ptr) {
  const TaskSpec& t = p.task;
  const std::string ft = ptr + "/fine_tuning";
  if (t.mean_document_tokens < 0 || t.mean_document_tokens > p.seq_len)
    throw InputError(
        file, ft + "/mean_document_tokens",
        "expected a mean document length in [1, seq_len = " + std::to_string(p.seq_len) +
            "], got " + std::to_string(t.mean_document_tokens));
  if (t.kind == TrainingTask::kLora) {
    if (t.lora_rank < 1 || t.lora_rank > 65536)
      throw InputError(
          file, ft + "/lora_rank",
          "expected an adapter rank in [1, 65536], got " + std::to_string(t.lora_rank));
    if (t.lora_targets == 0)
      throw InputError(file, ft + "/lora_targets", "expected at least one target module");
    if (p.fsdp)
      throw InputError(file, ptr + "/parallelism/fsdp",
                       "LoRA with FSDP is not modelled (use the distributed optimizer)");
  }
}

}  // namespace fleetsim
