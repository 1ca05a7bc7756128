// Calibration files from fleetsim-calibrate: format checks (file, line, column in every error),
// import into a set, and the compute model reproducing the measured times of a set.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "compute/compute_model.h"
#include "compute/import.h"
#include "core/error.h"
#include "support/fixtures.h"

using namespace fleetsim;
using namespace fleetsim::test;
namespace fs = std::filesystem;

namespace {

const std::string kSample = kRoot + "/calibration/samples/h200-sample.csv";

GpuSpec h200() {
  GpuSpec g;
  g.model = "H200";
  g.hbm_bandwidth = Bandwidth::gbytes_per_second(4800);
  g.peak_dense_tflops = {{"tf32", 494.5}, {"bf16", 989}, {"fp8", 1979}};
  return g;
}

// The sample's lines, read here with plain string splitting (independent of the library's CSV
// reader); the harness writes no quoted fields before the notes column.
std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::string> v;
  for (std::string l; std::getline(f, l);)
    v.push_back(l);
  return v;
}
std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> v;
  std::stringstream ss(line);
  for (std::string c; std::getline(ss, c, ',');)
    v.push_back(c);
  return v;
}
// time_us (column 19) of the sample's bf16 GEMM row m x n x k.
double sample_gemm_us(int m, int n, int k) {
  for (const auto& l : lines_of(kSample)) {
    const auto f = fields(l);
    if (f.size() > 18 && f[1] == "gemm" && f[2] == "bf16" && f[5] == std::to_string(m) &&
        f[6] == std::to_string(n) && f[7] == std::to_string(k))
      return std::stod(f[18]);
  }
  FAIL("no sample row " << m << "x" << n << "x" << k);
  return 0;
}

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("fleetsim-import-" + std::to_string(reinterpret_cast<uintptr_t>(this)));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

// The sample with `line_no` (1-based) replaced by `text`.
std::string edited_sample(const TempDir& t, int line_no, const std::string& text) {
  auto v = lines_of(kSample);
  v[static_cast<size_t>(line_no - 1)] = text;
  const std::string p = (t.path / "edited.csv").string();
  std::ofstream f(p);
  for (const auto& l : v)
    f << l << "\n";
  return p;
}
int first_row_line(const std::string& kernel) {
  const auto v = lines_of(kSample);
  for (size_t i = 0; i < v.size(); ++i)
    if (fields(v[i]).size() > 1 && fields(v[i])[1] == kernel) return static_cast<int>(i + 1);
  return 0;
}

