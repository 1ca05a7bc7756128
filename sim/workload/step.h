// One training step, replayed through the event engine.
//
// Ranks are placed in Megatron-LM's default order (tp fastest, then cp, dp, pp): rank =
// tp_rank + tp·(cp_rank + cp·(dp_rank + dp·pp_rank)), and rank r runs on GPU r, so a TP group
// occupies consecutive GPUs of one node / NVLink domain while DP and PP cross the fabric.
// Expert groups use Megatron's expert order (etp fastest, then ep) inside a pipeline stage.
//
// The ranks of a TP group synchronise at every TP collective of every layer, so they advance in
// lockstep: the simulator runs one "TP unit" per TP group (every group of the cluster, so every
// rank is simulated), whose compute time is that of its slowest member (per-rank speed factors),
// and whose TP collectives take the time the flow-level network gives for all TP groups of a
// node running them at once. Between units, everything that couples ranks is an event: pipeline
// sends and receives (1F1B or interleaved schedule), EP all-to-all dispatch / combine and CP ring
// exchanges (blocking group synchronisations), DP gradient reduce-scatter / all-reduce per bucket
// overlapped with the backward pass, the parameter all-gather overlapped with the forward pass,
// FSDP gathers per layer, and the optimizer step.
//
// The collective durations come from sim/coll on the cluster topology: all groups of one parallel
// dimension that share nodes run the collective together on one flow network, so they contend
// for the same NICs and links as they do on the real machine (memoized per dimension, operation
// and size).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "coll/collective.h"
#include "compute/compute_model.h"
#include "topo/topology.h"
#include "workload/memory.h"
#include "workload/model.h"
#include "workload/parallel.h"

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
  // cross-entropy implementation, allocator); layers_per_vstage empty = the step's split.
  MemoryOptions memory;
};

// Per-rank MoE loads of one step (computed by sim/moe from a routing model), applied to each
// EP rank's expert GEMMs and to the EP all-to-alls. Empty = perfectly balanced routing.
struct MoeLoadTable {
  int moe_layers = 0;
  int micro_batches = 0;
  int ep = 0;
  // [layer][mb][ep rank]: token copies the rank's experts process / the balanced count.
  std::vector<float> rank_factor;
  // [layer][mb]: all-to-all time / balanced time (the busiest rank's copies / balanced).
  std::vector<float> a2a_factor;
  bool empty() const { return moe_layers == 0; }
  float rank(int layer, int mb, int q) const {
    return rank_factor[(static_cast<size_t>(layer) * micro_batches + mb) * ep + q];
  }
  float a2a(int layer, int mb) const {
    return a2a_factor[static_cast<size_t>(layer) * micro_batches + mb];
  }
};

struct StepInput {
  ModelSpec model;
  ParallelConfig par;
  FrameworkOptions fw;
  // Use one representative pipeline (DP replica 0) for the step time; only valid while nothing
  // breaks the symmetry between DP replicas. false = every TP unit simulated.
  bool symmetry = false;
  // Per-GPU compute speed factor (1 = nominal; 0.7 = a GPU at 70% clock). Empty = all 1.
  std::vector<double> gpu_speed;
  bool want_trace = false;
  uint64_t seed = 1;
  // Ranks placed per NVLink domain (0 = fill every domain). Rank r runs on GPU
  // (r / ranks_per_domain) · gpus_per_domain + r % ranks_per_domain, e.g. 64 of the 72 GPUs
  // of an NVL72 rack so that power-of-two groups stay inside one domain.
  int ranks_per_domain = 0;
  MoeLoadTable moe;  // imbalanced routing (sim/moe); empty = balanced
};

struct TimeBreakdown {  // per step, seconds, for the critical rank (see README "Metrics")
  double compute = 0;
  double tp_exposed = 0;
  double cp_exposed = 0;
  double ep_exposed = 0;
  double pp_exposed = 0;  // waiting for pipeline receives beyond the schedule's bubble
  double dp_exposed = 0;
  double bubble = 0;
  double optimizer = 0;
  double host_exposed = 0;  // GPU idle waiting for the host to launch work (or to sync)
};

struct LinkUse {
  std::string name;
  double utilization = 0;  // bytes carried / (capacity · step time)
  double saturation = 0;   // fraction of the step with more demand than capacity
  double bytes = 0;
};

struct TraceEvent {
  int rank = 0;        // first GPU of the TP unit
  int tp = 1;          // the unit's ranks: rank .. rank + tp − 1
  const char* stream;  // "compute", "dp", "pp", "host"
  std::string name;
  double start_us = 0;
  double dur_us = 0;
};

struct StepResult {
  double step_time_s = 0;
  double tokens_per_s_per_gpu = 0;
  double model_tflops_per_gpu = 0;  // model FLOPs (README formula) / step time / GPUs
  double mfu = 0;                   // model TFLOP/s per GPU / peak dense TFLOP/s of the dtype
  double peak_tflops = 0;
  TimeBreakdown breakdown;
  MemoryBreakdown memory;
  std::string mode;  // "every rank" or "symmetry (one pipeline)"
  int units_simulated = 0;
  uint64_t events = 0;
  int micro_batches = 0;
  double bubble_fraction_closed_form = 0;
  // USE view
  double gpu_busy_fraction = 0;  // busy time / step time on the critical rank
  double gpu_busy_min = 0, gpu_busy_mean = 0, gpu_busy_max = 0;  // over every simulated GPU
  double gpu_useful_tflops = 0;                                  // model FLOPs / busy time
  double launch_bound_fraction = 0;                 // host_exposed / step time on the critical rank
  std::vector<LinkUse> top_links;                   // highest utilisation first
  std::map<std::string, double> collective_time_s;  // per dimension: total time per step
  std::vector<std::string> warnings;
  std::vector<std::string> compute_sources;
  std::vector<TraceEvent> trace;
};

// Validates the parallel configuration against the model and cluster; throws InputError with
// `file` and pointers under `ptr` ("/workload") on bad combinations.
void check_parallel_config(const ModelSpec& model, const ParallelConfig& par, int world_gpus,
                           int gpus_per_domain, const std::string& file, const std::string& ptr);
// The training task's settings (workload/task.h); called by check_parallel_config.
void check_task(const ParallelConfig& par, const std::string& file, const std::string& ptr);

// Closed-form pipeline bubble fraction of the schedule: (pp − 1) / (vp · m) relative to the
// ideal time (Narayanan et al. 2021, eq. for interleaved 1F1B).
double bubble_fraction(int pp, int vp, int micro_batches);

StepResult simulate_step(const StepInput& in, const Topology& topo, const CollectiveParams& cp,
                         const ComputeModel& compute);

}  // namespace fleetsim
