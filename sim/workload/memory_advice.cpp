// Fit suggestions (see memory_advice.h for the candidates and their order).
#include "workload/memory_advice.h"

#include <cstdio>

#include "core/error.h"

namespace fleetsim {
namespace {

struct Trial {
  std::string change;
  ParallelConfig par;
  MemoryOptions options;
};

// Estimates a trial; a layout the estimator rejects is no candidate.
bool fits(const ModelSpec& m, const Trial& t, int64_t hbm, MemoryBreakdown* r) {
  try {
    *r = estimate_memory(m, t.par, hbm, t.options);
  } catch (const InputError&) {
    return false;
  }
  return r->fits;
}

unsigned selective_modules(const ModelSpec& m) {
  unsigned b = kRecomputeCoreAttn | kRecomputeMlp;
  if (is_moe(m)) b |= kRecomputeMoeAct;
  if (m.attention.kind == AttentionKind::kMla) b |= kRecomputeMlaUpProj;
  return b;
}

// The largest number of decoder layers in one model chunk.
int max_chunk_layers(const ModelSpec& m, const ParallelConfig& p) {
  return (m.layers + p.pp * p.vp - 1) / (p.pp * p.vp);
}

}  // namespace

std::vector<MemoryFix> memory_fixes(const ModelSpec& m, const ParallelConfig& p, int64_t hbm_bytes,
                                    const MemoryOptions& o) {
  std::vector<MemoryFix> out;
  MemoryBreakdown r;
  if (fits(m, {"", p, o}, hbm_bytes, &r)) return out;
  auto keep = [&](const Trial& t) {
    MemoryBreakdown x;
    if (!fits(m, t, hbm_bytes, &x)) return false;
    out.push_back({t.change, t.par, t.options, x});
    return true;
  };
  if (!p.distributed_optimizer && !p.fsdp) {
    Trial t{"distributed optimizer", p, o};
    t.par.distributed_optimizer = true;
    keep(t);
  }
  // The largest smaller micro-batch that fits (the global batch stays).
  for (int b = p.micro_batch / 2; b >= 1; b /= 2) {
    Trial t{"micro-batch " + std::to_string(p.micro_batch) + " -> " + std::to_string(b), p, o};
    t.par.micro_batch = b;
    if (keep(t)) break;
  }
  if (p.recompute == Recompute::kNone) {
    Trial t{"selective recompute (core_attn)", p, o};
    t.par.recompute = Recompute::kSelective;
    t.par.recompute_modules = kRecomputeCoreAttn;
    if (!keep(t)) {
      t.change = "selective recompute (core_attn, mlp" + std::string(is_moe(m) ? ", moe_act" : "") +
                 (m.attention.kind == AttentionKind::kMla ? ", mla_up_proj" : "") + ")";
      t.par.recompute_modules = selective_modules(m);
      keep(t);
    }
  }
  for (int k = 2; k <= 4 && p.dp % k == 0; k *= 2) {
    Trial t{"pp " + std::to_string(p.pp) + " -> " + std::to_string(p.pp * k) + " (dp " +
                std::to_string(p.dp) + " -> " + std::to_string(p.dp / k) + ")",
            p, o};
    t.par.pp = p.pp * k;
    t.par.dp = p.dp / k;
    t.options.layers_per_vstage.clear();
    if (keep(t)) break;
  }
  if (o.offload_modules == 0) {
    Trial t{"activation offloading (attn_norm, core_attn, attn_proj, mlp_norm" +
                std::string(is_moe(m) ? ", expert_fc1, moe_act" : "") + ")",
            p, o};
    t.options.offload_modules = kOffloadAttnNorm | kOffloadCoreAttn | kOffloadAttnProj |
                                kOffloadMlpNorm |
                                (is_moe(m) ? kOffloadExpertFc1 | kOffloadMoeAct : 0u);
    keep(t);
  }
  if (p.recompute != Recompute::kFull) {
    for (int n = 1; n <= max_chunk_layers(m, p); ++n) {
      Trial t{"full recompute of " + std::to_string(n) + " layer(s) per model chunk", p, o};
      t.par.recompute = Recompute::kFull;
      t.par.recompute_layers = n;
      if (keep(t)) break;
    }
  }
  for (int q = 1; q <= 4 && o.optimizer_offload_fraction < 1; ++q) {
    const double f = q * 0.25;
    if (f <= o.optimizer_offload_fraction) continue;
    char buf[64];
    std::snprintf(buf, sizeof buf, "optimizer CPU offload of %.0f %% of its state", f * 100);
    Trial t{buf, p, o};
    t.options.optimizer_offload_fraction = f;
    if (keep(t)) break;
  }
  return out;
}

std::string format_memory_fixes(const std::vector<MemoryFix>& fixes) {
  std::string s;
  for (const MemoryFix& f : fixes) {
    char buf[256];
    const double gib = 1024.0 * 1024 * 1024;
    std::snprintf(buf, sizeof buf, "  %s: %.2f GiB (%.2f GiB allocated, stage %d)\n",
                  f.change.c_str(),
                  static_cast<double>(f.result.reserved + f.result.device_overhead) / gib,
                  static_cast<double>(f.result.total) / gib, f.result.stage);
    s += buf;
  }
  return s;
}

}  // namespace fleetsim
