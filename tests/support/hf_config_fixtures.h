// Helpers of the config.json import tests (test_hf_config.cpp, test_hf_config_hybrid.cpp):
// the fixture folder tests/scenario/hf_configs/ (SOURCES.md gives each file's URL), importing a
// fixture or a JSON text, one substring of a text replaced, and a small valid llama config.
// Header only, for tests/, plain as fixtures.h (docs/testing.md).
#pragma once

#include <stdexcept>
#include <string>

#include "scenario/hf_config.h"
#include "support/fixtures.h"

namespace fleetsim::test {

inline const std::string kHfConfigDir = kRoot + "/tests/scenario/hf_configs/";

inline HfImport fixture(const std::string& name) {
  return import_hf_config_file(kHfConfigDir + name + ".json", "");
}

inline HfImport text(const std::string& json) {
  return import_hf_config(json, "c.json", "t");
}

// `json` with the first `from` replaced by `to`; throws (failing the test that called it) when
// `from` is not there, so that an edit of a fixture cannot silently test the unedited text.
inline std::string edited(std::string json, const std::string& from, const std::string& to) {
  const size_t at = json.find(from);
  if (at == std::string::npos) throw std::invalid_argument("edited(): '" + from + "' not found");
  return json.replace(at, from.size(), to);
}

// A small valid llama config; `extra` is spliced into the object.
inline std::string llama(const std::string& extra = "") {
  return R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 256,
    "intermediate_size": 512, "num_attention_heads": 4, "num_key_value_heads": 2,
    "vocab_size": 1000, "max_position_embeddings": 4096)" +
         extra + "}";
}

}  // namespace fleetsim::test
