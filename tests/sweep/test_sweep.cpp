// Sweeps: expansion counts (grid, zip, random), filters, errors with pointers, the results codec,
// and the runner: -j independence, resume after a cut, shards + merge = unsharded run, merge
// naming missing points.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/error.h"
#include "report/sweep_results.h"
#include "scenario/sweep_loader.h"
#include "support/fixtures.h"
#include "sweep/sweep.h"

using namespace fleetsim;
using namespace fleetsim::test;
namespace fs = std::filesystem;

namespace {

const std::string kFile = kRoot + "/scenarios/sweeps/test.json";

// A fast collective base: all-reduce of one size over `count` p6-b200 instances.
const char* kCollBase =
    R"({"name": "t", "cluster": {"system": "p6-b200.48xlarge", "count": 1},
        "workload": {"type": "collective", "operation": "all_reduce", "sizes": ["16MiB"],
                     "algorithm": "ring"}})";

std::string sweep(const std::string& axes, const std::string& extra = "",
                  const std::string& base = kCollBase) {
  return R"({"name": "s", "base": )" + base + R"(, "axes": )" + axes + extra + "}";
}

SweepPlan plan_of(const std::string& text, const LoadOptions& opt = load_options()) {
  return parse_sweep(text, kFile, opt);
}

std::string error_of(const std::string& text, const LoadOptions& opt = load_options()) {
  try {
    plan_of(text, opt);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() /
                     ("fleetsim-test-sweep-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

SweepRunOptions run_opts(const fs::path& out, int jobs, ShardSpec shard = {}) {
  SweepRunOptions o;
  o.jobs = jobs;
  o.shard = shard;
  o.out_dir = out.string();
  o.load = load_options();
  o.progress = ProgressMode::kNone;
  return o;
}

const char* kSmallAxes =
    R"([{"mode": "grid", "pointer": "/cluster/count", "values": [1, 2, 4]},
        {"mode": "grid", "pointer": "/workload/sizes/0", "values": ["1MiB", "16MiB", "256MiB"]},
        {"mode": "grid", "pointer": "/workload/operation", "values": ["all_reduce", "all_gather"]}])";

}  // namespace

TEST_CASE("grid axes expand to the cartesian product, first axis slowest") {
  const SweepPlan p = plan_of(sweep(kSmallAxes));
  REQUIRE(p.combinations == 3 * 3 * 2);
  REQUIRE(p.points.size() == 18);
  REQUIRE(p.columns ==
          std::vector<std::string>{"/cluster/count", "/workload/sizes/0", "/workload/operation"});
  CHECK(p.points[0].values_json == std::vector<std::string>{"1", "\"1MiB\"", "\"all_reduce\""});
  CHECK(p.points[1].values_json == std::vector<std::string>{"1", "\"1MiB\"", "\"all_gather\""});
  CHECK(p.points[2].values_json == std::vector<std::string>{"1", "\"16MiB\"", "\"all_reduce\""});
  CHECK(p.points[17].values_json == std::vector<std::string>{"4", "\"256MiB\"", "\"all_gather\""});
  std::set<std::string> keys;
  for (const auto& pt : p.points) {
    CHECK(pt.key.size() == 16);
    keys.insert(pt.key);
    CHECK(pt.scenario_json.find("\"operation\":" + pt.values_json[2]) != std::string::npos);
  }
  CHECK(keys.size() == 18);
  // Same file, same expansion.
  CHECK(plan_of(sweep(kSmallAxes)).sweep_key == p.sweep_key);
}

TEST_CASE("zip axes run lists in lockstep and combine with grids") {
  const SweepPlan p = plan_of(sweep(R"([
    {"mode": "zip", "parameters": [
      {"pointer": "/cluster/count", "values": [1, 2, 4, 8]},
      {"pointer": "/workload/algorithm", "values": ["ring", "tree", "ring", "auto"]}]},
    {"mode": "grid", "pointer": "/seed", "values": [1, 2]}])"));
  REQUIRE(p.points.size() == 4 * 2);
  CHECK(p.points[0].values_json == std::vector<std::string>{"1", "\"ring\"", "1"});
  CHECK(p.points[3].values_json == std::vector<std::string>{"2", "\"tree\"", "2"});
  CHECK(p.points[7].values_json == std::vector<std::string>{"8", "\"auto\"", "2"});
  CHECK(error_of(sweep(R"([{"mode": "zip", "parameters": [
      {"pointer": "/cluster/count", "values": [1, 2]},
      {"pointer": "/seed", "values": [1, 2, 3]}]}])")) ==
        kFile +
            ":/axes/0/parameters/1/values: zip lists must have equal lengths: expected 2 "
            "values, got 3");
}

