// Training rows (metric tokens_per_sec_per_gpu) build a training scenario from the row's model,
// hardware, precision and parallel columns (validate_training.cpp) and compare tokens/s/GPU.
//
// `fleetsim validate`: simulates each row of a reference CSV (the column format of
// ../shared/reference/*.csv) that fleetsim can model and compares with the measurement.
// Collective rows (model = all_reduce, all_gather, reduce_scatter, alltoall) compare bus
// bandwidth; the message size, NVLS setting and placement are read from the notes column
// (msg_bytes=…, NCCL_NVLS_ENABLE=0, NCCL_MNNVL_ENABLE=0, "cross-domain A+B nodes").
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/csv.h"
#include "core/time.h"

namespace fleetsim {

struct ValidationRow {
  int line = 0;
  std::string hardware, model, metric;
  int num_gpus = 0;
  Bytes size;
  std::string system;     // fleetsim system used
  std::string algorithm;  // algorithm the tuner chose
  double measured = 0, predicted = 0, error_pct = 0;
  bool skipped = false;
  bool small = false;     // message < 1 MiB: reported separately
  bool training = false;  // a training-throughput row (tokens/s/GPU)
  std::string config;     // training rows: the parallel configuration simulated
  std::string reason;
};

struct ValidationReport {
  std::string reference;
  std::vector<ValidationRow> rows;
  double mape_pct = 0;        // rows with messages >= 1 MiB
  int n_rows = 0;             // rows compared with messages >= 1 MiB
  double mape_small_pct = 0;  // rows with messages < 1 MiB
  int n_small = 0;
  int n_skipped = 0;
  double max_abs_error_pct = 0;  // worst compared row (>= 1 MiB for collectives)
  std::map<std::string, std::pair<double, int>> mape_by_hardware;  // MAPE %, rows
};

// Overrides of the global framework parameters (for calibration/fit_framework.py); negative =
// use calibration/framework.json.
struct ValidateOptions {
  double kernel_gap_us = -1;
  double kernel_efficiency = -1;
  // Rows asking for more are skipped with the reason (the same limits as `fleetsim run`).
  int max_gpus = 131072;
  int64_t max_passes = 20'000'000;
};

ValidationReport validate_reference(const std::string& csv_path, const std::string& data_dir,
                                    const ValidateOptions& options = {});

}  // namespace fleetsim
