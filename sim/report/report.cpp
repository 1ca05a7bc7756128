#include "report/report.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace fleetsim {
namespace {
using ojson = nlohmann::ordered_json;

// Rounds to `digits` significant decimals so output does not depend on the last ulp.
double fixed(double v, int decimals) {
  const double k = std::pow(10.0, decimals);
  return std::round(v * k) / k;
}
}  // namespace

std::string collective_report_json(const Scenario& s, const Topology& topo,
                                   const std::vector<CollectiveResult>& results) {
  ojson j;
  j["fleetsim_report_version"] = 1;
  j["scenario"] = {{"name", s.name}, {"file", s.file}, {"seed", s.seed}};
  j["cluster"] = {{"system", s.system.name},
                  {"count", s.count},
                  {"unit", s.system.unit_name},
                  {"nodes", topo.nodes()},
                  {"gpus", topo.gpus()},
                  {"nvlink_domains", topo.domains()},
                  {"gpus_per_domain", topo.gpus_per_domain()},
                  {"fabric",
                   {{"tiers", s.fabric.tiers},
                    {"rail_optimized", s.fabric.rail_optimized},
                    {"oversubscription", s.fabric.oversubscription},
                    {"routing", to_string(s.fabric.routing)},
                    {"leaves", topo.leaves()},
                    {"planes", topo.planes()}}}};
  const CollectiveWorkload& w = *s.collective;
  j["workload"] = {{"type", "collective"},
                   {"operation", to_string(w.op)},
                   {"group_gpus", results.empty() ? 0 : results.front().ranks},
                   {"algorithm", to_string(w.algorithm)},
                   {"dtype", w.dtype}};
  j["calibration"] = {
      {"source", s.collective_params.source},
      {"eta_ring", s.collective_params.eta_ring},
      {"eta_nvls", s.collective_params.eta_nvls},
      {"eta_a2a", s.collective_params.eta_a2a},
      {"base_latency_us", fixed(s.collective_params.base_latency.us(), 4)},
      {"nvlink_step_latency_us", fixed(s.collective_params.nvlink_step_latency.us(), 4)},
      {"net_step_latency_us", fixed(s.collective_params.net_step_latency.us(), 4)}};
  ojson rows = ojson::array();
  for (const auto& r : results) {
    rows.push_back({{"size_bytes", r.size.count()},
                    {"count", r.size.count() / w.dtype_bytes},
                    {"algorithm", to_string(r.algorithm)},
                    {"time_us", fixed(r.time.us(), 3)},
                    {"bandwidth_time_us", fixed(r.bandwidth_time.us(), 3)},
                    {"algbw_gbps", fixed(r.algbw_gbps, 3)},
                    {"busbw_gbps", fixed(r.busbw_gbps, 3)},
                    {"flows", r.flows}});
  }
  j["results"] = rows;
  return j.dump(2) + "\n";
}

