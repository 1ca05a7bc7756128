// Replica (replica.h): checkpoints (sync, async, in-memory, tiered; one upload in flight),
// what follows the end of each phase, and reservation segments ending.
#include <algorithm>

#include "run/replica.h"

namespace fleetsim::run_internal {

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

void Replica::on_train_event() {
  if (phase_ == Phase::kTrain) {
    on_phase_end_train();
  } else {
    on_phase_end();
  }
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
  if (until_checkpoint_s() <= 2e-6) start_checkpoint(AfterCheckpoint::kTrain);
}

void Replica::on_upload_done() {
  durable_tokens_ = std::max(durable_tokens_, upload_tokens_);
  upload_done_ = kNever;
  log("checkpoint_durable", "tokens=" + std::to_string(static_cast<int64_t>(upload_tokens_)));
}

void Replica::on_maintenance() {
  next_maintenance_ += to_us(spec_.maintenance.interval_s);
  if (phase_ == Phase::kTrain) start_checkpoint(AfterCheckpoint::kMaintenance);
}

void Replica::on_segment_start() {
  restore_from_memory_ = false;
  log("segment_start", "segment=" + std::to_string(segment_));
  begin_restart();
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

}  // namespace fleetsim::run_internal
