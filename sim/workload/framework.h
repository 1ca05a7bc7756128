// Framework behaviour: the Megatron-LM / NeMo switches a scenario or a release's recipe sets
// (dispatcher, overlaps, fusions, CUDA graphs, pipeline split, DP buckets), the host costs of
// issuing work, the memory options and the global framework parameter. Filled by sim/scenario
// (scenario files, calibration/framework.json, calibration/releases.json), read by the step
// simulator (step.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/time.h"
#include "workload/memory.h"

namespace fleetsim {

// How decoder layers are spread over the pipeline's virtual stages.
enum class PipelineSplit {
  kAuto,      // even when the layers divide evenly, else balanced
  kEven,      // layers / (pp·vp) per virtual stage, the remainder to the middle stages
  kBalanced,  // contiguous split minimising the slowest virtual stage (NeMo's layouts)
};

// How MoE tokens travel to their experts: Megatron's alltoall dispatcher, or the flex
// dispatcher with one of the EP communication libraries of sim/coll/dispatch.h (FP8 dispatch
// with FP8 recipes, BF16 combine; copies per library and mode as docs/training-model.md
// "Expert dispatch" says). Scenario names in the comments.
enum class MoeDispatcher {
  kAllToAll,          // "alltoall" (alias "nccl"): every top-k copy sent with NCCL, BF16
  kDeepEp,            // "deepep": DeepEP normal kernels, one copy per destination GPU in a node
                      // and one per destination node (forwarded over NVLink there)
  kDeepEpLowLatency,  // "deepep-low-latency": one RDMA message per token–expert pair
  kHybridEp,          // "hybridep"
  kUcclEp,            // "uccl-ep": DeepEP's kernels with a CPU proxy driving the NICs (EFA)
  kUcclEpLowLatency,  // "uccl-ep-low-latency"
  kPplx,              // "pplx"
  kNvlinkOneSided,    // "nvlink-one-sided" (TensorRT-LLM NVLinkOneSided)
};

// Host (CPU) time of the framework issuing work to the GPU, per host CPU class
// (calibration/host/host-costs.csv, kernel-level measurements with sources; docs/training-model.md
// "Host side"). All zero = no host model (the GPU never waits for launches).
struct HostCosts {
  Time op;             // one eager framework op launching one kernel (Python, dispatcher, launch)
  Time module;         // one Transformer Engine module call, its first kernel launch included
  Time launch;         // a further kernel launched from C++ inside a module (cudaLaunchKernel)
  Time nccl;           // one collective / point-to-point call through torch.distributed
  Time d2h;            // device-to-host round trip at a synchronising point
  Time graph;          // one CUDA graph launch (replay), on top of the op that calls it
  Time expert;         // per local expert per GroupedLinear GEMM call (TE's per-expert path)
  std::string cpu;     // host CPU class the values are for ("x86", "grace")
  std::string source;  // where they were read from
};

// CUDA graphs (Megatron's --cuda-graph-impl / --cuda-graph-scope): captured kernels are not
// launched one by one; each captured region costs one graph launch.
enum class CudaGraphs {
  kNone,           // every kernel launched eagerly
  kScopes,         // Transformer Engine scopes per layer (FrameworkOptions::cuda_graph_scopes)
  kFullIteration,  // the whole forward-backward of the step as one graph (needs no host syncs)
};

// The scopes of Megatron's --cuda-graph-scope that fleetsim models (bits of
// FrameworkOptions::cuda_graph_scopes): what each captures is in docs/training-model.md.
enum CudaGraphScope : unsigned {
  kGraphAttn = 1u << 0,           // "attn": norm, QKV, RoPE, attention, projection, residual
  kGraphMlp = 1u << 1,            // "mlp": a dense layer's MLP block
  kGraphMoeRouter = 1u << 2,      // "moe_router": router GEMM, score function, top-k, aux loss
  kGraphMoePreprocess = 1u << 3,  // "moe_preprocess": the dispatcher's preprocess (permute)
  kGraphMamba = 1u << 4,          // "mamba": a Mamba-2 block's mixer
};
// The scopes "scopes" means when none are listed (Transformer Engine's attn + MoE partial graphs).
inline constexpr unsigned kDefaultGraphScopes = kGraphAttn | kGraphMoeRouter | kGraphMoePreprocess;
// The bit of a --cuda-graph-scope name ("attn", "mlp", "moe_router", "moe_preprocess",
// "mamba"); false for any other name ("moe", the whole MoE layer, needs token dropping).
bool parse_cuda_graph_scope(const std::string& name, unsigned* bit);

// Framework behaviour (Megatron-LM / NeMo switches) and the global framework parameters.
struct FrameworkOptions {
  MoeDispatcher moe_dispatcher = MoeDispatcher::kAllToAll;
  // SMs the flex dispatcher's kernels take (Megatron's --moe-flex-dispatcher-num-sms /
  // --moe-hybridep-num-sms); 0 = the library's default (sim/coll/dispatch.cpp).
  int moe_dispatcher_sms = 0;
  // Megatron's --overlap-moe-expert-parallel-comm: in steady 1F1B the forward of one
  // micro-batch and the backward of another run interleaved per layer, so each EP all-to-all
  // hides behind the other pass's compute.
  bool ep_comm_overlap = false;
  // The MoE layer's kernel switches (Megatron-Core TransformerConfig, defaults as there:
  // megatron/core/transformer/transformer_config.py; workload/internal/moe_layer.cpp):
  // --moe-grouped-gemm: Transformer Engine's GroupedLinear (TEGroupedMLP) for the local experts
  // instead of one TE Linear per expert (SequentialMLP);
  bool moe_grouped_gemm = false;
  // --moe-permute-fusion: Transformer Engine's fused permute / unpermute / chunk-sort kernels
  // instead of the PyTorch index ops;
  bool moe_permute_fusion = false;
  // --moe-router-fusion: Transformer Engine's fused score function + top-k and aux-loss kernels.
  bool moe_router_fusion = false;
  // --moe-router-force-load-balancing: the router replaces its logits by random ones (RandomSTE:
  // a clone and normal_ per layer), as NVIDIA's dropless MoE benchmarks do.
  bool moe_router_force_load_balancing = false;
  // --enable-experimental (Megatron-Core's experimental features): with moe_permute_fusion,
  // DeepEP's indices-to-multihot conversion is one fused Triton kernel instead of PyTorch index
  // ops with three host syncs.
  bool megatron_experimental = false;
  // Transformer Engine's GroupedLinear GEMM path: false = the default per-expert path (one
  // cuBLASLt GEMM per local expert across streams, with per-expert host work HostCosts::expert:
  // every release of calibration/releases.json); true = a single-launch grouped GEMM with
  // device-side setup (TE PR #3175, opt-in behind NVTE_GROUPED_LINEAR_USE_FUSED_GROUPED_GEMM).
  bool moe_grouped_gemm_single_launch = false;
  PipelineSplit pipeline_split = PipelineSplit::kAuto;
  bool tp_comm_overlap = false;        // TP all-gather / reduce-scatter overlapped with GEMMs
  bool overlap_grad_reduce = true;     // DP gradient reduction overlapped with backward
  bool overlap_param_gather = true;    // distributed-optimizer parameter all-gather with forward
  int64_t bucket_params = 40'000'000;  // DP bucket size in parameters (Megatron default)
  CudaGraphs cuda_graphs = CudaGraphs::kNone;
  unsigned cuda_graph_scopes = kDefaultGraphScopes;  // CudaGraphScope bits, with kScopes
  // Host costs: `host` is used as is when `host_by_cpu` is empty; otherwise simulate_step picks
  // the row of the topology's node.host_cpu_class (calibration/host/host-costs.csv).
  HostCosts host;
  std::map<std::string, HostCosts> host_by_cpu;
  // Global framework parameter (calibration/framework.json, fitted by
  // calibration/fit_framework.py on end-to-end rows; the same value for every model): the
  // fraction of its isolated-benchmark speed a kernel sustains inside a training step (clocks
  // under sustained power, cache pollution by concurrent communication kernels).
  double kernel_efficiency = 1.0;
  // What the framework does to memory (memory.h: gradient and optimizer dtypes, offloading,
  // cross-entropy implementation, allocator). Its layers_per_vstage, a recipe's pipeline layout,
  // places the step's layers too; empty = pipeline_split.
  MemoryOptions memory;
};

}  // namespace fleetsim