TEST_CASE("random axes: n samples, seeded, within range, with the distribution's moments") {
  const std::string axes = R"([{"mode": "random", "n": 2000, "seed": 11, "parameters": [
      {"pointer": "/cluster/fabric/oversubscription", "distribution": "uniform", "min": 1, "max": 4},
      {"pointer": "/workload/sizes/0", "distribution": "log_uniform", "min": 1024, "max": 1073741824, "integer": true},
      {"pointer": "/workload/algorithm", "distribution": "choice", "values": ["ring", "tree"]}]}])";
  const SweepPlan p = plan_of(sweep(axes));
  REQUIRE(p.combinations == 2000);
  REQUIRE(p.points.size() == 2000);  // continuous values: no duplicates
  double sum = 0, sum_log2 = 0;
  int ring = 0;
  for (const auto& pt : p.points) {
    const double o = std::stod(pt.values_json[0]);
    const double s = std::stod(pt.values_json[1]);
    CHECK((o >= 1 && o <= 4));
    CHECK((s >= 1024 && s <= 1073741824.0 && s == std::floor(s)));
    sum += o;
    sum_log2 += std::log2(s);
    ring += pt.values_json[2] == "\"ring\"";
    CHECK((pt.values_json[2] == "\"ring\"" || pt.values_json[2] == "\"tree\""));
  }
  // U(1, 4): mean 2.5, sd 0.866 → the mean of 2000 has sd 0.019. log2 of a log-uniform on
  // [2^10, 2^30] is U(10, 30): mean 20, sd 5.77 → 0.13 for 2000. A fair choice: 1000 ± 22.
  CHECK(sum / 2000 == Approx(2.5).margin(0.1));
  CHECK(sum_log2 / 2000 == Approx(20).margin(0.6));
  CHECK(std::abs(ring - 1000) < 120);
  CHECK(plan_of(sweep(axes)).sweep_key == p.sweep_key);
  std::string other = axes;
  other.replace(other.find("\"seed\": 11"), 10, "\"seed\": 12");
  CHECK(plan_of(sweep(other)).sweep_key != p.sweep_key);
}

TEST_CASE("integer uniform sampling covers min to max, duplicates are kept once") {
  const SweepPlan p = plan_of(sweep(R"([{"mode": "random", "n": 400, "parameters": [
      {"pointer": "/cluster/count", "distribution": "uniform", "min": 1, "max": 4, "integer": true}]}])"));
  CHECK(p.combinations == 400);
  REQUIRE(p.points.size() == 4);  // 1, 2, 3, 4 in the order first drawn
  REQUIRE(p.skipped.size() == 1);
  CHECK(p.skipped[0].reason == "duplicate of an earlier point");
  CHECK(p.skipped[0].count == 396);
  std::set<std::string> v;
  for (const auto& pt : p.points)
    v.insert(pt.values_json[0]);
  CHECK(v == std::set<std::string>{"1", "2", "3", "4"});
}

TEST_CASE("filters skip combinations and count them per filter") {
  // 8 GPUs (one p6-b200): tp·pp divides 8 for (1,1) (1,2) (1,4) (2,1) (2,2) (2,4) (4,1) (4,2)
  // (8,1): 9 of the 5 × 3 = 15 pairs; tp = 3 never.
  const std::string base =
      R"({"name": "t", "cluster": {"system": "p6-b200.48xlarge", "count": 1},
          "workload": {"type": "training", "model": "llama3-8b",
                       "parallelism": {"tp": 1, "pp": 1}, "batch": {"global": 16, "seq_len": 2048}}})";
  const SweepPlan p = plan_of(sweep(R"([
      {"mode": "grid", "pointer": "/workload/parallelism/tp", "values": [1, 2, 3, 4, 8]},
      {"mode": "grid", "pointer": "/workload/parallelism/pp", "values": [1, 2, 4]}])",
                                    R"(, "filters": [
      {"name": "tp is not 3", "expr": "{/workload/parallelism/tp} != 3"},
      {"name": "tp·pp divides the GPUs", "expr": "cluster_gpus % ({/workload/parallelism/tp} * {/workload/parallelism/pp}) == 0 && {/cluster/system} == 'p6-b200.48xlarge'"}])",
                                    base));
  CHECK(p.combinations == 15);
  CHECK(p.points.size() == 9);
  REQUIRE(p.skipped.size() == 2);
  CHECK(p.skipped[0].reason == "tp is not 3");
  CHECK(p.skipped[0].count == 3);
  CHECK(p.skipped[1].reason == "tp·pp divides the GPUs");
  CHECK(p.skipped[1].count == 3);
  for (const auto& pt : p.points)
    CHECK(8 % (std::stoi(pt.values_json[0]) * std::stoi(pt.values_json[1])) == 0);
}

