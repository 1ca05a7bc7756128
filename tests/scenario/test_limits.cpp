// Work limits refused up front (scenario/limits.h, run.h estimated_replica_events): the flows of
// a collective, the memory of the simulation, the run-level events, each with its estimate and
// the flag that raises it; raised, the same scenario loads.
#include <catch2/catch.hpp>
#include <string>

#include "core/error.h"
#include "run/run.h"
#include "scenario/limits.h"
#include "scenario/scenario.h"
#include "support/fixtures.h"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {
std::string a2a(int count) {
  return R"({"name": "a", "cluster": {"system": "p6-b200.48xlarge", "count": )" +
         std::to_string(count) +
         R"(}, "workload": {"type": "collective", "operation": "all_to_all", "algorithm":
         "direct", "sizes": ["1GiB"]}})";
}
InputError error_of(const std::string& text, const LoadOptions& o) {
  try {
    parse_scenario(text, "s.json", o);
  } catch (const InputError& e) {
    return e;
  }
  FAIL("no error");
  return InputError("", "", "");
}
bool has(const InputError& e, const std::string& s) {
  return e.message().find(s) != std::string::npos;
}
}  // namespace

TEST_CASE("the all-to-all over 4096 GPUs is refused by --max-flows and loads when raised") {
  const InputError e = error_of(a2a(512), load_options());
  CHECK(e.pointer() == "/cluster/count");
  // 4096 × 4095 ordered pairs.
  CHECK(has(e, "simulates 16773120 flows per size"));
  CHECK(has(e, "the limit is 8388608 (raise it with --max-flows)"));
  LoadOptions raised = load_options();
  raised.max_flows = 20'000'000;
  const Scenario s = parse_scenario(a2a(512), "s.json", raised);
  // 16773120 flows × 270 B = 4.2 GiB of the 8 GiB default.
  CHECK(estimated_sim_memory(s) == int64_t{16773120} * kBytesPerPlanFlow);
}

TEST_CASE("a collective over the memory limit names --max-sim-memory and the estimate") {
  LoadOptions o = load_options();
  o.max_sim_memory = 64 << 20;
  // 512 GPUs: 261632 flows × 270 B = 70,640,640 B = 67.37 MiB > 64 MiB.
  const InputError e = error_of(a2a(64), o);
  CHECK(e.pointer() == "/cluster/count");
  CHECK(has(e, "about 67.37 MiB"));
  CHECK(has(e, "261632 flows in its largest plan"));
  CHECK(has(e, "the limit is 64 MiB (raise it with --max-sim-memory)"));
  o.max_sim_memory = 68 << 20;
  CHECK_NOTHROW(parse_scenario(a2a(64), "s.json", o));
}

TEST_CASE("a training step over the memory limit: passes x bytes per pass") {
  // Llama 3.1 405B on 131,072 B200, TP 8 PP 16 VP 8, 16 micro-batches per pipeline:
  // 16384 TP units × 16 × 8 × 2 = 4,194,304 passes × 48 B = 192 MiB.
  const std::string text =
      R"({"name": "l", "cluster": {"system": "p6-b200.48xlarge", "count": 16384}, "workload":
      {"type": "training", "model": "llama3.1-405b", "parallelism": {"tp": 8, "pp": 16, "vp": 8},
      "batch": {"global": 16384, "micro": 1, "seq_len": 8192}}})";
  const Scenario s = parse_scenario(text, "s.json", load_options());
  CHECK(estimated_step_passes(*s.training) == 4'194'304);
  CHECK(estimated_sim_memory(s) == 4'194'304 * kBytesPerStepPass);
  LoadOptions o = load_options();
  o.max_sim_memory = 100 << 20;
  const InputError e = error_of(text, o);
  CHECK(e.pointer() == "/workload/batch");
  CHECK(has(e, "about 192 MiB"));
  CHECK(has(e, "raise it with --max-sim-memory"));
}

TEST_CASE("run-level events: rates × units × wall time, closed form") {
  RunSpec spec;
  spec.duration_s = 10 * 3600.0;
  FailureClass c;
  c.component = "gpu";
  c.rate_per_hour = 1e-3;  // per GPU-hour
  c.per = FaultUnit::kGpu;
  spec.failures.classes.push_back(c);
  GrayFailureSpec g;
  g.rate_per_hour = 2e-3;  // per GPU-hour
  spec.gray.push_back(g);
  spec.health.enabled = true;
  spec.health.gray_consecutive = 3;
  spec.checkpoint.interval_minutes = 30;
  JobShape job;
  job.gpus = 1000;
  job.nodes = 125;
  job.gpus_per_node = 8;
  // failures 1e-3 × 1000 × 10 h = 10, × 5 = 50; gray 2e-3 × 1000 × 10 = 20 onsets × (2 + 4) =
  // 120; checkpoints 20 × 2 = 40.
  CHECK(estimated_replica_events(spec, job, 1.0) == Approx(210.0));
  spec.duration_s = 0;
  spec.token_budget = 36000.0 * 4;  // 4 tokens per 1 s step: the same 10 h
  job.tokens_per_step = 4;
  CHECK(estimated_replica_events(spec, job, 1.0) == Approx(210.0));
}
