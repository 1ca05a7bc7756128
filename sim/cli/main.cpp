// The fleetsim command: run, memory, validate, import, topo, calibrate, sweep, merge, plan, model.
// Exit codes: 0 ok, 2 bad input (and out of memory: the work asked for was too large), 1
// internal error. The subcommands live in cmd_*.cpp (commands.h);
// this file holds their options, the only place that includes CLI11 (a few seconds of compile time
// per file that does).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <new>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/error.h"
#include "core/units.h"

namespace fleetsim {
namespace {

// A registered subcommand: the (innermost) CLI11 app its options belong to and what runs it.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// --max-passes, --max-flows, --max-run-events, --max-sim-memory: work refused up front.
void add_work_limits(CLI::App* app, WorkLimits& l) {
  app->add_option(kMaxPassesFlag, l.max_passes,
                  "Refuse training steps with more forward/backward passes to simulate (TP units "
                  "x micro-batches x model chunks x 2)")
      ->check(CLI::PositiveNumber);
  app->add_option(kMaxFlowsFlag, l.max_flows,
                  "Refuse collectives with more flows to simulate (an all-to-all has one per "
                  "ordered GPU pair; auto counts every algorithm tried)")
      ->check(CLI::PositiveNumber);
  app->add_option(kMaxRunEventsFlag, l.max_run_events,
                  "Refuse run-level Monte Carlos with more events (failures, gray onsets, "
                  "checkpoints; estimated from the rates x GPUs x duration x replicas)")
      ->check(CLI::PositiveNumber);
  app->add_option(kMaxSimMemoryFlag, l.max_sim_memory,
                  "Refuse simulations estimated to take more memory than this (a size, e.g. "
                  "16GiB; default 8GiB)")
      ->check(
          [](const std::string& s) {
            std::string error;
            const auto b = parse_bytes(s, &error);
            if (b && b->count() < 1) error = "expected a size of at least 1 B";
            return error;
          },
          "SIZE");
}

Command add_run(CLI::App& app, RunCli& o) {
  auto* run = app.add_subcommand(
      "run", "Simulate a scenario file; print a summary and write DIR/report.json");
  run->add_option("scenario", o.scenario, "Scenario JSON file")->required();
  run->add_option("--out", o.out_dir, "Output folder (default out/<scenario name>)");
  run->add_option("--seed", o.seed, "Override the scenario's seed");
  run->add_option("--max-gpus", o.max_gpus, "Refuse clusters larger than this")
      ->check(CLI::PositiveNumber);
  add_work_limits(run, o.limits);
  run->add_option("--max-trace-events", o.limits.max_trace_events,
                  "Refuse --trace when it would write more events than this")
      ->check(CLI::PositiveNumber);
  RunOutputs& out = o.outputs;
  run->add_option("--trace", out.trace_path,
                  "Write a Chrome-trace JSON of the step (training scenarios; open in Perfetto)");
  run->add_option("--compare-trace", out.compare_trace,
                  "Print the step breakdown beside a PyTorch profiler (Kineto) trace's: compute, "
                  "communication, host and idle per stream (training scenarios)");
  run->add_option("--events", out.events_path,
                  "Write the run-level event timeline of replica 0 as JSON lines (scenarios with "
                  "a run section)");
  run->add_option("--timeline", out.timeline_path,
                  "Write the run-level event timeline of replica 0 as a Chrome-trace JSON (open "
                  "in Perfetto; scenarios with a run section)");
  run->add_flag("--html", out.html,
                "Also write DIR/report.html: charts of the breakdown, memory, MoE load and, with "
                "a run section, ETTR vs checkpoint interval (training scenarios)");
  run->add_option("--progress", out.progress,
                  "Progress on stderr of the run-level Monte Carlo and of collective sizes: auto "
                  "(a bar on a terminal after 2 s, else none), bar, lines (every 10 s), none")
      ->check(CLI::IsMember({"auto", "bar", "lines", "none"}));
  run->add_option("--threads", out.threads,
                  "Threads for the run-level Monte Carlo (default: every core; results do not "
                  "depend on it)")
      ->check(CLI::Range(0, 1024));
  return {run, [&o] { return cmd_run(o); }};
}

Command add_memory(CLI::App& app, MemoryCli& o) {
  auto* mem = app.add_subcommand(
      "memory", "Print the per-GPU memory breakdown of a training scenario (no simulation)");
  mem->add_option("scenario", o.scenario, "Scenario JSON file")->required();
  mem->add_option("--max-gpus", o.max_gpus, "Refuse clusters larger than this")
      ->check(CLI::PositiveNumber);
  mem->add_option("--max-passes", o.max_passes,
                  "Refuse training steps with more forward/backward passes than this")
      ->check(CLI::PositiveNumber);
  mem->add_flag("--json", o.json, "Print the breakdown as JSON on stdout");
  return {mem, [&o] { return cmd_memory(o); }};
}

Command add_validate(CLI::App& app, ValidateCli& o) {
  auto* val =
      app.add_subcommand("validate", "Compare simulated with measured rows of a reference CSV");
  val->add_option("--reference", o.reference,
                  "Reference CSV (column format of validation/*.csv, validation/README.md)")
      ->required();
  val->add_flag("--json", o.json, "Print the comparison as JSON on stdout");
  val->add_option("--html", o.html,
                  "Write a self-contained HTML report: predicted vs measured, error histogram, "
                  "MAPE per family and system, every row with its reason");
  val->add_option("--csv", o.csv,
                  "Write every row with its predicted breakdown (compute, exposed communication "
                  "per dimension, bubble, memory fit)");
  val->add_option("--system", o.system,
                  "Simulate every row on this system (topologies/NAME.json) instead of the one "
                  "its hardware name maps to");
  val->add_option("--model-map", o.model_map,
                  "CSV name,model: model names of the reference -> zoo ids or model JSON paths");
  val->add_option("--default", o.defaults,
                  "KEY=VALUE for empty cells (seq_len, gbs, mbs, tp, pp, cp, vp, ep, etp); "
                  "repeatable; the output lists the rows that used one");
  val->add_option("--progress", o.progress,
                  "Progress on stderr (rows compared): auto (a bar on a terminal after 2 s, else "
                  "none), bar, lines (every 10 s), none")
      ->check(CLI::IsMember({"auto", "bar", "lines", "none"}));
  val->add_option("--kernel-efficiency", o.options.kernel_efficiency,
                  "Override calibration/framework.json's kernel efficiency (fitting only)")
      ->check(CLI::Range(0.05, 1.0));
  return {val, [&o] { return cmd_validate(o); }};
}

Command add_import(CLI::App& app, ImportMlperfCli& o) {
  auto* imp = app.add_subcommand("import", "Convert published measurements to a reference CSV");
  imp->require_subcommand(1);
  auto* mlperf = imp->add_subcommand(
      "mlperf",
      "MLPerf Training results tree (systems/*.json, results/<system>/<benchmark>/"
      "result_*.txt, config_*.sh) -> reference-CSV rows of median step time");
  mlperf->add_option("dir", o.dir, "Results folder (e.g. training_results_v5.0/NVIDIA)")
      ->required();
  mlperf->add_option("--out", o.out, "Output CSV (default stdout)");
  return {mlperf, [&o] { return cmd_import_mlperf(o); }};
}

Command add_topo(CLI::App& app, TopoCli& o) {
  auto* topo = app.add_subcommand("topo", "Inspect topologies");
  topo->require_subcommand(1);
  auto* show =
      topo->add_subcommand("show", "Summarise a system's graph, or write Graphviz with --dot");
  show->add_option("system", o.system, "System name (topologies/NAME.json) or path")->required();
  show->add_option("--count", o.count, "Number of units (instances, UltraServers, racks)")
      ->check(CLI::Range(1, 16384));
  show->add_flag("--dot", o.dot, "Write Graphviz DOT on stdout");
  return {show, [&o] { return cmd_topo(o); }};
}

Command add_calibrate(CLI::App& app, CalibrateImportCli& o) {
  auto* cal = app.add_subcommand("calibrate", "Calibration sets measured with fleetsim-calibrate");
  cal->require_subcommand(1);
  auto* cal_import = cal->add_subcommand(
      "import", "Check a fleetsim-calibrate file and add it to a calibration set");
  cal_import->add_option("file", o.file, "Calibration CSV written by fleetsim-calibrate")
      ->required();
  cal_import->add_option("--set", o.set,
                         "Set name (calibration/sets/NAME) or a directory path; default "
                         "<gpu>-<date of the measurement>");
  cal_import->add_option("--sets-dir", o.sets_dir,
                         "Where named sets live (default <data dir>/calibration/sets)");
  return {cal_import, [&o] { return cmd_calibrate_import(o); }};
}

// `calibrate import-trace`, under the `calibrate` command add_calibrate created.
Command add_import_trace(CLI::App& app, ImportTraceCli& o) {
  auto* imp =
      app.get_subcommand("calibrate")
          ->add_subcommand(
              "import-trace",
              "Read a PyTorch profiler (Kineto) trace, match kernels to fleetsim's kernel classes "
              "and "
              "write a calibration file; print what was matched, what not and why, and host costs");
  imp->add_option("trace", o.file,
                  "Chrome-trace JSON written by torch.profiler (record_shapes=True)")
      ->required();
  imp->add_option("--out", o.out,
                  "Calibration file to write (default <trace stem>.calibration.csv)");
  imp->add_option("--gpu", o.gpu, "GPU model of the rows (default from the trace's device name)");
  imp->add_option("--date", o.date, "Date of the measurement (default the trace file's mtime)");
  imp->add_option("--set", o.set, "Also add the file to this calibration set (name or path)");
  imp->add_option("--sets-dir", o.sets_dir,
                  "Where named sets live (default <data dir>/calibration/sets)");
  return {imp, [&o] { return cmd_calibrate_import_trace(o); }};
}

Command add_sweep(CLI::App& app, SweepCli& sw, const char* argv0) {
  auto* sweep = app.add_subcommand(
      "sweep", "Run a sweep file's points in parallel; resumable; shardable; Slurm scripts");
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
  sweep
      ->add_option("--max-points", sw.max_points,
                   "Refuse sweeps that expand to more points than this, before filters "
                   "(default 1000000, about 1 GiB of expanded scenarios)")
      ->check(CLI::PositiveNumber);
  add_work_limits(sweep, sw.limits);
  sweep->add_option("--emit-slurm", sw.emit_slurm,
                    "Write an sbatch job array (one task per shard), the merge job and submit.sh "
                    "into DIR instead of running");
  sweep->add_option("--shards", sw.shards, "Shards (array tasks) for --emit-slurm (default 4)")
      ->check(CLI::Range(1, 100000));
  sweep->add_option("--partition", sw.partition, "Slurm partition for --emit-slurm");
  sweep->add_option("--time", sw.time_limit, "Slurm time limit per task for --emit-slurm");
  return {sweep, [&sw, argv0] { return cmd_sweep(sw, argv0); }};
}

Command add_merge(CLI::App& app, MergeCli& o) {
  auto* merge = app.add_subcommand(
      "merge",
      "Combine shard result folders; every point exactly once, else say which are missing");
  merge->add_option("out", o.out, "Output folder")->required();
  merge->add_option("inputs", o.inputs, "Shard result folders")->required();
  return {merge, [&o] { return cmd_merge(o); }};
}

Command add_model(CLI::App& app, ModelImportCli& o) {
  auto* model = app.add_subcommand("model", "Model definitions");
  model->require_subcommand(1);
  auto* imp = model->add_subcommand(
      "import", "Map a Hugging Face config.json onto a fleetsim model (zoo JSON with origins)");
  imp->add_option("config", o.config,
                  "Hugging Face config.json, or a checkpoint folder holding one")
      ->required();
  imp->add_option("--name", o.name, "Model id (default: the file or folder name)");
  imp->add_option("--out", o.out, "Write the model JSON here (default stdout)");
  return {imp, [&o] { return cmd_model_import(o); }};
}

Command add_plan(CLI::App& app, PlanCli& o) {
  auto* plan = app.add_subcommand(
      "plan", "Size a Flexible Training Plan: instance type x count x parallelism search");
  plan->add_option("plan", o.file, "Plan file (JSON, scenarios/schema/plan.schema.json)")
      ->required();
  plan->add_option("--out", o.out_dir, "Output folder (default out/plan-NAME)");
  plan->add_option("-j,--jobs", o.threads, "Threads (0 = every core; results do not change)")
      ->check(CLI::NonNegativeNumber);
  plan->add_option("--progress", o.progress,
                   "Progress on stderr (candidates simulated): auto (a bar on a terminal after "
                   "2 s, else none), bar, lines (every 10 s), none")
      ->check(CLI::IsMember({"auto", "bar", "lines", "none"}));
  plan->add_option("--max-gpus", o.max_gpus, "Refuse candidate clusters larger than this")
      ->check(CLI::PositiveNumber);
  plan->add_option("--max-candidates", o.max_candidates,
                   "Refuse plans with more type x count x parallelism combinations (each a step "
                   "simulation and a Monte Carlo)")
      ->check(CLI::PositiveNumber);
  add_work_limits(plan, o.limits);
  return {plan, [&o] { return cmd_plan(o); }};
}

// glibc's malloc maps memory in 4 KiB pages unless the process asks for transparent huge pages,
// and under the kernel's THP mode `madvise` (Debian's default) only a process started with
// GLIBC_TUNABLES=glibc.malloc.hugetlb=1 asks. The simulations that fill gigabytes (a 4,096-GPU
// all-to-all: 16.7 M flows, 2.7 GiB) then spend half their time in page faults and TLB misses
// (docs/performance.md). So fleetsim executes itself again, once, with that tunable added. It
// does not when the variable already names the tunable (the user's choice, or this is the second
// start), when FLEETSIM_HUGE_PAGES=0, when LD_PRELOAD is set (a preloaded allocator or tool, such
// as valgrind, owns the memory), under AddressSanitizer, or when the kernel's mode is not
// `madvise`. The results are the same either way; only speed changes. If the exec fails, the
// process carries on with small pages. (glibc 2.36 writes NULs over the ':' separators of the
// GLIBC_TUNABLES string it was started with, so /proc/PID/environ shows the tunables after the
// first as separate entries; getenv() and the exec see the whole value.)
void restart_with_huge_pages(char** argv) {
#if defined(__linux__) && !defined(__SANITIZE_ADDRESS__)
  const char* opt_out = std::getenv("FLEETSIM_HUGE_PAGES");
  if ((opt_out != nullptr && std::string(opt_out) == "0") || std::getenv("LD_PRELOAD") != nullptr)
    return;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  const std::string old = tunables != nullptr ? tunables : "";
  if (old.find("glibc.malloc.hugetlb") != std::string::npos) return;
  std::ifstream mode_file("/sys/kernel/mm/transparent_hugepage/enabled");
  const std::string mode((std::istreambuf_iterator<char>(mode_file)), {});
  if (mode.find("[madvise]") == std::string::npos) return;
  const std::string value = old + (old.empty() ? "" : ":") + "glibc.malloc.hugetlb=1";
  if (setenv("GLIBC_TUNABLES", value.c_str(), 1) != 0) return;
  // The binary's own path, so the process keeps its name (ps, top, pgrep show what /proc/PID/comm
  // holds: the executed file's name); /proc/self/exe where the file has gone (rebuilt meanwhile).
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  const bool found = !ec && access(exe.c_str(), X_OK) == 0;
  execv(found ? exe.c_str() : "/proc/self/exe", argv);
  if (tunables != nullptr)  // the exec failed: leave the environment as it was
    setenv("GLIBC_TUNABLES", old.c_str(), 1);
  else
    unsetenv("GLIBC_TUNABLES");
#else
  (void)argv;
#endif
}

}  // namespace
}  // namespace fleetsim

