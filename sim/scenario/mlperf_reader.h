// MLPerf Training results as published (github.com/mlcommons/training_results_v*): a system
// description (systems/<system>.json) and the MLLOG lines of a result log
// (results/<system>/<benchmark>/result_*.txt: ":::MLLOG {json}", optionally after a rank prefix
// such as "0: "). Read into typed structs for `fleetsim import mlperf` (sim/validate/mlperf.h).
// The system JSON is an external format with many descriptive keys: only the fields below are
// read, the others are ignored. Malformed input: InputError with the file and JSON pointer or
// "line N".
#pragma once

#include <map>
#include <string>
#include <vector>

namespace fleetsim {

struct MlperfSystem {
  std::string file;
  std::string system_name;             // "NVIDIA DGX H100 (64x NVIDIA H100-SXM5-80GB)"
  std::string submitter;               // "NVIDIA"
  std::string accelerator_model_name;  // "NVIDIA H100-SXM5-80GB"
  std::string framework;               // "NeMo NVIDIA Release 24.04"
  int number_of_nodes = 0;
  int accelerators_per_node = 0;
};

// Reads systems/<system>.json; number_of_nodes and accelerators_per_node may be numbers or
// numeric strings (both occur in published results).
MlperfSystem read_mlperf_system(const std::string& path);

struct MllogEvent {
  int line = 0;
  std::string key;  // "global_batch_size", "tracked_stats", ...
  bool is_number = false;
  double number = 0;                     // when is_number
  std::string text;                      // when the value is a string
  std::map<std::string, double> fields;  // when the value is an object: its numeric members
  std::map<std::string, double> metadata_numbers;  // numeric metadata ("step", "lineno")
};

// Every MLLOG line of a result file, in order. A line that starts an MLLOG record but does not
// hold one complete JSON object (a truncated line) is an InputError naming the line.
std::vector<MllogEvent> read_mllog(const std::string& path);

}  // namespace fleetsim
