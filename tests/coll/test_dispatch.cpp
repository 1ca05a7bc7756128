// Expert dispatch (sim/coll/dispatch.h): bytes per copy and per rank for each library and mode
// against hand counts, the low-latency floor, and one EFA call worked by hand.
#include <catch2/catch.hpp>
#include <cmath>

#include "coll/dispatch.h"
#include "scenario/scenario.h"
#include "support/fixtures.h"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {

// Two nodes of two GPUs (one NVLink domain each), one NIC per GPU.
Topology small_topology() {
  SystemSpec s = load_system("dgx-h100", kRoot);
  s.node.gpus = 2;
  s.nics.per_node = 2;
  s.unit_nodes = 1;
  s.scale_up.domain_nodes = 1;
  return Topology(s, s.fabric, 2);
}

// 4 ranks, 8 experts (2 per rank), top-2, 100 tokens, hidden 64 (BF16 copy = 128 B).
DispatchCall small_call(DispatchLibrary lib) {
  DispatchCall c;
  c.library = lib;
  c.ranks = 4;
  c.tokens_per_rank = 100;
  c.hidden = 64;
  c.top_k = 2;
  c.experts = 8;
  return c;
}

// UCCL-EP's EP16 benchmark call in the README's DeepSeek-V3 setting: FP8 dispatch of
// `tokens` per rank, hidden 7168, top-8 of 288 experts.
DispatchCall uccl_ep16_call(DispatchMode mode, int tokens) {
  DispatchCall c;
  c.library = DispatchLibrary::kUcclEp;
  c.mode = mode;
  c.fp8 = true;
  c.ranks = 16;
  c.tokens_per_rank = tokens;
  c.hidden = 7168;
  c.top_k = 8;
  c.experts = 288;
  return c;
}

// GPUs 0 .. n-1 of a topology, the EP group of the calls above.
std::vector<int> first_gpus(int n) {
  std::vector<int> gpus(n);
  for (int i = 0; i < n; ++i)
    gpus[i] = i;
  return gpus;
}

// P(a token's 2 of 8 experts include one of the rank's 2) = 1 − C(6,2)/C(8,2) = 1 − 15/28;
// of the domain's 4: 1 − C(4,2)/C(8,2) = 1 − 6/28.
constexpr double kPRank = 13.0 / 28.0, kPDomain = 22.0 / 28.0;

}  // namespace

TEST_CASE("dispatch: bytes per token copy, FP8 with one FP32 scale per 128 values") {
  DispatchCall c = small_call(DispatchLibrary::kDeepEp);
  c.hidden = 7168;
  CHECK(dispatch_copy_bytes(c) == 14336.0);  // BF16: 2 · 7168
  c.fp8 = true;
  CHECK(dispatch_copy_bytes(c) == 7392.0);  // 7168 + 4 · 7168 / 128 = 7168 + 224
  c.op = DispatchOp::kCombine;
  CHECK(dispatch_copy_bytes(c) == 14336.0);  // combine is BF16
  c.op = DispatchOp::kDispatch;
  c.mode = DispatchMode::kLowLatency;
  CHECK(dispatch_copy_bytes(c) == 7408.0);  // + the 16-byte message header (int4)
}

TEST_CASE("dispatch: expert hit probability without replacement") {
  CHECK(expert_hit_probability(8, 2, 2) == Approx(kPRank));
  CHECK(expert_hit_probability(8, 4, 2) == Approx(kPDomain));
  CHECK(expert_hit_probability(256, 32, 1) == Approx(32.0 / 256.0));
  // 8 of 64 experts, top-8: 1 − C(56,8)/C(64,8) = 0.6790689 (B200 HybridEP tables' setup).
  CHECK(expert_hit_probability(64, 8, 8) == Approx(0.6790689102));
  CHECK(expert_hit_probability(64, 64, 8) == 1.0);
}

