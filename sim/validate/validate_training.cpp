#include "validate/validate_training.h"

#include <cstdio>
#include <cstdlib>
#include <regex>

#include "core/error.h"
#include "scenario/model_loader.h"
#include "scenario/scenario.h"
#include "study/cluster.h"
#include "study/training_step.h"

namespace fleetsim {
namespace {

bool has(const std::string& s, const char* sub) {
  return s.find(sub) != std::string::npos;
}

std::string get(const std::map<std::string, std::string>& f, const char* k) {
  auto it = f.find(k);
  return it == f.end() ? "" : it->second;
}

// Empty cells mean "not used" (1) in the throughput tables.
bool int_or(const std::string& s, int dflt, int* out) {
  if (s.empty()) {
    *out = dflt;
    return true;
  }
  try {
    size_t pos = 0;
    const long v = std::stol(s, &pos);
    if (pos != s.size() || v < 1 || v > (1 << 24)) return false;
    *out = static_cast<int>(v);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

std::string system_for(const std::string& hw) {
  if (hw == "DGX-GB200") return "dgx-gb200-nvl72";
  if (hw == "DGX-B200") return "dgx-b200";
  if (hw == "DGX-H100") return "dgx-h100";
  if (hw == "DGX-GB300") return "dgx-gb300-nvl72";
  if (hw == "DGX-B300") return "dgx-b300";
  return "";
}

}  // namespace

bool predict_training_row(const std::map<std::string, std::string>& f, const std::string& data_dir,
                          const ValidateOptions& options, TrainingCache& cache, ValidationRow* v,
                          std::string* why) {
  const std::string notes = get(f, "notes");
  if (v->metric != "tokens_per_sec_per_gpu") {
    if (v->metric.rfind("model_tflops_per_sec_per_gpu", 0) == 0) {
      *why = "metric '" + v->metric +
             "' restates the tokens/s/GPU row of the same run through NeMo's FLOP formula "
             "(the formula is checked in tests/workload)";
    } else {
      *why = "metric '" + v->metric + "' is not the per-GPU token throughput validate compares";
    }
    return false;
  }
  std::smatch m;
  static const std::regex task_re(R"(task=([A-Za-z-]+))");
  if (std::regex_search(notes, m, task_re)) {
    const std::string task = m[1].str();
    if (task != "Pre-Training" && task != "pretrain") {
      *why = "task '" + task +
             "': fine-tuning (packed SQuAD sequences, frozen weights with LoRA) is not modelled";
      return false;
    }
  }
  v->system = system_for(v->hardware);
  if (v->system.empty()) {
    *why = "no fleetsim topology for hardware '" + v->hardware + "'";
    return false;
  }
  // Model: the name without the parenthesised variant, which selects options.
  std::string name = v->model;
  std::string variant;
  if (const auto p = name.find(" ("); p != std::string::npos) {
    variant = name.substr(p + 2, name.size() - p - 3);
    name = name.substr(0, p);
  }
  ModelSpec model;
  try {
    model = load_model(name, data_dir);
  } catch (const InputError& e) {
    *why = "no model definition: " + e.message();
    return false;
  }
  if (variant == "w/o MTP") model.mtp_layers = 0;
  if (model.benchmark_vocab > 0) model.vocab = model.benchmark_vocab;

  ParallelConfig p;
  int gbs = 0;
  const std::string gbs_s = get(f, "gbs");
  if (gbs_s.empty()) {
    *why = "global batch size not given";
    return false;
  }
  if (!int_or(gbs_s, 0, &gbs) || !int_or(get(f, "mbs"), 1, &p.micro_batch) ||
      !int_or(get(f, "seq_len"), 0, &p.seq_len) || !int_or(get(f, "tp"), 1, &p.tp) ||
      !int_or(get(f, "pp"), 1, &p.pp) || !int_or(get(f, "cp"), 1, &p.cp) ||
      !int_or(get(f, "vp"), 1, &p.vp) || !int_or(get(f, "ep"), 1, &p.ep) ||
      !int_or(get(f, "etp"), 1, &p.etp) || p.seq_len < 1) {
    *why = "a batch or parallel column is not a positive integer";
    return false;
  }
  p.global_batch = gbs;
  const int world = v->num_gpus;
  if (int64_t{p.tp} * p.pp * p.cp > world || world % (p.tp * p.pp * p.cp) != 0) {
    *why = "tp·pp·cp does not divide num_gpus";
    return false;
  }
  p.dp = world / (p.tp * p.pp * p.cp);
  static const std::regex fsdp_re(R"(FSDP=(\d+))");
  if (std::regex_search(notes, m, fsdp_re) &&
      m[1].str().find_first_not_of('0') != std::string::npos)
    p.fsdp = true;
  // Precision: the column, or for the 25.09 tables without one, the page's footnote (primary
  // value FP8 with current scaling, parenthesised value "different quantization granularities":
  // 32×32 blocks on GB200 / B200, which TE runs as MXFP8 there; 128×128 weight / 1×128
  // activation blocks on H100). The 25.07 table has the same primary / parenthesised layout, with
  // the same parenthesised configurations as 25.09 (Llama 3.1 405B at TP 4 / PP 8 / CP 2 / VP 8,
  // GA 32; Llama 3 70B without FSDP at TP 2 / PP 4 / VP 5) and the same Llama 3 8B ratio
  // (0.956 vs 0.954), but its footnote is not in the retrieved copy: it is read as 25.09's.
  const std::string prec = get(f, "precision");
  const bool hopper =
      v->system.find("h100") != std::string::npos || v->system.find("h200") != std::string::npos;
  const PrecisionRecipe finer = hopper ? PrecisionRecipe::kFp8Block : PrecisionRecipe::kMxfp8;
  if (prec == "FP8" && has(notes, "parenthesised variant in source cell")) {
    p.precision = finer;
  } else if (prec == "BF16") {
    p.precision = PrecisionRecipe::kBf16;
  } else if (prec == "FP8-CS" || (prec == "FP8" && has(notes, "current-step scaling"))) {
    p.precision = PrecisionRecipe::kFp8Current;
  } else if (prec == "FP8") {
    p.precision = PrecisionRecipe::kFp8Delayed;
  } else if (prec == "FP8-MX" || prec == "MXFP8") {
    p.precision = PrecisionRecipe::kMxfp8;
  } else if (prec == "NVFP4") {
    p.precision = PrecisionRecipe::kNvfp4;
  } else if (prec.empty() && has(notes, "parenthesised variant")) {
    p.precision = finer;
  } else if (prec.empty() && has(notes, "primary (non-parenthesised)")) {
    p.precision = PrecisionRecipe::kFp8Current;
  } else {
    *why = "precision '" + prec + "' not recognised";
    return false;
  }

  if (!cache.compute.count(v->system)) {
    const SystemSpec s = load_system(v->system, data_dir);
    cache.compute[v->system] = std::make_shared<ComputeModel>(ComputeModel::load(s.gpu, data_dir));
  }
  const SystemSpec sys = load_system(v->system, data_dir);
  const CollectiveParams cparams = load_collective_params(sys, data_dir);
  const int per_domain = sys.node.gpus * sys.scale_up.domain_nodes;
  try {
    check_parallel_config(model, p, world, per_domain, "row", "");
  } catch (const InputError& e) {
    *why = "configuration not modelled: " + e.message();
    return false;
  }
  const int64_t passes = int64_t{world} / p.tp * p.micro_batches() * p.vp * 2;
  if (passes > options.max_passes) {
    *why = "the step has " + std::to_string(passes) +
           " forward/backward passes to simulate; the limit is " +
           std::to_string(options.max_passes) + " (raise it with --max-passes)";
    return false;
  }
  // NVL72 racks: jobs use 16 of the 18 compute trays (64 GPUs) per NVLink domain so that
  // power-of-two TP / EP / DP groups stay inside one domain (README, "Validation").
  const int used_per_domain = per_domain >= 64 ? 64 : per_domain;
  const int domains = (world + used_per_domain - 1) / used_per_domain;
  const StudyCluster cluster{Topology(sys, sys.fabric, domains * sys.scale_up.domain_nodes),
                             cparams, cache.compute[v->system]};

  TrainingWorkload in;
  in.ranks_per_domain = used_per_domain < per_domain ? used_per_domain : 0;
  in.model = model;
  in.par = p;
  in.gpus = world;
  // NeMo's performance recipes overlap TP communication with GEMMs whenever tp > 1, and overlap
  // the distributed optimizer's gradient reduce-scatter and parameter all-gather.
  in.fw = load_framework_defaults(data_dir);
  if (options.kernel_gap_us >= 0) in.fw.kernel_gap = Time::from_us(options.kernel_gap_us);
  if (options.kernel_efficiency > 0) in.fw.kernel_efficiency = options.kernel_efficiency;
  in.fw.tp_comm_overlap = p.tp > 1;
  // DeepSeek-V3: NVIDIA's published recipes (Megatron MoE Model Zoo, best_practice/DeepSeekV3:
  // run.sh for H100 and B200, run_gb200.sh) use the flex dispatcher (DeepEP / HybridEP),
  // batch-level EP all-to-all overlap on H100 and B200, and selective recompute of the MLPs
  // (plus the MLA up-projections on H100 and B200). Megatron-Core runs the EP overlap only in
  // the combined 1F1B schedules of no pipelining and of the interleaved pipeline: with pp > 1
  // it requires a virtual pipeline (TransformerConfig asserts it), so rows with pp > 1 and no
  // vp ran without it.
  if (model.name == "deepseek-v3") {
    in.fw.moe_dispatcher = MoeDispatcher::kDeepEp;
    const bool gb200 = v->system == "dgx-gb200-nvl72";
    in.fw.ep_comm_overlap = !gb200 && (p.pp == 1 || p.vp > 1);
    in.par.recompute = Recompute::kSelective;
    in.par.recompute_modules = kRecomputeMlp | (gb200 ? 0u : kRecomputeMlaUpProj);
  }
  const StepResult r =
      simulate_training_step(in, StepInput{}.seed, cluster, /*want_trace=*/false).result;
  v->predicted = r.tokens_per_s_per_gpu;
  char cfg[160];
  std::snprintf(cfg, sizeof cfg, "tp%d pp%d cp%d vp%d ep%d dp%d gbs%d mbs%d seq%d %s%s", p.tp, p.pp,
                p.cp, p.vp, p.ep, p.dp, p.global_batch, p.micro_batch, p.seq_len,
                to_string(p.precision), p.fsdp ? " fsdp" : "");
  v->config = cfg;
  return true;
}

}  // namespace fleetsim
