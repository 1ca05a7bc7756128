// Capacity planning: Training Plan day rounding and segment rules, price-table errors, and the
// example plan's recommendation checked against independent Monte Carlo runs.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "plan/plan.h"
#include "report/plan_report.h"
#include "scenario/plan_loader.h"
#include "study/cluster.h"
#include "study/run_level.h"
#include "study/training_step.h"
#include "support/fixtures.h"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {

const std::string kExample = kRoot + "/scenarios/plans/llama3.1-405b-15t.json";

std::string example_text() {
  std::ifstream in(kExample);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string replaced(std::string s, const std::string& a, const std::string& b) {
  const auto pos = s.find(a);
  REQUIRE(pos != std::string::npos);
  return s.replace(pos, a.size(), b);
}

}  // namespace

TEST_CASE("plan: whole days with the reclaim notice, 1-182-day segments, offering blocks") {
  // A run must be done by end − 30 min: 23.5 h of work fits in 1 day, a second more does not.
  CHECK(days_needed(0, 1800) == 1);
  CHECK(days_needed(86400 - 1800, 1800) == 1);
  CHECK(days_needed(86400 - 1799, 1800) == 2);
  CHECK(days_needed(10 * 86400.0, 1800) == 11);
  CHECK(segment_layout(1, 182) == std::vector<int>{1});
  CHECK(segment_layout(182, 182) == std::vector<int>{182});
  CHECK(segment_layout(183, 182) == std::vector<int>{182, 1});
  CHECK(segment_layout(400, 182) == std::vector<int>{182, 182, 36});
  const auto segs = reservation_segments({182, 41});
  REQUIRE(segs.size() == 2);
  CHECK(segs[1].start_s == 182 * 86400.0);
  CHECK(segs[1].duration_s == 41 * 86400.0);
  CHECK(offering_blocks(64) == 1);
  CHECK(offering_blocks(100) == 3);  // 64 + 32 + 4
  CHECK(offering_blocks(512) == 8);
  CHECK(offering_blocks(7) == 3);  // 4 + 2 + 1
}

TEST_CASE("plan: price table errors name the file and the JSON pointer") {
  const std::string text = example_text();
  LoadOptions opt;
  try {
    parse_plan(replaced(text, "\"p5en.48xlarge\": {\"usd_per_instance_hour\": 63.296",
                        "\"p5en.48xlarge\": {\"usd_per_instance_hour\": -1"),
               "p.json", opt);
    FAIL("negative price accepted");
  } catch (const InputError& e) {
    CHECK(e.file() == "p.json");
    CHECK(e.pointer() == "/prices/p5en.48xlarge/usd_per_instance_hour");
  }
  try {
    parse_plan(replaced(text, "\"p5en.48xlarge\": {\"usd_per_instance_hour\"",
                        "\"p4d.24xlarge\": {\"usd_per_instance_hour\""),
               "p.json", opt);
    FAIL("candidate without a price accepted");
  } catch (const InputError& e) {
    CHECK(e.pointer() == "/candidates/1/system");
    CHECK(e.message().find("no price") != std::string::npos);
  }
}

TEST_CASE("plan: the example's recommendation meets its deadline at P90, no cheaper one does") {
  LoadOptions opt = load_options();
  const PlanSpec plan = load_plan(kExample, opt);
  const PlanResult r = run_plan(plan, opt, 0, nullptr);
  REQUIRE(r.cheapest >= 0);
  const CandidateResult& rec = r.candidates[r.cheapest];
  CHECK(rec.days <= *plan.deadline_days);
  // The plan's 8 spare nodes are 8 more p6-b200 instances (one node each), reserved and paid.
  CHECK(rec.spare_instances == 8);
  CHECK(rec.cost_usd == rec.days * 24.0 * (rec.count + 8) * rec.price_per_instance_hour);
  // Independent check: the run-level Monte Carlo with the exact reservation reaches the budget
  // in at least 90 % of the runs.
  auto reached = [&](size_t idx, int days) {
    Scenario s = *plan.candidates[idx].scenario;
    s.run->reservation.segments = reservation_segments(segment_layout(days, 182));
    const StudyCluster cluster = load_study_cluster(s, opt.data_dir);
    const StepOutcome step = simulate_training_step(s, cluster, false);
    return simulate_run_level(s, cluster, step, 0, false).summary.reached_budget;
  };
  CHECK(reached(r.cheapest, rec.days) >= 0.9 * plan.replicas);
  for (size_t i = 0; i < r.candidates.size(); ++i) {
    const CandidateResult& c = r.candidates[i];
    if (c.status != CandidateStatus::kOk || c.cost_usd >= rec.cost_usd) continue;
    CHECK(c.days > *plan.deadline_days);
    CHECK(reached(i, static_cast<int>(*plan.deadline_days)) < 0.9 * plan.replicas);
  }
}

