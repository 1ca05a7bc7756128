// `fleetsim run SCENARIO`: a training scenario (the step, its MoE routing, the run level) or a
// collective scenario, printed and written to report.json (and the optional outputs).
#include <algorithm>
#include <cstdio>

#include "cli/commands.h"
#include "core/error.h"
#include "report/report.h"
#include "report/run_html.h"
#include "study/cluster.h"
#include "study/collective.h"
#include "study/run_level.h"
#include "study/training_step.h"

namespace fleetsim {

namespace {

// Monte Carlo replicas per point of the HTML report's ETTR-vs-interval curve (at most the run's).
constexpr int kCurveReplicas = 32;

// The run section's Monte Carlo (none without one), with progress on stderr.
std::optional<RunOutcome> run_level(const Scenario& s, const StudyCluster& cluster,
                                    const StepOutcome& step, const RunOutputs& o,
                                    bool want_events) {
  if (!s.run) return std::nullopt;
  Progress states = command_progress(o.progress, "run " + s.name + " slow-GPU steps", "states");
  Progress progress = command_progress(o.progress, "run " + s.name, "replicas");
  RunOutcome out = simulate_run_level(s, cluster, step, o.threads, want_events, &progress, &states);
  print_run(s, out);
  return out;
}

// The critical rank's step split into its parts (the text report).
void print_breakdown(const StepResult& r) {
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
  row("host exposed", b.host_exposed);
  std::printf("  (closed-form bubble fraction (pp-1)/(vp·m) = %.3f)\n",
              r.bubble_fraction_closed_form);
  std::printf("  (launch-bound: the GPU waits for the host %.1f %% of the step)\n\n",
              r.launch_bound_fraction * 100);
}

int cmd_run_training(const Scenario& s, const StudyCluster& cluster, const std::string& out_dir,
                     const RunOutputs& o) {
  const std::string& trace_path = o.trace_path;
  const std::string& events_path = o.events_path;
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
  print_breakdown(r);
  if (!o.compare_trace.empty()) print_trace_comparison(r, o.compare_trace);
  print_memory(r.memory);
  if (run.moe) print_moe(*run.moe, w.par.ep);
  for (const auto& wmsg : r.warnings)
    std::printf("warning: %s\n", wmsg.c_str());
  const std::optional<RunOutcome> outcome = run_level(s, cluster, run, o, want_events);
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
                               std::min(s.run->replicas, kCurveReplicas), o.threads);
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

// A Chrome trace holds about 3 events per forward/backward pass (kernels and communication
// slices merged per pass); refused before simulating when it would exceed the limit.
void check_trace_size(const Scenario& s, const std::string& trace_path, const WorkLimits& limits) {
  if (trace_path.empty() || !s.training) return;
  const int64_t events = estimated_step_passes(*s.training) * 3;
  if (events > limits.max_trace_events) {
    throw InputError(s.file, "/workload/batch",
                     "--trace would write about " + std::to_string(events) +
                         " trace events (about " + std::to_string(events * 90 / 1000000) +
                         " MB); the limit is " + std::to_string(limits.max_trace_events) +
                         " (raise it with --max-trace-events)");
  }
}

}  // namespace

int cmd_run(const RunCli& o) {
  const RunOutputs& outputs = o.outputs;
  LoadOptions opt;
  opt.max_gpus = o.max_gpus;
  o.limits.apply(&opt);
  Scenario s = load_scenario(o.scenario, opt);
  check_trace_size(s, outputs.trace_path, o.limits);
  if (o.seed) s.seed = *o.seed;
  std::string out_dir = o.out_dir;
  const StudyCluster cluster = load_study_cluster(s, opt.data_dir);
  const Topology& topo = cluster.topo;
  if (out_dir.empty()) out_dir = "out/" + s.name;
  if (s.training) return cmd_run_training(s, cluster, out_dir, outputs);
  if (!outputs.events_path.empty() || !outputs.timeline_path.empty() || outputs.html ||
      !outputs.compare_trace.empty())
    throw InputError(s.file, "/workload",
                     "--events, --timeline, --html and --compare-trace need a training scenario");
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
  Progress progress = command_progress(outputs.progress, "run " + s.name, "sizes");
  for (const Bytes& size : w.sizes) {
    CollectiveResult r = simulate_scenario_collective(s, cluster, size);
    const auto done = static_cast<int64_t>(results.size()) + 1;
    const auto total = static_cast<int64_t>(w.sizes.size());
    progress.show(done, total, done, 0, done == total);
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

}  // namespace fleetsim
