#include "workload/step.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <numeric>
#include <set>
#include <unordered_map>

#include "core/error.h"
#include "core/simulator.h"
#include "net/flow_network.h"
#include "workload/layer_costs.h"

namespace fleetsim {

// ---------------------------------------------------------------------------------------------
// Configuration checks

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
  if (is_moe(m)) {
    const int64_t stage_ranks = int64_t{p.tp} * p.cp * p.dp;
    if (stage_ranks % (int64_t{p.ep} * p.etp) != 0) {
      fail(par + "/ep", "ep·etp = " + std::to_string(p.ep * p.etp) +
                            " must divide tp·cp·dp = " + std::to_string(stage_ranks));
    }
    if (m.moe.experts % p.ep != 0)
      fail(par + "/ep", "ep = " + std::to_string(p.ep) + " must divide the model's " +
                            std::to_string(m.moe.experts) + " experts");
  } else if (p.ep > 1) {
    fail(par + "/ep", "ep > 1 needs a mixture-of-experts model");
  }
  if (p.fsdp && p.pp > 1)
    fail(par + "/fsdp", "FSDP with pipeline parallelism is not modelled (use pp = 1)");
}

double bubble_fraction(int pp, int vp, int micro_batches) {
  return static_cast<double>(pp - 1) / (static_cast<double>(vp) * micro_batches);
}

