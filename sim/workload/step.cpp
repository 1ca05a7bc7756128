// simulate_step: the driver of the step simulator (workload/step.h). It builds the pieces in
// sim/workload/internal/ in order: the rank placement, the communication model, the layer costs,
// the pipeline split, one instruction program per stage, then replays them and turns the
// critical unit's accounting into the step result.
#include "workload/step.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "core/error.h"
#include "core/simulator.h"
#include "workload/internal/comm_model.h"
#include "workload/internal/placement.h"
#include "workload/internal/program.h"
#include "workload/internal/replay.h"
#include "workload/internal/schedule.h"
#include "workload/layer_costs.h"

namespace fleetsim {

bool parse_cuda_graph_scope(const std::string& name, unsigned* bit) {
  static const std::pair<const char*, unsigned> kNames[] = {{"attn", kGraphAttn},
                                                            {"mlp", kGraphMlp},
                                                            {"moe_router", kGraphMoeRouter},
                                                            {"moe_preprocess", kGraphMoePreprocess},
                                                            {"mamba", kGraphMamba}};
  for (const auto& n : kNames) {
    if (name == n.first) {
      *bit = n.second;
      return true;
    }
  }
  return false;
}

using step_internal::CollCounts;
using step_internal::CommModel;
using step_internal::Engine;
using step_internal::Geometry;
using step_internal::Instr;
using step_internal::Stage;

namespace {

double sec(int64_t ps) {
  return static_cast<double>(ps) * 1e-12;
}

std::string us2(Time t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", t.us());
  return buf;
}

// Units to simulate: all, or (symmetry mode) DP replica 0 of every stage; sets the mode.
std::vector<int> units_to_simulate(const StepInput& in, const Geometry& G, StepResult* res) {
  std::vector<int> unit_ids;
  const bool symmetric_ok =
      in.gpu_speed.empty() ||
      std::all_of(in.gpu_speed.begin(), in.gpu_speed.end(), [](double x) { return x == 1.0; });
  const bool symmetry = in.symmetry && symmetric_ok;
  for (int u = 0; u < G.units; ++u)
    if (!symmetry || G.dp_of_unit(u) == 0) unit_ids.push_back(u);
  res->mode = symmetry ? "symmetry (DP replica 0 of every stage)" : "every rank";
  if (in.symmetry && !symmetric_ok)
    res->warnings.push_back("symmetry mode refused: GPU speeds differ, every rank simulated");
  res->units_simulated = static_cast<int>(unit_ids.size());
  return unit_ids;
}

// The unit that finished its optimizer step last (index into engine.units()); throws
// InternalError when a unit stopped before the end of its program.
size_t critical_unit(const Engine& engine, const std::vector<Stage>& stages, const Geometry& G) {
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
  return crit;
}

void fill_breakdown(const Engine::Unit& U, TimeBreakdown* b) {
  b->compute = sec(U.t_compute);
  b->tp_exposed = sec(U.t_tp);
  b->cp_exposed = sec(U.t_cp);
  b->ep_exposed = sec(U.t_ep);
  b->pp_exposed = sec(U.t_pp);
  b->bubble = sec(U.t_bubble);
  b->dp_exposed = sec(U.t_dp);
  b->optimizer = sec(U.t_opt);
  b->host_exposed = sec(U.t_host);
}

// The framework options of the run: the host costs of the topology's host CPU class.
FrameworkOptions framework_for(const StepInput& in, const Topology& topo, StepResult* res) {
  FrameworkOptions fw = in.fw;
  const NodeSpec& node = topo.system().node;
  if (!fw.host_by_cpu.empty()) {
    std::string cls = node.host_cpu_class;
    if (cls.empty()) {
      cls = "x86";
      res->warnings.push_back("topology " + topo.system().name +
                              " does not give node.host_cpu_class: x86 host costs assumed");
      res->compute_sources.push_back("warning: topology " + topo.system().name +
                                     " has no node.host_cpu_class; host costs of x86 assumed");
    }
    auto it = fw.host_by_cpu.find(cls);
    if (it == fw.host_by_cpu.end())
      throw InputError(topo.system().file, "/node/host_cpu_class",
                       "no host costs for host CPU class '" + cls + "'");
    fw.host = it->second;
  }
  if (fw.host.op > Time::zero() || fw.host.module > Time::zero())
    res->compute_sources.push_back(
        "host costs: " + (fw.host.cpu.empty() ? std::string("given") : fw.host.cpu) + " (" +
        (fw.host.source.empty() ? std::string("StepInput") : fw.host.source) + "), op " +
        us2(fw.host.op) + " us, module " + us2(fw.host.module) + " us, launch " +
        us2(fw.host.launch) + " us, d2h " + us2(fw.host.d2h) + " us");
  if (fw.cuda_graphs == CudaGraphs::kFullIteration && is_moe(in.model))
    res->warnings.push_back(
        "full_iteration CUDA graphs with the deepep dispatcher: the sync-free (non-blocking) "
        "HybridEP mode is assumed, no token-count sync modelled");
  return fw;
}

// Throughput, MFU and the USE view of the GPUs, from the step time and the breakdown.
void fill_rates(const StepInput& in, const ComputeModel& compute, int world,
                const std::vector<Engine::Unit>& units, StepResult* res) {
  const ParallelConfig& p = in.par;
  const double step = res->step_time_s;
  const double tokens = static_cast<double>(p.global_batch) * p.seq_len;
  res->tokens_per_s_per_gpu = tokens / step / world;
  const double flops = task_flops_per_token(in.model, p.seq_len, FlopConvention{}, p.task) * tokens;
  res->model_tflops_per_gpu = flops / step / world / 1e12;
  res->peak_tflops = compute.peak_tflops(DType::kBf16);
  res->mfu = res->peak_tflops > 0 ? res->model_tflops_per_gpu / res->peak_tflops : 0;
  const double busy = res->breakdown.compute + res->breakdown.optimizer;
  res->gpu_busy_fraction = step > 0 ? busy / step : 0;
  res->launch_bound_fraction = step > 0 ? res->breakdown.host_exposed / step : 0;
  // Busy fraction of every simulated unit (all GPUs of a TP group are equally busy).
  res->gpu_busy_min = 1.0;
  res->gpu_busy_max = 0.0;
  double busy_sum = 0;
  for (const auto& u : units) {
    const double f = step > 0 ? sec(u.t_compute + u.t_opt) / step : 0;
    res->gpu_busy_min = std::min(res->gpu_busy_min, f);
    res->gpu_busy_max = std::max(res->gpu_busy_max, f);
    busy_sum += f;
  }
  res->gpu_busy_mean = units.empty() ? 0 : busy_sum / static_cast<double>(units.size());
  res->gpu_useful_tflops = busy > 0 ? flops / world / busy / 1e12 : 0;
}

// Time in collectives per dimension issued by one unit of the critical stage (overlapped or
// not), and the USE view for links: every collective the step ran, its bytes on each link.
void fill_collectives(const std::vector<CollCounts>& counts, int crit_stage, const Topology& topo,
                      CommModel& comm, StepResult* res) {
  const double step = res->step_time_s;
  for (const auto& [cc, n] : counts[crit_stage]) {
    const Time t = cc.time > Time::zero() ? cc.time : comm.time(cc.dim, cc.op, cc.bytes);
    res->collective_time_s[dim_name(cc.dim)] += n * t.seconds();
  }
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
  res->top_links = std::move(links);
}

// Memory need per GPU, and the warnings of the memory, compute and layer-cost models.
void fill_memory_and_warnings(const StepInput& in, const Topology& topo,
                              const ComputeModel& compute, const LayerCostModel& costs,
                              const std::vector<int>& per_v, StepResult* res) {
  MemoryOptions mem_opts = in.fw.memory;
  if (mem_opts.layers_per_vstage.empty()) mem_opts.layers_per_vstage = per_v;
  mem_opts.non_tn_fp8_gemm = gpu_non_tn_fp8_gemm(topo.system().gpu.model);
  res->memory = estimate_memory(in.model, in.par, topo.system().gpu.hbm.count(), mem_opts);
  if (!res->memory.fits) {
    const int64_t need = res->memory.reserved + res->memory.device_overhead;
    res->warnings.push_back("does not fit: needs " + std::to_string(need / (1 << 20)) +
                            " MiB per GPU, HBM has " +
                            std::to_string(res->memory.capacity / (1 << 20)) + " MiB");
  }
  for (const auto& s : compute.sources())
    res->compute_sources.push_back(s);
  // What the model definition itself says is left out (workloads/README.md "unmodelled"), so
  // that a figure can be traced to what it does not count.
  for (const UnmodelledFeature& u : in.model.unmodelled)
    if (u.impact == "small")
      res->compute_sources.push_back("model " + in.model.name + ": " + u.feature +
                                     " not modelled (impact small): " + u.note);
  if (std::count(in.model.blocks.begin(), in.model.blocks.end(), BlockKind::kMamba) > 0) {
    bool fallback = false;
    res->compute_sources.push_back(compute.ssd_source(&fallback));
    if (fallback) res->warnings.push_back(res->compute_sources.back());
  }
  if (std::count(in.model.blocks.begin(), in.model.blocks.end(), BlockKind::kGdn) > 0) {
    bool fallback = false;
    res->compute_sources.push_back(compute.gdn_source(&fallback));
    if (fallback) res->warnings.push_back(res->compute_sources.back());
    if (in.model.gdn.kda) {  // documented fallback: docs/models.md "Kimi Delta Attention"
      res->compute_sources.push_back(
          "Kimi Delta Attention: no chunk_kda rows in calibration/kernels/ssm.csv; FLA's "
          "chunk_kda timed as the Gated DeltaNet chunk kernel of the same shape (the per-channel "
          "decay not costed)");
      res->warnings.push_back(res->compute_sources.back());
    }
  }
  if (is_sparse_attention(in.model)) {
    bool fallback = false;
    res->compute_sources.push_back(compute.sparse_mla_source(&fallback));
    if (fallback) res->warnings.push_back(res->compute_sources.back());
  }
  if (is_moe(in.model) && !compute.moe_ops_warning().empty())
    res->warnings.push_back(compute.moe_ops_warning());
  for (const auto& w : compute.warnings())
    res->warnings.push_back(w);
  for (const auto& w : costs.warnings())
    res->warnings.push_back(w);
}

}  // namespace

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

