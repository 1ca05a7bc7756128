// framework.release (calibration/releases.json, scenario/release_loader.h): a release's switches
// against the recipe values they cite, written out by hand from the recipe files; the precedence
// of explicit framework keys; validate's container version → release mapping; bad names.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>

#include "core/error.h"
#include "scenario/release_loader.h"
#include "scenario/scenario.h"
#include "support/fixtures.h"
#include "validate/validate.h"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {

std::string value(const ReleaseRecipe& r, const char* name) {
  const ReleaseSwitch* s = r.find(name);
  return s ? s->value : "(unset)";
}

ParallelConfig par(PrecisionRecipe precision, int pp = 1, int vp = 1, int ep = 8) {
  ParallelConfig p;
  p.precision = precision;
  p.pp = pp;
  p.vp = vp;
  p.ep = ep;
  return p;
}

// `release`'s switches for `model` on `gpu` at layout `p`, from the repository's releases.json.
ReleaseRecipe recipe(const char* release, const char* model, const char* gpu,
                     const ParallelConfig& p) {
  return resolve_release(release, model, gpu, p, kRoot, "t", "/x");
}

ReleaseRecipe qwen_gb300(const char* release) {
  return recipe(release, "qwen3-30b-a3b", "GB300", par(PrecisionRecipe::kMxfp8));
}

// Qwen3-30B-A3B on 8 GB300 (2 trays of the NVL72 rack), MBS 8, MXFP8, with these framework keys.
std::string qwen_scenario(const std::string& framework) {
  return R"({"name": "q", "cluster": {"system": "dgx-gb300-nvl72", "count": 1},
    "workload": {"type": "training", "model": "qwen3-30b-a3b", "gpus": 8,
    "parallelism": {"ep": 8}, "precision": "mxfp8",
    "batch": {"global": 512, "micro": 8, "seq_len": 4096},
    "framework": )" +
         framework + "}}";
}

}  // namespace

TEST_CASE("release switch table: Qwen3-30B-A3B MXFP8 on GB300, 26.04.01 vs 26.06 vs 26.08") {
  // Megatron-Bridge v0.4.2 scripts/performance/configs/qwen/qwen3_workload_base_configs.py:
  // QWEN3_30B_A3B_PRETRAIN_CONFIG_GB300_FP8_MX_V1 = ..._FP8_CS_V1: micro_batch_size=8,
  // moe_flex_dispatcher_backend="hybridep", cuda_graph_impl="transformer_engine",
  // cuda_graph_scope=["moe_router", "moe_preprocess"]; set_qwen3_common_configs:
  // moe_router_fusion = True; CommOverlapConfig(tp_comm_overlap=True).
  const ReleaseRecipe a = qwen_gb300("nemo-26.04.01");
  CHECK(value(a, "moe_dispatcher") == "flex");
  CHECK(value(a, "moe_flex_backend") == "hybridep");
  CHECK(value(a, "cuda_graphs") == "scopes");
  CHECK(value(a, "cuda_graph_scopes") == "moe_router+moe_preprocess");
  CHECK(value(a, "ep_comm_overlap") == "false");
  CHECK(value(a, "moe_router_fusion") == "true");
  CHECK(value(a, "tp_comm_overlap") == "true");
  CHECK(value(a, "fused_grouped_mlp") == "(unset)");
  // v0.5.0, same file L358-L365: moe_a2a_overlap=True, cuda_graph_impl="full_iteration",
  // cuda_graph_scope=[], cutedsl_fused_grouped_mlp=True, fp8_dot_product_attention=True.
  const ReleaseRecipe b = qwen_gb300("nemo-26.06");
  CHECK(value(b, "cuda_graphs") == "full_iteration");
  CHECK(value(b, "cuda_graph_scopes") == "none");
  CHECK(value(b, "ep_comm_overlap") == "true");
  CHECK(value(b, "fused_grouped_mlp") == "true");
  CHECK(value(b, "fp8_attention") == "true");
  CHECK(value(b, "moe_flex_backend") == "hybridep");
  // v0.6.0 perf_recipes/qwen/common.py _enable_hybridep_full_iteration_mxfp8: full_iteration,
  // overlap_moe_expert_parallel_comm=True, use_transformer_engine_op_fuser=True.
  const ReleaseRecipe c = qwen_gb300("nemo-26.08");
  CHECK(value(c, "cuda_graphs") == "full_iteration");
  CHECK(value(c, "ep_comm_overlap") == "true");
  CHECK(value(c, "te_op_fuser") == "true");
  CHECK(value(c, "fused_grouped_mlp") == "(unset)");
  // Every switch carries the citation of the rule that set it.
  for (const ReleaseSwitch& s : b.switches)
    CHECK(s.source.find("https://github.com/") == 0);
  CHECK(b.find("ep_comm_overlap")->source.find("v0.5.0/scripts/performance/configs/qwen/") !=
        std::string::npos);
}

