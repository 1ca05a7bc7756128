// Internal to sim/run: one replica of the run-level simulation, a state machine of the job
// (training, checkpoint, detection, waiting for a spare, replacement, restart, checkpointless
// pause, maintenance, offline between reservation segments) driven by the earliest of its pending
// events. replica.cpp holds the event loop and the state queries, replica_failures.cpp failures,
// recovery and gray failures, replica_checkpoint.cpp checkpoints, phase ends and reservation
// segments.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/rng.h"
#include "run/failure_process.h"
#include "run/run.h"

namespace fleetsim::run_internal {

using Us = int64_t;  // run-level time: microseconds since the start of the run
constexpr Us kNever = std::numeric_limits<int64_t>::max();
inline Us to_us(double s) {
  return (!std::isfinite(s) || s >= 9.0e12) ? kNever : std::llround(s * 1e6);
}
inline double sec(Us u) {
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

// The events a replica waits for, in the order that breaks ties (the first one listed wins).
enum class EventKind {
  kNone,
  kPhaseEnd,       // the current phase ends (training: budget reached or checkpoint due)
  kFailure,        // a failure process fires
  kInjected,       // the next injected failure
  kGrayOnset,      // a gray-failure class starts a new episode
  kGrayEnd,        // a gray episode ends
  kUploadDone,     // the checkpoint upload in flight lands
  kRepair,         // a repaired node returns to the spare pool
  kRejoin,         // checkpointless: replaced replicas rejoin
  kHealthTick,     // a health check runs (only while a GPU is slow)
  kMaintenance,    // planned maintenance is due
  kSegmentStart,   // the next reservation segment starts
  kSegmentNotice,  // the current segment's termination notice
  kLimit           // the run's duration or safety limit
};

struct NextEvent {
  Us t = kNever;
  EventKind kind = EventKind::kNone;
  size_t idx = 0;  // the process, gray episode, repair or rejoin it concerns
};

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
  // The event loop (replica.cpp).
  NextEvent next_event() const;
  void dispatch(const NextEvent& e);
  void advance(Us to);
  // Event handlers.
  void on_train_event();  // replica_checkpoint.cpp
  void on_phase_end();
  void on_phase_end_train();
  void on_upload_done();
  void on_maintenance();
  void on_segment_notice();
  void on_segment_start();
  void on_sampled_failure(size_t cls);  // replica_failures.cpp
  void on_injected_failure();
  void on_failure(int cls, const std::vector<int>& nodes);
  void on_repair_return(size_t i);
  void on_rejoin(size_t i);
  void try_rejoin();
  void on_gray_onset(int g);
  void on_gray_end(size_t i);
  void on_health_tick();
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
  double until_checkpoint_s() const;  // training seconds until the periodic checkpoint is due
  std::vector<int> nodes_of(int cls, int64_t unit) const;
  std::vector<int> nodes_down(const FailureClass& c, int node) const;
  Us gray_gap(const GrayFailureSpec& g);  // draws the time to the next onset of class g
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

}  // namespace fleetsim::run_internal
