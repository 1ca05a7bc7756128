// The fleetsim command: run, memory, validate, topo, calibrate, sweep, merge. Exit codes: 0 ok,
// 2 bad input, 1 internal error.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>

#include <filesystem>
#include "coll/collective.h"
#include "compute/compute_model.h"
#include "compute/import.h"
#include "core/error.h"
#include "core/units.h"
#include "plan/plan.h"
#include "report/plan_report.h"
#include "report/report.h"
#include "report/run_html.h"
#include "report/sweep_results.h"
#include "scenario/plan_loader.h"
#include "scenario/scenario.h"
#include "scenario/sweep_loader.h"
#include "study/cluster.h"
#include "study/collective.h"
#include "study/memory.h"
#include "study/run_level.h"
#include "study/training_step.h"
#include "sweep/sweep.h"
#include "topo/topology.h"
#include "validate/validate.h"

namespace fleetsim {
namespace {

// Monte Carlo replicas per point of the HTML report's ETTR-vs-interval curve (at most the run's).
constexpr int kCurveReplicas = 32;

void print_memory(const MemoryBreakdown& m) {
  auto gib = [](int64_t b) { return static_cast<double>(b) / (1024.0 * 1024 * 1024); };
  std::printf("memory per GPU (stage %d, %d layers, %d micro-batches in flight):\n", m.stage,
              m.layers_on_stage, m.in_flight_microbatches);
  std::printf("  weights          %9.2f GiB\n", gib(m.weights));
  std::printf("  gradients        %9.2f GiB\n", gib(m.gradients));
  std::printf("  optimizer (m, v) %9.2f GiB\n", gib(m.optimizer));
  std::printf("  master weights   %9.2f GiB\n", gib(m.master_weights));
  std::printf("  activations      %9.2f GiB\n", gib(m.activations));
  std::printf("  comm buffers     %9.2f GiB\n", gib(m.comm_buffers));
  std::printf("  total            %9.2f GiB of %.2f GiB HBM: %s\n", gib(m.total), gib(m.capacity),
              m.fits ? "fits" : "DOES NOT FIT");
}

void print_moe(const MoeOutcome& m, int ep) {
  const MoeSummary& x = m.summary;
  std::printf("\nMoE routing: %s", to_string(m.spec.kind));
  if (m.spec.kind == RoutingKind::kDirichlet) std::printf(" (alpha %.3g)", m.spec.alpha);
  if (m.spec.kind == RoutingKind::kZipf) std::printf(" (s %.3g)", m.spec.s);
  if (m.spec.kind == RoutingKind::kHistogram) std::printf(" (%s)", m.spec.histogram_file.c_str());
  std::printf(", placement %s", to_string(m.spec.placement));
  if (m.spec.placement == Placement::kEplb)
    std::printf(" (+%d replicas)", m.spec.redundant_experts);
  if (m.spec.capacity_factor > 0) {
    std::printf(", capacity factor %.3g\n", m.spec.capacity_factor);
  } else {
    std::printf(", dropless\n");
  }
  std::printf("  expert load max/mean   %6.3f  (MaxVio %.3f), layer average\n",
              x.expert_max_over_mean_avg, x.maxvio);
  std::printf("  EP-rank load max/mean  %6.3f  (worst layer and micro-batch %.3f)\n",
              x.rank_max_over_mean_avg, x.rank_max_over_mean_worst);
  std::printf("  dropped tokens         %6.2f %%\n", x.dropped_fraction * 100);
  std::printf("  step vs balanced       %+6.1f %%  (%.3f s balanced)\n", m.slowdown_pct,
              m.balanced_step_s);
  std::printf("  all-to-all share       %6.1f %% of the step\n", m.all_to_all_share * 100);
  if (!x.bias_trajectory.empty()) {
    std::printf("  bias update            max/mean %.3f -> %.3f over %zu steps\n",
                x.bias_trajectory.front(), x.bias_trajectory.back(), x.bias_trajectory.size() - 1);
  }
  if (m.eplb_extra_bytes > 0)
    std::printf("  EPLB replicas memory   %6.2f GiB per GPU\n",
                m.eplb_extra_bytes / (1024.0 * 1024 * 1024));
  std::printf("  copies per EP rank (mean per layer and micro-batch):");
  for (int q = 0; q < ep; ++q)
    std::printf("%s%.0f", q % 8 == 0 ? "\n   " : " ", x.rank_tokens[q]);
  std::printf("\n");
}

void print_run(const Scenario& s, const RunOutcome& o) {
  const RunSpec& spec = *s.run;
  const RunSummary& m = o.summary;
  std::printf("\nrun: %d Monte Carlo replicas, ", m.replicas);
  if (spec.token_budget > 0) std::printf("token budget %.4g", spec.token_budget);
  if (spec.token_budget > 0 && spec.duration_s > 0) std::printf(" within ");
  if (spec.duration_s > 0) std::printf("%.2f days", spec.duration_s / 86400.0);
  std::printf("; failures %s", spec.failures.name.empty() ? "none" : spec.failures.name.c_str());
  if (m.job_mtbf_h > 0) {
    std::printf(" (job MTBF %.2f h)\n", m.job_mtbf_h);
  } else {
    std::printf(" (no failure rate)\n");
  }
  std::printf(
      "  checkpoints        %s every %.1f min of training (%.0f GB), %.1f taken, %.2f lost\n",
      to_string(spec.checkpoint.mode), m.interval_s / 60.0, spec.checkpoint.size_bytes / 1e9,
      m.checkpoints_mean, m.checkpoints_lost_mean);
  for (const auto& [level, t] : o.steps.slow_gpu_s)
    std::printf("  step, a GPU at %3d%% %9.3f s (healthy %.3f s)\n", level * 5, t,
                o.steps.healthy_s);
  std::printf("  ETTR               mean %.4f  P10 %.4f  P50 %.4f  P90 %.4f\n", m.ettr_mean,
              m.ettr_p10, m.ettr_p50, m.ettr_p90);
  std::printf("  goodput            %.4g tokens/s (healthy %.4g)\n", m.goodput_tokens_per_s,
              m.tokens_per_s);
  if (spec.token_budget > 0) {
    std::printf(
        "  time to budget     P50 %.2f days  P90 %.2f days  (%d of %d replicas reached it)\n",
        m.time_to_budget_p50_s / 86400, m.time_to_budget_p90_s / 86400, m.reached_budget,
        m.replicas);
  }
  std::printf(
      "  interruptions      %.2f unexpected, %.2f planned; gray failures %.2f (%.2f "
      "detected); spare nodes taken %.2f (pool of %d, repaired nodes return to it)\n",
      m.interruptions_mean, m.planned_mean, m.gray_onsets_mean, m.gray_detected_mean,
      m.spares_used_mean, spec.recovery.spares);
  std::printf("  lost time (mean hours per run):\n");
  for (int c = 0; c < kLostCauses; ++c)
    if (m.lost_mean_s[c] > 0)
      std::printf("    %-16s %10.2f h\n", to_string(static_cast<LostCause>(c)),
                  m.lost_mean_s[c] / 3600);
  std::printf("  failures by cause (mean per run):\n");
  for (size_t c = 0; c < m.failure_components.size(); ++c)
    if (m.failures_mean[c] > 0)
      std::printf("    %-22s %9.2f\n", m.failure_components[c].c_str(), m.failures_mean[c]);
}

// Optional outputs of `run` beyond report.json.
struct RunOutputs {
  std::string trace_path;     // --trace: Chrome trace of the step
  std::string events_path;    // --events: run-level events of replica 0, JSON lines
  std::string timeline_path;  // --timeline: the same events as a Chrome trace
  bool html = false;          // --html: OUT/report.html
  int threads = 0;
};

int cmd_run_training(const Scenario& s, const StudyCluster& cluster, const std::string& out_dir,
                     const RunOutputs& o) {
  const std::string& trace_path = o.trace_path;
  const std::string& events_path = o.events_path;
  const int threads = o.threads;
  const bool want_events = !events_path.empty() || !o.timeline_path.empty();
  const TrainingWorkload& w = *s.training;
  const StepOutcome run = simulate_training_step(s, cluster, !trace_path.empty());
  const StepResult& r = run.result;
  const ParallelConfig& p = w.par;
  std::printf("# fleetsim %s: %s on %d GPUs (%d × %s)\n", s.name.c_str(),
              w.model.display_name.c_str(), w.gpus, s.count, s.system.name.c_str());
  std::printf(
      "# tp %d pp %d cp %d dp %d vp %d ep %d etp %d; batch %d × %d tokens, micro-batch "
      "%d (%d per pipeline); %s, recompute %s, %s schedule\n",
      p.tp, p.pp, p.cp, p.dp, p.vp, p.ep, p.etp, p.global_batch, p.seq_len, p.micro_batch,
      r.micro_batches, to_string(p.precision), to_string(p.recompute), to_string(p.schedule()));
  std::printf("# simulated: %s, %d TP units, %llu events\n\n", r.mode.c_str(), r.units_simulated,
              static_cast<unsigned long long>(r.events));
  std::printf("step time          %10.3f s\n", r.step_time_s);
  std::printf("throughput         %10.1f tokens/s/GPU\n", r.tokens_per_s_per_gpu);
  std::printf("model TFLOP/s/GPU  %10.1f\n", r.model_tflops_per_gpu);
  std::printf("MFU                %10.1f %% of %.0f dense BF16 TFLOP/s\n\n", r.mfu * 100,
              r.peak_tflops);
  const TimeBreakdown& b = r.breakdown;
  auto row = [&](const char* name, double v) {
    std::printf("  %-22s %9.3f s %6.1f %%\n", name, v,
                r.step_time_s > 0 ? v / r.step_time_s * 100 : 0);
  };
  std::printf("breakdown (critical rank):\n");
  row("compute", b.compute);
  row("TP exposed", b.tp_exposed);
  row("CP exposed", b.cp_exposed);
  row("EP exposed", b.ep_exposed);
  row("PP transfers", b.pp_exposed);
  row("pipeline bubble", b.bubble);
  row("DP exposed", b.dp_exposed);
  row("optimizer", b.optimizer);
  std::printf("  (closed-form bubble fraction (pp-1)/(vp·m) = %.3f)\n\n",
              r.bubble_fraction_closed_form);
  print_memory(r.memory);
  if (run.moe) print_moe(*run.moe, w.par.ep);
  for (const auto& wmsg : r.warnings)
    std::printf("warning: %s\n", wmsg.c_str());
  std::optional<RunOutcome> outcome;
  if (s.run) {
    outcome = simulate_run_level(s, cluster, run, threads, want_events);
    print_run(s, *outcome);
  }
  if (want_events && !outcome)
    throw InputError(s.file, "/run", "--events and --timeline need a scenario with a run section");
  const std::string report = out_dir + "/report.json";
  write_file_atomic(report, training_report_json(s, cluster.topo, r, run.moe ? &*run.moe : nullptr,
                                                 outcome ? &*outcome : nullptr));
  if (!events_path.empty()) {
    write_file_atomic(events_path, run_events_jsonl(outcome->summary.events));
    std::printf("# events: %s (replica 0)\n", events_path.c_str());
  }
  if (!o.timeline_path.empty()) {
    write_file_atomic(o.timeline_path, run_timeline_trace_json(s.name, outcome->summary.events));
    std::printf("# timeline: %s (replica 0; open in https://ui.perfetto.dev)\n",
                o.timeline_path.c_str());
  }
  if (o.html) {
    std::optional<EttrCurve> curve;
    if (outcome)
      curve = ettr_vs_interval(*s.run, outcome->job, outcome->steps, s.seed,
                               std::min(s.run->replicas, kCurveReplicas), threads);
    const std::string html_path = out_dir + "/report.html";
    write_file_atomic(html_path,
                      run_html(s, run, outcome ? &*outcome : nullptr, curve ? &*curve : nullptr));
    std::printf("# html: %s\n", html_path.c_str());
  }
  std::printf("# report: %s\n", report.c_str());
  if (!trace_path.empty()) {
    write_file_atomic(trace_path, chrome_trace_json(s, r));
    std::printf("# trace: %s (open in https://ui.perfetto.dev)\n", trace_path.c_str());
  }
  return 0;
}

// Work limits of run and memory (--max-passes, --max-trace-events); --max-gpus is passed along.
struct WorkLimits {
  int64_t max_passes = LoadOptions{}.max_passes;
  int64_t max_trace_events = 5'000'000;  // about 450 MB of Chrome-trace JSON
};
WorkLimits work_limits;

// A Chrome trace holds about 3 events per forward/backward pass (kernels and communication
// slices merged per pass); refused before simulating when it would exceed the limit.
void check_trace_size(const Scenario& s, const std::string& trace_path) {
  if (trace_path.empty() || !s.training) return;
  const int64_t events = estimated_step_passes(*s.training) * 3;
  if (events > work_limits.max_trace_events) {
    throw InputError(s.file, "/workload/batch",
                     "--trace would write about " + std::to_string(events) +
                         " trace events (about " + std::to_string(events * 90 / 1000000) +
                         " MB); the limit is " + std::to_string(work_limits.max_trace_events) +
                         " (raise it with --max-trace-events)");
  }
}

int cmd_memory(const std::string& path, int max_gpus, bool as_json) {
  LoadOptions opt;
  opt.max_gpus = max_gpus;
  opt.max_passes = work_limits.max_passes;
  const Scenario s = load_scenario(path, opt);
  if (!s.training) throw InputError(path, "/workload/type", "memory needs a training workload");
  const MemoryBreakdown m = estimate_scenario_memory(s);
  if (as_json) {
    std::fputs(memory_json(m).c_str(), stdout);
  } else {
    print_memory(m);
  }
  return 0;
}

int cmd_run(const std::string& path, std::string out_dir, std::optional<uint64_t> seed,
            int max_gpus, const RunOutputs& outputs) {
  const std::string& trace_path = outputs.trace_path;
  LoadOptions opt;
  opt.max_gpus = max_gpus;
  opt.max_passes = work_limits.max_passes;
  Scenario s = load_scenario(path, opt);
  check_trace_size(s, trace_path);
  if (seed) s.seed = *seed;
  const StudyCluster cluster = load_study_cluster(s, opt.data_dir);
  const Topology& topo = cluster.topo;
  if (out_dir.empty()) out_dir = "out/" + s.name;
  if (s.training) return cmd_run_training(s, cluster, out_dir, outputs);
  if (!outputs.events_path.empty() || !outputs.timeline_path.empty() || outputs.html)
    throw InputError(s.file, "/workload",
                     "--events, --timeline and --html need a training scenario");
  const CollectiveWorkload& w = *s.collective;
  const int n = static_cast<int>(collective_group(w, topo).size());
  std::printf("# fleetsim %s: %s on %d GPUs (%d × %s, %s)\n", s.name.c_str(), to_string(w.op), n,
              s.count, s.system.name.c_str(), s.system.unit_name.c_str());
  std::printf("# fabric: %d-tier Clos, oversubscription %.2g:1, routing %s; calibration %s\n",
              s.fabric.tiers, s.fabric.oversubscription, to_string(s.fabric.routing),
              s.collective_params.source.c_str());
  std::printf("#\n# %12s %12s %10s %12s %10s %10s\n", "size(B)", "count", "algo", "time(us)",
              "algbw", "busbw");
  std::printf("# %12s %12s %10s %12s %10s %10s\n", "", "(elements)", "", "", "(GB/s)", "(GB/s)");
  std::vector<CollectiveResult> results;
  for (const Bytes& size : w.sizes) {
    CollectiveResult r = simulate_scenario_collective(s, cluster, size);
    std::printf("  %12lld %12lld %10s %12.2f %10.2f %10.2f\n", static_cast<long long>(size.count()),
                static_cast<long long>(size.count() / w.dtype_bytes), to_string(r.algorithm),
                r.time.us(), r.algbw_gbps, r.busbw_gbps);
    results.push_back(r);
  }
  const std::string report = out_dir + "/report.json";
  write_file_atomic(report, collective_report_json(s, topo, results));
  std::printf("# report: %s\n", report.c_str());
  return 0;
}

int cmd_validate(const std::string& reference, bool as_json, const ValidateOptions& vo) {
  const ValidationReport rep = validate_reference(reference, default_data_dir(), vo);
  if (as_json) {
    std::fputs(validation_json(rep).c_str(), stdout);
    return 0;
  }
  bool header = false;
  for (const auto& v : rep.rows) {
    if (v.skipped || !v.training) continue;
    if (!header) {
      std::printf("%-6s %-10s %5s %-24s %-52s %10s %10s %8s\n", "line", "hardware", "gpus", "model",
                  "configuration", "measured", "predicted", "error%");
      header = true;
    }
    std::printf("%-6d %-10.10s %5d %-24.24s %-52.52s %10.0f %10.0f %+8.1f\n", v.line,
                v.hardware.c_str(), v.num_gpus, v.model.c_str(), v.config.c_str(), v.measured,
                v.predicted, v.error_pct);
  }
  header = false;
  for (const auto& v : rep.rows) {
    if (v.skipped || v.training) continue;
    if (!header) {
      std::printf("%-6s %-28s %5s %-15s %14s %-10s %10s %10s %8s\n", "line", "hardware", "gpus",
                  "operation", "size(B)", "algo", "measured", "predicted", "error%");
      header = true;
    }
    std::printf("%-6d %-28.28s %5d %-15s %14lld %-10s %10.2f %10.2f %+8.1f%s\n", v.line,
                v.hardware.c_str(), v.num_gpus, v.model.c_str(),
                static_cast<long long>(v.size.count()), v.algorithm.c_str(), v.measured,
                v.predicted, v.error_pct, v.small ? "  (small)" : "");
  }
  std::printf("\nskipped rows:\n");
  for (const auto& v : rep.rows) {
    if (v.skipped)
      std::printf("  line %-5d %-28.28s %-15s %s\n", v.line, v.hardware.c_str(), v.model.c_str(),
                  v.reason.c_str());
  }
  const bool training = std::any_of(rep.rows.begin(), rep.rows.end(),
                                    [](const ValidationRow& v) { return v.training; });
  std::printf("\n");
  for (const auto& [hw, e] : rep.mape_by_hardware)
    std::printf("MAPE %-28s %6.2f%% over %d rows\n", hw.c_str(), e.first, e.second);
  if (training) {
    std::printf("MAPE (all compared rows): %.2f%% over %d rows; worst row %.1f%%\n", rep.mape_pct,
                rep.n_rows, rep.max_abs_error_pct);
  } else {
    std::printf("MAPE (messages >= 1 MiB): %.2f%% over %d rows\n", rep.mape_pct, rep.n_rows);
    std::printf("MAPE (messages <  1 MiB): %.2f%% over %d rows\n", rep.mape_small_pct, rep.n_small);
  }
  std::printf("skipped: %d rows\n", rep.n_skipped);
  return 0;
}

int cmd_topo(const std::string& system, int count, bool dot) {
  const SystemSpec s = load_system(system, default_data_dir());
  const Topology topo(s, s.fabric, count * s.unit_nodes);
  if (dot) {
    std::fputs(topology_to_dot(topo).c_str(), stdout);
  } else {
    std::printf("%s", topo.summary().c_str());
  }
  return 0;
}

// Checks a fleetsim-calibrate file and adds it to a calibration set (calibration/README.md).
int cmd_calibrate_import(const std::string& file, std::string set, const std::string& sets_dir) {
  const CalibrationFile f = read_calibration_file(file);
  if (set.empty()) set = f.gpu + "-" + f.header.at("date").substr(0, 10);
  const bool is_path = set.find('/') != std::string::npos;
  if (!is_path && set.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789._-") != std::string::npos)
    throw InputError("--set", "",
                     "expected a name from [A-Za-z0-9._-] or a path, got '" + set + "'");
  const std::string dir =
      is_path
          ? set
          : (sets_dir.empty() ? default_data_dir() + "/calibration/sets" : sets_dir) + "/" + set;
  const std::string dest = import_calibration_file(file, dir);
  int gemm = 0, mem = 0, coll = 0;
  for (const auto& r : f.rows) {
    gemm += r.kernel == "gemm";
    mem += is_memory_kernel(r.kernel);
    coll += r.kernel.rfind("nccl_", 0) == 0;
  }
  std::printf("imported %s (%s, %s): %d GEMM, %d memory-bound, %d collective rows\n", file.c_str(),
              f.gpu.c_str(), f.header.at("device").c_str(), gemm, mem, coll);
  std::printf("set: %s\nfile: %s\n", dir.c_str(), dest.c_str());
  std::printf("use it: \"cluster\": {..., \"calibration_set\": \"%s\"}\n", set.c_str());
  return 0;
}

struct SweepCli {
  std::string file, out, shard = "0/1", progress = "auto", emit_slurm, partition, time_limit;
  int jobs = 1, shards = 4, max_gpus = 131072;
};

// fleetsim sweep: expand, then run this shard's points (or write Slurm scripts).
int cmd_sweep(const SweepCli& o, const char* argv0) {
  LoadOptions lo;
  lo.max_gpus = o.max_gpus;
  const SweepPlan plan = load_sweep(o.file, lo);
  std::fprintf(stderr, "sweep %s: %lld combinations, %zu points\n", plan.name.c_str(),
               plan.combinations, plan.points.size());
  for (const auto& sk : plan.skipped)
    std::fprintf(stderr, "  skipped %d: %s\n", sk.count, sk.reason.c_str());
  if (!o.emit_slurm.empty()) {
    std::error_code ec;
    auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    SlurmOptions so;
    so.dir = o.emit_slurm;
    so.fleetsim_exe = ec ? std::string(argv0) : exe.string();
    so.sweep_file = o.file;
    so.shards = std::min<int>(o.shards, std::max<int>(1, static_cast<int>(plan.points.size())));
    so.cpus_per_task = o.jobs;
    so.partition = o.partition;
    so.time_limit = o.time_limit;
    for (const auto& f : emit_slurm(plan, so))
      std::printf("wrote %s\n", f.c_str());
    std::printf("submit: bash %s/submit.sh  (%d array tasks, then the merge)\n",
                std::filesystem::absolute(o.emit_slurm).lexically_normal().c_str(), so.shards);
    return 0;
  }
  SweepRunOptions ro;
  ro.jobs = o.jobs;
  ro.shard = parse_shard(o.shard, "--shard");
  ro.load = lo;
  ro.progress = o.progress == "bar"     ? ProgressMode::kBar
                : o.progress == "lines" ? ProgressMode::kLines
                : o.progress == "none"  ? ProgressMode::kNone
                                        : ProgressMode::kAuto;
  ro.out_dir = o.out;
  if (ro.out_dir.empty()) {
    ro.out_dir = "out/sweeps/" + plan.name;
    if (ro.shard.count > 1) ro.out_dir += "/shard-" + std::to_string(ro.shard.index);
  }
  const SweepResultsCodec codec;
  const SweepRunSummary r = run_sweep(plan, ro, codec);
  std::printf(
      "# sweep %s, shard %d/%d: %d points (%d already done, %d run in %.2f s, %.1f "
      "points/s): %d ok, %d invalid, %d error\n",
      plan.name.c_str(), ro.shard.index, ro.shard.count, r.shard_points, r.already_done, r.ran,
      r.elapsed_s, r.elapsed_s > 0 ? r.ran / r.elapsed_s : 0.0, r.ok, r.invalid, r.error);
  if (r.foreign_rows > 0)
    std::printf("# dropped %d rows of points that are no longer in the sweep\n", r.foreign_rows);
  std::printf("# results: %s/results.jsonl, %s/results.csv\n", ro.out_dir.c_str(),
              ro.out_dir.c_str());
  return 0;
}

int cmd_merge(const std::string& out, const std::vector<std::string>& inputs) {
  const SweepResultsCodec codec;
  const MergeSummary m = merge_sweep_results(out, inputs, codec);
  std::printf("# merged %d points from %d folders into %s/results.jsonl, %s/results.csv\n",
              m.points, m.inputs, out.c_str(), out.c_str());
  return 0;
}

}  // namespace
}  // namespace fleetsim

namespace fleetsim {
namespace {

// `fleetsim plan FILE`: plan.json, report.md, report.html in --out; the table on stdout.
int cmd_plan(const std::string& path, std::string out_dir, int threads) {
  LoadOptions opt;
  const PlanSpec plan = load_plan(path, opt);
  if (out_dir.empty()) out_dir = "out/plan-" + plan.name;
  std::filesystem::create_directories(out_dir);
  const PlanResult r = run_plan(plan, opt, threads, nullptr);
  write_file_atomic(out_dir + "/plan.json", plan_json(r));
  write_file_atomic(out_dir + "/report.md", plan_markdown(r));
  write_file_atomic(out_dir + "/report.html", plan_html(r));
  std::fputs(plan_table(r).c_str(), stdout);
  std::printf("wrote %s/plan.json, report.md, report.html\n", out_dir.c_str());
  return 0;
}

}  // namespace
}  // namespace fleetsim

int main(int argc, char** argv) {
  using namespace fleetsim;
  CLI::App app{"fleetsim: discrete-event simulator of LLM training clusters"};
  app.set_version_flag("--version", std::string("fleetsim ") + FLEETSIM_VERSION);
  app.require_subcommand(1);

  auto* run = app.add_subcommand(
      "run", "Simulate a scenario file; print a summary and write DIR/report.json");
  std::string scenario, out_dir;
  std::optional<uint64_t> seed;
  int max_gpus = 131072;
  run->add_option("scenario", scenario, "Scenario JSON file")->required();
  run->add_option("--out", out_dir, "Output folder (default out/<scenario name>)");
  run->add_option("--seed", seed, "Override the scenario's seed");
  run->add_option("--max-gpus", max_gpus, "Refuse clusters larger than this")
      ->check(CLI::PositiveNumber);
  run->add_option("--max-passes", work_limits.max_passes,
                  "Refuse training steps with more forward/backward passes to simulate (TP units "
                  "x micro-batches x model chunks x 2)")
      ->check(CLI::PositiveNumber);
  run->add_option("--max-trace-events", work_limits.max_trace_events,
                  "Refuse --trace when it would write more events than this")
      ->check(CLI::PositiveNumber);
  RunOutputs run_out;
  run->add_option("--trace", run_out.trace_path,
                  "Write a Chrome-trace JSON of the step (training scenarios; open in Perfetto)");
  run->add_option("--events", run_out.events_path,
                  "Write the run-level event timeline of replica 0 as JSON lines (scenarios with "
                  "a run section)");
  run->add_option("--timeline", run_out.timeline_path,
                  "Write the run-level event timeline of replica 0 as a Chrome-trace JSON (open "
                  "in Perfetto; scenarios with a run section)");
  run->add_flag("--html", run_out.html,
                "Also write DIR/report.html: charts of the breakdown, memory, MoE load and, with "
                "a run section, ETTR vs checkpoint interval (training scenarios)");
  run->add_option("--threads", run_out.threads,
                  "Threads for the run-level Monte Carlo (default: every core; results do not "
                  "depend on it)")
      ->check(CLI::Range(0, 1024));

  auto* mem = app.add_subcommand(
      "memory", "Print the per-GPU memory breakdown of a training scenario (no simulation)");
  bool mem_json = false;
  mem->add_option("scenario", scenario, "Scenario JSON file")->required();
  mem->add_option("--max-gpus", max_gpus, "Refuse clusters larger than this")
      ->check(CLI::PositiveNumber);
  mem->add_option("--max-passes", work_limits.max_passes,
                  "Refuse training steps with more forward/backward passes than this")
      ->check(CLI::PositiveNumber);
  mem->add_flag("--json", mem_json, "Print the breakdown as JSON on stdout");

  auto* val =
      app.add_subcommand("validate", "Compare simulated with measured rows of a reference CSV");
  std::string reference;
  bool as_json = false;
  val->add_option("--reference", reference,
                  "Reference CSV (column format of shared/reference/*.csv)")
      ->required();
  val->add_flag("--json", as_json, "Print the comparison as JSON on stdout");
  ValidateOptions vo;
  val->add_option("--kernel-gap-us", vo.kernel_gap_us,
                  "Override calibration/framework.json's kernel gap (fitting only)");
  val->add_option("--kernel-efficiency", vo.kernel_efficiency,
                  "Override calibration/framework.json's kernel efficiency (fitting only)")
      ->check(CLI::Range(0.05, 1.0));

  auto* topo = app.add_subcommand("topo", "Inspect topologies");
  topo->require_subcommand(1);
  auto* show =
      topo->add_subcommand("show", "Summarise a system's graph, or write Graphviz with --dot");
  std::string system;
  int count = 1;
  bool dot = false;
  show->add_option("system", system, "System name (topologies/NAME.json) or path")->required();
  show->add_option("--count", count, "Number of units (instances, UltraServers, racks)")
      ->check(CLI::Range(1, 16384));
  show->add_flag("--dot", dot, "Write Graphviz DOT on stdout");

  auto* cal = app.add_subcommand("calibrate", "Calibration sets measured with fleetsim-calibrate");
  cal->require_subcommand(1);
  auto* cal_import = cal->add_subcommand(
      "import", "Check a fleetsim-calibrate file and add it to a calibration set");
  std::string cal_file, cal_set, cal_sets_dir;
  cal_import->add_option("file", cal_file, "Calibration CSV written by fleetsim-calibrate")
      ->required();
  cal_import->add_option("--set", cal_set,
                         "Set name (calibration/sets/NAME) or a directory path; default "
                         "<gpu>-<date of the measurement>");
  cal_import->add_option("--sets-dir", cal_sets_dir,
                         "Where named sets live (default <data dir>/calibration/sets)");

  auto* sweep = app.add_subcommand(
      "sweep", "Run a sweep file's points in parallel; resumable; shardable; Slurm scripts");
  SweepCli sw;
  sweep->add_option("file", sw.file, "Sweep JSON file (scenarios/schema/sweep.schema.json)")
      ->required();
  sweep->add_option("-j,--jobs", sw.jobs, "Points simulated in parallel (threads; default 1)")
      ->check(CLI::Range(1, 1024));
  sweep->add_option("--out", sw.out,
                    "Results folder (default out/sweeps/<name>, /shard-I when sharded)");
  sweep->add_option("--shard", sw.shard, "Run shard I of N (0-based): points with index % N == I");
  sweep
      ->add_option("--progress", sw.progress,
                   "auto (a bar on a terminal, else lines every 10 s), bar, lines, none")
      ->check(CLI::IsMember({"auto", "bar", "lines", "none"}));
  sweep->add_option("--max-gpus", sw.max_gpus, "Refuse clusters larger than this")
      ->check(CLI::PositiveNumber);
  sweep->add_option("--emit-slurm", sw.emit_slurm,
                    "Write an sbatch job array (one task per shard), the merge job and submit.sh "
                    "into DIR instead of running");
  sweep->add_option("--shards", sw.shards, "Shards (array tasks) for --emit-slurm (default 4)")
      ->check(CLI::Range(1, 100000));
  sweep->add_option("--partition", sw.partition, "Slurm partition for --emit-slurm");
  sweep->add_option("--time", sw.time_limit, "Slurm time limit per task for --emit-slurm");

  auto* merge = app.add_subcommand(
      "merge",
      "Combine shard result folders; every point exactly once, else say which are missing");
  std::string merge_out;
  std::vector<std::string> merge_inputs;
  merge->add_option("out", merge_out, "Output folder")->required();
  merge->add_option("inputs", merge_inputs, "Shard result folders")->required();

  auto* plan = app.add_subcommand(
      "plan", "Size a Flexible Training Plan: instance type x count x parallelism search");
  std::string plan_file, plan_out;
  int plan_threads = 0;
  plan->add_option("plan", plan_file, "Plan file (JSON, scenarios/schema/plan.schema.json)")
      ->required();
  plan->add_option("--out", plan_out, "Output folder (default out/plan-NAME)");
  plan->add_option("-j,--jobs", plan_threads, "Threads (0 = every core; results do not change)")
      ->check(CLI::NonNegativeNumber);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  try {
    if (run->parsed()) return cmd_run(scenario, out_dir, seed, max_gpus, run_out);
    if (mem->parsed()) return cmd_memory(scenario, max_gpus, mem_json);
    if (val->parsed()) return cmd_validate(reference, as_json, vo);
    if (show->parsed()) return cmd_topo(system, count, dot);
    if (cal_import->parsed()) return cmd_calibrate_import(cal_file, cal_set, cal_sets_dir);
    if (sweep->parsed()) return cmd_sweep(sw, argv[0]);
    if (merge->parsed()) return cmd_merge(merge_out, merge_inputs);
    if (plan->parsed()) return cmd_plan(plan_file, plan_out, plan_threads);
  } catch (const InputError& e) {
    std::fprintf(stderr, "fleetsim: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fleetsim: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}
