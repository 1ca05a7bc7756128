// `fleetsim import mlperf DIR`: reference-CSV rows (validation/README.md columns) from an MLPerf
// Training results tree as published by MLCommons (training_results_v*/<submitter>/):
//   systems/<system>.json                       hardware (accelerator_model_name), nodes x GPUs,
//                                               framework
//   results/<system>/<benchmark>/result_*.txt   MLLOG lines: global_batch_size,
//                                               max_sequence_length, gradient_accumulation_steps,
//                                               submission_benchmark, tracked_stats
//                                               (train_step_time per logged step)
//   results/<system>/<benchmark>/README.md      (or results/<system>/README.md) names the
//                                               config_*.sh the run used, found under DIR
//   config_*.sh                                 TP / PP / CP / VP / EP / MBS / FP8 / FP4 exports
// One row per result file: metric train_step_time_median_logged (seconds, the median of the
// logged tracked_stats train_step_time values), with the source file and line of every field in
// `notes`. Malformed input (a truncated MLLOG line, a system JSON without its GPU) is an
// InputError with the file and line or pointer.
#pragma once

#include <string>
#include <vector>

namespace fleetsim {

struct MlperfImport {
  std::string csv;  // header + one row per result file
  int rows = 0;
  std::vector<std::string> skipped;  // "results/S/B: why" for benchmarks without usable logs
};

MlperfImport import_mlperf(const std::string& dir);

}  // namespace fleetsim
