#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "scenario/scenario.h"
#include "support/fixtures.h"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {
std::string error_of(const std::string& text) {
  try {
    parse_scenario(text, "s.json", load_options());
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}
const char* kGood = R"({"name": "t", "cluster": {"system": "p6-b200.48xlarge", "count": 2},
  "workload": {"type": "collective", "operation": "all_reduce", "sizes": ["1MiB"]}})";
}  // namespace

TEST_CASE("every file in scenarios/ loads") {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(kRoot + "/scenarios")) {
    if (e.path().extension() != ".json") continue;
    INFO(e.path());
    CHECK_NOTHROW(load_scenario(e.path().string(), load_options()));
    ++n;
  }
  CHECK(n >= 4);
}

TEST_CASE("a valid scenario gives typed values") {
  const Scenario s = parse_scenario(kGood, "s.json", load_options());
  CHECK(s.nodes == 2);
  CHECK(s.collective->sizes.at(0).count() == 1 << 20);
  CHECK(s.fabric.routing == Routing::kSrd);
  CHECK(s.collective_params.eta_ring > 0);
}

TEST_CASE("bad scenarios name the file, the JSON pointer and what was expected") {
  CHECK(error_of(R"({"name": "t", "clustre": {}})") ==
        "s.json:/clustre: unknown key 'clustre'; did you mean 'cluster'?");
  CHECK(
      error_of(
          R"({"name": "t", "cluster": {"system": "p6-b200.48xlarge", "count": "two"}, "workload": {}})") ==
      "s.json:/cluster/count: expected an integer, got a string \"two\"");
  CHECK(
      error_of(
          R"({"name": "t", "cluster": {"system": "p6-b200.48xlarge", "count": 0}, "workload": {}})") ==
      "s.json:/cluster/count: expected an integer in [1, 1048576], got 0");
  CHECK(error_of(R"({"name": "t", "cluster": {"system": "p6-b200.48xlarge", "count": 2},
     "workload": {"type": "collective", "operation": "all_reduse", "sizes": ["1MiB"]}})") ==
        "s.json:/workload/operation: expected one of 'all_reduce', 'all_gather', 'reduce_scatter', "
        "'all_to_all', "
        "'broadcast', 'send_recv', got 'all_reduse'; did you mean 'all_reduce'?");
  CHECK(error_of(R"({"name": "t", "cluster": {"system": "p6-b200.48xlarge", "count": 2},
     "workload": {"type": "collective", "operation": "all_reduce", "sizes": ["1MiB", "3 furlongs"]}})")
            .rfind("s.json:/workload/sizes/1: expected a size", 0) == 0);
  CHECK(
      error_of(R"({"name": "t", "cluster": {"system": "p6-b200", "count": 2}, "workload": {}})")
          .rfind(
              "s.json:/cluster/system: unknown system 'p6-b200'; did you mean 'p6-b200.48xlarge'?",
              0) == 0);
  CHECK(error_of(R"({"name": "t", "name": "u"})") == "s.json:/name: duplicate key 'name'");
  CHECK(error_of(R"({"name": "t", "cluster": {"system": "p6-b200.48xlarge", "count": 2}})") ==
        "s.json:/workload: missing required key 'workload'");
  CHECK(error_of("{\"name\": ").rfind("s.json:/: not valid JSON", 0) == 0);
  CHECK(
      error_of(
          R"({"name": "t", "cluster": {"system": "p6-b200.48xlarge", "count": 100000}, "workload": {}})") ==
      "s.json:/cluster/count: cluster has 800000 GPUs; the limit is 131072 (raise it with "
      "--max-gpus)");
  CHECK(
      error_of(
          R"({"name": "t", "cluster": {"system": "p6-b200.48xlarge", "count": 2, "fabric": {"oversubscription": 0.5}},
     "workload": {"type": "collective", "operation": "all_reduce", "sizes": ["1MiB"]}})") ==
      "s.json:/cluster/fabric/oversubscription: expected a number in [1, 64], got 0.5");
  // Megatron-Core refuses the EP all-to-all overlap with pp > 1 and no virtual pipeline.
  CHECK(error_of(
            R"({"name": "t", "cluster": {"system": "p6-b200.48xlarge", "count": 4},
     "workload": {"type": "training", "model": "mixtral-8x7b", "parallelism": {"pp": 2, "ep": 8},
                  "batch": {"global": 64, "micro": 1, "seq_len": 4096},
                  "framework": {"ep_comm_overlap": true}}})") ==
        "s.json:/workload/framework/ep_comm_overlap: EP all-to-all overlap needs the interleaved "
        "schedule (vp > 1) when pp > 1, as in Megatron-Core");
  // kernel_gap was removed (docs/training-model.md "Host side"): the error names the
  // replacement.
  CHECK(error_of(
            R"({"name": "t", "cluster": {"system": "p6-b200.48xlarge", "count": 1},
     "workload": {"type": "training", "model": "llama3-8b", "parallelism": {"dp": 8},
                  "batch": {"global": 8, "micro": 1, "seq_len": 4096},
                  "framework": {"kernel_gap": "5us"}}})")
            .rfind("s.json:/workload/framework/kernel_gap: kernel_gap was removed: the host side "
                   "is modelled per launch from calibration/host/host-costs.csv",
                   0) == 0);
  // A whole-iteration CUDA graph cannot hold the dropless alltoall dispatcher's token-count
  // sync.
  CHECK(error_of(
            R"({"name": "t", "cluster": {"system": "p6-b200.48xlarge", "count": 1},
     "workload": {"type": "training", "model": "mixtral-8x7b", "parallelism": {"ep": 8},
                  "batch": {"global": 64, "micro": 1, "seq_len": 4096},
                  "framework": {"cuda_graphs": "full_iteration"}}})")
            .rfind("s.json:/workload/framework/cuda_graphs: full_iteration CUDA graphs need a "
                   "sync-free MoE dispatcher",
                   0) == 0);
  std::string deep(200, '[');
  CHECK(error_of(deep).find("nesting deeper than 64 levels") != std::string::npos);
}

