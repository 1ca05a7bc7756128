// The training workload of a scenario (model, parallelism, batch, recompute, precision, framework
// options, symmetry, MoE routing, placement) and routing histogram files.
#include "scenario/training_loader.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "core/csv.h"
#include "core/error.h"
#include "scenario/json_reader.h"
#include "scenario/model_loader.h"
#include "scenario/release_loader.h"
#include "scenario/scenario.h"
#include "workload/memory.h"
#include "workload/step_check.h"

namespace fleetsim {

using namespace jsonr;

namespace {

const std::vector<std::string> kTrainingWorkloadKeys = {
    "type",      "model",    "gpus",      "parallelism", "batch", "recompute",  "precision",
    "framework", "symmetry", "placement", "routing",     "task",  "fine_tuning"};
const std::vector<std::string> kPlacementKeys = {"ranks_per_domain"};
const std::vector<std::string> kRoutingKeys = {
    "model",       "alpha", "s", "file", "capacity_factor", "placement", "redundant_experts",
    "bias_update", "drift"};
const std::vector<std::string> kBiasUpdateKeys = {"gamma", "steps"};
const std::vector<std::string> kParallelismKeys = {
    "tp",  "pp", "cp", "dp", "vp", "ep", "etp", "sequence_parallel", "distributed_optimizer",
    "fsdp"};
const std::vector<std::string> kBatchKeys = {"global", "micro", "seq_len"};
const std::vector<std::string> kRecomputeKeys = {"mode", "layers", "modules"};
const std::vector<std::string> kFrameworkKeys = {"tp_comm_overlap",
                                                 "overlap_grad_reduce",
                                                 "overlap_param_gather",
                                                 "bucket_params",
                                                 "kernel_gap",
                                                 "kernel_efficiency",
                                                 "pipeline_split",
                                                 "moe_dispatcher",
                                                 "ep_comm_overlap",
                                                 "memory",
                                                 "release",
                                                 "moe_grouped_gemm",
                                                 "moe_permute_fusion",
                                                 "moe_router_fusion",
                                                 "moe_router_force_load_balancing",
                                                 "megatron_experimental",
                                                 "cuda_graphs",
                                                 "cuda_graph_scopes",
                                                 "moe_grouped_gemm_launch"};
// framework.memory: what the framework does to memory (workload/memory.h MemoryOptions).
const std::vector<std::string> kMemoryKeys = {"recipe",
                                              "main_grads",
                                              "main_params",
                                              "exp_avg",
                                              "exp_avg_sq",
                                              "fp8_param_gather",
                                              "optimizer_offload_fraction",
                                              "offload_modules",
                                              "cpu_offload_layers",
                                              "cross_entropy",
                                              "moe_token_factor",
                                              "moe_permute_fusion",
                                              "expandable_segments"};

// The "model" key: a zoo name (workloads/models/NAME.json) or an inline model object.
void read_model(const Obj& w, const std::string& data_dir, TrainingWorkload* out) {
  TrainingWorkload& t = *out;
  const json& mj = w.get("model");
  if (mj.is_string()) {
    t.model_ref = mj.get<std::string>();
    try {
      t.model = load_model(t.model_ref, data_dir);
    } catch (const InputError& e) {
      // An error inside a model file (a zoo JSON or a config.json) keeps its file and pointer.
      throw InputError(w.file(), w.at("model"), e.file().empty() ? e.message() : e.what());
    }
  } else if (mj.is_object()) {
    t.model_ref = "inline";
    t.model = parse_model_text(mj.dump(), w.file(), w.at("model"));
  } else {
    w.fail(w.at("model"),
           std::string("expected a model name or a model object, got ") + type_name(mj));
  }
}

// "parallelism" and "batch" for t.gpus GPUs.
void read_parallelism(const Obj& w, TrainingWorkload* out) {
  TrainingWorkload& t = *out;
  ParallelConfig& p = t.par;
  const Obj par = w.object("parallelism", kParallelismKeys);
  auto deg = [&](const char* k, int dflt) {
    return par.has(k) ? static_cast<int>(par.integer(k, 1, 1 << 20)) : dflt;
  };
  p.tp = deg("tp", 1);
  p.pp = deg("pp", 1);
  p.cp = deg("cp", 1);
  p.vp = deg("vp", 1);
  p.ep = deg("ep", 1);
  p.etp = deg("etp", 1);
  const int64_t denom = int64_t{p.tp} * p.pp * p.cp;
  p.dp = static_cast<int>(t.gpus / denom);
  if (t.gpus % denom != 0) {
    par.fail(par.ptr(), "tp·pp·cp = " + std::to_string(denom) + " must divide the " +
                            std::to_string(t.gpus) + " GPUs used");
  }
  if (par.has("dp") && par.integer("dp", 1, 1 << 20) != p.dp) {
    par.fail(par.at("dp"), "dp must equal GPUs / (tp·pp·cp) = " + std::to_string(p.dp) + ", got " +
                               std::to_string(par.integer("dp", 1, 1 << 20)));
  }
  if (par.has("sequence_parallel")) p.sequence_parallel = par.boolean("sequence_parallel");
  if (par.has("distributed_optimizer"))
    p.distributed_optimizer = par.boolean("distributed_optimizer");
  if (par.has("fsdp")) p.fsdp = par.boolean("fsdp");
  const Obj batch = w.object("batch", kBatchKeys);
  p.global_batch = static_cast<int>(batch.integer("global", 1, 1 << 24));
  p.micro_batch = batch.has("micro") ? static_cast<int>(batch.integer("micro", 1, 1 << 16)) : 1;
  p.seq_len = static_cast<int>(batch.integer("seq_len", 1, 1 << 24));
}

void read_recompute(const Obj& w, ParallelConfig* out) {
  ParallelConfig& p = *out;
  if (w.has("recompute")) {
    const Obj r = w.object("recompute", kRecomputeKeys);
    parse_recompute(r.choice("mode", {"none", "selective", "full"}), &p.recompute);
    if (r.has("layers")) p.recompute_layers = static_cast<int>(r.integer("layers", 0, 1 << 16));
    if (r.has("modules")) {
      const json& mods = r.get("modules");
      if (!mods.is_array() || mods.empty())
        r.fail(r.at("modules"), "expected a non-empty array of module names");
      if (p.recompute != Recompute::kSelective)
        r.fail(r.at("modules"), "modules apply to mode 'selective' only");
      p.recompute_modules = 0;
      for (size_t i = 0; i < mods.size(); ++i) {
        unsigned bit = 0;
        const std::string ptr = r.at("modules") + "/" + std::to_string(i);
        if (!mods[i].is_string() || !parse_recompute_module(mods[i].get<std::string>(), &bit)) {
          r.fail(ptr,
                 "expected one of 'core_attn', 'mlp', 'mla_up_proj', 'moe_act', "
                 "'layernorm', 'moe', 'shared_experts', got " +
                     show(mods[i]));
        }
        p.recompute_modules |= bit;
      }
    }
  }
}

// framework.memory (docs/memory.md): a recipe to start from, then the keys that override it.
MemoryOptions read_memory_options(const Obj& m) {
  MemoryOptions o;
  if (m.has("recipe") &&
      m.choice("recipe", {"megatron-lm", "megatron-bridge-perf"}) == "megatron-bridge-perf")
    o = megatron_bridge_perf_options();
  const auto bytes = [&](const char* key, std::vector<std::string> names) {
    const std::string v = m.choice(key, names);
    return v == "fp32" ? 4 : v == "bf16" ? 2 : 1;
  };
  if (m.has("main_grads")) o.grad_bytes = bytes("main_grads", {"fp32", "bf16"});
  if (m.has("main_params")) o.master_bytes = bytes("main_params", {"fp32", "bf16"});
  if (m.has("exp_avg")) o.exp_avg_bytes = bytes("exp_avg", {"fp32", "bf16", "fp8"});
  if (m.has("exp_avg_sq")) o.exp_avg_sq_bytes = bytes("exp_avg_sq", {"fp32", "bf16", "fp8"});
  if (m.has("fp8_param_gather")) o.fp8_param_gather = m.boolean("fp8_param_gather");
  if (m.has("optimizer_offload_fraction"))
    o.optimizer_offload_fraction = m.number("optimizer_offload_fraction", 0, 1);
  if (m.has("offload_modules")) {
    const json& list = m.get("offload_modules");
    if (!list.is_array()) m.fail(m.at("offload_modules"), "expected a list of module names");
    o.offload_modules = 0;
    for (size_t i = 0; i < list.size(); ++i) {
      unsigned bit = 0;
      const std::string at = m.at("offload_modules") + "/" + std::to_string(i);
      if (!list[i].is_string() || !parse_offload_module(list[i].get<std::string>(), &bit))
        m.fail(at,
               "expected one of attn_norm, core_attn, attn_proj, mlp_norm, expert_fc1, moe_act");
      o.offload_modules |= bit;
    }
  }
  if (m.has("cpu_offload_layers"))
    o.cpu_offload_layers = static_cast<int>(m.integer("cpu_offload_layers", 0, 1 << 20));
  if (m.has("cross_entropy"))
    o.cross_entropy = m.choice("cross_entropy", {"native", "te"}) == "te"
                          ? CrossEntropyImpl::kTe
                          : CrossEntropyImpl::kNative;
  if (m.has("moe_token_factor")) o.moe_token_factor = m.number("moe_token_factor", 1, 64);
  if (m.has("moe_permute_fusion")) o.moe_permute_fusion = m.boolean("moe_permute_fusion");
  if (m.has("expandable_segments")) o.expandable_segments = m.boolean("expandable_segments");
  return o;
}

// framework.cuda_graph_scopes: the scopes "scopes" captures (Megatron's --cuda-graph-scope).
void read_graph_scopes(const Obj& f, FrameworkOptions* fw) {
  const json& list = f.get("cuda_graph_scopes");
  if (fw->cuda_graphs != CudaGraphs::kScopes)
    f.fail(f.at("cuda_graph_scopes"), "cuda_graph_scopes apply to cuda_graphs \"scopes\" only");
  if (!list.is_array() || list.empty())
    f.fail(f.at("cuda_graph_scopes"), "expected a non-empty array of scope names");
  fw->cuda_graph_scopes = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    unsigned bit = 0;
    if (!list[i].is_string() || !parse_cuda_graph_scope(list[i].get<std::string>(), &bit))
      f.fail(f.at("cuda_graph_scopes") + "/" + std::to_string(i),
             "expected one of 'attn', 'mlp', 'moe_router', 'moe_preprocess', 'mamba' (the whole "
             "MoE layer, 'moe', needs token dropping and is not modelled), got " +
                 show(list[i]));
    fw->cuda_graph_scopes |= bit;
  }
}

// "framework": overrides of the defaults already in t.fw (calibration/framework.json).
void read_framework(const Obj& w, TrainingWorkload* out) {
  TrainingWorkload& t = *out;
  if (w.has("framework")) {
    const Obj f = w.object("framework", kFrameworkKeys);
    if (f.has("tp_comm_overlap")) t.fw.tp_comm_overlap = f.boolean("tp_comm_overlap");
    if (f.has("overlap_grad_reduce")) t.fw.overlap_grad_reduce = f.boolean("overlap_grad_reduce");
    if (f.has("overlap_param_gather"))
      t.fw.overlap_param_gather = f.boolean("overlap_param_gather");
    if (f.has("bucket_params"))
      t.fw.bucket_params = f.integer("bucket_params", 1, int64_t{1} << 40);
    if (f.has("kernel_gap"))
      f.fail(f.at("kernel_gap"),
             "kernel_gap was removed: the host side is modelled per launch from "
             "calibration/host/host-costs.csv (per host CPU class, topology node.host_cpu_class); "
             "use framework.cuda_graphs to remove launches");
    if (f.has("pipeline_split")) {
      const std::string ps = f.choice("pipeline_split", {"auto", "even", "balanced"});
      t.fw.pipeline_split = ps == "even"       ? PipelineSplit::kEven
                            : ps == "balanced" ? PipelineSplit::kBalanced
                                               : PipelineSplit::kAuto;
    }
    if (f.has("moe_dispatcher")) {
      // The dispatchers of step.h by their scenario names ("nccl" = "alltoall").
      static const std::vector<std::pair<std::string, MoeDispatcher>> kDispatchers = {
          {"alltoall", MoeDispatcher::kAllToAll},
          {"nccl", MoeDispatcher::kAllToAll},
          {"deepep", MoeDispatcher::kDeepEp},
          {"deepep-low-latency", MoeDispatcher::kDeepEpLowLatency},
          {"hybridep", MoeDispatcher::kHybridEp},
          {"uccl-ep", MoeDispatcher::kUcclEp},
          {"uccl-ep-low-latency", MoeDispatcher::kUcclEpLowLatency},
          {"pplx", MoeDispatcher::kPplx},
          {"nvlink-one-sided", MoeDispatcher::kNvlinkOneSided}};
      std::vector<std::string> names;
      for (const auto& [name, d] : kDispatchers)
        names.push_back(name);
      const std::string name = f.choice("moe_dispatcher", names);
      for (const auto& [n, d] : kDispatchers)
        if (n == name) t.fw.moe_dispatcher = d;
    }
    if (f.has("ep_comm_overlap")) {
      t.fw.ep_comm_overlap = f.boolean("ep_comm_overlap");
      // Megatron-Core runs it only in the combined 1F1B schedules of no pipelining and of the
      // interleaved pipeline (TransformerConfig refuses pp > 1 without a virtual pipeline).
      if (t.fw.ep_comm_overlap && t.par.pp > 1 && t.par.vp == 1)
        f.fail(f.at("ep_comm_overlap"),
               "EP all-to-all overlap needs the interleaved schedule (vp > 1) when pp > 1, as in "
               "Megatron-Core");
    }
    if (f.has("moe_grouped_gemm")) t.fw.moe_grouped_gemm = f.boolean("moe_grouped_gemm");
    if (f.has("moe_permute_fusion")) t.fw.moe_permute_fusion = f.boolean("moe_permute_fusion");
    if (f.has("moe_router_fusion")) t.fw.moe_router_fusion = f.boolean("moe_router_fusion");
    if (f.has("moe_router_force_load_balancing"))
      t.fw.moe_router_force_load_balancing = f.boolean("moe_router_force_load_balancing");
    if (f.has("megatron_experimental"))
      t.fw.megatron_experimental = f.boolean("megatron_experimental");
    if (f.has("moe_grouped_gemm_launch"))
      t.fw.moe_grouped_gemm_single_launch =
          f.choice("moe_grouped_gemm_launch", {"per_expert", "single"}) == "single";
    if (f.has("kernel_efficiency"))
      t.fw.kernel_efficiency = f.number("kernel_efficiency", 0.05, 1.0);
    if (f.has("cuda_graphs")) {
      const std::string g = f.choice("cuda_graphs", {"none", "scopes", "full_iteration"});
      t.fw.cuda_graphs = g == "scopes"           ? CudaGraphs::kScopes
                         : g == "full_iteration" ? CudaGraphs::kFullIteration
                                                 : CudaGraphs::kNone;
      // Dropless MoE with the alltoall dispatcher reads the token counts per expert on the
      // host in every MoE layer: a sync a graph of the whole iteration cannot contain.
      if (t.fw.cuda_graphs == CudaGraphs::kFullIteration && is_moe(t.model) &&
          t.fw.moe_dispatcher == MoeDispatcher::kAllToAll)
        f.fail(f.at("cuda_graphs"),
               "full_iteration CUDA graphs need a sync-free MoE dispatcher; the dropless "
               "alltoall dispatcher syncs on the token counts in every MoE layer (use "
               "moe_dispatcher \"deepep\" or cuda_graphs \"scopes\")");
    }
    if (f.has("cuda_graphs")) t.fw.cuda_graph_scopes = kDefaultGraphScopes;
    if (f.has("cuda_graph_scopes")) read_graph_scopes(f, &t.fw);
    if (f.has("memory")) t.fw.memory = read_memory_options(f.object("memory", kMemoryKeys));
  }
}

// framework.release: the switches of that release's recipe for this model, GPU and precision
// (calibration/releases.json) and its memory options; the explicit framework keys read after it
// override them.
void read_release(const Obj& w, const SystemSpec& system, const std::string& data_dir,
                  TrainingWorkload* out) {
  if (!w.has("framework")) return;
  const Obj f = w.object("framework", kFrameworkKeys);
  if (!f.has("release")) return;
  const std::string name = f.str("release");
  const ReleaseRecipe r = resolve_release(name, out->model.name, system.gpu.model, out->par,
                                          data_dir, w.file(), f.at("release"));
  out->release = name;
  out->release_notes = apply_release(r, !w.has("recompute"), out);
  // The memory options of the release's recipe (workload/memory.h recipe_memory_options), the
  // same that validate gives every row of NVIDIA's tables; a framework.memory section (read
  // after this) replaces them.
  const bool fine_tuning = out->par.task.kind != TrainingTask::kPretrain;
  out->fw.memory = recipe_memory_options(out->model, out->par, system.gpu.model,
                                         release_stack(name, data_dir, fine_tuning));
}

// A release's full-iteration CUDA graphs with the dropless alltoall dispatcher (the scenario
// chose it, or the recipe's graphs come with a flex dispatcher the scenario replaced): the
// token-count sync cannot be captured, so the graphs are not applied (an explicit
// framework.cuda_graphs is an input error in read_framework instead).
void check_release_graphs(const Obj& w, TrainingWorkload* t) {
  if (t->fw.cuda_graphs != CudaGraphs::kFullIteration || !is_moe(t->model) ||
      t->fw.moe_dispatcher != MoeDispatcher::kAllToAll)
    return;
  if (w.has("framework") && w.object("framework", kFrameworkKeys).has("cuda_graphs")) return;
  t->fw.cuda_graphs = CudaGraphs::kNone;
  t->release_notes.push_back("framework.release " + t->release +
                             ": cuda_graphs=full_iteration not applied: the dropless alltoall "
                             "dispatcher syncs on the token counts in every MoE layer");
}

// "routing" of a mixture-of-experts model (t.model and t.par already read).
void read_routing(const Obj& w, TrainingWorkload* out) {
  TrainingWorkload& t = *out;
  const ParallelConfig& p = t.par;
  if (w.has("routing")) {
    if (!is_moe(t.model))
      w.fail(w.at("routing"), "routing applies to mixture-of-experts models only");
    const Obj r = w.object("routing", kRoutingKeys);
    RoutingSpec spec;
    const std::string kind = r.choice("model", {"balanced", "dirichlet", "zipf", "histogram"});
    spec.kind = kind == "dirichlet"   ? RoutingKind::kDirichlet
                : kind == "zipf"      ? RoutingKind::kZipf
                : kind == "histogram" ? RoutingKind::kHistogram
                                      : RoutingKind::kBalanced;
    if (spec.kind == RoutingKind::kDirichlet) spec.alpha = r.number("alpha", 1e-3, 1e6);
    if (spec.kind == RoutingKind::kZipf) spec.s = r.number("s", 0.0, 10.0);
    if (spec.kind != RoutingKind::kDirichlet && r.has("alpha"))
      r.fail(r.at("alpha"), "alpha applies to model 'dirichlet' only");
    if (spec.kind != RoutingKind::kZipf && r.has("s"))
      r.fail(r.at("s"), "s applies to model 'zipf' only");
    if (spec.kind == RoutingKind::kHistogram) {
      std::string path = r.str("file");
      if (!path.empty() && path[0] != '/') {
        const auto dir = fs::path(w.file()).parent_path();
        if (!dir.empty()) path = (dir / path).string();
      }
      spec.histogram_file = path;
      spec.histogram = load_routing_histogram(path, moe_layer_count(t.model), t.model.moe.experts);
    } else if (r.has("file")) {
      r.fail(r.at("file"), "file applies to model 'histogram' only");
    }
    if (r.has("capacity_factor")) spec.capacity_factor = r.number("capacity_factor", 0.0, 1000.0);
    if (r.has("placement")) {
      const std::string pl = r.choice("placement", {"contiguous", "round_robin", "eplb"});
      spec.placement = pl == "eplb"          ? Placement::kEplb
                       : pl == "round_robin" ? Placement::kRoundRobin
                                             : Placement::kContiguous;
    }
    if (r.has("redundant_experts")) {
      if (spec.placement != Placement::kEplb)
        r.fail(r.at("redundant_experts"), "redundant_experts applies to placement 'eplb' only");
      spec.redundant_experts =
          static_cast<int>(r.integer("redundant_experts", 0, t.model.moe.experts));
      if (spec.redundant_experts > 0 && p.ep < 2)
        r.fail(r.at("redundant_experts"), "replicas need ep >= 2 (a replica goes to another rank)");
    }
    if (r.has("bias_update")) {
      const Obj b = r.object("bias_update", kBiasUpdateKeys);
      spec.bias_gamma = b.number("gamma", 0.0, 10.0);
      spec.bias_steps = static_cast<int>(b.integer("steps", 0, 1000000));
    }
    if (r.has("drift")) spec.drift = r.number("drift", 0.0, 10.0);
    t.routing = spec;
  }
}

// "placement": ranks per NVLink domain of `per_domain` GPUs (0 = fill every domain).
void read_placement(const Obj& w, int cluster_gpus, int per_domain, TrainingWorkload* out) {
  TrainingWorkload& t = *out;
  if (w.has("placement")) {
    const Obj pl = w.object("placement", kPlacementKeys);
    if (pl.has("ranks_per_domain")) {
      t.ranks_per_domain = static_cast<int>(pl.integer("ranks_per_domain", 1, per_domain));
      const int64_t domains_needed = (t.gpus + t.ranks_per_domain - 1) / t.ranks_per_domain;
      const int64_t domains = cluster_gpus / per_domain;
      if (domains_needed > domains) {
        pl.fail(pl.at("ranks_per_domain"),
                std::to_string(t.gpus) + " ranks at " + std::to_string(t.ranks_per_domain) +
                    " per NVLink domain need " + std::to_string(domains_needed) +
                    " domains; the cluster has " + std::to_string(domains));
      }
      if (t.ranks_per_domain == per_domain) t.ranks_per_domain = 0;
    }
  }
}

}  // namespace

