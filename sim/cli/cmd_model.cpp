// `fleetsim model import CONFIG [--name N] [--out FILE]`: a Hugging Face config.json mapped
// onto a fleetsim model (scenario/hf_config.h) and written as a zoo JSON file with the origin
// of every field; a summary with the parameter counts goes to stderr when the JSON goes to
// stdout.
#include <cstdio>
#include <fstream>

#include "cli/commands.h"
#include "core/error.h"
#include "scenario/hf_config.h"

namespace fleetsim {

int cmd_model_import(const ModelImportCli& o) {
  const HfImport imp = import_hf_config_file(o.config, o.name);
  const std::string text = zoo_model_json(imp);
  const ModelSpec& m = imp.model;
  std::FILE* info = o.out.empty() ? stderr : stdout;
  if (o.out.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else {
    std::ofstream out(o.out, std::ios::binary);
    if (!out) throw InputError(o.out, "", "cannot open for writing");
    out << text;
    if (!out) throw InputError(o.out, "", "write failed");
  }
  std::fprintf(info, "model %s (model_type %s): %d layers, hidden %lld, %s\n", m.name.c_str(),
               imp.model_type.c_str(), m.layers, static_cast<long long>(m.hidden),
               is_moe(m) ? "MoE" : "dense");
  std::fprintf(info, "parameters: %.3f B total, %.3f B active per token\n",
               static_cast<double>(total_params(m)) / 1e9,
               static_cast<double>(active_params(m)) / 1e9);
  for (const UnmodelledFeature& u : m.unmodelled)
    if (u.impact != "none")
      std::fprintf(info, "not modelled (%s): %s: %s\n", u.impact.c_str(), u.feature.c_str(),
                   u.note.c_str());
  if (!o.out.empty()) std::fprintf(info, "written: %s\n", o.out.c_str());
  return 0;
}

}  // namespace fleetsim
