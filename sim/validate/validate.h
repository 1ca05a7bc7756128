// `fleetsim validate`: simulates each row of a reference CSV (the column format of
// validation/*.csv: hardware, num_gpus, model, precision, seq_len, gbs, mbs, tp, pp, cp, vp, ep,
// etp, dp, metric_name, metric_value, metric_unit, notes) that fleetsim can model and compares
// with the measurement.
// - Training rows build the scenario the row describes (validate_training.cpp: hardware and
//   model names through names.h, the study layer simulates the step) and compare the metric the
//   row gives (metrics.h): tokens/s per GPU or in total, step time, model TFLOP/s per GPU, MFU.
//   Rows that restate another row of the same run in another unit are counted once.
// - Collective rows (model = all_reduce, all_gather, reduce_scatter, alltoall) compare bus
//   bandwidth; the message size, NVLS setting and placement are read from the notes column
//   (msg_bytes=…, NCCL_NVLS_ENABLE=0, NCCL_MNNVL_ENABLE=0, "cross-domain A+B nodes").
// Rows fleetsim cannot model are skipped with the reason; malformed cells (a non-numeric GPU
// count, a negative step time) are errors with the file and line, recorded per row so that the
// other rows are still validated (the CLI prints them and exits 2).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/csv.h"
#include "core/progress.h"
#include "core/time.h"

namespace fleetsim {

// The predicted step of a training row, for --csv: where the time goes (seconds per step on the
// critical rank) and whether the configuration fits in HBM.
struct RowBreakdown {
  double step_time_s = 0;
  double compute_s = 0, tp_exposed_s = 0, cp_exposed_s = 0, ep_exposed_s = 0, pp_exposed_s = 0,
         dp_exposed_s = 0, bubble_s = 0, optimizer_s = 0;
  double host_exposed_s = 0;  // GPU idle waiting for host launches and syncs
  // The memory estimate of the step (workload/memory.h): the allocated peak, what the GPU
  // needs (reserved + CUDA context and NCCL buffers), the HBM, and whether the need fits.
  double memory_gib = 0, memory_need_gib = 0, hbm_gib = 0;
  bool memory_fits = false;
  bool memory_checked = false;  // a simulated throughput row (memory rows have no step)
  // Does not fit, and the printed layout's floor (workload/memory.h memory_floor: weights as
  // the precision recipe keeps them + main-gradient buffer + CUDA context on the most loaded
  // stage) exceeds the HBM by itself: no recompute, offload or optimizer option can make it
  // run, so the row's layout is not what ran (reported apart, not counted in n_not_fitting).
  bool layout_infeasible = false;
  double memory_floor_gib = 0;
};

struct ValidationRow {
  int line = 0;
  std::string hardware, model, metric, unit;
  int num_gpus = 0;
  Bytes size;
  std::string system;     // fleetsim system used
  std::string algorithm;  // algorithm the tuner chose
  double measured = 0, predicted = 0, error_pct = 0;
  bool skipped = false;
  bool error = false;     // a malformed cell (reason says which and what was expected)
  bool small = false;     // message < 1 MiB: reported separately
  bool training = false;  // a training row
  std::string family;     // training rows: the zoo model simulated ("llama3-70b")
  std::string config;     // training rows: the parallel configuration simulated
  std::string defaults;   // training rows: the --default values used ("mbs=1")
  std::string release;    // training rows: the framework release whose switches were used
  // Training rows with a recipe of their release in calibration/recipe-layouts.csv
  // (recipe_layouts.h): the recipe's name and source, how the printed layout differs from it
  // (empty: it agrees), and which layout judged the row ("printed" or "recipe"; empty: no
  // simulated step).
  std::string recipe_config, recipe_differences, layout_source;
  std::string source;  // memory rows: the source and statistic ("SimuMax (...) peak_reserved_gib")
  std::string notes;   // how names were resolved, the peak an MFU row used
  std::string reason;
  RowBreakdown breakdown;
};

struct ValidationReport {
  std::string reference;
  std::vector<ValidationRow> rows;
  double mape_pct = 0;        // rows with messages >= 1 MiB
  int n_rows = 0;             // rows compared with messages >= 1 MiB
  double mape_small_pct = 0;  // rows with messages < 1 MiB
  int n_small = 0;
  int n_skipped = 0;
  int n_errors = 0;
  // Compared throughput rows whose configuration the memory estimator says does not fit in
  // HBM (they all ran: each is a memory-model error), of n_memory_checked such rows.
  int n_not_fitting = 0;
  int n_memory_checked = 0;
  int n_layout_infeasible = 0;  // not fitting rows whose printed layout cannot run at all
  // Compared throughput rows whose printed layout differs from their release's recipe, and
  // those of them judged with the recipe's layout (the printed one does not fit, the recipe's
  // does: recipe_layouts.h).
  int n_layout_differs = 0;
  int n_recipe_layout = 0;
  double max_abs_error_pct = 0;  // worst compared row (>= 1 MiB for collectives)
  std::map<std::string, std::pair<double, int>> mape_by_hardware;  // MAPE %, rows
  // Memory rows per source and statistic (validate_memory.h memory_row_source + metric): MAPE %,
  // bias % (mean signed error), rows.
  struct SourceError {
    double mape_pct = 0, bias_pct = 0;
    int n = 0;
  };
  std::map<std::string, SourceError> memory_by_source;
  // Dispatch benchmark rows (validate_dispatch.h): MAPE %, rows per "library metric [EFA]".
  bool dispatch = false;
  std::map<std::string, std::pair<double, int>> mape_by_group;
};

// Overrides of the global framework parameters (for calibration/fit_framework.py); negative =
// use calibration/framework.json.
struct ValidateOptions {
  double kernel_efficiency = -1;
  // Rows asking for more are skipped with the reason (the same limits as `fleetsim run`).
  int max_gpus = 131072;
  int64_t max_passes = 20'000'000;
  std::string system;                           // --system: every row on this system
  std::map<std::string, std::string> models;    // --model-map: name → zoo id or model path
  std::map<std::string, std::string> defaults;  // --default KEY=VALUE for empty cells
  Progress* progress = nullptr;                 // told the rows done (may be null)
};

// Keys --default accepts (the configuration columns of a training row).
const std::vector<std::string>& default_keys();

ValidationReport validate_reference(const std::string& csv_path, const std::string& data_dir,
                                    const ValidateOptions& options = {});

}  // namespace fleetsim
