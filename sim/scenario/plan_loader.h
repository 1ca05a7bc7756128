// Plan files for `fleetsim plan` (README "Capacity planning", scenarios/schema/plan.schema.json):
// a model, a token budget, the batch, candidate instance types with the instance counts allowed,
// a user-supplied price table (USD per instance-hour, each with its source), a deadline and / or
// a budget, failure / checkpoint assumptions (a scenario "run" section without duration, token
// budget or reservation: the planner sets those) and the confidence level.
//
// The loader expands type × count × parallelism into training scenarios through the scenario
// loader itself (parse_scenario), so each candidate is checked exactly like `fleetsim run` would
// check it. A combination the scenario loader refuses for its shape (parallelism that does not
// divide the GPUs or the batch) is kept with the reason; errors in the plan's own fields (unknown
// keys, a candidate type missing from the price table, a negative price, a bad run section)
// throw InputError with the plan file and the JSON pointer.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scenario/scenario.h"

namespace fleetsim {

struct PlanPrice {
  double usd_per_instance_hour = 0;
  std::string source;
};

// One (instance type, count, parallel configuration) of the search.
struct PlanCandidate {
  std::string system;  // topologies/ name
  int count = 0;       // instances (units) reserved
  int par_index = 0;   // into PlanSpec::parallel_labels
  std::optional<Scenario> scenario;
  std::string invalid;  // why the scenario loader refused the combination (scenario empty)
};

struct PlanSpec {
  std::string file;
  std::string name;
  std::string description;
  uint64_t seed = 1;
  std::string model;
  double token_budget = 0;
  int seq_len = 0;
  int global_batch = 0;  // sequences per step
  int micro_batch = 1;
  std::string precision;
  std::optional<double> deadline_days;
  std::optional<double> budget_usd;
  double confidence = 0.9;  // fraction of Monte Carlo runs that must finish
  int replicas = 100;
  int max_segment_days = 182;  // Training Plan: 1–182 days per reservation segment
  int max_days = 364;          // search horizon: runs not done by then count as not finishing
  std::map<std::string, PlanPrice> prices;  // by system name
  std::vector<std::string> systems;         // candidate types in file order
  std::vector<std::string> parallel_labels;
  std::vector<PlanCandidate> candidates;  // systems × counts × parallel configurations
};

PlanSpec load_plan(const std::string& path, const LoadOptions& options);
PlanSpec parse_plan(const std::string& text, const std::string& file, const LoadOptions& options);

// Keys a plan file accepts by JSON pointer pattern; plan.schema.json lists the same (a test).
std::map<std::string, std::vector<std::string>> plan_keys();

}  // namespace fleetsim