TEST_CASE("the JSON Schema and the loader know the same keys") {
  std::ifstream in(kRoot + "/scenarios/schema/scenario.schema.json");
  const auto schema = nlohmann::json::parse(in);
  // Follows "$ref": "#/$defs/NAME".
  auto resolve = [&](nlohmann::json node) {
    while (node.contains("$ref")) {
      const std::string ref = node["$ref"];
      node = schema["$defs"][ref.substr(ref.rfind('/') + 1)];
    }
    return node;
  };
  // "/workload#training/batch": the "workload" alternative whose type is "training".
  auto props_at = [&](const std::string& ptr) {
    nlohmann::json node = schema;
    std::string rest = ptr;
    while (!rest.empty()) {
      const size_t next = rest.find('/', 1);
      std::string key = rest.substr(1, next == std::string::npos ? std::string::npos : next - 1);
      rest = next == std::string::npos ? "" : rest.substr(next);
      std::string variant;
      if (const auto h = key.find('#'); h != std::string::npos) {
        variant = key.substr(h + 1);
        key = key.substr(0, h);
      }
      node = resolve(node["properties"][key]);
      if (node.contains("oneOf")) {
        nlohmann::json chosen;
        for (const auto& a : node["oneOf"]) {
          const nlohmann::json alt = resolve(a);
          if (!alt.contains("properties")) continue;
          const bool typed =
              alt["properties"].contains("type") && alt["properties"]["type"].contains("enum");
          const std::string type =
              typed ? alt["properties"]["type"]["enum"][0].get<std::string>() : std::string();
          if (variant.empty() ? chosen.is_null() : type == variant) chosen = alt;
        }
        node = chosen;
      }
    }
    std::set<std::string> keys;
    for (const auto& [k, v] : node["properties"].items())
      keys.insert(k);
    return keys;
  };
  for (const auto& [ptr, keys] : scenario_keys()) {
    INFO("pointer " << ptr);
    CHECK(props_at(ptr) == std::set<std::string>(keys.begin(), keys.end()));
  }
}

TEST_CASE("closest_match suggests near keys only") {
  CHECK(closest_match("sedd", {"seed", "name"}) == "seed");
  CHECK(closest_match("zzzzzz", {"seed", "name"}).empty());
}

TEST_CASE("framework.moe_dispatcher names a dispatcher or an EP library and mode") {
  auto dispatcher = [](const std::string& name) {
    const std::string text =
        R"({"name": "t", "cluster": {"system": "p6-b200.48xlarge", "count": 2},
     "workload": {"type": "training", "model": "mixtral-8x7b", "parallelism": {"ep": 8},
                  "batch": {"global": 16, "micro": 1, "seq_len": 4096},
                  "framework": {"moe_dispatcher": ")" +
        name + R"("}}})";
    return parse_scenario(text, "s.json", load_options()).training->fw.moe_dispatcher;
  };
  CHECK(dispatcher("alltoall") == MoeDispatcher::kAllToAll);
  CHECK(dispatcher("nccl") == MoeDispatcher::kAllToAll);
  CHECK(dispatcher("deepep") == MoeDispatcher::kDeepEp);
  CHECK(dispatcher("deepep-low-latency") == MoeDispatcher::kDeepEpLowLatency);
  CHECK(dispatcher("hybridep") == MoeDispatcher::kHybridEp);
  CHECK(dispatcher("uccl-ep") == MoeDispatcher::kUcclEp);
  CHECK(dispatcher("uccl-ep-low-latency") == MoeDispatcher::kUcclEpLowLatency);
  CHECK(dispatcher("pplx") == MoeDispatcher::kPplx);
  CHECK(dispatcher("nvlink-one-sided") == MoeDispatcher::kNvlinkOneSided);
  CHECK(error_of(R"({"name": "t", "cluster": {"system": "p6-b200.48xlarge", "count": 2},
     "workload": {"type": "training", "model": "mixtral-8x7b", "parallelism": {"ep": 8},
                  "batch": {"global": 16, "micro": 1, "seq_len": 4096},
                  "framework": {"moe_dispatcher": "hybrid-ep"}}})")
            .find("/workload/framework/moe_dispatcher: expected one of") != std::string::npos);
}
