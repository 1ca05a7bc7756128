// One replica of the run-level simulation: a state machine of the job (training, checkpoint,
// detection, waiting for a spare, replacement, restart, checkpointless pause, maintenance,
// offline between reservation segments) driven by the earliest of its pending events.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/rng.h"
#include "run/failure_process.h"
#include "run/run.h"

namespace fleetsim {
namespace {

using Us = int64_t;  // run-level time: microseconds since the start of the run
constexpr Us kNever = std::numeric_limits<int64_t>::max();
Us to_us(double s) {
  return (!std::isfinite(s) || s >= 9.0e12) ? kNever : std::llround(s * 1e6);
}
double sec(Us u) {
  return static_cast<double>(u) * 1e-6;
}

enum class Phase {
  kTrain,
  kCheckpoint,
  kDetect,
  kSpareWait,
  kReplace,
  kRestart,
  kPause,
  kMaintenance,
  kOffline,
  kDone
};

// What follows a checkpoint that was not periodic.
enum class AfterCheckpoint { kTrain, kReplaceGray, kMaintenance };

struct Gray {
  GrayKind kind;
  int node;
  int level;
  double storage_speed;
  Us end;
};

class Replica {
 public:
  Replica(const RunSpec& spec, const JobShape& job, const StepTable& steps, uint64_t seed,
          int replica, std::vector<RunEvent>* events);
  ReplicaResult run();

 private:
  // Event handlers.
  void advance(Us to);
  void on_train_event();
  void on_phase_end();
  void on_failure(int cls, const std::vector<int>& nodes);
  void on_phase_end_train();
  void try_rejoin();
  void on_gray_onset(int g);
  void on_health_tick();
  void on_repair_return();
  void on_maintenance();
  void on_segment_notice();
  void on_segment_start();
  // Transitions.
  void start_checkpoint(AfterCheckpoint after);
  void finish_checkpoint();
  void start_recovery();
  void begin_restart();
  void rollback();
  void set_phase(Phase p, Us end) {
    phase_ = p;
    phase_end_ = end;
  }
  // State queries.
  int slow_level() const;
  double storage_speed() const;
  double step_s() const;
  double rate() const;  // tokens per second while training
  Us train_event_time() const;
  Us next_tick() const;
  Us detection_end() const;
  bool memory_intact() const;
  std::vector<int> nodes_of(int cls, int64_t unit) const;
  void log(const char* kind, const std::string& detail);
  void lose(LostCause c, double s) { res_.lost_s[static_cast<int>(c)] += s; }

  const RunSpec& spec_;
  const JobShape& job_;
  const StepTable& steps_;
  std::vector<RunEvent>* events_;
  Rng rng_fail_, rng_gray_, rng_repair_;
  ReplicaResult res_;

  double healthy_rate_ = 0;  // tokens/s of the healthy full-size job
  double hc_frac_ = 0;
  double interval_s_ = 0;
  CheckpointCosts costs_;

  Us t_ = 0;
  Phase phase_ = Phase::kTrain;
  Us phase_end_ = kNever;
  AfterCheckpoint after_ = AfterCheckpoint::kTrain;
  double tokens_ = 0;
  double durable_tokens_ = 0;
  double mem_tokens_ = -1;  // < 0: no in-memory checkpoint
  int mem_count_ = 0;
  std::vector<int> mem_failed_nodes_;  // nodes lost since the last in-memory checkpoint
  double ckpt_tokens_ = 0;
  bool ckpt_durable_now_ = false;  // the running checkpoint also waits for its upload
  double upload_tokens_ = 0;
  Us upload_done_ = kNever;
  double since_ckpt_s_ = 0, since_ckpt_steps_ = 0;
  bool restore_from_memory_ = false;
  bool checkpointless_pending_ = false;

  std::vector<FailureProcess> procs_;
  size_t next_injected_ = 0;
  std::vector<Us> gray_next_;
  std::vector<Gray> grays_;
  int gray_consecutive_ = 0;

