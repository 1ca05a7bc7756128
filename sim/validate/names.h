// Names as measurements write them → what fleetsim simulates: GPU and system names of vendors,
// clouds and MLPerf system descriptions → a fleetsim system (topologies/*.json); model names of
// benchmark tables, MLPerf and users' logs → a zoo model (workloads/models/); the framework a
// row ran with → whether fleetsim's Megatron-Core / NeMo software model applies.
// The tables are documented in docs/validation.md; tests/validate/test_names.cpp spells each name.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace fleetsim {

// Lower case, only [a-z0-9] kept: "NVIDIA H100-SXM5-80GB" → "nvidiah100sxm580gb".
std::string normalize_hardware_name(const std::string& name);

struct SystemChoice {
  std::string system;     // topologies/<system>.json; empty = no fleetsim system
  std::string family;     // "H100", "GB200", ... (empty when unknown)
  bool aws = false;       // the row says AWS (AWS, EC2, SageMaker, p5 / p5en / p6 names)
  int gpus_per_node = 0;  // stated by the row (notes nodes=NxG, "4 GPU/node"); 0 = not stated
  int nodes = 0;          // stated by the row (notes nodes=NxG); 0 = not stated
  std::string reason;     // why system is empty, with the closest known names
};

// The default fleetsim system for a row's hardware cell and notes (GPU family → system; AWS
// rows → the AWS instance of that GPU). Case-, space- and punctuation-insensitive; DGX / HGX /
// SXM / memory-size suffixes and MLPerf accelerator_model_name strings are recognised.
SystemChoice system_for_hardware(const std::string& hardware, const std::string& notes);

// The GPU family names the table knows, with the default and AWS system of each (for docs,
// tests and "did you mean").
struct HardwareFamily {
  const char* family;
  const char* system;
  const char* aws_system;  // "" = none
};
const std::vector<HardwareFamily>& hardware_families();

// Model names → zoo models. Normalisation: case, spaces, '_', '-', '.', a trailing "-LLM" /
// "LLM", "pretrain" / "pre-training", a parenthesised suffix (kept as the variant: "w/o MTP",
// "tokendrop", "MLPerf llama31_405b"); then the zoo's ids and aliases; then the closest name when
// exactly one zoo model is close; `map` (from --model-map) is consulted first.
struct ModelChoice {
  std::string model;    // zoo id; empty = not resolved
  std::string variant;  // the parenthesised suffix ("w/o MTP"), "" if none
  std::string how;      // "alias", "normalised", "closest", "--model-map"
  std::string reason;   // why model is empty
};

class ModelResolver {
 public:
  // data_dir holds workloads/models/. map: normalised name → zoo id or model JSON path.
  ModelResolver(const std::string& data_dir, std::map<std::string, std::string> map = {});
  ModelChoice resolve(const std::string& name) const;

 private:
  std::map<std::string, std::string> map_;
  std::map<std::string, std::string> keys_;  // normalised id or alias → id
  std::vector<std::string> key_list_;
};

// Reads a --model-map CSV: header `name,model`, one row per name (name as the measurements
// write it, model a zoo id or a model JSON path). InputError with the line on bad input.
std::map<std::string, std::string> load_model_map(const std::string& path);

// The framework a row ran with: notes `framework=X`, or the model name's first word when it is
// a framework ("Maxtext llama2-70b", "Paxml gpt3"). Lower case; "" when the row does not say.
std::string framework_of(const std::string& model, const std::string& notes);

// True for frameworks fleetsim's software model describes (names starting with NeMo, Megatron,
// mcore) and for rows that do not say (NVIDIA's performance tables).
bool framework_modelled(const std::string& framework);

}  // namespace fleetsim
