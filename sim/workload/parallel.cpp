#include "workload/parallel.h"

#include <utility>

namespace fleetsim {

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "?";
}

const char* to_string(PrecisionRecipe p) {
  switch (p) {
    case PrecisionRecipe::kBf16:
      return "bf16";
    case PrecisionRecipe::kFp8Delayed:
      return "fp8_ds";
    case PrecisionRecipe::kFp8Current:
      return "fp8_cs";
    case PrecisionRecipe::kFp8Block:
      return "fp8_blk";
    case PrecisionRecipe::kMxfp8:
      return "mxfp8";
    case PrecisionRecipe::kNvfp4:
      return "nvfp4";
  }
  return "?";
}

const char* to_string(PipelineSchedule s) {
  return s == PipelineSchedule::k1F1B ? "1f1b" : "interleaved";
}

bool parse_recompute(const std::string& s, Recompute* out) {
  for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
    if (s == to_string(r)) {
      *out = r;
      return true;
    }
  }
  return false;
}

bool parse_recompute_module(const std::string& s, unsigned* bit) {
  static const std::pair<const char*, unsigned> kNames[] = {
      {"core_attn", kRecomputeCoreAttn},          {"mlp", kRecomputeMlp},
      {"mla_up_proj", kRecomputeMlaUpProj},       {"moe_act", kRecomputeMoeAct},
      {"layernorm", kRecomputeLayernorm},         {"moe", kRecomputeMoe},
      {"shared_experts", kRecomputeSharedExperts}};
  for (const auto& [name, b] : kNames) {
    if (s == name) {
      *bit = b;
      return true;
    }
  }
  return false;
}

bool parse_precision(const std::string& s, PrecisionRecipe* out) {
  for (PrecisionRecipe p :
       {PrecisionRecipe::kBf16, PrecisionRecipe::kFp8Delayed, PrecisionRecipe::kFp8Current,
        PrecisionRecipe::kFp8Block, PrecisionRecipe::kMxfp8, PrecisionRecipe::kNvfp4}) {
    if (s == to_string(p)) {
      *out = p;
      return true;
    }
  }
  return false;
}

}  // namespace fleetsim
