// Expert-parallel dispatch / combine (dispatch.h): copies per library and mode, the traffic
// matrix on the topology, and the terms of the call's time.
#include "coll/dispatch.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.h"
#include "core/simulator.h"
#include "net/flow_network.h"

namespace fleetsim {
namespace {

// size-exception: a data table (one row of parameters per library).
// Fitted by calibration/fit_dispatch.py on validation/dispatch-benchmarks.csv (python3
// calibration/fit_dispatch.py prints this table); the structure (who copies what) is the
// libraries' own (dispatch.h).
const std::map<DispatchLibrary, DispatchParams>& table() {
  static const std::map<DispatchLibrary, DispatchParams> k = [] {
    std::map<DispatchLibrary, DispatchParams> t;
    DispatchParams deepep;
    deepep.c_tok_us = 0.2367;
    deepep.r_sm_gbps = 34.64;
    deepep.f_combine = 1.213;
    deepep.eta_nvl = 0.6717;
    deepep.default_sms = 20;  // DeepEP Buffer.num_sms default (deep_ep/buffer.py)
    deepep.stage = true;
    deepep.fixed_dispatch = deepep.fixed_combine = Time::from_us(4.263);
    t[DispatchLibrary::kDeepEp] = deepep;
    t[DispatchLibrary::kUcclEp] = deepep;  // UCCL-EP runs DeepEP's kernels (ep/README.md)
    DispatchParams hybrid;
    hybrid.c_tok_us = 0.2377;
    hybrid.r_sm_gbps = 167.6;
    hybrid.f_combine = 1.028;
    hybrid.eta_nvl = 0.6857;
    hybrid.c_rdma_us = 0.4724;
    hybrid.r_rdma_gbps = 20.41;
    hybrid.default_sms = 16;  // the SM count of every HybridEP table but H100's 4 / 8
    hybrid.api_copy = true;   // README_Hybrid-EP.md: "Torch API (kernel + d2d copy + misc)"
    hybrid.fixed_dispatch = hybrid.fixed_combine = Time::from_us(4.263);
    t[DispatchLibrary::kHybridEp] = hybrid;
    DispatchParams one_sided;
    one_sided.eta_nvl = 0.7782;
    // TensorRT-LLM blog 18: dispatch ~18 us and combine ~31 us from 1 to 32 tokens per rank.
    one_sided.fixed_dispatch = Time::from_us(18.0);
    one_sided.fixed_combine = Time::from_us(31.0);
    t[DispatchLibrary::kNvlinkOneSided] = one_sided;
    t[DispatchLibrary::kPplx] = one_sided;         // no pplx row states its configuration
    t[DispatchLibrary::kNccl] = DispatchParams{};  // NCCL's calibrated all-to-all
    return t;
  }();
  return k;
}

struct Name {
  const char* name;
  DispatchLibrary lib;
};
constexpr Name kLibraries[] = {{"nccl", DispatchLibrary::kNccl},
                               {"deepep", DispatchLibrary::kDeepEp},
                               {"hybridep", DispatchLibrary::kHybridEp},
                               {"uccl-ep", DispatchLibrary::kUcclEp},
                               {"pplx", DispatchLibrary::kPplx},
                               {"nvlink-one-sided", DispatchLibrary::kNvlinkOneSided}};

bool dedup_per_domain(DispatchLibrary l) {
  return l == DispatchLibrary::kDeepEp || l == DispatchLibrary::kHybridEp ||
         l == DispatchLibrary::kUcclEp;
}

double nic_bytes_per_second(const Topology& topo) {
  const NicSpec& n = topo.system().nics;
  const double per_nic = n.bandwidth.bytes_per_second();
  return n.nics_per_gpu >= 1 ? per_nic * n.nics_per_gpu : per_nic / std::max(1, n.gpus_per_nic);
}

// The most of `gpus` that share one NVLink domain.
int max_gpus_per_domain(const Topology& topo, const std::vector<int>& gpus) {
  std::map<int, int> domains;
  for (int x : gpus)
    domains[topo.domain_of(x)]++;
  int most = 0;
  for (const auto& [d, k] : domains)
    most = std::max(most, k);
  return most;
}

}  // namespace

const char* to_string(DispatchLibrary l) {
  for (const auto& n : kLibraries)
    if (n.lib == l) return n.name;
  return "?";
}

const char* to_string(DispatchMode m) {
  return m == DispatchMode::kNormal ? "normal" : "low_latency";
}

bool parse_dispatch_library(const std::string& s, DispatchLibrary* out) {
  for (const auto& n : kLibraries) {
    if (s == n.name) {
      *out = n.lib;
      return true;
    }
  }
  return false;
}

bool parse_dispatch_mode(const std::string& s, DispatchMode* out) {
  if (s == "normal")
    *out = DispatchMode::kNormal;
  else if (s == "low_latency")
    *out = DispatchMode::kLowLatency;
  else
    return false;
  return true;
}

const DispatchParams& dispatch_params(DispatchLibrary l) {
  return table().at(l);
}

const DispatchGlobals& dispatch_globals() {
  static const DispatchGlobals g = [] {
    DispatchGlobals x;
    x.eta_net = 0.8402;
    x.rho_stage = 1.114;
    x.api_wait = Time::from_us(122.5);
    x.api_wait_deepep = Time::from_us(54.56);
    x.ll_message = Time::from_us(0.07316);
    x.ll_peer = Time::from_us(12.24);
    return x;
  }();
  return g;
}

double dispatch_copy_bytes(const DispatchCall& c) {
  const double h = c.hidden;
  const bool fp8 = c.fp8 && c.op == DispatchOp::kDispatch;
  double b = c.copy_bytes > 0 ? c.copy_bytes : fp8 ? h + 4.0 * h / 128.0 : 2.0 * h;
  if (c.mode == DispatchMode::kLowLatency && c.op == DispatchOp::kDispatch) b += 16.0;
  return b;
}

double expert_hit_probability(int experts, double held, int top_k) {
  if (held >= experts) return 1.0;
  if (held <= 0) return 0.0;
  double miss = 1.0;
  for (int i = 0; i < top_k; ++i)
    miss *= std::max(0.0, (experts - held - i) / (experts - static_cast<double>(i)));
  return 1.0 - miss;
}

DispatchCounts dispatch_counts(const DispatchCall& c, int gpus_per_domain) {
  if (c.ranks < 1 || c.top_k < 1 || c.experts < c.top_k || c.tokens_per_rank < 0)
    throw InternalError("dispatch_counts: ranks, top_k <= experts and tokens must be positive");
  DispatchCounts n;
  n.copy_bytes = dispatch_copy_bytes(c);
  n.per_domain = std::min(c.ranks, std::max(1, gpus_per_domain));
  n.domains = (c.ranks + n.per_domain - 1) / n.per_domain;
  const double T = c.tokens_per_rank, R = c.ranks;
  const double per_rank = static_cast<double>(c.experts) / R;
  double p_rank = expert_hit_probability(c.experts, per_rank, c.top_k);
  double p_domain = expert_hit_probability(c.experts, per_rank * n.per_domain, c.top_k);
  if (c.routing == DispatchRouting::kPerfect) {  // top-k over min(R, k) distinct ranks
    p_rank = std::min(R, static_cast<double>(c.top_k)) / R;
    p_domain = std::min(1.0, p_rank * n.per_domain);
  }
  n.pairs = T * c.top_k;
  n.recv_copies = R * T * p_rank;
  n.node_copies = n.domains * T * p_domain;
  n.remote_node_copies = (n.domains - 1) * T * p_domain;
  if (c.library == DispatchLibrary::kNccl) n.recv_copies = n.pairs;  // every pair is a copy
  return n;
}

// size-exception: one pass over the sender × receiver pairs with the three library behaviours
// (pairs, per-GPU copies, per-domain copies with forwarding) side by side.
DispatchMatrix dispatch_matrix(const Topology& topo, const DispatchCall& c,
                               const std::vector<int>& gpus) {
  const size_t n = gpus.size();
  if (static_cast<int>(n) != c.ranks)
    throw InternalError("dispatch_matrix: one GPU per rank expected");
  // Members of each domain in group order; a member's local index is its position there.
  std::map<int, std::vector<size_t>> by_domain;
  for (size_t i = 0; i < n; ++i)
    by_domain[topo.domain_of(gpus[i])].push_back(i);
  std::vector<size_t> local(n);
  size_t per_domain = 0;
  for (auto& [d, v] : by_domain) {
    per_domain = std::max(per_domain, v.size());
    for (size_t k = 0; k < v.size(); ++k)
      local[v[k]] = k;
  }
  const DispatchCounts cn = dispatch_counts(c, static_cast<int>(per_domain));
  const double T = c.tokens_per_rank, R = c.ranks, copy = cn.copy_bytes;
  const double per_rank = static_cast<double>(c.experts) / R;
  const double p_rank = c.routing == DispatchRouting::kPerfect
                            ? std::min(R, static_cast<double>(c.top_k)) / R
                            : expert_hit_probability(c.experts, per_rank, c.top_k);
  DispatchMatrix m;
  m.bytes.assign(n, std::vector<double>(n, 0.0));
  m.rdma.assign(n, std::vector<bool>(n, false));
  const bool pairs = c.library == DispatchLibrary::kNccl || c.mode == DispatchMode::kLowLatency;
  for (size_t i = 0; i < n; ++i) {
    const int di = topo.domain_of(gpus[i]);
    for (const auto& [dj, members] : by_domain) {
      if (dj == di || pairs || !dedup_per_domain(c.library)) {
        for (size_t j : members) {
          if (j == i) continue;
          m.bytes[i][j] += (pairs ? T * c.top_k / R : T * p_rank) * copy;
          m.rdma[i][j] = dj != di;
        }
        continue;
      }
      // One copy to the rail GPU of domain dj, forwarded over NVLink to the others hit.
      const size_t rail = members[local[i] % members.size()];
      const double size = static_cast<double>(members.size());
      const double p_dom = c.routing == DispatchRouting::kPerfect
                               ? std::min(1.0, p_rank * size)
                               : expert_hit_probability(c.experts, per_rank * size, c.top_k);
      m.bytes[i][rail] += T * p_dom * copy;
      m.rdma[i][rail] = true;
      for (size_t h : members)
        if (h != rail) m.bytes[rail][h] += T * p_rank * copy;
    }
  }
  return m;
}

// size-exception: the call's terms one after the other (flows, SMs, RDMA stage, API, low
// latency), each a few lines of the formula in dispatch.h.
DispatchPlan plan_dispatch(const Topology& topo, const CollectiveParams& params,
                           const DispatchCall& c, const std::vector<int>& gpus, uint64_t seed) {
  const DispatchParams& lp = dispatch_params(c.library);
  const DispatchGlobals& g = dispatch_globals();
  DispatchPlan p;
  p.params = params;
  const bool nccl = c.library == DispatchLibrary::kNccl;
  if (!nccl) {  // the library's own copy kernels: latency is in t_fixed
    p.params.eta_a2a = lp.eta_nvl;
    p.params.base_latency = p.params.nvlink_step_latency = p.params.net_step_latency = Time::zero();
  }
  DispatchMatrix m = dispatch_matrix(topo, c, gpus);
  const int per_domain = max_gpus_per_domain(topo, gpus);
  const DispatchCounts n = dispatch_counts(c, per_domain);
  const double nic = nic_bytes_per_second(topo);
  const bool combine = c.op == DispatchOp::kCombine;
  if (c.mode == DispatchMode::kLowLatency && !nccl) {
    // Every pair a message; through the NIC unless NVLink may carry the domain's own pairs
    // (then they are copies on the flow network below). Each RDMA message costs its bytes and
    // c_msg, each remote destination rank ll_peer.
    const double via_nic = c.nvlink ? n.pairs * (c.ranks - per_domain) / c.ranks : n.pairs;
    const int peers = c.nvlink ? c.ranks - per_domain : c.ranks - 1;
    p.low_latency = (combine ? lp.fixed_combine : lp.fixed_dispatch) +
                    Time::from_seconds(via_nic * n.copy_bytes / (nic * g.eta_net)) +
                    Time::from_seconds(g.ll_message.seconds() * via_nic) +
                    Time::from_seconds(g.ll_peer.seconds() * peers);
    if (!c.nvlink) return p;  // nothing on NVLink
    for (size_t i = 0; i < m.bytes.size(); ++i)
      for (size_t j = 0; j < m.bytes.size(); ++j)
        if (m.rdma[i][j]) m.bytes[i][j] = 0;  // charged above
  } else if (!nccl) {
    for (size_t i = 0; i < m.bytes.size(); ++i)
      for (size_t j = 0; j < m.bytes.size(); ++j)
        if (m.rdma[i][j]) m.bytes[i][j] /= g.eta_net;
  }
  p.flows = plan_alltoallv(topo, p.params, gpus, m.bytes, seed);
  if (c.mode == DispatchMode::kLowLatency && !nccl) return p;
  p.fixed = combine ? lp.fixed_combine : lp.fixed_dispatch;
  const int sms = c.sms > 0 ? c.sms : lp.default_sms;
  if (sms > 0 && lp.r_sm_gbps > 0) {
    double s = n.recv_copies * (lp.c_tok_us * 1e-6 + n.copy_bytes / (lp.r_sm_gbps * 1e9)) / sms;
    if (combine) s *= lp.f_combine;
    if (n.domains > 1 && lp.r_rdma_gbps > 0) {
      s = std::max(
          s, n.node_copies * (lp.c_rdma_us * 1e-6 + n.copy_bytes / (lp.r_rdma_gbps * 1e9)) / sms);
    }
    p.sm = Time::from_seconds(s);
  }
  if (lp.stage && n.domains > 1)
    p.stage = Time::from_seconds(n.node_copies * n.copy_bytes / (nic * g.rho_stage));
  if (c.api == DispatchApi::kTorch && !nccl) {
    p.api = lp.api_copy ? g.api_wait +
                              Time::from_seconds(2.0 * n.recv_copies * n.copy_bytes /
                                                 topo.system().gpu.hbm_bandwidth.bytes_per_second())
                        : g.api_wait_deepep;
  }
  return p;
}

Time dispatch_time(const DispatchPlan& p, Time flow_time) {
  if (p.low_latency > Time::zero()) return std::max(p.low_latency, flow_time);
  return p.fixed + std::max({flow_time, p.sm, p.stage}) + p.api;
}

DispatchResult simulate_dispatch(const Topology& topo, const CollectiveParams& params,
                                 const DispatchCall& c, const std::vector<int>& gpus,
                                 uint64_t seed) {
  DispatchPlan p = plan_dispatch(topo, params, c, gpus, seed);
  DispatchResult r;
  Time flow = Time::zero();
  if (!p.flows.flows.empty()) {
    Simulator sim;
    FlowNetwork net(sim, topo.links());
    CollectiveRun run(p.params, std::move(p.flows));
    run.start(sim, net, nullptr, 0);
    sim.run();
    flow = sim.now() - run.started();
  }
  r.flow = flow;
  r.sm = p.sm;
  r.stage = p.stage;
  r.api = p.api;
  r.fixed = p.low_latency > Time::zero() ? p.low_latency : p.fixed;
  r.time = dispatch_time(p, flow);
  r.counts = dispatch_counts(c, max_gpus_per_domain(topo, gpus));
  return r;
}

}  // namespace fleetsim
