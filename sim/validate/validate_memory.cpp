// Memory rows of a reference CSV (see validate_memory.h).
#include "validate/validate_memory.h"

#include <cstdio>
#include <regex>

#include "core/error.h"
#include "scenario/model_loader.h"
#include "workload/memory.h"

namespace fleetsim {
namespace {

bool has(const std::string& s, const char* sub) {
  return s.find(sub) != std::string::npos;
}

std::string get(const std::map<std::string, std::string>& f, const char* k) {
  auto it = f.find(k);
  return it == f.end() ? "" : it->second;
}

// Empty = `dflt`; otherwise a positive integer.
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

// The first integer after `key` in the notes (key includes its '='), or -1.
int note_int(const std::string& notes, const std::string& key) {
  const std::regex re("(^|[ ;(])" + key + R"((\d+))");
  std::smatch m;
  if (!std::regex_search(notes, m, re) || m[2].length() > 7) return -1;
  return std::stoi(m[2].str());
}

// The HBM of the row's GPU, only to print `fits`: the model name in the hardware column.
int64_t hbm_of(const std::string& hw) {
  const auto gb = [](double x) { return static_cast<int64_t>(x * 1e9); };
  if (has(hw, "GB200")) return gb(186);
  if (has(hw, "B200")) return gb(180);
  // H200 141 GB: 139.80 GiB, what the CUDA driver reports (topologies/hgx-h200.json /gpu/hbm).
  if (has(hw, "H200")) return static_cast<int64_t>(139.80 * (1 << 30));
  if (has(hw, "96GB")) return gb(96);
  // H100 80GB: 79.11 GiB, what the CUDA driver reports (topologies/dgx-h100.json /gpu/hbm).
  if (has(hw, "H100")) return static_cast<int64_t>(79.11 * (1 << 30));
  if (has(hw, "A100")) return gb(80);
  return 0;
}

enum class Stat { kAllocated, kReserved, kPersistent, kDevice };

}  // namespace

bool is_memory_metric(const std::string& metric) {
  static const char* kNames[] = {"peak_allocated_gib",
                                 "peak_allocated_gb",
                                 "peak_reserved_gib",
                                 "allocated_after_step_gib",
                                 "peak_allocated_max_over_run_gib",
                                 "device_memory_used_gib",
                                 "peak_memory_gb",
                                 "peak_memory_gib",
                                 "peak_active_gib",
                                 "oom_observed"};
  for (const char* n : kNames)
    if (metric == n) return true;
  return false;
}

std::string memory_row_source(const std::string& url) {
  if (has(url, "SimuMax")) return "SimuMax (Megatron-LM, B200)";
  if (has(url, "Megatron-LM")) return "Megatron-LM CI";
  if (has(url, "Megatron-Bridge")) return "Megatron-Bridge";
  if (has(url, "torchtitan")) return "torchtitan";
  if (has(url, "pytorch/ao")) return "torchao";
  if (has(url, "torchtune")) return "torchtune";
  return "other";
}

// size-exception: one row's mapping, column by column and knob by knob, reads best in one place
bool predict_memory_row(const std::map<std::string, std::string>& f, const std::string& data_dir,
                        ValidationRow* v, std::string* why) {
  const std::string notes = get(f, "notes");
  Stat stat;
  double unit = 1024.0 * 1024 * 1024;
  const std::string& metric = v->metric;
  if (metric == "peak_allocated_gib") {
    stat = Stat::kAllocated;
  } else if (metric == "peak_allocated_gb") {
    stat = Stat::kAllocated;
    unit = 1e9;
  } else if (metric == "peak_reserved_gib") {
    stat = Stat::kReserved;
  } else if (metric == "allocated_after_step_gib") {
    stat = Stat::kPersistent;
  } else if (metric == "device_memory_used_gib") {
    stat = Stat::kDevice;
  } else if (metric == "peak_allocated_max_over_run_gib") {
    *why = "the run maximum of the same run's peak_allocated row (compared once)";
    return false;
  } else if (metric == "oom_observed") {
    *why = "an out-of-memory observation without a byte count";
    return false;
  } else {
    *why = "metric '" + metric + "': the source does not say which allocator statistic it is";
    return false;
  }
  const bool torch_fsdp = has(notes, "framework=torchtitan");
  if (has(notes, "framework=torchtune") || (!torch_fsdp && !has(notes, "Megatron"))) {
    *why = "framework not modelled (fleetsim models Megatron-Core and torchtitan's FSDP2)";
    return false;
  }
  // Model, with the proxy's layer / expert / MTP counts from the notes.
  std::string name = v->model;
  if (const auto p = name.find(" ("); p != std::string::npos) name = name.substr(0, p);
  ModelSpec model;
  try {
    model = load_model(name, data_dir);
  } catch (const InputError& e) {
    *why = "no model definition: " + e.message();
    return false;
  }
  if (has(v->model, "proxy") || has(v->model, "arch")) {
    *why = "a proxy / variant architecture not in the model zoo";
    return false;
  }
  if (const int n = note_int(notes, "layers="); n > 0) model.layers = n;
  if (const int n = note_int(notes, "dense_layers="); n >= 0) model.moe.first_k_dense = n;
  if (const int n = note_int(notes, "num_experts="); n > 0) model.moe.experts = n;
  if (has(notes, "mtp=none")) model.mtp_layers = 0;
  if (const int n = note_int(notes, "mtp_num_layers="); n >= 0) model.mtp_layers = n;

  ParallelConfig p;
  int gbs = 0;
  if (get(f, "mbs").empty()) {
    *why = "micro-batch size not stated";
    return false;
  }
  if (!int_or(get(f, "gbs"), 0, &gbs) || !int_or(get(f, "mbs"), 1, &p.micro_batch) ||
      !int_or(get(f, "seq_len"), 0, &p.seq_len) || !int_or(get(f, "tp"), 1, &p.tp) ||
      !int_or(get(f, "pp"), 1, &p.pp) || !int_or(get(f, "cp"), 1, &p.cp) ||
      !int_or(get(f, "vp"), 1, &p.vp) || !int_or(get(f, "ep"), 1, &p.ep) ||
      !int_or(get(f, "etp"), 1, &p.etp) || p.seq_len < 1 || gbs < 1) {
    *why = "a batch or parallel column is not a positive integer";
    return false;
  }
  p.global_batch = gbs;
  const int model_ranks = p.tp * p.pp * p.cp;
  if (!get(f, "dp").empty()) {
    if (!int_or(get(f, "dp"), 1, &p.dp)) {
      *why = "dp is not a positive integer";
      return false;
    }
  } else if (v->num_gpus >= model_ranks && v->num_gpus % model_ranks == 0) {
    p.dp = v->num_gpus / model_ranks;
  } else {
    *why = "data-parallel size not stated (the optimizer's shard is unknown)";
    return false;
  }
  if (p.ep > 1 && get(f, "etp").empty()) p.etp = 1;
  const std::string rc = get(f, "recompute");
  if (rc.rfind("none", 0) == 0) {
    p.recompute = Recompute::kNone;
  } else if (rc.rfind("selective", 0) == 0) {
    p.recompute = Recompute::kSelective;
  } else if (rc.rfind("full", 0) == 0) {
    p.recompute = Recompute::kFull;
  } else {
    *why = "recompute '" + rc + "' not stated";
    return false;
  }
  if (torch_fsdp && p.recompute == Recompute::kSelective) {
    *why = "torchtitan's per-op selective activation checkpointing policy is not modelled";
    return false;
  }
  p.sequence_parallel = !has(notes, "sequence_parallel=false");
  p.fsdp = !get(f, "fsdp").empty();
  const std::string prec = get(f, "precision");
  if (torch_fsdp || prec.rfind("bf16", 0) == 0) {
    p.precision = PrecisionRecipe::kBf16;  // torchao's Float8Linear: bf16 accounting
  } else {
    *why = "precision '" + prec + "' not recognised";
    return false;
  }

  // recipe=megatron-bridge-perf: a run of Megatron-Bridge's performance recipes starts from
  // their memory options (bf16 main gradients, TE cross entropy, expandable segments).
  MemoryOptions o =
      has(notes, "recipe=megatron-bridge-perf") ? megatron_bridge_perf_options() : MemoryOptions{};
  if (has(notes, "attention_backend=unfused")) o.flash_attention = false;
  o.expandable_segments = o.expandable_segments || has(notes, "expandable_segments:True");
  if (has(notes, "grad_reduce_in_fp32=false")) o.grad_bytes = 2;
  // Which rank the source reports.
  int stage = -1;  // the most loaded
  std::smatch m;
  static const std::regex stage_re(R"(rank=pp stage (\d+))");
  if (std::regex_search(notes, m, stage_re) && m[1].length() < 4) stage = std::stoi(m[1].str());
  if (has(notes, "last global rank") || has(notes, "(last stage")) stage = p.pp - 1;
  if (stage >= p.pp) {
    *why = "the reported stage is outside the pipeline";
    return false;
  }
  const int64_t hbm = hbm_of(v->hardware);
  MemoryBreakdown r;
  try {
    r = stage >= 0 ? estimate_memory_stage(model, p, hbm, o, stage)
                   : estimate_memory(model, p, hbm, o);
  } catch (const InputError& e) {
    *why = "configuration not modelled: " + e.message();
    return false;
  }
  int64_t bytes = r.total;
  if (stat == Stat::kReserved) bytes = r.reserved;
  if (stat == Stat::kPersistent) bytes = r.persistent();
  if (stat == Stat::kDevice) bytes = r.reserved + r.device_overhead;
  v->predicted = static_cast<double>(bytes) / unit;
  char cfg[200];
  std::snprintf(cfg, sizeof cfg, "%s L%d tp%d pp%d cp%d vp%d ep%d dp%d mbs%d seq%d %s%s stage %d",
                model.name.c_str(), model.layers, p.tp, p.pp, p.cp, p.vp, p.ep, p.dp, p.micro_batch,
                p.seq_len, to_string(p.recompute), p.fsdp ? " fsdp" : "", r.stage);
  v->config = cfg;
  return true;
}

}  // namespace fleetsim
