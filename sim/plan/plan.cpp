// The capacity-plan search (plan.h): step simulation per candidate, run-level Monte Carlo under a
// horizon of Training Plan segments, day rounding, exact-reservation check, recommendations.
#include "plan/plan.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>
#include <map>
#include <new>
#include <thread>

#include "core/error.h"
#include "study/cluster.h"
#include "study/memory.h"
#include "study/run_level.h"
#include "study/training_step.h"

namespace fleetsim {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kGiB = 1024.0 * 1024 * 1024;

// t_i + final checkpoint per replica (inf when the budget is not reached).
std::vector<double> finish_times(const RunSpec& spec, const JobShape& job, const StepTable& steps,
                                 uint64_t seed, double final_ckpt_s) {
  std::vector<double> out(spec.replicas);
  for (int i = 0; i < spec.replicas; ++i) {
    const ReplicaResult r = simulate_replica(spec, job, steps, seed, i, nullptr);
    out[i] = r.reached_budget ? r.time_to_budget_s + final_ckpt_s : kInf;
  }
  return out;
}

double success_fraction(const std::vector<double>& finish_s, int days, double notice_s) {
  int ok = 0;
  for (double f : finish_s)
    if (f <= days * kDayS - notice_s) ++ok;
  return finish_s.empty() ? 0 : static_cast<double>(ok) / static_cast<double>(finish_s.size());
}

// Back-to-back max-length segments up to the plan's max_days.
void set_horizon(const PlanSpec& plan, RunSpec* spec) {
  const int horizon_segments = (plan.max_days + plan.max_segment_days - 1) / plan.max_segment_days;
  spec->reservation.segments =
      reservation_segments(std::vector<int>(horizon_segments, plan.max_segment_days));
}

// Throughput, memory and time breakdown of the candidate's step.
void record_step(const StepResult& r, CandidateResult* out) {
  out->step_time_s = r.step_time_s;
  out->tokens_per_s_per_gpu = r.tokens_per_s_per_gpu;
  out->mfu = r.mfu;
  out->memory_gib = static_cast<double>(r.memory.total) / kGiB;
  out->hbm_gib = static_cast<double>(r.memory.capacity) / kGiB;
  const TimeBreakdown& b = r.breakdown;
  out->compute_s = b.compute + b.optimizer;
  out->exposed_comm_s = b.tp_exposed + b.cp_exposed + b.ep_exposed + b.pp_exposed + b.dp_exposed;
  out->bubble_s = b.bubble;
  out->other_s = r.step_time_s - out->compute_s - out->exposed_comm_s - b.bubble;
  if (out->other_s < 1e-9 * r.step_time_s) out->other_s = 0;  // rounding leftovers
}

// The candidate's scenario (*s = s0) under a horizon of back-to-back max-length segments, and its
// step table and job shape (one replica; the replicas run from them).
RunOutcome horizon_run(const PlanSpec& plan, const Scenario& s0, const StudyCluster& cluster,
                       const StepOutcome& step, Scenario* s) {
  *s = s0;
  RunSpec& spec = *s->run;
  set_horizon(plan, &spec);
  spec.replicas = 1;
  return simulate_run_level(*s, cluster, step, 1, false);
}

// The days D at the confidence, checked with the exact reservation and grown a day at a time
// when a segment boundary costs more; 0 (with out->status and reason set) when the candidate
// does not finish.
int reservation_days(const PlanSpec& plan, const RunSpec& spec, const RunOutcome& base,
                     uint64_t seed, const std::vector<double>& need, CandidateResult* out) {
  const double notice_s = spec.reservation.termination_notice_s;
  const double d_conf = percentile(need, plan.confidence);
  if (!(d_conf <= plan.max_days)) {
    out->status = CandidateStatus::kDoesNotFinish;
    char buf[160];
    std::snprintf(buf, sizeof buf, "does not finish within max_days (%d) in %.0f %% of the runs",
                  plan.max_days, plan.confidence * 100);
    out->reason = buf;
    return 0;
  }
  int days = static_cast<int>(d_conf);
  for (int tries = 0;; ++tries) {
    RunSpec exact = spec;
    exact.reservation.segments = reservation_segments(segment_layout(days, plan.max_segment_days));
    const std::vector<double> f_exact =
        finish_times(exact, base.job, base.steps, seed, out->final_checkpoint_s);
    out->success_fraction = success_fraction(f_exact, days, notice_s);
    if (out->success_fraction + 1e-12 >= plan.confidence) break;
    if (tries >= 30 || days >= plan.max_days) {
      out->status = CandidateStatus::kDoesNotFinish;
      out->reason = "the exact reservation does not reach the confidence";
      return 0;
    }
    ++days;
  }
  return days;
}

// Instances reserved (the job's and the spare nodes'), cost and GPU-hours of a reservation of
// `days` days; fin: the finish times of the Monte Carlo runs.
void price_reservation(const PlanCandidate& pc, const RunSpec& spec, int days,
                       const std::vector<double>& fin, CandidateResult* out) {
  const Scenario& s0 = *pc.scenario;
  const TrainingWorkload& w = *s0.training;
  // The spare nodes are reserved too: first the nodes of the reserved units the job leaves
  // unused (gpus_per_unit), then whole instances (UltraServers) holding the rest.
  const int unit_nodes = std::max(1, s0.system.unit_nodes);
  const int gpn = std::max(1, s0.system.node.gpus);
  const int free_nodes = std::max(0, s0.nodes - (w.gpus + gpn - 1) / gpn);
  const int extra = std::max(0, spec.recovery.spares - free_nodes);
  out->spare_instances = (extra + unit_nodes - 1) / unit_nodes;
  out->reserved_instances = pc.count + out->spare_instances;
  out->blocks = offering_blocks(out->reserved_instances);
  out->cost_usd = days * 24.0 * out->reserved_instances * out->price_per_instance_hour;
  out->reserved_gpu_hours =
      days * 24.0 * out->reserved_instances * s0.system.node.gpus * s0.system.unit_nodes;
  double mean_finish = 0;
  int n = 0;
  for (double f : fin)
    if (f < kInf) mean_finish += f, ++n;
  mean_finish = n > 0 ? mean_finish / n : 0;
  out->lost_gpu_hours = std::max(0.0, mean_finish - out->ideal_days * kDayS) * out->gpus / 3600;
  out->idle_gpu_hours = std::max(0.0, days * kDayS - mean_finish) * out->gpus / 3600;
}

void simulate_candidate(const PlanSpec& plan, const PlanCandidate& pc, const LoadOptions& load,
                        CandidateResult* out) {
  const Scenario& s0 = *pc.scenario;
  out->gpus = s0.training->gpus;
  const StudyCluster cluster = load_study_cluster(s0, load.data_dir);
  const StepOutcome step = simulate_training_step(s0, cluster, /*want_trace=*/false);
  const StepResult& r = step.result;
  if (step.moe) out->moe_heatmap = step.moe->summary.heatmap;
  record_step(r, out);
  if (!r.memory.fits) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "out of memory: needs %.1f GiB per GPU, HBM has %.1f GiB",
                  static_cast<double>(r.memory.reserved + r.memory.device_overhead) / kGiB,
                  out->hbm_gib);
    out->status = CandidateStatus::kOutOfMemory;
    out->reason = buf;
    // The cheapest single changes that fit (workload/memory_advice.h), at most three.
    const std::vector<MemoryFix> fixes = scenario_memory_fixes(s0);
    for (size_t i = 0; i < fixes.size() && i < 3; ++i) {
      std::snprintf(
          buf, sizeof buf, "%s %s (%.1f GiB)", i == 0 ? "; fits with" : ",",
          fixes[i].change.c_str(),
          static_cast<double>(fixes[i].result.reserved + fixes[i].result.device_overhead) / kGiB);
      out->reason += buf;
    }
    return;
  }
  // Run-level Monte Carlo under a horizon of back-to-back max-length segments.
  Scenario s;
  const RunOutcome base = horizon_run(plan, s0, cluster, step, &s);
  RunSpec& spec = *s.run;
  const double notice_s = spec.reservation.termination_notice_s;
  spec.replicas = plan.replicas;
  const CheckpointCosts k = checkpoint_costs(spec.checkpoint);
  out->final_checkpoint_s = k.blocking_s + k.upload_s;
  out->ideal_days = plan.token_budget / base.summary.tokens_per_s / kDayS;
  const std::vector<double> fin =
      finish_times(spec, base.job, base.steps, s.seed, out->final_checkpoint_s);
  double ettr = 0;
  for (double f : fin)
    if (f < kInf) ettr += out->ideal_days * kDayS / (f - out->final_checkpoint_s);
  out->ettr_mean = ettr / static_cast<double>(fin.size());
  std::vector<double> need;
  for (double f : fin) {
    out->finish_days.push_back(f < kInf ? f / kDayS : kInf);
    need.push_back(f < kInf ? days_needed(f, notice_s) : kInf);
  }
  out->finish_p50_days = percentile(out->finish_days, 0.5);
  out->finish_conf_days = percentile(out->finish_days, plan.confidence);
  const int days = reservation_days(plan, spec, base, s.seed, need, out);
  if (days == 0) return;
  out->days = days;
  out->segments = segment_layout(days, plan.max_segment_days);
  price_reservation(pc, spec, days, fin, out);
}