  int pool_ = 0;        // spare nodes ready
  int to_replace_ = 0;  // nodes waiting for a spare
  std::vector<Us> repairs_;
  int dropped_ = 0;       // data-parallel replicas not running
  int shrunk_nodes_ = 0;  // nodes missing while running smaller (restart mode, shrink policy)
  std::vector<std::pair<Us, int>> rejoins_;  // checkpointless: (time, replicas) coming back
  int waiting_rejoin_nodes_ = 0;

  Us next_maintenance_ = kNever;
  size_t segment_ = 0;
  Us limit_ = kNever;
};

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

bool Replica::memory_intact() const {
  if (mem_tokens_ < 0) return false;
  const int n = job_.nodes;
  const int off = n > job_.domain_nodes ? job_.domain_nodes : 1;
  for (int a : mem_failed_nodes_) {
    if (n == 1) return false;
    const int peer = (a + off) % n;
    if (std::find(mem_failed_nodes_.begin(), mem_failed_nodes_.end(), peer) !=
        mem_failed_nodes_.end())
      return false;
  }
  return true;
}

void Replica::rollback() {
  const CheckpointMode m = spec_.checkpoint.mode;
  restore_from_memory_ =
      (m == CheckpointMode::kInMemory || m == CheckpointMode::kTiered) && memory_intact();
  double restore = durable_tokens_;
  if (restore_from_memory_) restore = std::max(restore, mem_tokens_);
  if (m == CheckpointMode::kInMemory && !restore_from_memory_) restore = 0;
  if (restore < tokens_) {
    lose(LostCause::kRework, (tokens_ - restore) / healthy_rate_);
    tokens_ = restore;
  }
  if (upload_done_ != kNever) {
    ++res_.checkpoints_lost;
    upload_done_ = kNever;
  }
  since_ckpt_s_ = since_ckpt_steps_ = 0;
}

std::vector<int> Replica::nodes_of(int cls, int64_t unit) const {
  const FailureClass& c = spec_.failures.classes[cls];
  int node = 0;
  switch (c.per) {
    case FaultUnit::kGpu:
      node = static_cast<int>(unit / job_.gpus_per_node);
      break;
    case FaultUnit::kNode:
    case FaultUnit::kJob:  // the caller draws a node for job-level classes
      node = static_cast<int>(unit);
      break;
    case FaultUnit::kDomain:
      node = static_cast<int>(unit) * job_.domain_nodes;
      break;
  }
  node = std::clamp(node, 0, job_.nodes - 1);
  std::vector<int> out;
  if (c.takes_down == FaultUnit::kJob) return out;
  if (c.takes_down == FaultUnit::kDomain) {
    const int first = node / job_.domain_nodes * job_.domain_nodes;
    for (int i = 0; i < job_.domain_nodes && first + i < job_.nodes; ++i)
      out.push_back(first + i);
  } else {
    out.push_back(node);
  }
  return out;
}

void Replica::on_failure(int cls, const std::vector<int>& nodes) {
  if (phase_ == Phase::kOffline || phase_ == Phase::kDone) return;  // not our capacity now
  const FailureClass& c = spec_.failures.classes[cls];
  ++res_.failures[cls];
  ++res_.interruptions;
  log("failure", "component=" + c.component + " takes_down=" + to_string(c.takes_down) +
                     " node=" + (nodes.empty() ? std::string("-") : std::to_string(nodes[0])));
  for (int n : nodes) {
    repairs_.push_back(t_ + to_us(rng_repair_.exponential(spec_.recovery.repair_s)));
    mem_failed_nodes_.push_back(n);
    std::erase_if(grays_,
                  [&](const Gray& g) { return g.kind == GrayKind::kGpuClock && g.node == n; });
  }
  if (phase_ == Phase::kCheckpoint) after_ = AfterCheckpoint::kTrain;  // aborted
  const int drops = static_cast<int>(nodes.size()) * job_.replicas_per_node;
  const bool live = phase_ == Phase::kTrain || phase_ == Phase::kCheckpoint ||
                    phase_ == Phase::kPause || phase_ == Phase::kDetect;
  if (spec_.recovery.mode == RecoveryMode::kCheckpointless && live && dropped_ + drops < job_.dp &&
      (phase_ != Phase::kDetect || checkpointless_pending_)) {
    // Drop the failed data-parallel replicas and continue from the peers' state.
    dropped_ += drops;
    waiting_rejoin_nodes_ += static_cast<int>(nodes.size());
    try_rejoin();
    checkpointless_pending_ = true;
    set_phase(Phase::kDetect,
              std::max(phase_ == Phase::kDetect ? phase_end_ : t_, detection_end()));
    return;
  }
  checkpointless_pending_ = false;
  to_replace_ += static_cast<int>(nodes.size());
  rollback();
  switch (phase_) {
    case Phase::kTrain:
    case Phase::kCheckpoint:
    case Phase::kRestart:
    case Phase::kPause:
      set_phase(Phase::kDetect, detection_end());
      break;
    default:  // already down: the new nodes join the replacement
      break;
  }
}

void Replica::try_rejoin() {
  while (waiting_rejoin_nodes_ > 0 && pool_ > 0) {
    --pool_;
    --waiting_rejoin_nodes_;
    ++res_.spares_used;
    rejoins_.push_back({t_ + to_us(spec_.recovery.replace_s), job_.replicas_per_node});
  }
}

void Replica::start_recovery() {
  if (to_replace_ > 0) {
    const RecoverySpec& r = spec_.recovery;
    if (pool_ >= to_replace_) {
      pool_ -= to_replace_;
      res_.spares_used += to_replace_;
      log("replace",
          "nodes=" + std::to_string(to_replace_) + " spares_left=" + std::to_string(pool_));
      to_replace_ = 0;
      set_phase(Phase::kReplace, t_ + to_us(r.replace_s));
      return;
    }
    const int missing = to_replace_ - pool_;
    const int drops = missing * job_.replicas_per_node;
    if (r.no_spare == NoSparePolicy::kShrink && dropped_ + drops < job_.dp) {
      const int used = pool_;
      res_.spares_used += used;
      pool_ = 0;
      shrunk_nodes_ += missing;
      dropped_ += drops;
      to_replace_ = 0;
      log("shrink", "replicas_running=" + std::to_string(job_.dp - dropped_));
      if (used > 0) {
        set_phase(Phase::kReplace, t_ + to_us(r.replace_s));
      } else {
        begin_restart();
      }
      return;
    }
    log("wait_for_spares", "needed=" + std::to_string(to_replace_));
    set_phase(Phase::kSpareWait, kNever);
    return;
  }
  begin_restart();
}

void Replica::begin_restart() {
  const double load = restore_from_memory_
                          ? costs_.peer_load_s
                          : checkpoint_costs(spec_.checkpoint, storage_speed()).load_s;
  log("restart", std::string("from=") + (restore_from_memory_ ? "memory" : "storage"));
  set_phase(Phase::kRestart, t_ + to_us(spec_.recovery.restart_s + load));
}

void Replica::start_checkpoint(AfterCheckpoint after) {
  after_ = after;
  ckpt_tokens_ = tokens_;
  const CheckpointCosts k = checkpoint_costs(spec_.checkpoint, storage_speed());
  double d = k.blocking_s;
  const CheckpointMode m = spec_.checkpoint.mode;
  ckpt_durable_now_ = after != AfterCheckpoint::kTrain;
  if (ckpt_durable_now_ && (m == CheckpointMode::kAsync || m == CheckpointMode::kTiered))
    d += k.upload_s;
  // A checkpoint that goes to storage while the previous upload is still running first waits
  // for it, as TorchTitan's and Megatron's async saves do (one upload in flight at a time).
  const bool to_storage =
      m == CheckpointMode::kAsync ||
      (m == CheckpointMode::kTiered &&
       (ckpt_durable_now_ ||
        (mem_count_ + 1) % std::max(1, spec_.checkpoint.persistent_every) == 0));
  const Us wait = to_storage && upload_done_ != kNever && upload_done_ > t_ ? upload_done_ - t_ : 0;
  set_phase(Phase::kCheckpoint, t_ + wait + to_us(d));
}

void Replica::finish_checkpoint() {
  ++res_.checkpoints;
  since_ckpt_s_ = since_ckpt_steps_ = 0;
  const CheckpointMode m = spec_.checkpoint.mode;
  const CheckpointCosts k = checkpoint_costs(spec_.checkpoint, storage_speed());
  auto upload = [&] {
    if (ckpt_durable_now_ || k.upload_s <= 0) {
      durable_tokens_ = ckpt_tokens_;
      return;
    }
    if (upload_done_ != kNever) ++res_.checkpoints_lost;  // superseded before it landed
    upload_tokens_ = ckpt_tokens_;
    upload_done_ = t_ + to_us(k.upload_s);
  };
  switch (m) {
    case CheckpointMode::kSync:
      durable_tokens_ = ckpt_tokens_;
      break;
    case CheckpointMode::kAsync:
      upload();
      break;
    case CheckpointMode::kInMemory:
    case CheckpointMode::kTiered:
      mem_tokens_ = ckpt_tokens_;
      mem_failed_nodes_.clear();
      ++mem_count_;
      if (m == CheckpointMode::kTiered &&
          (ckpt_durable_now_ || mem_count_ % std::max(1, spec_.checkpoint.persistent_every) == 0))
        upload();
      break;
  }
  const AfterCheckpoint after = after_;
  after_ = AfterCheckpoint::kTrain;
  if (after == AfterCheckpoint::kReplaceGray) {
    for (const auto& g : grays_) {
      if (g.kind != GrayKind::kGpuClock) continue;
      ++to_replace_;
      repairs_.push_back(t_ + to_us(rng_repair_.exponential(spec_.recovery.repair_s)));
    }
    std::erase_if(grays_, [](const Gray& g) { return g.kind == GrayKind::kGpuClock; });
    gray_consecutive_ = 0;
    restore_from_memory_ = m == CheckpointMode::kInMemory || m == CheckpointMode::kTiered;
    start_recovery();
    return;
  }
  if (after == AfterCheckpoint::kMaintenance) {
    ++res_.planned_interruptions;
    restore_from_memory_ = false;
    log("maintenance", "duration_s=" + std::to_string(spec_.maintenance.duration_s));
    set_phase(Phase::kMaintenance, t_ + to_us(spec_.maintenance.duration_s));
    return;
  }
  if (shrunk_nodes_ > 0 && pool_ >= shrunk_nodes_) {
    // Spares are back: grow to full size again (planned restart from this checkpoint).
    pool_ -= shrunk_nodes_;
    res_.spares_used += shrunk_nodes_;
    dropped_ = std::max(0, dropped_ - shrunk_nodes_ * job_.replicas_per_node);
    shrunk_nodes_ = 0;
    durable_tokens_ = std::max(durable_tokens_, ckpt_tokens_);
    restore_from_memory_ = false;
    log("regrow", "replicas_running=" + std::to_string(job_.dp - dropped_));
    set_phase(Phase::kReplace, t_ + to_us(spec_.recovery.replace_s));
    return;
  }
  set_phase(Phase::kTrain, kNever);
}

void Replica::on_phase_end() {
  switch (phase_) {
    case Phase::kCheckpoint:
      finish_checkpoint();
      break;
    case Phase::kDetect:
      if (checkpointless_pending_) {
        checkpointless_pending_ = false;
        log("checkpointless_recovery", "replicas_running=" + std::to_string(job_.dp - dropped_));
        set_phase(Phase::kPause, t_ + to_us(spec_.recovery.checkpointless_s));
      } else {
        start_recovery();
      }
      break;
    case Phase::kReplace:
    case Phase::kMaintenance:
      start_recovery();
      break;
    case Phase::kRestart:
    case Phase::kPause:
      log("resume", "tokens=" + std::to_string(static_cast<int64_t>(tokens_)));
      set_phase(Phase::kTrain, kNever);
      break;
    default:
      break;
  }
}

void Replica::on_phase_end_train() {
  const double r = rate();
  if (spec_.token_budget > 0 && spec_.token_budget - tokens_ <= r * 2e-6) {
    tokens_ = std::max(tokens_, spec_.token_budget);
    res_.reached_budget = true;
    res_.time_to_budget_s = sec(t_);
    log("budget_reached", "tokens=" + std::to_string(static_cast<int64_t>(tokens_)));
    set_phase(Phase::kDone, kNever);
    return;
  }
  if (interval_s_ <= 0) return;
  const bool steps = spec_.checkpoint.interval_kind == IntervalKind::kSteps;
  const double left =
      steps ? (static_cast<double>(spec_.checkpoint.interval_steps) - since_ckpt_steps_) * step_s()
            : interval_s_ - since_ckpt_s_;
  if (left <= 2e-6) start_checkpoint(AfterCheckpoint::kTrain);
}

void Replica::on_gray_onset(int gi) {
  const GrayFailureSpec& g = spec_.gray[gi];
  const double per_hour = g.rate_per_hour * (g.kind == GrayKind::kGpuClock ? job_.gpus : 1);
  gray_next_[gi] = t_ + to_us(rng_gray_.exponential(3600.0 / per_hour));
  const double dur = rng_gray_.lognormal(std::log(g.duration_median_s), g.duration_sigma);
  const double speed = rng_gray_.uniform(g.speed_min, g.speed_max);
  const uint64_t gpu = rng_gray_.uniform_below(static_cast<uint64_t>(job_.gpus));
  if (phase_ == Phase::kOffline || phase_ == Phase::kDone) return;
  ++res_.gray_onsets;
  const int node = static_cast<int>(gpu) / job_.gpus_per_node;
  grays_.push_back({g.kind, node, speed_level(speed), speed, t_ + std::max<Us>(1, to_us(dur))});
  char buf[160];
  std::snprintf(buf, sizeof buf, "kind=%s node=%d speed=%.3f duration_s=%.1f", to_string(g.kind),
                node, speed, dur);
  log("gray_onset", buf);
}

void Replica::on_health_tick() {
  const double ratio = steps_.step_s(slow_level()) / steps_.healthy_s;
  gray_consecutive_ = ratio > spec_.health.gray_threshold ? gray_consecutive_ + 1 : 0;
  if (gray_consecutive_ < spec_.health.gray_consecutive) return;
  gray_consecutive_ = 0;
  ++res_.gray_detected;
  ++res_.interruptions;
  char buf[96];
  std::snprintf(buf, sizeof buf, "step_ratio=%.3f", ratio);
  log("gray_detected", buf);
  start_checkpoint(AfterCheckpoint::kReplaceGray);
}

void Replica::on_segment_notice() {
  const auto& segs = spec_.reservation.segments;
  if (phase_ == Phase::kTrain) {
    const CheckpointCosts k = checkpoint_costs(spec_.checkpoint, storage_speed());
    if (k.blocking_s + k.upload_s <= spec_.reservation.termination_notice_s) {
      durable_tokens_ = tokens_;
      ++res_.checkpoints;
    }
  }
  mem_tokens_ = -1;  // the instances are reclaimed with their memory
  rollback();
  ++res_.planned_interruptions;
  to_replace_ = dropped_ = shrunk_nodes_ = waiting_rejoin_nodes_ = 0;
  rejoins_.clear();
  grays_.clear();
  gray_consecutive_ = 0;
  checkpointless_pending_ = false;
  after_ = AfterCheckpoint::kTrain;
  ++segment_;
  log("segment_end", "next_segment=" + std::to_string(segment_));
  set_phase(segment_ < segs.size() ? Phase::kOffline : Phase::kDone, kNever);
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

}  // namespace

ReplicaResult simulate_replica(const RunSpec& spec, const JobShape& job, const StepTable& steps,
                               uint64_t seed, int replica, std::vector<RunEvent>* events) {
  Replica r(spec, job, steps, seed, replica, events);
  return r.run();
}

}  // namespace fleetsim