TEST_CASE("release switch table: the same release differs by GPU and precision as the recipes") {
  // v0.5.0: the GB300 BF16 recipe keeps the TE-scoped graphs; only MXFP8 went full-iteration.
  const ReleaseRecipe bf16 =
      recipe("nemo-26.06", "qwen3-30b-a3b", "GB300", par(PrecisionRecipe::kBf16));
  CHECK(value(bf16, "cuda_graphs") == "scopes");
  CHECK(value(bf16, "ep_comm_overlap") == "false");
  // v0.3.0 QWEN3_30B_A3B_PRETRAIN_CONFIG_B200_*_V1: no flex backend (alltoall), MBS default.
  const ReleaseRecipe b200 =
      recipe("nemo-26.02", "qwen3-30b-a3b", "B200", par(PrecisionRecipe::kMxfp8));
  CHECK(value(b200, "moe_dispatcher") == "alltoall");
  // Qwen3-30B-A3B on H100: v0.3.0 QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_FP8_CS_V1 is DeepEP with
  // moe_a2a_overlap; v0.3.1's (Megatron-Bridge PR 2477, commit f29a269f8) is HybridEP without it.
  const ReleaseRecipe h100_2602 =
      recipe("nemo-26.02", "qwen3-30b-a3b", "H100", par(PrecisionRecipe::kFp8Current, 2, 12));
  CHECK(value(h100_2602, "moe_flex_backend") == "deepep");
  CHECK(value(h100_2602, "ep_comm_overlap") == "true");
  const ReleaseRecipe h100_260201 =
      recipe("nemo-26.02.01", "qwen3-30b-a3b", "H100", par(PrecisionRecipe::kFp8Current, 2, 12));
  CHECK(value(h100_260201, "moe_dispatcher") == "flex");
  CHECK(value(h100_260201, "moe_flex_backend") == "hybridep");
  CHECK(value(h100_260201, "ep_comm_overlap") == "false");
  CHECK(value(h100_260201, "cuda_graphs") == "none");
  // v0.1.0rc3 run_script.py: DeepSeek-V3 with DeepEP and A2A_1F1B on H100 only.
  const ReleaseRecipe h100 =
      recipe("nemo-25.09", "deepseek-v3", "H100", par(PrecisionRecipe::kFp8Current));
  CHECK(value(h100, "moe_flex_backend") == "deepep");
  CHECK(value(h100, "ep_comm_overlap") == "true");
  CHECK(value(h100, "recompute_modules") == "mla_up_proj+mlp");
  CHECK(value(h100, "overlap_grad_reduce") == "false");
  const ReleaseRecipe gb200 =
      recipe("nemo-25.09", "deepseek-v3", "GB200", par(PrecisionRecipe::kFp8Current));
  CHECK(value(gb200, "moe_dispatcher") == "alltoall");
  CHECK(value(gb200, "recompute_modules") == "mla_up_proj+mlp+moe_act");
  // Recipe variants by layout: v0.4.2 DEEPSEEK_V3_PRETRAIN_CONFIG_B200_FP8_MX_V2 (PP 8, VP 2,
  // EP 32): deepep, moe_a2a_overlap, recompute mla_up_proj + mlp; the PP 16 / EP 8 variant
  // (_V1) keeps hybridep and recompute mla_up_proj.
  const ReleaseRecipe v2 =
      recipe("nemo-26.04.01", "deepseek-v3", "B200", par(PrecisionRecipe::kMxfp8, 8, 2, 32));
  CHECK(value(v2, "moe_flex_backend") == "deepep");
  CHECK(value(v2, "ep_comm_overlap") == "true");
  CHECK(value(v2, "recompute_modules") == "mla_up_proj+mlp");
  const ReleaseRecipe v1 =
      recipe("nemo-26.04.01", "deepseek-v3", "B200", par(PrecisionRecipe::kMxfp8, 16, 1, 8));
  CHECK(value(v1, "moe_flex_backend") == "hybridep");
  CHECK(value(v1, "ep_comm_overlap") == "false");
  CHECK(value(v1, "recompute_modules") == "mla_up_proj");
  // A dense model gets only the release-wide switches.
  const ReleaseRecipe llama =
      recipe("nemo-26.04", "llama3-70b", "GB300", par(PrecisionRecipe::kMxfp8));
  CHECK(value(llama, "tp_comm_overlap") == "true");
  CHECK(llama.find("cuda_graphs") == nullptr);
}

