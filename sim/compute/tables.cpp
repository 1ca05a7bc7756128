// Reader for the calibration/kernels/*.csv tables written by calibration/import_kernels.py and
// by the CUDA harness (one format, documented in calibration/KERNELS.md).
#include "compute/tables.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "core/csv.h"
#include "core/error.h"

namespace fleetsim::compute_internal {

namespace {

const char* const kRequired[] = {"gpu",           "kernel",     "dtype",   "impl",
                                 "batch",         "m",          "n",       "k",
                                 "seq_q",         "seq_kv",     "heads",   "kv_heads",
                                 "head_dim_qk",   "head_dim_v", "causal",  "window",
                                 "bytes",         "flops",      "time_us", "achieved_tflops",
                                 "achieved_gbps", "source_url"};

double parse_number(const std::string& cell, const std::string& file, int line,
                    const std::string& column) {
  if (cell.empty()) return 0.0;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(cell.c_str(), &end);
  if (end == cell.c_str() || *end != '\0' || errno == ERANGE || !std::isfinite(v) || v < 0)
    throw InputError(file, "line " + std::to_string(line) + ", column " + column,
                     "expected a non-negative number, got '" + cell + "'");
  return v;
}

}  // namespace

std::vector<KernelRow> read_kernel_table(const std::string& path) {
  const std::string text = read_text_file(path);
  const CsvTable t = parse_csv_after_comments(text, path);
  for (const char* name : kRequired) {
    if (t.column(name) < 0)
      throw InputError(path, "line " + std::to_string(t.header_line),
                       std::string("missing column '") + name + "' in the header");
  }
  auto col = [&](const char* name) { return static_cast<size_t>(t.column(name)); };
  std::vector<KernelRow> rows;
  rows.reserve(t.rows.size());
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const auto& r = t.rows[i];
    const int line = t.line_of_row[i];
    if (r.size() != t.header.size())
      throw InputError(path, "line " + std::to_string(line),
                       "expected " + std::to_string(t.header.size()) + " fields, got " +
                           std::to_string(r.size()));
    KernelRow k;
    k.line = line;
    k.gpu = r[col("gpu")];
    k.kernel = r[col("kernel")];
    k.dtype = r[col("dtype")];
    k.impl = r[col("impl")];
    k.source_url = r[col("source_url")];
    auto num = [&](const char* name) { return parse_number(r[col(name)], path, line, name); };
    k.batch = num("batch");
    k.m = num("m");
    k.n = num("n");
    k.k = num("k");
    k.seq_q = num("seq_q");
    k.seq_kv = num("seq_kv");
    k.heads = num("heads");
    k.kv_heads = num("kv_heads");
    k.head_dim_qk = num("head_dim_qk");
    k.head_dim_v = num("head_dim_v");
    const std::string& c = r[col("causal")];
    if (!c.empty() && c != "0" && c != "1")
      throw InputError(path, "line " + std::to_string(line) + ", column causal",
                       "expected 0 or 1, got '" + c + "'");
    k.causal = c == "1";
    k.window = num("window");
    k.bytes = num("bytes");
    k.flops = num("flops");
    k.time_us = num("time_us");
    k.tflops = num("achieved_tflops");
    k.gbps = num("achieved_gbps");
    if (k.gpu.empty() || k.kernel.empty())
      throw InputError(path, "line " + std::to_string(line), "expected a gpu and a kernel name");
    if (k.time_us <= 0)
      throw InputError(path, "line " + std::to_string(line) + ", column time_us",
                       "expected a positive time in microseconds");
    rows.push_back(std::move(k));
  }
  return rows;
}

}  // namespace fleetsim::compute_internal