std::string validation_json(const ValidationReport& rep) {
  ojson j;
  ojson rows = ojson::array();
  for (const auto& v : rep.rows) {
    ojson r = {{"line", v.line}, {"hardware", v.hardware}, {"num_gpus", v.num_gpus}};
    r[v.training ? "model" : "operation"] = v.model;
    r["metric"] = v.metric;
    if (v.size.count() > 0) r["size_bytes"] = v.size.count();
    if (v.skipped) {
      r["skipped"] = true;
      r["reason"] = v.reason;
    } else {
      r["system"] = v.system;
      if (v.training) {
        r["configuration"] = v.config;
        if (v.breakdown.memory_checked) {
          r["fits"] = v.breakdown.memory_fits;
          if (v.breakdown.layout_infeasible) {
            r["layout_infeasible"] = true;
            r["memory_floor_gib"] = fixed(v.breakdown.memory_floor_gib, 3);
          }
          r["memory_allocated_gib"] = fixed(v.breakdown.memory_gib, 3);
          r["memory_need_gib"] = fixed(v.breakdown.memory_need_gib, 3);
          r["hbm_gib"] = fixed(v.breakdown.hbm_gib, 3);
          r["layout_source"] = v.layout_source;
          if (!v.recipe_config.empty()) {
            r["recipe"] = v.recipe_config;
            r["recipe_differences"] = v.recipe_differences;
          }
        }
      } else {
        r["algorithm"] = v.algorithm;
        r["small_message"] = v.small;
      }
      r["measured"] = v.measured;
      r["predicted"] = fixed(v.predicted, 3);
      r["error_pct"] = fixed(v.error_pct, 2);
    }
    rows.push_back(r);
  }
  j["reference"] = rep.reference;
  j["rows"] = rows;
  j["mape_pct"] = fixed(rep.mape_pct, 2);
  j["n_rows"] = rep.n_rows;
  j["mape_small_pct"] = fixed(rep.mape_small_pct, 2);
  j["n_small"] = rep.n_small;
  j["n_skipped"] = rep.n_skipped;
  j["max_abs_error_pct"] = fixed(rep.max_abs_error_pct, 2);
  j["n_not_fitting"] = rep.n_not_fitting;
  j["n_memory_checked"] = rep.n_memory_checked;
  j["n_layout_infeasible"] = rep.n_layout_infeasible;
  j["n_layout_differs"] = rep.n_layout_differs;
  j["n_recipe_layout"] = rep.n_recipe_layout;
  ojson by_hw = ojson::object();
  for (const auto& [hw, e] : rep.mape_by_hardware)
    by_hw[hw] = {{"mape_pct", fixed(e.first, 2)}, {"n_rows", e.second}};
  j["mape_by_hardware"] = by_hw;
  if (!rep.memory_by_source.empty()) {
    ojson by_src = ojson::object();
    for (const auto& [src, e] : rep.memory_by_source)
      by_src[src] = {
          {"mape_pct", fixed(e.mape_pct, 2)}, {"bias_pct", fixed(e.bias_pct, 2)}, {"n_rows", e.n}};
    j["memory_by_source"] = by_src;
  }
  return j.dump(2) + "\n";
}

namespace {
ojson memory_obj(const MemoryBreakdown& m) {
  auto gib = [](int64_t b) { return fixed(static_cast<double>(b) / (1024.0 * 1024 * 1024), 4); };
  return {{"weights_gib", gib(m.weights)},
          {"gradients_gib", gib(m.gradients)},
          {"optimizer_gib", gib(m.optimizer)},
          {"master_weights_gib", gib(m.master_weights)},
          {"activations_gib", gib(m.activations)},
          {"working_gib", gib(m.working)},
          {"comm_buffers_gib", gib(m.comm_buffers)},
          {"total_gib", gib(m.total)},
          {"reserved_gib", gib(m.reserved)},
          {"device_overhead_gib", gib(m.device_overhead)},
          {"capacity_gib", gib(m.capacity)},
          {"fits", m.fits},
          {"stage", m.stage},
          {"layers_on_stage", m.layers_on_stage},
          {"in_flight_microbatches", m.in_flight_microbatches},
          {"peak",
           {{"forward_microbatch", m.peak_forward_microbatch},
            {"forward_chunk", m.peak_forward_chunk},
            {"backward_microbatch", m.peak_backward_microbatch},
            {"backward_chunk", m.peak_backward_chunk},
            {"in_loss", m.peak_in_loss}}},
          {"params_on_rank", m.params_on_rank}};
}
}  // namespace

std::string memory_json(const MemoryBreakdown& m) {
  return memory_obj(m).dump(2) + "\n";
}

