// MoE routing and its cost (sim/moe): balanced loads, the multinomial against a direct Monte
// Carlo, the capacity formula, placement, the bias update, and the step-time effect.
#include <catch2/catch.hpp>
#include <cmath>

#include "core/rng.h"
#include "moe/imbalance.h"
#include "moe/routing.h"
#include "scenario/model_loader.h"
#include "scenario/scenario.h"
#include "support/fixtures.h"
#include "workload/step.h"

using namespace fleetsim;
using namespace fleetsim::test;

TEST_CASE("balanced routing loads every expert and rank equally") {
  RoutingSpec spec;
  const RoutingResult r = route_tokens(spec, 256, 8, 8, 3, 4, 4096, 1);
  for (const auto& layer : r.loads) {
    for (const LayerLoad& ld : layer) {
      CHECK(max_over_mean(ld.expert) == Approx(1.0));
      CHECK(max_over_mean(ld.rank) == Approx(1.0));
      // 8 ranks · 4096 tokens · top-8 = 262,144 copies; 1,024 per expert, 32,768 per rank.
      CHECK(ld.expert[17] == Approx(1024.0));
      CHECK(ld.rank[5] == Approx(32768.0));
      CHECK(ld.dropped == 0.0);
    }
  }
  const MoeLoadTable t = load_table(r);
  CHECK(t.rank(2, 3, 7) == Approx(1.0));
  CHECK(t.a2a(1, 0) == Approx(1.0));
}

TEST_CASE("expected max expert load matches a direct Monte Carlo of the multinomial") {
  // Dirichlet(0.5) popularity over 64 experts; 640 token copies per micro-batch (10 tokens on
  // each of 8 ranks, top-8). fleetsim samples the multinomial by conditional binomials; the
  // reference draws each of the 640 copies from the categorical distribution directly.
  RoutingSpec spec;
  spec.kind = RoutingKind::kDirichlet;
  spec.alpha = 0.5;
  const int mbs = 3000;
  const RoutingResult r = route_tokens(spec, 64, 8, 8, 1, mbs, 10, 42);
  const std::vector<double>& p = r.popularity[0];
  double sum = 0, sum2 = 0;
  for (const LayerLoad& ld : r.loads[0]) {
    const double mx = *std::max_element(ld.expert.begin(), ld.expert.end());
    sum += mx;
    sum2 += mx * mx;
  }
  const double mean = sum / mbs;
  const double se = std::sqrt((sum2 / mbs - mean * mean) / mbs);
  std::vector<double> cdf(p.size());
  double c = 0;
  for (size_t e = 0; e < p.size(); ++e)
    cdf[e] = (c += p[e]);
  Rng rng(7);
  double ref = 0;
  for (int t = 0; t < mbs; ++t) {
    std::vector<int> count(p.size(), 0);
    for (int k = 0; k < 640; ++k) {
      const double u = rng.uniform01();
      const size_t e = std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
      count[std::min(e, p.size() - 1)]++;
    }
    ref += *std::max_element(count.begin(), count.end());
  }
  ref /= mbs;
  // Both are estimates of E[max]: agree within 4 combined standard errors.
  CHECK(std::fabs(mean - ref) < 4.0 * std::sqrt(2.0) * se);
  CHECK(max_over_mean(r.loads[0][0].expert) > 1.5);  // Dirichlet(0.5) is visibly skewed
}

TEST_CASE("dropped tokens follow the capacity formula") {
  // Capacity = ceil(c · copies / E) per expert; every copy beyond it is dropped. The draws do
  // not depend on the capacity (streams per layer and micro-batch), so the dropless run gives
  // the routed loads.
  RoutingSpec spec;
  spec.kind = RoutingKind::kZipf;
  spec.s = 1.0;
  const RoutingResult raw = route_tokens(spec, 32, 2, 4, 2, 5, 512, 3);
  spec.capacity_factor = 1.25;
  const RoutingResult capped = route_tokens(spec, 32, 2, 4, 2, 5, 512, 3);
  const double cap = std::ceil(1.25 * (512.0 * 4 * 2) / 32);  // 160
  for (int l = 0; l < 2; ++l) {
    for (int mb = 0; mb < 5; ++mb) {
      double expected = 0;
      for (size_t e = 0; e < 32; ++e) {
        expected += std::max(0.0, raw.loads[l][mb].expert[e] - cap);
        CHECK(capped.loads[l][mb].expert[e] <= cap);
      }
      CHECK(capped.loads[l][mb].dropped == Approx(expected));
    }
  }
  CHECK(summarize(capped).dropped_fraction > 0);
}

