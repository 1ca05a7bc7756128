#include "workload/step.h"

#include <algorithm>
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

using step_internal::balanced_split;
using step_internal::CommModel;
using step_internal::Engine;
using step_internal::Geometry;
using step_internal::Instr;
using step_internal::Op;
using step_internal::schedule_order;
using step_internal::ScheduleStep;
using step_internal::split_layers;
using step_internal::Stage;

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