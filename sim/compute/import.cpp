// Calibration sets measured by fleetsim-calibrate: file checks, import into a set directory, and
// the measured-GEMM grid the compute model interpolates (calibration/README.md).
#include "compute/import.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include "compute/compute_model.h"
#include "compute/log_grid.h"
#include "core/csv.h"
#include "core/error.h"

namespace fleetsim {

namespace fs = std::filesystem;
using compute_internal::KernelRow;

namespace {

std::string at_line(int line, const std::string& column = "") {
  return "line " + std::to_string(line) + (column.empty() ? "" : ", column " + column);
}

bool valid_name(const std::string& s) {
  return !s.empty() && s.size() <= 64 &&
         s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
             std::string::npos;
}

// Relative difference of a stated value from the one derived from the other columns.
bool close(double stated, double derived, double tol) {
  return std::abs(stated - derived) <= tol * std::max(std::abs(derived), 1e-30);
}

std::string g(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// "# key: value" lines before the CSV header, with their line numbers.
std::map<std::string, std::string> read_header(const std::string& text) {
  std::map<std::string, std::string> h;
  size_t pos = 0;
  while (pos < text.size() && text[pos] == '#') {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(pos + 1, nl - pos - 1);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t colon = line.find(':');
    if (colon != std::string::npos) {
      const size_t b = line.find_first_not_of(' ');
      std::string key = line.substr(b, colon - b);
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      if (valid_name(key) && h.count(key) == 0) h[key] = value;
    }
    pos = nl + 1;
  }
  return h;
}

// GEMM rows of each dtype must form a full grid over batch × m × n × k without duplicates.
void check_gemm_grids(const std::vector<KernelRow>& rows, const std::string& path) {
  std::map<std::string, std::vector<const KernelRow*>> by_dtype;
  for (const auto& r : rows)
    if (r.kernel == "gemm") by_dtype[r.dtype].push_back(&r);
  for (const auto& [dtype, sel] : by_dtype) {
    std::array<std::set<double>, 4> axes;
    std::map<std::array<double, 4>, int> seen;
    for (const KernelRow* r : sel) {
      const std::array<double, 4> key = {std::max(1.0, r->batch), r->m, r->n, r->k};
      const auto [it, inserted] = seen.emplace(key, r->line);
      if (!inserted)
        throw InputError(path, at_line(r->line),
                         "duplicate gemm " + dtype + " shape m=" + g(r->m) + " n=" + g(r->n) +
                             " k=" + g(r->k) + " (first on line " + std::to_string(it->second) +
                             ")");
      for (size_t a = 0; a < 4; ++a)
        axes[a].insert(key[a]);
    }
    const size_t total = axes[0].size() * axes[1].size() * axes[2].size() * axes[3].size();
    if (total == seen.size()) continue;
    for (double b : axes[0])
      for (double m : axes[1])
        for (double n : axes[2])
          for (double k : axes[3])
            if (seen.count({b, m, n, k}) == 0)
              throw InputError(path, at_line(sel.front()->line),
                               "gemm " + dtype + " rows must form a full grid over batch x m x " +
                                   "n x k (" + std::to_string(total) + " shapes, " +
                                   std::to_string(seen.size()) + " given); missing batch=" + g(b) +
                                   " m=" + g(m) + " n=" + g(n) + " k=" + g(k));
  }
}

void check_row(const KernelRow& r, const std::string& path) {
  const auto& known = calibration_kernels();
  if (std::find(known.begin(), known.end(), r.kernel) == known.end()) {
    std::string list;
    for (const auto& k : known)
      list += (list.empty() ? "" : ", ") + k;
    throw InputError(path, at_line(r.line, "kernel"),
                     "expected one of " + list + ", got '" + r.kernel + "'");
  }
  if (r.kernel == "gemm") {
    DType d;
    if (!parse_dtype(r.dtype, &d))
      throw InputError(path, at_line(r.line, "dtype"),
                       "expected fp32, bf16, fp8, mxfp8 or nvfp4, got '" + r.dtype + "'");
    for (const auto& [name, v] : {std::pair<const char*, double>{"m", r.m}, {"n", r.n}, {"k", r.k}})
      if (!(v >= 1) || v != std::floor(v))
        throw InputError(path, at_line(r.line, name), "expected a positive integer");
    const double flops = 2.0 * std::max(1.0, r.batch) * r.m * r.n * r.k;
    if (!close(r.flops, flops, 1e-6))
      throw InputError(path, at_line(r.line, "flops"),
                       "expected 2*batch*m*n*k = " + g(flops) + ", got " + g(r.flops));
    const double tflops = flops / (r.time_us * 1e-6) * 1e-12;
    if (!close(r.tflops, tflops, 0.01))
      throw InputError(path, at_line(r.line, "achieved_tflops"),
                       "expected flops / time_us = " + g(tflops) + " (1 %), got " + g(r.tflops));
    return;
  }
  if (r.bytes <= 0)
    throw InputError(path, at_line(r.line, "bytes"), "expected the bytes moved (> 0)");
  if (r.kernel.rfind("nccl_", 0) == 0) {
    if (r.batch < 2)
      throw InputError(path, at_line(r.line, "batch"),
                       "expected the number of GPUs in the collective (>= 2)");
    return;
  }
  const double gbps = r.bytes / (r.time_us * 1e-6) * 1e-9;
  if (!close(r.gbps, gbps, 0.01))
    throw InputError(path, at_line(r.line, "achieved_gbps"),
                     "expected bytes / time_us = " + g(gbps) + " (1 %), got " + g(r.gbps));
}

}  // namespace

const std::vector<std::string>& calibration_kernels() {
  static const std::vector<std::string> k = {"gemm",
                                             "copy_d2d",
                                             "rms_norm_fwd",
                                             "swiglu_fwd",
                                             "nccl_all_reduce",
                                             "nccl_all_gather",
                                             "nccl_reduce_scatter",
                                             "nccl_all_to_all"};
  return k;
}

bool is_memory_kernel(const std::string& kernel) {
  return kernel == "copy_d2d" || kernel == "rms_norm_fwd" || kernel == "swiglu_fwd";
}

CalibrationFile read_calibration_file(const std::string& path) {
  CalibrationFile f;
  f.path = path;
  const std::string text = read_text_file(path);
  if (text.rfind("# fleetsim kernel calibration table", 0) != 0)
    throw InputError(path, "line 1",
                     "expected '# fleetsim kernel calibration table' (format: "
                     "calibration/KERNELS.md)");
  f.header = read_header(text);
  for (const char* key : {"generator", "device", "date"})
    if (f.header.count(key) == 0)
      throw InputError(path, "header",
                       std::string("expected a '# ") + key +
                           ": ...' line before the CSV header (provenance of the measurement)");
  f.rows = compute_internal::read_kernel_table(path);
  if (f.rows.empty()) throw InputError(path, "line 2", "expected at least one row");
  for (const auto& r : f.rows) {
    if (!valid_name(r.gpu))
      throw InputError(
          path, at_line(r.line, "gpu"),
          "expected a GPU model name from [A-Za-z0-9._-] (e.g. H200, B200), got '" + r.gpu + "'");
    if (f.gpu.empty()) f.gpu = r.gpu;
    if (r.gpu != f.gpu)
      throw InputError(path, at_line(r.line, "gpu"),
                       "expected one GPU per file ('" + f.gpu + "' on line " +
                           std::to_string(f.rows.front().line) + "), got '" + r.gpu + "'");
    check_row(r, path);
  }
  check_gemm_grids(f.rows, path);
  return f;
}

std::string import_calibration_file(const std::string& file, const std::string& set_dir) {
  const CalibrationFile f = read_calibration_file(file);
  std::error_code ec;
  if (fs::exists(set_dir, ec) && !fs::is_directory(set_dir, ec))
    throw InputError(set_dir, "", "expected a calibration set directory, found a file");
  if (fs::is_directory(set_dir, ec)) {
    for (const auto& other : read_calibration_set(set_dir)) {
      if (fs::path(other.path).filename() == fs::path(file).stem().string() + ".csv") continue;
      if (other.gpu != f.gpu)
        throw InputError(file, "line " + std::to_string(f.rows.front().line) + ", column gpu",
                         "set " + set_dir + " holds " + other.gpu + " measurements (" + other.path +
                             "); a set is for one GPU, this file is for " + f.gpu);
    }
  }
  fs::create_directories(set_dir, ec);
  if (ec) throw InputError(set_dir, "", "cannot create the set directory: " + ec.message());
  const std::string dest = (fs::path(set_dir) / (fs::path(file).stem().string() + ".csv")).string();
  if (fs::exists(dest, ec) && fs::equivalent(dest, file, ec)) return dest;
  const std::string tmp = dest + ".tmp";
  fs::copy_file(file, tmp, fs::copy_options::overwrite_existing, ec);
  if (!ec) fs::rename(tmp, dest, ec);
  if (ec) throw InputError(dest, "", "cannot write: " + ec.message());
  return dest;
}

std::string resolve_calibration_set(const std::string& name_or_path, const std::string& data_dir) {
  const bool is_path = name_or_path.find('/') != std::string::npos;
  if (!is_path && !valid_name(name_or_path))
    throw InputError("", "",
                     "expected a calibration set name from [A-Za-z0-9._-] or a path, got '" +
                         name_or_path + "'");
  const std::string dir =
      is_path ? name_or_path
              : (fs::path(data_dir) / "calibration" / "sets" / name_or_path).string();
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw InputError("", "",
                     "calibration set '" + name_or_path + "' not found (no directory " + dir +
                         "; create it with 'fleetsim calibrate import FILE --set NAME')");
  bool any = false;
  for (const auto& e : fs::directory_iterator(dir, ec))
    any = any || e.path().extension() == ".csv";
  if (!any)
    throw InputError("", "",
                     "calibration set '" + name_or_path + "' (" + dir + ") has no .csv file");
  return dir;
}

std::vector<CalibrationFile> read_calibration_set(const std::string& set_dir) {
  std::vector<std::string> paths;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(set_dir, ec))
    if (e.path().extension() == ".csv") paths.push_back(e.path().string());
  std::sort(paths.begin(), paths.end());
  std::vector<CalibrationFile> out;
  for (const auto& p : paths)
    out.push_back(read_calibration_file(p));
  return out;
}

namespace compute_internal {

MeasuredGemm MeasuredGemm::build(const std::vector<const KernelRow*>& rows) {
  MeasuredGemm mg;
  if (rows.empty()) return mg;
  auto key = [](const KernelRow* r) {
    return std::array<double, 4>{std::log2(std::max(1.0, r->batch)), std::log2(r->m),
                                 std::log2(r->n), std::log2(r->k)};
  };
  for (const KernelRow* r : rows) {
    const auto x = key(r);
    for (size_t a = 0; a < 4; ++a)
      mg.axes_[a].push_back(x[a]);
  }
  sort_unique_axes(&mg.axes_);
  size_t total = 1;
  for (const auto& ax : mg.axes_)
    total *= ax.size();
  FLEETSIM_ASSERT(total == rows.size());  // read_calibration_file checked the full grid
  mg.log_t_.assign(total, 0.0);
  for (const KernelRow* r : rows)
    mg.log_t_[grid_index(mg.axes_, key(r))] = std::log(r->time_us);
  return mg;
}

double MeasuredGemm::time_us(
    double m, double n, double k, double batch,
    const std::function<double(double, double, double, double)>& base) const {
  return anchored_time_us(axes_, log_t_, m, n, k, batch, base);
}

std::string MeasuredGemm::describe() const {
  const char* names[4] = {"batch", "m", "n", "k"};
  std::string s;
  for (size_t a = 0; a < 4; ++a) {
    const auto& ax = axes_[a];
    s += (a ? ", " : "") + std::string(names[a]) + " " + g(std::exp2(ax.front()));
    if (ax.size() > 1) s += ".." + g(std::exp2(ax.back()));
    s += " (" + std::to_string(ax.size()) + ")";
  }
  return s;
}

}  // namespace compute_internal
}  // namespace fleetsim