TEST_CASE("EPLB replicas of hot experts flatten the rank loads") {
  RoutingSpec spec;
  spec.kind = RoutingKind::kZipf;
  spec.s = 1.2;
  const double contiguous =
      summarize(route_tokens(spec, 64, 8, 8, 2, 8, 4096, 5)).rank_max_over_mean_avg;
  spec.placement = Placement::kEplb;
  spec.redundant_experts = 8;
  const RoutingResult eplb = route_tokens(spec, 64, 8, 8, 2, 8, 4096, 5);
  CHECK(eplb.slots_per_rank == 9);  // 8 experts + one redundant slot per rank
  CHECK(summarize(eplb).rank_max_over_mean_avg < contiguous);
}

TEST_CASE("the aux-loss-free bias update makes imbalance decay") {
  RoutingSpec spec;
  spec.kind = RoutingKind::kDirichlet;
  spec.alpha = 1.0;
  spec.bias_gamma = 0.01;
  spec.bias_steps = 400;
  const RoutingResult r = route_tokens(spec, 64, 8, 8, 2, 2, 4096, 9);
  REQUIRE(r.bias_trajectory.size() == 401);
  // Each step moves every bias by ±γ towards the mean load, so the max/mean of the expected
  // loads falls step after step until the hottest expert's bias has caught up.
  for (size_t i = 1; i < 200; ++i)
    CHECK(r.bias_trajectory[i] <= r.bias_trajectory[i - 1] + 1e-9);
  CHECK(r.bias_trajectory.back() < 0.35 * r.bias_trajectory.front());
}

TEST_CASE("imbalance only slows the step, balanced equals the dense-equivalent step") {
  const SystemSpec sys = load_system("dgx-b200", kRoot);
  const CollectiveParams cp = load_collective_params(sys, kRoot);
  const ComputeModel compute = ComputeModel::load(sys.gpu, kRoot);
  const Topology topo(sys, sys.fabric, 1);
  StepInput in;
  in.model = zoo("deepseek-v3");
  in.model.layers = 5;  // 3 dense + 2 MoE layers
  in.model.mtp_layers = 0;
  in.par.ep = 8;
  in.par.dp = 8;
  in.par.seq_len = 4096;
  in.par.global_batch = 16;  // 2 micro-batches
  const double plain = simulate_step(in, topo, cp, compute).step_time_s;
  RoutingSpec spec;
  in.moe = load_table(route_tokens(spec, 256, 8, 8, 2, 2, 4096, 1));
  CHECK(simulate_step(in, topo, cp, compute).step_time_s == Approx(plain).epsilon(1e-12));
  spec.kind = RoutingKind::kDirichlet;
  spec.alpha = 0.3;
  in.moe = load_table(route_tokens(spec, 256, 8, 8, 2, 2, 4096, 1));
  const double skewed = simulate_step(in, topo, cp, compute).step_time_s;
  CHECK(skewed > plain);
}

TEST_CASE("the step slows down as routing skew grows") {
  // Dirichlet(α) popularity: smaller α, more skew, a busier hottest EP rank, a slower step.
  const SystemSpec sys = load_system("dgx-b200", kRoot);
  const CollectiveParams cp = load_collective_params(sys, kRoot);
  const ComputeModel compute = ComputeModel::load(sys.gpu, kRoot);
  const Topology topo(sys, sys.fabric, 1);
  StepInput in;
  in.model = zoo("deepseek-v3");
  in.model.layers = 6;  // 3 dense + 3 MoE layers
  in.model.mtp_layers = 0;
  in.par.ep = 8;
  in.par.dp = 8;
  in.par.seq_len = 4096;
  in.par.global_batch = 32;  // 4 micro-batches
  double previous = 0;
  for (double alpha : {100.0, 3.0, 1.0, 0.3}) {
    RoutingSpec spec;
    spec.kind = RoutingKind::kDirichlet;
    spec.alpha = alpha;
    in.moe = load_table(route_tokens(spec, 256, 8, 8, 3, 4, 4096, 11));
    const double t = simulate_step(in, topo, cp, compute).step_time_s;
    INFO("alpha " << alpha);
    CHECK(t > previous);
    previous = t;
  }
}
