// Plan file reader (plan_loader.h). Each candidate becomes a training scenario JSON document
// that goes through parse_scenario, the same checks as `fleetsim run`; the planner then sets the
// reservation segments on the typed RunSpec (reservations can be longer than the ±106-day range
// of the scenario's picosecond Time values).
#include "scenario/plan_loader.h"

#include "scenario/json_reader.h"

namespace fleetsim {

namespace {

using namespace jsonr;

const std::vector<std::string> kPlanKeys = {"name",
                                            "description",
                                            "seed",
                                            "model",
                                            "token_budget",
                                            "batch",
                                            "precision",
                                            "framework",
                                            "recompute",
                                            "symmetry",
                                            "routing",
                                            "candidates",
                                            "parallelism",
                                            "prices",
                                            "deadline_days",
                                            "budget_usd",
                                            "confidence",
                                            "replicas",
                                            "max_segment_days",
                                            "max_days",
                                            "run"};
const std::vector<std::string> kPlanBatchKeys = {"global", "micro", "seq_len"};
const std::vector<std::string> kCandidateKeys = {"system", "counts", "gpus_per_unit"};
const std::vector<std::string> kPriceKeys = {"usd_per_instance_hour", "source"};
// The planner owns the run's length, budget, replicas and reservation.
const std::vector<std::string> kPlanRunKeys = {"failures",   "gray_failures", "health_checks",
                                               "checkpoint", "recovery",      "spares",
                                               "maintenance"};

// Where an error the scenario loader reports for a generated scenario points in the plan file.
std::string plan_pointer(const std::string& scenario_ptr, int par_index, bool* plan_error) {
  const auto starts = [&](const std::string& p) { return scenario_ptr.rfind(p, 0) == 0; };
  *plan_error = true;
  if (starts("/workload/parallelism")) {
    *plan_error = false;  // keys were checked above: what is left is the shape
    return "/parallelism/" + std::to_string(par_index) +
           scenario_ptr.substr(std::string("/workload/parallelism").size());
  }
  if (starts("/workload/batch")) {
    *plan_error = false;
    return "/batch" + scenario_ptr.substr(std::string("/workload/batch").size());
  }
  if (starts("/cluster/count") || starts("/workload/gpus") || scenario_ptr == "/workload") {
    *plan_error = false;
    return "/candidates";
  }
  if (starts("/workload/")) return scenario_ptr.substr(std::string("/workload").size());
  return scenario_ptr;
}

}  // namespace

std::map<std::string, std::vector<std::string>> plan_keys() {
  return {{"", kPlanKeys},
          {"/batch", kPlanBatchKeys},
          {"/candidates/*", kCandidateKeys},
          {"/prices/*", kPriceKeys},
          {"/run", kPlanRunKeys}};
}

PlanSpec load_plan(const std::string& path, const LoadOptions& options) {
  return parse_plan(read_file(path), path, options);
}

namespace {

void read_prices(const Obj& o, PlanSpec* out) {
  PlanSpec& p = *out;
  const std::string& file = o.file();
  const json& prices = o.get("prices");
  if (!prices.is_object() || prices.empty())
    o.fail(o.at("prices"),
           "expected an object mapping instance types to {usd_per_instance_hour, "
           "source}");
  for (const auto& [type, v] : prices.items()) {
    const Obj pr(v, file, o.at("prices") + "/" + escape_pointer_token(type), kPriceKeys);
    PlanPrice price;
    const json& usd = pr.get("usd_per_instance_hour");
    if (!usd.is_number())
      pr.fail(pr.at("usd_per_instance_hour"),
              std::string("expected a number, got ") + type_name(usd));
    if (usd.get<double>() < 0)
      pr.fail(pr.at("usd_per_instance_hour"),
              "expected a price >= 0 USD per instance-hour, got " + show(usd));
    price.usd_per_instance_hour = pr.number("usd_per_instance_hour", 0.0, 1e6);
    price.source = pr.str("source");
    if (price.source.empty()) pr.fail(pr.at("source"), "expected where the price comes from");
    p.prices[type] = price;
  }
}

// Parallel configurations (each a scenario "parallelism" object): keys checked, labels kept.
void read_parallel_labels(const Obj& o, PlanSpec* out) {
  PlanSpec& p = *out;
  const std::string& file = o.file();
  const json& pars = o.get("parallelism");
  if (!pars.is_array() || pars.empty())
    o.fail(o.at("parallelism"), "expected a non-empty array of parallelism objects");
  const auto skeys = scenario_keys();
  const auto& par_keys = skeys.at("/workload#training/parallelism");
  for (size_t i = 0; i < pars.size(); ++i) {
    const Obj po(pars[i], file, o.at("parallelism") + "/" + std::to_string(i), par_keys);
    std::string label;
    for (const char* k : {"tp", "pp", "vp", "cp", "ep", "etp"}) {
      if (!po.has(k)) continue;
      label += (label.empty() ? "" : " ") + std::string(k) + po.get(k).dump();
    }
    p.parallel_labels.push_back(label.empty() ? "dp only" : label);
  }
}

// The training scenario of one candidate (system × count × parallelism pi), through
// parse_scenario; an error that belongs to the layout marks the candidate invalid, any other
// points into the plan file.
PlanCandidate make_candidate(const Obj& o, const Obj& c, const PlanSpec& p,
                             const std::string& system, int count, int pi, int gpus_per_unit,
                             const json& run, const LoadOptions& options) {
  const std::string& file = o.file();
  const json& pars = o.get("parallelism");
  json sc = {
      {"name", p.name},
      {"seed", p.seed},
      {"cluster", {{"system", system}, {"count", count}}},
      {"workload",
       {{"type", "training"},
        {"model", p.model},
        {"parallelism", pars[pi]},
        {"batch", {{"global", p.global_batch}, {"micro", p.micro_batch}, {"seq_len", p.seq_len}}},
        {"precision", p.precision}}}};
  for (const char* key : {"framework", "recompute", "symmetry", "routing"})
    if (o.has(key)) sc["workload"][key] = o.get(key);
  if (gpus_per_unit > 0) sc["workload"]["gpus"] = int64_t{gpus_per_unit} * count;
  json r = run;
  r["token_budget"] = p.token_budget;
  r["replicas"] = p.replicas;
  sc["run"] = r;
  PlanCandidate cand;
  cand.system = system;
  cand.count = count;
  cand.par_index = pi;
  try {
    cand.scenario = parse_scenario(sc.dump(), file, options);
  } catch (const InputError& e) {
    bool plan_error = false;
    const std::string ptr = plan_pointer(e.pointer(), pi, &plan_error);
    if (e.pointer().rfind("/cluster/system", 0) == 0) c.fail(c.at("system"), e.message());
    if (e.pointer() == "/workload/gpus") c.fail(c.at("gpus_per_unit"), e.message());
    if (plan_error) throw InputError(file, ptr, e.message());
    cand.invalid = e.message();
  }
  return cand;
}

// Candidates: systems × counts × parallelism.
void read_candidates(const Obj& o, const json& run, const LoadOptions& options, PlanSpec* out) {
  PlanSpec& p = *out;
  const std::string& file = o.file();
  const json& pars = o.get("parallelism");
  const json& cands = o.get("candidates");
  if (!cands.is_array() || cands.empty())
    o.fail(o.at("candidates"), "expected a non-empty array of {system, counts}");
  // Every combination is simulated (a step and a Monte Carlo); refuse absurd searches before
  // building any of them.
  size_t combos = 0;
  for (const json& c : cands)
    if (c.is_object() && c.contains("counts") && c["counts"].is_array())
      combos += c["counts"].size() * pars.size();
  if (static_cast<int64_t>(combos) > options.max_plan_candidates)
    o.fail(o.at("candidates"), "the plan has " + std::to_string(combos) +
                                   " type × count × parallelism combinations; the limit is " +
                                   std::to_string(options.max_plan_candidates) +
                                   " (raise it with --max-candidates)");
  for (size_t ci = 0; ci < cands.size(); ++ci) {
    const Obj c(cands[ci], file, o.at("candidates") + "/" + std::to_string(ci), kCandidateKeys);
    const std::string system = c.str("system");
    if (p.prices.count(system) == 0) {
      c.fail(c.at("system"), "no price for instance type '" + system +
                                 "' in /prices (add /prices/" + escape_pointer_token(system) +
                                 "/usd_per_instance_hour with its source)");
    }
    p.systems.push_back(system);
    // GPUs the job uses per unit (e.g. 64 of an NVL72 UltraServer's 72, so power-of-two groups
    // fit); the scenario loader checks it against the cluster.
    const int gpus_per_unit =
        c.has("gpus_per_unit") ? static_cast<int>(c.integer("gpus_per_unit", 1, 1024)) : 0;
    const json& counts = c.get("counts");
    if (!counts.is_array() || counts.empty())
      c.fail(c.at("counts"), "expected a non-empty array of instance counts");
    for (size_t k = 0; k < counts.size(); ++k) {
      const std::string cp = c.at("counts") + "/" + std::to_string(k);
      if (!counts[k].is_number_integer() || counts[k].get<int64_t>() < 1 ||
          counts[k].get<int64_t>() > 4096)
        c.fail(cp, "expected an instance count in [1, 4096], got " + show(counts[k]));
      const int count = counts[k].get<int>();
      for (size_t pi = 0; pi < pars.size(); ++pi) {
        p.candidates.push_back(make_candidate(o, c, p, system, count, static_cast<int>(pi),
                                              gpus_per_unit, run, options));
      }
    }
  }
}

}  // namespace

PlanSpec parse_plan(const std::string& text, const std::string& file, const LoadOptions& options) {
  const json root = parse_strict(text, file);
  const Obj o(root, file, "", kPlanKeys);
  PlanSpec p;
  p.file = file;
  p.name = o.str("name");
  p.description = o.str_or("description", "");
  if (o.has("seed")) p.seed = static_cast<uint64_t>(o.integer("seed", 0, INT64_MAX));
  p.model = o.str("model");
  p.token_budget = o.number("token_budget", 1.0, 1e18);
  const Obj batch = o.object("batch", kPlanBatchKeys);
  p.global_batch = static_cast<int>(batch.integer("global", 1, 1 << 24));
  p.micro_batch = batch.has("micro") ? static_cast<int>(batch.integer("micro", 1, 1 << 16)) : 1;
  p.seq_len = static_cast<int>(batch.integer("seq_len", 1, 1 << 24));
  p.precision = o.str_or("precision", "bf16");
  if (o.has("deadline_days")) p.deadline_days = o.number("deadline_days", 1.0, 100000.0);
  if (o.has("budget_usd")) p.budget_usd = o.number("budget_usd", 0.0, 1e15);
  if (!p.deadline_days && !p.budget_usd)
    o.fail("", "expected 'deadline_days' and / or 'budget_usd'");
  if (o.has("confidence")) p.confidence = o.number("confidence", 0.5, 0.999);
  if (o.has("replicas")) p.replicas = static_cast<int>(o.integer("replicas", 1, 100000));
  if (o.has("max_segment_days"))
    p.max_segment_days = static_cast<int>(o.integer("max_segment_days", 1, 182));
  if (o.has("max_days")) p.max_days = static_cast<int>(o.integer("max_days", 1, 3650));

  read_prices(o, &p);
  read_parallel_labels(o, &p);
  json run = json::object();
  if (o.has("run")) {
    const Obj r = o.object("run", kPlanRunKeys);
    run = r.raw();
  }

  read_candidates(o, run, options, &p);
  return p;
}

}  // namespace fleetsim
