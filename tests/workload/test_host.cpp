// The host side of the step simulator (block_builder.h, replay.cpp): the max-plus host span of a
// segment against a per-kernel recursion, host-bound closed forms with and without CUDA graphs, a
// device-to-host sync, the launch count of a dense layer, the host-cost table and the host CPU
// class of the topologies.
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/rng.h"
#include "core/simulator.h"
#include "scenario/model_loader.h"
#include "scenario/scenario.h"
#include "support/fixtures.h"
#include "workload/internal/block_builder.h"
#include "workload/internal/replay.h"
#include "workload/layer_costs.h"
#include "workload/step.h"

using namespace fleetsim;
using namespace fleetsim::test;
using namespace fleetsim::step_internal;

namespace {
Time us(double x) {
  return Time::from_us(x);
}

// One chain item: host time, GPU time, scaled by the replay's factor or not (TP).
struct Item {
  int64_t h, t;
  bool scaled;
};

// The end of a chain issued by one host thread (free at `a`) onto one stream (free at `g`),
// kernel by kernel: a kernel starts when it is issued and the previous one has ended.
int64_t brute_force_end(const std::vector<Item>& chain, int64_t a, int64_t g, double s) {
  int64_t host = a, gpu = g;
  for (const Item& it : chain) {
    host += it.h;
    const int64_t t =
        it.scaled ? static_cast<int64_t>(std::llround(static_cast<double>(it.t) * s)) : it.t;
    gpu = std::max(gpu, host) + t;
  }
  return gpu;
}

FrameworkOptions no_host_costs() {
  FrameworkOptions fw;  // efficiency 1, every host cost zero
  return fw;
}

// The programme of one unit: the block's segments (as program.cpp emits them), then `tail`.
Stage stage_of(const Block& blk, const std::vector<Instr>& tail = {}) {
  Stage st;
  for (const Segment& sg : blk.segs) {
    Instr x{};
    x.op = Op::kCompute;
    x.a = sg.compute;
    x.b = sg.tp;
    x.h = sg.host;
    x.d = host_span(sg.span, 1.0);
    st.spans.push_back(sg.span);
    x.span = static_cast<int>(st.spans.size()) - 1;
    x.name = sg.name;
    st.prog.push_back(x);
    if (sg.d2h) {
      Instr y{};
      y.op = Op::kHostSync;
      y.a = Time::from_us(20);
      st.prog.push_back(y);
    }
  }
  for (const Instr& x : tail)
    st.prog.push_back(x);
  return st;
}

// Replays one unit (no parallelism) running `st`; returns the unit's accounting.
Engine::Unit replay(Stage st, double speed = 1.0) {
  const Geometry G{1, 1, 1, 1, 1, 1, 1, 1};
  std::vector<Stage> stages{std::move(st)};
  const MoeLoadTable moe;
  Engine e(G, stages, {0}, 1, 1, {speed}, Time::zero(), Time::zero(), false, &moe);
  Simulator sim;
  e.run(sim);
  return e.units()[0];
}
}  // namespace

TEST_CASE("host span: the max-plus envelope equals the kernel-by-kernel recursion") {
  Rng rng(17);
  for (int trial = 0; trial < 200; ++trial) {
    BlockBuilder b("seg", no_host_costs());
    std::vector<Item> chain;
    const int n = 1 + static_cast<int>(rng.uniform01() * 40);
    for (int i = 0; i < n; ++i) {
      // Host costs 0–30 µs and kernels 0–60 µs, a few host-only items and exposed TP pieces.
      const int64_t h = static_cast<int64_t>(rng.uniform01() * 30e6);
      const double kind = rng.uniform01();
      if (kind < 0.15) {
        b.host_item(Time::from_ps(h));
        chain.push_back({h, 0, true});
      } else if (kind < 0.25) {
        const int64_t t = static_cast<int64_t>(rng.uniform01() * 60e6);
        b.exposed(Time::from_ps(t));
        chain.push_back({0, t, false});
      } else {
        const int64_t t = static_cast<int64_t>(rng.uniform01() * 60e6);
        b.host_item(Time::from_ps(h));
        b.module_kernel(Time::from_ps(t));  // launch cost 0: all host time is in the item
        chain.push_back({h, t, true});
      }
    }
    const Block blk = b.finish();
    REQUIRE(blk.segs.size() == 1);
    const Segment& sg = blk.segs[0];
    int64_t H = 0;
    for (const Item& it : chain)
      H += it.h;
    CHECK(sg.host.ps() == H);
    CHECK(sg.span.size() <= chain.size());
    for (double s : {0.25, 0.7, 1.0, 1.3, 4.0}) {
      // With host and stream free at 0 the segment ends at D(s); with the host behind or ahead
      // of the stream at max(g + T(s), a + D(s)). Rounding: at most 1 ps per scaled kernel.
      const int64_t D = host_span(sg.span, s).ps();
      CHECK(std::abs(D - brute_force_end(chain, 0, 0, s)) <= n);
      for (int64_t a : {int64_t{0}, int64_t{500'000'000}}) {
        const int64_t g = 250'000'000;
        const int64_t T =
            static_cast<int64_t>(std::llround(static_cast<double>(sg.compute.ps()) * s)) +
            sg.tp.ps();
        CHECK(std::abs(std::max(g + T, a + D) - brute_force_end(chain, a, g, s)) <= 2 * n);
      }
    }
  }
}

