// Calibration sets: kernel timings a user measured on their own GPUs with fleetsim-calibrate
// (calibration/bench/), checked and stored as <set dir>/<name>.csv in the format of
// calibration/kernels/*.csv (calibration/KERNELS.md; calibration/README.md for the harness's
// kernels and header). A scenario names a set (cluster.calibration_set); ComputeModel then uses
// the set's measured GEMM grids and memory bandwidth instead of the published tables where they
// cover the GPU and dtype, and lists the set's files in sources().
#pragma once

#include <array>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "compute/tables.h"

namespace fleetsim {

// One checked calibration file: its "# key: value" header and its rows.
struct CalibrationFile {
  std::string path;
  std::map<std::string, std::string> header;  // device, driver, cuda_runtime, cublaslt, date, ...
  std::vector<compute_internal::KernelRow> rows;
  std::string gpu;  // the GpuSpec model every row is for (one GPU per file)
};

// Kernel names a calibration file may hold: "gemm", the memory-bound kernels (copy_d2d,
// rms_norm_fwd, swiglu_fwd) and the NCCL collectives (nccl_all_reduce, nccl_all_gather,
// nccl_reduce_scatter, nccl_all_to_all).
const std::vector<std::string>& calibration_kernels();
bool is_memory_kernel(const std::string& kernel);

// Reads and checks a calibration file: the header lines "# device:", "# date:" and "# generator:",
// one GPU for every row, known kernels and dtypes, positive shapes, flops = 2·batch·m·n·k and
// achieved TFLOP/s = flops / time (1 %), achieved GB/s = bytes / time for memory kernels, and GEMM
// rows of each dtype forming a full grid over batch × m × n × k (the model interpolates on it).
// Throws InputError naming the file, the line (and column) and what was expected.
CalibrationFile read_calibration_file(const std::string& path);

// Checks `file` and copies it into `set_dir` (created if missing) as <stem>.csv; returns the
// destination path. A set holds files of one GPU only: importing a file of another GPU into a
// set is an input error.
std::string import_calibration_file(const std::string& file, const std::string& set_dir);

// A set given by name (<data_dir>/calibration/sets/<name>) or by a path (contains '/'). Returns
// the directory; InputError("", "", ...) if it does not exist or holds no .csv file.
std::string resolve_calibration_set(const std::string& name_or_path, const std::string& data_dir);

// Every file of a set directory, sorted by name, checked as by read_calibration_file.
std::vector<CalibrationFile> read_calibration_set(const std::string& set_dir);

namespace compute_internal {

// Measured GEMM times of one GPU and dtype on a full grid over log2(batch, m, n, k): inside the
// grid box ln t is interpolated multilinearly (exact at measured shapes); outside it the base
// model (published tables or the datasheet fallback) is used, corrected by the measured / base
// ratio at the nearest box point, the correction fading as 1 / (1 + log2 distance).
class MeasuredGemm {
 public:
  bool ok() const { return !log_t_.empty(); }
  // rows: the GEMM rows of one dtype (a full grid; read_calibration_file checks this).
  static MeasuredGemm build(const std::vector<const KernelRow*>& rows);
  // `base(m, n, k, batch)` returns the base model's time in microseconds.
  double time_us(double m, double n, double k, double batch,
                 const std::function<double(double, double, double, double)>& base) const;
  int rows() const { return static_cast<int>(log_t_.size()); }
  // "m 1024..16384 (5), n ..., k ..." for sources().
  std::string describe() const;

 private:
  std::array<std::vector<double>, 4> axes_;  // log2 of batch, m, n, k; ascending
  std::vector<double> log_t_;
};

}  // namespace compute_internal
}  // namespace fleetsim
