// `fleetsim validate` on training rows written the way users and vendors write them: every
// hardware spelling of issue 16, every metric (hand-computed conversions from the predicted
// tokens/s/GPU), runs published in several units counted once, --default, and malformed cells.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include "core/csv.h"
#include "core/error.h"
#include "support/fixtures.h"
#include "validate/validate.h"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {

const char* kHeader =
    "source_url,source_version,hardware,num_gpus,model,precision,seq_len,gbs,mbs,tp,pp,cp,vp,ep,"
    "etp,dp,metric_name,metric_value,metric_unit,notes\n";

// Llama 3 8B on 8 GPUs, BF16, 8K tokens, GBS 32, MBS 1, no model parallelism.
std::string row(const std::string& hw, const std::string& metric, const std::string& value,
                const std::string& unit, const std::string& notes,
                const std::string& model = "LLAMA3_8B", const std::string& mbs = "1") {
  return "https://example.invalid/x,test," + hw + ",8," + model + ",BF16,8192,32," + mbs +
         ",1,1,1,,,,," + metric + "," + value + "," + unit + ",\"" + notes + "\"\n";
}

ValidationReport run(const std::string& name, const std::string& body,
                     const ValidateOptions& o = {}) {
  const ScratchFile f("validate_" + name + ".csv", kHeader + body);
  return validate_reference(f.path, kRoot, o);
}

// Llama 3 8B's model FLOPs per token at 8,192 tokens as NVIDIA's Megatron-Bridge counts them
// (causal attention): 6 × (linear weights of 32 layers + LM head) + 3 × 32 × 4 · (s/2) · 4096.
double llama3_8b_flops_per_token() {
  const double h = 4096, ffn = 14336, kv = 8 * 128, vocab = 128256, layers = 32, s = 8192;
  const double linear = h * h + 2 * h * kv + h * h + 3 * h * ffn;
  return 6 * (layers * linear + h * vocab) + 3 * layers * 4 * (s / 2) * h;
}

}  // namespace

TEST_CASE("every hardware spelling of issue 16 is modelled on its system") {
  const struct {
    const char* hardware;
    const char* notes;
    const char* system;
  } cases[] = {
      {"H100", "", "dgx-h100"},
      {"NVIDIA H100-SXM5-80GB", "", "dgx-h100"},
      {"NVIDIA H200-SXM5-141GB", "", "hgx-h200"},
      {"NVIDIA Blackwell GPU (B200-SXM-180GB)", "", "dgx-b200"},
      {"NVIDIA Blackwell GPU (GB200)", "nodes=2x4 GPUs", "dgx-gb200-nvl72"},
      {"NVIDIA Blackwell Ultra GPU (GB300)", "", "dgx-gb300-nvl72"},
      {"B300", "", "dgx-b300"},
      {"H100 (AWS p5.48xlarge)", "", "p5.48xlarge"},
  };
  std::string body;
  int i = 0;
  for (const auto& c : cases)
    body += row(c.hardware, "tokens_per_sec_per_gpu", "10000", "tokens/s/GPU",
                std::string(c.notes) + "; case=" + std::to_string(i++));
  const ValidationReport r = run("hardware", body);
  REQUIRE(r.rows.size() == std::size(cases));
  for (size_t k = 0; k < r.rows.size(); ++k) {
    INFO(cases[k].hardware << ": " << r.rows[k].reason);
    CHECK_FALSE(r.rows[k].skipped);
    CHECK(r.rows[k].system == cases[k].system);
    CHECK(r.rows[k].predicted > 0);
  }
  CHECK(r.n_rows == static_cast<int>(std::size(cases)));
  // H200 has H100's compute and more HBM bandwidth: not slower on the same node and fabric.
  CHECK(r.rows[2].predicted >= r.rows[0].predicted * 0.999);
}

