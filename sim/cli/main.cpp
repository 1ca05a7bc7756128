// The fleetsim command: run, validate, topo. Exit codes: 0 ok, 2 bad input, 1 internal error.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "coll/collective.h"
#include "core/error.h"
#include "core/units.h"
#include "report/report.h"
#include "scenario/scenario.h"
#include "topo/topology.h"
#include "validate/validate.h"

namespace fleetsim {
namespace {

std::vector<int> first_ranks(int n) {
  std::vector<int> r(n);
  for (int i = 0; i < n; ++i)
    r[i] = i;
  return r;
}

int cmd_run(const std::string& path, std::string out_dir, std::optional<uint64_t> seed,
            int max_gpus) {
  LoadOptions opt;
  opt.max_gpus = max_gpus;
  Scenario s = load_scenario(path, opt);
  if (seed) s.seed = *seed;
  const Topology topo(s.system, s.fabric, s.nodes);
  if (out_dir.empty()) out_dir = "out/" + s.name;
  const CollectiveWorkload& w = *s.collective;
  const int n = w.group_gpus > 0 ? w.group_gpus : topo.gpus();
  const auto ranks = first_ranks(n);
  std::printf("# fleetsim %s: %s on %d GPUs (%d × %s, %s)\n", s.name.c_str(), to_string(w.op), n,
              s.count, s.system.name.c_str(), s.system.unit_name.c_str());
  std::printf("# fabric: %d-tier Clos, oversubscription %.2g:1, routing %s; calibration %s\n",
              s.fabric.tiers, s.fabric.oversubscription, to_string(s.fabric.routing),
              s.collective_params.source.c_str());
  std::printf("#\n# %12s %12s %10s %12s %10s %10s\n", "size(B)", "count", "algo", "time(us)",
              "algbw", "busbw");
  std::printf("# %12s %12s %10s %12s %10s %10s\n", "", "(elements)", "", "", "(GB/s)", "(GB/s)");
  std::vector<CollectiveResult> results;
  for (const Bytes& size : w.sizes) {
    CollectiveResult r =
        simulate_collective(topo, s.collective_params, w.op, w.algorithm, size, ranks, s.seed);
    std::printf("  %12lld %12lld %10s %12.2f %10.2f %10.2f\n", static_cast<long long>(size.count()),
                static_cast<long long>(size.count() / w.dtype_bytes), to_string(r.algorithm),
                r.time.us(), r.algbw_gbps, r.busbw_gbps);
    results.push_back(r);
  }
  const std::string report = out_dir + "/report.json";
  write_file_atomic(report, collective_report_json(s, topo, results));
  std::printf("# report: %s\n", report.c_str());
  return 0;
}

int cmd_validate(const std::string& reference, bool as_json) {
  const ValidationReport rep = validate_reference(reference, default_data_dir());
  if (as_json) {
    std::fputs(validation_json(rep).c_str(), stdout);
    return 0;
  }
  std::printf("%-6s %-28s %5s %-15s %14s %-10s %10s %10s %8s\n", "line", "hardware", "gpus",
              "operation", "size(B)", "algo", "measured", "predicted", "error%");
  for (const auto& v : rep.rows) {
    if (v.skipped) continue;
    std::printf("%-6d %-28.28s %5d %-15s %14lld %-10s %10.2f %10.2f %+8.1f%s\n", v.line,
                v.hardware.c_str(), v.num_gpus, v.model.c_str(),
                static_cast<long long>(v.size.count()), v.algorithm.c_str(), v.measured,
                v.predicted, v.error_pct, v.small ? "  (small)" : "");
  }
  std::printf("\nskipped rows:\n");
  for (const auto& v : rep.rows) {
    if (v.skipped)
      std::printf("  line %-5d %-28.28s %-15s %s\n", v.line, v.hardware.c_str(), v.model.c_str(),
                  v.reason.c_str());
  }
  std::printf("\nMAPE (messages >= 1 MiB): %.2f%% over %d rows\n", rep.mape_pct, rep.n_rows);
  std::printf("MAPE (messages <  1 MiB): %.2f%% over %d rows\n", rep.mape_small_pct, rep.n_small);
  std::printf("skipped: %d rows\n", rep.n_skipped);
  return 0;
}

int cmd_topo(const std::string& system, int count, bool dot) {
  const SystemSpec s = load_system(system, default_data_dir());
  const Topology topo(s, s.fabric, count * s.unit_nodes);
  if (dot) {
    std::fputs(topology_to_dot(topo).c_str(), stdout);
  } else {
    std::printf("%s", topo.summary().c_str());
  }
  return 0;
}

}  // namespace
}  // namespace fleetsim

int main(int argc, char** argv) {
  using namespace fleetsim;
  CLI::App app{"fleetsim: discrete-event simulator of LLM training clusters"};
  app.set_version_flag("--version", std::string("fleetsim ") + FLEETSIM_VERSION);
  app.require_subcommand(1);

  auto* run = app.add_subcommand(
      "run", "Simulate a scenario file; print a summary and write DIR/report.json");
  std::string scenario, out_dir;
  std::optional<uint64_t> seed;
  int max_gpus = 131072;
  run->add_option("scenario", scenario, "Scenario JSON file")->required();
  run->add_option("--out", out_dir, "Output folder (default out/<scenario name>)");
  run->add_option("--seed", seed, "Override the scenario's seed");
  run->add_option("--max-gpus", max_gpus, "Refuse clusters larger than this")
      ->check(CLI::PositiveNumber);

  auto* val =
      app.add_subcommand("validate", "Compare simulated with measured rows of a reference CSV");
  std::string reference;
  bool as_json = false;
  val->add_option("--reference", reference,
                  "Reference CSV (column format of shared/reference/*.csv)")
      ->required();
  val->add_flag("--json", as_json, "Print the comparison as JSON on stdout");

  auto* topo = app.add_subcommand("topo", "Inspect topologies");
  topo->require_subcommand(1);
  auto* show =
      topo->add_subcommand("show", "Summarise a system's graph, or write Graphviz with --dot");
  std::string system;
  int count = 1;
  bool dot = false;
  show->add_option("system", system, "System name (topologies/NAME.json) or path")->required();
  show->add_option("--count", count, "Number of units (instances, UltraServers, racks)")
      ->check(CLI::Range(1, 16384));
  show->add_flag("--dot", dot, "Write Graphviz DOT on stdout");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  try {
    if (run->parsed()) return cmd_run(scenario, out_dir, seed, max_gpus);
    if (val->parsed()) return cmd_validate(reference, as_json);
    if (show->parsed()) return cmd_topo(system, count, dot);
  } catch (const InputError& e) {
    std::fprintf(stderr, "fleetsim: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fleetsim: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}
