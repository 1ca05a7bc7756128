// Benchmark (not part of ctest): the 1,000-point sweep of the 64-GPU quickstart
// (scenarios/sweeps/bench-1000-64gpu.json) with -j 1 and -j 2: points/s, and the per-point
// overhead outside the simulation (parse + expand, one result row written and read back).
// Target (issue 7): the 1,000 points in < 60 s with -j 2 on a 2-core machine; overhead < 1 ms.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "bench_util.h"
#include "report/sweep_results.h"
#include "scenario/sweep_loader.h"
#include "sweep/sweep.h"

using namespace fleetsim;
using namespace fleetsim::bench;

int main() {
  const std::string file = default_data_dir() + "/scenarios/sweeps/bench-1000-64gpu.json";
  LoadOptions opt;
  double t0 = now_s();
  const SweepPlan plan = load_sweep(file, opt);
  const double expand_s = now_s() - t0;
  const auto n = static_cast<double>(plan.points.size());
  std::printf(
      "sweep %s: %zu points; parse + expand %.3f s (%.3f ms/point, incl. one loader check "
      "per distinct axis value)\n",
      plan.name.c_str(), plan.points.size(), expand_s, expand_s / n * 1e3);

  const SweepResultsCodec codec;
  PointRunner runner(opt);
  const SweepRow row = runner.run(plan, plan.points[0]);
  t0 = now_s();
  size_t bytes = 0;
  for (int i = 0; i < 1000; ++i) {
    const std::string line = codec.jsonl_row(row, plan.columns);
    bytes += line.size();
    if (!codec.parse_jsonl_row(line, plan.columns)) return 1;
  }
  std::printf("result row: write + read back %.3f ms/row (%zu bytes)\n", (now_s() - t0),
              bytes / 1000);

  const std::string out = std::filesystem::temp_directory_path().string() +
                          "/fleetsim-bench-sweep-" + std::to_string(::getpid());
  for (int jobs : {1, 2}) {
    std::filesystem::remove_all(out);
    SweepRunOptions ro;
    ro.jobs = jobs;
    ro.out_dir = out;
    ro.load = opt;
    ro.progress = ProgressMode::kNone;
    t0 = now_s();
    const SweepRunSummary s = run_sweep(plan, ro, codec);
    const double dt = now_s() - t0;
    std::printf("-j %d: %d points in %.2f s = %.1f points/s (%d ok, %d invalid, %d error)\n", jobs,
                s.ran, dt, s.ran / dt, s.ok, s.invalid, s.error);
  }
  std::filesystem::remove_all(out);
  std::printf("peak RSS %ld MiB\n", peak_rss_mib());
  return 0;
}