TEST_CASE("bad sweep files: exit-2 errors with the sweep file's JSON pointer") {
  CHECK(error_of(sweep(
            R"([{"mode": "grid", "pointer": "/workload/operatoin", "values": ["all_reduce"]}])")) ==
        kFile +
            ":/axes/0/pointer: unknown scenario key 'operatoin' at /workload; did you mean "
            "'operation'?");
  CHECK(error_of(sweep(R"([{"mode": "grid", "pointer": "/cluster/count", "values": []}])")) ==
        kFile + ":/axes/0/values: expected a non-empty array of values (an empty axis)");
  CHECK(error_of(
            sweep(R"([{"mode": "grid", "pointer": "/cluster/count", "values": [2, "four"]}])")) ==
        kFile +
            ":/axes/0/values/1: value \"four\" for /cluster/count: expected an integer, got a "
            "string \"four\"");
  CHECK(error_of(sweep(R"([{"mode": "grid", "pointer": "/cluster/count", "values": [0]}])"))
            .find(":/axes/0/values/0: value 0 for /cluster/count: expected an integer in [1,") !=
        std::string::npos);
  CHECK(error_of(sweep(R"([{"mode": "grid", "pointer": "/name/x", "values": [1]}])")) ==
        kFile + ":/axes/0/pointer: /name is a string in the base scenario, not an object or array");
  CHECK(error_of(sweep(R"([{"mode": "grid", "pointer": "cluster/count", "values": [1]}])")) ==
        kFile + ":/axes/0/pointer: expected a JSON pointer starting with '/', got 'cluster/count'");
  CHECK(error_of(sweep(R"([{"mode": "grd", "pointer": "/seed", "values": [1]}])")) ==
        kFile +
            ":/axes/0/mode: expected one of 'grid', 'zip', 'random', got \"grd\"; did you "
            "mean 'grid'?");
  CHECK(error_of(sweep(R"([{"mode": "grid", "pointer": "/seed", "value": [1]}])")) ==
        kFile + ":/axes/0/value: unknown key 'value'; did you mean 'values'?");
  CHECK(error_of(sweep("[]")) == kFile + ":/axes: expected a non-empty array of axes");
  CHECK(error_of(sweep(R"([{"mode": "grid", "pointer": "/seed", "values": [1]},
                           {"mode": "grid", "pointer": "/seed", "values": [2]}])")) ==
        kFile + ":/axes/1/pointer: '/seed' is already set by /axes/0/pointer");
  CHECK(error_of(sweep(R"([{"mode": "grid", "pointer": "/seed", "values": [1]}])",
                       R"(, "filters": [{"name": "f", "expr": "{/seed} >"}])")) ==
        kFile +
            ":/filters/0/expr: at character 10 of '{/seed} >': expected a value, got the end "
            "of the expression");
  CHECK(error_of(sweep(R"([{"mode": "grid", "pointer": "/seed", "values": [1]}])",
                       R"(, "filters": [{"name": "f", "expr": "{/workload/group/gpus} > 1"}])")) ==
        kFile +
            ":/filters/0/expr: filter 'f' uses {/workload/group/gpus}, which combination 0 "
            "does not set (give it a value in the base scenario)");
  CHECK(error_of(R"({"name": "s", "base": "missing.json", "axes": []})")
            .find(":/base: base scenario ") != std::string::npos);
  CHECK(error_of(sweep(R"([{"mode": "random", "n": 3, "parameters": [{"pointer": "/cluster/count",
        "distribution": "uniform", "min": 0, "max": 4, "integer": true}]}])"))
            .rfind(kFile + ":/axes/0/parameters/0/min: value 0 for /cluster/count: expected an "
                           "integer in [1, ",
                   0) == 0);
}

