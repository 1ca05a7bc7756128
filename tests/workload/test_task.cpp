// Training tasks (sim/workload/task.cpp and the task's effect on the step and memory): LoRA's
// FLOPs per token in closed form, its per-layer executed FLOPs (no wgrad of base weights, the
// adapter GEMMs), LoRA parameter state by hand, and the attention of packed sequences against a
// hand sum over their documents.
#include <catch2/catch.hpp>

#include "scenario/model_loader.h"
#include "scenario/scenario.h"
#include "support/fixtures.h"
#include "workload/layer_costs.h"
#include "workload/memory.h"
#include "workload/step.h"
#include "workload/task.h"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {
// Llama 3 8B's published shape (workloads/models/llama3-8b.json): 32 layers, h 4096, 32 heads
// of 128, 8 KV heads, SwiGLU FFN 14336, vocabulary 128256, untied embeddings.
constexpr double kL = 32, kH = 4096, kHeads = 32, kKv = 8, kHd = 128, kF = 14336, kV = 128256;
constexpr double kAttnW = kH * (kHeads + 2 * kKv) * kHd + kHeads * kHd * kH;  // qkv + proj
constexpr double kMlpW = 3 * kH * kF;
// Adapter parameters of one layer, rank r, all four targets: r·(k + n) each.
double adapters_all(double r) {
  return r * ((kH + (kHeads + 2 * kKv) * kHd) + (kHeads * kHd + kH) + (kH + 2 * kF) + (kF + kH));
}

TaskSpec lora(int rank, unsigned targets, int doc = 0) {
  TaskSpec t;
  t.kind = TrainingTask::kLora;
  t.lora_rank = rank;
  t.lora_targets = targets;
  t.mean_document_tokens = doc;
  return t;
}

// Executed FLOPs of one decoder layer's forward + backward on one GPU (tp = 1), 4096 tokens.
double layer_flops(const ModelSpec& m, const TaskSpec& t, const ComputeModel& c) {
  ParallelConfig p = one_gpu(4096);
  p.task = t;
  FrameworkOptions fw;
  LayerCostModel costs(m, p, fw, c, no_comm);
  return costs.layer(0, false).flops + costs.layer(0, true).flops;
}
}  // namespace

TEST_CASE("packed documents and the keys attended") {
  const auto d = packed_documents(4096, 1000);
  REQUIRE(d.size() == 2);
  CHECK(d[0].count == 4);
  CHECK(d[0].tokens == 1000);
  CHECK(d[1].count == 1);
  CHECK(d[1].tokens == 96);
  CHECK(packed_documents(4096, 0).size() == 1);
  CHECK(packed_documents(4096, 4096)[0].tokens == 4096);
  const ModelSpec m = zoo("llama3-8b");
  // Causal: each query of a document of d tokens attends d/2 keys on average.
  CHECK(packed_attended_keys(m, 0, 4096, 1000) ==
        Approx((4 * 1000.0 * 500.0 + 96.0 * 48.0) / 4096.0));
  CHECK(packed_attended_keys(m, 0, 4096, 0) == Approx(2048.0));
}

TEST_CASE("LoRA model FLOPs per token in closed form") {
  const ModelSpec m = zoo("llama3-8b");
  const double n_weights = kL * (kAttnW + kMlpW) + kH * kV;  // GEMM weights incl. the LM head
  const double attn = kL * 3.0 * 2.0 * (4096.0 / 2.0) * (2.0 * kHeads * kHd);  // causal, fwd+bwd
  const FlopConvention c;
  // Pre-training: 6 per weight per token.
  CHECK(task_flops_per_token(m, 4096, c, TaskSpec{}) == Approx(6.0 * n_weights + attn));
  // LoRA, all targets, r = 16: 4 per frozen weight (no wgrad), 6 per adapter parameter.
  const TaskSpec t = lora(16, kLoraAllTargets);
  CHECK(lora_adapter_params(m, t) == static_cast<int64_t>(kL * adapters_all(16)));
  CHECK(task_flops_per_token(m, 4096, c, t) ==
        Approx(4.0 * n_weights + attn + 6.0 * kL * adapters_all(16)));
  // Only linear_qkv, r = 16: r·(h + (heads + 2·kv)·hd) per layer.
  const TaskSpec q = lora(16, kLoraQkv);
  CHECK(lora_adapter_params(m, q) ==
        static_cast<int64_t>(kL * 16 * (kH + (kHeads + 2 * kKv) * kHd)));
}

