// Model loader (sim/scenario/model_loader.cpp): lookup by id, alias and path; strictness;
// rejection of features fleetsim cannot model; the zoo is what import_models.py generates.
#include <catch2/catch.hpp>
#include <cstdlib>

#include "core/error.h"
#include "scenario/model_loader.h"
#include "support/fixtures.h"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {
// A minimal valid dense model; `extra` is spliced into the top-level object.
std::string model_json(const std::string& extra = "", const std::string& attention = "") {
  return R"({"id": "tiny", "layers": 2, "hidden": 64, "ffn": 256, "vocab": 1000, "mlp": "gated",
    "tied_embeddings": false, "max_seq_len": 128,
    "attention": {"kind": "gqa", "heads": 4, "kv_heads": 2, "head_dim": 16)" +
         attention + "}" + extra + "}";
}
}  // namespace

TEST_CASE("the zoo holds the 24 reference models and 11 hybrid ones") {
  const auto ids = known_models(kRoot);
  // One per row of model-configs.csv, and one per row of model-configs-hybrid.csv whose layers
  // fleetsim models (workloads/import_models.py HYBRID_IDS).
  CHECK(ids.size() == 24 + 11);
  for (const auto& id : ids) {
    INFO(id);
    const ModelSpec m = load_model(id, kRoot);
    CHECK(m.name == id);
    CHECK_FALSE(m.source.empty());
  }
}

TEST_CASE("models load by id, alias and path") {
  CHECK(load_model("llama3.1-405b", kRoot).layers == 126);
  // Aliases from nemo_performance_summary.csv, case and separators ignored.
  CHECK(load_model("LLAMA3.1_405B", kRoot).name == "llama3.1-405b");
  CHECK(load_model("LLAMA3-405B", kRoot).name == "llama3.1-405b");
  CHECK(load_model("DeepSeekV3 (tokendrop)", kRoot).name == "deepseek-v3");
  CHECK(load_model("Mixtral 8x7B", kRoot).name == "mixtral-8x7b");
  const ModelSpec m = load_model(kRoot + "/workloads/models/qwen3-30b-a3b.json", kRoot);
  CHECK(m.moe.experts == 128);
  CHECK(m.attention.qk_norm);
}

TEST_CASE("an unknown model names the closest ones") {
  CHECK_THROWS_WITH(load_model("llama3-8c", kRoot),
                    Catch::Contains("unknown model 'llama3-8c'") &&
                        Catch::Contains("did you mean 'llama3-8b'") &&
                        Catch::Contains("mixtral-8x7b"));
}

TEST_CASE("inline models parse with errors under the scenario's pointer") {
  const ModelSpec m = parse_model_text(model_json(), "s.json", "/workload/model");
  CHECK(m.layers == 2);
  CHECK(m.attention.kv_heads == 2);
  CHECK_THROWS_WITH(parse_model_text(model_json(R"(, "hiden": 3)"), "s.json", "/workload/model"),
                    Catch::Contains("s.json") && Catch::Contains("/workload/model/hiden") &&
                        Catch::Contains("did you mean 'hidden'"));
  // heads must be divisible by kv_heads.
  std::string bad = model_json();
  bad.replace(bad.find("\"kv_heads\": 2"), 13, "\"kv_heads\": 3");
  CHECK_THROWS_WITH(parse_model_text(bad, "s.json", "/workload/model"),
                    Catch::Contains("/workload/model/attention/kv_heads") &&
                        Catch::Contains("must divide heads (4)"));
  // MLA ranks only with kind "mla".
  CHECK_THROWS_WITH(parse(model_json("", R"(, "kv_lora_rank": 8)"), "s.json"),
                    Catch::Contains("/attention/kv_lora_rank") &&
                        Catch::Contains("only valid with kind \"mla\""));
  // A dense model needs an FFN width.
  std::string noffn = model_json();
  noffn.replace(noffn.find("\"ffn\": 256"), 10, "\"ffn\": 0");
  CHECK_THROWS_WITH(parse(noffn, "s.json"), Catch::Contains("/ffn"));
}

TEST_CASE("a feature that changes compute materially is rejected, never approximated") {
  const std::string mamba = model_json(
      R"(, "unmodelled": [{"feature": "mamba_layers", "impact": "material",
          "note": "hybrid Mamba-2 / attention stack"}])");
  CHECK_THROWS_WITH(parse(mamba, "m.json"), Catch::Contains("/unmodelled/0/impact") &&
                                                Catch::Contains("mamba_layers") &&
                                                Catch::Contains("cannot model"));
  const std::string sinks = model_json(
      R"(, "unmodelled": [{"feature": "attention_sinks", "impact": "small", "note": "x"}])");
  CHECK(parse(sinks, "m.json").unmodelled.size() == 1);
}

TEST_CASE("model_keys lists what a model file may contain") {
  const auto keys = model_keys();
  for (const char* k : {"layers", "hidden", "attention", "moe", "benchmark_vocab", "unmodelled"})
    CHECK(std::find(keys.begin(), keys.end(), k) != keys.end());
}

TEST_CASE("the committed zoo is what import_models.py generates") {
  const std::string cmd = "/usr/bin/python3 " + kRoot + "/workloads/import_models.py --check";
  CHECK(std::system(cmd.c_str()) == 0);
}