TEST_CASE("the point limit: refused up front naming --max-points, which raises it") {
  // 3 x 4 x 5 = 60 combinations; the limit is checked as each axis multiplies in.
  const std::string three_axes = sweep(R"([
      {"mode": "grid", "pointer": "/seed", "values": [1, 2, 3]},
      {"mode": "grid", "pointer": "/cluster/count", "values": [1, 2, 3, 4]},
      {"mode": "grid", "pointer": "/workload/sizes/0", "values": ["1MiB", "2MiB", "4MiB",
                                                                  "8MiB", "16MiB"]}])");
  LoadOptions opt = load_options();
  opt.max_sweep_points = 59;
  CHECK(error_of(three_axes, opt) ==
        kFile +
            ":/axes/2: the sweep expands to more points than its limit of 59 (raise it with "
            "--max-points)");
  opt.max_sweep_points = 60;
  CHECK(plan_of(three_axes, opt).points.size() == 60);
  // A random axis is refused before its samples are drawn.
  opt.max_sweep_points = 10;
  CHECK(error_of(sweep(R"([{"mode": "random", "n": 11, "parameters": [{"pointer": "/seed",
        "distribution": "uniform", "min": 1, "max": 100, "integer": true}]}])"),
                 opt) == kFile +
                             ":/axes/0/n: 11 samples are more than the sweep's limit of 10 "
                             "points (raise it with --max-points)");
  CHECK(LoadOptions{}.max_sweep_points == 1'000'000);
}

TEST_CASE("result rows round-trip through JSON Lines, CSV quotes") {
  const SweepResultsCodec codec;
  SweepRow r;
  r.point = 7;
  r.key = "0123456789abcdef";
  r.status = "ok";
  r.values_json = {"4", "\"a,b\""};
  r.metrics[0] = MetricValue::str("training");
  r.metrics[1] = MetricValue::integral(64);
  r.metrics[9] = MetricValue::num(4.25);
  r.metrics[14] = MetricValue::flag(true);
  const std::vector<std::string> cols = {"/x", "/y"};
  const std::string line = codec.jsonl_row(r, cols);
  CHECK(line.rfind(R"({"point":7,"key":"0123456789abcdef","status":"ok","/x":4,"/y":"a,b",)", 0) ==
        0);
  const auto back = codec.parse_jsonl_row(line, cols);
  REQUIRE(back);
  CHECK(back->point == 7);
  CHECK(back->values_json == r.values_json);
  CHECK(back->metrics == r.metrics);
  CHECK_FALSE(codec.parse_jsonl_row(line.substr(0, line.size() - 5), cols));
  const std::string csv = codec.csv({r}, cols);
  CHECK(csv.substr(0, csv.find('\n')).rfind("point,key,status,/x,/y,workload,gpus,tp,", 0) == 0);
  CHECK(csv.find("\n7,0123456789abcdef,ok,4,\"a,b\",training,64,,") != std::string::npos);
}