int main(int argc, char** argv) {
  using namespace fleetsim;
  restart_with_huge_pages(argv);
  CLI::App app{"fleetsim: discrete-event simulator of LLM training clusters"};
  app.set_version_flag("--version", std::string("fleetsim ") + FLEETSIM_VERSION);
  app.require_subcommand(1);
  RunCli run;
  MemoryCli memory;
  ValidateCli validate;
  ImportMlperfCli import_mlperf;
  TopoCli topo;
  CalibrateImportCli calibrate;
  ImportTraceCli import_trace;
  SweepCli sweep;
  MergeCli merge;
  PlanCli plan;
  ModelImportCli model;
  const std::vector<Command> commands = {add_run(app, run),
                                         add_memory(app, memory),
                                         add_validate(app, validate),
                                         add_import(app, import_mlperf),
                                         add_topo(app, topo),
                                         add_calibrate(app, calibrate),
                                         add_import_trace(app, import_trace),
                                         add_sweep(app, sweep, argv[0]),
                                         add_merge(app, merge),
                                         add_plan(app, plan),
                                         add_model(app, model)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  try {
    for (const Command& c : commands)
      if (c.app->parsed()) return c.run();
  } catch (const InputError& e) {
    std::fprintf(stderr, "fleetsim: error: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "fleetsim: error: %s\n", out_of_memory_message());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fleetsim: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}
