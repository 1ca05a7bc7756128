// Expert-parallel dispatch and combine as the MoE communication libraries run them.
//
// A dispatch sends each of a rank's tokens to the ranks holding its top-k experts; the combine
// brings the expert outputs back the same way (BF16). How a token travels depends on the
// library and mode (docs/training-model.md#expert-dispatch, the libraries' READMEs):
// - nccl (Megatron's alltoall dispatcher): every token–expert pair is its own copy, grouped per
//   destination rank, sent with NCCL's all-to-allv (the calibrated NCCL all-to-all).
// - deepep / uccl-ep normal, hybridep: one copy per destination GPU inside the NVLink domain; one
//   copy per destination domain across the network, to the GPU of the sender's local index there
//   (its rail), which forwards it over NVLink to every GPU of its domain that holds one of the
//   token's experts. UCCL-EP runs DeepEP's kernels with a CPU proxy driving the NICs (EFA).
// - pplx: one copy per destination GPU everywhere (no forwarding).
// - nvlink-one-sided (TensorRT-LLM NVLinkOneSided): one copy per destination GPU over NVLink.
// - deepep / uccl-ep low_latency: one RDMA message per token–expert pair (hidden + FP8 scales +
//   a 16-byte header), direct to the expert's rank; nvlink=false sends every pair through the NIC.
// FP8 dispatch payloads carry one FP32 scale per 128 values (H + 4·H/128 bytes per token).
//
// The time of one call is
//   t = t_fixed + max(T_flow, T_sm, T_stage) + t_api,
// T_flow: the call's NVLink copies, RDMA copies (inflated by 1/η_net) and NVLink forwarding as
//   one all-to-allv on the flow network (NVLink inflated by the library's 1/η_nvl; the EFA /
//   InfiniBand fabric with its routing: SRD spraying on EFA);
// T_sm: the copy engine of the SMs the kernels take, per token copy c_tok + bytes / r_sm, divided
//   over the SMs (combine × f_combine for the reduction);
// T_stage (deepep / uccl-ep across domains): the RDMA stage pushes every node copy, own domain
//   included (DeepEP's tests count them so), at ρ_stage × the GPU's NIC rate;
// t_api (api=torch): the framework-side wait for the receive counts, and HybridEP's copy of the
//   received tokens out of its buffer (2 × bytes at HBM bandwidth).
// Low-latency calls: t = t_fixed + m·(bytes / (NIC rate·η_net) + c_msg) + P·c_peer, m the
//   token–expert pairs sent through the NIC (to other domains; all of them with nvlink=false:
//   inside a domain the kernels copy through NVLink, UCCL-EP by CUDA IPC), P the remote
//   destination ranks (ranks outside the sender's domain). c_peer is the rows' own form, not
//   read from the libraries' source: in UCCL-EP's EFA rows a rank's RDMA messages grow
//   512 → 683 → 768 from EP 16 to 24 to 32 while the call grows 1.7–2.0× from EP 16 to 24.
// The parameters are global (the same for every model and system): calibration/fit_dispatch.py
// fits them on validation/dispatch-benchmarks.csv and prints this table.
#pragma once

#include <string>
#include <vector>

#include "coll/collective.h"
#include "core/time.h"
#include "topo/topology.h"

