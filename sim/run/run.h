// Run-level simulator: a discrete-event loop over the days of a training run (step progress
// between events, checkpoints, hard failures, detection, node replacement from a spare pool,
// restart and checkpoint restore, gray failures and their detection by health checks, planned
// maintenance, reservation segments), and Monte Carlo over seeds in parallel threads.
//
// Metrics (README "Failures and checkpoints"): ETTR = useful tokens / (tokens/s of the healthy,
// full-size job × wall time), so a run without failures has ETTR = 1 − checkpoint blocking
// fraction exactly; goodput = useful tokens / wall time. Wall time splits exactly into the
// ideal time of the useful tokens plus the lost time by cause. Expected-value cross-checks:
// Kokolis et al. (HPCA 2025) E[ETTR] ≈ (1 − N r_f (u0 + Δ/2)) / (1 + w/Δ); Daly (2006).
//
// Times inside the loop are int64 microseconds (RunTime), so event order is exact; each replica
// draws from its own RNG streams derived from (seed, replica), so results do not depend on the
// thread count.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/progress.h"
#include "fault/fault.h"
#include "run/run_spec.h"

namespace fleetsim {

// The job as the run simulator sees it.
struct JobShape {
  int gpus = 1;
  int nodes = 1;
  int gpus_per_node = 1;
  int domain_nodes = 1;  // nodes per NVLink domain
  int dp = 1;
  int replicas_per_node = 1;  // data-parallel replicas with a GPU on one node
  double tokens_per_step = 1;
};

// Step times per distinct cluster state, computed before the Monte Carlo (memoized).
// A gray GPU state is keyed by the slowest GPU's clock in 5 % levels: synchronous training
// runs at the pace of its slowest rank.
struct StepTable {
  double healthy_s = 1;
  std::map<int, double> slow_gpu_s;  // level (speed × 20, 1..19) → step time
  double step_s(int level) const;
};
int speed_level(double speed);  // nearest 5 % level in [1, 20] (20 = healthy)
// Levels a run spec's gray GPU failures can produce.
std::vector<int> gray_levels(const RunSpec& spec);

enum class LostCause {
  kRework,
  kRestart,
  kCheckpoint,
  kDetection,
  kSpareWait,
  kReplacement,
  kDegraded,
  kHealthChecks,
  kMaintenance,
  kReservation,
  kCount
};
constexpr int kLostCauses = static_cast<int>(LostCause::kCount);
const char* to_string(LostCause c);

struct ReplicaResult {
  double wall_s = 0;
  double useful_tokens = 0;
  double ideal_s = 0;  // useful tokens at the healthy full-size rate
  bool reached_budget = false;
  double time_to_budget_s = 0;
  std::array<double, kLostCauses> lost_s{};
  std::vector<int> failures;  // per failure class
  int interruptions = 0;      // unexpected: hard failures and gray remediations
  int planned_interruptions = 0;
  int gray_onsets = 0, gray_detected = 0;
  int spares_used = 0;
  int checkpoints = 0, checkpoints_lost = 0;
  double ettr() const { return wall_s > 0 ? ideal_s / wall_s : 0; }
};

// One line of the event timeline (`fleetsim run --events`).
struct RunEvent {
  double t_s = 0;
  std::string kind;
  std::string detail;  // key=value pairs, space separated
};

// Checkpoint interval in training seconds for the spec (auto = Daly from the profile's job
// MTBF, the checkpoint's blocking cost and restart); 0 = no periodic checkpoints.
double resolved_interval_s(const RunSpec& spec, const JobShape& job, const StepTable& steps);

ReplicaResult simulate_replica(const RunSpec& spec, const JobShape& job, const StepTable& steps,
                               uint64_t seed, int replica, std::vector<RunEvent>* events);

// Events one replica of `spec` processes, estimated before the Monte Carlo for the work limit
// (--max-run-events) from the rates × units × wall time: 5 per hard failure (failure,
// detection, replacement, restart, resume) and per injected one, 2 per gray onset (onset, end)
// plus gray_consecutive + 1 health-check ticks for a GPU's when checks run, 2 per checkpoint
// (blocking end, upload), 2 per maintenance window and per reservation segment. The wall time
// is spec.duration_s, else the token budget at the healthy rate (a lower bound: failures
// lengthen it).
double estimated_replica_events(const RunSpec& spec, const JobShape& job, double healthy_step_s);

struct RunSummary {
  int replicas = 0;
  double healthy_step_s = 0;
  double tokens_per_s = 0;  // healthy, full size
  double interval_s = 0;    // checkpoint interval used (training time)
  double job_mtbf_h = 0;    // from the failure profile
  double ettr_mean = 0, ettr_p10 = 0, ettr_p50 = 0, ettr_p90 = 0;
  double goodput_tokens_per_s = 0;  // mean
  int reached_budget = 0;           // replicas that reached the token budget
  double time_to_budget_p50_s = 0, time_to_budget_p90_s = 0;  // over replicas that reached it
  double wall_mean_s = 0;
  std::array<double, kLostCauses> lost_mean_s{};
  std::vector<std::string> failure_components;
  std::vector<double> failures_mean;  // per failure class
  double interruptions_mean = 0, planned_mean = 0;
  double gray_onsets_mean = 0, gray_detected_mean = 0;
  double spares_used_mean = 0;
  double checkpoints_mean = 0, checkpoints_lost_mean = 0;
  std::vector<RunEvent> events;  // replica 0's timeline when asked for
};

// Runs spec.replicas replicas on `threads` threads (0 = hardware concurrency). Replica i uses
// streams derived from (seed, i); the summary is identical for every thread count. `progress`
// (may be null) is told the replicas done.
RunSummary run_monte_carlo(const RunSpec& spec, const JobShape& job, const StepTable& steps,
                           uint64_t seed, int threads, bool want_events,
                           Progress* progress = nullptr);

// The event timeline as JSON lines (fixed number formatting).
std::string run_events_jsonl(const std::vector<RunEvent>& events);

// Nearest-rank percentile of a sample (sorted copy); q in [0, 1].
double percentile(std::vector<double> v, double q);

}  // namespace fleetsim