TEST_CASE("LoRA decoder layer: no wgrad of base weights, adapter GEMMs forward and backward") {
  const ModelSpec m = zoo("llama3-8b");
  const ComputeModel c = gpu_compute("dgx-b200");
  const double T = 4096;
  // Attention executed per layer: forward 2·heads·s·(s/2)·(dqk + dv), backward 2.5×.
  const double attn = 3.5 * 2.0 * kHeads * T * (T / 2.0) * (2.0 * kHd);
  const double pre = layer_flops(m, TaskSpec{}, c);
  CHECK(pre == Approx(6.0 * T * (kAttnW + kMlpW) + attn));
  const double lo = layer_flops(m, lora(16, kLoraAllTargets), c);
  CHECK(lo == Approx(4.0 * T * (kAttnW + kMlpW) + 6.0 * T * adapters_all(16) + attn));
  CHECK(pre - lo == Approx(2.0 * T * (kAttnW + kMlpW) - 6.0 * T * adapters_all(16)));
}

TEST_CASE("LoRA memory: gradients and optimizer state for the adapters only") {
  const ModelSpec m = zoo("llama3-8b");
  ParallelConfig p;
  p.seq_len = 4096;
  p.global_batch = 8;
  p.dp = 8;
  p.distributed_optimizer = true;
  p.task = lora(16, kLoraQkv);
  const int64_t hbm = int64_t{180} << 30;
  const MemoryOptions o;  // fp32 main grads, fp32 master and Adam moments
  const MemoryBreakdown r = estimate_memory_stage(m, p, hbm, o, 0);
  const int64_t adapter = 32 * 16 * (4096 + 48 * 128);  // 5,242,880
  CHECK(r.params_on_rank == total_params(m));
  CHECK(r.weights == 2 * (total_params(m) + adapter));  // bf16 base and adapters
  CHECK(r.gradients == 4 * adapter);                    // fp32 main grads, not sharded
  CHECK(r.master_weights == 4 * (adapter / 8));         // sharded over dp = 8
  CHECK(r.optimizer == 8 * (adapter / 8));
  // Pre-training, for contrast: every parameter has a gradient.
  p.task = TaskSpec{};
  CHECK(estimate_memory_stage(m, p, hbm, o, 0).gradients == 4 * total_params(m));
}

TEST_CASE("packed-sequence attention: the sum over the documents' kernels") {
  const ModelSpec m = zoo("llama3-8b");
  const ComputeModel c = gpu_compute("dgx-b200");
  ParallelConfig p = one_gpu(4096);
  const FrameworkOptions fw;
  LayerCostModel pre(m, p, fw, c, no_comm);
  ParallelConfig q = p;
  q.task.kind = TrainingTask::kSft;
  q.task.mean_document_tokens = 1000;  // 4 documents of 1000 tokens and one of 96
  LayerCostModel sft(m, q, fw, c, no_comm);
  auto compute = [](const Block& b) {
    Time t = Time::zero();
    for (const Segment& s : b.segs)
      t += s.compute;
    return t;
  };
  AttentionShape a;
  a.heads = 32;
  a.kv_heads = 8;
  a.head_dim_qk = a.head_dim_v = 128;
  a.causal = true;
  auto kernel = [&](int batch, int seq, bool bwd) {
    AttentionShape s = a;
    s.batch = batch;
    s.seq_q = s.seq_kv = seq;
    return c.attention(s, bwd, DType::kBf16);
  };
  for (bool bwd : {false, true}) {
    // Everything but the attention kernel is the same; the attention kernel of the packed
    // sequence is the documents' kernels summed.
    const Time docs = kernel(4, 1000, bwd) + kernel(1, 96, bwd);
    const Time whole = kernel(1, 4096, bwd);
    const double diff = (compute(sft.layer(0, bwd)) - compute(pre.layer(0, bwd))).seconds();
    CHECK(diff == Approx((docs - whole).seconds()).epsilon(1e-9));
    CHECK(docs < whole);
  }
  // Executed attention FLOPs: Σ over documents of 2·heads·d·(d/2)·(dqk + dv), forward.
  const double hand = 2.0 * 32 * (4 * 1000.0 * 500.0 + 96.0 * 48.0) * 256.0;
  const double whole = 2.0 * 32 * 4096.0 * 2048.0 * 256.0;
  CHECK(pre.layer(0, false).flops - sft.layer(0, false).flops == Approx(whole - hand));
}
