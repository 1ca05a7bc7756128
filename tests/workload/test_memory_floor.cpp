// memory_floor (sim/workload/memory.cpp): what a layout needs whatever its activation and
// optimizer options, against the parameter count of Llama 3 70B worked out from its
// config.json (workloads/models/llama3-70b.json) by hand.
#include <catch2/catch.hpp>

#include "scenario/model_loader.h"
#include "support/fixtures.h"
#include "workload/memory.h"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {

// Llama 3 70B: h = 8192, ffn = 28672, 64 heads of 128 with 8 KV heads, vocab 128256, untied.
// Per layer: q and o 8192², k and v 8192 · 1024 each, gate / up / down 3 · 8192 · 28672, two
// RMSNorms of 8192.
constexpr int64_t kLinearPerLayer =
    2 * 8192LL * 8192 + 2 * 8192LL * 1024 + 3 * 8192LL * 28672;  // 855,638,016
constexpr int64_t kNormsPerLayer = 2 * 8192;
constexpr int64_t kLinear = 80 * kLinearPerLayer;                             // 68,451,041,280
constexpr int64_t kOther = 80 * kNormsPerLayer + 2 * 128256LL * 8192 + 8192;  // + final norm
constexpr int64_t kParams = kLinear + kOther;                                 // 70,553,706,496
constexpr int64_t kGiB = int64_t{1} << 30;

ParallelConfig dp_only(PrecisionRecipe prec) {
  ParallelConfig p;
  p.dp = 64;
  p.seq_len = 8192;
  p.micro_batch = 2;
  p.global_batch = 256;
  p.precision = prec;
  return p;
}

}  // namespace

TEST_CASE("memory floor: bf16 weights and bf16 gradients of a data-parallel-only layout") {
  const ModelSpec m = zoo("llama3-70b");
  MemoryOptions o;
  o.grad_bytes = 2;
  // NVFP4 without parameter gather (Megatron-Bridge <= 0.4.1): the bf16 weights are the floor's
  // weights (the NVFP4 copies are a cache), 2 + 2 B per parameter: 282.2 GB, more than a
  // GB300's 279 GB (259.8 GiB) before any activation.
  const ParallelConfig p = dp_only(PrecisionRecipe::kNvfp4);
  const int64_t floor = memory_floor(m, p, o);
  CHECK(floor == 4 * kParams + kGiB);
  CHECK(floor > static_cast<int64_t>(259.839 * kGiB));
  // The estimate is never below its floor: the floor leaves out the optimizer, the quantized
  // copies and every activation.
  const MemoryBreakdown r = estimate_memory(m, p, 279'000'000'000LL, o);
  CHECK(r.params_on_rank == kParams);
  CHECK(r.reserved + r.device_overhead > floor);
  // fp32 main gradients: 2 + 4 B.
  o.grad_bytes = 4;
  CHECK(memory_floor(m, p, o) == 6 * kParams + kGiB);
}

TEST_CASE("memory floor: parameter gather keeps only the quantized row-wise weights") {
  const ModelSpec m = zoo("llama3-70b");
  MemoryOptions o;
  o.grad_bytes = 2;
  o.fp8_param_gather = true;
  // NVFP4 with fp4 parameter gather (Megatron-Bridge >= 0.4.2): 0.5 B + one 1-byte scale per 16
  // elements = 18/32 B per linear weight; embeddings, LM head and norms stay bf16.
  CHECK(memory_floor(m, dp_only(PrecisionRecipe::kNvfp4), o) ==
        2 * kOther + 18 * kLinear / 32 + 2 * kParams + kGiB);
  // MXFP8: 1 B + one scale per 32 elements.
  CHECK(memory_floor(m, dp_only(PrecisionRecipe::kMxfp8), o) ==
        2 * kOther + 33 * kLinear / 32 + 2 * kParams + kGiB);
  // Per-tensor FP8: 1 B.
  CHECK(memory_floor(m, dp_only(PrecisionRecipe::kFp8Current), o) ==
        2 * kOther + kLinear + 2 * kParams + kGiB);
  // BF16 ignores the flag.
  CHECK(memory_floor(m, dp_only(PrecisionRecipe::kBf16), o) == 4 * kParams + kGiB);
}

TEST_CASE("memory floor: pipeline stages, FSDP and LoRA") {
  const ModelSpec m = zoo("llama3-70b");
  MemoryOptions o;
  o.grad_bytes = 2;
  // PP 4, no VP: stage 0 holds 20 layers and the embedding, the last stage 20 layers, the final
  // norm and the LM head: both 20 · (linear + norms) + 128256 · 8192 (+ 8192 on the last).
  ParallelConfig p = dp_only(PrecisionRecipe::kBf16);
  p.pp = 4;
  p.dp = 16;
  const int64_t last = 20 * (kLinearPerLayer + kNormsPerLayer) + 128256LL * 8192 + 8192;
  CHECK(memory_floor(m, p, o) == 4 * last + kGiB);
  // FSDP over 64: weights and gradients sharded.
  p = dp_only(PrecisionRecipe::kBf16);
  p.fsdp = true;
  CHECK(memory_floor(m, p, o) == 4 * (kParams / 64) + kGiB);
  // LoRA: the base weights are frozen and have no gradients.
  p = dp_only(PrecisionRecipe::kBf16);
  p.task.kind = TrainingTask::kLora;
  p.task.lora_rank = 16;
  CHECK(memory_floor(m, p, o) == 2 * kParams + kGiB);
}
