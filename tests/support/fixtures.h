// Fixtures several test files build by hand: the repository root and load options reading from
// it, scratch file paths of their own, zoo models and model texts, the compute model of a system's
// GPU, a communication cost of zero, and the parallel layouts the workload tests use most (one GPU;
// data and expert parallel over the same GPUs). Header only, for tests/ (the test executables put
// tests/ on the include path: "support/fixtures.h"). docs/testing.md says what belongs here.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "compute/compute_model.h"
#include "core/time.h"
#include "scenario/model_loader.h"
#include "scenario/scenario.h"
#include "workload/layer_costs.h"
#include "workload/parallel.h"

namespace fleetsim::test {

// The source tree: topologies/, workloads/, calibration/ are read from here.
inline const std::string kRoot = FLEETSIM_SOURCE_DIR;

// Load options that read topologies/, workloads/ and calibration/ from the source tree (the
// default limits otherwise).
inline LoadOptions load_options() {
  LoadOptions o;
  o.data_dir = kRoot;
  return o;
}

// A path for the scratch file or folder `name` in the system's temporary folder, with this
// process's id in it: each ctest entry is its own process, so two entries, or the test runs of
// two checkouts at once, never write, read or remove the same file.
inline std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("fleetsim-test-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

// The file temp_path(name) holding `text`, removed when this goes out of scope, also when the
// code under test throws.
struct ScratchFile {
  ScratchFile(const std::string& name, const std::string& text) : path(temp_path(name)) {
    std::ofstream(path) << text;
  }
  ~ScratchFile() { std::remove(path.c_str()); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  const std::string path;
};

// A zoo model (workloads/models/<id>.json).
inline ModelSpec zoo(const std::string& id) {
  return load_model(id, kRoot);
}

// A model from its JSON text; errors name `file` and the JSON pointer from the root.
inline ModelSpec parse(const std::string& text, const std::string& file = "m.json") {
  return parse_model_text(text, file, "");
}

// The compute model of the GPU of `system` (topologies/<system>.json), with the repository's
// kernel tables.
inline ComputeModel gpu_compute(const std::string& system) {
  return ComputeModel::load(load_system(system, kRoot).gpu, kRoot);
}

// A LayerCostModel communication cost for tests that count compute only: every collective free.
inline Time no_comm(Dim, CollOp, double) {
  return Time::zero();
}

// One GPU (tp = pp = dp = 1): `global_batch` sequences of `seq_len` tokens per step.
inline ParallelConfig one_gpu(int seq_len, int global_batch = 1) {
  ParallelConfig p;
  p.seq_len = seq_len;
  p.global_batch = global_batch;
  return p;
}

// dp-way data parallel with ep-way expert parallel over the same GPUs (tp = pp = 1).
inline ParallelConfig data_expert_parallel(int dp, int ep, int seq_len, int global_batch) {
  ParallelConfig p = one_gpu(seq_len, global_batch);
  p.dp = dp;
  p.ep = ep;
  return p;
}

}  // namespace fleetsim::test