namespace {
// The "run" object: run-level Monte Carlo summary (docs/reports.md, "The run object").
ojson run_obj(const Scenario& s, const RunOutcome& o) {
  const RunSpec& spec = *s.run;
  const RunSummary& m = o.summary;
  ojson lost = ojson::object();
  for (int c = 0; c < kLostCauses; ++c)
    lost[to_string(static_cast<LostCause>(c))] = fixed(m.lost_mean_s[c] / 3600.0, 4);
  ojson failures = ojson::object();
  for (size_t c = 0; c < m.failure_components.size(); ++c)
    failures[m.failure_components[c]] = fixed(m.failures_mean[c], 3);
  ojson slow = ojson::object();
  for (const auto& [level, t] : o.steps.slow_gpu_s)
    slow[std::to_string(level * 5) + "%"] = fixed(t, 6);
  ojson j;
  j["replicas"] = m.replicas;
  j["failure_profile"] = spec.failures.name;
  // null where undefined: no failure rate (MTBF), no duration limit, no replica at the budget.
  j["job_mtbf_h"] = m.job_mtbf_h > 0 ? ojson(fixed(m.job_mtbf_h, 4)) : ojson(nullptr);
  const CheckpointCosts ck = checkpoint_costs(spec.checkpoint);
  RunSpec auto_spec = spec;
  auto_spec.checkpoint.interval_kind = IntervalKind::kAuto;
  const double auto_s = resolved_interval_s(auto_spec, o.job, o.steps);
  j["checkpoint"] = {
      {"mode", to_string(spec.checkpoint.mode)},
      {"interval_min", fixed(m.interval_s / 60.0, 3)},
      {"auto_interval_min", auto_s > 0 ? ojson(fixed(auto_s / 60.0, 3)) : ojson(nullptr)},
      {"blocking_s", fixed(ck.blocking_s, 3)},
      {"upload_s", fixed(ck.upload_s, 3)},
      {"size_gb", fixed(spec.checkpoint.size_bytes / 1e9, 3)},
      {"taken_mean", fixed(m.checkpoints_mean, 2)},
      {"lost_mean", fixed(m.checkpoints_lost_mean, 3)}};
  j["step_time_s"] = {{"healthy", fixed(m.healthy_step_s, 6)}, {"slowest_gpu_at", slow}};
  j["ettr"] = {{"mean", fixed(m.ettr_mean, 4)},
               {"p10", fixed(m.ettr_p10, 4)},
               {"p50", fixed(m.ettr_p50, 4)},
               {"p90", fixed(m.ettr_p90, 4)}};
  j["goodput_tokens_per_s"] = fixed(m.goodput_tokens_per_s, 1);
  j["healthy_tokens_per_s"] = fixed(m.tokens_per_s, 1);
  j["token_budget"] = spec.token_budget;
  j["duration_days"] =
      spec.duration_s > 0 ? ojson(fixed(spec.duration_s / 86400.0, 4)) : ojson(nullptr);
  j["reached_budget"] = m.reached_budget;
  if (m.reached_budget > 0) {
    j["time_to_budget_days"] = {{"p50", fixed(m.time_to_budget_p50_s / 86400.0, 4)},
                                {"p90", fixed(m.time_to_budget_p90_s / 86400.0, 4)}};
  } else {
    j["time_to_budget_days"] = {{"p50", nullptr}, {"p90", nullptr}};
  }
  j["wall_days_mean"] = fixed(m.wall_mean_s / 86400.0, 4);
  j["lost_hours"] = lost;
  j["failures"] = failures;
  j["interruptions_mean"] = fixed(m.interruptions_mean, 3);
  j["planned_interruptions_mean"] = fixed(m.planned_mean, 3);
  j["gray_failures"] = {{"onsets_mean", fixed(m.gray_onsets_mean, 3)},
                        {"detected_mean", fixed(m.gray_detected_mean, 3)}};
  j["spares"] = {{"pool", spec.recovery.spares}, {"used_mean", fixed(m.spares_used_mean, 3)}};
  return j;
}
}  // namespace

