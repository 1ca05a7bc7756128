// Benchmark (not part of ctest): 1,000 Monte Carlo replicas of a 30-day run of Llama 3.1 405B on
// 16,384 B200 GPUs (scenarios/run-llama3.1-405b-16k-b200.json: Llama 3 failure profile, gray
// GPUs and storage, health checks, async checkpoints, spares). The step times of every cluster
// state come from the step simulator once (memoized); the Monte Carlo then runs on one thread
// (the design target: < 10 s on one core) and on every core.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "bench_util.h"
#include "run/run.h"
#include "scenario/scenario.h"
#include "study/cluster.h"
#include "study/run_level.h"
#include "study/training_step.h"

using namespace fleetsim;
using namespace fleetsim::bench;

int main() {
  const std::string dir = default_data_dir();
  LoadOptions opt;
  Scenario s = load_scenario(dir + "/scenarios/run-llama3.1-405b-16k-b200.json", opt);
  s.run->replicas = 1000;
  const double t0 = now_s();
  const StudyCluster cluster = load_study_cluster(s, dir);
  const StepOutcome step = simulate_training_step(s, cluster, false);
  const double t1 = now_s();
  RunSpec no_mc = *s.run;
  Scenario table_only = s;
  table_only.run->replicas = 1;
  const RunOutcome warm = simulate_run_level(table_only, cluster, step, 1, false);
  const double t2 = now_s();
  std::printf("healthy step (symmetry): %.3f s wall, step %.3f s\n", t1 - t0,
              step.result.step_time_s);
  std::printf("step table: %zu slow-GPU states simulated (every rank) in %.3f s\n",
              warm.steps.slow_gpu_s.size(), t2 - t1);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  for (int threads : {1, static_cast<int>(cores)}) {
    const double a = now_s();
    const RunSummary m = run_monte_carlo(no_mc, warm.job, warm.steps, s.seed, threads, false);
    const double b = now_s();
    std::printf(
        "Monte Carlo: %d replicas x 30 days on %d GPUs, %d thread(s): %.3f s wall (%.2f ms per "
        "replica); ETTR mean %.4f P10 %.4f P90 %.4f, %.1f interruptions per run\n",
        m.replicas, warm.job.gpus, threads, b - a, (b - a) * 1e3 / m.replicas, m.ettr_mean,
        m.ettr_p10, m.ettr_p90, m.interruptions_mean);
    if (threads == static_cast<int>(cores)) break;
  }
  std::printf("  peak RSS %ld MiB\n", peak_rss_mib());
  return 0;
}