  const FrameworkOptions fw = framework_for(in, topo, &res);
  CommModel comm(topo, cparams, G, in.seed, in.ranks_per_domain);
  LayerCostModel costs(m, p, fw, compute,
                       [&](Dim d, CollOp op, double bytes) { return comm.time(d, op, bytes); });
  if (is_moe(m)) {
    costs.set_ep_dispatch([&](double tokens, double bytes) {
      return comm.ep_dispatch(tokens, bytes, m.moe.experts, m.moe.top_k, in.fw.moe_dispatcher,
                              in.fw.moe_dispatcher_sms);
    });
  }

  // The programs: layers per virtual stage, then one instruction list per pipeline stage.
  // A recipe's pipeline layout (MemoryOptions::layers_per_vstage: Megatron-Bridge's DeepSeek-V3
  // layouts, Llama 3.1 405B's embedding / loss accounting) places the layers of the step as it
  // places those of the memory estimate.
  const std::vector<int> per_v =
      static_cast<int>(fw.memory.layers_per_vstage.size()) == V
          ? fw.memory.layers_per_vstage
          : step_internal::layers_per_vstage(m, fw.pipeline_split, V, costs, &res.warnings);
  std::vector<int> first_layer(V, 0);
  for (int v = 1; v < V; ++v)
    first_layer[v] = first_layer[v - 1] + per_v[v - 1];
  const std::vector<int> moe_index = step_internal::moe_layer_index(m, in.moe, M, p.ep);
  const step_internal::ProgramInput prog_in{m,     p,           fw,        costs, comm,
                                            per_v, first_layer, moe_index, M};
  std::vector<Stage> stages;
  std::vector<CollCounts> counts(p.pp);  // collectives issued per unit of a stage
  for (int s = 0; s < p.pp; ++s)
    stages.push_back(step_internal::build_stage_program(prog_in, s, &counts[s]));

  // The replay.
  const std::vector<int> unit_ids = units_to_simulate(in, G, &res);
  Simulator sim;
  Engine engine(G, stages, unit_ids, p.vp, M, in.gpu_speed, costs.p2p_time(), costs.p2p_time(),
                in.want_trace, &in.moe);
  res.events = engine.run(sim);

  // The result: the critical unit's time and breakdown, rates, memory, collectives, links.
  const size_t crit = critical_unit(engine, stages, G);
  const Engine::Unit& U = engine.units()[crit];
  res.step_time_s = sec(U.end);
  fill_breakdown(U, &res.breakdown);
  fill_rates(in, compute, G.world, engine.units(), &res);
  fill_memory_and_warnings(in, topo, compute, costs, per_v, &res);
  fill_collectives(counts, G.stage_of_unit(engine.unit_ids()[crit]), topo, comm, &res);
  if (in.want_trace) res.trace = std::move(engine.trace());
  return res;
}

}  // namespace fleetsim