TEST_CASE("sweep rows carry the report's metrics (collective and training)") {
  const SweepPlan p =
      plan_of(sweep(R"([{"mode": "grid", "pointer": "/cluster/count", "values": [2]}])"));
  PointRunner runner(load_options());
  const SweepRow r = runner.run(p, p.points[0]);
  REQUIRE(r.status == "ok");
  auto m = [&](std::string_view name) {
    for (size_t i = 0; i < kNumSweepMetrics; ++i)
      if (kSweepMetricColumns[i] == name) return r.metrics[i];
    FAIL("no metric");
    return MetricValue{};
  };
  CHECK(m("gpus").integer == 16);
  CHECK(m("size_bytes").integer == 16 << 20);
  CHECK(m("algorithm").text == "ring");
  // algbw = size / time (GB/s); busbw = algbw · 2(n−1)/n for an all-reduce (nccl-tests).
  CHECK(m("algbw_gbps").number == Approx((16 << 20) / (m("time_us").number * 1e-6) / 1e9));
  CHECK(m("busbw_gbps").number == Approx(m("algbw_gbps").number * 2 * 15 / 16.0));
  CHECK(m("step_time_s").kind == MetricValue::Kind::kNone);

  const SweepPlan t = parse_sweep(
      R"({"name": "q", "base": "../quickstart.json",
          "axes": [{"mode": "grid", "pointer": "/workload/batch/global", "values": [64, 3]}]})",
      kFile, load_options());
  const SweepRow ok = runner.run(t, t.points[0]);
  REQUIRE(ok.status == "ok");
  const auto get = [&](const SweepRow& row, std::string_view name) {
    for (size_t i = 0; i < kNumSweepMetrics; ++i)
      if (kSweepMetricColumns[i] == name) return row.metrics[i];
    return MetricValue{};
  };
  // tokens/s/GPU = global batch · sequence length / step time / GPUs.
  CHECK(get(ok, "tokens_per_s_per_gpu").number ==
        Approx(64.0 * 8192 / get(ok, "step_time_s").number / 64));
  CHECK(get(ok, "dp").integer == 4);
  CHECK(get(ok, "micro_batches").integer == 16);  // 64 / (micro 1 · dp 4)
  double parts = 0;
  for (const char* k : {"compute_s", "tp_exposed_s", "cp_exposed_s", "ep_exposed_s", "pp_exposed_s",
                        "dp_exposed_s", "bubble_s", "optimizer_s", "host_exposed_s"})
    parts += get(ok, k).number;
  CHECK(parts == Approx(get(ok, "step_time_s").number).epsilon(1e-6));
  // A global batch of 3 is not a multiple of micro·dp: recorded, not thrown.
  const SweepRow bad = runner.run(t, t.points[1]);
  CHECK(bad.status == "invalid");
  CHECK(bad.error.find("test.json[point 1]:/workload/batch/global") != std::string::npos);
}

TEST_CASE("sweeps over run-level fields report the run summary") {
  const SweepPlan p = parse_sweep(
      R"({"name": "r", "base": "../run-quickstart-tiered.json",
          "axes": [{"mode": "grid", "pointer": "/run/replicas", "values": [4]},
                   {"mode": "grid", "pointer": "/run/checkpoint/interval", "values": ["10min", "2h"]}]})",
      kFile, load_options());
  REQUIRE(p.points.size() == 2);
  PointRunner runner(load_options());
  auto get = [](const SweepRow& row, std::string_view name) {
    for (size_t i = 0; i < kNumSweepMetrics; ++i)
      if (kSweepMetricColumns[i] == name) return row.metrics[i];
    return MetricValue{};
  };
  for (const auto& pt : p.points) {
    const SweepRow r = runner.run(p, pt);
    REQUIRE(r.status == "ok");
    const double ettr = get(r, "ettr_mean").number;
    CHECK((ettr > 0 && ettr <= 1));
    CHECK(get(r, "ettr_p10").number <= get(r, "ettr_p50").number);
    CHECK(get(r, "ettr_p50").number <= get(r, "ettr_p90").number);
    // Goodput never exceeds the healthy rate: tokens/s/GPU × 64 GPUs.
    CHECK(get(r, "goodput_tokens_per_s").number <=
          get(r, "tokens_per_s_per_gpu").number * 64 * (1 + 1e-9));
    CHECK(get(r, "interruptions_mean").kind == MetricValue::Kind::kNumber);
  }
}

