// Checkpoint costs, job failure rates, and Young / Daly intervals against published values.
#include <catch2/catch.hpp>
#include <cmath>

#include "core/error.h"
#include "fault/fault.h"
#include "run/failure_process.h"
#include "scenario/run_loader.h"
#include "support/fixtures.h"

using namespace fleetsim;
using namespace fleetsim::test;

TEST_CASE("Daly's higher-order interval reproduces his published optima") {
  // Daly (2006), FGCS 22(3), figure captions: delta = 5 min; M = 24 h, 6 h, 15 min give
  // 117, 57 and 9.1 min.
  CHECK(daly_interval_s(300, 24 * 3600.0) / 60 == Approx(116.7).margin(0.1));
  CHECK(daly_interval_s(300, 6 * 3600.0) / 60 == Approx(56.7).margin(0.1));
  CHECK(daly_interval_s(300, 15 * 60.0) / 60 == Approx(9.14).margin(0.02));
  CHECK(daly_interval_s(600, 200) == 200);  // delta >= 2M: checkpoint every M
  CHECK(young_interval_s(300, 86400) == Approx(std::sqrt(2 * 300.0 * 86400)));
}

TEST_CASE("checkpoint costs follow size and bandwidth per mode") {
  CheckpointSpec c;
  c.size_bytes = 2.3e12;  // BLOOM-176B: 2.3 TB saved in about 40 s (57.5 GB/s)
  c.write_bytes_per_s = 57.5e9;
  c.read_bytes_per_s = 115e9;
  c.host_copy_bytes_per_s = 50e9;
  c.peer_bytes_per_s = 400e9;
  c.gpus = 384;
  c.nodes = 48;
  c.mode = CheckpointMode::kSync;
  CheckpointCosts k = checkpoint_costs(c);
  CHECK(k.blocking_s == Approx(40.0));
  CHECK(k.upload_s == 0);
  CHECK(k.load_s == Approx(20.0));
  c.mode = CheckpointMode::kAsync;
  k = checkpoint_costs(c);
  CHECK(k.blocking_s == Approx(2.3e12 / 384 / 50e9));  // device → host copy of the GPU's share
  CHECK(k.upload_s == Approx(40.0));
  c.mode = CheckpointMode::kInMemory;
  k = checkpoint_costs(c);
  CHECK(k.blocking_s == Approx(2.3e12 / 384 / 50e9 + 2.3e12 / 48 / 400e9));
  CHECK(k.peer_load_s == Approx(k.blocking_s));
  // Slow storage (gray failure at half bandwidth) doubles storage times.
  c.mode = CheckpointMode::kSync;
  CHECK(checkpoint_costs(c, 0.5).blocking_s == Approx(80.0));
  c.blocking_s = 5;
  CHECK(checkpoint_costs(c).blocking_s == 5);
}

TEST_CASE("job failure rate sums classes over their units") {
  FailureProfile p;
  p.classes.push_back({"gpu", 1e-5, FaultUnit::kGpu, FaultUnit::kNode, 1.0, ""});
  p.classes.push_back({"host", 2e-4, FaultUnit::kNode, FaultUnit::kNode, 1.0, ""});
  p.classes.push_back({"software", 0.01, FaultUnit::kJob, FaultUnit::kJob, 1.0, ""});
  CHECK(job_failure_rate_per_hour(p, 1024, 128, 2) == Approx(1024e-5 + 128 * 2e-4 + 0.01));
}

TEST_CASE("failure profiles: Llama 3 fit gives 419 interruptions in 54 days on 16,384 GPUs") {
  const FailureProfile p = load_failure_profile("llama3-h100", kRoot);
  const double hours = 54 * 24.0;
  CHECK(job_failure_rate_per_hour(p, 16384, 2048, 2048) * hours == Approx(419).epsilon(0.002));
  double gpu = 0;
  for (const auto& c : p.classes)
    if (c.per == FaultUnit::kGpu) gpu += c.rate_per_hour * 16384 * hours;
  CHECK(gpu == Approx(268).epsilon(0.003));  // Table 5's GPU category
  const FailureProfile rsc = load_failure_profile("meta-rsc1-a100", kRoot);
  // Kokolis et al.: MTTF = 1 / (N r_f) = 1.8 h at 16,384 GPUs (2,048 nodes).
  CHECK(1.0 / job_failure_rate_per_hour(rsc, 16384, 2048, 2048) == Approx(1.8).margin(0.01));
}

TEST_CASE("unknown failure profile names the near miss") {
  try {
    load_failure_profile("llama3-h10", kRoot);
    FAIL("expected an error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("did you mean 'llama3-h100'") != std::string::npos);
  }
}

TEST_CASE("failure process: Poisson count and Weibull mean life") {
  // Exponential: 1000 units at 1e-3 per hour over 1000 h → 1000 failures expected.
  Rng rng(7);
  FailureProcess p(1000, 1e-3, 1.0, &rng);
  int n = 0;
  while (p.next_s() < 1000 * 3600.0) {
    p.fire(&rng);
    ++n;
  }
  CHECK(n == Approx(1000).margin(100));  // ±3.2 sigma
  // Weibull k = 0.7 on one unit: renewal process, mean life 1/rate → long-run count T/mean.
  Rng rng2(11);
  FailureProcess w(1, 1e-2, 0.7, &rng2);
  int m = 0;
  while (w.next_s() < 2e5 * 3600.0) {
    w.fire(&rng2);
    ++m;
  }
  CHECK(m == Approx(2000).epsilon(0.08));
}