TEST_CASE("dispatch: per-GPU copies inside a domain, per-domain copies with NVLink forwarding") {
  const Topology topo = small_topology();
  const DispatchCall c = small_call(DispatchLibrary::kDeepEp);
  const DispatchMatrix m = dispatch_matrix(topo, c, {0, 1, 2, 3});
  const double copy = 128, own = 100 * kPRank * copy, node = 100 * kPDomain * copy;
  // Same domain: one copy per GPU hit, plus the copies GPU 0 forwards for rank 2 (it is rank
  // 2's rail: local index 0 of domain 0).
  CHECK(m.bytes[0][1] == Approx(2 * own));
  CHECK(m.bytes[0][2] == Approx(node));  // the other domain: one copy, to its local-0 GPU
  CHECK(m.bytes[0][3] == 0.0);
  CHECK(m.rdma[0][2]);
  CHECK_FALSE(m.rdma[0][1]);
  // GPU 2 sends its own tokens to GPU 3 and forwards rank 0's (GPU 3 is rank 1's rail).
  CHECK(m.bytes[2][3] == Approx(2 * own));
  CHECK(m.bytes[3][2] == Approx(2 * own));
  const DispatchCounts n = dispatch_counts(c, 2);
  CHECK(n.recv_copies == Approx(4 * 100 * kPRank));
  CHECK(n.node_copies == Approx(2 * 100 * kPDomain));
  CHECK(n.remote_node_copies == Approx(100 * kPDomain));
  CHECK(n.pairs == 200.0);
}

TEST_CASE("dispatch: NCCL and low-latency send every token–expert pair, pplx per GPU") {
  const Topology topo = small_topology();
  const DispatchMatrix nccl =
      dispatch_matrix(topo, small_call(DispatchLibrary::kNccl), {0, 1, 2, 3});
  DispatchCall ll = small_call(DispatchLibrary::kDeepEp);
  ll.mode = DispatchMode::kLowLatency;
  const DispatchMatrix low = dispatch_matrix(topo, ll, {0, 1, 2, 3});
  const DispatchMatrix pplx =
      dispatch_matrix(topo, small_call(DispatchLibrary::kPplx), {0, 1, 2, 3});
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      if (i == j) continue;
      CHECK(nccl.bytes[i][j] == Approx(100 * 2 / 4.0 * 128));  // T·k/R pairs of 2H bytes
      CHECK(low.bytes[i][j] == Approx(100 * 2 / 4.0 * 144));   // + 16-byte header
      CHECK(pplx.bytes[i][j] == Approx(100 * kPRank * 128));   // no forwarding
    }
  }
  CHECK(dispatch_counts(small_call(DispatchLibrary::kNccl), 2).recv_copies == 200.0);
  DispatchCall perfect = small_call(DispatchLibrary::kNvlinkOneSided);
  perfect.routing = DispatchRouting::kPerfect;  // top-2 over 2 distinct ranks of 4
  CHECK(dispatch_counts(perfect, 4).recv_copies == Approx(4 * 100 * 0.5));
}

TEST_CASE("dispatch: the low-latency floor") {
  const SystemSpec s = load_system("p6-b200.48xlarge", kRoot);
  const Topology topo(s, s.fabric, 2);
  const CollectiveParams params = load_collective_params(s, kRoot);
  DispatchCall c = uccl_ep16_call(DispatchMode::kLowLatency, 1);
  c.nvlink = false;
  const std::vector<int> gpus = first_gpus(16);
  const DispatchGlobals& g = dispatch_globals();
  const DispatchParams& lp = dispatch_params(DispatchLibrary::kUcclEp);
  // nvlink=false: one token is 8 messages of 7408 B, all through the 400 Gb/s NIC, to 15 peers.
  c.tokens_per_rank = 1;
  const double floor = lp.fixed_dispatch.us() + 15 * g.ll_peer.us();
  const double per_token = 8 * (7408 / (50e9 * g.eta_net) * 1e6 + g.ll_message.us());
  const Time t1 = simulate_dispatch(topo, params, c, gpus, 1).time;
  CHECK(t1.us() == Approx(floor + per_token).epsilon(1e-6));
  CHECK(per_token < 3.0);  // the floor: one token costs < 3 us over t_fixed + the peers
  c.tokens_per_rank = 128;
  const Time t128 = simulate_dispatch(topo, params, c, gpus, 1).time;
  CHECK(t128.us() == Approx(floor + 128 * per_token).epsilon(1e-6));
}

