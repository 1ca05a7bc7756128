// Step simulator (sim/workload/step.cpp): pipeline schedules against their closed forms,
// configuration checks, determinism, symmetry mode and slow GPUs.
#include <catch2/catch.hpp>

#include <cmath>

#include "coll/dispatch.h"
#include "core/error.h"
#include "scenario/model_loader.h"
#include "scenario/scenario.h"
#include "support/fixtures.h"
#include "workload/step.h"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {
// A uniform 16-layer model with a 128-token vocabulary, so the embedding and the LM head are
// negligible and every pipeline stage does the same work.
ModelSpec uniform_model() {
  ModelSpec m = zoo("llama3-8b");
  m.layers = 16;
  m.vocab = 128;
  m.benchmark_vocab = 128;
  return m;
}

struct Fixture {
  SystemSpec sys = load_system("dgx-b200", kRoot);
  CollectiveParams cp = load_collective_params(sys, kRoot);
  ComputeModel compute = ComputeModel::load(sys.gpu, kRoot);
  Topology topo{sys, sys.fabric, 1};
};

StepResult run(Fixture& f, const ModelSpec& m, int pp, int vp, int micro_batches) {
  StepInput in;
  in.model = m;
  in.par.pp = pp;
  in.par.vp = vp;
  in.par.dp = 1;
  in.par.seq_len = 4096;
  in.par.micro_batch = 1;
  in.par.global_batch = micro_batches;
  in.par.precision = PrecisionRecipe::kBf16;
  return simulate_step(in, f.topo, f.cp, f.compute);
}
}  // namespace

TEST_CASE("closed-form bubble fraction") {
  // Narayanan et al. 2021: (p − 1) / (v · m).
  CHECK(bubble_fraction(4, 1, 8) == Approx(3.0 / 8));
  CHECK(bubble_fraction(8, 4, 32) == Approx(7.0 / 128));
  CHECK(bubble_fraction(1, 1, 8) == 0.0);
}

TEST_CASE("1F1B pipeline: step time follows (m + p − 1)·(t_f + t_b)") {
  Fixture f;
  const ModelSpec m = uniform_model();
  // With identical stages, 1F1B takes (m + p − 1) slots of one micro-batch's forward + backward
  // per stage, plus the optimizer step. Two runs give the slot time; the bubble then follows.
  const StepResult a = run(f, m, 4, 1, 8);
  const StepResult b = run(f, m, 4, 1, 32);
  const double slot = (b.step_time_s - a.step_time_s) / 24.0;
  const double opt = a.breakdown.optimizer;
  CHECK(a.step_time_s == Approx((8 + 3) * slot + opt).epsilon(0.02));
  // The bubble the critical rank measured is (p − 1) slots.
  CHECK(a.breakdown.bubble + a.breakdown.pp_exposed == Approx(3 * slot).epsilon(0.05));
  CHECK(a.bubble_fraction_closed_form == Approx(3.0 / 8));
}

TEST_CASE("interleaved pipeline: bubble shrinks by the number of chunks") {
  Fixture f;
  const ModelSpec m = uniform_model();
  // Interleaved 1F1B: (m + (p − 1)/v) slots.
  const StepResult a = run(f, m, 4, 2, 8);
  const StepResult b = run(f, m, 4, 2, 32);
  const double slot = (b.step_time_s - a.step_time_s) / 24.0;
  CHECK(a.step_time_s == Approx((8 + 3.0 / 2) * slot + a.breakdown.optimizer).epsilon(0.03));
  // And it is faster than 1F1B with the same micro-batches.
  CHECK(a.step_time_s < run(f, m, 4, 1, 8).step_time_s);
}

TEST_CASE("same input gives the same step, trace included") {
  Fixture f;
  StepInput in;
  in.model = uniform_model();
  in.par.tp = 2;
  in.par.pp = 2;
  in.par.dp = 2;
  in.par.seq_len = 2048;
  in.par.global_batch = 8;
  in.want_trace = true;
  const StepResult a = simulate_step(in, f.topo, f.cp, f.compute);
  const StepResult b = simulate_step(in, f.topo, f.cp, f.compute);
  CHECK(a.step_time_s == b.step_time_s);
  REQUIRE(a.trace.size() == b.trace.size());
  for (size_t i = 0; i < a.trace.size(); ++i) {
    CHECK(a.trace[i].start_us == b.trace[i].start_us);
    CHECK(a.trace[i].dur_us == b.trace[i].dur_us);
  }
}

TEST_CASE("symmetry mode matches every-rank simulation while ranks are identical") {
  Fixture f;
  StepInput in;
  in.model = uniform_model();
  in.par.tp = 2;
  in.par.pp = 2;
  in.par.dp = 2;
  in.par.seq_len = 2048;
  in.par.global_batch = 8;
  const StepResult all = simulate_step(in, f.topo, f.cp, f.compute);
  in.symmetry = true;
  const StepResult sym = simulate_step(in, f.topo, f.cp, f.compute);
  CHECK(sym.units_simulated * 2 == all.units_simulated);
  CHECK(sym.step_time_s == Approx(all.step_time_s).epsilon(1e-9));
  // A slow GPU breaks the symmetry: the mode is refused and every rank runs.
  in.gpu_speed.assign(8, 1.0);
  in.gpu_speed[5] = 0.5;
  const StepResult slow = simulate_step(in, f.topo, f.cp, f.compute);
  CHECK(slow.units_simulated == all.units_simulated);
  CHECK(slow.step_time_s > all.step_time_s * 1.2);
}