namespace {

// ---------------------------------------------------------------------------------------------
// Rank geometry

struct Geometry {
  int tp, cp, dp, pp, ep, etp;
  int world;
  int units;  // TP groups
  int unit_of_gpu(int g) const { return g / tp; }
  int stage_of_unit(int u) const { return u / (cp * dp); }
  int dp_of_unit(int u) const { return (u / cp) % dp; }
  int cp_of_unit(int u) const { return u % cp; }
  int unit(int cp_rank, int dp_rank, int pp_rank) const {
    return cp_rank + cp * (dp_rank + dp * pp_rank);
  }
  int gpu(int tp_rank, int cp_rank, int dp_rank, int pp_rank) const {
    return tp_rank + tp * unit(cp_rank, dp_rank, pp_rank);
  }
};

// GPUs of the group of dimension `d` that contains GPU g.
std::vector<int> group_of(const Geometry& G, Dim d, int g) {
  std::vector<int> out;
  const int u = G.unit_of_gpu(g);
  const int t = g % G.tp, c = G.cp_of_unit(u), q = G.dp_of_unit(u), s = G.stage_of_unit(u);
  switch (d) {
    case Dim::kTp:
      for (int i = 0; i < G.tp; ++i)
        out.push_back(G.gpu(i, c, q, s));
      break;
    case Dim::kCp:
      for (int i = 0; i < G.cp; ++i)
        out.push_back(G.gpu(t, i, q, s));
      break;
    case Dim::kDp:  // gradients of dense parameters are reduced over DP × CP
      for (int j = 0; j < G.dp; ++j)
        for (int i = 0; i < G.cp; ++i)
          out.push_back(G.gpu(t, i, j, s));
      break;
    case Dim::kEp:
    case Dim::kEdp: {
      // Megatron expert order inside a stage: r = etp_rank + etp·(ep_rank + ep·edp_rank).
      const int per_stage = G.tp * G.cp * G.dp;
      const int base = s * per_stage;
      const int r = g - base;
      const int etp_rank = r % G.etp;
      const int ep_rank = (r / G.etp) % G.ep;
      const int edp_rank = r / (G.etp * G.ep);
      const int edp = per_stage / (G.etp * G.ep);
      if (d == Dim::kEp) {
        for (int i = 0; i < G.ep; ++i)
          out.push_back(base + etp_rank + G.etp * (i + G.ep * edp_rank));
      } else {
        for (int i = 0; i < edp; ++i)
          out.push_back(base + etp_rank + G.etp * (ep_rank + G.ep * i));
      }
      break;
    }
    case Dim::kPp:
      out.push_back(g);
      if (s + 1 < G.pp) out.push_back(G.gpu(t, c, q, s + 1));
      break;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Collective durations: every group of a dimension that shares nodes with the first group runs
// the collective at the same time on one flow network.

class CommModel {
 public:
  CommModel(const Topology& topo, const CollectiveParams& params, const Geometry& G, uint64_t seed,
            int ranks_per_domain)
      : topo_(topo), params_(params), G_(G), seed_(seed), rpd_(ranks_per_domain) {}

  // Physical GPU of rank r.
  int gpu_of(int r) const {
    if (rpd_ <= 0) return r;
    return (r / rpd_) * topo_.gpus_per_domain() + r % rpd_;
  }

  Time time(Dim d, CollOp op, double bytes) {
    if (bytes <= 0) return Time::zero();
    const auto key = std::make_tuple(static_cast<int>(d), static_cast<int>(op),
                                     static_cast<int64_t>(std::llround(bytes)));
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    const Time t = simulate(d, op, bytes);
    memo_.emplace(key, t);
    return t;
  }
  const std::vector<double>& link_bytes() const { return link_bytes_; }
  const std::vector<double>& link_saturated_s() const { return link_sat_; }

  // DeepEP-style dispatch inside every EP group co-located with the first: each rank holds
  // `tokens` tokens, each routed to top_k of `experts` experts spread evenly over the group
  // (balanced routing). A token goes once to every GPU of its node that holds one of its
  // experts, and once to every other node that does (to one GPU there, which forwards over
  // NVLink: modelled as spread over that node's group members). Expected copies follow from
  // P(a set of e experts is hit) = 1 − (1 − e/E)^k.
  Time ep_dispatch(double tokens, double bytes_per_copy, int experts, int top_k) {
    const auto key = std::make_tuple(static_cast<int64_t>(std::llround(tokens)),
                                     static_cast<int64_t>(std::llround(bytes_per_copy)), experts);
    auto it = ep_memo_.find(key);
    if (it != ep_memo_.end()) return it->second;
    const auto groups = colocated_groups(Dim::kEp);
    auto hit = [&](double e) {
      return 1.0 - std::pow(1.0 - e / experts, static_cast<double>(top_k));
    };
    Simulator sim;
    FlowNetwork net(sim, topo_.links());
    Done done;
    done.end.assign(groups.size(), Time::zero());
    std::vector<std::unique_ptr<CollectiveRun>> runs;
    for (size_t gi = 0; gi < groups.size(); ++gi) {
      const auto& grp = groups[gi];
      const size_t n = grp.size();
      const double per_rank = static_cast<double>(experts) / static_cast<double>(n);
      std::map<int, int> on_node;
      for (int g : grp)
        on_node[topo_.node_of(g)]++;
      std::vector<std::vector<double>> bytes(n, std::vector<double>(n, 0.0));
      for (size_t i = 0; i < n; ++i) {
        for (size_t j = 0; j < n; ++j) {
          if (i == j) continue;
          const int ni = topo_.node_of(grp[i]), nj = topo_.node_of(grp[j]);
          if (ni == nj) {
            bytes[i][j] = tokens * hit(per_rank) * bytes_per_copy;
          } else {
            const int g = on_node[nj];
            bytes[i][j] = tokens * hit(per_rank * g) * bytes_per_copy / g;
          }
        }
      }
      runs.push_back(std::make_unique<CollectiveRun>(
          params_, plan_alltoallv(topo_, params_, grp, bytes, seed_ + gi)));
      runs.back()->start(sim, net, &done, gi);
    }
    sim.run();
    Time worst = Time::zero();
    for (const Time& t : done.end)
      worst = std::max(worst, t);
    ep_memo_.emplace(key, worst);
    return worst;
  }
  // Bytes that one occurrence of (d, op, bytes) put on each link, for the USE view.
  void account(Dim d, CollOp op, double bytes, double occurrences) {
    if (bytes <= 0 || occurrences <= 0) return;
    time(d, op, bytes);
    const auto key = std::make_tuple(static_cast<int>(d), static_cast<int>(op),
                                     static_cast<int64_t>(std::llround(bytes)));
    const auto& lb = link_memo_[key];
    if (link_bytes_.empty()) {
      link_bytes_.assign(topo_.links().size(), 0.0);
      link_sat_.assign(topo_.links().size(), 0.0);
    }
    for (const auto& u : lb) {
      link_bytes_[u.link] += u.bytes * occurrences;
      link_sat_[u.link] += u.saturated_s * occurrences;
    }
  }

 private:
  std::vector<std::vector<int>> colocated_groups(Dim d) {
    auto cached = groups_.find(static_cast<int>(d));
    if (cached != groups_.end()) return cached->second;
    // Groups in rank space; nodes in physical space.
    const std::vector<int> g0 = group_of(G_, d, 0);
    std::set<int> nodes;
    for (int g : g0)
      nodes.insert(topo_.node_of(gpu_of(g)));
    std::vector<int> rank_of_gpu(topo_.gpus(), -1);
    for (int r = 0; r < G_.world; ++r)
      rank_of_gpu[gpu_of(r)] = r;
    std::vector<std::vector<int>> out;
    std::set<int> taken;
    for (int n : nodes) {
      for (int l = 0; l < topo_.gpus_per_node(); ++l) {
        const int g = rank_of_gpu[n * topo_.gpus_per_node() + l];
        if (g < 0 || taken.count(g)) continue;
        std::vector<int> grp = group_of(G_, d, g);
        bool inside = true;
        for (int x : grp)
          inside = inside && nodes.count(topo_.node_of(gpu_of(x))) > 0;
        if (!inside || grp.size() < 2) continue;
        // Only groups whose first member is `g` are new (avoid duplicates).
        if (grp.front() != g && d != Dim::kPp) {
          bool seen = false;
          for (int x : grp)
            seen = seen || taken.count(x) > 0;
          if (seen) continue;
        }
        for (int x : grp)
          taken.insert(x);
        out.push_back(std::move(grp));
      }
    }
    if (out.empty()) out.push_back(g0);
    for (auto& grp : out)
      for (int& x : grp)
        x = gpu_of(x);
    groups_.emplace(static_cast<int>(d), out);
    return out;
  }

  struct Done final : EventHandler {
    std::vector<Time> end;
    void on_event(Simulator& sim, uint64_t tag) override { end[tag] = sim.now(); }
  };

  Time simulate(Dim d, CollOp op, double bytes) {
    const auto groups = colocated_groups(d);
    std::vector<Algorithm> algos = candidate_algorithms(topo_, op, groups.front());
    if (algos.empty()) algos = {Algorithm::kRing};
    Time best = Time::infinite();
    std::vector<WaveLink> best_links;
    const Bytes size(static_cast<int64_t>(std::llround(bytes)));
    for (Algorithm a : algos) {
      Simulator sim;
      FlowNetwork net(sim, topo_.links());
      Done done;
      done.end.assign(groups.size(), Time::zero());
      std::vector<CollectivePlan> plans;
      try {
        for (size_t i = 0; i < groups.size(); ++i)
          plans.push_back(plan_collective(topo_, params_, op, a, size, groups[i], seed_ + i));
      } catch (const InternalError& e) {
        if (std::getenv("FLEETSIM_DEBUG")) {
          std::fprintf(stderr, "%s %s groups=%zu\n", to_string(a), e.what(), groups.size());
          for (auto& gg : groups) {
            std::map<int, int> dc;
            for (int x : gg)
              dc[topo_.domain_of(x)]++;
            for (auto& [k, v] : dc)
              std::fprintf(stderr, " d%d:%d", k, v);
            std::fprintf(stderr, " |");
          }
        }
        continue;  // this algorithm cannot run on the placement (e.g. uneven NVLink domains)
      }
      std::vector<std::unique_ptr<CollectiveRun>> runs;
      for (size_t i = 0; i < groups.size(); ++i) {
        runs.push_back(std::make_unique<CollectiveRun>(params_, std::move(plans[i])));
        runs.back()->start(sim, net, &done, i);
      }
      sim.run();
      Time worst = Time::zero();
      for (const Time& t : done.end)
        worst = std::max(worst, t);
      if (worst < best) {
        best = worst;
        best_links.clear();
        // Bytes the whole wave (every co-located group) put on each link.
        const std::vector<double>& lb = net.link_bytes();
        for (uint32_t l = 0; l < lb.size(); ++l)
          if (lb[l] > 0) best_links.push_back({l, lb[l], net.saturated_time(l).seconds()});
      }
    }
    if (best == Time::infinite()) {
      throw InputError("", "/workload/parallelism",
                       std::string("no collective algorithm can run the ") + dim_name(d) + " " +
                           to_string(op) +
                           " on this rank placement (groups split unevenly over NVLink domains)");
    }
    link_memo_[std::make_tuple(static_cast<int>(d), static_cast<int>(op),
                               static_cast<int64_t>(std::llround(bytes)))] = best_links;
    return best;
  }

  const Topology& topo_;
  const CollectiveParams& params_;
  const Geometry& G_;
  uint64_t seed_;
  int rpd_;
  std::map<std::tuple<int, int, int64_t>, Time> memo_;
  std::map<std::tuple<int64_t, int64_t, int>, Time> ep_memo_;
  struct WaveLink {
    uint32_t link;
    double bytes;
    double saturated_s;
  };
  std::map<std::tuple<int, int, int64_t>, std::vector<WaveLink>> link_memo_;
  std::vector<double> link_sat_;
  std::map<int, std::vector<std::vector<int>>> groups_;
  std::vector<double> link_bytes_;
};

// ---------------------------------------------------------------------------------------------
// Programs: the instruction stream of one pipeline stage (identical for every TP unit of it).

enum class Op : uint8_t {
  kCompute,   // a: compute time at speed 1, b: exposed TP time
  kSync,      // blocking group collective (EP / CP): dim, dur
  kRecv,      // wait for a pipeline receive: dir, chunk, mb
  kSend,      // asynchronous pipeline send: dir, chunk, mb, dur
  kLaunch,    // asynchronous DP-stream collective: dim, slot, dur
  kWait,      // wait for DP-stream collective `slot`
  kOptimizer  // optimizer step
};

struct Instr {
  Op op;
  Dim dim = Dim::kTp;
  uint8_t dir = 0;  // 0 forward activations, 1 backward gradients
  int32_t chunk = 0;
  int32_t mb = 0;
  int32_t slot = 0;
  int32_t moe = -1;  // MoE layer index: expert compute / EP all-to-all scaled by its load
  Time a;            // compute / duration
  Time b;            // exposed TP
  const char* name = "";
};

struct Stage {
  std::vector<Instr> prog;
  int dp_slots = 0;
};

// Megatron-LM's interleaved 1F1B order (schedules.py): the k-th forward runs chunk
// (k mod (pp·vp)) / pp of micro-batch (k / (pp·vp))·pp + k mod pp; backwards mirror the chunks.
struct ScheduleStep {
  bool forward;
  int chunk;
  int mb;
};

std::vector<ScheduleStep> schedule_order(int pp, int vp, int M, int stage) {
  std::vector<ScheduleStep> out;
  const int total = M * vp;
  auto fwd = [&](int k) {
    if (vp == 1) return ScheduleStep{true, 0, k};
    const int group = k / (pp * vp), in = k % (pp * vp);
    return ScheduleStep{true, in / pp, group * pp + in % pp};
  };
  auto bwd = [&](int k) {
    if (vp == 1) return ScheduleStep{false, 0, k};
    const int group = k / (pp * vp), in = k % (pp * vp);
    return ScheduleStep{false, vp - 1 - in / pp, group * pp + in % pp};
  };
  int warmup =
      vp == 1 ? std::min(pp - stage - 1, M) : std::min((pp - stage - 1) * 2 + (vp - 1) * pp, total);
  const int steady = total - warmup;
  int f = 0, b = 0;
  for (int i = 0; i < warmup; ++i)
    out.push_back(fwd(f++));
  for (int i = 0; i < steady; ++i) {
    out.push_back(fwd(f++));
    out.push_back(bwd(b++));
  }
  while (b < total)
    out.push_back(bwd(b++));
  return out;
}

// ---------------------------------------------------------------------------------------------
// The replay engine

class Engine final : public EventHandler {
 public:
  struct Unit {
    size_t pc = 0;
    double speed = 1.0;
    Time block_start;
    int blocked = 0;  // 0 running; 1 recv; 2 sync; 3 wait
    // accounting (ps)
    int64_t t_compute = 0, t_tp = 0, t_cp = 0, t_ep = 0, t_pp = 0, t_bubble = 0, t_dp = 0,
            t_opt = 0, end = 0;
    std::vector<int64_t> arrivals;  // [dir][chunk][mb] arrival time, -1 unknown
    std::vector<int64_t> slot_done;
  };

  struct Barrier {
    int arrived = 0;
    int64_t max_time = 0;
    std::vector<int> waiting;
  };

  Engine(const Geometry& G, std::vector<Stage>& stages, std::vector<int> units, int vp, int M,
         const std::vector<double>& speed, Time p2p_fwd, Time p2p_bwd, bool trace,
         const MoeLoadTable* moe)
      : G_(G),
        stages_(stages),
        vp_(vp),
        M_(M),
        p2p_{p2p_fwd, p2p_bwd},
        trace_on_(trace),
        moe_(moe) {
    unit_list_ = std::move(units);
    index_.assign(G.units, -1);
    for (size_t i = 0; i < unit_list_.size(); ++i)
      index_[unit_list_[i]] = static_cast<int>(i);
    units_.resize(unit_list_.size());
    for (size_t i = 0; i < unit_list_.size(); ++i) {
      Unit& u = units_[i];
      const int id = unit_list_[i];
      u.arrivals.assign(static_cast<size_t>(2) * vp * M, -1);
      u.slot_done.assign(stages_[G.stage_of_unit(id)].dp_slots, -1);
      double s = 1.0;
      for (int t = 0; t < G.tp; ++t) {
        const size_t gpu = static_cast<size_t>(id) * G.tp + t;
        if (gpu < speed.size()) s = std::min(s, speed[gpu]);
      }
      u.speed = s;
    }
    build_components();
  }

  uint64_t run(Simulator& sim) {
    sim.reserve(units_.size() * 2 + 16);
    for (size_t i = 0; i < units_.size(); ++i)
      sim.schedule_at(Time::zero(), this, i);
    return sim.run();
  }

  void on_event(Simulator& sim, uint64_t tag) override { advance(sim, static_cast<int>(tag)); }

  const std::vector<Unit>& units() const { return units_; }
  const std::vector<int>& unit_ids() const { return unit_list_; }
  std::vector<TraceEvent>& trace() { return trace_; }

 private:
  size_t arr_index(int dir, int chunk, int mb) const {
    return (static_cast<size_t>(dir) * vp_ + chunk) * M_ + mb;
  }

  // Components: units that take part in the same group of a dimension synchronise together.
  void build_components() {
    for (Dim d : {Dim::kCp, Dim::kDp, Dim::kEdp, Dim::kEp}) {
      auto& comp = comp_[static_cast<int>(d)];
      comp.assign(G_.units, -1);
      int next = 0;
      for (int u : unit_list_) {
        if (comp[u] >= 0) continue;
        // BFS over units connected through groups of dimension d.
        std::vector<int> stack{u};
        comp[u] = next;
        while (!stack.empty()) {
          const int x = stack.back();
          stack.pop_back();
          for (int t = 0; t < G_.tp; ++t) {
            for (int g : group_of(G_, d, x * G_.tp + t)) {
              const int y = G_.unit_of_gpu(g);
              if (index_[y] >= 0 && comp[y] < 0) {
                comp[y] = next;
                stack.push_back(y);
              }
            }
          }
        }
        ++next;
      }
      comp_size_[static_cast<int>(d)].assign(next, 0);
      for (int u : unit_list_)
        comp_size_[static_cast<int>(d)][comp[u]]++;
      barriers_[static_cast<int>(d)].resize(next);
      stream_free_[static_cast<int>(d)].assign(next, 0);
    }
  }

  void record(int u, const char* stream, const char* name, int64_t start, int64_t dur) {
    if (!trace_on_ || dur <= 0) return;
    TraceEvent e;
    e.rank = unit_list_[u] * G_.tp;
    e.tp = G_.tp;
    e.stream = stream;
    e.name = name;
    e.start_us = static_cast<double>(start) * 1e-6;
    e.dur_us = static_cast<double>(dur) * 1e-6;
    trace_.push_back(std::move(e));
  }

  int neighbour(int unit_id, int dir, int chunk, int* peer_chunk) const {
    // Forward activations go to virtual stage v+1, gradients to v−1.
    const int s = G_.stage_of_unit(unit_id);
    const int c = G_.cp_of_unit(unit_id), q = G_.dp_of_unit(unit_id);
    int ns, nc = chunk;
    if (dir == 0) {
      ns = s + 1;
      if (ns == G_.pp) {
        ns = 0;
        nc = chunk + 1;
      }
    } else {
      ns = s - 1;
      if (ns < 0) {
        ns = G_.pp - 1;
        nc = chunk - 1;
      }
    }
    *peer_chunk = nc;
    return G_.unit(c, q, ns);
  }

  void resume(Simulator& sim, int u, int64_t at) {
    units_[u].blocked = 0;
    sim.schedule_at(Time::from_ps(at), this, static_cast<uint64_t>(u));
  }

  void advance(Simulator& sim, int u) {
    Unit& U = units_[u];
    const int id = unit_list_[u];
    const std::vector<Instr>& prog = stages_[G_.stage_of_unit(id)].prog;
    const int64_t now = sim.now().ps();
    while (U.pc < prog.size()) {
      const Instr& in = prog[U.pc];
      switch (in.op) {
        case Op::kCompute: {
          const double load = in.moe >= 0 ? moe_factor(u, in.moe, in.mb) : 1.0;
          const int64_t c = static_cast<int64_t>(std::llround(in.a.ps() * load / U.speed));
          const int64_t dur = c + in.b.ps();
          U.t_compute += c;
          U.t_tp += in.b.ps();
          record(u, "compute", in.name, now, dur);
          ++U.pc;
          sim.schedule_at(Time::from_ps(now + dur), this, static_cast<uint64_t>(u));
          return;
        }
        case Op::kOptimizer: {
          const int64_t dur = static_cast<int64_t>(std::llround(in.a.ps() / U.speed));
          U.t_opt += dur;
          record(u, "compute", in.name, now, dur);
          ++U.pc;
          sim.schedule_at(Time::from_ps(now + dur), this, static_cast<uint64_t>(u));
          return;
        }
        case Op::kSend: {
          int pc_chunk = 0;
          const int peer = neighbour(id, in.dir, in.chunk, &pc_chunk);
          const int pi = index_[peer];
          const int64_t arrive = now + in.a.ps();
          record(u, "pp", in.name, now, in.a.ps());
          if (pi >= 0) {
            Unit& P = units_[pi];
            P.arrivals[arr_index(in.dir, pc_chunk, in.mb)] = arrive;
            if (P.blocked == 1) {
              const Instr& w = stages_[G_.stage_of_unit(peer)].prog[P.pc];
              if (w.op == Op::kRecv && w.dir == in.dir && w.chunk == pc_chunk && w.mb == in.mb) {
                finish_recv(P, arrive, in.a.ps());
                ++P.pc;
                resume(sim, pi, std::max(arrive, P.block_start.ps()));
              }
            }
          }
          ++U.pc;
          continue;
        }
        case Op::kRecv: {
          const int64_t t = U.arrivals[arr_index(in.dir, in.chunk, in.mb)];
          if (t < 0) {
            U.blocked = 1;
            U.block_start = Time::from_ps(now);
            return;
          }
          ++U.pc;
          if (t > now) {
            U.block_start = Time::from_ps(now);
            finish_recv(U, t, p2p_[in.dir].ps());
            sim.schedule_at(Time::from_ps(t), this, static_cast<uint64_t>(u));
            return;
          }
          continue;
        }
        case Op::kSync: {
          const int d = static_cast<int>(in.dim);
          const int c = comp_[d][id];
          Barrier& B = barriers_[d][c];
          B.arrived++;
          B.max_time = std::max(B.max_time, now);
          B.waiting.push_back(u);
          units_[u].blocked = 2;
          units_[u].block_start = Time::from_ps(now);
          ++U.pc;
          if (B.arrived == comp_size_[d][c]) {
            const int64_t dur = in.moe >= 0 && !moe_->empty()
                                    ? static_cast<int64_t>(std::llround(
                                          static_cast<double>(in.a.ps()) *
                                          static_cast<double>(moe_->a2a(in.moe, in.mb))))
                                    : in.a.ps();
            const int64_t end = B.max_time + dur;
            for (int w : B.waiting) {
              Unit& W = units_[w];
              const int64_t waited = end - W.block_start.ps();
              if (in.dim == Dim::kEp)
                W.t_ep += waited;
              else
                W.t_cp += waited;
              record(w, "compute", in.name, B.max_time, dur);
              resume(sim, w, end);
            }
            B = Barrier{};
          }
          return;
        }
        case Op::kLaunch: {
          const int d = static_cast<int>(in.dim);
          const int c = comp_[d][id];
          auto& pend = launches_[d][c];
          auto& L = pend[in.slot];
          L.arrived++;
          L.max_time = std::max(L.max_time, now);
          if (L.arrived == comp_size_[d][c]) {
            int64_t& free = stream_free_[d][c];
            const int64_t start = std::max(free, L.max_time);
            const int64_t end = start + in.a.ps();
            free = end;
            // Every member learns the completion time; wake members waiting for it.
            for (int x : members(d, c)) {
              Unit& X = units_[x];
              X.slot_done[in.slot] = end;
              record(x, "dp", in.name, start, in.a.ps());
              if (X.blocked == 3) {
                const Instr& w = stages_[G_.stage_of_unit(unit_list_[x])].prog[X.pc];
                if (w.op == Op::kWait && w.slot == in.slot) {
                  X.t_dp += std::max<int64_t>(0, end - X.block_start.ps());
                  ++X.pc;
                  resume(sim, x, std::max(end, X.block_start.ps()));
                }
              }
            }
            pend.erase(in.slot);
          }
          ++U.pc;
          continue;
        }
        case Op::kWait: {
          const int64_t t = U.slot_done[in.slot];
          if (t < 0) {
            U.blocked = 3;
            U.block_start = Time::from_ps(now);
            return;
          }
          ++U.pc;
          if (t > now) {
            U.t_dp += t - now;
            sim.schedule_at(Time::from_ps(t), this, static_cast<uint64_t>(u));
            return;
          }
          continue;
        }
      }
    }
    U.end = now;
  }

  void finish_recv(Unit& U, int64_t arrive, int64_t transfer) {
    const int64_t waited = std::max<int64_t>(0, arrive - U.block_start.ps());
    const int64_t pp_part = std::min(waited, transfer);
    U.t_pp += pp_part;
    U.t_bubble += waited - pp_part;
  }

  const std::vector<int>& members(int d, int c) {
    auto key = std::make_pair(d, c);
    auto it = members_.find(key);
    if (it != members_.end()) return it->second;
    std::vector<int> m;
    for (size_t i = 0; i < unit_list_.size(); ++i)
      if (comp_[d][unit_list_[i]] == c) m.push_back(static_cast<int>(i));
    return members_.emplace(key, std::move(m)).first->second;
  }

  // The MoE load of unit u (its TP ranks run in lockstep: the most loaded of their EP ranks).
  double moe_factor(int u, int layer, int mb) const {
    if (moe_->empty()) return 1.0;
    const int id = unit_list_[u];
    const int per_stage = G_.tp * G_.cp * G_.dp;
    double f = 0;
    for (int t = 0; t < G_.tp; ++t) {
      const int r = (id * G_.tp + t) % per_stage;
      const int q = (r / G_.etp) % G_.ep;
      f = std::max(f, static_cast<double>(moe_->rank(layer, mb, q)));
    }
    return f;
  }

  const Geometry& G_;
  std::vector<Stage>& stages_;
  int vp_, M_;
  Time p2p_[2];
  bool trace_on_;
  std::vector<int> unit_list_;
  std::vector<int> index_;
  std::vector<Unit> units_;
  std::vector<int> comp_[6];
  std::vector<int> comp_size_[6];
  std::vector<Barrier> barriers_[6];
  std::vector<int64_t> stream_free_[6];
  std::unordered_map<int, std::unordered_map<int, Barrier>> launches_[6];
  std::map<std::pair<int, int>, std::vector<int>> members_;
  std::vector<TraceEvent> trace_;
  const MoeLoadTable* moe_;
};

// Splits `layers` over `vstages` virtual stages as evenly as possible; the first and last
// virtual stages (which also hold the embedding and the LM head) get the smaller share.
std::vector<int> split_layers(int layers, int vstages) {
  std::vector<int> n(vstages, layers / vstages);
  int rem = layers % vstages;
  std::vector<int> order;
  for (int v = 1; v + 1 < vstages; ++v)
    order.push_back(v);
  if (vstages > 1) order.push_back(vstages - 1);
  order.push_back(0);
  for (int i = 0; rem > 0; i = (i + 1) % static_cast<int>(order.size()), --rem)
    n[order[i]]++;
  return n;
}

// Contiguous partition of items [embedding, layer 0 .. layer n−1, head] into `parts` groups
// minimising the largest group's cost; the embedding stays in the first group and the head in
// the last. Returns the number of decoder layers per group. O(parts · n²).
std::vector<int> balanced_split(const std::vector<double>& items, int parts) {
  const int n = static_cast<int>(items.size());
  std::vector<double> prefix(n + 1, 0.0);
  for (int i = 0; i < n; ++i)
    prefix[i + 1] = prefix[i] + items[i];
  const double inf = std::numeric_limits<double>::infinity();
  // best[k][i]: minimal max cost of splitting the first i items into k non-empty groups.
  std::vector<std::vector<double>> best(parts + 1, std::vector<double>(n + 1, inf));
  std::vector<std::vector<int>> cut(parts + 1, std::vector<int>(n + 1, 0));
  best[0][0] = 0;
  for (int k = 1; k <= parts; ++k) {
    for (int i = k; i <= n - (parts - k); ++i) {
      for (int j = k - 1; j < i; ++j) {
        if (best[k - 1][j] == inf) continue;
        const double v = std::max(best[k - 1][j], prefix[i] - prefix[j]);
        if (v < best[k][i]) {
          best[k][i] = v;
          cut[k][i] = j;
        }
      }
    }
  }
  std::vector<int> bounds(parts + 1, 0);
  bounds[parts] = n;
  for (int k = parts, i = n; k > 0; --k) {
    i = cut[k][i];
    bounds[k - 1] = i;
  }
  // Items [bounds[k], bounds[k+1]) are group k; count decoder layers (item 0 is the embedding,
  // item n−1 the head).
  std::vector<int> layers(parts, 0);
  for (int k = 0; k < parts; ++k)
    for (int i = bounds[k]; i < bounds[k + 1]; ++i)
      if (i != 0 && i != n - 1) layers[k]++;
  return layers;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

StepResult simulate_step(const StepInput& in, const Topology& topo, const CollectiveParams& cparams,
                         const ComputeModel& compute) {
  const ModelSpec& m = in.model;
  const ParallelConfig& p = in.par;
  StepResult res;
  Geometry G{p.tp, p.cp, p.dp, p.pp, p.ep, p.etp, p.world(), p.world() / p.tp};
  FLEETSIM_ASSERT(G.world <= topo.gpus());
  const int M = p.micro_batches();
  const int V = p.pp * p.vp;
  res.micro_batches = M;
  res.bubble_fraction_closed_form = bubble_fraction(p.pp, p.vp, M);

  if (in.ranks_per_domain > 0) {
    const int domains_needed = (G.world + in.ranks_per_domain - 1) / in.ranks_per_domain;
    FLEETSIM_ASSERT(in.ranks_per_domain <= topo.gpus_per_domain() &&
                    domains_needed <= topo.domains());
  }
  CommModel comm(topo, cparams, G, in.seed, in.ranks_per_domain);
  LayerCostModel costs(m, p, in.fw, compute,
                       [&](Dim d, CollOp op, double bytes) { return comm.time(d, op, bytes); });
  if (is_moe(m)) {
    costs.set_ep_dispatch([&](double tokens, double bytes) {
      return comm.ep_dispatch(tokens, bytes, m.moe.experts, m.moe.top_k);
    });
  }

  // Layers of each virtual stage.
  // Layers per virtual stage: an even split (Megatron's default) when the layers divide evenly,
  // otherwise the contiguous split that balances the stages' estimated time, the way NeMo's
  // recipes lay out uneven pipelines (pipeline_model_parallel_layout).
  std::vector<int> per_v;
  const bool balanced = in.fw.pipeline_split == PipelineSplit::kBalanced ||
                        (in.fw.pipeline_split == PipelineSplit::kAuto && m.layers % V != 0);
  if (balanced) {
    auto cost = [](const Block& b) {
      int64_t t = 0;
      for (const Segment& sg : b.segs)
        t += sg.compute.ps() + sg.tp.ps() + sg.sync.ps();
      return static_cast<double>(t);
    };
    std::vector<double> items;
    items.push_back(cost(costs.embedding(false)) + cost(costs.embedding(true)));
    for (int l = 0; l < m.layers; ++l)
      items.push_back(cost(costs.layer(l, false)) + cost(costs.layer(l, true)));
    items.push_back(cost(costs.head(false)) + cost(costs.head(true)));
    per_v = balanced_split(items, V);
    res.warnings.push_back("pipeline layers split to balance stage time (" +
                           std::to_string(m.layers) + " layers over " + std::to_string(V) +
                           " virtual stages)");
  } else {
    per_v = split_layers(m.layers, V);
  }
  std::vector<int> first_layer(V, 0);
  for (int v = 1; v < V; ++v)
    first_layer[v] = first_layer[v - 1] + per_v[v - 1];

  // DP buckets per (stage, chunk): parameter counts in reverse layer order (backward order).
  const bool moe = is_moe(m);
  const int64_t bucket = std::max<int64_t>(in.fw.bucket_params, int64_t{1'000'000} * p.dp);
  const double grad_bytes = 2.0;   // gradients reduced in BF16 (README "Assumptions")
  const double param_bytes = 2.0;  // parameters gathered in BF16

  // Index of each MoE layer among the MoE layers (for the load table), −1 for dense layers.
  std::vector<int> moe_index(m.layers, -1);
  {
    int k = 0;
    for (int l = 0; l < m.layers; ++l)
      if (is_moe_layer(m, l)) moe_index[l] = k++;
    if (!in.moe.empty()) {
      FLEETSIM_ASSERT(in.moe.moe_layers == k && in.moe.micro_batches == M && in.moe.ep == p.ep);
    }
  }
  std::vector<Stage> stages(p.pp);
  std::vector<std::map<CollCall, double>> counts(p.pp);  // collectives issued per unit of a stage
  for (int s = 0; s < p.pp; ++s) {
    Stage& st = stages[s];
    auto& prog = st.prog;
    struct Bucket {
      double dense = 0, expert = 0;  // parameters on this rank
      int slot_rs = -1, slot_ers = -1, slot_ag = -1, slot_eag = -1;
      bool launched = false;
    };
    // Buckets per chunk and the bucket index each layer's gradients land in.
    std::vector<std::vector<Bucket>> buckets(p.vp);
    std::vector<std::vector<int>> layer_bucket(p.vp);
    for (int c = 0; c < p.vp; ++c) {
      const int v = c * p.pp + s;
      const int n = per_v[v];
      layer_bucket[c].assign(n, 0);
      double acc = 0;
      buckets[c].push_back({});
      for (int i = n - 1; i >= 0; --i) {
        const RankParams rp = costs.rank_params(first_layer[v] + i);
        if (acc > 0 && acc + rp.dense + rp.expert > static_cast<double>(bucket)) {
          buckets[c].push_back({});
          acc = 0;
        }
        buckets[c].back().dense += rp.dense;
        buckets[c].back().expert += rp.expert;
        acc += rp.dense + rp.expert;
        layer_bucket[c][i] = static_cast<int>(buckets[c].size()) - 1;
      }
      if (v == 0) buckets[c].back().dense += costs.embedding_rank_params();
      if (v == V - 1) buckets[c].front().dense += costs.head_rank_params();
      for (auto& b : buckets[c]) {
        if (p.fsdp) break;  // FSDP reduces per layer, not per bucket
        const bool dist = p.distributed_optimizer && !p.fsdp;
        if (p.dp * p.cp > 1 && b.dense > 0) {
          b.slot_rs = st.dp_slots++;
          if (dist) b.slot_ag = st.dp_slots++;
        }
        if (moe && b.expert > 0 && (p.tp * p.cp * p.dp) / (p.ep * p.etp) > 1) {
          b.slot_ers = st.dp_slots++;
          if (dist) b.slot_eag = st.dp_slots++;
        }
      }
    }
    const CollOp grad_op =
        (p.distributed_optimizer && !p.fsdp) ? CollOp::kReduceScatter : CollOp::kAllReduce;
    auto launch = [&](Dim d, int slot, CollOp op, double bytes, const char* name) {
      if (slot < 0) return;
      counts[s][CollCall{d, op, bytes}] += 1;
      Instr x{Op::kLaunch};
      x.dim = d;
      x.slot = slot;
      x.a = comm.time(d, op, bytes);
      x.name = name;
      prog.push_back(x);
    };
    auto wait = [&](int slot) {
      if (slot < 0) return;
      Instr x{Op::kWait};
      x.slot = slot;
      prog.push_back(x);
    };
    auto emit_segments = [&](const Block& blk, int moe_layer = -1, int mb = 0) {
      for (const CollCall& cc : blk.colls)
        counts[s][cc] += 1;
      for (const Segment& sg : blk.segs) {
        if (sg.compute > Time::zero() || sg.tp > Time::zero()) {
          Instr x{Op::kCompute};
          x.a = sg.compute;
          x.b = sg.tp;
          x.name = sg.name;
          x.mb = mb;
          if (sg.experts) x.moe = moe_layer;
          prog.push_back(x);
        }
        if (sg.sync_dim >= 0) {
          Instr x{Op::kSync};
          x.dim = static_cast<Dim>(sg.sync_dim);
          x.a = sg.sync;
          x.name = sg.sync_name;
          x.mb = mb;
          if (x.dim == Dim::kEp) x.moe = moe_layer;
          prog.push_back(x);
        }
      }
    };

    // Parameter all-gather of the distributed optimizer, overlapped with the forward pass:
    // launched at the start of the step (it belongs to the previous optimizer step).
    const bool dist = p.distributed_optimizer && !p.fsdp;
    if (dist && in.fw.overlap_param_gather) {
      // In forward order: buckets were formed backward, so the last bucket holds the first
      // layers.
      for (int c = 0; c < p.vp; ++c)
        for (auto it = buckets[c].rbegin(); it != buckets[c].rend(); ++it) {
          launch(Dim::kDp, it->slot_ag, CollOp::kAllGather, it->dense * param_bytes,
                 "param all-gather");
          launch(Dim::kEdp, it->slot_eag, CollOp::kAllGather, it->expert * param_bytes,
                 "expert param all-gather");
        }
    }
    std::vector<int> fwd_seen(p.vp, 0), bwd_seen(p.vp, 0);
    const auto order = schedule_order(p.pp, p.vp, M, s);
    for (const ScheduleStep& step : order) {
      const int c = step.chunk, v = c * p.pp + s;
      const int n = per_v[v];
      if (step.forward) {
        if (v > 0) prog.push_back(Instr{Op::kRecv, Dim::kPp, 0, c, step.mb});
        // The chunk's first forward waits, layer by layer, for the bucket holding the layer.
        const bool first_fwd = fwd_seen[c]++ == 0 && dist && in.fw.overlap_param_gather;
        if (first_fwd && v == 0) {
          wait(buckets[c].back().slot_ag);
          wait(buckets[c].back().slot_eag);
        }
        if (v == 0) emit_segments(costs.embedding(false));
        // FSDP gathers each layer's parameters one layer ahead (prefetch), as PyTorch FSDP
        // and Megatron-FSDP do.
        std::vector<int> ag_slot(n, -1);
        auto fsdp_gather = [&](int i) {
          if (!p.fsdp || i < 0 || i >= n) return;
          ag_slot[i] = st.dp_slots++;
          launch(Dim::kDp, ag_slot[i], CollOp::kAllGather,
                 costs.rank_params(first_layer[v] + i).dense * param_bytes, "fsdp all-gather");
        };
        fsdp_gather(0);
        for (int i = 0; i < n; ++i) {
          const int layer = first_layer[v] + i;
          fsdp_gather(i + 1);
          if (p.fsdp) wait(ag_slot[i]);
          if (first_fwd) {
            wait(buckets[c][layer_bucket[c][i]].slot_ag);
            wait(buckets[c][layer_bucket[c][i]].slot_eag);
          }
          emit_segments(costs.layer(layer, false), moe_index[layer], step.mb);
        }
        if (first_fwd && v == V - 1) {
          wait(buckets[c].front().slot_ag);
          wait(buckets[c].front().slot_eag);
        }
        if (v == V - 1) emit_segments(costs.head(false));
        if (v < V - 1) {
          counts[s][CollCall{Dim::kPp, CollOp::kSendRecv, costs.p2p_bytes()}] += 1;
          Instr x{Op::kSend, Dim::kPp, 0, c, step.mb};
          x.a = costs.p2p_time();
          x.name = "send activations";
          prog.push_back(x);
        }
      } else {
        const bool last_mb = ++bwd_seen[c] == M;
        if (v < V - 1) prog.push_back(Instr{Op::kRecv, Dim::kPp, 1, c, step.mb});
        if (v == V - 1) emit_segments(costs.head(true));
        std::vector<int> ag_slot(n, -1);
        auto fsdp_gather = [&](int i) {
          if (!p.fsdp || i < 0 || i >= n) return;
          ag_slot[i] = st.dp_slots++;
          launch(Dim::kDp, ag_slot[i], CollOp::kAllGather,
                 costs.rank_params(first_layer[v] + i).dense * param_bytes, "fsdp all-gather");
        };
        fsdp_gather(n - 1);
        for (int i = n - 1; i >= 0; --i) {
          const int layer = first_layer[v] + i;
          fsdp_gather(i - 1);
          if (p.fsdp) wait(ag_slot[i]);
          emit_segments(costs.layer(layer, true), moe_index[layer], step.mb);
          if (p.fsdp) {
            const int slot = st.dp_slots++;
            launch(Dim::kDp, slot, CollOp::kReduceScatter,
                   costs.rank_params(layer).dense * grad_bytes, "fsdp reduce-scatter");
            if (!in.fw.overlap_grad_reduce) wait(slot);
          }
          // Last micro-batch: a bucket is reduced as soon as all its layers have gradients.
          if (last_mb && !p.fsdp && in.fw.overlap_grad_reduce && !(i == 0 && v == 0) &&
              (i == 0 || layer_bucket[c][i - 1] != layer_bucket[c][i])) {
            Bucket& b = buckets[c][layer_bucket[c][i]];
            b.launched = true;
            launch(Dim::kDp, b.slot_rs, grad_op, b.dense * grad_bytes, "grad reduce");
            launch(Dim::kEdp, b.slot_ers, grad_op, b.expert * grad_bytes, "expert grad reduce");
          }
        }
        if (v == 0) emit_segments(costs.embedding(true));
        // Buckets not launched yet (the embedding's, or a chunk holding only the embedding or
        // the loss) are reduced once the chunk's backward is done.
        if (last_mb && !p.fsdp && in.fw.overlap_grad_reduce) {
          for (Bucket& b : buckets[c]) {
            if (b.launched) continue;
            b.launched = true;
            launch(Dim::kDp, b.slot_rs, grad_op, b.dense * grad_bytes, "grad reduce");
            launch(Dim::kEdp, b.slot_ers, grad_op, b.expert * grad_bytes, "expert grad reduce");
          }
        }
        if (v > 0) {
          counts[s][CollCall{Dim::kPp, CollOp::kSendRecv, costs.p2p_bytes()}] += 1;
          Instr x{Op::kSend, Dim::kPp, 1, c, step.mb};
          x.a = costs.p2p_time();
          x.name = "send gradients";
          prog.push_back(x);
        }
      }
    }
    // Gradient reduction not overlapped: all buckets after the backward pass.
    if (!p.fsdp && !in.fw.overlap_grad_reduce) {
      for (int c = 0; c < p.vp; ++c)
        for (const auto& b : buckets[c]) {
          launch(Dim::kDp, b.slot_rs, grad_op, b.dense * grad_bytes, "grad reduce");
          launch(Dim::kEdp, b.slot_ers, grad_op, b.expert * grad_bytes, "expert grad reduce");
        }
    }
    // Wait for every gradient reduction, then the optimizer step.
    if (p.fsdp) {
      for (int slot = 0; slot < st.dp_slots; ++slot)
        wait(slot);
    } else {
      for (int c = 0; c < p.vp; ++c)
        for (const auto& b : buckets[c]) {
          wait(b.slot_rs);
          wait(b.slot_ers);
        }
    }
    {
      Instr x{Op::kOptimizer};
      x.a = costs.optimizer_time(s);
      x.name = "optimizer";
      prog.push_back(x);
    }
    if (dist && !in.fw.overlap_param_gather) {
      for (int c = 0; c < p.vp; ++c)
        for (const auto& b : buckets[c]) {
          launch(Dim::kDp, b.slot_ag, CollOp::kAllGather, b.dense * param_bytes,
                 "param all-gather");
          launch(Dim::kEdp, b.slot_eag, CollOp::kAllGather, b.expert * param_bytes,
                 "expert param all-gather");
          wait(b.slot_ag);
          wait(b.slot_eag);
        }
    }
  }

  // Units to simulate: all, or (symmetry mode) DP replica 0 of every stage.
  std::vector<int> unit_ids;
  const bool symmetric_ok =
      in.gpu_speed.empty() ||
      std::all_of(in.gpu_speed.begin(), in.gpu_speed.end(), [](double x) { return x == 1.0; });
  const bool symmetry = in.symmetry && symmetric_ok;
  for (int u = 0; u < G.units; ++u)
    if (!symmetry || G.dp_of_unit(u) == 0) unit_ids.push_back(u);
  res.mode = symmetry ? "symmetry (DP replica 0 of every stage)" : "every rank";
  if (in.symmetry && !symmetric_ok)
    res.warnings.push_back("symmetry mode refused: GPU speeds differ, every rank simulated");
  res.units_simulated = static_cast<int>(unit_ids.size());

  Simulator sim;
  Engine engine(G, stages, unit_ids, p.vp, M, in.gpu_speed, costs.p2p_time(), costs.p2p_time(),
                in.want_trace, &in.moe);
  res.events = engine.run(sim);

  // Step time: the last unit to finish its optimizer step.
  int64_t step_ps = 0;
  size_t crit = 0;
  const auto& units = engine.units();
  for (size_t i = 0; i < units.size(); ++i) {
    if (units[i].pc < stages[G.stage_of_unit(engine.unit_ids()[i])].prog.size()) {
      const Instr& at = stages[G.stage_of_unit(engine.unit_ids()[i])].prog[units[i].pc];
      throw InternalError(
          "step simulation deadlocked: unit " + std::to_string(engine.unit_ids()[i]) +
          " stopped at instruction " + std::to_string(units[i].pc) + " (op " +
          std::to_string(static_cast<int>(at.op)) + ", slot " + std::to_string(at.slot) +
          ", chunk " + std::to_string(at.chunk) + ", micro-batch " + std::to_string(at.mb) + ")");
    }
    if (units[i].end > step_ps) {
      step_ps = units[i].end;
      crit = i;
    }
  }
  const double step = static_cast<double>(step_ps) * 1e-12;
  res.step_time_s = step;
  const auto& U = units[crit];
  auto sec = [](int64_t ps) { return static_cast<double>(ps) * 1e-12; };
  res.breakdown.compute = sec(U.t_compute);
  res.breakdown.tp_exposed = sec(U.t_tp);
  res.breakdown.cp_exposed = sec(U.t_cp);
  res.breakdown.ep_exposed = sec(U.t_ep);
  res.breakdown.pp_exposed = sec(U.t_pp);
  res.breakdown.bubble = sec(U.t_bubble);
  res.breakdown.dp_exposed = sec(U.t_dp);
  res.breakdown.optimizer = sec(U.t_opt);

  const double tokens = static_cast<double>(p.global_batch) * p.seq_len;
  res.tokens_per_s_per_gpu = tokens / step / G.world;
  const double flops = model_flops_per_token(m, p.seq_len) * tokens;
  res.model_tflops_per_gpu = flops / step / G.world / 1e12;
  res.peak_tflops = compute.peak_tflops(DType::kBf16);
  res.mfu = res.peak_tflops > 0 ? res.model_tflops_per_gpu / res.peak_tflops : 0;
  res.gpu_busy_fraction = step > 0 ? (res.breakdown.compute + res.breakdown.optimizer) / step : 0;
  // Busy fraction of every simulated unit (all GPUs of a TP group are equally busy).
  res.gpu_busy_min = 1.0;
  res.gpu_busy_max = 0.0;
  double busy_sum = 0;
  for (const auto& u : units) {
    const double f = step > 0 ? sec(u.t_compute + u.t_opt) / step : 0;
    res.gpu_busy_min = std::min(res.gpu_busy_min, f);
    res.gpu_busy_max = std::max(res.gpu_busy_max, f);
    busy_sum += f;
  }
  res.gpu_busy_mean = units.empty() ? 0 : busy_sum / static_cast<double>(units.size());
  const double busy = res.breakdown.compute + res.breakdown.optimizer;
  res.gpu_useful_tflops = busy > 0 ? flops / G.world / busy / 1e12 : 0;
  MemoryOptions mem_opts;
  mem_opts.layers_per_vstage = per_v;
  res.memory = estimate_memory(m, p, topo.system().gpu.hbm.count(), mem_opts);
  if (!res.memory.fits) {
    res.warnings.push_back("does not fit: needs " + std::to_string(res.memory.total / (1 << 20)) +
                           " MiB per GPU, HBM has " +
                           std::to_string(res.memory.capacity / (1 << 20)) + " MiB");
  }
  res.compute_sources = compute.sources();
  for (const auto& w : compute.warnings())
    res.warnings.push_back(w);
  for (const auto& w : costs.warnings())
    res.warnings.push_back(w);

  // Time in collectives per dimension issued by one unit of the critical stage (overlapped or
  // not), and the USE view for links: every collective the step ran, its bytes on each link.
  const int crit_stage = G.stage_of_unit(engine.unit_ids()[crit]);
  for (const auto& [cc, n] : counts[crit_stage])
    res.collective_time_s[dim_name(cc.dim)] += n * comm.time(cc.dim, cc.op, cc.bytes).seconds();
  // The links of the nodes holding each dimension's first group (stage 0): every group of a
  // dimension runs the same pattern on its own links. Each unit issues a collective `n` times
  // per step, so its wave runs n times.
  for (const auto& [cc, n] : counts[0])
    comm.account(cc.dim, cc.op, cc.bytes, n);
  const auto& lb = comm.link_bytes();
  std::vector<LinkUse> links;
  for (uint32_t l = 0; l < lb.size(); ++l) {
    if (lb[l] <= 0) continue;
    const auto& L = topo.links()[l];
    LinkUse lu;
    lu.name = topo.vertex_name(L.from) + " -> " + topo.vertex_name(L.to);
    lu.bytes = lb[l];
    lu.utilization = lb[l] / (L.capacity.bytes_per_second() * step);
    lu.saturation = comm.link_saturated_s()[l] / step;
    links.push_back(lu);
  }
  std::stable_sort(links.begin(), links.end(), [](const LinkUse& a, const LinkUse& b) {
    return a.utilization > b.utilization;
  });
  if (links.size() > 10) links.resize(10);
  res.top_links = std::move(links);
  if (in.want_trace) res.trace = std::move(engine.trace());
  return res;
}

}  // namespace fleetsim
