// The scenario's "run" section: bad values are input errors naming the JSON pointer; the report
// of a run scenario is byte-identical for every thread count.
#include <catch2/catch.hpp>
#include <string>

#include "core/error.h"
#include "report/report.h"
#include "scenario/scenario.h"
#include "study/cluster.h"
#include "study/run_level.h"
#include "study/training_step.h"
#include "support/fixtures.h"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {

std::string scenario_with_run(const std::string& run) {
  return R"({"name": "t", "cluster": {"system": "p6-b200.48xlarge", "count": 8},
  "workload": {"type": "training", "model": "llama3-70b",
    "parallelism": {"tp": 4, "pp": 4, "vp": 5, "sequence_parallel": true, "distributed_optimizer": true},
    "batch": {"global": 128, "micro": 1, "seq_len": 8192}, "precision": "fp8_cs"},
  "run": )" +
         run + "}";
}

std::string error_of(const std::string& run) {
  LoadOptions opt = load_options();
  try {
    parse_scenario(scenario_with_run(run), "s.json", opt);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("run section: invalid rates and intervals name the JSON pointer") {
  CHECK(error_of(R"({"duration": "1d", "checkpoint": {"mode": "sync", "interval": "0min",
    "write_bandwidth": "10GBps"}})")
            .find("s.json:/run/checkpoint/interval: expected a time > 0") != std::string::npos);
  CHECK(error_of(R"({"duration": "1d", "checkpoint": {"mode": "sync", "interval": "-5min",
    "write_bandwidth": "10GBps"}})")
            .find("/run/checkpoint/interval: expected a time") != std::string::npos);
  CHECK(error_of(R"({"duration": "1d", "failures": {"profile": "llama3-h100",
    "overrides": {"gpu": {"rate_per_hour": -1}}}})")
            .find("/run/failures/overrides/gpu/rate_per_hour: expected a number in [0") !=
        std::string::npos);
  CHECK(error_of(R"({"duration": "1d", "failures": {"overrides": {"gpuu": {"rate_per_hour": 1}}}})")
            .find("/run/failures/overrides/gpuu: unknown key 'gpuu'; did you mean 'gpu'?") !=
        std::string::npos);
  CHECK(error_of(R"({"duration": "1d", "failures": {"profile": "llama3"}})")
            .find("/run/failures/profile: unknown failure profile 'llama3'") != std::string::npos);
  CHECK(error_of(R"({"replicas": 10})").find("s.json:/run: expected a token_budget") !=
        std::string::npos);
  CHECK(error_of(R"({"duration": "1d", "health_checks": {"interval": "0s"}})")
            .find("/run/health_checks/interval: expected a time > 0") != std::string::npos);
  CHECK(error_of(R"({"duration": "1d", "checkpoint": {"mode": "async"}})")
            .find("/run/checkpoint/write_bandwidth: missing required key") != std::string::npos);
  CHECK(error_of(R"({"duration": "1d", "gray_failures": [{"kind": "gpu_clock", "rate_per_hour":
    1e-5, "speed": [0.9, 0.5], "duration_median": "10min"}]})")
            .find("/run/gray_failures/0/speed: expected 0 < min <= max < 1") != std::string::npos);
  CHECK(error_of(R"({"duration": "1d", "spares": -1})").find("/run/spares") != std::string::npos);
  CHECK(error_of(R"({"duration": "1d", "failures": {"profile": "llama3-h100",
    "inject": [{"at": "1h", "component": "gpu", "node": 8}]}})")
            .find("node 8 is outside the job's 8 nodes") != std::string::npos);
}

TEST_CASE("run scenario: checkpoint size from the model, same report for every thread count") {
  LoadOptions opt = load_options();
  Scenario s = load_scenario(kRoot + "/scenarios/run-quickstart-tiered.json", opt);
  REQUIRE(s.run);
  CHECK(s.run->checkpoint.size_bytes ==
        Approx(static_cast<double>(total_params(s.training->model)) * 14.0));
  CHECK(s.run->checkpoint.gpus == 64);
  CHECK(s.run->checkpoint.nodes == 8);
  CHECK(s.run->reservation.segments.size() == 2);
  s.run->replicas = 12;
  const StudyCluster cluster = load_study_cluster(s, kRoot);
  const StepOutcome step = simulate_training_step(s, cluster, false);
  const RunOutcome a = simulate_run_level(s, cluster, step, 1, true);
  const RunOutcome b = simulate_run_level(s, cluster, step, 2, true);
  CHECK(training_report_json(s, cluster.topo, step.result, nullptr, &a) ==
        training_report_json(s, cluster.topo, step.result, nullptr, &b));
  CHECK(run_events_jsonl(a.summary.events) == run_events_jsonl(b.summary.events));
  CHECK(a.summary.planned_mean >= 1);  // the first segment ends before the budget is reached
}