TEST_CASE("step time, total tokens/s, TFLOP/s and MFU rows are the tokens/s prediction converted") {
  std::string body;
  body += row("DGX-H100", "tokens_per_sec_per_gpu", "10000", "tokens/s/GPU", "run=1");
  body += row("DGX-H100", "throughput_tokens_per_sec_total", "80000", "tokens/s", "run=2");
  body += row("DGX-H100", "step_time", "3.0", "s", "run=3");
  body += row("DGX-H100", "train_step_time_median_logged", "3000", "ms", "run=4");
  body += row("DGX-H100", "model_tflops_per_sec_per_gpu", "400", "TFLOP/s/GPU", "run=5");
  body += row("DGX-H100", "mfu", "0.4", "", "run=6");
  body += row("DGX-H100", "mfu_claimed", "40", "%", "run=7; peak_tflops=1000");
  const ValidationReport r = run("metrics", body);
  REQUIRE(r.rows.size() == 7);
  for (const auto& v : r.rows) {
    INFO("line " << v.line << ": " << v.reason);
    REQUIRE_FALSE(v.skipped);
  }
  const double p = r.rows[0].predicted;  // tokens/s/GPU
  REQUIRE(p > 1000);
  const double step_s = 32.0 * 8192 / (p * 8);  // tokens per step / tokens per second
  const double tflops = p * llama3_8b_flops_per_token() / 1e12;
  CHECK(r.rows[1].predicted == Approx(p * 8).epsilon(1e-12));
  CHECK(r.rows[2].predicted == Approx(step_s).epsilon(1e-9));
  CHECK(r.rows[3].predicted == Approx(step_s * 1000).epsilon(1e-9));
  CHECK(r.rows[3].unit == "ms");
  CHECK(r.rows[4].predicted == Approx(tflops).epsilon(1e-9));
  CHECK(r.rows[5].predicted == Approx(tflops / 989).epsilon(1e-9));  // H100 BF16 dense datasheet
  CHECK_THAT(r.rows[5].notes, Catch::Contains("MFU peak 989 TFLOP/s (BF16 dense datasheet)"));
  CHECK(r.rows[6].predicted == Approx(tflops / 1000 * 100).epsilon(1e-9));  // the row's peak, %
  CHECK_THAT(r.rows[6].notes, Catch::Contains("MFU peak 1000 TFLOP/s (row)"));
  for (const auto& v : r.rows)
    CHECK(v.error_pct == Approx((v.predicted - v.measured) / v.measured * 100).epsilon(1e-12));
  CHECK(r.n_rows == 7);
}

TEST_CASE("rows restating one run in another unit are counted once") {
  std::string body;
  body += row("DGX-H100", "model_tflops_per_sec_per_gpu", "450", "TFLOP/s/GPU", "same");
  body += row("DGX-H100", "tokens_per_sec_per_gpu", "9000", "tokens/s/GPU", "same");
  body += row("DGX-H100", "mfu", "45", "%", "same");
  const ValidationReport r = run("once", body);
  REQUIRE(r.rows.size() == 3);
  CHECK(r.n_rows == 1);
  CHECK_FALSE(r.rows[1].skipped);  // tokens/s/GPU is compared
  CHECK(r.rows[0].skipped);
  CHECK(r.rows[0].reason == "same run as line 3 (tokens_per_sec_per_gpu), counted once");
  CHECK(r.rows[2].reason == "same run as line 3 (tokens_per_sec_per_gpu), counted once");
}

TEST_CASE("a missing micro-batch is skipped unless --default gives it, and the row says so") {
  const std::string body =
      row("DGX-H100", "tokens_per_sec_per_gpu", "10000", "tokens/s/GPU", "", "LLAMA3_8B", "");
  ValidationReport r = run("default", body);
  REQUIRE(r.rows.size() == 1);
  CHECK(r.rows[0].skipped);
  CHECK_THAT(r.rows[0].reason, Catch::Contains("no micro-batch size (mbs)"));
  CHECK_THAT(r.rows[0].reason, Catch::Contains("--default mbs=VALUE"));
  ValidateOptions o;
  o.defaults["mbs"] = "1";
  r = run("default", body, o);
  CHECK_FALSE(r.rows[0].skipped);
  CHECK(r.rows[0].defaults == "mbs=1");
}

TEST_CASE("other frameworks and unknown names are skipped with the reason, never run as NeMo") {
  std::string body;
  body += row("H100", "tokens_per_sec_per_gpu", "1000", "", "", "Maxtext llama2-70b");
  body += row("H100", "tokens_per_sec_per_gpu", "1000", "", "framework=DeepSpeed", "Llama 3 70B");
  body += row("A100-SXM4-80GB", "tokens_per_sec_per_gpu", "1000", "", "", "LLAMA3_8B");
  body += row("H100", "tokens_per_sec_per_gpu", "1000", "", "", "Falcon-180B");
  const ValidationReport r = run("skips", body);
  REQUIRE(r.rows.size() == 4);
  for (const auto& v : r.rows)
    CHECK(v.skipped);
  CHECK_THAT(r.rows[0].reason, Catch::StartsWith("framework 'maxtext'"));
  CHECK_THAT(r.rows[1].reason, Catch::StartsWith("framework 'deepspeed'"));
  CHECK_THAT(r.rows[2].reason, Catch::Contains("known GPUs"));
  CHECK_THAT(r.rows[3].reason, Catch::Contains("--model-map"));
  // --system puts an unknown-hardware row on a named system.
  ValidateOptions o;
  o.system = "dgx-h100";
  const ValidationReport s =
      run("system", row("A100-SXM4-80GB", "tokens_per_sec_per_gpu", "1000", "", ""), o);
  CHECK_FALSE(s.rows[0].skipped);
  CHECK(s.rows[0].system == "dgx-h100");
}

