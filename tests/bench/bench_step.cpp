// Benchmark (not part of ctest): one training step of Llama 3.1 405B on 16,384 B200 GPUs
// (2,048 × p6-b200.48xlarge; TP 8, PP 16, VP 8, DP 128, global batch 2,048) with every rank
// simulated, and the same in symmetry mode. Prints wall time, events and peak RSS.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>

#include "bench_util.h"
#include "scenario/scenario.h"
#include "study/cluster.h"
#include "study/training_step.h"

using namespace fleetsim;
using namespace fleetsim::bench;

int main() {
  const std::string dir = default_data_dir();
  LoadOptions opt;
  const Scenario s = load_scenario(dir + "/scenarios/llama3.1-405b-16k-b200.json", opt);
  const double t0 = now_s();
  const StudyCluster cluster = load_study_cluster(s, dir);
  std::printf("setup (topology of %d GPUs, compute model): %.3f s\n", cluster.topo.gpus(),
              now_s() - t0);
  for (bool symmetry : {false, true}) {
    TrainingWorkload w = *s.training;
    w.symmetry = symmetry;
    const double t1 = now_s();
    const StepResult r = simulate_training_step(w, s.seed, cluster, /*want_trace=*/false).result;
    std::printf(
        "Llama 3.1 405B, 16384 GPUs (tp8 pp16 vp8 dp128), %-40s: %7.3f s wall, %d TP units, "
        "%llu events; step %.3f s, %.1f tokens/s/GPU, MFU %.1f%%\n",
        r.mode.c_str(), now_s() - t1, r.units_simulated, static_cast<unsigned long long>(r.events),
        r.step_time_s, r.tokens_per_s_per_gpu, r.mfu * 100);
  }
  std::printf("  peak RSS %ld MiB\n", peak_rss_mib());
  return 0;
}