namespace {

// The "workload" object of a training report: the model and the configuration simulated.
ojson workload_obj(const TrainingWorkload& w, const StepResult& r) {
  const ParallelConfig& p = w.par;
  return {{"type", "training"},
          {"model", w.model.name},
          {"model_ref", w.model_ref},
          {"parameters", total_params(w.model)},
          {"active_parameters", active_params(w.model)},
          {"tp", p.tp},
          {"pp", p.pp},
          {"cp", p.cp},
          {"dp", p.dp},
          {"vp", p.vp},
          {"ep", p.ep},
          {"etp", p.etp},
          {"sequence_parallel", p.sequence_parallel},
          {"distributed_optimizer", p.distributed_optimizer},
          {"fsdp", p.fsdp},
          {"global_batch", p.global_batch},
          {"micro_batch", p.micro_batch},
          {"seq_len", p.seq_len},
          {"micro_batches", r.micro_batches},
          {"schedule", to_string(p.schedule())},
          {"recompute", to_string(p.recompute)},
          {"precision", to_string(p.precision)}};
}

// The "use" object: GPU busy fractions and the most used links (the USE view).
ojson use_obj(const StepResult& r) {
  ojson links = ojson::array();
  for (const auto& l : r.top_links)
    links.push_back({{"link", l.name},
                     {"utilization", fixed(l.utilization, 4)},
                     {"saturation", fixed(l.saturation, 4)},
                     {"bytes", fixed(l.bytes, 0)}});
  return {{"gpu_busy_fraction", fixed(r.gpu_busy_fraction, 4)},
          {"gpu_busy_fraction_min", fixed(r.gpu_busy_min, 4)},
          {"gpu_busy_fraction_mean", fixed(r.gpu_busy_mean, 4)},
          {"gpu_busy_fraction_max", fixed(r.gpu_busy_max, 4)},
          {"gpu_useful_tflops_when_busy", fixed(r.gpu_useful_tflops, 2)},
          {"launch_bound_fraction", fixed(r.launch_bound_fraction, 4)},
          {"top_links", links}};
}

// The "moe" object: routing model, load statistics, slowdown against balanced routing.
ojson moe_obj(const MoeOutcome& moe) {
  const MoeSummary& x = moe.summary;
  ojson per_layer = ojson::array();
  for (size_t l = 0; l < x.expert_max_over_mean.size(); ++l)
    per_layer.push_back({{"expert_max_over_mean", fixed(x.expert_max_over_mean[l], 4)},
                         {"rank_max_over_mean", fixed(x.rank_max_over_mean[l], 4)}});
  ojson heat = ojson::array();
  for (const auto& row : x.heatmap) {
    ojson rr = ojson::array();
    for (double v : row)
      rr.push_back(fixed(v, 1));
    heat.push_back(rr);
  }
  ojson ranks = ojson::array();
  for (double v : x.rank_tokens)
    ranks.push_back(fixed(v, 1));
  ojson traj = ojson::array();
  for (double v : x.bias_trajectory)
    traj.push_back(fixed(v, 4));
  return {{"routing", to_string(moe.spec.kind)},
          {"alpha", moe.spec.alpha},
          {"s", moe.spec.s},
          {"placement", to_string(moe.spec.placement)},
          {"redundant_experts", moe.spec.redundant_experts},
          {"capacity_factor", moe.spec.capacity_factor},
          {"expert_max_over_mean", fixed(x.expert_max_over_mean_avg, 4)},
          {"maxvio", fixed(x.maxvio, 4)},
          {"rank_max_over_mean", fixed(x.rank_max_over_mean_avg, 4)},
          {"rank_max_over_mean_worst", fixed(x.rank_max_over_mean_worst, 4)},
          {"dropped_fraction", fixed(x.dropped_fraction, 6)},
          {"balanced_step_time_s", fixed(moe.balanced_step_s, 6)},
          {"slowdown_pct", fixed(moe.slowdown_pct, 3)},
          {"all_to_all_share", fixed(moe.all_to_all_share, 4)},
          {"eplb_extra_gib", fixed(moe.eplb_extra_bytes / (1024.0 * 1024 * 1024), 4)},
          {"rank_tokens", ranks},
          {"per_layer", per_layer},
          {"heatmap_layer_by_rank", heat},
          {"bias_trajectory", traj}};
}

}  // namespace

