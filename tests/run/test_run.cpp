// Run-level simulator: closed forms (no failures, one failure at a known time), the Meta RSC
// ETTR figures, Daly's optimum, the Llama 3 interruption count, gray-failure detection,
// checkpointless recovery, determinism across thread counts.
#include <catch2/catch.hpp>
#include <cmath>

#include "run/run.h"
#include "scenario/run_loader.h"
#include "support/fixtures.h"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {

JobShape small_job() {
  JobShape j;
  j.gpus = 64;
  j.nodes = 8;
  j.gpus_per_node = 8;
  j.domain_nodes = 1;
  j.dp = 8;
  j.replicas_per_node = 1;
  j.tokens_per_step = 1e6;
  return j;
}

StepTable steps_10s() {
  StepTable t;
  t.healthy_s = 10;
  return t;
}

RunSpec base_spec() {
  RunSpec s;
  s.replicas = 1;
  s.checkpoint.mode = CheckpointMode::kSync;
  s.checkpoint.interval_kind = IntervalKind::kMinutes;
  s.checkpoint.interval_minutes = 30;
  s.checkpoint.blocking_s = 60;
  s.checkpoint.load_s = 120;
  s.recovery.restart_s = 600;
  s.recovery.replace_s = 300;
  s.recovery.spares = 1;
  s.failures.classes.push_back({"gpu", 0.0, FaultUnit::kNode, FaultUnit::kNode, 1.0, "test"});
  s.failures.classes.push_back({"software", 0.0, FaultUnit::kJob, FaultUnit::kJob, 1.0, "test"});
  return s;
}

double lost(const ReplicaResult& r, LostCause c) {
  return r.lost_s[static_cast<int>(c)];
}

}  // namespace

TEST_CASE("no failures: ETTR = 1 - checkpoint overhead exactly") {
  RunSpec s = base_spec();
  s.duration_s = 10 * (1800 + 60);
  const ReplicaResult r = simulate_replica(s, small_job(), steps_10s(), 1, 0, nullptr);
  CHECK(r.checkpoints == 10);
  CHECK(r.ettr() == Approx(1800.0 / 1860.0).epsilon(1e-9));
  CHECK(lost(r, LostCause::kCheckpoint) == Approx(600).epsilon(1e-9));
  CHECK(r.ideal_s + lost(r, LostCause::kCheckpoint) == Approx(r.wall_s).epsilon(1e-12));
  // Health checks taking 0.6 s every minute cost another 1 %.
  s.health.enabled = true;
  s.health.interval_s = 60;
  s.health.cost_s = 0.6;
  const ReplicaResult h = simulate_replica(s, small_job(), steps_10s(), 1, 0, nullptr);
  CHECK(h.ettr() == Approx(0.99 * 1800.0 / 1860.0).epsilon(1e-9));
}

TEST_CASE("one failure at a known time: lost work equals the hand computation") {
  RunSpec s = base_spec();
  s.token_budget = 10800 * 1e5;  // 3 h of training at 1e5 tokens/s
  s.injected.push_back({6000.0, 0, 3});
  std::vector<RunEvent> ev;
  const ReplicaResult r = simulate_replica(s, small_job(), steps_10s(), 1, 0, &ev);
  // Checkpoints end at 31, 62 and 93 min (30 min of training + 1 min each). The failure at
  // 100 min loses the 7 min trained since; a spare is swapped in (5 min), the job restarts
  // (10 min) and loads the checkpoint (2 min): training resumes at 117 min from 90 min of
  // progress. The remaining 90 min of training take two more checkpoints.
  CHECK(lost(r, LostCause::kRework) == Approx(420).epsilon(1e-9));
  CHECK(lost(r, LostCause::kReplacement) == Approx(300).epsilon(1e-9));
  CHECK(lost(r, LostCause::kRestart) == Approx(720).epsilon(1e-9));
  CHECK(lost(r, LostCause::kDetection) == 0);
  CHECK(r.checkpoints == 5);
  CHECK(r.reached_budget);
  CHECK(r.time_to_budget_s == Approx(7020 + 5400 + 120).epsilon(1e-9));
  CHECK(r.spares_used == 1);
  CHECK(r.interruptions == 1);
  CHECK(r.failures[0] == 1);
  CHECK(r.ettr() == Approx(10800.0 / 12540.0).epsilon(1e-9));
  REQUIRE(!ev.empty());
  CHECK(run_events_jsonl(ev).find(
            "{\"t_s\":6000.000,\"event\":\"failure\",\"component\":\"gpu\"") != std::string::npos);
}