TrainingWorkload read_training(const Obj& w, int cluster_gpus, const SystemSpec& system,
                               const std::string& data_dir) {
  TrainingWorkload t;
  t.fw = load_framework_defaults(data_dir);
  read_model(w, data_dir, &t);
  t.gpus = w.has("gpus") ? static_cast<int>(w.integer("gpus", 1, cluster_gpus)) : cluster_gpus;
  read_parallelism(w, &t);
  read_task(w, &t.par);
  read_recompute(w, &t.par);
  if (w.has("precision")) {
    parse_precision(
        w.choice("precision", {"bf16", "fp8_ds", "fp8_cs", "fp8_blk", "mxfp8", "nvfp4"}),
        &t.par.precision);
  }
  read_release(w, system, data_dir, &t);
  read_framework(w, &t);
  check_release_graphs(w, &t);
  if (w.has("symmetry")) t.symmetry = w.boolean("symmetry");
  read_routing(w, &t);
  const int per_domain = system.node.gpus * system.scale_up.domain_nodes;
  read_placement(w, cluster_gpus, per_domain, &t);
  check_parallel_config(t.model, t.par, t.gpus, per_domain, w.file(), w.ptr());
  return t;
}

std::vector<std::vector<double>> load_routing_histogram(const std::string& path, int moe_layers,
                                                        int experts) {
  std::vector<std::vector<double>> h(moe_layers, std::vector<double>(experts, -1.0));
  const std::string text = read_file(path);
  auto check_count = [&](double v, const std::string& where) {
    if (!std::isfinite(v) || v < 0)
      throw InputError(path, where, "expected a token count >= 0, got " + std::to_string(v));
  };
  const bool is_json = path.size() >= 5 && path.substr(path.size() - 5) == ".json";
  if (is_json) {
    const json j = parse_strict(text, path);
    const Obj o(j, path, "", {"experts", "tokens"});
    if (o.integer("experts", 1, 1 << 20) != experts) {
      o.fail(o.at("experts"), "the model has " + std::to_string(experts) + " routed experts, got " +
                                  std::to_string(o.integer("experts", 1, 1 << 20)));
    }
    const json& tokens = o.get("tokens");
    if (!tokens.is_array() || static_cast<int>(tokens.size()) != moe_layers) {
      o.fail(o.at("tokens"), "expected an array of " + std::to_string(moe_layers) +
                                 " MoE layers, one array of counts each");
    }
    for (int l = 0; l < moe_layers; ++l) {
      const std::string lp = "/tokens/" + std::to_string(l);
      const json& row = tokens[l];
      if (!row.is_array() || static_cast<int>(row.size()) != experts)
        throw InputError(path, lp, "expected " + std::to_string(experts) + " counts");
      for (int e = 0; e < experts; ++e) {
        if (!row[e].is_number())
          throw InputError(path, lp + "/" + std::to_string(e), "expected a number");
        const double v = row[e].get<double>();
        check_count(v, lp + "/" + std::to_string(e));
        h[l][e] = v;
      }
    }
    return h;
  }
  const CsvTable t = parse_csv(text, path);
  const int cl = t.column("layer"), ce = t.column("expert"), ct = t.column("tokens");
  if (cl < 0 || ce < 0 || ct < 0)
    throw InputError(path, "line 1", "expected the columns layer,expert,tokens");
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const std::string where = "line " + std::to_string(t.line_of_row[i]);
    auto num = [&](int c, const char* what) {
      const std::string& f = t.rows[i][c];
      char* end = nullptr;
      const double v = std::strtod(f.c_str(), &end);
      if (f.empty() || end == nullptr || *end != '\0')
        throw InputError(path, where,
                         std::string("expected a number for ") + what + ", got '" + f + "'");
      return v;
    };
    const double l = num(cl, "layer"), e = num(ce, "expert"), v = num(ct, "tokens");
    if (l < 0 || l >= moe_layers || l != std::floor(l))
      throw InputError(path, where,
                       "layer must be an integer in [0, " + std::to_string(moe_layers - 1) + "]");
    if (e < 0 || e >= experts || e != std::floor(e))
      throw InputError(path, where,
                       "expert must be an integer in [0, " + std::to_string(experts - 1) + "]");
    check_count(v, where);
    double& cell = h[static_cast<int>(l)][static_cast<int>(e)];
    if (cell >= 0) throw InputError(path, where, "layer and expert given twice");
    cell = v;
  }
  for (int l = 0; l < moe_layers; ++l)
    for (int e = 0; e < experts; ++e)
      if (h[l][e] < 0)
        throw InputError(path, "",
                         "missing tokens for layer " + std::to_string(l) + ", expert " +
                             std::to_string(e) + " (every MoE layer and expert is needed)");
  return h;
}

std::map<std::string, std::vector<std::string>> training_scenario_keys() {
  return {{"/workload#training", kTrainingWorkloadKeys},
          {"/workload#training/parallelism", kParallelismKeys},
          {"/workload#training/batch", kBatchKeys},
          {"/workload#training/recompute", kRecomputeKeys},
          {"/workload#training/framework", kFrameworkKeys},
          {"/workload#training/framework/memory", kMemoryKeys},
          {"/workload#training/placement", kPlacementKeys},
          {"/workload#training/routing", kRoutingKeys},
          {"/workload#training/routing/bias_update", kBiasUpdateKeys},
          {"/workload#training/fine_tuning", fine_tuning_keys()}};
}

}  // namespace fleetsim