TEST_CASE("malformed cells are errors with their line, and the other rows are still validated") {
  std::string body;
  body += row("DGX-H100", "step_time", "-2.5", "s", "a");
  body +=
      "https://example.invalid/x,test,DGX-H100,eight,LLAMA3_8B,BF16,8192,32,1,1,1,1,,,,,"
      "tokens_per_sec_per_gpu,1000,,b\n";
  body += row("DGX-H100", "tokens_per_sec_per_gpu", "10000", "tokens/s/GPU", "c");
  body += row("DGX-H100", "step_time", "3", "minutes", "d");
  body +=
      "https://example.invalid/x,test,DGX-H100,8,LLAMA3_8B,BF16,8192,32,one,1,1,1,,,,,"
      "tokens_per_sec_per_gpu,1000,,e\n";
  const ValidationReport r = run("errors", body);
  REQUIRE(r.rows.size() == 5);
  CHECK(r.n_errors == 4);
  CHECK(r.rows[0].error);
  CHECK(r.rows[0].line == 2);
  CHECK(r.rows[0].reason == "column 'metric_value': expected a positive step_time, got -2.5");
  CHECK(r.rows[1].error);
  CHECK(r.rows[1].reason == "column 'num_gpus': expected a positive integer, got 'eight'");
  CHECK_FALSE(r.rows[2].skipped);
  CHECK(r.n_rows == 1);
  CHECK(r.rows[3].reason == "metric_unit 'minutes' of a step time: expected s or ms");
  CHECK(r.rows[4].reason == "column 'mbs': expected a positive integer up to 16777216, got 'one'");
}

TEST_CASE("a wrong column stops with the file, line 1 and the column it should be") {
  const std::string path = temp_path("validate_column.csv");
  {
    std::ofstream f(path);
    f << "hardware,num_gpu,model,metric_name,metric_value,notes\nH100,8,x,busbw,1,\n";
  }
  try {
    validate_reference(path, kRoot);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.file() == path);
    CHECK(e.pointer() == "line 1");
    CHECK_THAT(e.message(), Catch::Contains("unknown column 'num_gpu' (did you mean 'num_gpus'?)"));
  }
  std::remove(path.c_str());
}

TEST_CASE("peak memory rows go to the memory estimator, and an empty GPU count is not stated") {
  // validation/memory-measured.csv rows 2-3: SimuMax's Llama 3 70B on 8 B200 (TP 1, PP 2), its
  // measured allocated and reserved peaks.
  const CsvTable t =
      parse_csv(read_text_file(kRoot + "/validation/memory-measured.csv"), "memory-measured.csv");
  std::string text = "source_url";
  for (size_t c = 1; c < t.header.size(); ++c)
    text += "," + t.header[c];
  text += "\n";
  const std::string all = read_text_file(kRoot + "/validation/memory-measured.csv");
  size_t a = all.find('\n') + 1, b = all.find('\n', a) + 1, e = all.find('\n', b) + 1;
  text += all.substr(a, e - a);
  // A throughput row with no GPU count: skipped as not stated, not an error.
  text += std::string(t.header.size() - 1, ',') + "\n";
  const std::string path = temp_path("validate_memory.csv");
  {
    std::ofstream f(path);
    f << text;
  }
  const ValidationReport r = validate_reference(path, kRoot);
  std::remove(path.c_str());
  REQUIRE(r.rows.size() == 3);
  for (int i = 0; i < 2; ++i) {
    INFO(r.rows[i].metric << ": " << r.rows[i].reason);
    CHECK_FALSE(r.rows[i].skipped);
    CHECK(r.rows[i].unit == "GiB");
    CHECK(std::fabs(r.rows[i].error_pct) < 15);
  }
  CHECK(r.rows[2].skipped);
  CHECK_FALSE(r.rows[2].error);
  CHECK(r.rows[2].reason == "num_gpus not stated");
  CHECK(r.n_errors == 0);
}