TEST_CASE("detection delay, missing spares and the wait for repair") {
  RunSpec s = base_spec();
  s.token_budget = 10800 * 1e5;
  s.injected.push_back({6000.0, 0, 3});
  s.health.hard_detection_s = 240;  // e.g. an NCCL watchdog timeout
  s.recovery.spares = 0;
  s.recovery.repair_s = 3600;
  const ReplicaResult r = simulate_replica(s, small_job(), steps_10s(), 3, 0, nullptr);
  CHECK(lost(r, LostCause::kDetection) == Approx(240).epsilon(1e-9));
  CHECK(lost(r, LostCause::kSpareWait) > 0);  // until the cordoned node comes back repaired
  CHECK(r.ideal_s + lost(r, LostCause::kRework) + lost(r, LostCause::kReplacement) +
            lost(r, LostCause::kRestart) + lost(r, LostCause::kCheckpoint) +
            lost(r, LostCause::kDetection) + lost(r, LostCause::kSpareWait) ==
        Approx(r.wall_s).epsilon(1e-9));
  // Software failures restart in place: no spare needed.
  RunSpec sw = base_spec();
  sw.token_budget = 10800 * 1e5;
  sw.recovery.spares = 0;
  sw.injected.push_back({6000.0, 1, 0});
  const ReplicaResult q = simulate_replica(sw, small_job(), steps_10s(), 3, 0, nullptr);
  CHECK(lost(q, LostCause::kSpareWait) == 0);
  CHECK(lost(q, LostCause::kReplacement) == 0);
  CHECK(lost(q, LostCause::kRework) == Approx(420).epsilon(1e-9));
}

TEST_CASE("checkpointless recovery drops a replica instead of rolling back") {
  RunSpec s = base_spec();
  s.token_budget = 10800 * 1e5;
  s.injected.push_back({6000.0, 0, 3});
  s.recovery.mode = RecoveryMode::kCheckpointless;
  s.recovery.checkpointless_s = 120;
  const ReplicaResult r = simulate_replica(s, small_job(), steps_10s(), 1, 0, nullptr);
  CHECK(lost(r, LostCause::kRework) == 0);
  CHECK(lost(r, LostCause::kRestart) == Approx(120).epsilon(1e-9));
  // 7 of 8 replicas run until the spare rejoins 300 s after the failure: 180 s of the 300 s
  // fall after the 120 s pause, at 1/8 throughput loss.
  CHECK(lost(r, LostCause::kDegraded) == Approx(180.0 / 8).epsilon(1e-6));
}

TEST_CASE("in-memory checkpoints restore from the peer unless the peer failed too") {
  RunSpec s = base_spec();
  s.checkpoint.mode = CheckpointMode::kTiered;
  s.checkpoint.persistent_every = 4;
  s.checkpoint.blocking_s = 10;
  s.checkpoint.upload_s = 0;
  s.checkpoint.load_s = 600;
  s.checkpoint.peer_bytes_per_s = 1e9;
  s.checkpoint.host_copy_bytes_per_s = 1e9;
  s.checkpoint.size_bytes = 8e9;  // 1 GB per node → 1 s peer copy + 0.125 s host copy
  s.checkpoint.gpus = 64;
  s.checkpoint.nodes = 8;
  s.recovery.spares = 4;
  s.token_budget = 10800 * 1e5;
  // Checkpoints end at 30:10, 60:20, 90:30, 120:40 (the 4th also persistent).
  s.injected.push_back({6000.0, 0, 3});
  const ReplicaResult r = simulate_replica(s, small_job(), steps_10s(), 1, 0, nullptr);
  CHECK(lost(r, LostCause::kRestart) == Approx(600 + 1.125).epsilon(1e-9));
  CHECK(lost(r, LostCause::kRework) == Approx(6000 - 5430).epsilon(1e-9));
  // Node 3 and its peer (node 4) both fail before the next in-memory checkpoint: restore from
  // storage (nothing persistent yet: from the start).
  s.injected.push_back({6001.0, 0, 4});
  const ReplicaResult q = simulate_replica(s, small_job(), steps_10s(), 1, 0, nullptr);
  CHECK(lost(q, LostCause::kRework) == Approx(6000 - 30).epsilon(1e-9));
}