TEST_CASE("host-bound segment: n kernels shorter than their launch take n·h, a graph n·t") {
  // n kernels of t = 4 µs, each launched by an eager op of h = 13 µs: the host issues kernel i
  // at i·h and the GPU runs it at once, so the segment ends at n·h + t and the GPU waits
  // n·h + t − n·t for launches.
  const int n = 50;
  FrameworkOptions fw;
  fw.host.op = us(13);
  fw.host.graph = us(2);
  BlockBuilder eager("eager", fw);
  for (int i = 0; i < n; ++i)
    eager.kernel(us(4));
  const Engine::Unit u = replay(stage_of(eager.finish()));
  CHECK(u.end == us(n * 13 + 4).ps());
  CHECK(u.t_compute == us(n * 4).ps());
  CHECK(u.t_host == us(n * 13 + 4 - n * 4).ps());

  // Captured in a CUDA graph: one op calling the replay (13 µs) and the graph launch (2 µs),
  // then the kernels back to back: n·t + 15 µs.
  fw.cuda_graphs = CudaGraphs::kScopes;
  BlockBuilder graphed("graphed", fw);
  graphed.begin_graph(kGraphAttn);
  for (int i = 0; i < n; ++i)
    graphed.kernel(us(4));
  graphed.end_graph();
  const Block gb = graphed.finish();
  CHECK(gb.launches == 0);
  CHECK(gb.graphs == 1);
  const Engine::Unit v = replay(stage_of(gb));
  CHECK(v.end == us(n * 4 + 15).ps());
  CHECK(v.t_host == us(15).ps());

  // Kernels longer than their launch: the host runs ahead and only the first launch shows.
  FrameworkOptions fw2;
  fw2.host.op = us(13);
  BlockBuilder long_kernels("long", fw2);
  for (int i = 0; i < n; ++i)
    long_kernels.kernel(us(40));
  const Block lb = long_kernels.finish();
  const Engine::Unit w = replay(stage_of(lb));
  CHECK(w.end == us(13 + n * 40).ps());
  // A GPU at half speed doubles the kernels, not the host time (the span's scaled lines).
  const Engine::Unit slow = replay(stage_of(lb), 0.5);
  CHECK(slow.end == us(13 + n * 80).ps());
}

TEST_CASE("a device-to-host sync stops the host from running ahead") {
  // Segment A: 5 kernels of 100 µs at h = 10 µs (host done at 50 µs, GPU at 10 + 500 = 510 µs).
  // The sync: the host waits for the GPU (510 µs) plus the 20 µs round trip, 530 µs.
  // Segment B: 2 kernels of 100 µs: issued at 540 and 550 µs, the GPU ends at 540 + 200 = 740 µs,
  // against 710 µs without the sync: the sync exposes d2h + h = 30 µs.
  FrameworkOptions fw;
  fw.host.op = us(10);
  BlockBuilder b("layer", fw);
  for (int i = 0; i < 5; ++i)
    b.kernel(us(100));
  b.host_sync();
  for (int i = 0; i < 2; ++i)
    b.kernel(us(100));
  const Block blk = b.finish();
  REQUIRE(blk.segs.size() == 2);
  CHECK(blk.segs[0].d2h);
  const Engine::Unit u = replay(stage_of(blk));
  CHECK(u.end == us(740).ps());
  CHECK(u.t_host == us(10 + 30).ps());  // the first launch, then d2h + h after the sync
  CHECK(u.host == us(550).ps());

  BlockBuilder c("layer", fw);
  for (int i = 0; i < 7; ++i)
    c.kernel(us(100));
  CHECK(replay(stage_of(c.finish())).end == us(710).ps());
}