// UCCL-EP low-latency FP8 dispatch, EP16 on two p6-b200 (one 400 Gb/s EFA NIC per B200), the
// README's DeepSeek-V3 inference setting: 128 tokens, hidden 7168, top-8 of 288 experts. Pairs
// inside the node go through CUDA IPC (NVLink), the other node's through the NIC.
TEST_CASE("dispatch: a low-latency EFA call worked by hand (UCCL-EP EP16 on p6-b200)") {
  const SystemSpec s = load_system("p6-b200.48xlarge", kRoot);
  const Topology topo(s, s.fabric, 2);
  const CollectiveParams params = load_collective_params(s, kRoot);
  DispatchCall c = uccl_ep16_call(DispatchMode::kLowLatency, 128);
  const std::vector<int> gpus = first_gpus(16);
  const DispatchGlobals& g = dispatch_globals();
  const double fixed = dispatch_params(DispatchLibrary::kUcclEp).fixed_dispatch.us();
  // 128 · 8 = 1024 pairs, 8 of 16 ranks in the other node: 512 RDMA messages of 7408 B
  // (7168 + 224 scale bytes + 16 header) to 8 remote ranks.
  const double m = 512, bytes = 512 * 7408.0;
  const double t =
      fixed + bytes / (50e9 * g.eta_net) * 1e6 + m * g.ll_message.us() + 8 * g.ll_peer.us();
  const DispatchResult r = simulate_dispatch(topo, params, c, gpus, 1);
  // The 512 intra-node pairs (3.8 MB) over 900 GB/s NVLink take ~6 us: the RDMA side decides.
  CHECK(r.flow.us() < 0.1 * t);
  CHECK(r.time.us() == Approx(t).epsilon(1e-6));
  // The same call with nvlink=false sends all 1024 pairs to 15 peers through the NIC.
  c.nvlink = false;
  const double t_nic = fixed + 2 * bytes / (50e9 * g.eta_net) * 1e6 + 2 * m * g.ll_message.us() +
                       15 * g.ll_peer.us();
  CHECK(simulate_dispatch(topo, params, c, gpus, 1).time.us() == Approx(t_nic).epsilon(1e-6));
  // The measurement (UCCL-EP README, p6-b200, EP16 low-latency dispatch): 228 us.
  CHECK(std::fabs(r.time.us() / 228.0 - 1) < 0.10);
}

// UCCL-EP normal FP8 dispatch, EP16 on two p5en (8 × H200, 16 × 200 Gb/s EFA: two NICs per
// GPU), DeepSeek-V3 profile: 4096 tokens, hidden 7168, top-8 of 288 experts, Torch API.
TEST_CASE("dispatch: an EFA call worked by hand (UCCL-EP EP16 on p5en)") {
  const SystemSpec s = load_system("p5en.48xlarge", kRoot);
  const Topology topo(s, s.fabric, 2);
  const CollectiveParams params = load_collective_params(s, kRoot);
  DispatchCall c = uccl_ep16_call(DispatchMode::kNormal, 4096);
  c.api = DispatchApi::kTorch;
  const std::vector<int> gpus = first_gpus(16);
  const DispatchParams& lp = dispatch_params(DispatchLibrary::kUcclEp);
  const DispatchGlobals& g = dispatch_globals();
  const double copy = 7392;
  const double p_rank = 0.4072059934;    // 1 − C(270,8)/C(288,8): 18 experts per rank
  const double p_domain = 0.9964648895;  // 1 − C(144,8)/C(288,8): 144 per node
  const double node_copies = 2 * 4096 * p_domain, recv = 16 * 4096 * p_rank;
  // RDMA stage: every node copy, own node included, at ρ · 2 × 25 GB/s.
  const double stage = node_copies * copy / (50e9 * g.rho_stage) * 1e6;
  // SMs: 24 (the benchmark's num_sms), c_tok + bytes / r_sm per received copy.
  c.sms = 24;
  const double sm = recv * (lp.c_tok_us * 1e-6 + copy / (lp.r_sm_gbps * 1e9)) / 24 * 1e6;
  // Network: the remote node copy over both NICs of the GPU (SRD sprays over them), at the
  // fabric's 0.97 protocol efficiency and η_net; NVLink: 7 own-domain peers plus the forwarded
  // copies of the other node's 8 senders, 14 × 4096 × p_rank copies in and out, at η_nvl.
  const double rdma = 4096 * p_domain * copy / g.eta_net / (2 * 25e9 * 0.97) * 1e6;
  const double nvl = 14 * 4096 * p_rank * copy / (450e9 * lp.eta_nvl) * 1e6;
  const DispatchResult r = simulate_dispatch(topo, params, c, gpus, 1);
  CHECK(r.stage.us() == Approx(stage).epsilon(1e-6));
  CHECK(r.sm.us() == Approx(sm).epsilon(1e-6));
  CHECK(r.flow.us() == Approx(std::max(rdma, nvl)).epsilon(0.03));
  CHECK(r.flow.us() < 1.2 * rdma);  // one NIC alone would take twice the RDMA time
  CHECK(r.api.us() == Approx(g.api_wait_deepep.us()));
  const double total = lp.fixed_dispatch.us() + std::max({stage, sm, r.flow.us()}) + r.api.us();
  CHECK(r.time.us() == Approx(total).epsilon(1e-6));
  // The measurement (UCCL-EP README, p5en, EP16 dispatch): 1196 us.
  CHECK(std::fabs(r.time.us() / 1196.0 - 1) < 0.10);
}