// ETTR vs checkpoint interval of one candidate, under the same horizon as simulate_candidate.
EttrCurve candidate_ettr_curve(const PlanSpec& plan, const PlanCandidate& pc,
                               const LoadOptions& load, int threads) {
  const Scenario& s0 = *pc.scenario;
  const StudyCluster cluster = load_study_cluster(s0, load.data_dir);
  const StepOutcome step = simulate_training_step(s0, cluster, /*want_trace=*/false);
  Scenario s;
  const RunOutcome base = horizon_run(plan, s0, cluster, step, &s);
  return ettr_vs_interval(*s.run, base.job, base.steps, s.seed,
                          std::min(plan.replicas, kPlanCurveReplicas), threads);
}

}  // namespace

std::vector<int> segment_layout(int days, int max_segment_days) {
  FLEETSIM_ASSERT(days >= 1 && max_segment_days >= 1);
  std::vector<int> out;
  for (int left = days; left > 0; left -= max_segment_days)
    out.push_back(std::min(left, max_segment_days));
  return out;
}

std::vector<ReservationSegment> reservation_segments(const std::vector<int>& layout_days) {
  std::vector<ReservationSegment> out;
  double start = 0;
  for (int d : layout_days) {
    out.push_back({start, d * kDayS});
    start += d * kDayS;
  }
  return out;
}