TEST_CASE("runner: same results for any -j, resume after a cut, shards + merge = unsharded") {
  const SweepPlan p = plan_of(sweep(kSmallAxes));
  const SweepResultsCodec codec;
  const fs::path d = temp_dir("runner");
  const SweepRunSummary s1 = run_sweep(p, run_opts(d / "j1", 1), codec);
  CHECK(s1.shard_points == 18);
  CHECK(s1.ran == 18);
  CHECK(s1.ok == 18);
  run_sweep(p, run_opts(d / "j3", 3), codec);
  const std::string jsonl = slurp(d / "j1/results.jsonl");
  const std::string csv = slurp(d / "j1/results.csv");
  CHECK(slurp(d / "j3/results.jsonl") == jsonl);
  CHECK(slurp(d / "j3/results.csv") == csv);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 19);

  // Rerun: nothing to do.
  const SweepRunSummary again = run_sweep(p, run_opts(d / "j1", 2), codec);
  CHECK(again.already_done == 18);
  CHECK(again.ran == 0);
  CHECK(slurp(d / "j1/results.jsonl") == jsonl);

  // Keep 7 rows in reverse order plus half a line (a kill mid-write): 11 run, same files.
  {
    std::vector<std::string> lines;
    std::istringstream in(jsonl);
    for (std::string l; std::getline(in, l);)
      lines.push_back(l);
    fs::create_directories(d / "cut");
    std::ofstream o2(d / "cut/results.jsonl", std::ios::binary);
    for (int i = 6; i >= 0; --i)
      o2 << lines[i] << "\n";
    o2 << lines[7].substr(0, lines[7].size() / 2);
  }
  const SweepRunSummary resumed = run_sweep(p, run_opts(d / "cut", 2), codec);
  CHECK(resumed.already_done == 7);
  CHECK(resumed.ran == 11);
  CHECK(slurp(d / "cut/results.jsonl") == jsonl);
  CHECK(slurp(d / "cut/results.csv") == csv);

  // Three shards, balanced (6 points each), merged: the unsharded files byte for byte.
  std::vector<std::string> inputs;
  for (int i = 0; i < 3; ++i) {
    const fs::path sd = d / ("shard-" + std::to_string(i));
    const SweepRunSummary s = run_sweep(p, run_opts(sd, 1 + i % 2, ShardSpec{i, 3}), codec);
    CHECK(s.shard_points == 6);
    inputs.push_back(sd.string());
  }
  const MergeSummary m = merge_sweep_results((d / "merged").string(), inputs, codec);
  CHECK(m.points == 18);
  CHECK(slurp(d / "merged/results.jsonl") == jsonl);
  CHECK(slurp(d / "merged/results.csv") == csv);
  CHECK(slurp(d / "merged/manifest.json") == slurp(d / "j1/manifest.json"));

  // A missing shard is named with its points.
  try {
    merge_sweep_results((d / "m2").string(), {inputs[0], inputs[2]}, codec);
    FAIL("merge accepted a missing shard");
  } catch (const InputError& e) {
    const std::string w = e.what();
    CHECK(w.find("6 of 18 points are missing:") != std::string::npos);
    CHECK(w.find("point 1 (shard 1/3): /cluster/count=1, /workload/sizes/0=\"1MiB\", "
                 "/workload/operation=\"all_gather\"") != std::string::npos);
    CHECK(w.find("shards with no input folder: 1/3") != std::string::npos);
  }
  CHECK_FALSE(fs::exists(d / "m2/results.jsonl"));
  // The same shard twice is a duplicate, not a merge.
  CHECK_THROWS_WITH(
      merge_sweep_results((d / "m3").string(),
                          {inputs[0], inputs[1], inputs[2], (d / "j1").string()}, codec),
      Catch::Contains("is also in"));
  fs::remove_all(d);
}

TEST_CASE("shard specs") {
  CHECK(parse_shard("2/5", "--shard").index == 2);
  CHECK(parse_shard("2/5", "--shard").count == 5);
  CHECK_THROWS_WITH(parse_shard("5/5", "--shard"),
                    "--shard:/: expected I/N with 0 <= I < N (e.g. 0/4), got '5/5'");
  CHECK_THROWS(parse_shard("1", "--shard"));
  CHECK_THROWS(parse_shard("-1/3", "--shard"));
  int counts[4] = {0, 0, 0, 0};
  for (int i = 0; i < 1001; ++i)
    for (int s = 0; s < 4; ++s)
      counts[s] += in_shard(i, ShardSpec{s, 4});
  CHECK(counts[0] == 251);
  CHECK(counts[3] == 250);
}

TEST_CASE("the sweep files in scenarios/sweeps expand") {
  for (const auto& f : fs::directory_iterator(kRoot + "/scenarios/sweeps")) {
    const SweepPlan p = load_sweep(f.path().string(), load_options());
    CHECK(!p.points.empty());
  }
  const SweepPlan b = load_sweep(kRoot + "/scenarios/sweeps/bench-1000-64gpu.json", load_options());
  CHECK(b.points.size() == 1000);
  // 3 tp × 4 pp × 2 vp × 3 (batch, precision) = 72, minus pp = 1 with vp = 5 (3 × 3).
  const SweepPlan q =
      load_sweep(kRoot + "/scenarios/sweeps/quickstart-parallelism.json", load_options());
  CHECK(q.combinations == 72);
  CHECK(q.points.size() == 63);
}
