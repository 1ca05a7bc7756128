// One replica of the run-level simulation: a state machine of the job (training, checkpoint,
// detection, waiting for a spare, replacement, restart, checkpointless pause, maintenance,
// offline between reservation segments) driven by the earliest of its pending events.
#include <algorithm>
#include <cmath>
#include <limits>

#include "run/replica.h"

namespace fleetsim {
namespace run_internal {

Replica::Replica(const RunSpec& spec, const JobShape& job, const StepTable& steps, uint64_t seed,
                 int replica, std::vector<RunEvent>* events)
    : spec_(spec),
      job_(job),
      steps_(steps),
      events_(events),
      rng_fail_(Rng::stream(seed, "run/failures/" + std::to_string(replica))),
      rng_gray_(Rng::stream(seed, "run/gray/" + std::to_string(replica))),
      rng_repair_(Rng::stream(seed, "run/repair/" + std::to_string(replica))) {
  healthy_rate_ = job_.tokens_per_step / steps_.healthy_s;
  if (spec_.health.enabled)
    hc_frac_ = std::min(0.99, spec_.health.cost_s / spec_.health.interval_s);
  interval_s_ = resolved_interval_s(spec_, job_, steps_);
  costs_ = checkpoint_costs(spec_.checkpoint);
  res_.failures.assign(spec_.failures.classes.size(), 0);
  const int domains = std::max(1, job_.nodes / std::max(1, job_.domain_nodes));
  for (const auto& c : spec_.failures.classes) {
    const int64_t units = c.per == FaultUnit::kGpu      ? job_.gpus
                          : c.per == FaultUnit::kNode   ? job_.nodes
                          : c.per == FaultUnit::kDomain ? domains
                                                        : 1;
    procs_.emplace_back(units, c.rate_per_hour, c.weibull_shape, &rng_fail_);
  }
  for (const auto& g : spec_.gray)
    gray_next_.push_back(gray_gap(g));
  pool_ = spec_.recovery.spares;
  if (spec_.maintenance.interval_s > 0) next_maintenance_ = to_us(spec_.maintenance.interval_s);
  if (spec_.duration_s > 0) limit_ = to_us(spec_.duration_s);
  if (!spec_.reservation.segments.empty()) {
    const auto& first = spec_.reservation.segments.front();
    if (first.start_s > 0) set_phase(Phase::kOffline, kNever);
  }
  if (limit_ == kNever && spec_.token_budget > 0) {
    // Safety stop for hopeless configurations: 1000× the failure-free time.
    limit_ = to_us(std::max(3600.0, 1000.0 * spec_.token_budget / healthy_rate_));
  }
}

void Replica::log(const char* kind, const std::string& detail) {
  if (events_ != nullptr) events_->push_back({sec(t_), kind, detail});
}

int Replica::slow_level() const {
  int level = 20;
  for (const auto& g : grays_)
    if (g.kind == GrayKind::kGpuClock) level = std::min(level, g.level);
  return level;
}

double Replica::storage_speed() const {
  double s = 1.0;
  for (const auto& g : grays_)
    if (g.kind == GrayKind::kStorage) s = std::min(s, g.storage_speed);
  return s;
}

double Replica::step_s() const {
  return steps_.step_s(slow_level()) / (1.0 - hc_frac_);
}

double Replica::rate() const {
  const double active = static_cast<double>(job_.dp - dropped_) / job_.dp;
  return job_.tokens_per_step * active / step_s();
}

Us Replica::train_event_time() const {
  Us t = kNever;
  const double r = rate();
  if (spec_.token_budget > 0) t = t_ + to_us(std::max(0.0, (spec_.token_budget - tokens_) / r));
  if (interval_s_ > 0) t = std::min(t, t_ + std::max<Us>(0, to_us(until_checkpoint_s())));
  return t;
}

double Replica::until_checkpoint_s() const {
  if (spec_.checkpoint.interval_kind == IntervalKind::kSteps)
    return (static_cast<double>(spec_.checkpoint.interval_steps) - since_ckpt_steps_) * step_s();
  return interval_s_ - since_ckpt_s_;
}

Us Replica::next_tick() const {
  const Us h = to_us(spec_.health.interval_s);
  return (t_ / h + 1) * h;
}

Us Replica::detection_end() const {
  Us d = spec_.health.hard_detection_s > 0 ? t_ + to_us(spec_.health.hard_detection_s)
         : spec_.health.enabled            ? kNever
                                           : t_;
  if (spec_.health.enabled) d = std::min(d, next_tick());
  return d;
}

void Replica::advance(Us to) {
  const double dt = sec(to - t_);
  if (dt <= 0) return;
  switch (phase_) {
    case Phase::kTrain: {
      const double gained = rate() * dt;
      tokens_ += gained;
      since_ckpt_s_ += dt;
      since_ckpt_steps_ += dt / step_s();
      const double ideal = gained / healthy_rate_;
      lose(LostCause::kHealthChecks, dt * hc_frac_);
      lose(LostCause::kDegraded, std::max(0.0, dt * (1 - hc_frac_) - ideal));
      break;
    }
    case Phase::kCheckpoint:
      lose(after_ == AfterCheckpoint::kMaintenance ? LostCause::kMaintenance
                                                   : LostCause::kCheckpoint,
           dt);
      break;
    case Phase::kDetect:
      lose(LostCause::kDetection, dt);
      break;
    case Phase::kSpareWait:
      lose(LostCause::kSpareWait, dt);
      break;
    case Phase::kReplace:
      lose(LostCause::kReplacement, dt);
      break;
    case Phase::kRestart:
    case Phase::kPause:
      lose(LostCause::kRestart, dt);
      break;
    case Phase::kMaintenance:
      lose(LostCause::kMaintenance, dt);
      break;
    case Phase::kOffline:
      lose(LostCause::kReservation, dt);
      break;
    case Phase::kDone:
      break;
  }
  t_ = to;
}

NextEvent Replica::next_event() const {
  const auto& segs = spec_.reservation.segments;
  NextEvent e;
  auto consider = [&](Us t, EventKind k, size_t i) {
    if (t < e.t) e = {t, k, i};
  };
  consider(phase_ == Phase::kTrain ? train_event_time() : phase_end_, EventKind::kPhaseEnd, 0);
  for (size_t c = 0; c < procs_.size(); ++c)
    consider(to_us(procs_[c].next_s()), EventKind::kFailure, c);
  if (next_injected_ < spec_.injected.size())
    consider(to_us(spec_.injected[next_injected_].at_s), EventKind::kInjected, next_injected_);
  for (size_t g = 0; g < gray_next_.size(); ++g)
    consider(gray_next_[g], EventKind::kGrayOnset, g);
  for (size_t g = 0; g < grays_.size(); ++g)
    consider(grays_[g].end, EventKind::kGrayEnd, g);
  consider(upload_done_, EventKind::kUploadDone, 0);
  for (size_t i = 0; i < repairs_.size(); ++i)
    consider(repairs_[i], EventKind::kRepair, i);
  for (size_t i = 0; i < rejoins_.size(); ++i)
    consider(rejoins_[i].first, EventKind::kRejoin, i);
  if (spec_.health.enabled && phase_ == Phase::kTrain && slow_level() < 20)
    consider(next_tick(), EventKind::kHealthTick, 0);
  consider(next_maintenance_, EventKind::kMaintenance, 0);
  if (segment_ < segs.size()) {
    if (phase_ == Phase::kOffline) {
      consider(to_us(segs[segment_].start_s), EventKind::kSegmentStart, 0);
    } else {
      consider(to_us(segs[segment_].start_s + segs[segment_].duration_s -
                     spec_.reservation.termination_notice_s),
               EventKind::kSegmentNotice, 0);
    }
  }
  consider(limit_, EventKind::kLimit, 0);
  return e;
}

void Replica::dispatch(const NextEvent& e) {
  switch (e.kind) {
    case EventKind::kPhaseEnd:
      on_train_event();
      break;
    case EventKind::kFailure:
      on_sampled_failure(e.idx);
      break;
    case EventKind::kInjected:
      on_injected_failure();
      break;
    case EventKind::kGrayOnset:
      on_gray_onset(static_cast<int>(e.idx));
      break;
    case EventKind::kGrayEnd:
      on_gray_end(e.idx);
      break;
    case EventKind::kUploadDone:
      on_upload_done();
      break;
    case EventKind::kRepair:
      on_repair_return(e.idx);
      break;
    case EventKind::kRejoin:
      on_rejoin(e.idx);
      break;
    case EventKind::kHealthTick:
      on_health_tick();
      break;
    case EventKind::kMaintenance:
      on_maintenance();
      break;
    case EventKind::kSegmentStart:
      on_segment_start();
      break;
    case EventKind::kSegmentNotice:
      on_segment_notice();
      break;
    case EventKind::kLimit:
      set_phase(Phase::kDone, kNever);
      break;
    case EventKind::kNone:
      break;
  }
}

ReplicaResult Replica::run() {
  while (phase_ != Phase::kDone) {
    const NextEvent e = next_event();
    if (e.kind == EventKind::kNone) break;
    advance(e.t);
    dispatch(e);
  }
  res_.wall_s = sec(t_);
  res_.useful_tokens = tokens_;
  res_.ideal_s = tokens_ / healthy_rate_;
  return res_;
}

}  // namespace run_internal

using run_internal::Replica;

ReplicaResult simulate_replica(const RunSpec& spec, const JobShape& job, const StepTable& steps,
                               uint64_t seed, int replica, std::vector<RunEvent>* events) {
  Replica r(spec, job, steps, seed, replica, events);
  return r.run();
}

}  // namespace fleetsim
