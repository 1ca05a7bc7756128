// `fleetsim sweep FILE` (this shard's points, or Slurm scripts) and `fleetsim merge OUT DIRS...`.
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "cli/commands.h"
#include "report/sweep_results.h"
#include "scenario/sweep_loader.h"
#include "sweep/sweep.h"

namespace fleetsim {

// fleetsim sweep: expand, then run this shard's points (or write Slurm scripts).
int cmd_sweep(const SweepCli& o, const char* argv0) {
  LoadOptions lo;
  lo.max_gpus = o.max_gpus;
  lo.max_sweep_points = o.max_points;
  o.limits.apply(&lo);
  const SweepPlan plan = load_sweep(o.file, lo);
  std::fprintf(stderr, "sweep %s: %lld combinations, %zu points\n", plan.name.c_str(),
               plan.combinations, plan.points.size());
  for (const auto& sk : plan.skipped)
    std::fprintf(stderr, "  skipped %d: %s\n", sk.count, sk.reason.c_str());
  if (!o.emit_slurm.empty()) {
    std::error_code ec;
    auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    SlurmOptions so;
    so.dir = o.emit_slurm;
    so.fleetsim_exe = ec ? std::string(argv0) : exe.string();
    so.sweep_file = o.file;
    so.shards = std::min<int>(o.shards, std::max<int>(1, static_cast<int>(plan.points.size())));
    so.cpus_per_task = o.jobs;
    so.partition = o.partition;
    so.time_limit = o.time_limit;
    so.limit_args = {"--max-points", std::to_string(lo.max_sweep_points), "--max-gpus",
                     std::to_string(lo.max_gpus)};
    for (auto& a : o.limits.arguments())
      so.limit_args.push_back(std::move(a));
    for (const auto& f : emit_slurm(plan, so))
      std::printf("wrote %s\n", f.c_str());
    std::printf("submit: bash %s/submit.sh  (%d array tasks, then the merge)\n",
                std::filesystem::absolute(o.emit_slurm).lexically_normal().c_str(), so.shards);
    return 0;
  }
  SweepRunOptions ro;
  ro.jobs = o.jobs;
  ro.shard = parse_shard(o.shard, "--shard");
  ro.load = lo;
  parse_progress_mode(o.progress, &ro.progress);  // main.cpp checked the value
  ro.out_dir = o.out;
  if (ro.out_dir.empty()) {
    ro.out_dir = "out/sweeps/" + plan.name;
    if (ro.shard.count > 1) ro.out_dir += "/shard-" + std::to_string(ro.shard.index);
  }
  const SweepResultsCodec codec;
  const SweepRunSummary r = run_sweep(plan, ro, codec);
  std::printf(
      "# sweep %s, shard %d/%d: %d points (%d already done, %d run in %.2f s, %.1f "
      "points/s): %d ok, %d invalid, %d error\n",
      plan.name.c_str(), ro.shard.index, ro.shard.count, r.shard_points, r.already_done, r.ran,
      r.elapsed_s, r.elapsed_s > 0 ? r.ran / r.elapsed_s : 0.0, r.ok, r.invalid, r.error);
  if (r.foreign_rows > 0)
    std::printf("# dropped %d rows of points that are no longer in the sweep\n", r.foreign_rows);
  std::printf("# results: %s/results.jsonl, %s/results.csv\n", ro.out_dir.c_str(),
              ro.out_dir.c_str());
  return 0;
}

int cmd_merge(const MergeCli& o) {
  const std::string& out = o.out;
  const SweepResultsCodec codec;
  const MergeSummary m = merge_sweep_results(out, o.inputs, codec);
  std::printf("# merged %d points from %d folders into %s/results.jsonl, %s/results.csv\n",
              m.points, m.inputs, out.c_str(), out.c_str());
  return 0;
}

}  // namespace fleetsim
