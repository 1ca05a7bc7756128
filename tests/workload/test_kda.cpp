// Kimi Delta Attention (Kimi Linear; gdn.kda): the mixer's parameters and FLOPs by hand, the
// zoo model against its published (rounded) counts, a step on DGX-H100 with the documented
// kernel fallback, the tensor-parallel refusal.
#include <catch2/catch.hpp>

#include <string>

#include "compute/compute_model.h"
#include "core/error.h"
#include "scenario/model_loader.h"
#include "scenario/scenario.h"
#include "support/fixtures.h"
#include "workload/memory.h"
#include "workload/model.h"
#include "workload/step.h"

using namespace fleetsim;
using namespace fleetsim::test;

TEST_CASE("Kimi Delta Attention mixer parameters and FLOPs by hand", "[kda]") {
  const ModelSpec m = zoo("kimi-linear-48b-a3b");
  REQUIRE(m.gdn.kda);
  // h 2304, 32 heads x 128 for q, k, v (4096 each). q_proj, k_proj, v_proj 3·2304·4096, f_a and
  // g_a 2·2304·128, b_proj 2304·32 = 28,975,104; f_b and g_b 128·4096 each = 1,048,576; three
  // convs (no bias) 12288·4 = 49,152; A_log 32, dt_bias 4096; o_norm 128; o_proj 4096·2304 =
  // 9,437,184.
  CHECK(gdn_params(m) == 28'975'104 + 1'048'576 + 49'152 + 32 + 4096 + 128 + 9'437'184);
  CHECK(layer_params(m, 0).attention == 39'514'272);
  // Megatron-form term: 2·[h·in_w + up + K·(2q + v) + 4·H·dv² + h·v].
  CHECK(megatron_gdn_flops_per_token(m) ==
        Approx(2.0 * (28'975'104.0 + 1'048'576 + 49'152 + 4.0 * 32 * 128 * 128 + 9'437'184)));
  // Executed: projections 2·(h·(in_w + v) + up), convs 2·K·12288, the chunk kernel (Kimi
  // report Eq. 13 per head: 6·d² + 3·C·d + C², C = 64).
  const double chunk = 32.0 * (6.0 * 128 * 128 + 3.0 * 64 * 128 + 64.0 * 64);
  CHECK(gdn_chunk_flops_per_token(m.gdn) == Approx(chunk));
  CHECK(gdn_forward_flops_per_token(m) ==
        Approx(2.0 * (2304.0 * (12576 + 4096) + 1'048'576) + 2.0 * 4 * 12288 + chunk));
}

TEST_CASE("Kimi Linear parameters by hand and against the published 48B / 3B", "[kda]") {
  const ModelSpec m = zoo("kimi-linear-48b-a3b");
  // 20 KDA blocks of 39,514,272 + norm 2304; 7 MLA blocks (q_proj 2304·32·192, kv_a 2304·576,
  // kv_b 512·32·256, o_proj 4096·2304, the kv latent norm 512, block norm 2304) of 29,117,184;
  // layer 1's dense SwiGLU 3·2304·9216 + 2304; 26 MoE blocks of router 2304·256, 256 + 1
  // shared experts of 3·2304·1024, norm 2304 = 1,819,609,344; embedding and untied head
  // 163840·2304 each, final norm 2304.
  const int64_t emb = 163840LL * 2304;
  const int64_t total = 20 * (39'514'272LL + 2304) + 7 * 29'117'184LL + 3 * 2304LL * 9216 + 2304 +
                        26 * 1'819'609'344LL + 2 * emb + 2304;
  CHECK(total_params(m) == total);
  CHECK(total_params(m) == 49'122'675'072);
  // The published 48B / 3B are the name's rounded figures: the 26 x 256 routed experts alone
  // are 47.11B. Counted: 49.12B (+2.3 %), and 3.48B active, 3.11B without the input
  // embedding (+3.6 %).
  CHECK(static_cast<double>(total_params(m)) == Approx(48e9).epsilon(0.03));
  const int64_t active = total - 26 * (248LL * 3 * 2304 * 1024);
  CHECK(active_params(m) == active);
  CHECK(static_cast<double>(active_params(m) - embedding_params(m)) == Approx(3e9).epsilon(0.04));
}

TEST_CASE("Kimi Linear step on DGX-H100: runs, reports the KDA kernel fallback, refuses TP",
          "[kda]") {
  const SystemSpec sys = load_system("dgx-h100", kRoot);
  const CollectiveParams cp = load_collective_params(sys, kRoot);
  const ComputeModel compute = ComputeModel::load(sys.gpu, kRoot);
  Topology topo{sys, sys.fabric, 1};
  StepInput in;
  in.model = zoo("kimi-linear-48b-a3b");
  in.par.tp = 1;
  in.par.dp = 8;
  in.par.ep = 8;
  in.par.seq_len = 4096;
  in.par.micro_batch = 1;
  in.par.global_batch = 64;
  const StepResult r = simulate_step(in, topo, cp, compute);
  CHECK(r.step_time_s > 0);
  int kda = 0;
  for (const auto& s : r.compute_sources)
    kda += s.find("Kimi Delta Attention: no chunk_kda rows") == 0 ? 1 : 0;
  CHECK(kda == 1);
  int warned = 0;
  for (const auto& w : r.warnings)
    warned += w.find("Kimi Delta Attention: no chunk_kda rows") == 0 ? 1 : 0;
  CHECK(warned == 1);
  ParallelConfig p = in.par;
  p.tp = 2;
  p.dp = 4;
  p.ep = 4;
  CHECK_THROWS_WITH(check_parallel_config(in.model, p, 8, 8, "s.json", ""),
                    Catch::Contains("tensor parallelism with Kimi Delta Attention layers"));
  // Activations: a KDA block keeps less than a GDN block of the same dims would (no repeat of
  // q, k; fp32 decay per channel instead of per head adds 4·4096 B). By hand, BF16, per token:
  // conv in 2·12288, L2-norm in 2·8192, kernel q k v 2·12288, decay 4·4096, β 2·32, f_a / g_a
  // outputs 2·256, solved A 2·32·64, gate 2·4096, o 2·4096, norm out 2·4096.
  ParallelConfig one = in.par;
  const int64_t per_token =
      2 * 12288 + 2 * 8192 + 2 * 12288 + 4 * 4096 + 2 * 32 + 2 * 256 + 2 * 32 * 64 + 3 * 2 * 4096;
  // Plus the block's pre-norm input (2·h) and the mixer's saved input (2·h).
  CHECK(layer_activation_bytes(in.model, 0, one, MemoryOptions{}, Recompute::kNone) ==
        (per_token + 4 * 2304) * 4096);
}

TEST_CASE("gdn.kda in a model file: one head count and dim, or an error naming it", "[kda]") {
  const std::string base = R"({"id": "toy", "layers": 2, "hidden": 256, "ffn": 512,
    "vocab": 1000, "max_seq_len": 4096, "mlp": "gated", "tied_embeddings": false,
    "attention": {"kind": "gqa", "heads": 4, "kv_heads": 2, "head_dim": 64},
    "blocks": "G-",
    "gdn": {"qk_heads": 4, "v_heads": VH, "qk_head_dim": 64, "v_head_dim": 64,
            "conv_kernel": 4, "chunk": 64, "kda": true}})";
  auto with = [&](const std::string& vh) {
    std::string t = base;
    return t.replace(t.find("VH"), 2, vh);
  };
  CHECK(parse(with("4"), "toy.json").gdn.kda);
  try {
    parse(with("8"), "toy.json");
    FAIL("kda with 8 value heads accepted");
  } catch (const InputError& e) {
    CHECK(e.pointer() == "/gdn/kda");
  }
}