TEST_CASE("Meta RSC: ETTR 0.70 at a 60-minute interval and 0.93 at 5 minutes") {
  // Kokolis et al. (HPCA 2025): one 16,000-GPU job on RSC-1 (2,048 nodes), r_f = 6.5 per
  // 1,000 node-days, u0 = 5 min restart, non-blocking checkpoints.
  RunSpec s;
  s.failures = load_failure_profile("meta-rsc1-a100", kRoot);
  s.replicas = 200;
  s.duration_s = 7 * 86400.0;
  s.checkpoint.mode = CheckpointMode::kAsync;
  s.checkpoint.blocking_s = 0;
  s.checkpoint.upload_s = 0;
  s.checkpoint.load_s = 0;
  s.recovery.restart_s = 300;
  s.recovery.replace_s = 0;
  s.recovery.spares = 1000000;
  JobShape job;
  job.gpus = 16384;
  job.nodes = 2048;
  job.gpus_per_node = 8;
  job.dp = 128;
  job.tokens_per_step = 16e6;
  StepTable steps;
  steps.healthy_s = 10;
  s.checkpoint.interval_minutes = 60;
  const RunSummary a = run_monte_carlo(s, job, steps, 42, 2, false);
  s.checkpoint.interval_minutes = 5;
  const RunSummary b = run_monte_carlo(s, job, steps, 42, 2, false);
  INFO("ETTR at 60 min " << a.ettr_mean << ", at 5 min " << b.ettr_mean);
  CHECK(a.ettr_mean == Approx(0.70).margin(0.03));
  CHECK(b.ettr_mean == Approx(0.93).margin(0.03));
}

TEST_CASE("the simulated optimum checkpoint interval is within 15% of Daly's") {
  // Blocking checkpoints of 5 min, MTBF 2 h, 10 min restart; sweep the interval with common
  // random numbers and fit a parabola to mean ETTR around the best point.
  RunSpec s;
  s.failures.classes.push_back({"software", 0.5, FaultUnit::kJob, FaultUnit::kJob, 1.0, "test"});
  s.replicas = 8;
  s.duration_s = 200 * 86400.0;
  s.checkpoint.mode = CheckpointMode::kSync;
  s.checkpoint.blocking_s = 300;
  s.checkpoint.load_s = 0;
  s.recovery.restart_s = 600;
  const JobShape job = small_job();
  const StepTable steps = steps_10s();
  std::vector<double> x, y;
  for (double m = 10; m <= 70; m += 4) {
    s.checkpoint.interval_minutes = m;
    x.push_back(m);
    y.push_back(run_monte_carlo(s, job, steps, 5, 2, false).ettr_mean);
  }
  size_t best = 0;
  for (size_t i = 1; i < y.size(); ++i)
    if (y[i] > y[best]) best = i;
  REQUIRE(best > 0);
  REQUIRE(best + 1 < y.size());
  // Vertex of the parabola through the best point and its neighbours.
  const double h = x[1] - x[0];
  const double d = y[best - 1] - 2 * y[best] + y[best + 1];
  const double opt = x[best] + h * (y[best - 1] - y[best + 1]) / (2 * d);
  const double daly = daly_interval_s(300, 7200) / 60;
  INFO("simulated optimum " << opt << " min, Daly " << daly << " min");
  CHECK(std::fabs(opt - daly) / daly < 0.15);
}

TEST_CASE("Llama 3 profile: 419 unexpected interruptions in 54 days on 16,384 GPUs") {
  RunSpec s;
  s.failures = load_failure_profile("llama3-h100", kRoot);
  s.replicas = 20;
  s.duration_s = 54 * 86400.0;
  s.checkpoint.mode = CheckpointMode::kAsync;
  s.checkpoint.interval_minutes = 30;
  s.checkpoint.blocking_s = 1;
  s.checkpoint.upload_s = 60;
  s.checkpoint.load_s = 120;
  s.recovery.restart_s = 600;
  s.recovery.spares = 64;
  s.recovery.repair_s = 2 * 86400.0;
  JobShape job;
  job.gpus = 16384;
  job.nodes = 2048;
  job.gpus_per_node = 8;
  job.dp = 128;
  job.tokens_per_step = 16e6;
  StepTable steps;
  steps.healthy_s = 12;
  const RunSummary r = run_monte_carlo(s, job, steps, 3, 2, false);
  INFO("mean interruptions " << r.interruptions_mean << ", ETTR " << r.ettr_mean);
  CHECK(r.interruptions_mean == Approx(419).epsilon(0.10));
  double gpu = 0;
  for (size_t c = 0; c < s.failures.classes.size(); ++c)
    if (s.failures.classes[c].per == FaultUnit::kGpu) gpu += r.failures_mean[c];
  CHECK(gpu / r.interruptions_mean == Approx(268.0 / 419).margin(0.03));
}