TEST_CASE("launch count of a dense decoder layer, eager and with TE graph scopes") {
  const ModelSpec m = zoo("llama3-8b");
  const ComputeModel compute = gpu_compute("dgx-h100");
  ParallelConfig p = one_gpu(4096);
  p.micro_batch = 1;
  p.precision = PrecisionRecipe::kBf16;
  FrameworkOptions fw;
  fw.host.op = us(13);
  fw.host.module = us(36);
  fw.host.launch = us(2.5);
  LayerCostModel eager(m, p, fw, compute, no_comm);
  // Forward (tp 1, BF16): input norm, QKV GEMM, the q reshape copy (GQA: 4 query heads per KV
  // group), RoPE on q and on k, attention, output projection, residual; pre-MLP norm, FC1,
  // SwiGLU, FC2, residual: 13 kernels, each launched by the host.
  const Block& f = eager.layer(0, false);
  CHECK(f.kernels == 13);
  CHECK(f.launches == 13);
  // Host time: 8 eager ops (norms, q copy, 2 RoPE, SwiGLU, residuals) and 5 module calls (QKV,
  // attention, projection, FC1, FC2), each with its first launch.
  Time H = Time::zero();
  for (const Segment& sg : f.segs)
    H += sg.host;
  CHECK(H == us(8 * 13 + 5 * 36));
  // Backward: each GEMM becomes dgrad + wgrad (one more launch per linear, 2.5 µs each), no q
  // copy but the q / k / v gradients' cat, and each norm's dgamma finalize and main_grad add:
  // 13 - 1 + 4 + 1 + 2 * 2 = 21.
  const Block& bwd = eager.layer(0, true);
  CHECK(bwd.kernels == 21);
  CHECK(bwd.launches == 21);
  // FP8 current scaling: each of the 4 linears (QKV, projection, FC1, FC2) quantises its input
  // (backward: its output gradient) first, 4 launches per quantise inside the module
  // (Float8CurrentScalingQuantizer::quantize_impl: zero-amax, amax, scale, cast): 16 more
  // launches each way, the host's extra 16 x 2.5 us.
  ParallelConfig cs = p;
  cs.precision = PrecisionRecipe::kFp8Current;
  LayerCostModel fp8(m, cs, fw, compute, no_comm);
  for (bool b : {false, true}) {
    const Block& q = fp8.layer(0, b);
    const Block& plain = eager.layer(0, b);
    CHECK(q.kernels == plain.kernels + 4 * 4);
    CHECK(q.launches == plain.launches + 4 * 4);
    Time hq = Time::zero(), hp = Time::zero();
    for (const Segment& sg : q.segs)
      hq += sg.host;
    for (const Segment& sg : plain.segs)
      hp += sg.host;
    CHECK(hq - hp == us(2.5) * 16);
  }
  fw.cuda_graphs = CudaGraphs::kScopes;
  LayerCostModel scoped(m, p, fw, compute, no_comm);
  // The "attn" scope captures the attention block's 8 kernels: one graph launch for them.
  const Block& g = scoped.layer(0, false);
  CHECK(g.kernels == 13);
  CHECK(g.launches == 5);
  CHECK(g.graphs == 1);
  fw.cuda_graphs = CudaGraphs::kFullIteration;
  LayerCostModel full(m, p, fw, compute, no_comm);
  CHECK(full.layer(0, false).launches == 0);
  // Sandwich norms (norms_per_layer 4: Gemma's post-attention and post-feedforward RMSNorms):
  // two more norm kernels forward (2 more eager ops of host time), and in backward each with its
  // dgamma finalize and main_grad add: 21 + 2 * 3 = 27. No GEMM changes.
  fw.cuda_graphs = CudaGraphs::kNone;
  ModelSpec sandwich = m;
  sandwich.norms_per_layer = 4;
  LayerCostModel eager4(sandwich, p, fw, compute, no_comm);
  const Block& f4 = eager4.layer(0, false);
  CHECK(f4.kernels == 15);
  CHECK(f4.flops == f.flops);
  Time H4 = Time::zero();
  for (const Segment& sg : f4.segs)
    H4 += sg.host;
  CHECK(H4 - H == us(2 * 13));
  CHECK(eager4.layer(0, true).kernels == 27);
}

