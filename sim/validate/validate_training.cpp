// Training rows of a reference CSV (validate_training.h): the scenario a row describes, simulated.
#include "validate/validate_training.h"

#include <cmath>
#include <cstdio>
#include <regex>

#include "core/error.h"
#include "scenario/model_loader.h"
#include "scenario/release_loader.h"
#include "scenario/scenario.h"
#include "study/cluster.h"
#include "study/training_step.h"
#include "validate/finetune_rows.h"
#include "validate/recipe_layouts.h"
#include "validate/validate_memory.h"

namespace fleetsim {
namespace {

bool has(const std::string& s, const char* sub) {
  return s.find(sub) != std::string::npos;
}

std::string get(const std::map<std::string, std::string>& f, const char* k) {
  auto it = f.find(k);
  return it == f.end() ? "" : it->second;
}

std::string upper(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// A positive integer cell up to 2^24; false when the cell holds something else.
bool parse_positive(const std::string& s, int* out) {
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

// Reads the batch and parallel columns. Empty parallel cells mean "not used" (1) in the
// throughput tables; an empty seq_len / gbs / mbs is taken from --default, else the row is skipped.
RowOutcome parse_config(const std::map<std::string, std::string>& f, const TrainingContext& ctx,
                        ValidationRow* v, ParallelConfig* p, std::string* why) {
  struct Field {
    const char* key;
    int* out;
    int empty;  // value of an empty cell; 0 = required (from --default or skip)
  };
  const Field fields[] = {{"seq_len", &p->seq_len, 0}, {"gbs", &p->global_batch, 0},
                          {"mbs", &p->micro_batch, 0}, {"tp", &p->tp, 1},
                          {"pp", &p->pp, 1},           {"cp", &p->cp, 1},
                          {"vp", &p->vp, 1},           {"ep", &p->ep, 1},
                          {"etp", &p->etp, 1}};
  static const char* kWhat[] = {"sequence length (seq_len)", "global batch size (gbs)",
                                "micro-batch size (mbs)"};
  int i = 0;
  for (const Field& fd : fields) {
    std::string cell = get(f, fd.key);
    if (cell.empty()) {
      auto d = ctx.options.defaults.find(fd.key);
      if (d != ctx.options.defaults.end()) {
        cell = d->second;
        v->defaults += std::string(v->defaults.empty() ? "" : " ") + fd.key + "=" + cell;
      }
    }
    if (cell.empty() && fd.empty == 0) {
      *why = std::string("no ") + kWhat[i] + " in the row; give one with --default " + fd.key +
             "=VALUE";
      return RowOutcome::kSkipped;
    }
    if (cell.empty()) {
      *fd.out = fd.empty;
    } else if (!parse_positive(cell, fd.out)) {
      *why = std::string("column '") + fd.key +
             "': expected a positive integer up to 16777216, got '" + cell + "'";
      return RowOutcome::kMalformed;
    }
    ++i;
  }
  const int world = v->num_gpus;
  if (int64_t{p->tp} * p->pp * p->cp > world || world % (p->tp * p->pp * p->cp) != 0) {
    *why = "tp·pp·cp does not divide num_gpus";
    return RowOutcome::kSkipped;
  }
  p->dp = world / (p->tp * p->pp * p->cp);
  static const std::regex fsdp_re(R"(FSDP=(\d+))");
  std::smatch m;
  const std::string notes = get(f, "notes");
  // Gradient accumulation stated per variant (GA=N in the notes: the 25.07 / 25.09 tables give
  // GA, TP, PP, VP, FSDP as "primary (parenthesised)" but one MBS cell per model). Where
  // gbs != dp · mbs · GA, that MBS belongs to the other variant, and this one's micro-batch is
  // gbs / (dp · GA) (e.g. Llama 3 70B, 25.09: GBS 128, MBS 2, FSDP 64 (0), TP 1 (2), PP 1 (4),
  // GA 1 (16): the parenthesised variant runs MBS 128 / (8 · 16) = 1).
  static const std::regex ga_re(R"((^|[ ;])GA=(\d{1,6}))");
  if (std::regex_search(notes, m, ga_re)) {
    const int64_t ga = std::stoll(m[2].str());
    const int64_t per_mb = int64_t{p->dp} * ga;
    if (ga >= 1 && int64_t{p->dp} * p->micro_batch * ga != p->global_batch &&
        p->global_batch % per_mb == 0) {
      p->micro_batch = static_cast<int>(p->global_batch / per_mb);
      v->notes += std::string(v->notes.empty() ? "" : "; ") + "mbs " +
                  std::to_string(p->micro_batch) + " = gbs / (dp · GA " + m[2].str() +
                  "): the row's MBS cell belongs to the other variant";
    }
  }
  if (std::regex_search(notes, m, fsdp_re) &&
      m[1].str().find_first_not_of('0') != std::string::npos)
    p->fsdp = true;
  return RowOutcome::kModelled;
}

// Precision: the column, or for the 25.09 tables without one, the page's footnote (primary
// value FP8 with current scaling, parenthesised value "different quantization granularities":
// 32×32 blocks on GB200 / B200, which TE runs as MXFP8 there; 128×128 weight / 1×128
// activation blocks on H100). The 25.07 table has the same primary / parenthesised layout, with
// the same parenthesised configurations as 25.09 (Llama 3.1 405B at TP 4 / PP 8 / CP 2 / VP 8,
// GA 32; Llama 3 70B without FSDP at TP 2 / PP 4 / VP 5) and the same Llama 3 8B ratio
// (0.956 vs 0.954), but its footnote is not in the retrieved copy: it is read as 25.09's.
// A plain "FP8" means delayed scaling in the NeMo 2.0 tables (its default FP8 recipe), and
// current scaling in the Megatron-Bridge tables (`bridge`): Bridge's performance scripts offer
// only bf16 / fp8_cs / fp8_mx / fp8_sc / nvfp4 (scripts/performance/utils/precision.py,
// get_precision_config, v0.1.0rc3 to v0.5.1), and its per-tensor FP8 one is fp8_cs.
bool parse_precision(const std::string& prec_in, const std::string& notes, bool hopper, bool bridge,
                     PrecisionRecipe* out) {
  const std::string prec = upper(prec_in);
  const PrecisionRecipe finer = hopper ? PrecisionRecipe::kFp8Block : PrecisionRecipe::kMxfp8;
  if (prec == "FP8" && has(notes, "parenthesised variant in source cell")) {
    *out = finer;
  } else if (prec == "BF16") {
    *out = PrecisionRecipe::kBf16;
  } else if (prec == "FP8-CS" || (prec == "FP8" && has(notes, "current-step scaling"))) {
    *out = PrecisionRecipe::kFp8Current;
  } else if (prec == "FP8" && bridge) {
    *out = PrecisionRecipe::kFp8Current;
  } else if (prec == "FP8" || prec == "FP8-DS") {
    *out = PrecisionRecipe::kFp8Delayed;
  } else if (prec == "FP8-MX" || prec == "MXFP8") {
    *out = PrecisionRecipe::kMxfp8;
  } else if (prec == "NVFP4" || prec == "FP4") {
    *out = PrecisionRecipe::kNvfp4;
  } else if (prec.empty() && has(notes, "parenthesised variant")) {
    *out = finer;
  } else if (prec.empty() && has(notes, "primary (non-parenthesised)")) {
    *out = PrecisionRecipe::kFp8Current;
  } else {
    return false;
  }
  return true;
}

// The system a row runs on: --system, the row's system column, else the hardware name table,
// with the GPUs per node the row states.
bool choose_system(const std::map<std::string, std::string>& f, TrainingContext& ctx,
                   ValidationRow* v, SystemSpec* sys, std::string* why) {
  const SystemChoice sc = system_for_hardware(v->hardware, get(f, "notes"));
  std::string name = ctx.options.system.empty() ? get(f, "system") : ctx.options.system;
  if (name.empty()) {
    if (sc.system.empty()) {
      *why = sc.reason;
      return false;
    }
    name = sc.system;
  }
  try {
    *sys = load_system(name, ctx.data_dir);
  } catch (const InputError& e) {
    *why = "system '" + name + "': " + e.message();
    return false;
  }
  v->system = name;
  if (sc.nodes > 0 && sc.gpus_per_node > 0 && int64_t{sc.nodes} * sc.gpus_per_node != v->num_gpus) {
    *why = "notes say " + std::to_string(sc.nodes) + " nodes x " +
           std::to_string(sc.gpus_per_node) + " GPUs, but num_gpus is " +
           std::to_string(v->num_gpus);
    return false;
  }
  if (sc.gpus_per_node > 0 && sc.gpus_per_node != sys->node.gpus) {
    if (sys->scale_up.domain_nodes != 1 || sc.gpus_per_node > sys->node.gpus ||
        sys->node.gpus % sc.gpus_per_node != 0 || sys->nics.gpus_per_nic < 1 ||
        sc.gpus_per_node % sys->nics.gpus_per_nic != 0) {
      *why = "the row has " + std::to_string(sc.gpus_per_node) + " GPUs per node; " + name +
             " has " + std::to_string(sys->node.gpus) + " (give a system column / --system)";
      return false;
    }
    // The row's nodes carry fewer GPUs of the same baseboard: one NIC per GPU group as before.
    sys->nics.per_node = sys->nics.per_node * sc.gpus_per_node / sys->node.gpus;
    sys->node.gpus = sc.gpus_per_node;
    v->notes += std::string(v->notes.empty() ? "" : "; ") + std::to_string(sc.gpus_per_node) +
                " GPUs per node (row)";
  }
  return true;
}

// NeMo's counting of model FLOPs: causal attention since Megatron-Bridge (NeMo 25.09+), all keys
// in NeMo 2.0's pages (tests/workload/test_model.cpp checks both on NVIDIA's published pairs);
// other sources (MLPerf, users' logs) count causal attention as Megatron-Bridge does.
bool nemo_flops_source(const std::string& source_url) {
  return has(source_url, "NVIDIA/NeMo/") || has(source_url, "docs.nvidia.com/nemo");
}
double flops_per_token(const ModelSpec& m, int seq_len, const std::string& source_url) {
  FlopConvention conv;
  conv.benchmark_vocab = true;
  conv.causal = !nemo_flops_source(source_url);
  return model_flops_per_token(m, seq_len, conv);
}

// The peak an MFU row divides by: the row's own (notes peak_tflops=X or a peak_tflops_per_gpu
// column), else fleetsim's datasheet peak (BF16 dense, as fleetsim's reports state MFU).
double mfu_peak(const std::map<std::string, std::string>& f, double datasheet, std::string* note) {
  static const std::regex peak_re(R"(peak_tflops\s*=\s*([0-9]+(\.[0-9]+)?))");
  std::smatch m;
  const std::string notes = get(f, "notes");
  std::string stated = get(f, "peak_tflops_per_gpu");
  if (stated.empty() && std::regex_search(notes, m, peak_re)) stated = m[1].str();
  if (!stated.empty()) {
    char* end = nullptr;
    const double p = std::strtod(stated.c_str(), &end);
    if (end && *end == '\0' && p > 0 && std::isfinite(p)) {
      *note = "MFU peak " + stated + " TFLOP/s (row)";
      return p;
    }
  }
  char buf[96];
  std::snprintf(buf, sizeof buf, "MFU peak %.0f TFLOP/s (BF16 dense datasheet)", datasheet);
  *note = buf;
  return datasheet;
}

// The release the row was measured with: its source_version column ("26.08 NeMo container")
// through calibration/releases.json, else the table's default release, said in the row's notes.
// The release's recipe switches for this model, GPU and precision replace the defaults
// (docs/calibration.md, "Framework releases").
void apply_row_release(const std::map<std::string, std::string>& f, const std::string& data_dir,
                       const SystemSpec& sys, ValidationRow* v, TrainingWorkload* in) {
  const std::string version = get(f, "source_version");
  std::string rel = release_for_version(version, data_dir);
  std::string note;
  if (rel.empty()) {
    rel = default_release(data_dir);
    note = "release " + rel + " (default: " +
           (version.empty() ? std::string("no source_version")
                            : "source_version '" + version + "' names no known release") +
           ")";
  } else {
    note = "release " + rel;
  }
  const ReleaseRecipe r =
      resolve_release(rel, in->model.name, sys.gpu.model, in->par, data_dir, "", "");
  const size_t unapplied = apply_release(r, /*set_recompute=*/true, in).size();
  if (unapplied > 0) note += " (" + std::to_string(unapplied) + " switches recorded only)";
  v->release = rel;
  v->notes += std::string(v->notes.empty() ? "" : "; ") + note;
}

// A row that does not fit: is its printed layout possible at all (workload/memory.h
// memory_floor against the HBM)? If not it is layout_infeasible, with the bound in the notes.
void check_layout_floor(const ModelSpec& m, const ParallelConfig& p, const MemoryOptions& o,
                        int64_t hbm, ValidationRow* v) {
  const int64_t floor = memory_floor(m, p, o);
  if (floor <= hbm) return;
  const double gib = double(1 << 30);
  v->breakdown.layout_infeasible = true;
  v->breakdown.memory_floor_gib = static_cast<double>(floor) / gib;
  char buf[240];
  std::snprintf(buf, sizeof buf,
                "layout_infeasible: weights as the precision recipe keeps them + main-gradient "
                "buffer + CUDA context need %.1f GiB per GPU of %.1f GiB HBM on the most loaded "
                "stage, whatever recompute or offload",
                v->breakdown.memory_floor_gib, static_cast<double>(hbm) / gib);
  v->notes += std::string(v->notes.empty() ? "" : "; ") + buf;
}

void fill_breakdown(const StepResult& r, RowBreakdown* b) {
  b->step_time_s = r.step_time_s;
  b->compute_s = r.breakdown.compute;
  b->tp_exposed_s = r.breakdown.tp_exposed;
  b->cp_exposed_s = r.breakdown.cp_exposed;
  b->ep_exposed_s = r.breakdown.ep_exposed;
  b->pp_exposed_s = r.breakdown.pp_exposed;
  b->dp_exposed_s = r.breakdown.dp_exposed;
  b->bubble_s = r.breakdown.bubble;
  b->optimizer_s = r.breakdown.optimizer;
  b->host_exposed_s = r.breakdown.host_exposed;
  b->memory_gib = static_cast<double>(r.memory.total) / double(1 << 30);
  b->memory_need_gib =
      static_cast<double>(r.memory.reserved + r.memory.device_overhead) / double(1 << 30);
  b->hbm_gib = static_cast<double>(r.memory.capacity) / double(1 << 30);
  b->memory_fits = r.memory.fits;
  b->memory_checked = true;
}

}  // namespace

TrainingContext::TrainingContext(const std::string& dir, const ValidateOptions& o)
    : data_dir(dir), options(o), models(dir, o.models) {}

// Simulates the row's step on `sys` with the study layer and fills v's prediction in the row's
// unit, breakdown and configuration.
static void simulate_row(const std::map<std::string, std::string>& f, const MetricSpec& metric,
                         TrainingContext& ctx, const SystemSpec& sys, const ModelSpec& model,
                         const ParallelConfig& p, ValidationRow* v) {
  const int world = v->num_gpus;
  const int per_domain = sys.node.gpus * sys.scale_up.domain_nodes;
  if (!ctx.compute.count(v->system)) {
    ctx.compute[v->system] =
        std::make_shared<ComputeModel>(ComputeModel::load(sys.gpu, ctx.data_dir));
  }
  const CollectiveParams cparams = load_collective_params(sys, ctx.data_dir);
  // NVL72 racks: jobs use 16 of the 18 compute trays (64 GPUs) per NVLink domain so that
  // power-of-two TP / EP / DP groups stay inside one domain (README, "Validation"), unless the
  // row's GPU count fills whole racks.
  const int used_per_domain = per_domain >= 64 && world % per_domain != 0 ? 64 : per_domain;
  const int domains = (world + used_per_domain - 1) / used_per_domain;
  const StudyCluster cluster{Topology(sys, sys.fabric, domains * sys.scale_up.domain_nodes),
                             cparams, ctx.compute[v->system]};

  TrainingWorkload in;
  in.ranks_per_domain = used_per_domain < per_domain ? used_per_domain : 0;
  in.model = model;
  in.par = p;
  in.gpus = world;
  in.fw = load_framework_defaults(ctx.data_dir);
  if (ctx.options.kernel_efficiency > 0) in.fw.kernel_efficiency = ctx.options.kernel_efficiency;
  apply_row_release(f, ctx.data_dir, sys, v, &in);
  // The memory options of the recipe the row ran (workload/memory.h recipe_memory_options): the
  // release's Megatron-Bridge recipes, or its fine-tuning stack for an SFT / LoRA row.
  const bool fine_tuning = in.par.task.kind != TrainingTask::kPretrain;
  in.fw.memory = recipe_memory_options(model, in.par, sys.gpu.model,
                                       release_stack(v->release, ctx.data_dir, fine_tuning));
  const StepResult r =
      simulate_training_step(in, StepInput{}.seed, cluster, /*want_trace=*/false).result;

  PredictedStep ps;
  ps.step_time_s = r.step_time_s;
  ps.tokens_per_s_per_gpu = r.tokens_per_s_per_gpu;
  const std::string url = get(f, "source_url");
  ps.flops_per_token =
      p.task.kind == TrainingTask::kPretrain
          ? flops_per_token(model, p.seq_len, url)
          : finetune_reported_flops_per_token(model, p.seq_len, p.task, nemo_flops_source(url));
  ps.num_gpus = world;
  if (metric.kind == MetricKind::kMfu) {
    std::string note;
    ps.peak_tflops = mfu_peak(f, r.peak_tflops, &note);
    v->notes += std::string(v->notes.empty() ? "" : "; ") + note;
  }
  v->predicted = predicted_metric(metric.kind, ps) / metric.scale;
  fill_breakdown(r, &v->breakdown);
  if (!r.memory.fits) check_layout_floor(model, in.par, in.fw.memory, r.memory.capacity, v);
  char cfg[160];
  std::snprintf(cfg, sizeof cfg, "tp%d pp%d cp%d vp%d ep%d dp%d gbs%d mbs%d seq%d %s%s", p.tp, p.pp,
                p.cp, p.vp, p.ep, p.dp, p.global_batch, p.micro_batch, p.seq_len,
                to_string(p.precision), p.fsdp ? " fsdp" : "");
  v->config = cfg;
  if (p.task.kind != TrainingTask::kPretrain) {
    v->config += std::string(" ") + to_string(p.task.kind) + " doc" +
                 std::to_string(p.task.mean_document_tokens);
    if (p.task.frozen_base())
      v->config +=
          " r" + std::to_string(p.task.lora_rank) + " " + lora_targets_string(p.task.lora_targets);
  }
}

// The release's recipe layout for a row (recipe_layouts.h): notes how the printed layout differs
// from it and, where the printed one does not fit and the recipe's does, judges the row with the
// recipe's layout (v replaced by that simulation). `before` is v as it was before simulate_row.
static void judge_with_recipe(const std::map<std::string, std::string>& f, const MetricSpec& metric,
                              TrainingContext& ctx, const SystemSpec& sys, const ModelSpec& model,
                              const PrintedLayout& printed, const RecipeLayout* recipe,
                              const ValidationRow& before, ValidationRow* v) {
  v->layout_source = to_string(LayoutSource::kPrinted);
  if (recipe == nullptr) return;
  const std::string differences = layout_differences(printed, *recipe);
  const std::string cited = recipe->config + " (" + recipe->source + ")";
  v->recipe_config = cited;
  v->recipe_differences = differences;
  if (differences.empty()) return;
  const std::string note =
      "printed layout differs from the release's recipe " + cited + ": " + differences;
  v->notes += std::string(v->notes.empty() ? "" : "; ") + note;
  if (v->breakdown.memory_fits) return;
  const ParallelConfig rp = recipe_parallel(printed.p, *recipe, v->num_gpus);
  try {
    check_parallel_config(model, rp, v->num_gpus, sys.node.gpus * sys.scale_up.domain_nodes,
                          "recipe", "");
  } catch (const InputError& e) {
    v->notes += "; the recipe's layout is not modelled: " + e.message();
    return;
  }
  ValidationRow alt = before;
  simulate_row(f, metric, ctx, sys, model, rp, &alt);
  char buf[200];
  if (judge_layout(v->breakdown.memory_fits, true, alt.breakdown.memory_fits) ==
      LayoutSource::kPrinted) {
    std::snprintf(buf, sizeof buf, "; the recipe's layout does not fit either (%.1f of %.1f GiB)",
                  alt.breakdown.memory_need_gib, alt.breakdown.hbm_gib);
    v->notes += buf;
    return;
  }
  std::snprintf(buf, sizeof buf,
                "; judged with the recipe's layout (layout_source recipe): the printed one needs "
                "%.1f of %.1f GiB%s and predicts %.6g, the recipe's needs %.1f GiB",
                v->breakdown.memory_need_gib, v->breakdown.hbm_gib,
                v->breakdown.layout_infeasible ? " (layout_infeasible)" : "", v->predicted,
                alt.breakdown.memory_need_gib);
  alt.notes += std::string(alt.notes.empty() ? "" : "; ") + note + buf;
  alt.layout_source = to_string(LayoutSource::kRecipe);
  alt.recipe_config = cited;
  alt.recipe_differences = differences;
  *v = alt;
}

// The recipe of the row's own release (none for a row whose source_version names no release)
// and the row's printed layout; a row that leaves its vp cell empty runs the recipe's virtual
// pipeline where the recipe states one at the row's pipeline size (recipe_layouts.h), said in
// its notes.
static const RecipeLayout* row_recipe(const std::map<std::string, std::string>& f,
                                      TrainingContext& ctx, const SystemSpec& sys,
                                      const ModelSpec& model, const std::string& row_release,
                                      ParallelConfig* p, PrintedLayout* printed, ValidationRow* v) {
  static const std::regex fsdp_stated_re(R"((^|[ ;])FSDP=\d)");
  *printed = PrintedLayout{*p, std::regex_search(get(f, "notes"), fsdp_stated_re),
                           !get(f, "etp").empty(), !get(f, "vp").empty()};
  if (row_release.empty()) return nullptr;
  const RecipeKey key{row_release,   to_string(p->task.kind), model.name,
                      sys.gpu.model, to_string(p->precision), v->num_gpus};
  const RecipeLayout* recipe = find_recipe_layout(recipe_layouts(ctx.data_dir), key, *printed);
  if (recipe == nullptr) return nullptr;
  const int vp = unstated_vp_from_recipe(*printed, *recipe);
  if (vp == 0) return recipe;
  ParallelConfig filled = *p;
  filled.vp = vp;
  std::string note = "vp " + std::to_string(vp) + " from the release's recipe " + recipe->config +
                     " (" + recipe->source + "): the row states none";
  try {
    check_parallel_config(model, filled, v->num_gpus, sys.node.gpus * sys.scale_up.domain_nodes,
                          "row", "");
    *p = filled;
    printed->p.vp = vp;
  } catch (const InputError& e) {
    note = "the release's recipe " + recipe->config + " runs vp " + std::to_string(vp) +
           ", which the row's layout cannot: " + e.message() + "; vp 1 kept";
  }
  v->notes += std::string(v->notes.empty() ? "" : "; ") + note;
  return recipe;
}

RowOutcome predict_training_row(const std::map<std::string, std::string>& f,
                                const MetricSpec& metric, TrainingContext& ctx, ValidationRow* v,
                                std::string* why) {
  const std::string notes = get(f, "notes");
  TaskSpec task;
  if (!row_task(notes, get(f, "source_url"), &task, why)) return RowOutcome::kSkipped;
  const std::string fw = framework_of(v->model, notes);
  if (!framework_modelled(fw)) {
    *why = "framework '" + fw +
           "': fleetsim models Megatron-Core / NeMo software (kernels, overlap, schedules); " +
           "other frameworks are not simulated as NeMo";
    return RowOutcome::kSkipped;
  }
  SystemSpec sys;
  if (!choose_system(f, ctx, v, &sys, why)) return RowOutcome::kSkipped;
  const ModelChoice mc = ctx.models.resolve(v->model);
  if (mc.model.empty()) {
    *why = mc.reason;
    return RowOutcome::kSkipped;
  }
  ModelSpec model;
  try {
    model = load_model(mc.model, ctx.data_dir);
  } catch (const InputError& e) {
    *why = "no model definition: " + e.message();
    return RowOutcome::kSkipped;
  }
  v->family = model.name;
  if (mc.how != "alias") {
    v->notes +=
        std::string(v->notes.empty() ? "" : "; ") + "model " + model.name + " (" + mc.how + ")";
  }
  if (mc.variant == "w/o MTP") model.mtp_layers = 0;
  if (model.benchmark_vocab > 0) model.vocab = model.benchmark_vocab;

  ParallelConfig p;
  if (const RowOutcome o = parse_config(f, ctx, v, &p, why); o != RowOutcome::kModelled) return o;
  p.task = task;
  const bool hopper = sys.gpu.model == "H100" || sys.gpu.model == "H200";
  // The table's stack: the row's release, else the default release (as apply_row_release).
  const std::string row_release = release_for_version(get(f, "source_version"), ctx.data_dir);
  std::string rel = row_release.empty() ? default_release(ctx.data_dir) : row_release;
  const bool bridge = release_stack(rel, ctx.data_dir).rfind("Megatron-Bridge", 0) == 0;
  if (!parse_precision(get(f, "precision"), notes, hopper, bridge, &p.precision)) {
    *why = "precision '" + get(f, "precision") + "' not recognised";
    return RowOutcome::kSkipped;
  }
  const int world = v->num_gpus;
  PrintedLayout printed;
  const RecipeLayout* recipe = row_recipe(f, ctx, sys, model, row_release, &p, &printed, v);
  const int per_domain = sys.node.gpus * sys.scale_up.domain_nodes;
  try {
    check_parallel_config(model, p, world, per_domain, "row", "");
  } catch (const InputError& e) {
    *why = "configuration not modelled: " + e.message();
    return RowOutcome::kSkipped;
  }
  const int64_t passes = int64_t{world} / p.tp * p.micro_batches() * p.vp * 2;
  if (passes > ctx.options.max_passes) {
    *why = "the step has " + std::to_string(passes) +
           " forward/backward passes to simulate; the limit is " +
           std::to_string(ctx.options.max_passes) + " (raise it with --max-passes)";
    return RowOutcome::kSkipped;
  }
  const ValidationRow before = *v;
  simulate_row(f, metric, ctx, sys, model, p, v);
  judge_with_recipe(f, metric, ctx, sys, model, printed, recipe, before, v);
  return RowOutcome::kModelled;
}

}  // namespace fleetsim
