#include "workload/internal/replay.h"

#include <algorithm>
#include <cmath>

#include "workload/internal/block_builder.h"

namespace fleetsim::step_internal {

Engine::Engine(const Geometry& G, std::vector<Stage>& stages, std::vector<int> units, int vp, int M,
               const std::vector<double>& speed, Time p2p_fwd, Time p2p_bwd, bool trace,
               const MoeLoadTable* moe)
    : G_(G), stages_(stages), vp_(vp), M_(M), p2p_{p2p_fwd, p2p_bwd}, trace_on_(trace), moe_(moe) {
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

uint64_t Engine::run(Simulator& sim) {
  sim.reserve(units_.size() * 2 + 16);
  for (size_t i = 0; i < units_.size(); ++i)
    sim.schedule_at(Time::zero(), this, i);
  return sim.run();
}

void Engine::build_components() {
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

void Engine::record(int u, const char* stream, const char* name, int64_t start, int64_t dur) {
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

int Engine::neighbour(int unit_id, int dir, int chunk, int* peer_chunk) const {
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

void Engine::resume(Simulator& sim, int u, int64_t at) {
  units_[u].blocked = kRunning;
  wake(sim, u, at);
}

void Engine::wake(Simulator& sim, int u, int64_t at) {
  sim.schedule_at(Time::from_ps(at), this, static_cast<uint64_t>(u));
}

void Engine::block(Unit& U, int kind, int64_t now) {
  U.blocked = kind;
  U.block_start = Time::from_ps(now);
}

void Engine::advance(Simulator& sim, int u) {
  Unit& U = units_[u];
  const int id = unit_list_[u];
  const std::vector<Instr>& prog = stages_[G_.stage_of_unit(id)].prog;
  const int64_t now = sim.now().ps();
  while (U.pc < prog.size()) {
    if (!execute(sim, u, prog[U.pc], now)) return;
  }
  U.end = now;
}

bool Engine::issue(Simulator& sim, int u, const Instr& in, int64_t now) {
  Unit& U = units_[u];
  if (in.h <= Time::zero() || U.issued == U.pc) return true;
  U.issued = U.pc;
  record(u, "host", in.name, U.host, in.h.ps());
  U.host += in.h.ps();
  if (U.host <= now) return true;
  U.t_host += U.host - now;
  wake(sim, u, U.host);
  return false;
}

bool Engine::execute(Simulator& sim, int u, const Instr& in, int64_t now) {
  switch (in.op) {
    case Op::kCompute:
      return exec_compute(sim, u, in, now);
    case Op::kOptimizer:
      return issue(sim, u, in, now) && exec_optimizer(sim, u, in, now);
    case Op::kSend:
      return exec_send(sim, u, in, now);
    case Op::kRecv:
      return issue(sim, u, in, now) && exec_recv(sim, u, in, now);
    case Op::kSync:
      return issue(sim, u, in, now) && exec_sync(sim, u, in, now);
    case Op::kLaunch:
      return exec_launch(sim, u, in, now);
    case Op::kWait:
      return exec_wait(sim, u, in, now);
    case Op::kHostSync:
      return exec_host_sync(u, in, now);
  }
  return false;
}

bool Engine::exec_compute(Simulator& sim, int u, const Instr& in, int64_t now) {
  Unit& U = units_[u];
  const double load = in.moe >= 0 ? moe_factor(u, in.moe, in.mb) : 1.0;
  const int64_t c =
      static_cast<int64_t>(std::llround(static_cast<double>(in.a.ps()) * load / U.speed));
  const double s = load / U.speed;
  const int64_t span =
      s == 1.0 || in.span < 0
          ? in.d.ps()
          : host_span(stages_[G_.stage_of_unit(unit_list_[u])].spans[in.span], s).ps();
  const int64_t gpu_end = now + c + in.b.ps();
  const int64_t end = std::max(gpu_end, U.host + span);
  U.t_compute += c;
  U.t_tp += in.b.ps();
  U.t_host += end - gpu_end;
  record(u, "host", in.name, U.host, in.h.ps());
  U.host += in.h.ps();
  record(u, "compute", in.name, now, end - now);
  ++U.pc;
  wake(sim, u, end);
  return false;
}

bool Engine::exec_host_sync(int u, const Instr& in, int64_t now) {
  Unit& U = units_[u];
  record(u, "host", "wait for GPU", U.host, now - U.host);
  U.host = std::max(U.host, now);
  record(u, "host", in.name, U.host, in.a.ps());
  U.host += in.a.ps();
  ++U.pc;
  return true;
}

bool Engine::exec_optimizer(Simulator& sim, int u, const Instr& in, int64_t now) {
  Unit& U = units_[u];
  const int64_t dur = static_cast<int64_t>(std::llround(static_cast<double>(in.a.ps()) / U.speed));
  U.t_opt += dur;
  record(u, "compute", in.name, now, dur);
  ++U.pc;
  wake(sim, u, now + dur);
  return false;
}

bool Engine::exec_send(Simulator& sim, int u, const Instr& in, int64_t now) {
  Unit& U = units_[u];
  int pc_chunk = 0;
  const int peer = neighbour(unit_list_[u], in.dir, in.chunk, &pc_chunk);
  const int pi = index_[peer];
  // Posted by the host, started once the stream has reached it.
  record(u, "host", in.name, U.host, in.h.ps());
  U.host += in.h.ps();
  const int64_t start = std::max(now, U.host);
  const int64_t arrive = start + in.a.ps();
  record(u, "pp", in.name, start, in.a.ps());
  if (pi >= 0) {
    Unit& P = units_[pi];
    P.arrivals[arr_index(in.dir, pc_chunk, in.mb)] = arrive;
    if (P.blocked == kOnRecv) {
      const Instr& w = stages_[G_.stage_of_unit(peer)].prog[P.pc];
      if (w.op == Op::kRecv && w.dir == in.dir && w.chunk == pc_chunk && w.mb == in.mb) {
        finish_recv(P, arrive, in.a.ps());
        ++P.pc;
        resume(sim, pi, std::max(arrive, P.block_start.ps()));
      }
    }
  }
  ++U.pc;
  return true;
}

bool Engine::exec_recv(Simulator& sim, int u, const Instr& in, int64_t now) {
  Unit& U = units_[u];
  const int64_t t = U.arrivals[arr_index(in.dir, in.chunk, in.mb)];
  if (t < 0) {  // not sent yet: the sender resumes this unit
    block(U, kOnRecv, now);
    return false;
  }
  ++U.pc;
  if (t <= now) return true;
  U.block_start = Time::from_ps(now);
  finish_recv(U, t, p2p_[in.dir].ps());
  wake(sim, u, t);
  return false;
}

bool Engine::exec_sync(Simulator& sim, int u, const Instr& in, int64_t now) {
  Unit& U = units_[u];
  const int d = static_cast<int>(in.dim);
  const int c = comp_[d][unit_list_[u]];
  Barrier& B = barriers_[d][c];
  B.arrived++;
  B.max_time = std::max(B.max_time, now);
  B.waiting.push_back(u);
  block(U, kOnSync, now);
  ++U.pc;
  if (B.arrived < comp_size_[d][c]) return false;
  // The last member arrived: the collective runs from then on, and every member resumes when
  // it ends.
  const int64_t dur =
      in.moe >= 0 && !moe_->empty()
          ? static_cast<int64_t>(std::llround(static_cast<double>(in.a.ps()) *
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
  return false;
}

bool Engine::exec_launch(Simulator& sim, int u, const Instr& in, int64_t now) {
  const int d = static_cast<int>(in.dim);
  const int c = comp_[d][unit_list_[u]];
  auto& pend = launches_[d][c];
  auto& L = pend[in.slot];
  L.arrived++;
  Unit& U = units_[u];
  record(u, "host", in.name, U.host, in.h.ps());
  U.host += in.h.ps();
  L.max_time = std::max(L.max_time, std::max(now, U.host));
  if (L.arrived == comp_size_[d][c]) {
    int64_t& free = stream_free_[d][c];
    const int64_t start = std::max(free, L.max_time);
    const int64_t end = start + in.a.ps();
    free = end;
    complete_launch(sim, d, c, in, start, end);
    pend.erase(in.slot);
  }
  ++units_[u].pc;
  return true;
}

// Every member of component c learns when DP-stream collective `in` ends; members waiting for it
// resume then.
void Engine::complete_launch(Simulator& sim, int d, int c, const Instr& in, int64_t start,
                             int64_t end) {
  for (int x : members(d, c)) {
    Unit& X = units_[x];
    X.slot_done[in.slot] = end;
    record(x, "dp", in.name, start, in.a.ps());
    if (X.blocked == kOnWait) {
      const Instr& w = stages_[G_.stage_of_unit(unit_list_[x])].prog[X.pc];
      if (w.op == Op::kWait && w.slot == in.slot) {
        X.t_dp += std::max<int64_t>(0, end - X.block_start.ps());
        ++X.pc;
        resume(sim, x, std::max(end, X.block_start.ps()));
      }
    }
  }
}

bool Engine::exec_wait(Simulator& sim, int u, const Instr& in, int64_t now) {
  Unit& U = units_[u];
  const int64_t t = U.slot_done[in.slot];
  if (t < 0) {  // not launched by every member yet: complete_launch resumes this unit
    block(U, kOnWait, now);
    return false;
  }
  ++U.pc;
  if (t <= now) return true;
  U.t_dp += t - now;
  wake(sim, u, t);
  return false;
}

void Engine::finish_recv(Unit& U, int64_t arrive, int64_t transfer) {
  const int64_t waited = std::max<int64_t>(0, arrive - U.block_start.ps());
  const int64_t pp_part = std::min(waited, transfer);
  U.t_pp += pp_part;
  U.t_bubble += waited - pp_part;
}

const std::vector<int>& Engine::members(int d, int c) {
  auto key = std::make_pair(d, c);
  auto it = members_.find(key);
  if (it != members_.end()) return it->second;
  std::vector<int> m;
  for (size_t i = 0; i < unit_list_.size(); ++i)
    if (comp_[d][unit_list_[i]] == c) m.push_back(static_cast<int>(i));
  return members_.emplace(key, std::move(m)).first->second;
}

double Engine::moe_factor(int u, int layer, int mb) const {
  if (moe_->empty()) return 1.0;
  const int id = unit_list_[u];
  double f = 0;
  for (int t = 0; t < G_.tp; ++t)
    f = std::max(f, static_cast<double>(moe_->rank(layer, mb, G_.ep_rank_of(id * G_.tp + t))));
  return f;
}

}  // namespace fleetsim::step_internal
