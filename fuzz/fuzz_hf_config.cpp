// Fuzz target: Hugging Face config.json import (sim/scenario/hf_config.cpp,
// hf_config_hybrid.cpp, hf_config_gpt2.cpp). An accepted config must give finite, positive
// parameter counts and FLOPs, and the zoo JSON `fleetsim model import --out` writes for it must
// load back as a model (sim/scenario/model_loader.cpp) with the same counts.
#include <cmath>
#include <cstdint>

#include "core/error.h"
#include "fuzz_common.h"
#include "scenario/hf_config.h"
#include "scenario/model_loader.h"
#include "workload/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fleetsim::HfImport imp;
  try {
    imp = fleetsim::import_hf_config(fleetsim::fuzz::as_text(data, size), "config.json", "fuzz");
  } catch (const fleetsim::InputError&) {
    return 0;
  }
  const int64_t total = fleetsim::total_params(imp.model);
  const int64_t active = fleetsim::active_params(imp.model);
  if (total <= 0 || active <= 0 || active > total) __builtin_trap();
  const double f = fleetsim::model_flops_per_token(imp.model, 4096);
  if (!std::isfinite(f) || f <= 0) __builtin_trap();
  // What the import writes must load back: an InputError here is a finding.
  const fleetsim::ModelSpec back =
      fleetsim::parse_model_text(fleetsim::zoo_model_json(imp), "zoo.json", "");
  if (fleetsim::total_params(back) != total || fleetsim::active_params(back) != active)
    __builtin_trap();
  return 0;
}