TEST_CASE("host CPU class of the topologies and the host-cost table") {
  CHECK(load_system("dgx-h100", kRoot).node.host_cpu_class == "x86");
  CHECK(load_system("dgx-b200", kRoot).node.host_cpu_class == "x86");
  CHECK(load_system("dgx-gb200-nvl72", kRoot).node.host_cpu_class == "grace");
  CHECK(load_system("dgx-gb300-nvl72", kRoot).node.host_cpu_class == "grace");
  const FrameworkOptions fw = load_framework_defaults(kRoot);
  REQUIRE(fw.host_by_cpu.count("x86") == 1);
  REQUIRE(fw.host_by_cpu.count("grace") == 1);
  // TransformerEngine issue 2053: torch.nn.Linear forward host time, Xeon 8480C vs Grace.
  CHECK(fw.host_by_cpu.at("x86").op == us(13.48));
  CHECK(fw.host_by_cpu.at("grace").op == us(37.08));
  CHECK(fw.host_by_cpu.at("grace").module == us(99.66));
  // TransformerEngine PR 3134: (0.184 - 0.069 ms) / 8 experts of host work per expert and call.
  CHECK(fw.host_by_cpu.at("x86").expert == us(14.38));
}

TEST_CASE("a topology without host_cpu_class runs with x86 host costs and says so") {
  SystemSpec sys = load_system("dgx-gb200-nvl72", kRoot);
  const CollectiveParams cp = load_collective_params(sys, kRoot);
  const ComputeModel compute = ComputeModel::load(sys.gpu, kRoot);
  StepInput in;
  in.model = zoo("llama3-8b");
  in.model.layers = 2;
  in.par.seq_len = 2048;
  in.par.micro_batch = 1;
  in.par.global_batch = 1;
  in.par.precision = PrecisionRecipe::kBf16;
  in.fw = load_framework_defaults(kRoot);
  auto has = [](const std::vector<std::string>& v, const std::string& s) {
    for (const auto& x : v)
      if (x.find(s) != std::string::npos) return true;
    return false;
  };
  const Topology grace{sys, sys.fabric, sys.scale_up.domain_nodes};
  const StepResult r = simulate_step(in, grace, cp, compute);
  CHECK(has(r.compute_sources, "host costs: grace"));
  CHECK_FALSE(has(r.warnings, "host_cpu_class"));
  sys.node.host_cpu_class.clear();
  const Topology unknown{sys, sys.fabric, sys.scale_up.domain_nodes};
  const StepResult u = simulate_step(in, unknown, cp, compute);
  CHECK(has(u.compute_sources, "host costs: x86"));
  CHECK(has(u.compute_sources, "no node.host_cpu_class"));
  CHECK(has(u.warnings, "does not give node.host_cpu_class"));
  // Grace issues the same launches more slowly: the host span is longer, never shorter.
  CHECK(r.breakdown.host_exposed >= u.breakdown.host_exposed);
}

TEST_CASE("host-cost table: bad rows are input errors naming the line") {
  const std::filesystem::path dir = temp_path("host_costs");
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "host-costs.csv").string();
  auto write = [&](const std::string& body) {
    std::ofstream(path) << "host_cpu_class,framework,cost,value_us,basis,source_url,notes\n"
                        << body;
  };
  write("x86,megatron-te,op,abc,measured,https://x,\n");
  try {
    load_host_costs(path);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.pointer() == "line 2");
    CHECK(std::string(e.message()).find("value_us") != std::string::npos);
  }
  write("x86,megatron-te,op,1,measured,https://x,\n");
  CHECK_THROWS_AS(load_host_costs(path), InputError);  // the other six costs are missing
  write("arm,megatron-te,op,1,measured,https://x,\n");
  CHECK_THROWS_AS(load_host_costs(path), InputError);
  std::filesystem::remove_all(dir);
}
