// `fleetsim import mlperf`: the fixture tree in tests/validate/mlperf/ (the published MLPerf
// Training results layout: systems/*.json, results/<system>/<benchmark>/result_*.txt MLLOG lines,
// READMEs naming config_*.sh) → reference-CSV rows → `validate` models every row. Fixture values
// are test data, not measurements.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/csv.h"
#include "core/error.h"
#include "support/fixtures.h"
#include "validate/mlperf.h"
#include "validate/validate.h"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {

const std::string kTree = kRoot + "/tests/validate/mlperf";

std::string field(const CsvTable& t, size_t r, const char* col) {
  return t.rows[r][static_cast<size_t>(t.column(col))];
}

}  // namespace

TEST_CASE("import mlperf reads hardware, layout, batch, parallelism and step times with sources") {
  const MlperfImport imp = import_mlperf(kTree);
  REQUIRE(imp.rows == 3);
  CHECK(imp.skipped.empty());
  const CsvTable t = parse_csv(imp.csv, "import");
  REQUIRE(t.rows.size() == 3);
  // 8 x DGX H100, two result files.
  CHECK(field(t, 0, "hardware") == "NVIDIA H100-SXM5-80GB");
  CHECK(field(t, 0, "num_gpus") == "64");
  CHECK(field(t, 0, "model") == "llama31_405b");
  CHECK(field(t, 0, "gbs") == "16");
  CHECK(field(t, 0, "seq_len") == "8192");
  CHECK(field(t, 0, "tp") == "8");
  CHECK(field(t, 0, "pp") == "2");
  CHECK(field(t, 0, "cp") == "1");
  CHECK(field(t, 0, "mbs") == "1");  // config_common.sh, sourced by the run's config
  CHECK(field(t, 0, "precision") == "FP8");
  CHECK(field(t, 0, "metric_name") == "train_step_time_median_logged");
  CHECK(field(t, 0, "metric_unit") == "s");
  CHECK(field(t, 0, "metric_value") == "12.41");  // median of 12.41 12.38 12.45 12.40 12.43
  const std::string notes = field(t, 0, "notes");
  CHECK_THAT(notes, Catch::Contains("nodes=8x8 GPUs (systems/dgxh100_n8_ngc25.04_nemo.json"));
  CHECK_THAT(notes, Catch::Contains("tp from benchmarks/llama31_405b/implementations/nemo/"
                                    "config_DGXH100_8x8x16xtp8pp2cp1.sh:5"));
  CHECK_THAT(notes, Catch::Contains(
                        "gbs from results/dgxh100_n8_ngc25.04_nemo/llama31_405b/result_0.txt:6"));
  CHECK_THAT(notes, Catch::Contains("framework=NeMo NVIDIA Release 25.04"));
  CHECK(field(t, 0, "source_url") == "results/dgxh100_n8_ngc25.04_nemo/llama31_405b/result_0.txt");
  CHECK(field(t, 1, "metric_value") == "12.505");  // four values: (12.49 + 12.52) / 2
  // 2 x GB300 trays: FP4 from the config, mbs from gbs / (dp x GA) after `unset MICRO_BATCH_SIZE`.
  CHECK(field(t, 2, "hardware") == "NVIDIA Blackwell Ultra GPU (GB300)");
  CHECK(field(t, 2, "num_gpus") == "8");
  CHECK(field(t, 2, "precision") == "NVFP4");
  CHECK(field(t, 2, "mbs") == "1");
  CHECK_THAT(field(t, 2, "notes"), Catch::Contains("mbs = gbs / (dp x GA)"));
  CHECK(field(t, 2, "metric_value") == "9.91");
}

TEST_CASE("import mlperf round trip: every fixture row is modelled by validate") {
  const MlperfImport imp = import_mlperf(kTree);
  const std::string path = temp_path("mlperf_roundtrip.csv");
  {
    std::ofstream f(path);
    f << imp.csv;
  }
  const ValidationReport r = validate_reference(path, kRoot);
  std::remove(path.c_str());
  REQUIRE(r.rows.size() == 3);
  for (const auto& v : r.rows) {
    INFO("line " << v.line << ": " << v.reason);
    CHECK_FALSE(v.skipped);
    CHECK(v.unit == "s");
    CHECK(v.predicted > 0);
  }
  CHECK(r.n_rows == 3);
  CHECK(r.rows[0].system == "dgx-h100");
  CHECK(r.rows[2].system == "dgx-gb300-nvl72");
  CHECK(r.rows[0].family == "llama3.1-405b");
}

TEST_CASE("import mlperf: a truncated MLLOG line is an error naming the file and line") {
  namespace fs = std::filesystem;
  const fs::path copy = temp_path("mlperf_tree");
  fs::remove_all(copy);
  fs::copy(kTree, copy, fs::copy_options::recursive);
  const fs::path log = copy / "results/gb300_n2_ngc25.09_nemo/llama31_405b/result_0.txt";
  std::string text = read_text_file(log.string());
  // Cut line 7 (max_sequence_length) in the middle, as a killed job leaves it.
  size_t start = 0;
  for (int l = 1; l < 7; ++l)
    start = text.find('\n', start) + 1;
  const size_t end = text.find('\n', start);
  text = text.substr(0, start + (end - start) / 2) + text.substr(end);
  {
    std::ofstream f(log);
    f << text;
  }
  try {
    import_mlperf(copy.string());
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.file() == log.string());
    CHECK(e.pointer() == "line 7");
    CHECK_THAT(e.message(), Catch::Contains("expected one complete MLLOG JSON object"));
  }
  fs::remove_all(copy);
}

TEST_CASE("import mlperf: a folder without systems/ and results/ is an error") {
  CHECK_THROWS_AS(import_mlperf(kRoot + "/tests/validate"), InputError);
}
