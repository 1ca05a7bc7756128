// Running a sweep: points in parallel threads, durable and resumable results, deterministic
// shards, merging shard results, and Slurm job-array scripts.
//
// Results folder (one per shard): manifest.json (the whole sweep's point keys and axis values,
// the shard), results.jsonl (one line per finished point, appended and written with one write(2)
// per point as it finishes, so a killed run keeps every finished point; fdatasync at least once
// a second and at the end), and, once every point of the shard is done, results.jsonl rewritten
// in point order and results.csv (both replaced atomically). A rerun reads results.jsonl, ignores
// a partial last line or anything that is not a complete row, skips the points whose key is
// there and runs the rest. Final files depend only on the sweep, never on -j or on completion
// order; a merge of shards equals the unsharded run byte for byte.
//
// Threads: each point builds its own Scenario, Topology and step simulation (sim/ keeps no
// mutable global state); a per-thread cache reuses the compute model per GPU and calibration set.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "core/progress.h"
#include "scenario/scenario.h"
#include "scenario/sweep_loader.h"
#include "sweep/row.h"

namespace fleetsim {

struct ShardSpec {
  int index = 0;  // 0-based: SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX
  int count = 1;
};
// Parses "I/N" (0 <= I < N); InputError naming `option` otherwise.
ShardSpec parse_shard(const std::string& text, const std::string& option);
// Points of a shard: index % count == shard index (balanced to within one point, and neighbours
// in the grid, which cost about the same, spread over all shards).
bool in_shard(int point_index, const ShardSpec& shard);

struct SweepManifest {
  std::string name;
  std::string sweep_key;
  std::vector<std::string> columns;
  std::vector<std::string> keys;                      // every point of the sweep, in order
  std::vector<std::vector<std::string>> values_json;  // per point, per column
  std::vector<SweepSkip> skipped;
  long long combinations = 0;
  ShardSpec shard;
};
SweepManifest make_manifest(const SweepPlan& plan, const ShardSpec& shard);

// Serialisation of rows and manifests (implemented in report/sweep_results.cpp).
class ResultsCodec {
 public:
  virtual ~ResultsCodec() = default;
  // One JSON object, no newline: point, key, status, the axis columns, metrics, error.
  virtual std::string jsonl_row(const SweepRow& row,
                                const std::vector<std::string>& columns) const = 0;
  // A complete row, or nullopt for anything else (a line cut short by a kill, garbage).
  virtual std::optional<SweepRow> parse_jsonl_row(
      const std::string& line, const std::vector<std::string>& columns) const = 0;
  // Header line plus one line per row, "\n"-terminated, RFC 4180 quoting.
  virtual std::string csv(const std::vector<SweepRow>& rows,
                          const std::vector<std::string>& columns) const = 0;
  virtual std::string manifest_json(const SweepManifest& m) const = 0;
  // InputError naming `file` on anything that is not a manifest.
  virtual SweepManifest parse_manifest(const std::string& text, const std::string& file) const = 0;
};

struct SweepRunOptions {
  int jobs = 1;
  ShardSpec shard;
  std::string out_dir;
  LoadOptions load;
  ProgressMode progress = ProgressMode::kAuto;  // auto: a bar when stderr is a terminal
  double line_interval_s = 10;                  // period of plain progress lines
  std::FILE* progress_stream = stderr;
};

struct SweepRunSummary {
  int shard_points = 0;  // points in this shard
  int already_done = 0;  // found in results.jsonl
  int ran = 0;
  int ok = 0, invalid = 0, error = 0;  // over the whole shard
  int foreign_rows = 0;  // rows of results.jsonl that are not points of this sweep (dropped)
  double elapsed_s = 0;
};

// Runs the points of `opt.shard` not yet in opt.out_dir/results.jsonl.
SweepRunSummary run_sweep(const SweepPlan& plan, const SweepRunOptions& opt,
                          const ResultsCodec& codec);

// Simulates one point; never throws for a bad point: InputError → status "invalid", any other
// exception → "error", both with the message.
class PointRunner {
 public:
  explicit PointRunner(LoadOptions load);
  ~PointRunner();
  PointRunner(const PointRunner&) = delete;
  PointRunner& operator=(const PointRunner&) = delete;
  SweepRow run(const SweepPlan& plan, const SweepPoint& point);

 private:
  struct Cache;
  LoadOptions load_;
  Cache* cache_;
};

struct MergeSummary {
  int points = 0;
  int inputs = 0;
};
// Combines shard result folders into out_dir (manifest.json, results.jsonl, results.csv): every
// point of the sweep exactly once. InputError when inputs belong to different sweeps, a point
// appears in two inputs, or points are missing (the message lists them and their shards).
MergeSummary merge_sweep_results(const std::string& out_dir, const std::vector<std::string>& inputs,
                                 const ResultsCodec& codec);

struct SlurmOptions {
  std::string dir;           // where the scripts go
  std::string fleetsim_exe;  // absolute path of the fleetsim binary
  std::string sweep_file;
  int shards = 1;
  int cpus_per_task = 1;
  std::string partition;   // optional
  std::string time_limit;  // optional, sbatch --time format
  // Arguments every array task repeats after `sweep FILE`: the work limits the sweep was
  // expanded under (--max-points, --max-gpus, --max-passes, ...), so that its tasks accept the
  // same points; each is quoted for the shell.
  std::vector<std::string> limit_args;
};
// Writes DIR/sweep.sbatch (an array of `shards` tasks, task i runs --shard i/shards into
// DIR/shard-i), DIR/merge.sbatch (fleetsim merge DIR/merged DIR/shard-0 ...) and DIR/submit.sh
// (submits both, the merge after the array succeeds). Returns the list of files written.
std::vector<std::string> emit_slurm(const SweepPlan& plan, const SlurmOptions& opt);

// Writes `content` to `path` through a temporary file in the same folder, fsync and rename.
void replace_file_durably(const std::string& path, const std::string& content);
// Reads a whole file; nullopt when it does not exist.
std::optional<std::string> read_file_if_exists(const std::string& path);

}  // namespace fleetsim