std::string training_report_json(const Scenario& s, const Topology& topo, const StepResult& r,
                                 const MoeOutcome* moe, const RunOutcome* run) {
  const TrainingWorkload& w = *s.training;
  ojson j;
  j["fleetsim_report_version"] = 1;
  j["scenario"] = {{"name", s.name}, {"file", s.file}, {"seed", s.seed}};
  j["cluster"] = {{"system", s.system.name},
                  {"count", s.count},
                  {"unit", s.system.unit_name},
                  {"nodes", topo.nodes()},
                  {"gpus", topo.gpus()},
                  {"gpus_used", w.gpus},
                  {"nvlink_domains", topo.domains()},
                  {"gpus_per_domain", topo.gpus_per_domain()}};
  j["workload"] = workload_obj(w, r);
  j["simulation"] = {
      {"mode", r.mode}, {"units_simulated", r.units_simulated}, {"events", r.events}};
  j["step_time_s"] = fixed(r.step_time_s, 6);
  j["tokens_per_s_per_gpu"] = fixed(r.tokens_per_s_per_gpu, 2);
  j["model_tflops_per_gpu"] = fixed(r.model_tflops_per_gpu, 2);
  j["mfu"] = fixed(r.mfu, 4);
  j["peak_bf16_tflops"] = fixed(r.peak_tflops, 1);
  const TimeBreakdown& b = r.breakdown;
  j["breakdown_s"] = {{"compute", fixed(b.compute, 6)},
                      {"tp_exposed", fixed(b.tp_exposed, 6)},
                      {"cp_exposed", fixed(b.cp_exposed, 6)},
                      {"ep_exposed", fixed(b.ep_exposed, 6)},
                      {"pp_exposed", fixed(b.pp_exposed, 6)},
                      {"dp_exposed", fixed(b.dp_exposed, 6)},
                      {"bubble", fixed(b.bubble, 6)},
                      {"optimizer", fixed(b.optimizer, 6)},
                      {"host_exposed", fixed(b.host_exposed, 6)}};
  j["bubble_fraction_closed_form"] = fixed(r.bubble_fraction_closed_form, 4);
  ojson coll = ojson::object();
  for (const auto& [k, v] : r.collective_time_s)
    coll[k] = fixed(v, 6);
  j["collective_time_s"] = coll;
  j["memory"] = memory_obj(r.memory);
  j["use"] = use_obj(r);
  if (moe != nullptr) j["moe"] = moe_obj(*moe);
  if (run != nullptr && s.run) j["run"] = run_obj(s, *run);
  j["compute_sources"] = r.compute_sources;
  j["warnings"] = r.warnings;
  return j.dump(2) + "\n";
}

std::string chrome_trace_json(const Scenario& s, const StepResult& r) {
  // Written by hand (not through nlohmann) so a trace with millions of events streams fast.
  std::string out = "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"scenario\":";
  out += ojson(s.name).dump();
  out += "},\"traceEvents\":[\n";
  bool first = true;
  std::map<int, bool> named;
  char buf[512];
  auto tid = [](const char* stream) {
    const std::string st = stream;
    return st == "compute" ? 1 : st == "dp" ? 2 : st == "pp" ? 3 : 4;
  };
  for (const TraceEvent& e : r.trace) {
    if (!named.count(e.rank)) {
      named[e.rank] = true;
      std::snprintf(buf, sizeof buf,
                    "%s{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":"
                    "\"ranks %d-%d\"}}",
                    first ? "" : ",\n", e.rank, e.rank, e.rank + e.tp - 1);
      out += buf;
      first = false;
      for (const char* st : {"compute", "dp", "pp", "host"}) {
        std::snprintf(buf, sizeof buf,
                      ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_name\","
                      "\"args\":{\"name\":\"%s\"}}",
                      e.rank, tid(st), st);
        out += buf;
      }
    }
    std::snprintf(buf, sizeof buf,
                  ",\n{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"name\":%s,\"ts\":%.3f,\"dur\":%.3f}",
                  e.rank, tid(e.stream), ojson(e.name).dump().c_str(), e.start_us, e.dur_us);
    out += buf;
  }
  out += "\n]}\n";
  return out;
}

