// LatentMoE (Nemotron 3 Super / Ultra; Megatron-Core moe_latent_size): parameters and FLOPs of
// the zoo models by hand and against the published counts, the MoE layer's kernels and EP
// payload at the latent width, the activation memory of the latent copies, the loader's key.
#include <catch2/catch.hpp>

#include <string>

#include "compute/compute_model.h"
#include "core/error.h"
#include "scenario/model_loader.h"
#include "scenario/scenario.h"
#include "support/fixtures.h"
#include "workload/layer_costs.h"
#include "workload/memory.h"
#include "workload/model.h"
#include "workload/step.h"

using namespace fleetsim;
using namespace fleetsim::test;

TEST_CASE("Nemotron 3 Super parameters by hand and against the published 120.6B / 12.7B",
          "[latent]") {
  const ModelSpec m = zoo("nemotron3-super-120b-a12b");
  REQUIRE(m.moe.latent == 1024);
  // Mamba block: in_proj 4096·(2·8192 + 2·8·128 + 128) = 76,021,760, conv 10240·4 + 10240,
  // A_log / D / dt_bias 3·128, gated norm 8192, out_proj 8192·4096, block norm 4096
  // = 109,640,064 (40 blocks). Attention block: 2·4096·4096 + 2·4096·256 + 4096 = 35,655,680 (8).
  // LatentMoE block: router 4096·512 and latent projections 2·4096·1024 = 10,485,760; 512
  // experts of 2·1024·2688 = 5,505,024; shared 2·4096·5376 = 44,040,192; norm 4096
  // = 2,873,102,336 (40). Embedding and untied head 131072·4096 each, final norm 4096.
  const int64_t mamba = 109'640'064, attn = 35'655'680, moe = 2'873'102'336;
  const int64_t emb = 131072LL * 4096;
  CHECK(layer_params(m, 1).router == 10'485'760);
  CHECK(layer_params(m, 1).one_expert == 5'505'024);
  CHECK(total_params(m) == 40 * mamba + 8 * attn + 40 * moe + 2 * emb + 4096);
  CHECK(total_params(m) == 120'668'687'360);
  CHECK(static_cast<double>(total_params(m)) == Approx(120.6e9).epsilon(0.01));
  // Active: 22 of the 512 experts: a MoE block 10,485,760 + 22·5,505,024 + 44,040,192 + 4096.
  const int64_t moe_active = 10'485'760 + 22 * 5'505'024LL + 44'040'192 + 4096;
  CHECK(active_params(m) == 40 * mamba + 8 * attn + 40 * moe_active + 2 * emb + 4096);
  CHECK(static_cast<double>(active_params(m)) == Approx(12.7e9).epsilon(0.01));
  CHECK(static_cast<double>(active_params(m)) == Approx(m.published_active_params).epsilon(0.01));
}

TEST_CASE("Nemotron 3 Ultra parameters by hand and against the published 550B / 55B", "[latent]") {
  const ModelSpec m = zoo("nemotron3-ultra-550b-a55b");
  REQUIRE(m.moe.latent == 2048);
  // Mamba block (256 heads x 64, d 16384, state 128, 8 groups): in_proj 8192·(2·16384 + 2048 +
  // 256), conv 18432·5, 3·256, 16384, out_proj 16384·8192, norm 8192 = 421,645,056 (48).
  // Attention (64 q / 2 KV heads x 128): 2·8192·8192 + 2·8192·256 + 8192 = 138,420,224 (12).
  // LatentMoE: router 8192·512 + latent 2·8192·2048 = 37,748,736; experts 512·2·2048·5120;
  // shared 2·8192·10240; norm 8192 = 10,942,947,328 (48). Embedding + head 131072·8192 each.
  const int64_t emb = 131072LL * 8192;
  CHECK(total_params(m) ==
        48 * 421'645'056LL + 12 * 138'420'224LL + 48 * 10'942'947'328LL + 2 * emb + 8192);
  CHECK(static_cast<double>(total_params(m)) == Approx(550e9).epsilon(0.01));
  // Active per MoE block 37,748,736 + 22·20,971,520 + 167,772,160 + 8192 = 666,902,528. NVIDIA
  // counts active parameters without the input embedding (Nano's report: 3.2B, 3.6B with it):
  // 54.99B against the published 55B.
  const int64_t active =
      48 * 421'645'056LL + 12 * 138'420'224LL + 48 * 666'902'528LL + 2 * emb + 8192;
  CHECK(active_params(m) == active);
  CHECK(static_cast<double>(active_params(m) - embedding_params(m)) == Approx(55e9).epsilon(0.01));
}

TEST_CASE("LatentMoE FLOPs: routed experts at the latent width plus the two projections",
          "[latent]") {
  const ModelSpec m = zoo("nemotron3-super-120b-a12b");
  ModelSpec wide = m;
  wide.moe.latent = 0;  // the same experts on the hidden state, no projections
  // Per MoE layer, 6 FLOPs per weight: 22 experts of 2·2688 weights per input channel
  // (4096 - 1024 channels fewer), minus the projections 2·4096·1024. 40 MoE blocks and the 2
  // MTP modules (each one attention + one MoE layer) carry it.
  const double per = 6.0 * (22.0 * 2 * 2688 * (4096 - 1024) - 2.0 * 4096 * 1024);
  CHECK(model_flops_per_token(wide, 8192) - model_flops_per_token(m, 8192) == Approx(42 * per));
}

TEST_CASE("LatentMoE layer: two TE Linears more, EP all-to-all of latent-wide tokens", "[latent]") {
  const ComputeModel compute = gpu_compute("dgx-h100");
  const ModelSpec m = zoo("nemotron3-super-120b-a12b");
  REQUIRE(is_moe_layer(m, 1));
  ParallelConfig par;
  par.ep = 8;
  par.dp = 8;
  par.seq_len = 4096;
  par.micro_batch = 1;
  par.global_batch = 64;
  FrameworkOptions fw;
  fw.moe_grouped_gemm = true;
  fw.moe_permute_fusion = true;
  auto run = [&](const ModelSpec& model, bool bwd, double* a2a_bytes) {
    *a2a_bytes = 0;
    LayerCostModel lc(model, par, fw, compute, [&](Dim d, CollOp op, double bytes) {
      if (d == Dim::kEp && op == CollOp::kAllToAll) *a2a_bytes = bytes;
      return Time::from_us(10);
    });
    return lc.layer(1, bwd).kernels;
  };
  ModelSpec wide = m;
  wide.moe.latent = 0;
  double lat_bytes = 0, wide_bytes = 0;
  // BF16: forward fc1_latent_proj and fc2_latent_proj, one GEMM each; backward a dgrad and a
  // wgrad each.
  CHECK(run(m, false, &lat_bytes) - run(wide, false, &wide_bytes) == 2);
  // Each all-to-all carries the rank's 4096 tokens x top-22 copies of 1024 (not 4096) BF16.
  CHECK(lat_bytes == Approx(4096.0 * 22 * 1024 * 2));
  CHECK(wide_bytes == Approx(4096.0 * 22 * 4096 * 2));
  CHECK(run(m, true, &lat_bytes) - run(wide, true, &wide_bytes) == 4);
}

TEST_CASE("LatentMoE activations: latent-wide routed copies and fc2_latent_proj's input",
          "[latent]") {
  const ModelSpec m = zoo("nemotron3-super-120b-a12b");
  ModelSpec wide = m;
  wide.moe.latent = 0;
  ParallelConfig p;
  p.seq_len = 4096;
  p.micro_batch = 1;
  const MemoryOptions o;
  // BF16 (2 B per saved GEMM input): each of the 22 copies keeps its expert fc1 input 1024
  // wide instead of 4096; fc2_latent_proj keeps its 1024-wide input once per token.
  const int64_t per_token = 22 * 2 * (4096 - 1024) - 2 * 1024;
  CHECK(layer_activation_bytes(wide, 1, p, o, Recompute::kNone) -
            layer_activation_bytes(m, 1, p, o, Recompute::kNone) ==
        per_token * 4096);
}

TEST_CASE("moe.latent in a model file: a positive width, or an error naming it", "[latent]") {
  const std::string base = R"({"id": "toy", "layers": 2, "hidden": 256, "ffn": 512,
    "vocab": 1000, "max_seq_len": 4096, "mlp": "gated", "tied_embeddings": false,
    "attention": {"kind": "gqa", "heads": 4, "kv_heads": 2, "head_dim": 64},
    "moe": {"experts": 8, "top_k": 2, "expert_ffn": 128, "latent": LAT}})";
  auto with = [&](const std::string& lat) {
    std::string t = base;
    return t.replace(t.find("LAT"), 3, lat);
  };
  const ModelSpec ok = parse(with("64"), "toy.json");
  CHECK(ok.moe.latent == 64);
  // Router 256·8, projections 2·256·64, experts 8·3·64·128 (gated), per layer.
  CHECK(layer_params(ok, 0).router == 256 * 8 + 2 * 256 * 64);
  CHECK(layer_params(ok, 0).routed_experts == 8 * 3 * 64 * 128);
  try {
    parse(with("0"), "toy.json");
    FAIL("latent 0 accepted");
  } catch (const InputError& e) {
    CHECK(e.pointer() == "/moe/latent");
  }
}
