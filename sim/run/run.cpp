// Monte Carlo over replicas, the checkpoint interval actually used, percentiles, and the event
// timeline as JSON lines.
#include "run/run.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>

namespace fleetsim {

double StepTable::step_s(int level) const {
  if (level >= 20) return healthy_s;
  const auto it = slow_gpu_s.find(level);
  // Every level a run can produce is computed up front (gray_levels); a missing one is a bug.
  if (it == slow_gpu_s.end()) return healthy_s * 20.0 / level;
  return it->second;
}

int speed_level(double speed) {
  return std::clamp(static_cast<int>(std::lround(speed * 20.0)), 1, 20);
}

std::vector<int> gray_levels(const RunSpec& spec) {
  std::vector<int> out;
  for (const auto& g : spec.gray) {
    if (g.kind != GrayKind::kGpuClock || g.rate_per_hour <= 0) continue;
    for (int l = speed_level(g.speed_min); l <= speed_level(g.speed_max); ++l)
      if (l < 20 && std::find(out.begin(), out.end(), l) == out.end()) out.push_back(l);
  }
  std::sort(out.begin(), out.end());
  return out;
}

const char* to_string(LostCause c) {
  static const char* const kNames[kLostCauses] = {
      "rework",      "restart",  "checkpoint",    "detection",   "spare_wait",
      "replacement", "degraded", "health_checks", "maintenance", "reservation"};
  return kNames[static_cast<int>(c)];
}

double resolved_interval_s(const RunSpec& spec, const JobShape& job, const StepTable& steps) {
  const CheckpointSpec& c = spec.checkpoint;
  switch (c.interval_kind) {
    case IntervalKind::kNone:
      return 0;
    case IntervalKind::kMinutes:
      return c.interval_minutes * 60.0;
    case IntervalKind::kSteps:
      return static_cast<double>(c.interval_steps) * steps.healthy_s;
    case IntervalKind::kAuto: {
      const int domains = std::max(1, job.nodes / std::max(1, job.domain_nodes));
      const double rate_h = job_failure_rate_per_hour(spec.failures, job.gpus, job.nodes, domains);
      if (rate_h <= 0) return 0;
      const CheckpointCosts k = checkpoint_costs(c);
      // Not shorter than one upload (async) or one upload per persistent_every (tiered):
      // a checkpoint waits for the previous upload, so a shorter interval stalls training.
      double floor_s = steps.healthy_s;
      if (c.mode == CheckpointMode::kAsync) floor_s = std::max(floor_s, k.upload_s);
      if (c.mode == CheckpointMode::kTiered)
        floor_s = std::max(floor_s, k.upload_s / std::max(1, c.persistent_every));
      return std::max(floor_s, daly_interval_s(k.blocking_s, 3600.0 / rate_h));
    }
  }
  return 0;
}

double estimated_replica_events(const RunSpec& spec, const JobShape& job, double healthy_step_s) {
  StepTable steps;
  steps.healthy_s = healthy_step_s;
  const double tokens_per_s = job.tokens_per_step / healthy_step_s;
  const double wall_s = spec.duration_s > 0 ? spec.duration_s : spec.token_budget / tokens_per_s;
  const double hours = wall_s / 3600.0;
  const int domains = std::max(1, job.nodes / std::max(1, job.domain_nodes));
  double events =
      5.0 * (job_failure_rate_per_hour(spec.failures, job.gpus, job.nodes, domains) * hours +
             static_cast<double>(spec.injected.size()));
  for (const GrayFailureSpec& g : spec.gray) {
    const bool gpu = g.kind == GrayKind::kGpuClock;
    const double onsets = g.rate_per_hour * (gpu ? job.gpus : 1) * hours;
    const double ticks = gpu && spec.health.enabled ? spec.health.gray_consecutive + 1.0 : 0.0;
    events += onsets * (2.0 + ticks);
  }
  const double interval_s = resolved_interval_s(spec, job, steps);
  if (interval_s > 0) events += 2.0 * wall_s / interval_s;
  if (spec.maintenance.interval_s > 0) events += 2.0 * wall_s / spec.maintenance.interval_s;
  events += 2.0 * static_cast<double>(spec.reservation.segments.size());
  return events;
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

RunSummary run_monte_carlo(const RunSpec& spec, const JobShape& job, const StepTable& steps,
                           uint64_t seed, int threads, bool want_events, Progress* progress) {
  const int n = std::max(1, spec.replicas);
  std::atomic<int> finished{0};
  if (progress != nullptr) progress->begin();
  std::vector<ReplicaResult> results(n);
  RunSummary s;
  std::atomic<int> next{0};
  // The first exception a worker throws (std::bad_alloc) stops the others and is rethrown here:
  // out of a std::thread it would terminate the process.
  std::mutex mu;
  std::exception_ptr failure;
  auto worker = [&] {
    try {
      for (int i = next++; i < n; i = next++) {
        results[i] = simulate_replica(spec, job, steps, seed, i,
                                      (want_events && i == 0) ? &s.events : nullptr);
        const int done = ++finished;
        if (progress != nullptr) progress->show(done, n, done, 0, done == n);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lk(mu);
      if (!failure) failure = std::current_exception();
      next = n;
    }
  };
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::min(threads, n);
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (auto& t : pool)
    t.join();
  if (failure) std::rethrow_exception(failure);

  s.replicas = n;
  s.healthy_step_s = steps.healthy_s;
  s.tokens_per_s = job.tokens_per_step / steps.healthy_s;
  s.interval_s = resolved_interval_s(spec, job, steps);
  const int domains = std::max(1, job.nodes / std::max(1, job.domain_nodes));
  const double rate_h = job_failure_rate_per_hour(spec.failures, job.gpus, job.nodes, domains);
  s.job_mtbf_h = rate_h > 0 ? 1.0 / rate_h : 0;
  std::vector<double> ettr, ttb;
  const size_t classes = spec.failures.classes.size();
  s.failures_mean.assign(classes, 0);
  for (const auto& c : spec.failures.classes)
    s.failure_components.push_back(c.component);
  const double inv = 1.0 / n;
  for (const auto& r : results) {
    ettr.push_back(r.ettr());
    if (r.reached_budget) ttb.push_back(r.time_to_budget_s);
    s.ettr_mean += r.ettr() * inv;
    s.goodput_tokens_per_s += (r.wall_s > 0 ? r.useful_tokens / r.wall_s : 0) * inv;
    s.wall_mean_s += r.wall_s * inv;
    for (int c = 0; c < kLostCauses; ++c)
      s.lost_mean_s[c] += r.lost_s[c] * inv;
    for (size_t c = 0; c < classes; ++c)
      s.failures_mean[c] += r.failures[c] * inv;
    s.interruptions_mean += r.interruptions * inv;
    s.planned_mean += r.planned_interruptions * inv;
    s.gray_onsets_mean += r.gray_onsets * inv;
    s.gray_detected_mean += r.gray_detected * inv;
    s.spares_used_mean += r.spares_used * inv;
    s.checkpoints_mean += r.checkpoints * inv;
    s.checkpoints_lost_mean += r.checkpoints_lost * inv;
  }
  s.ettr_p10 = percentile(ettr, 0.1);
  s.ettr_p50 = percentile(ettr, 0.5);
  s.ettr_p90 = percentile(ettr, 0.9);
  s.reached_budget = static_cast<int>(ttb.size());
  s.time_to_budget_p50_s = percentile(ttb, 0.5);
  s.time_to_budget_p90_s = percentile(ttb, 0.9);
  return s;
}

std::string run_events_jsonl(const std::vector<RunEvent>& events) {
  std::string out;
  char buf[96];
  for (const auto& e : events) {
    std::snprintf(buf, sizeof buf, "{\"t_s\":%.3f,\"event\":\"", e.t_s);
    out += buf;
    out += e.kind;
    out += '"';
    // detail: space-separated key=value; numbers stay numbers, the rest become strings.
    size_t pos = 0;
    while (pos < e.detail.size()) {
      size_t end = e.detail.find(' ', pos);
      if (end == std::string::npos) end = e.detail.size();
      const std::string kv = e.detail.substr(pos, end - pos);
      const size_t eq = kv.find('=');
      if (eq != std::string::npos) {
        const std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
        const bool numeric =
            !v.empty() && v.find_first_not_of("0123456789.-e+") == std::string::npos && v != "-";
        out += ",\"" + k + "\":" + (numeric ? v : "\"" + v + "\"");
      }
      pos = end + 1;
    }
    out += "}\n";
  }
  return out;
}

}  // namespace fleetsim
