// Replica (replica.h): hard failures, recovery (replacement from the spare pool, shrinking,
// checkpointless continuation, restart and checkpoint restore), gray failures and their
// detection by health checks.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "run/replica.h"

namespace fleetsim::run_internal {

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
  return nodes_down(c, std::clamp(node, 0, job_.nodes - 1));
}

// The nodes a failure of class c at `node` takes down: its scale-up domain, the node, or none
// (a job-level failure takes no node down).
std::vector<int> Replica::nodes_down(const FailureClass& c, int node) const {
  std::vector<int> out;
  if (c.takes_down == FaultUnit::kJob) return out;
  const bool domain = c.takes_down == FaultUnit::kDomain;
  const int first = domain ? node / job_.domain_nodes * job_.domain_nodes : node;
  const int count = domain ? job_.domain_nodes : 1;
  for (int i = 0; i < count && first + i < job_.nodes; ++i)
    out.push_back(first + i);
  return out;
}

void Replica::on_sampled_failure(size_t cls) {
  int64_t unit = procs_[cls].fire(&rng_fail_);
  if (spec_.failures.classes[cls].per == FaultUnit::kJob)
    unit = static_cast<int64_t>(rng_fail_.uniform_below(static_cast<uint64_t>(job_.nodes)));
  on_failure(static_cast<int>(cls), nodes_of(static_cast<int>(cls), unit));
}

void Replica::on_injected_failure() {
  const InjectedFailure& f = spec_.injected[next_injected_++];
  on_failure(f.failure_class, nodes_down(spec_.failures.classes[f.failure_class], f.node));
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

void Replica::on_repair_return(size_t i) {
  repairs_.erase(repairs_.begin() + static_cast<std::ptrdiff_t>(i));
  ++pool_;
  try_rejoin();
  if (phase_ == Phase::kSpareWait) start_recovery();
}

void Replica::on_rejoin(size_t i) {
  dropped_ = std::max(0, dropped_ - rejoins_[i].second);
  rejoins_.erase(rejoins_.begin() + static_cast<std::ptrdiff_t>(i));
  log("rejoin", "replicas_running=" + std::to_string(job_.dp - dropped_));
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

void Replica::on_gray_onset(int gi) {
  const GrayFailureSpec& g = spec_.gray[gi];
  gray_next_[gi] = t_ + gray_gap(g);  // scheduled, so its rate is positive
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

Us Replica::gray_gap(const GrayFailureSpec& g) {
  const double per_hour = g.rate_per_hour * (g.kind == GrayKind::kGpuClock ? job_.gpus : 1);
  return per_hour > 0 ? to_us(rng_gray_.exponential(3600.0 / per_hour)) : kNever;
}

void Replica::on_gray_end(size_t i) {
  log("gray_end", "node=" + std::to_string(grays_[i].node));
  grays_.erase(grays_.begin() + static_cast<std::ptrdiff_t>(i));
  if (slow_level() == 20) gray_consecutive_ = 0;
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

}  // namespace fleetsim::run_internal
