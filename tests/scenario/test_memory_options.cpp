// The training workload's framework.memory object (scenario loader → workload/memory.h
// MemoryOptions): a recipe to start from, keys overriding it, errors with their JSON pointer.
#include <catch2/catch.hpp>

#include <string>

#include "core/error.h"
#include "scenario/scenario.h"
#include "support/fixtures.h"
#include "workload/memory.h"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {

std::string scenario(const std::string& memory) {
  return R"({"name": "m", "cluster": {"system": "p6-b200.48xlarge", "count": 2},
    "workload": {"type": "training", "model": "llama3-8b", "parallelism": {"tp": 2},
    "batch": {"global": 16, "micro": 1, "seq_len": 4096},
    "framework": {"memory": )" +
         memory + "}}}";
}

std::string error_of(const std::string& text) {
  try {
    parse_scenario(text, "s.json", load_options());
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("framework.memory: recipe, dtypes, offload, loss, allocator") {
  Scenario s =
      parse_scenario(scenario(R"({"recipe": "megatron-bridge-perf"})"), "s.json", load_options());
  CHECK(s.training->fw.memory.grad_bytes == 2);
  CHECK(s.training->fw.memory.cross_entropy == CrossEntropyImpl::kTe);
  CHECK(s.training->fw.memory.expandable_segments);
  s = parse_scenario(scenario(R"({"main_grads": "bf16", "exp_avg": "bf16", "exp_avg_sq": "fp8",
      "fp8_param_gather": true, "optimizer_offload_fraction": 0.5,
      "offload_modules": ["core_attn", "attn_proj"], "cpu_offload_layers": 20, "cross_entropy": "te",
      "moe_token_factor": 1.25, "moe_permute_fusion": false, "expandable_segments": true})"),
                     "s.json", load_options());
  const MemoryOptions& o = s.training->fw.memory;
  CHECK(o.grad_bytes == 2);
  CHECK(o.exp_avg_bytes == 2);
  CHECK(o.exp_avg_sq_bytes == 1);
  CHECK(o.master_bytes == 4);
  CHECK(o.fp8_param_gather);
  CHECK(o.optimizer_offload_fraction == 0.5);
  CHECK(o.offload_modules == (kOffloadCoreAttn | kOffloadAttnProj));
  CHECK(o.cpu_offload_layers == 20);
  CHECK(o.cross_entropy == CrossEntropyImpl::kTe);
  CHECK(o.moe_token_factor == 1.25);
  CHECK_FALSE(o.moe_permute_fusion);
  CHECK(o.expandable_segments);
}

TEST_CASE("framework.memory: bad values name the pointer") {
  CHECK_THAT(error_of(scenario(R"({"main_grads": "fp16"})")),
             Catch::Contains("s.json:/workload/framework/memory/main_grads"));
  CHECK_THAT(error_of(scenario(R"({"offload_modules": ["mlp"]})")),
             Catch::Contains("/workload/framework/memory/offload_modules/0: expected one of"));
  CHECK_THAT(error_of(scenario(R"({"optimizer_offload_fraction": 2})")),
             Catch::Contains("/workload/framework/memory/optimizer_offload_fraction"));
  CHECK_THAT(error_of(scenario(R"({"expandable_segment": true})")),
             Catch::Contains("did you mean 'expandable_segments'"));
}
