// Capacity planning (`fleetsim plan`): searches instance type × count × parallel configuration,
// simulates one training step of each candidate (throughput, memory), runs the run-level Monte
// Carlo for the time to train under failures, and sizes a SageMaker Flexible Training Plan
// reservation for it.
//
// Training Plan rules (failures/sources/reliability-moe.md §5, AWS docs): capacity is
// reserved in whole days, 1–182 days per reserved-capacity segment; a longer plan is several
// segments, here back to back; instances are reclaimed from 30 minutes (the run section's
// termination notice) before a segment ends, which the run simulator models as a forced
// interruption with a checkpoint if one fits in the notice and a restart at the next segment;
// paid up front for the whole reservation. Offered quantities are 1, 2, 4, …, 64 instances per
// block, so a count is reported as its fewest blocks.
//
// Days for a candidate: each Monte Carlo run i, under a horizon of back-to-back max-length
// segments, finishes the token budget at t_i and then writes a final checkpoint (blocking + upload
// time w); it needs D_i = max(1, ceil((t_i + w + notice) / 1 day)) days. D is the confidence
// quantile (nearest rank) of D_i, runs that never finish counting as infinite. D is then checked
// with the exact reservation (D split into segments): the fraction of runs with t_i + w ≤
// D days − notice must reach the confidence, else D grows a day at a time.
// Cost = D × 24 × (count + spare instances) × price per instance-hour: the run's spare nodes
// (run.spares) are reserved beside the job's instances.
#pragma once

#include <string>
#include <vector>

#include "core/progress.h"
#include "scenario/plan_loader.h"
#include "study/run_level.h"

namespace fleetsim {

constexpr double kDayS = 86400;

// Segment lengths in days for a reservation of `days` (each 1..max_segment_days, the last
// holding the remainder). days >= 1.
std::vector<int> segment_layout(int days, int max_segment_days);
// Reservation segments (back to back, seconds) for a layout.
std::vector<ReservationSegment> reservation_segments(const std::vector<int>& layout_days);
// Days needed by a run finishing (final checkpoint included) at finish_s with reclaim notice.
int days_needed(double finish_s, double notice_s);
// Fewest Training Plan offerings (1, 2, 4, …, 64 instances each) that make up `count`.
int offering_blocks(int count);

enum class CandidateStatus { kOk, kInvalid, kOutOfMemory, kDoesNotFinish };
const char* to_string(CandidateStatus s);
// "$162.40M" from a million up, else whole dollars ("$10937").
std::string format_usd(double usd);

struct CandidateResult {
  std::string system;
  int count = 0;
  int gpus = 0;
  std::string parallelism;
  CandidateStatus status = CandidateStatus::kOk;
  std::string reason;  // invalid / out of memory / does not finish details
  double price_per_instance_hour = 0;
  std::string price_source;
  // Step simulation.
  double step_time_s = 0;
  double tokens_per_s_per_gpu = 0;
  double mfu = 0;
  double memory_gib = 0, hbm_gib = 0;
  double compute_s = 0, exposed_comm_s = 0, bubble_s = 0, other_s = 0;
  // Monte Carlo (status kOk or kDoesNotFinish).
  double ideal_days = 0;  // token budget at the healthy rate
  double ettr_mean = 0;
  double final_checkpoint_s = 0;
  std::vector<double> finish_days;  // per replica (final checkpoint included); inf = never
  double finish_p50_days = 0, finish_conf_days = 0;
  int days = 0;  // reserved
  std::vector<int> segments;
  int spare_instances = 0;      // holding the spare nodes the job's unused nodes do not cover
  int reserved_instances = 0;   // count + spare_instances: what is reserved and paid for
  int blocks = 0;               // Training Plan offerings making up reserved_instances
  double success_fraction = 0;  // runs done within the exact reservation
  double cost_usd = 0;
  double reserved_gpu_hours = 0, idle_gpu_hours = 0, lost_gpu_hours = 0;
  bool meets_deadline = false, within_budget = false;
  // ETTR against the checkpoint interval (the recommended candidates only; min(replicas, 32)
  // runs per point).
  EttrCurve ettr_curve;
  // MoE models: mean tokens per EP rank per micro-batch, [MoE layer][EP rank] (the routing of
  // the plan's workload; balanced routing gives a flat map).
  std::vector<std::vector<double>> moe_heatmap;
  std::string verdict;  // why it is not recommended (or "recommended")
};

struct PlanResult {
  std::string name;
  std::string file;
  double token_budget = 0;
  double confidence = 0.9;
  std::optional<double> deadline_days, budget_usd;
  int replicas = 0;
  uint64_t seed = 0;
  std::vector<CandidateResult> candidates;  // in plan-file order
  int cheapest = -1;  // cheapest meeting the deadline (and the budget) at the confidence
  int fastest = -1;   // fewest days within the budget
};

// Monte Carlo runs per point of a candidate's ETTR-vs-checkpoint-interval curve (at most the
// plan's replicas).
constexpr int kPlanCurveReplicas = 32;

// Runs the search; threads for the step simulations and Monte Carlo (0 = every core); results do
// not depend on it. `progress` (may be null) is told the candidates simulated. A candidate's
// InputError (a work limit of its Monte Carlo) is rethrown naming the candidate.
PlanResult run_plan(const PlanSpec& plan, const LoadOptions& load, int threads, Progress* progress);

}  // namespace fleetsim
