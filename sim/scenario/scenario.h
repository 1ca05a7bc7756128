// Typed, validated scenario: the only representation of user input the simulator sees.
// scenario/loader.cpp is the only code that parses JSON (scenarios, topologies, calibration).
// Every error names the file and the JSON pointer and says what was expected; unknown keys are
// errors with a "did you mean" when a known key is close.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "coll/collective.h"
#include "moe/routing_spec.h"
#include "run/run_spec.h"
#include "topo/system.h"
#include "workload/framework.h"
#include "workload/model.h"
#include "workload/parallel.h"

namespace fleetsim {

struct CollectiveWorkload {
  CollOp op = CollOp::kAllReduce;
  std::vector<Bytes> sizes;
  int group_gpus = 0;  // 0 = every GPU of the cluster
  Algorithm algorithm = Algorithm::kAuto;
  std::string dtype = "bf16";
  int dtype_bytes = 2;
};

struct TrainingWorkload {
  ModelSpec model;
  std::string model_ref;  // the name given, or "inline"
  ParallelConfig par;
  FrameworkOptions fw;
  int gpus = 0;  // GPUs used (0 = every GPU of the cluster)
  bool symmetry = false;
  int ranks_per_domain = 0;            // placement: ranks per NVLink domain (0 = fill domains)
  std::optional<RoutingSpec> routing;  // MoE routing model (absent = balanced)
  // framework.release (scenario/release_loader.h): the release named, and one line per switch
  // of its recipe that was recorded but not applied (the report lists them as warnings).
  std::string release;
  std::vector<std::string> release_notes;
};

struct Scenario {
  std::string file;
  std::string name;
  std::string description;
  uint64_t seed = 1;
  std::string system_name;
  SystemSpec system;
  int count = 0;      // units ordered (instances, UltraServers, ...)
  int nodes = 0;      // count × system.unit_nodes
  FabricSpec fabric;  // system defaults with the scenario's overrides applied
  // Calibration set the compute model uses (cluster.calibration_set: a name under
  // calibration/sets/ or a path; compute/import.h); both empty = the published tables only.
  std::string calibration_set;
  std::string calibration_set_dir;
  CollectiveParams collective_params;
  std::optional<CollectiveWorkload> collective;
  std::optional<TrainingWorkload> training;
  // Run-level simulation (top-level "run", training workloads only): failures, checkpoints,
  // recovery and Monte Carlo replicas (scenario/run_loader.h).
  std::optional<RunSpec> run;
  // LoadOptions::max_run_events and max_passes of the load, for simulate_run_level's checks
  // (the events estimate needs the healthy step time; the slow-GPU states simulate every rank
  // even where the step itself uses symmetry).
  int64_t max_run_events = 200'000'000;
  int64_t max_passes = 20'000'000;
};

struct LoadOptions {
  std::string data_dir;   // where topologies/ and calibration/ live; empty = default_data_dir()
  int max_gpus = 131072;  // refuse larger clusters up front (raise with --max-gpus)
  // Refuse training steps with more forward/backward passes to simulate than this (raise with
  // --max-passes); 2e7 passes is about a minute of simulation (estimated_step_passes).
  int64_t max_passes = 20'000'000;
  // Individual flows one collective scenario simulates, over every algorithm it tries (raise
  // with --max-flows; estimate_collective_flows): 2^23 admits the all-to-all over 2,896 GPUs,
  // about 10 s and 2 GiB.
  int64_t max_flows = 8'388'608;
  // Run-level events over all Monte Carlo replicas (raise with --max-run-events;
  // estimated_replica_events × replicas, checked once the healthy step time is known): 2e8
  // events is about half a minute of one core (fleetsim_bench_run: ~8 M events/s).
  int64_t max_run_events = 200'000'000;
  // Memory the simulation itself may take, in bytes (raise with --max-sim-memory; estimated
  // from the flows of a collective and the passes of a step: scenario/limits.h).
  int64_t max_sim_memory = int64_t{8} << 30;
  // Type × count × parallelism combinations a plan may search, each a step simulation and a
  // Monte Carlo (raise with `plan --max-candidates`).
  int64_t max_plan_candidates = 4096;
  // Points a sweep file may expand to, before filters (raise with `sweep --max-points`): each
  // point's canonical scenario is held in memory while the sweep runs, about 1.1 KiB for the
  // quickstart (1.6 M points: 1.7 GiB and 21 s to expand), so 10^6 points stay near 1 GiB.
  int64_t max_sweep_points = 1'000'000;
};

// FLEETSIM_DATA_DIR from the environment, else the source tree the binary was built from.
std::string default_data_dir();

Scenario load_scenario(const std::string& path, const LoadOptions& options);
// Work of one training step for the limits: TP units simulated (one replica with symmetry) ×
// micro-batches per pipeline × model chunks (vp) × 2 (forward and backward).
int64_t estimated_step_passes(const TrainingWorkload& t);
// Parses scenario JSON text; `file` is used in messages.
Scenario parse_scenario(const std::string& text, const std::string& file,
                        const LoadOptions& options);

// A system type by name (topologies/NAME.json) or by path to a JSON file.
SystemSpec load_system(const std::string& name_or_path, const std::string& data_dir);
std::vector<std::string> known_systems(const std::string& data_dir);

// Collective calibration for a system (calibration/collectives.json).
CollectiveParams load_collective_params(const SystemSpec& system, const std::string& data_dir);

// Global framework parameters (calibration/framework.json) and the host costs per host CPU
// class (calibration/host/host-costs.csv): the defaults of every training workload's
// "framework" object. Missing files = the built-in defaults (efficiency 1, no host costs).
FrameworkOptions load_framework_defaults(const std::string& data_dir);

// Host costs per host CPU class from a host-costs CSV (columns host_cpu_class, framework, cost,
// value_us, basis, source_url, notes; every class gives op, module, launch, nccl, d2h and
// graph for framework megatron-te). InputError with the line on bad rows.
std::map<std::string, HostCosts> load_host_costs(const std::string& path);

// A routing histogram file (token counts per MoE layer and expert): CSV with columns
// layer,expert,tokens (every layer 0..moe_layers−1 and expert 0..experts−1 exactly once), or JSON
// {"experts": E, "tokens": [[counts of layer 0], ...]}. InputError with the line or pointer.
std::vector<std::vector<double>> load_routing_histogram(const std::string& path, int moe_layers,
                                                        int experts);

// Keys the scenario loader accepts, by JSON pointer pattern ("" = top level; "/workload#training"
// is the workload object when its type is "training"). The JSON Schema in
// scenarios/schema/ must list the same keys (a test checks it).
std::map<std::string, std::vector<std::string>> scenario_keys();

// "did you mean" helper: the candidate closest to `word` by edit distance, or "" if none is
// within max(2, |word|/3) edits.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace fleetsim
