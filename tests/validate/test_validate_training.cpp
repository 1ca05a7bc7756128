// How `fleetsim validate` reads the precision of NVIDIA performance-summary rows.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>

#include "support/fixtures.h"
#include "validate/validate.h"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {

const char* kHeader =
    "source_url,source_version,hardware,num_gpus,model,precision,seq_len,gbs,mbs,tp,pp,cp,vp,ep,"
    "etp,dp,metric_name,metric_value,metric_unit,notes\n";

// One Llama 3 8B row (8 GPUs, GBS 128, 8K tokens) with the given precision column and notes.
std::string row(const char* hw, const char* prec, int mbs, const char* value, const char* notes) {
  return std::string("https://example.invalid/x,test,") + hw + ",8,LLAMA3_8B," + prec +
         ",8192,128," + std::to_string(mbs) + ",1,1,1,1,1,,,tokens_per_sec_per_gpu," + value +
         ",tokens/s/GPU,\"" + notes + "\"\n";
}

// The same row with a source_version naming a release of calibration/releases.json.
std::string row_of(const char* version, const char* prec) {
  std::string r = row("DGX-H100", prec, 1, "13000", "task=Pre-Training");
  const std::string from = ",test,";
  return r.replace(r.find(from), from.size(), std::string(",") + version + ",");
}

}  // namespace

TEST_CASE("parenthesised performance-summary values run at the footnote's finer quantization") {
  const std::string path = temp_path("validate_precision.csv");
  {
    std::ofstream f(path);
    f << kHeader;
    // NeMo 25.07 GB200: "31737 (30341)", the page states per-tensor current scaling.
    f << row("DGX-GB200", "FP8", 2, "31737", "page: FP8 with per-tensor current-step scaling");
    f << row("DGX-GB200", "FP8", 2, "30341",
             "parenthesised variant in source cell; page: FP8 with per-tensor current-step "
             "scaling");
    // 25.09 tables without a precision column: the footnote's block sizes per system.
    f << row("DGX-GB200", "", 2, "29925", "parenthesised variant = different quantization");
    f << row("DGX-H100", "", 1, "13000", "parenthesised variant = different quantization");
    f << row("DGX-H100", "", 1, "14079", "primary (non-parenthesised) value");
  }
  const ValidationReport r = validate_reference(path, kRoot);
  std::remove(path.c_str());
  REQUIRE(r.rows.size() == 5);
  auto ends = [](const std::string& s, const std::string& e) {
    return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
  };
  for (const auto& v : r.rows)
    REQUIRE_FALSE(v.skipped);
  CHECK(ends(r.rows[0].config, "fp8_cs"));
  CHECK(ends(r.rows[1].config, "mxfp8"));
  CHECK(ends(r.rows[2].config, "mxfp8"));
  CHECK(ends(r.rows[3].config, "fp8_blk"));
  CHECK(ends(r.rows[4].config, "fp8_cs"));
  // NeMo measured the MXFP8 variant 4-6 % slower on the same configuration; Transformer
  // Engine's same-shape GEMM benchmark has MXFP8 GEMMs 5 % slower than per-tensor FP8.
  CHECK(r.rows[1].predicted < r.rows[0].predicted);
}

TEST_CASE("Blackwell Ultra performance-summary rows run on the DGX B300 and GB300 topologies") {
  const std::string path = temp_path("validate_b300.csv");
  {
    std::ofstream f(path);
    f << kHeader;
    f << row("DGX-B300", "FP8-CS", 2, "30000", "task=Pre-Training");
    f << row("DGX-GB300", "FP8-CS", 2, "30000", "task=Pre-Training");
    f << row("DGX-A100", "FP8-CS", 2, "30000", "task=Pre-Training");
  }
  const ValidationReport r = validate_reference(path, kRoot);
  std::remove(path.c_str());
  REQUIRE(r.rows.size() == 3);
  CHECK_FALSE(r.rows[0].skipped);
  CHECK(r.rows[0].system == "dgx-b300");
  CHECK_FALSE(r.rows[1].skipped);
  CHECK(r.rows[1].system == "dgx-gb300-nvl72");
  CHECK(r.rows[2].skipped);  // no topology: skipped with the reason, not guessed
}

TEST_CASE("a row's GA decides its micro-batch where the MBS cell belongs to the other variant") {
  const std::string path = temp_path("validate_ga.csv");
  {
    std::ofstream f(path);
    f << kHeader;
    // 8 GPUs, tp = pp = 1: dp 8. GBS 128 with GA 16 is 128 / (8 · 16) = 1 sample per
    // micro-batch, whatever the MBS cell says; GA 8 agrees with MBS 2 and changes nothing.
    f << row("DGX-H100", "FP8", 2, "13000", "GA=16; primary (non-parenthesised) value");
    f << row("DGX-H100", "FP8", 2, "13000", "GA=8; primary (non-parenthesised) value");
    f << row("DGX-H100", "FP8", 2, "13000", "primary (non-parenthesised) value");
  }
  const ValidationReport r = validate_reference(path, kRoot);
  std::remove(path.c_str());
  REQUIRE(r.rows.size() == 3);
  CHECK(r.rows[0].config.find(" mbs1 ") != std::string::npos);
  CHECK(r.rows[0].notes.find("mbs 1 = gbs / (dp · GA 16)") != std::string::npos);
  CHECK(r.rows[1].config.find(" mbs2 ") != std::string::npos);
  CHECK(r.rows[2].config.find(" mbs2 ") != std::string::npos);
}

TEST_CASE("a plain FP8 is delayed scaling in NeMo 2.0 tables and current scaling in Bridge's") {
  const std::string path = temp_path("validate_fp8_stack.csv");
  {
    std::ofstream f(path);
    f << kHeader;
    // releases.json: nemo-24.07 is NeMo 2.0, nemo-26.04 Megatron-Bridge 0.4.0, whose
    // performance scripts have no delayed-scaling recipe (utils/precision.py).
    f << row_of("NeMo 24.07 container", "FP8");
    f << row_of("26.04 NeMo container", "FP8");
    f << row_of("26.04 NeMo container", "FP8-DS");
    f << row_of("no version", "FP8");
  }
  const ValidationReport r = validate_reference(path, kRoot);
  std::remove(path.c_str());
  REQUIRE(r.rows.size() == 4);
  auto ends = [](const std::string& s, const std::string& e) {
    return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
  };
  for (const auto& v : r.rows)
    REQUIRE_FALSE(v.skipped);
  CHECK(ends(r.rows[0].config, "fp8_ds"));
  CHECK(ends(r.rows[1].config, "fp8_cs"));
  CHECK(ends(r.rows[2].config, "fp8_ds"));  // said explicitly
  CHECK(ends(r.rows[3].config, "fp8_cs"));  // no release named: the default, nemo-26.08
}
