// The run level of a training scenario (run_level.h): step table, job shape, Monte Carlo, and
// the ETTR-vs-checkpoint-interval curve.
#include "study/run_level.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.h"
#include "run/step_table.h"

namespace fleetsim {

namespace {

// The work limit of the Monte Carlo (LoadOptions::max_run_events), before any step state or
// replica runs.
void check_run_events(const Scenario& s, const JobShape& job, double healthy_step_s) {
  const RunSpec& spec = *s.run;
  const double per_replica = estimated_replica_events(spec, job, healthy_step_s);
  const double events = per_replica * std::max(1, spec.replicas);
  if (!(events > static_cast<double>(s.max_run_events))) return;
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "the Monte Carlo would process about %.3g run-level events (%.3g per replica "
                "from the failure, gray-failure, checkpoint and maintenance rates × %d GPUs × "
                "the run's wall time, × %d replicas); the limit is %lld (raise it with "
                "--max-run-events)",
                events, per_replica, job.gpus, std::max(1, spec.replicas),
                static_cast<long long>(s.max_run_events));
  throw InputError(s.file, "/run", buf);
}

// The slow-GPU states simulate every rank (no symmetry): each against LoadOptions::max_passes.
void check_state_passes(const Scenario& s) {
  if (gray_levels(*s.run).empty()) return;
  TrainingWorkload every_rank = *s.training;
  every_rank.symmetry = false;
  const int64_t passes = estimated_step_passes(every_rank);
  if (passes <= s.max_passes) return;
  throw InputError(s.file, "/run/gray_failures",
                   "each of the " + std::to_string(gray_levels(*s.run).size()) +
                       " slow-GPU step states simulates every rank: " + std::to_string(passes) +
                       " forward/backward passes; the limit is " + std::to_string(s.max_passes) +
                       " (raise it with --max-passes)");
}

}  // namespace

RunOutcome simulate_run_level(const Scenario& s, const StudyCluster& cluster,
                              const StepOutcome& step, int threads, bool want_events,
                              Progress* progress, Progress* states) {
  FLEETSIM_ASSERT(s.training.has_value() && s.run.has_value() && cluster.compute != nullptr);
  const TrainingWorkload& w = *s.training;
  const RunSpec& spec = *s.run;
  RunOutcome out;
  out.job = job_shape(w.par, s.system.node.gpus, s.system.scale_up.domain_nodes);
  check_run_events(s, out.job, step.result.step_time_s);
  check_state_passes(s);
  // The step's own input, so slow-GPU states differ from the healthy step only in gpu_speed.
  out.steps = build_step_table(spec, step.input, step.result.step_time_s, cluster.topo,
                               cluster.collective, *cluster.compute, states);
  out.summary = run_monte_carlo(spec, out.job, out.steps, s.seed, threads, want_events, progress);
  return out;
}

EttrCurve ettr_vs_interval(const RunSpec& spec, const JobShape& job, const StepTable& steps,
                           uint64_t seed, int replicas, int threads) {
  EttrCurve out;
  out.configured_s = resolved_interval_s(spec, job, steps);
  RunSpec auto_spec = spec;
  auto_spec.checkpoint.interval_kind = IntervalKind::kAuto;
  out.auto_s = resolved_interval_s(auto_spec, job, steps);
  const double center = out.auto_s > 0         ? out.auto_s
                        : out.configured_s > 0 ? out.configured_s
                                               : 1800;
  std::vector<double> grid;
  for (double f : {0.5, 1.0, 2.0, 4.0, 8.0})
    grid.push_back(std::max(steps.healthy_s, center * f));
  if (out.configured_s > 0) grid.push_back(out.configured_s);
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end(),
                         [](double a, double b) { return std::abs(a - b) <= 1e-9 * b; }),
             grid.end());
  for (double tau : grid) {
    RunSpec r = spec;
    r.replicas = std::max(1, replicas);
    r.checkpoint.interval_kind = IntervalKind::kMinutes;
    r.checkpoint.interval_minutes = tau / 60.0;
    const RunSummary m = run_monte_carlo(r, job, steps, seed, threads, false);
    out.points.push_back({tau, m.ettr_mean, m.ettr_p10, m.ettr_p90});
  }
  return out;
}

}  // namespace fleetsim