TEST_CASE("gray failures: severe slowdowns are detected, mild ones run degraded") {
  RunSpec s = base_spec();
  s.duration_s = 3 * 86400.0;
  s.recovery.spares = 100;
  s.health.enabled = true;
  s.health.interval_s = 60;
  s.health.gray_threshold = 1.1;
  s.health.gray_consecutive = 3;
  GrayFailureSpec g;
  g.rate_per_hour = 1.0 / 64 / 6;  // one onset every 6 h on the 64 GPUs
  g.duration_median_s = 4 * 3600.0;
  g.duration_sigma = 0.1;
  StepTable steps = steps_10s();
  g.speed_min = g.speed_max = 0.5;
  s.gray = {g};
  steps.slow_gpu_s[10] = 20;  // half clock doubles the step
  const ReplicaResult severe = simulate_replica(s, small_job(), steps, 9, 0, nullptr);
  CHECK(severe.gray_onsets > 5);
  CHECK(severe.gray_detected >= severe.gray_onsets - 1);
  // Detected after 3 checks: at most 3 min of each onset at half speed.
  CHECK(severe.lost_s[static_cast<int>(LostCause::kDegraded)] <=
        severe.gray_onsets * 180.0 / 2 + 1);
  g.speed_min = g.speed_max = 0.95;
  s.gray = {g};
  steps.slow_gpu_s[19] = 10.5;  // 5 % slower: under the 10 % threshold
  const ReplicaResult mild = simulate_replica(s, small_job(), steps, 9, 0, nullptr);
  CHECK(mild.gray_onsets > 5);
  CHECK(mild.gray_detected == 0);
  CHECK(mild.lost_s[static_cast<int>(LostCause::kDegraded)] > 3600);
  CHECK(gray_levels(s) == std::vector<int>{19});
}

TEST_CASE("Monte Carlo is identical for every thread count") {
  RunSpec s;
  s.failures = load_failure_profile("llama3-h100", kRoot);
  s.replicas = 24;
  s.duration_s = 5 * 86400.0;
  s.checkpoint.mode = CheckpointMode::kAsync;
  s.checkpoint.interval_minutes = 20;
  s.checkpoint.blocking_s = 2;
  s.checkpoint.upload_s = 120;
  s.checkpoint.load_s = 120;
  s.recovery.spares = 2;
  s.recovery.repair_s = 86400;
  JobShape job;
  job.gpus = 4096;
  job.nodes = 512;
  job.gpus_per_node = 8;
  job.dp = 32;
  job.tokens_per_step = 4e6;
  StepTable steps;
  steps.healthy_s = 5;
  const RunSummary a = run_monte_carlo(s, job, steps, 17, 1, true);
  const RunSummary b = run_monte_carlo(s, job, steps, 17, 3, true);
  CHECK(a.ettr_mean == b.ettr_mean);
  CHECK(a.ettr_p90 == b.ettr_p90);
  CHECK(a.lost_mean_s == b.lost_mean_s);
  CHECK(a.interruptions_mean == b.interruptions_mean);
  CHECK(run_events_jsonl(a.events) == run_events_jsonl(b.events));
  const RunSummary c = run_monte_carlo(s, job, steps, 18, 1, false);
  CHECK(c.ettr_mean != a.ettr_mean);
}

TEST_CASE("auto interval is Daly's formula for the profile's MTBF") {
  RunSpec s = base_spec();
  s.failures.classes[1].rate_per_hour = 0.5;
  s.checkpoint.interval_kind = IntervalKind::kAuto;
  CHECK(resolved_interval_s(s, small_job(), steps_10s()) == Approx(daly_interval_s(60, 7200)));
  CHECK(percentile({3, 1, 2, 4}, 0.5) == 2);
  CHECK(percentile({3, 1, 2, 4}, 0.9) == 4);
}

TEST_CASE("an async checkpoint waits for the previous upload, auto is not shorter than one") {
  // No failures; train 600 s, block 10 s, upload 1200 s in the background. From the second
  // checkpoint on, each waits 1200 − 600 = 600 s for the previous upload: a cycle of
  // 600 + 600 + 10 s. Until 6960 s: 6 checkpoints, 3900 s of training (hand computation).
  RunSpec s = base_spec();
  s.checkpoint.mode = CheckpointMode::kAsync;
  s.checkpoint.interval_minutes = 10;
  s.checkpoint.blocking_s = 10;
  s.checkpoint.upload_s = 1200;
  s.duration_s = 610 + 5 * 1210 + 300;
  const ReplicaResult r = simulate_replica(s, small_job(), steps_10s(), 1, 0, nullptr);
  CHECK(r.checkpoints == 6);
  CHECK(r.checkpoints_lost == 0);
  CHECK(r.ettr() == Approx(3900.0 / 6960.0).epsilon(1e-9));
  CHECK(lost(r, LostCause::kCheckpoint) == Approx(6 * 10 + 5 * 600).epsilon(1e-9));
  // Daly's optimum for δ = 10 s and a 2 h MTBF is about 380 s, under the 1200 s upload.
  s.failures.classes[1].rate_per_hour = 0.5;
  s.checkpoint.interval_kind = IntervalKind::kAuto;
  CHECK(daly_interval_s(10, 7200) < 400);
  CHECK(resolved_interval_s(s, small_job(), steps_10s()) == Approx(1200));
}
