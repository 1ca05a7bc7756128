// Hardware, model and framework names of measurement rows (names.h). The hardware table follows
// the systems fleetsim has topologies for (topologies/README.md): HGX / DGX 8-GPU InfiniBand
// nodes for Hopper and B200 / B300, NVL72 racks for GB200 / GB300, the AWS instances of each GPU.
#include "validate/names.h"

#include <algorithm>
#include <cctype>
#include <regex>

#include "core/csv.h"
#include "core/error.h"
#include "scenario/model_loader.h"
#include "scenario/scenario.h"
#include "workload/model.h"

namespace fleetsim {
namespace {

std::string lower(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// Levenshtein distance, for "exactly one model is closest" (closest_match in scenario/ only
// returns the best candidate, not whether a second one is as close).
size_t distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] =
          std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

int to_int(const std::string& s) {
  return s.size() > 6 ? 0 : std::stoi(s);
}

}  // namespace

std::string normalize_hardware_name(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// The GPU family table, documented in docs/validation.md.
const std::vector<HardwareFamily>& hardware_families() {
  // Checked in this order: "gb200" before "b200", so the Grace-Blackwell names win.
  static const std::vector<HardwareFamily> kFamilies = {
      {"GB300", "dgx-gb300-nvl72", ""},
      {"GB200", "dgx-gb200-nvl72", "p6e-gb200-ultraserver-72"},
      {"B300", "dgx-b300", "p6-b300.48xlarge"},
      {"B200", "dgx-b200", "p6-b200.48xlarge"},
      {"H200", "hgx-h200", "p5en.48xlarge"},
      {"H100", "dgx-h100", "p5.48xlarge"},
  };
  return kFamilies;
}

SystemChoice system_for_hardware(const std::string& hardware, const std::string& notes) {
  SystemChoice c;
  const std::string norm = normalize_hardware_name(hardware);
  const std::string text = lower(hardware + " " + notes);
  static const std::regex aws_re(
      R"(\b(aws|ec2|sagemaker|p5|p5e|p5en|p6|p6e)\b|p5(en)?\.48xlarge|p6-b[23]00|p6e-gb200)");
  c.aws = std::regex_search(text, aws_re);
  std::smatch m;
  // MLPerf system descriptions: "nodes=256x4 GPUs"; cloud and paper rows: "4 GPU/node",
  // "8 GPUs/server", "4 GPUs per node".
  static const std::regex layout_re(R"(nodes\s*=\s*(\d{1,6})\s*x\s*(\d{1,3}))");
  static const std::regex per_node_re(R"((\d{1,3})\s*gpus?\s*(/|per)\s*(node|server|tray|host))");
  if (std::regex_search(text, m, layout_re)) {
    c.nodes = to_int(m[1].str());
    c.gpus_per_node = to_int(m[2].str());
  } else if (std::regex_search(text, m, per_node_re)) {
    c.gpus_per_node = to_int(m[1].str());
  }
  for (const auto& f : hardware_families()) {
    if (norm.find(lower(f.family)) != std::string::npos) {
      c.family = f.family;
      c.system = c.aws ? f.aws_system : f.system;
      break;
    }
  }
  static const std::regex card_re(R"(pcie|\bnvl\b(?!\s*\d))");
  const std::string hw = lower(hardware);
  if (!c.family.empty() && std::regex_search(hw, card_re)) {
    c.reason = "hardware '" + hardware + "' is a PCIe / NVL card (" + c.family +
               " without NVSwitch HGX baseboard); fleetsim models SXM systems only";
    c.system.clear();
    return c;
  }
  if (c.family.empty()) {
    std::vector<std::string> names;
    for (const auto& f : hardware_families())
      names.push_back(lower(f.family));
    std::string near;
    for (const auto& f : hardware_families()) {
      // The GPU name closest to any word of the cell ("A100-SXM4" → nothing, "H10O" → h100).
      static const std::regex word_re(R"([a-z0-9]+)");
      for (auto it = std::sregex_iterator(hw.begin(), hw.end(), word_re);
           it != std::sregex_iterator() && near.empty(); ++it) {
        const std::string w = it->str();
        if (w.size() >= 3 && distance(w, lower(f.family)) == 1) near = f.family;
      }
    }
    std::string known;
    for (const auto& f : hardware_families())
      known += std::string(known.empty() ? "" : ", ") + f.family;
    c.reason = "no fleetsim system for hardware '" + hardware + "'" +
               (near.empty() ? "" : " (did you mean " + near + "?)") + "; known GPUs: " + known +
               " (or give a system column / --system)";
    return c;
  }
  if (c.system.empty()) {
    c.reason = "no fleetsim topology for " + c.family + " on AWS; give a system column / --system";
  }
  return c;
}

ModelResolver::ModelResolver(const std::string& data_dir, std::map<std::string, std::string> map) {
  for (auto& [k, v] : map)
    map_[normalize_model_name(k)] = v;
  for (const auto& id : known_models(data_dir)) {
    keys_[normalize_model_name(id)] = id;
    for (const auto& a : load_model(id, data_dir).aliases)
      keys_[normalize_model_name(a)] = id;
  }
  for (const auto& [k, id] : keys_)
    key_list_.push_back(k);
}

ModelChoice ModelResolver::resolve(const std::string& raw) const {
  ModelChoice c;
  std::string name = trim(raw);
  if (const auto p = name.find('('); p != std::string::npos && name.back() == ')') {
    c.variant = trim(name.substr(p + 1, name.size() - p - 2));
    name = trim(name.substr(0, p));
  }
  if (auto it = map_.find(normalize_model_name(raw)); it != map_.end()) {
    c.model = it->second;
    c.how = "--model-map";
    return c;
  }
  if (auto it = map_.find(normalize_model_name(name)); it != map_.end()) {
    c.model = it->second;
    c.how = "--model-map";
    return c;
  }
  std::string key = normalize_model_name(name);
  if (auto it = keys_.find(key); it != keys_.end()) {
    c.model = it->second;
    c.how = "alias";
    return c;
  }
  // Words that name the task or the product line, not the architecture.
  std::string low = lower(name);
  static const std::regex noise_re(R"((^|[\s_-])(pre-?training|pretrain|llm)$)");
  while (std::regex_search(low, noise_re))
    low = std::regex_replace(low, noise_re, "");
  key = normalize_model_name(low);
  if (auto it = keys_.find(key); it != keys_.end()) {
    c.model = it->second;
    c.how = "normalised";
    return c;
  }
  // The closest zoo name: a typo (one edit, two in names of 12+ characters) of exactly one
  // model, every other model at least two edits further ("lama3-70b"; not "llama3", which is as
  // near to llama3-8b as to llama3-70b).
  size_t best = std::string::npos, second = std::string::npos;
  std::string best_id;
  for (const auto& k : key_list_) {
    const size_t d = distance(key, k);
    const std::string& id = keys_.at(k);
    if (d < best) {
      if (id != best_id) second = best;
      best = d;
      best_id = id;
    } else if (id != best_id && d < second) {
      second = d;
    }
  }
  const size_t limit = key.size() >= 12 ? 2 : 1;
  if (!key.empty() && best <= limit && (second == std::string::npos || second >= best + 2)) {
    c.model = best_id;
    c.how = "closest";
    return c;
  }
  const std::string near = closest_match(key, key_list_);
  c.reason = "no zoo model for '" + raw + "'";
  if (!near.empty()) {
    c.reason +=
        " (closest: '" + keys_.at(near) + "'" +
        (second != std::string::npos && second < best + 2 ? ", but another model is as close)"
                                                          : ")");
  }
  c.reason += "; map it with --model-map FILE (CSV name,model)";
  return c;
}

std::map<std::string, std::string> load_model_map(const std::string& path) {
  const CsvTable t = parse_csv(read_text_file(path), path);
  const int cn = t.column("name"), cm = t.column("model");
  if (cn < 0 || cm < 0) throw InputError(path, "line 1", "expected the columns name,model");
  std::map<std::string, std::string> out;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const std::string name = trim(t.rows[r][static_cast<size_t>(cn)]);
    const std::string model = trim(t.rows[r][static_cast<size_t>(cm)]);
    if (name.empty() || model.empty()) {
      throw InputError(path, "line " + std::to_string(t.line_of_row[r]),
                       "expected a name and a model (zoo id or model JSON path)");
    }
    out[name] = model;
  }
  return out;
}

std::string framework_of(const std::string& model, const std::string& notes) {
  static const std::regex fw_re(R"(framework\s*=\s*([A-Za-z][A-Za-z0-9_.+ -]*?)\s*(;|,|$))");
  std::smatch m;
  if (std::regex_search(notes, m, fw_re)) return lower(trim(m[1].str()));
  static const std::regex word_re(R"(^\s*([A-Za-z]+))");
  if (std::regex_search(model, m, word_re)) {
    const std::string w = lower(m[1].str());
    for (const char* fw : {"maxtext", "paxml", "pax", "jax", "deepspeed", "torchtitan", "nemo",
                           "megatron", "colossalai", "fairseq"}) {
      if (w == fw) return w;
    }
  }
  return "";
}

bool framework_modelled(const std::string& framework) {
  const std::string f = normalize_hardware_name(framework);
  // "NeMo 2.0", "NeMo NVIDIA Release 24.04" (MLPerf system descriptions), "Megatron-LM",
  // "Megatron-Core", "Megatron-Bridge", "mcore".
  return f.empty() || f.rfind("nemo", 0) == 0 || f.rfind("megatron", 0) == 0 ||
         f.rfind("mcore", 0) == 0 || f.rfind("nvidianemo", 0) == 0;
}

}  // namespace fleetsim