int days_needed(double finish_s, double notice_s) {
  return std::max(1, static_cast<int>(std::ceil((finish_s + notice_s) / kDayS - 1e-9)));
}

int offering_blocks(int count) {
  int blocks = count / 64;
  for (int r = count % 64; r > 0; r &= r - 1)
    ++blocks;
  return blocks;
}

std::string format_usd(double usd) {
  char buf[64];
  if (usd >= 1e6) {
    std::snprintf(buf, sizeof buf, "$%.2fM", usd / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "$%.0f", usd);
  }
  return buf;
}

const char* to_string(CandidateStatus s) {
  switch (s) {
    case CandidateStatus::kOk:
      return "ok";
    case CandidateStatus::kInvalid:
      return "invalid";
    case CandidateStatus::kOutOfMemory:
      return "out_of_memory";
    case CandidateStatus::kDoesNotFinish:
      return "does_not_finish";
  }
  return "?";
}

namespace {

// The result before any simulation: the plan's header and one row per candidate (invalid
// layouts marked).
PlanResult plan_rows(const PlanSpec& plan) {
  PlanResult res;
  res.name = plan.name;
  res.file = plan.file;
  res.token_budget = plan.token_budget;
  res.confidence = plan.confidence;
  res.deadline_days = plan.deadline_days;
  res.budget_usd = plan.budget_usd;
  res.replicas = plan.replicas;
  res.seed = plan.seed;
  res.candidates.resize(plan.candidates.size());
  for (size_t i = 0; i < plan.candidates.size(); ++i) {
    const PlanCandidate& pc = plan.candidates[i];
    CandidateResult& c = res.candidates[i];
    c.system = pc.system;
    c.count = pc.count;
    c.parallelism = plan.parallel_labels[pc.par_index];
    c.price_per_instance_hour = plan.prices.at(pc.system).usd_per_instance_hour;
    c.price_source = plan.prices.at(pc.system).source;
    if (!pc.scenario) {
      c.status = CandidateStatus::kInvalid;
      c.reason = "invalid layout: " + pc.invalid;
    }
  }
  return res;
}

// Simulates every valid candidate on `threads` threads (<= 0: every core).
void simulate_candidates(const PlanSpec& plan, const LoadOptions& load, int threads,
                         Progress* progress, PlanResult* out) {
  PlanResult& res = *out;
  // Candidates are independent; each writes only its own slot, so the thread count cannot
  // change a result.
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<size_t> next{0};
  std::atomic<int64_t> finished{0};
  const auto total = static_cast<int64_t>(plan.candidates.size());
  std::vector<std::exception_ptr> errors(plan.candidates.size());
  auto worker = [&] {
    for (size_t i = next++; i < plan.candidates.size(); i = next++) {
      if (plan.candidates[i].scenario) {
        try {
          simulate_candidate(plan, plan.candidates[i], load, &res.candidates[i]);
        } catch (...) {
          errors[i] = std::current_exception();
        }
      }
      const int64_t done = ++finished;
      if (progress != nullptr) progress->show(done, total, done, 0, done == total);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (auto& t : pool)
    t.join();
  for (size_t i = 0; i < errors.size(); ++i) {
    if (!errors[i]) continue;
    const auto& c = res.candidates[i];
    const std::string which =
        "candidate " + c.system + " ×" + std::to_string(c.count) + " " + c.parallelism + ": ";
    try {
      std::rethrow_exception(errors[i]);
    } catch (const InputError& e) {  // a work limit of its run level: the user's to raise
      throw InputError(e.file(), e.pointer(), which + e.message());
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& e) {
      throw InternalError(which + e.what());
    }
  }
}

// The cheapest candidate meeting the deadline and the fastest within the budget.
void recommend(const PlanSpec& plan, PlanResult* out) {
  PlanResult& res = *out;
  for (size_t i = 0; i < res.candidates.size(); ++i) {
    CandidateResult& c = res.candidates[i];
    if (c.status != CandidateStatus::kOk) continue;
    c.meets_deadline = !plan.deadline_days || c.days <= *plan.deadline_days;
    c.within_budget = !plan.budget_usd || c.cost_usd <= *plan.budget_usd;
    const int idx = static_cast<int>(i);
    if (c.meets_deadline && c.within_budget) {
      const CandidateResult* b = res.cheapest >= 0 ? &res.candidates[res.cheapest] : nullptr;
      if (!b || c.cost_usd < b->cost_usd || (c.cost_usd == b->cost_usd && c.days < b->days))
        res.cheapest = idx;
    }
    if (c.within_budget) {
      const CandidateResult* b = res.fastest >= 0 ? &res.candidates[res.fastest] : nullptr;
      if (!b || c.days < b->days || (c.days == b->days && c.cost_usd < b->cost_usd))
        res.fastest = idx;
    }
  }
}

// One line per candidate saying why it is or is not recommended.
void write_verdicts(const PlanSpec& plan, PlanResult* out) {
  PlanResult& res = *out;
  for (size_t i = 0; i < res.candidates.size(); ++i) {
    CandidateResult& c = res.candidates[i];
    const int idx = static_cast<int>(i);
    if (c.status != CandidateStatus::kOk) {
      c.verdict = c.reason;
    } else if (idx == res.cheapest && idx == res.fastest) {
      c.verdict = "recommended: cheapest meeting the deadline, and fastest within the budget";
    } else if (idx == res.cheapest) {
      c.verdict = "recommended: cheapest meeting the deadline";
    } else if (idx == res.fastest) {
      c.verdict = "fastest within the budget";
    } else if (!c.meets_deadline) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "too slow: %d days > deadline %.0f days", c.days,
                    *plan.deadline_days);
      c.verdict = buf;
    } else if (!c.within_budget) {
      c.verdict =
          "too expensive: " + format_usd(c.cost_usd) + " > budget " + format_usd(*plan.budget_usd);
    } else {
      const CandidateResult& best = res.candidates[res.cheapest];
      if (c.cost_usd - best.cost_usd < 0.5) {
        c.verdict = "same cost as the recommendation, " + std::to_string(c.days - best.days) +
                    " more day(s)";
      } else {
        c.verdict =
            "costs " + format_usd(c.cost_usd - best.cost_usd) + " more than the recommendation";
      }
    }
  }
}

}  // namespace

PlanResult run_plan(const PlanSpec& plan, const LoadOptions& load_in, int threads,
                    Progress* progress) {
  LoadOptions load = load_in;
  if (load.data_dir.empty()) load.data_dir = default_data_dir();
  PlanResult res = plan_rows(plan);
  simulate_candidates(plan, load, threads, progress, &res);

  recommend(plan, &res);
  // ETTR against the checkpoint interval for the recommendations (the report's chart).
  for (int idx : {res.cheapest, res.fastest})
    if (idx >= 0 && res.candidates[idx].ettr_curve.points.empty())
      res.candidates[idx].ettr_curve =
          candidate_ettr_curve(plan, plan.candidates[idx], load, threads);
  write_verdicts(plan, &res);
  return res;
}

}  // namespace fleetsim
