// The run level of a training scenario: the step times of every cluster state its run section
// can reach (the step simulator, memoized before the Monte Carlo), the job's shape, and the Monte
// Carlo over days of failures, checkpoints and recovery (sim/run). Used by `fleetsim run`,
// sweeps, plans and the run benchmark.
#pragma once

#include <cstdint>
#include <vector>

#include "run/run.h"
#include "scenario/scenario.h"
#include "study/cluster.h"
#include "study/training_step.h"

namespace fleetsim {

struct RunOutcome {
  JobShape job;
  StepTable steps;
  RunSummary summary;
};

// Monte Carlo of the scenario's run section (s.run and s.training must be set) with `step`, the
// scenario's healthy step (simulate_training_step on the same cluster). threads: 0 = every core;
// results do not depend on it. want_events keeps replica 0's event list. InputError (/run)
// before anything runs when the estimated events exceed s.max_run_events. `progress` (may be
// null) is told the replicas done, `states` (may be null) the slow-GPU step states simulated
// before them (every rank each; InputError when one has more passes than s.max_passes).
RunOutcome simulate_run_level(const Scenario& s, const StudyCluster& cluster,
                              const StepOutcome& step, int threads, bool want_events,
                              Progress* progress = nullptr, Progress* states = nullptr);

// ETTR against the checkpoint interval (the run's failure model and checkpoint costs, the
// interval changed): points at the `auto` interval τ* (Daly's optimum for the blocking cost δ and
// the job MTBF, ≈ sqrt(2 δ MTBF), floored at the upload time; run.h resolved_interval_s) times
// 1/2 … 8, plus the run's own interval. τ* is 0 when the job has no failure rate; the grid is
// then around the run's own interval (30 min if none).
struct IntervalPoint {
  double interval_s = 0;
  double ettr_mean = 0, ettr_p10 = 0, ettr_p90 = 0;
};
struct EttrCurve {
  double auto_s = 0;                  // the `auto` interval (0 = not defined)
  double configured_s = 0;            // the run's own interval (0 = none)
  std::vector<IntervalPoint> points;  // by interval
};
EttrCurve ettr_vs_interval(const RunSpec& spec, const JobShape& job, const StepTable& steps,
                           uint64_t seed, int replicas, int threads);

}  // namespace fleetsim