TEST_CASE("plan: same plan and seed give byte-identical plan.json for any thread count") {
  LoadOptions opt = load_options();
  const PlanSpec plan = load_plan(kRoot + "/tests/report/moe-plan.json", opt);
  const std::string a = plan_json(run_plan(plan, opt, 1, nullptr));
  CHECK(a == plan_json(run_plan(plan, opt, 2, nullptr)));
  CHECK(a.find("\"ettr_vs_checkpoint_interval\"") != std::string::npos);
}

TEST_CASE("plan: UltraServers with gpus_per_unit, spares fill the unused trays before more units") {
  // Llama 3 8B on p6e-gb200-ultraserver-72 (18 trays of 4 GPUs), 64 GPUs per rack: each rack
  // leaves 2 trays free. 2 spare nodes fit in them (1 rack reserved); 3 need one more rack.
  auto plan_text = [](int spares) {
    return R"({"name": "u", "model": "llama3-8b", "token_budget": 1e9,
      "batch": {"global": 64, "micro": 1, "seq_len": 4096}, "precision": "bf16",
      "candidates": [{"system": "p6e-gb200-ultraserver-72", "counts": [1], "gpus_per_unit": 64}],
      "parallelism": [{"tp": 1}],
      "prices": {"p6e-gb200-ultraserver-72": {"usd_per_instance_hour": 1000, "source": "test"}},
      "deadline_days": 10, "replicas": 4,
      "run": {"failures": {"profile": "llama3-h100"}, "spares": )" +
           std::to_string(spares) + "}}";
  };
  LoadOptions opt = load_options();
  for (int spares : {2, 3}) {
    const PlanSpec plan = parse_plan(plan_text(spares), "u.json", opt);
    REQUIRE(plan.candidates.size() == 1);
    REQUIRE(plan.candidates[0].scenario);
    CHECK(plan.candidates[0].scenario->training->gpus == 64);
    const PlanResult r = run_plan(plan, opt, 1, nullptr);
    const CandidateResult& c = r.candidates[0];
    REQUIRE(c.status == CandidateStatus::kOk);
    CHECK(c.gpus == 64);
    CHECK(c.spare_instances == (spares == 2 ? 0 : 1));
    CHECK(c.reserved_instances == 1 + c.spare_instances);
    CHECK(c.cost_usd == c.days * 24.0 * c.reserved_instances * 1000);
    CHECK(c.reserved_gpu_hours == c.days * 24.0 * c.reserved_instances * 72);
  }
  // More GPUs per unit than a rack has: the candidate's gpus_per_unit is named.
  std::string bad = plan_text(2);
  bad.replace(bad.find("\"gpus_per_unit\": 64"), 19, "\"gpus_per_unit\": 80");
  try {
    parse_plan(bad, "u.json", opt);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.pointer() == "/candidates/0/gpus_per_unit");
  }
}

TEST_CASE(
    "plan: more than max_plan_candidates combinations is an input error before any is built") {
  // (700 + 700 + 1 (p5)) counts × 3 layouts = 4203 > 4096.
  std::string counts;
  for (int i = 1; i <= 700; ++i)
    counts += (i > 1 ? ", " : "") + std::to_string(i);
  std::string text = example_text();
  text = replaced(text, "\"counts\": [256, 512]}", "\"counts\": [" + counts + "]}");
  text = replaced(text, "\"counts\": [256, 512]}", "\"counts\": [" + counts + "]}");
  LoadOptions opt = load_options();
  try {
    parse_plan(text, "p.json", opt);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.pointer() == "/candidates");
    CHECK(e.message().find("has 4203 type") != std::string::npos);
    CHECK(e.message().find("the limit is 4096 (raise it with --max-candidates)") !=
          std::string::npos);
  }
  opt.max_plan_candidates = 4203;  // raised: the search is read (and its candidates built)
  CHECK(parse_plan(text, "p.json", opt).candidates.size() == 4203);
}