TEST_CASE("framework.release sets the modelled switches and explicit keys override them") {
  Scenario s =
      parse_scenario(qwen_scenario(R"({"release": "nemo-26.06"})"), "s.json", load_options());
  const TrainingWorkload& t = *s.training;
  CHECK(t.release == "nemo-26.06");
  // v0.4.2 QWEN3_30B_A3B GB300: the flex dispatcher with the HybridEP backend, at the 32 SMs
  // the performance scripts give it (overrides.py: moe_hybridep_num_sms = 32).
  CHECK(t.fw.moe_dispatcher == MoeDispatcher::kHybridEp);
  CHECK(t.fw.moe_dispatcher_sms == 32);
  CHECK(t.fw.ep_comm_overlap);
  CHECK(t.fw.tp_comm_overlap);
  // v0.5.0 QWEN3_30B_A3B_PRETRAIN_CONFIG_GB300_FP8_MX_V1: cuda_graph_impl="full_iteration".
  CHECK(t.fw.cuda_graphs == CudaGraphs::kFullIteration);
  // Recorded, not yet modelled, each named in the notes the report lists as warnings.
  bool fuser = false, graphs_note = false;
  for (const std::string& n : t.release_notes) {
    fuser |= n.find("fused_grouped_mlp=true recorded, not yet modelled") != std::string::npos;
    graphs_note |= n.find("cuda_graphs") != std::string::npos;
  }
  CHECK(fuser);
  CHECK_FALSE(graphs_note);
  // An explicit key wins over the release.
  s = parse_scenario(
      qwen_scenario(R"({"release": "nemo-26.06", "ep_comm_overlap": false, "moe_dispatcher":
      "alltoall"})"),
      "s.json", load_options());
  CHECK_FALSE(s.training->fw.ep_comm_overlap);
  CHECK(s.training->fw.moe_dispatcher == MoeDispatcher::kAllToAll);
  // ... and the release's full-iteration graphs cannot contain the alltoall dispatcher's
  // token-count sync: not applied, with a note.
  CHECK(s.training->fw.cuda_graphs == CudaGraphs::kNone);
  bool dropped = false;
  for (const std::string& n : s.training->release_notes)
    dropped |= n.find("cuda_graphs=full_iteration not applied") != std::string::npos;
  CHECK(dropped);
  // Without a release: the defaults, whatever the order of keys.
  s = parse_scenario(qwen_scenario("{}"), "s.json", load_options());
  CHECK_FALSE(s.training->fw.ep_comm_overlap);
  CHECK(s.training->fw.moe_dispatcher == MoeDispatcher::kAllToAll);
  CHECK(s.training->release_notes.empty());
}