TEST_CASE("a GPU at half speed slows every synchronous rank") {
  Fixture f;
  StepInput in;
  in.model = uniform_model();
  in.par.dp = 8;
  in.par.seq_len = 2048;
  in.par.global_batch = 8;
  const double base = simulate_step(in, f.topo, f.cp, f.compute).step_time_s;
  in.gpu_speed.assign(8, 1.0);
  in.gpu_speed[3] = 0.5;
  const StepResult slow = simulate_step(in, f.topo, f.cp, f.compute);
  // Compute of the slow rank doubles; data-parallel ranks wait for it at the gradient reduction.
  CHECK(slow.step_time_s > base * 1.6);
  CHECK(slow.step_time_s < base * 2.1);
}

TEST_CASE("invalid parallel configurations are input errors with the JSON pointer") {
  const ModelSpec m = zoo("llama3-8b");  // 32 heads, 8 KV heads, 32 layers
  ParallelConfig p;
  p.seq_len = 4096;
  p.global_batch = 8;
  p.tp = 3;
  p.dp = 1;
  try {
    check_parallel_config(m, p, 3, 8, "s.json", "/workload");
    FAIL("expected an error");
  } catch (const InputError& e) {
    CHECK(e.pointer() == "/workload/parallelism/tp");
  }
  p.tp = 1;
  p.pp = 64;  // more stages than layers
  p.dp = 1;
  CHECK_THROWS_AS(check_parallel_config(m, p, 64, 8, "s.json", "/workload"), InputError);
  p.pp = 2;
  p.dp = 3;  // world mismatch
  try {
    check_parallel_config(m, p, 8, 8, "s.json", "/workload");
    FAIL("expected an error");
  } catch (const InputError& e) {
    CHECK(e.pointer() == "/workload/parallelism/dp");
  }
  p.dp = 4;
  p.global_batch = 6;  // not a multiple of micro_batch·dp
  try {
    check_parallel_config(m, p, 8, 8, "s.json", "/workload");
    FAIL("expected an error");
  } catch (const InputError& e) {
    CHECK(e.pointer() == "/workload/batch/global");
  }
}

TEST_CASE("EP dispatch through a library: the dispatch model's closed form per call") {
  // DeepSeek-V3 cut to 5 layers (3 dense + 2 MoE), EP 8 inside one DGX-B200, BF16 everywhere,
  // one micro-batch of 16K tokens per rank: 2 MoE layers × (dispatch + combine) × (forward +
  // backward) = 8 calls, all exposed. A library sends one copy to each other GPU holding one of
  // a token's experts: p = 1 − C(224,8)/C(256,8) = 0.66183 of the 8 ranks per token (32 of 256
  // experts each). Per call (sim/coll/dispatch.h, parameters of dispatch_params):
  //   DeepEP: t_fixed + max(T_sm, T_nvl), T_sm = 8·16384·p·(c_tok + 14336 B / r_sm) / 20 SMs,
  //   T_nvl = 7·16384·p·14336 B / (900 GB/s · η_nvl): here the SMs bind (2.87 vs 1.81 ms);
  //   nvlink-one-sided: 18 us + T_nvl at its η_nvl (no SM limit).
  Fixture f;
  StepInput in;
  in.model = zoo("deepseek-v3");
  in.model.layers = 5;
  in.model.mtp_layers = 0;
  in.par.ep = 8;
  in.par.dp = 8;
  in.par.seq_len = 16384;
  in.par.global_batch = 8;
  in.par.precision = PrecisionRecipe::kBf16;
  const StepResult a2a = simulate_step(in, f.topo, f.cp, f.compute);
  in.fw.moe_dispatcher = MoeDispatcher::kDeepEp;
  const StepResult deepep = simulate_step(in, f.topo, f.cp, f.compute);
  in.fw.moe_dispatcher = MoeDispatcher::kNvlinkOneSided;
  const StepResult one_sided = simulate_step(in, f.topo, f.cp, f.compute);
  in.fw.moe_dispatcher = MoeDispatcher::kDeepEp;
  const double p = 0.6618315000, copy = 14336;
  const DispatchParams& dp = dispatch_params(DispatchLibrary::kDeepEp);
  const DispatchParams& os = dispatch_params(DispatchLibrary::kNvlinkOneSided);
  const double sm = 8 * 16384 * p * (dp.c_tok_us * 1e-6 + copy / (dp.r_sm_gbps * 1e9)) / 20;
  const double nvl = 7 * 16384 * p * copy / 900e9;
  const double t_deepep = dp.fixed_dispatch.seconds() + std::max(sm, nvl / dp.eta_nvl);
  const double t_one_sided = os.fixed_dispatch.seconds() + nvl / os.eta_nvl;
  REQUIRE(a2a.breakdown.ep_exposed > 0);
  CHECK(deepep.breakdown.ep_exposed == Approx(8 * t_deepep).epsilon(0.01));
  CHECK(one_sided.breakdown.ep_exposed == Approx(8 * t_one_sided).epsilon(0.01));
  // The EP collective time the report gives is the calls' own (not the NCCL all-to-all of the
  // same copies): all exposed here, so equal to ep_exposed.
  CHECK(deepep.collective_time_s.at("ep") == Approx(8 * t_deepep).epsilon(0.01));
  CHECK(one_sided.collective_time_s.at("ep") == Approx(8 * t_one_sided).epsilon(0.01));
  // Overlapping the all-to-alls with the other micro-batch's compute only hides time; the calls
  // take as long.
  in.fw.ep_comm_overlap = true;
  const StepResult overlap = simulate_step(in, f.topo, f.cp, f.compute);
  CHECK(overlap.breakdown.ep_exposed < deepep.breakdown.ep_exposed);
  CHECK(overlap.step_time_s < deepep.step_time_s);
  CHECK(overlap.collective_time_s.at("ep") == Approx(deepep.collective_time_s.at("ep")));
}
