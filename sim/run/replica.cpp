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
  for (const auto& g : spec_.gray) {
    const double per_hour = g.rate_per_hour * (g.kind == GrayKind::kGpuClock ? job_.gpus : 1);
    gray_next_.push_back(per_hour > 0 ? to_us(rng_gray_.exponential(3600.0 / per_hour)) : kNever);
  }
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
  if (interval_s_ > 0) {
    double left = 0;
    if (spec_.checkpoint.interval_kind == IntervalKind::kSteps) {
      left = (static_cast<double>(spec_.checkpoint.interval_steps) - since_ckpt_steps_) * step_s();
    } else {
      left = interval_s_ - since_ckpt_s_;
    }
    t = std::min(t, t_ + std::max<Us>(0, to_us(left)));
  }
  return t;
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

ReplicaResult Replica::run() {
  const auto& segs = spec_.reservation.segments;
  while (phase_ != Phase::kDone) {
    Us best = kNever;
    int kind = -1;
    size_t idx = 0;
    auto consider = [&](Us t, int k, size_t i) {
      if (t < best) {
        best = t;
        kind = k;
        idx = i;
      }
    };
    consider(phase_ == Phase::kTrain ? train_event_time() : phase_end_, 0, 0);
    for (size_t c = 0; c < procs_.size(); ++c)
      consider(to_us(procs_[c].next_s()), 1, c);
    if (next_injected_ < spec_.injected.size())
      consider(to_us(spec_.injected[next_injected_].at_s), 2, next_injected_);
    for (size_t g = 0; g < gray_next_.size(); ++g)
      consider(gray_next_[g], 3, g);
    for (size_t g = 0; g < grays_.size(); ++g)
      consider(grays_[g].end, 4, g);
    consider(upload_done_, 5, 0);
    for (size_t i = 0; i < repairs_.size(); ++i)
      consider(repairs_[i], 6, i);
    for (size_t i = 0; i < rejoins_.size(); ++i)
      consider(rejoins_[i].first, 7, i);
    if (spec_.health.enabled && phase_ == Phase::kTrain && slow_level() < 20)
      consider(next_tick(), 8, 0);
    consider(next_maintenance_, 9, 0);
    if (segment_ < segs.size()) {
      if (phase_ == Phase::kOffline) {
        consider(to_us(segs[segment_].start_s), 10, 0);
      } else {
        consider(to_us(segs[segment_].start_s + segs[segment_].duration_s -
                       spec_.reservation.termination_notice_s),
                 11, 0);
      }
    }
    consider(limit_, 12, 0);
    if (kind < 0) break;
    advance(best);
    switch (kind) {
      case 0:
        if (phase_ == Phase::kTrain) {
          on_phase_end_train();
        } else {
          on_phase_end();
        }
        break;
      case 1: {
        int64_t unit = procs_[idx].fire(&rng_fail_);
        if (spec_.failures.classes[idx].per == FaultUnit::kJob)
          unit = static_cast<int64_t>(rng_fail_.uniform_below(static_cast<uint64_t>(job_.nodes)));
        on_failure(static_cast<int>(idx), nodes_of(static_cast<int>(idx), unit));
        break;
      }
      case 2: {
        const InjectedFailure& f = spec_.injected[next_injected_++];
        std::vector<int> nodes;
        const FailureClass& c = spec_.failures.classes[f.failure_class];
        if (c.takes_down != FaultUnit::kJob) {
          const int first = c.takes_down == FaultUnit::kDomain
                                ? f.node / job_.domain_nodes * job_.domain_nodes
                                : f.node;
          const int count = c.takes_down == FaultUnit::kDomain ? job_.domain_nodes : 1;
          for (int i = 0; i < count && first + i < job_.nodes; ++i)
            nodes.push_back(first + i);
        }
        on_failure(f.failure_class, nodes);
        break;
      }
      case 3:
        on_gray_onset(static_cast<int>(idx));
        break;
      case 4:
        log("gray_end", "node=" + std::to_string(grays_[idx].node));
        grays_.erase(grays_.begin() + static_cast<std::ptrdiff_t>(idx));
        if (slow_level() == 20) gray_consecutive_ = 0;
        break;
      case 5:
        durable_tokens_ = std::max(durable_tokens_, upload_tokens_);
        upload_done_ = kNever;
        log("checkpoint_durable", "tokens=" + std::to_string(static_cast<int64_t>(upload_tokens_)));
        break;
      case 6:
        repairs_.erase(repairs_.begin() + static_cast<std::ptrdiff_t>(idx));
        ++pool_;
        try_rejoin();
        if (phase_ == Phase::kSpareWait) start_recovery();
        break;
      case 7:
        dropped_ = std::max(0, dropped_ - rejoins_[idx].second);
        rejoins_.erase(rejoins_.begin() + static_cast<std::ptrdiff_t>(idx));
        log("rejoin", "replicas_running=" + std::to_string(job_.dp - dropped_));
        break;
      case 8:
        on_health_tick();
        break;
      case 9:
        next_maintenance_ += to_us(spec_.maintenance.interval_s);
        if (phase_ == Phase::kTrain) start_checkpoint(AfterCheckpoint::kMaintenance);
        break;
      case 10:
        restore_from_memory_ = false;
        log("segment_start", "segment=" + std::to_string(segment_));
        begin_restart();
        break;
      case 11:
        on_segment_notice();
        break;
      case 12:
        set_phase(Phase::kDone, kNever);
        break;
      default:
        break;
    }
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
