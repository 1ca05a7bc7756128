// Hugging Face `config.json` in, ModelSpec out. A config.json names its architecture in
// `model_type`; each supported family (hf_model_types(): llama, mistral, mixtral, the qwen
// families, deepseek, kimi, gpt_oss, gpt2, glm4_moe, glm_moe_dsa, gemma2 / gemma3, llama4, olmo,
// minimax_m2, the nemotron, granite and bamba hybrids, qwen3_next and qwen3_5; multimodal
// checkpoints nest the language model in text_config) is mapped field by field onto ModelSpec,
// following the family's transformers
// modeling code (docs/models.md lists every field). Every key of the file is either mapped,
// known to have no effect on compute (token ids, dtype, initialisation, dropout, RoPE / norm
// constants, routing-loss coefficients), or an input error naming the key: nothing that may
// change compute is dropped silently. Architectures fleetsim does not model (pure Mamba-2, Jamba,
// Falcon-H1, Gemma 4, ...) are input errors naming the field that asks for them; what an
// imported model leaves out is listed in its `unmodelled`.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "workload/model.h"

namespace fleetsim {

struct HfImport {
  ModelSpec model;
  std::string model_type;
  // Where each fleetsim field came from, in output order: ("/attention/kv_heads",
  // "config.json:/num_key_value_heads = 8") or ("/tied_embeddings", "default of LlamaConfig").
  std::vector<std::pair<std::string, std::string>> origin;
  // Keys of the file read and found to have no effect on compute ("rope_theta", ...).
  std::vector<std::string> ignored;
};

// Whether `json_text` (already known to be a JSON object) is a Hugging Face config: it has a
// top-level "model_type" key. Throws InputError for invalid JSON.
bool is_hf_config(const std::string& json_text, const std::string& file);

// Maps a config.json onto a model. `name` becomes the id ("" = derived from the file name: its
// stem, or the folder's name when the file is called config.json). Errors name `file` and the
// JSON pointer of the offending key.
HfImport import_hf_config(const std::string& json_text, const std::string& file,
                          const std::string& name);

// The same, reading the file at `path`: a config.json, or a checkpoint folder holding one (as
// transformers' from_pretrained takes it; the folder's name becomes the id).
HfImport import_hf_config_file(const std::string& path, const std::string& name);

// `path` itself, or `path`/config.json when `path` is a folder; a folder without one is an
// input error naming it.
std::string hf_config_file(const std::string& path);

// The imported model as a zoo JSON object (workloads/README.md keys, plus "origin"), pretty
// printed with two-space indentation and a final newline.
std::string zoo_model_json(const HfImport& imp);

// The model_types import_hf_config maps, sorted.
std::vector<std::string> hf_model_types();

}  // namespace fleetsim