std::string run_timeline_trace_json(const std::string& name, const std::vector<RunEvent>& events) {
  auto track = [](const std::string& kind) {
    if (kind.rfind("gray", 0) == 0) return 3;
    if (kind == "checkpoint_durable") return 4;
    if (kind.rfind("segment", 0) == 0 || kind == "maintenance" || kind == "budget_reached")
      return 5;
    return 2;
  };
  ojson ev = ojson::array();
  ev.push_back({{"ph", "M"},
                {"pid", 1},
                {"name", "process_name"},
                {"args", {{"name", "run " + name + " (replica 0)"}}}});
  const char* names[] = {
      "", "job state", "failures and recovery", "gray failures", "checkpoints", "reservation"};
  for (int t = 1; t <= 5; ++t)
    ev.push_back({{"ph", "M"},
                  {"pid", 1},
                  {"tid", t},
                  {"name", "thread_name"},
                  {"args", {{"name", names[t]}}}});
  // Job state: training from t = 0 until an interrupting event, then that state until resume.
  std::string state = "training";
  double since = 0;
  auto close = [&](double t) {
    if (t > since)
      ev.push_back({{"ph", "X"},
                    {"pid", 1},
                    {"tid", 1},
                    {"name", state},
                    {"ts", fixed(since * 1e6, 0)},
                    {"dur", fixed((t - since) * 1e6, 0)}});
    since = t;
  };
  for (const RunEvent& e : events) {
    ojson args = ojson::object();
    for (size_t pos = 0; pos < e.detail.size();) {
      size_t end = e.detail.find(' ', pos);
      if (end == std::string::npos) end = e.detail.size();
      const std::string kv = e.detail.substr(pos, end - pos);
      const size_t eq = kv.find('=');
      if (eq != std::string::npos) args[kv.substr(0, eq)] = kv.substr(eq + 1);
      pos = end + 1;
    }
    ev.push_back({{"ph", "i"},
                  {"s", "t"},
                  {"pid", 1},
                  {"tid", track(e.kind)},
                  {"name", e.kind},
                  {"ts", fixed(e.t_s * 1e6, 0)},
                  {"args", args}});
    const bool training = state == "training";
    if (e.kind == "resume" && !training) {
      close(e.t_s);
      state = "training";
    } else if (e.kind == "segment_end" || e.kind == "budget_reached") {
      close(e.t_s);
      state = e.kind == "segment_end" ? "offline (reclaimed)" : "done";
    } else if (e.kind == "segment_start") {
      close(e.t_s);
      state = "restarting (new segment)";
    } else if (training && (e.kind == "failure" || e.kind == "maintenance" ||
                            e.kind == "gray_detected" || e.kind == "checkpointless_recovery")) {
      close(e.t_s);
      state = "interrupted: " + e.kind;
    }
  }
  if (state != "done" && !events.empty()) close(events.back().t_s);
  ojson j;
  j["displayTimeUnit"] = "ms";
  j["otherData"] = {{"scenario", name}, {"clock", "wall time of the run, 1 us = 1 us"}};
  j["traceEvents"] = ev;
  return j.dump() + "\n";
}

void write_file_atomic(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path, "", "cannot write file");
    out << content;
    out.flush();
    if (!out) throw InputError(path, "", "write failed");
  }
  fs::rename(tmp, p, ec);
  if (ec) throw InputError(path, "", "cannot rename temporary file: " + ec.message());
}

}  // namespace fleetsim