std::string error_of(const std::string& path) {
  try {
    read_calibration_file(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("The sample calibration file passes the format checks") {
  const CalibrationFile f = read_calibration_file(kSample);
  CHECK(f.gpu == "H200");
  CHECK(f.header.at("device").find("H200") != std::string::npos);
  CHECK(f.header.count("driver") == 1);
  CHECK(f.header.count("date") == 1);
  int gemm = 0, mem = 0;
  for (const auto& r : f.rows) {
    gemm += r.kernel == "gemm";
    mem += is_memory_kernel(r.kernel);
  }
  CHECK(gemm == 8);  // 2 x 2 x 2 grid
  CHECK(mem == 11);
  // The full measurement the sample was cut from passes too: 252 bf16 + 252 fp8 GEMM shapes and
  // 11 memory-bound rows.
  CHECK(read_calibration_file(kRoot + "/calibration/samples/h200-measured.csv").rows.size() == 515);
}

TEST_CASE("Calibration file errors name the file, line and column") {
  TempDir t;
  const int line = first_row_line("gemm");
  auto f = fields(lines_of(kSample)[static_cast<size_t>(line - 1)]);
  auto join = [](std::vector<std::string> v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i)
      s += (i ? "," : "") + v[i];
    return s;
  };
  SECTION("achieved TFLOP/s inconsistent with flops / time") {
    auto g = f;
    g[19] = std::to_string(std::stod(g[19]) * 1.5);
    const std::string e = error_of(edited_sample(t, line, join(g)));
    CHECK(e.find("edited.csv:line " + std::to_string(line) + ", column achieved_tflops") !=
          std::string::npos);
  }
  SECTION("flops not 2mnk") {
    auto g = f;
    g[17] = "12345";
    CHECK(error_of(edited_sample(t, line, join(g))).find("column flops: expected 2*batch*m*n*k") !=
          std::string::npos);
  }
  SECTION("unknown kernel") {
    auto g = f;
    g[1] = "gemmm";
    CHECK(error_of(edited_sample(t, line, join(g))).find("column kernel: expected one of gemm") !=
          std::string::npos);
  }
  SECTION("two GPUs in one file") {
    auto g = f;
    g[0] = "H100";
    CHECK(error_of(edited_sample(t, line, join(g))).find("expected one GPU per file") !=
          std::string::npos);
  }
  SECTION("a missing grid point") {
    auto g = f;
    g[1] = "copy_d2d";  // the row no longer is a GEMM: the grid has a gap
    g[16] = "1048576";
    g[20] = std::to_string(1048576.0 / std::stod(g[18]) * 1e-3);
    const std::string e = error_of(edited_sample(t, line, join(g)));
    CHECK(e.find("rows must form a full grid") != std::string::npos);
    CHECK(e.find("missing batch=1 m=" + f[5] + " n=" + f[6] + " k=" + f[7]) != std::string::npos);
  }
  SECTION("no provenance header") {
    const std::string e = error_of(edited_sample(t, 3, "# nothing here"));
    CHECK(e.find("expected a '# generator: ...' line") != std::string::npos);
  }
  SECTION("not a number") {
    auto g = f;
    g[18] = "fast";
    CHECK(error_of(edited_sample(t, line, join(g))).find("column time_us") != std::string::npos);
  }
}

TEST_CASE("A calibration set makes the compute model return the measured times") {
  TempDir t;
  const std::string set = (t.path / "h200").string();
  const std::string dest = import_calibration_file(kSample, set);
  CHECK(fs::exists(dest));
  CHECK(resolve_calibration_set(set, kRoot) == set);
  const ComputeModel base = ComputeModel::load(h200(), kRoot);
  const ComputeModel cm = ComputeModel::load(h200(), kRoot, set);

  // At every measured shape: the measured median (to the picosecond rounding of Time).
  for (int m : {2048, 8192})
    for (int n : {4096, 8192})
      for (int k : {4096, 8192}) {
        const double want = sample_gemm_us(m, n, k);
        CHECK(cm.gemm(m, n, k, DType::kBf16).us() ==
              Approx(want).epsilon(0).margin(2e-6));  // Time: ps
      }
  // Between them: geometric mean of the neighbours (multilinear in log2 m, ln t).
  const double mid = std::sqrt(sample_gemm_us(2048, 4096, 4096) * sample_gemm_us(8192, 4096, 4096));
  CHECK(cm.gemm(4096, 4096, 4096, DType::kBf16).us() == Approx(mid).epsilon(0).margin(2e-6));
  // fp8 is not in the sample: the published model, unchanged.
  CHECK(cm.gemm(8192, 8192, 8192, DType::kFp8) == base.gemm(8192, 8192, 8192, DType::kFp8));
  // Far outside the measured box the correction fades toward the base model.
  const double far = cm.gemm(256, 1024, 1024, DType::kBf16).us();
  const double far_base = base.gemm(256, 1024, 1024, DType::kBf16).us();
  CHECK(far > 0);
  CHECK(std::abs(std::log(far / far_base)) <
        std::abs(std::log(sample_gemm_us(2048, 4096, 4096) /
                          base.gemm(2048, 4096, 4096, DType::kBf16).us())) +
            1e-9);

  // HBM bandwidth: median of the memory rows >= 32 MiB (GB/s = bytes / time).
  std::vector<double> gbps;
  for (const auto& l : lines_of(kSample)) {
    const auto f = fields(l);
    if (f.size() > 20 && (f[1] == "copy_d2d" || f[1] == "rms_norm_fwd" || f[1] == "swiglu_fwd") &&
        std::stod(f[16]) >= 32.0 * 1024 * 1024)
      gbps.push_back(std::stod(f[16]) / std::stod(f[18]) * 1e-3);
  }
  std::sort(gbps.begin(), gbps.end());
  REQUIRE(gbps.size() == 10);
  CHECK(cm.hbm_bandwidth_gbps() == Approx(0.5 * (gbps[4] + gbps[5])).epsilon(2e-3));

  bool listed = false;
  for (const auto& s : cm.sources())
    listed = listed || (s.find("calibration set " + set) != std::string::npos &&
                        s.find("h200-sample.csv") != std::string::npos);
  CHECK(listed);
}

TEST_CASE("A calibration set of another GPU is an input error") {
  TempDir t;
  const std::string set = (t.path / "h200").string();
  import_calibration_file(kSample, set);
  GpuSpec b200 = h200();
  b200.model = "B200";
  CHECK_THROWS_WITH(ComputeModel::load(b200, kRoot, set),
                    Catch::Contains("calibration set has no rows for GPU B200 (it has: H200)"));
  CHECK_THROWS_WITH(resolve_calibration_set("no-such-set", kRoot),
                    Catch::Contains("calibration set 'no-such-set' not found"));
}