TEST_CASE(
    "framework.release applies its recipe's memory options, and framework.memory replaces them") {
  // Megatron-Bridge's performance recipes reduce gradients in bf16 and use Transformer Engine's
  // cross entropy (workload/memory.h megatron_bridge_perf_options), and MXFP8 keeps its weights
  // once with the parameter gather (bf16_with_mxfp8_mixed: fp8_param_gather = True): validate's
  // options for such a row.
  Scenario s =
      parse_scenario(qwen_scenario(R"({"release": "nemo-26.06"})"), "s.json", load_options());
  const MemoryOptions& m = s.training->fw.memory;
  CHECK(m.grad_bytes == 2);
  CHECK(m.cross_entropy == CrossEntropyImpl::kTe);
  CHECK(m.fp8_param_gather);
  CHECK(m.non_tn_fp8_gemm);  // GB300: Blackwell
  // Without a release, fleetsim's defaults: fp32 main gradients, no parameter gather.
  s = parse_scenario(qwen_scenario("{}"), "s.json", load_options());
  CHECK(s.training->fw.memory.grad_bytes == 4);
  CHECK_FALSE(s.training->fw.memory.fp8_param_gather);
  // An explicit framework.memory section replaces the release's options, whatever the key order.
  s = parse_scenario(
      qwen_scenario(R"({"memory": {"main_grads": "fp32"}, "release": "nemo-26.06"})"), "s.json",
      load_options());
  CHECK(s.training->fw.memory.grad_bytes == 4);
  CHECK_FALSE(s.training->fw.memory.fp8_param_gather);
}

TEST_CASE("framework.release: CUDA-graph scopes as the recipes cite them") {
  // v0.4.2 QWEN3_30B_A3B_PRETRAIN_CONFIG_GB300_FP8_MX_V1: cuda_graph_impl="transformer_engine",
  // cuda_graph_scope=["moe_router", "moe_preprocess"] (no attn).
  Scenario s =
      parse_scenario(qwen_scenario(R"({"release": "nemo-26.04.01"})"), "s.json", load_options());
  CHECK(s.training->fw.cuda_graphs == CudaGraphs::kScopes);
  CHECK(s.training->fw.cuda_graph_scopes == (kGraphMoeRouter | kGraphMoePreprocess));
  // An explicit "scopes" without a list: attn + moe_router + moe_preprocess; with a list, it.
  s = parse_scenario(qwen_scenario(R"({"release": "nemo-26.04.01", "cuda_graphs": "scopes"})"),
                     "s.json", load_options());
  CHECK(s.training->fw.cuda_graph_scopes == kDefaultGraphScopes);
  s = parse_scenario(
      qwen_scenario(R"({"cuda_graphs": "scopes", "cuda_graph_scopes": ["attn", "mamba"]})"),
      "s.json", load_options());
  CHECK(s.training->fw.cuda_graph_scopes == (kGraphAttn | kGraphMamba));
  std::string msg;
  try {
    parse_scenario(qwen_scenario(R"({"cuda_graphs": "scopes", "cuda_graph_scopes": ["moe"]})"),
                   "s.json", load_options());
  } catch (const InputError& e) {
    msg = e.what();
  }
  CHECK(msg.find("s.json:/workload/framework/cuda_graph_scopes/0: expected one of 'attn'") == 0);
  msg.clear();
  try {
    parse_scenario(qwen_scenario(R"({"cuda_graph_scopes": ["attn"]})"), "s.json", load_options());
  } catch (const InputError& e) {
    msg = e.what();
  }
  CHECK(msg.find("cuda_graph_scopes apply to cuda_graphs \"scopes\" only") != std::string::npos);
  // v0.1.0rc3 qwen3_30b_a3b_llm_pretrain.yaml (b200): cuda_graphs: true, Megatron-Core's
  // per-layer ("local") graphs: every scope fleetsim models, with a note saying so.
  const ReleaseRecipe r =
      recipe("nemo-25.09", "qwen3-30b-a3b", "B200", par(PrecisionRecipe::kBf16));
  CHECK(value(r, "cuda_graphs") == "local");
}

