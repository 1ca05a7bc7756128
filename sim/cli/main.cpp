// The fleetsim command: run, memory, validate, topo, calibrate, sweep, merge, plan. Exit codes: 0
// ok, 2 bad input, 1 internal error. The subcommands live in cmd_*.cpp (commands.h); this file
// holds their options, the only place that includes CLI11.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"
#include "core/error.h"

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
  run->add_option("--max-passes", work_limits.max_passes,
                  "Refuse training steps with more forward/backward passes to simulate (TP units "
                  "x micro-batches x model chunks x 2)")
      ->check(CLI::PositiveNumber);
  run->add_option("--max-trace-events", work_limits.max_trace_events,
                  "Refuse --trace when it would write more events than this")
      ->check(CLI::PositiveNumber);
  RunOutputs run_out;
  run->add_option("--trace", run_out.trace_path,
                  "Write a Chrome-trace JSON of the step (training scenarios; open in Perfetto)");
  run->add_option("--events", run_out.events_path,
                  "Write the run-level event timeline of replica 0 as JSON lines (scenarios with "
                  "a run section)");
  run->add_option("--timeline", run_out.timeline_path,
                  "Write the run-level event timeline of replica 0 as a Chrome-trace JSON (open "
                  "in Perfetto; scenarios with a run section)");
  run->add_flag("--html", run_out.html,
                "Also write DIR/report.html: charts of the breakdown, memory, MoE load and, with "
                "a run section, ETTR vs checkpoint interval (training scenarios)");
  run->add_option("--threads", run_out.threads,
                  "Threads for the run-level Monte Carlo (default: every core; results do not "
                  "depend on it)")
      ->check(CLI::Range(0, 1024));

  auto* mem = app.add_subcommand(
      "memory", "Print the per-GPU memory breakdown of a training scenario (no simulation)");
  bool mem_json = false;
  mem->add_option("scenario", scenario, "Scenario JSON file")->required();
  mem->add_option("--max-gpus", max_gpus, "Refuse clusters larger than this")
      ->check(CLI::PositiveNumber);
  mem->add_option("--max-passes", work_limits.max_passes,
                  "Refuse training steps with more forward/backward passes than this")
      ->check(CLI::PositiveNumber);
  mem->add_flag("--json", mem_json, "Print the breakdown as JSON on stdout");

  auto* val =
      app.add_subcommand("validate", "Compare simulated with measured rows of a reference CSV");
  std::string reference;
  bool as_json = false;
  val->add_option("--reference", reference,
                  "Reference CSV (column format of shared/reference/*.csv)")
      ->required();
  val->add_flag("--json", as_json, "Print the comparison as JSON on stdout");
  ValidateOptions vo;
  val->add_option("--kernel-gap-us", vo.kernel_gap_us,
                  "Override calibration/framework.json's kernel gap (fitting only)");
  val->add_option("--kernel-efficiency", vo.kernel_efficiency,
                  "Override calibration/framework.json's kernel efficiency (fitting only)")
      ->check(CLI::Range(0.05, 1.0));

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

  auto* cal = app.add_subcommand("calibrate", "Calibration sets measured with fleetsim-calibrate");
  cal->require_subcommand(1);
  auto* cal_import = cal->add_subcommand(
      "import", "Check a fleetsim-calibrate file and add it to a calibration set");
  std::string cal_file, cal_set, cal_sets_dir;
  cal_import->add_option("file", cal_file, "Calibration CSV written by fleetsim-calibrate")
      ->required();
  cal_import->add_option("--set", cal_set,
                         "Set name (calibration/sets/NAME) or a directory path; default "
                         "<gpu>-<date of the measurement>");
  cal_import->add_option("--sets-dir", cal_sets_dir,
                         "Where named sets live (default <data dir>/calibration/sets)");

  auto* sweep = app.add_subcommand(
      "sweep", "Run a sweep file's points in parallel; resumable; shardable; Slurm scripts");
  SweepCli sw;
  sweep->add_option("file", sw.file, "Sweep JSON file (scenarios/schema/sweep.schema.json)")
      ->required();
  sweep->add_option("-j,--jobs", sw.jobs, "Points simulated in parallel (threads; default 1)")
      ->check(CLI::Range(1, 1024));
  sweep->add_option("--out", sw.out,
                    "Results folder (default out/sweeps/<name>, /shard-I when sharded)");
  sweep->add_option("--shard", sw.shard, "Run shard I of N (0-based): points with index % N == I");
  sweep
      ->add_option("--progress", sw.progress,
                   "auto (a bar on a terminal, else lines every 10 s), bar, lines, none")
      ->check(CLI::IsMember({"auto", "bar", "lines", "none"}));
  sweep->add_option("--max-gpus", sw.max_gpus, "Refuse clusters larger than this")
      ->check(CLI::PositiveNumber);
  sweep->add_option("--emit-slurm", sw.emit_slurm,
                    "Write an sbatch job array (one task per shard), the merge job and submit.sh "
                    "into DIR instead of running");
  sweep->add_option("--shards", sw.shards, "Shards (array tasks) for --emit-slurm (default 4)")
      ->check(CLI::Range(1, 100000));
  sweep->add_option("--partition", sw.partition, "Slurm partition for --emit-slurm");
  sweep->add_option("--time", sw.time_limit, "Slurm time limit per task for --emit-slurm");

  auto* merge = app.add_subcommand(
      "merge",
      "Combine shard result folders; every point exactly once, else say which are missing");
  std::string merge_out;
  std::vector<std::string> merge_inputs;
  merge->add_option("out", merge_out, "Output folder")->required();
  merge->add_option("inputs", merge_inputs, "Shard result folders")->required();

  auto* plan = app.add_subcommand(
      "plan", "Size a Flexible Training Plan: instance type x count x parallelism search");
  std::string plan_file, plan_out;
  int plan_threads = 0;
  plan->add_option("plan", plan_file, "Plan file (JSON, scenarios/schema/plan.schema.json)")
      ->required();
  plan->add_option("--out", plan_out, "Output folder (default out/plan-NAME)");
  plan->add_option("-j,--jobs", plan_threads, "Threads (0 = every core; results do not change)")
      ->check(CLI::NonNegativeNumber);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  try {
    if (run->parsed()) return cmd_run(scenario, out_dir, seed, max_gpus, run_out);
    if (mem->parsed()) return cmd_memory(scenario, max_gpus, mem_json);
    if (val->parsed()) return cmd_validate(reference, as_json, vo);
    if (show->parsed()) return cmd_topo(system, count, dot);
    if (cal_import->parsed()) return cmd_calibrate_import(cal_file, cal_set, cal_sets_dir);
    if (sweep->parsed()) return cmd_sweep(sw, argv[0]);
    if (merge->parsed()) return cmd_merge(merge_out, merge_inputs);
    if (plan->parsed()) return cmd_plan(plan_file, plan_out, plan_threads);
  } catch (const InputError& e) {
    std::fprintf(stderr, "fleetsim: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fleetsim: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}
