// Failure, gray-failure, health-check, checkpoint and recovery models of the run-level simulator.
//
// Hard failures: one class per component (GPU, HBM, NIC, switch, host, software, ...), each a
// renewal process per unit (GPU, node, NVLink domain or the whole job) with a rate per unit-hour
// and an exponential or Weibull time to failure; the class says what a failure takes down. The
// shipped profiles (failures/*.json) are fitted to the Llama 3 interruption table (Grattafiori et
// al. 2024, Table 5: 419 unexpected interruptions in 54 days on 16,384 H100s) and to the Meta RSC
// study (Kokolis et al., HPCA 2025: 6.50 / 2.34 job-stopping failures per 1,000 node-days).
//
// Gray failures: a GPU at a fraction of its clock (its step time comes from the step simulator)
// or checkpoint storage at a fraction of its bandwidth, with an onset rate and a lognormal
// duration (tens of seconds to hours: Falcon, Wu et al. 2024).
//
// Checkpoint intervals: Young (1974) T = sqrt(2 δ M) and Daly (2006) higher-order
// τ = sqrt(2 δ M) · [1 + (1/3) sqrt(δ / 2M) + (1/9) (δ / 2M)] − δ for δ < 2M, else M
// (as implemented in LLNL SCR's scr_ckpt_interval.py).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fleetsim {

// The unit a rate is counted per, and the unit a failure takes down.
enum class FaultUnit { kGpu, kNode, kDomain, kJob };
const char* to_string(FaultUnit u);

struct FailureClass {
  std::string component;     // one of known_components()
  double rate_per_hour = 0;  // failures per unit-hour (0 = disabled)
  FaultUnit per = FaultUnit::kNode;
  // What one failure takes down: kGpu / kNode → that node is cordoned and replaced, kDomain →
  // every node of its NVLink domain, kJob → nothing replaced (software: restart in place).
  FaultUnit takes_down = FaultUnit::kNode;
  double weibull_shape = 1.0;  // 1 = exponential (memoryless); < 1 infant mortality
  std::string source;
};

struct FailureProfile {
  std::string name;
  std::string source;
  std::vector<FailureClass> classes;
};

// Component names a profile or override may use.
const std::vector<std::string>& known_components();

enum class GrayKind { kGpuClock, kStorage };
const char* to_string(GrayKind k);

struct GrayFailureSpec {
  GrayKind kind = GrayKind::kGpuClock;
  // Onsets per GPU-hour (kGpuClock) or per hour for the job's storage (kStorage).
  double rate_per_hour = 0;
  double speed_min = 0.5, speed_max = 0.9;  // fraction of clock / bandwidth, uniform
  double duration_median_s = 600;           // lognormal duration
  double duration_sigma = 1.0;
};

struct HealthCheckSpec {
  bool enabled = false;
  double interval_s = 60;
  double cost_s = 0;  // training time each check takes (overhead = cost / interval)
  // Hard failures: detected at the next health check or after this delay (the job's own
  // timeout, e.g. the NCCL watchdog), whichever is first. Without health checks: this delay.
  double hard_detection_s = 0;
  // Gray failures: detected when the observed step time exceeds threshold × healthy step time
  // for `consecutive` checks in a row; the node is then checkpointed, cordoned and replaced.
  double gray_threshold = 1.1;
  int gray_consecutive = 3;
};

enum class CheckpointMode { kSync, kAsync, kInMemory, kTiered };
const char* to_string(CheckpointMode m);

enum class IntervalKind { kMinutes, kSteps, kAuto, kNone };

struct CheckpointSpec {
  CheckpointMode mode = CheckpointMode::kAsync;
  IntervalKind interval_kind = IntervalKind::kMinutes;
  double interval_minutes = 30;  // training time between checkpoints (Daly's τ)
  int64_t interval_steps = 0;
  double size_bytes = 0;         // whole checkpoint (model + optimizer state)
  double write_bytes_per_s = 0;  // shared storage, aggregate (FSx for Lustre / S3)
  double read_bytes_per_s = 0;
  double host_copy_bytes_per_s = 0;  // per GPU, device → host (async snapshot, in-memory)
  double peer_bytes_per_s = 0;       // per node, to the peer node's memory (in-memory, tiered)
  int gpus = 1, nodes = 1;           // of the job, for the per-GPU / per-node shares
  int persistent_every = 10;         // tiered: every N-th in-memory checkpoint also to storage
  // Explicit costs in seconds (< 0 = computed from size and bandwidths).
  double blocking_s = -1, upload_s = -1, load_s = -1;
};

// Costs of one checkpoint in seconds (storage bandwidth scaled by `storage_speed` for a slow
// storage gray failure).
struct CheckpointCosts {
  double blocking_s = 0;   // training stalls this long
  double upload_s = 0;     // background upload after the blocking part (async, tiered)
  double load_s = 0;       // restore from storage
  double peer_load_s = 0;  // restore from a peer's memory (in-memory, tiered)
};
CheckpointCosts checkpoint_costs(const CheckpointSpec& c, double storage_speed = 1.0);

enum class RecoveryMode { kRestart, kCheckpointless };
enum class NoSparePolicy { kWait, kShrink };

struct RecoverySpec {
  RecoveryMode mode = RecoveryMode::kRestart;
  double restart_s = 600;         // job relaunch + NCCL init (checkpoint load is added)
  double replace_s = 300;         // swap a spare node in
  double checkpointless_s = 120;  // drop / rejoin a data-parallel replica from its peers
  double repair_s = 3 * 86400.0;  // a cordoned node returns to the spare pool (exponential mean)
  NoSparePolicy no_spare = NoSparePolicy::kWait;
  int spares = 0;  // hot spare nodes
};

struct MaintenanceSpec {
  double interval_s = 0;  // 0 = none
  double duration_s = 0;
};

struct ReservationSegment {
  double start_s = 0;
  double duration_s = 0;
};
struct ReservationSpec {
  std::vector<ReservationSegment> segments;  // empty = capacity for as long as needed
  double termination_notice_s = 1800;        // instances reclaimed this long before a segment ends
};

// Job-level failure rate of a profile for a job of the given size (failures per hour).
double job_failure_rate_per_hour(const FailureProfile& p, int gpus, int nodes, int domains);

// Young's first-order and Daly's higher-order optimum compute time between checkpoints
// (seconds) for checkpoint cost delta_s and mean time between failures mtbf_s.
double young_interval_s(double delta_s, double mtbf_s);
double daly_interval_s(double delta_s, double mtbf_s);

}  // namespace fleetsim