// The one dispatch measurement at a hidden size other than 7168 (validation/moe-component-
// measured.csv: Qwen3-30B-A3B on 16 H100, HybridEP, 0.631 ms per call; docs/validation.md "The
// dispatch call at hidden 2048"): at the recipe's 32 SMs the model puts the call on the NIC, and
// every SM-side term stays below the bound the 4-SM benchmark row of the same layout sets.
TEST_CASE("dispatch: the hidden-2048 component call is NIC-bound at 32 SMs (HybridEP EP16)") {
  const SystemSpec s = load_system("dgx-h100", kRoot);
  const Topology topo(s, s.fabric, 2);
  const CollectiveParams params = load_collective_params(s, kRoot);
  DispatchCall c;
  c.library = DispatchLibrary::kHybridEp;
  c.ranks = 16;
  c.tokens_per_rank = 4096;
  c.hidden = 2048;
  c.top_k = 8;
  c.experts = 128;
  c.sms = 32;  // Megatron-Bridge's moe_hybridep_num_sms
  const DispatchParams& lp = dispatch_params(DispatchLibrary::kHybridEp);
  const DispatchGlobals& g = dispatch_globals();
  const double copy = 4096;              // BF16, 2 x hidden
  const double p_rank = 0.4122820507;    // 1 − C(120,8)/C(128,8): 8 experts per rank
  const double p_domain = 0.9969041357;  // 1 − C(64,8)/C(128,8): 64 per node
  const double recv = 16 * 4096 * p_rank, node_copies = 2 * 4096 * p_domain;
  const double sm_recv = recv * (lp.c_tok_us * 1e-6 + copy / (lp.r_sm_gbps * 1e9)) / 32 * 1e6;
  const double sm_rdma =
      node_copies * (lp.c_rdma_us * 1e-6 + copy / (lp.r_rdma_gbps * 1e9)) / 32 * 1e6;
  // NIC: one 400 Gb/s CX7 per GPU at the fabric's 0.97 and η_net; NVLink: 14 × 4096 × p_rank
  // copies (own domain and forwarded) at η_nvl.
  const double rdma = 4096 * p_domain * copy / g.eta_net / (50e9 * 0.97) * 1e6;
  const double nvl = 14 * 4096 * p_rank * copy / (450e9 * lp.eta_nvl) * 1e6;
  const DispatchResult r = simulate_dispatch(topo, params, c, first_gpus(16), 1);
  CHECK(r.sm.us() == Approx(std::max(sm_recv, sm_rdma)).epsilon(1e-6));
  CHECK(r.flow.us() == Approx(std::max(rdma, nvl)).epsilon(0.03));
  CHECK(rdma > nvl);
  CHECK(r.flow > r.sm);  // the NIC binds: c_tok / r_sm do not decide this call
  CHECK(r.time.us() == Approx(lp.fixed_dispatch.us() + r.flow.us()).epsilon(1e-6));
  // HybridEP README's H100 EP16 BF16 dispatch at 4 SMs, kernel only: 44.4 GB/s over the node
  // copies at hidden 7168. An SM cost per copy is at most its hidden-7168 value and scales as
  // 1 / SMs, so every SM-side term at 32 SMs is below that time × 4 / 32 (330 us), about half
  // of the measured 631 us.
  const double four_sm_us = node_copies * 14336 / 44.4e9 * 1e6;
  CHECK(four_sm_us == Approx(2637).epsilon(1e-3));
  CHECK(r.sm.us() < four_sm_us * 4 / 32);
  CHECK(four_sm_us * 4 / 32 < 0.55 * 631);
  // The documented miss: the model's 416 us against the measured 631 us (0.603–0.660 ms).
  CHECK(r.time.us() == Approx(416).epsilon(0.01));
}