namespace fleetsim {

enum class DispatchLibrary { kNccl, kDeepEp, kHybridEp, kUcclEp, kPplx, kNvlinkOneSided };
enum class DispatchMode { kNormal, kLowLatency };
enum class DispatchOp { kDispatch, kCombine };
enum class DispatchApi { kKernel, kTorch };
enum class DispatchRouting { kUniform, kPerfect };

const char* to_string(DispatchLibrary l);
const char* to_string(DispatchMode m);
bool parse_dispatch_library(const std::string& s, DispatchLibrary* out);
bool parse_dispatch_mode(const std::string& s, DispatchMode* out);

struct DispatchCall {
  DispatchLibrary library = DispatchLibrary::kDeepEp;
  DispatchMode mode = DispatchMode::kNormal;
  DispatchOp op = DispatchOp::kDispatch;
  bool fp8 = false;  // FP8 dispatch payload with scales (combine is always BF16)
  int ranks = 0;
  double tokens_per_rank = 0;
  int hidden = 0, top_k = 0, experts = 0;
  DispatchRouting routing = DispatchRouting::kUniform;
  int sms = 0;  // SMs the kernels take; 0 = the library's default
  DispatchApi api = DispatchApi::kKernel;
  bool nvlink = true;     // low latency: false = every pair through the NIC, even inside a domain
  double copy_bytes = 0;  // bytes per token copy given by the caller; 0 = from hidden and fp8
};

// The global parameters (see the header comment).
struct DispatchParams {
  double c_tok_us = 0;     // SM time per token copy
  double r_sm_gbps = 0;    // bytes per second one SM copies, GB/s
  double f_combine = 1;    // combine's SM cost relative to dispatch
  double eta_nvl = 1;      // NVLink copy efficiency
  double c_rdma_us = 0;    // hybridep: SM time per node copy on the RDMA path
  double r_rdma_gbps = 0;  // hybridep: SM bytes per second on the RDMA path
  int default_sms = 0;     // SMs when the call does not say; 0 = no SM limit
  bool stage = false;      // deepep / uccl-ep: own-domain node copies pass the RDMA stage
  bool api_copy = false;   // the torch API copies the received tokens out of the buffer
  Time fixed_dispatch, fixed_combine;
};
const DispatchParams& dispatch_params(DispatchLibrary l);
// Library-independent parameters.
struct DispatchGlobals {
  double eta_net = 1;    // RDMA efficiency (EFA and InfiniBand)
  double rho_stage = 1;  // deepep / uccl-ep RDMA stage rate over the NIC rate
  Time api_wait;         // torch API: wait for the receive counts
  Time api_wait_deepep;  // the same in DeepEP's API (no buffer copy)
  Time ll_message;       // per RDMA message (low latency)
  Time ll_peer;          // per remote destination rank (low latency)
};
const DispatchGlobals& dispatch_globals();

// Bytes of one token copy: 2·hidden (BF16); hidden + 4·hidden/128 (FP8 with one FP32 scale per
// 128 values), or the call's copy_bytes; low-latency dispatch messages add a 16-byte header.
double dispatch_copy_bytes(const DispatchCall& c);
// P(a token's top_k distinct experts, drawn uniformly from `experts`, include at least one of
// `held` of them) = 1 − C(E−e, k) / C(E, k).
double expert_hit_probability(int experts, double held, int top_k);

// What one rank moves in a call (balanced routing, ranks placed `gpus_per_domain` to a domain).
struct DispatchCounts {
  double copy_bytes = 0;
  double recv_copies = 0;         // token copies a rank holds after dispatch, its own included
  double node_copies = 0;         // (token, destination domain) pairs, own domain included
  double remote_node_copies = 0;  // the same, other domains only
  double pairs = 0;               // token–expert pairs
  int domains = 1, per_domain = 1;
};
DispatchCounts dispatch_counts(const DispatchCall& c, int gpus_per_domain);

// Bytes each member of `gpus` sends each other member over links (row = sender), forwarding
// included, before any efficiency inflation; `rdma[i][j]` says whether the entry crosses domains.
struct DispatchMatrix {
  std::vector<std::vector<double>> bytes;
  std::vector<std::vector<bool>> rdma;
};
DispatchMatrix dispatch_matrix(const Topology& topo, const DispatchCall& c,
                               const std::vector<int>& gpus);

// The flow part of a call and the terms outside the flow network.
struct DispatchPlan {
  CollectivePlan flows;     // empty flows for low-latency calls over the NIC only
  CollectiveParams params;  // the parameters `flows` runs with (the library's η_nvl)
  Time fixed, sm, stage, api, low_latency;
};
DispatchPlan plan_dispatch(const Topology& topo, const CollectiveParams& params,
                           const DispatchCall& c, const std::vector<int>& gpus, uint64_t seed);
// Total time of a planned call whose flows took `flow_time` (pipelined, latencies included).
Time dispatch_time(const DispatchPlan& p, Time flow_time);

struct DispatchResult {
  Time time, flow, sm, stage, api, fixed;
  DispatchCounts counts;
};
// One call alone on an idle network, over `gpus` (global GPU ids).
DispatchResult simulate_dispatch(const Topology& topo, const CollectiveParams& params,
                                 const DispatchCall& c, const std::vector<int>& gpus,
                                 uint64_t seed);

}  // namespace fleetsim