TEST_CASE("framework.release: an unknown name is an input error with the pointer and the names") {
  std::string msg;
  try {
    parse_scenario(qwen_scenario(R"({"release": "nemo-26.07"})"), "s.json", load_options());
  } catch (const InputError& e) {
    msg = e.what();
  }
  CHECK(msg.find("s.json:/workload/framework/release: unknown release 'nemo-26.07'") !=
        std::string::npos);
  CHECK(msg.find("known: nemo-24.03.01, nemo-24.07,") != std::string::npos);
  CHECK(msg.find("nemo-26.08") != std::string::npos);
}

TEST_CASE("release stacks: NeMo 24.07's fine-tuning rows ran NeMo-Framework-Launcher") {
  // calibration/releases.json: nemo-24.07's finetune_stack (the launcher's examples/peft/llama
  // scripts); a release without one answers its stack for fine-tuning too.
  CHECK(release_stack("nemo-24.07", kRoot) == "NeMo 2.0");
  CHECK(release_stack("nemo-24.07", kRoot, /*fine_tuning=*/true) ==
        "NeMo-Framework-Launcher 24.07");
  CHECK(release_stack("nemo-26.06", kRoot, /*fine_tuning=*/true) ==
        release_stack("nemo-26.06", kRoot));
  CHECK(release_stack("nemo-26.06", kRoot).rfind("Megatron-Bridge ", 0) == 0);
  CHECK(release_stack("nemo-99.99", kRoot, true).empty());
}

TEST_CASE("validate: the row's container version picks the release") {
  CHECK(release_for_version("26.08 NeMo container", kRoot) == "nemo-26.08");
  CHECK(release_for_version("26.04.01 NeMo container", kRoot) == "nemo-26.04.01");
  CHECK(release_for_version("NeMo 24.07 container (final revision of page)", kRoot) ==
        "nemo-24.07");
  CHECK(release_for_version("NeMo docs performance_long_sequence.md (NeMo25.04.rc2)", kRoot) ==
        "nemo-25.04");
  CHECK(release_for_version("my cluster, 2026", kRoot).empty());
  CHECK(release_for_version("", kRoot).empty());
  CHECK(default_release(kRoot) == "nemo-26.08");

  // Two rows of the same GB300 configuration: the release (and only it) differs, so the
  // predictions differ by the switches of 26.04.01 vs 26.06 alone; a row without a known version
  // runs the default release and says so.
  const std::string path = temp_path("release_rows.csv");
  {
    std::ofstream f(path);
    f << "source_url,source_version,hardware,num_gpus,model,precision,seq_len,gbs,mbs,tp,pp,cp,"
         "vp,ep,etp,dp,metric_name,metric_value,metric_unit,notes\n";
    const char* cfg =
        ",DGX-GB300,8,Qwen3_30B_a3B,MXFP8,4096,512,8,1,1,1,,8,,,tokens_per_sec_per_gpu,";
    f << "https://example.invalid/a,26.04.01 NeMo container" << cfg << "31744,tokens/s/GPU,x\n";
    f << "https://example.invalid/b,26.06 NeMo container" << cfg << "45275,tokens/s/GPU,x\n";
    f << "https://example.invalid/c,unknown build" << cfg << "45000,tokens/s/GPU,x\n";
  }
  const ValidationReport r = validate_reference(path, kRoot);
  std::remove(path.c_str());
  REQUIRE(r.rows.size() == 3);
  for (const auto& v : r.rows)
    REQUIRE_FALSE(v.skipped);
  CHECK(r.rows[0].release == "nemo-26.04.01");
  CHECK(r.rows[1].release == "nemo-26.06");
  CHECK(r.rows[2].release == "nemo-26.08");
  CHECK(r.rows[2].notes.find("release nemo-26.08 (default: source_version 'unknown build' names "
                             "no known release)") != std::string::npos);
  // 26.06 turns EP all-to-all overlap on (modelled): the step cannot get slower.
  CHECK(r.rows[1].predicted > r.rows[0].predicted);
  CHECK(r.rows[1].breakdown.ep_exposed_s < r.rows[0].breakdown.ep_exposed_s);
}

TEST_CASE("release switch table: Nemotron 3 Nano's MoE and CUDA-graph switches as its recipes") {
  // Megatron-Bridge v0.5.0 (nemo-26.06) nemotron_3_workload_base_configs.py
  // BASE_NEMOTRON_3_NANO_CONFIG: moe_flex_dispatcher_backend="hybridep", cuda_graph_impl=
  // "transformer_engine", cuda_graph_scope=["attn", "mamba", "moe_router", "moe_preprocess"];
  // recipes/nemotronh/nemotron_3_nano.py: moe_token_dispatcher_type="flex",
  // moe_router_fusion=False, moe_permute_fusion=True, moe_grouped_gemm=True.
  // NEMOTRON_3_NANO_PRETRAIN_CONFIG_H100_FP8_CS_V1: cuda_graph_scope=["mamba"] and recompute
  // moe + layernorm + core_attn + moe_act; H100_BF16_V1: ["attn", "mamba"], moe + layernorm.
  const ReleaseRecipe gb =
      recipe("nemo-26.06", "nemotron3-nano-30b-a3b", "GB300", par(PrecisionRecipe::kMxfp8));
  CHECK(value(gb, "moe_dispatcher") == "flex");
  CHECK(value(gb, "moe_flex_backend") == "hybridep");
  CHECK(value(gb, "moe_grouped_gemm") == "true");
  CHECK(value(gb, "moe_permute_fusion") == "true");
  CHECK(value(gb, "moe_router_fusion") == "false");
  CHECK(value(gb, "cuda_graphs") == "scopes");
  CHECK(value(gb, "cuda_graph_scopes") == "attn+mamba+moe_router+moe_preprocess");
  const ReleaseRecipe h8 =
      recipe("nemo-26.08", "nemotron3-nano-30b-a3b", "H100", par(PrecisionRecipe::kFp8Current));
  CHECK(value(h8, "moe_dispatcher") == "flex");
  CHECK(value(h8, "cuda_graph_scopes") == "mamba");
  CHECK(value(h8, "recompute_modules") == "moe+layernorm+core_attn+moe_act");
  const ReleaseRecipe hb =
      recipe("nemo-26.04", "nemotron3-nano-30b-a3b", "H100", par(PrecisionRecipe::kBf16));
  CHECK(value(hb, "cuda_graph_scopes") == "attn+mamba");
  CHECK(value(hb, "recompute_modules") == "moe+layernorm");
}

TEST_CASE(
    "release switch table: dropless runs force-balance the router, DeepSeek runs experimental") {
  // Megatron-Bridge v0.3.0 scripts/performance/utils/overrides.py L277-L284: a token-dropless run
  // sets moe_router_force_load_balancing = True (v0.2.0 helpers.py L229-L234); the 25.09 rows are
  // token-drop runs (v0.1.0rc3), without it.
  const ReleaseRecipe b200 =
      recipe("nemo-26.02", "qwen3-30b-a3b", "B200", par(PrecisionRecipe::kMxfp8));
  CHECK(value(b200, "moe_router_force_load_balancing") == "true");
  CHECK(value(b200, "megatron_experimental") == "(unset)");
  const ReleaseRecipe drop =
      recipe("nemo-25.09", "qwen3-30b-a3b", "B200", par(PrecisionRecipe::kMxfp8));
  CHECK(value(drop, "moe_router_force_load_balancing") == "(unset)");
  // DeepSeek's perf config sets cfg.dist.enable_megatron_core_experimental = True in every
  // release (v0.1.0rc3 yaml L33, v0.2.0 deepseek_llm_pretrain.py L38, ..., v0.6.0 recipes).
  for (const char* rel : {"nemo-25.09", "nemo-25.11", "nemo-26.06"}) {
    const ReleaseRecipe ds = recipe(rel, "deepseek-v3", "H100", par(PrecisionRecipe::kFp8Current));
    CHECK(value(ds, "megatron_experimental") == "true");
  }
}
