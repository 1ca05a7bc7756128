// MLPerf Training results tree → reference-CSV rows (mlperf.h).
#include "validate/mlperf.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>

#include "core/csv.h"
#include "core/error.h"
#include "scenario/mlperf_reader.h"
#include "validate/csv_writer.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> sorted_entries(const fs::path& dir, bool want_dirs) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (want_dirs ? e.is_directory() : e.is_regular_file()) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string rel(const fs::path& p, const fs::path& root) {
  return fs::relative(p, root).generic_string();
}

std::string fmt(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

// A value exported by a config script, with where it was set.
struct ConfigValue {
  std::string value;
  std::string where;  // "benchmarks/.../config_X.sh:12"
};

// `export NAME=VALUE` / `NAME=VALUE` / `unset NAME` lines of a config script and of the
// config_*.sh scripts it sources from its own folder (read where the script sources them, so later
// lines win). ${X:-v} reads as v.
void read_config(const fs::path& file, const fs::path& root, int depth,
                 std::map<std::string, ConfigValue>* out) {
  if (depth > 8) throw InputError(file.string(), "", "config scripts source each other in a loop");
  std::istringstream in(read_text_file(file.string()));
  static const std::regex assign_re(R"(^\s*(export\s+)?([A-Z][A-Z0-9_]*)=(\S*))");
  static const std::regex source_re(R"(^\s*(source|\.)\s+.*?(config_[A-Za-z0-9_.-]+\.sh))");
  static const std::regex default_re(R"(^\$\{[A-Z0-9_]+:-([^}]*)\}$)");
  static const std::regex unset_re(R"(^\s*unset\s+([A-Z][A-Z0-9_]*))");
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    std::smatch m;
    if (std::regex_search(line, m, source_re)) {
      const fs::path inc = file.parent_path() / m[2].str();
      if (fs::exists(inc)) read_config(inc, root, depth + 1, out);
      continue;
    }
    if (std::regex_search(line, m, unset_re)) {
      out->erase(m[1].str());
      continue;
    }
    if (!std::regex_search(line, m, assign_re)) continue;
    std::string v = m[3].str();
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
      v = v.substr(1, v.size() - 2);
    std::smatch d;
    if (std::regex_match(v, d, default_re)) v = d[1].str();
    (*out)[m[2].str()] = {v, rel(file, root) + ":" + std::to_string(n)};
  }
}

// The config script a README names ("config_DGXH100_64x8x32.sh"), searched under the tree.
bool find_config(const std::vector<fs::path>& readmes, const fs::path& root, fs::path* config,
                 std::string* why) {
  static const std::regex name_re(R"(config_[A-Za-z0-9_.-]+\.sh)");
  for (const auto& readme : readmes) {
    std::error_code ec;
    if (!fs::is_regular_file(readme, ec)) continue;
    const std::string text = read_text_file(readme.string());
    std::smatch m;
    if (!std::regex_search(text, m, name_re)) continue;
    const std::string name = m.str();
    for (auto it = fs::recursive_directory_iterator(root, ec); it != fs::end(it); ++it) {
      if (it->is_regular_file() && it->path().filename() == name) {
        *config = it->path();
        return true;
      }
    }
    throw InputError(readme.string(), "",
                     "names " + name + ", which is not under " + root.string());
  }
  *why = "no README naming the config_*.sh of the run (results/<system>/<benchmark>/README.md)";
  return false;
}

const ConfigValue* first_of(const std::map<std::string, ConfigValue>& cfg,
                            std::initializer_list<const char*> names) {
  for (const char* n : names) {
    auto it = cfg.find(n);
    if (it != cfg.end() && !it->second.value.empty()) return &it->second;
  }
  return nullptr;
}

bool truthy(const ConfigValue* v) {
  if (!v) return false;
  std::string s = v->value;
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s == "1" || s == "true" || s == "yes" || s == "on";
}

struct LogFacts {
  std::map<std::string, std::pair<double, int>> numbers;  // key → (value, line)
  std::string benchmark;
  std::vector<double> step_times;
  int first_line = 0, last_line = 0;
};

LogFacts read_log(const fs::path& file) {
  LogFacts f;
  for (const MllogEvent& e : read_mllog(file.string())) {
    if (e.is_number && !f.numbers.count(e.key)) f.numbers[e.key] = {e.number, e.line};
    if (e.key == "submission_benchmark" && f.benchmark.empty()) f.benchmark = e.text;
    if (e.key == "tracked_stats") {
      auto it = e.fields.find("train_step_time");
      if (it != e.fields.end()) {
        f.step_times.push_back(it->second);
        if (!f.first_line) f.first_line = e.line;
        f.last_line = e.line;
      }
    }
  }
  return f;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

const char* kColumns[] = {"source_url",  "source_version",
                          "hardware",    "num_gpus",
                          "model",       "precision",
                          "seq_len",     "gbs",
                          "mbs",         "tp",
                          "pp",          "cp",
                          "vp",          "ep",
                          "etp",         "dp",
                          "metric_name", "metric_value",
                          "metric_unit", "notes"};

struct RowContext {
  fs::path root;
  MlperfSystem sys;
  std::string system_rel;
  std::map<std::string, ConfigValue> cfg;
  std::string config_rel;
};

// size-exception: one row's columns, each with the source of its value written beside it.
std::string make_row(const RowContext& c, const fs::path& result, const LogFacts& log,
                     const std::string& benchmark_dir) {
  std::map<std::string, std::string> col;
  std::vector<std::string> notes;
  const std::string res = rel(result, c.root);
  col["source_url"] = res;
  col["source_version"] = "MLPerf Training results (" + c.root.filename().string() + "), " +
                          (c.sys.submitter.empty() ? "submitter not stated" : c.sys.submitter);
  col["hardware"] = c.sys.accelerator_model_name;
  const int gpus = c.sys.number_of_nodes * c.sys.accelerators_per_node;
  col["num_gpus"] = std::to_string(gpus);
  notes.push_back("nodes=" + std::to_string(c.sys.number_of_nodes) + "x" +
                  std::to_string(c.sys.accelerators_per_node) + " GPUs (" + c.system_rel +
                  ": number_of_nodes, accelerators_per_node, accelerator_model_name)");
  const std::string bench = log.benchmark.empty() ? benchmark_dir : log.benchmark;
  col["model"] = bench;
  const bool finetune =
      bench.find("lora") != std::string::npos || bench.find("finetun") != std::string::npos;
  notes.push_back(finetune ? "task=LoRA" : "task=pretrain");
  if (!c.sys.framework.empty())
    notes.push_back("framework=" + c.sys.framework + " (" + c.system_rel + ")");
  auto from_log = [&](const char* column, std::initializer_list<const char*> keys) {
    for (const char* k : keys) {
      auto it = log.numbers.find(k);
      if (it == log.numbers.end()) continue;
      col[column] = fmt(it->second.first);
      notes.push_back(std::string(column) + " from " + res + ":" +
                      std::to_string(it->second.second) + " (" + k + ")");
      return;
    }
  };
  from_log("gbs", {"global_batch_size"});
  from_log("seq_len", {"max_sequence_length", "sequence_length", "seq_length", "max_seq_len"});
  auto from_cfg = [&](const char* column, std::initializer_list<const char*> names) {
    if (const ConfigValue* v = first_of(c.cfg, names)) {
      col[column] = v->value;
      notes.push_back(std::string(column) + " from " + v->where);
    }
  };
  from_cfg("tp", {"TENSOR_MODEL_PARALLEL", "TP", "TP_SIZE"});
  from_cfg("pp", {"PIPELINE_MODEL_PARALLEL", "PP", "PP_SIZE"});
  from_cfg("cp", {"CONTEXT_PARALLEL", "CP", "CP_SIZE"});
  from_cfg("vp", {"INTERLEAVED_PIPELINE", "VIRTUAL_PIPELINE", "VP"});
  from_cfg("ep", {"EXPERT_MODEL_PARALLEL", "EP", "EP_SIZE"});
  from_cfg("mbs", {"MICRO_BATCH_SIZE", "MBS"});
  if (auto ga = log.numbers.find("gradient_accumulation_steps"); ga != log.numbers.end()) {
    notes.push_back("GA=" + fmt(ga->second.first) + " from " + res + ":" +
                    std::to_string(ga->second.second) + " (gradient_accumulation_steps)");
    // Without a micro-batch in the config: gbs = mbs · dp · GA.
    const auto num = [&](const char* k) {
      return col[k].empty() ? 1.0 : std::atof(col[k].c_str());
    };
    const double dp = gpus / (num("tp") * num("pp") * num("cp"));
    const double mbs =
        col["gbs"].empty() ? 0 : std::atof(col["gbs"].c_str()) / (dp * ga->second.first);
    if (col["mbs"].empty() && mbs >= 1 && mbs == std::floor(mbs)) {
      col["mbs"] = fmt(mbs);
      notes.push_back("mbs = gbs / (dp x GA)");
    }
  }
  if (const ConfigValue* fp4 = first_of(c.cfg, {"FP4", "NVFP4"}); truthy(fp4)) {
    col["precision"] = "NVFP4";
    notes.push_back("precision from " + fp4->where);
  } else if (const ConfigValue* fp8 = first_of(c.cfg, {"FP8"}); truthy(fp8)) {
    const ConfigValue* recipe = first_of(c.cfg, {"FP8_RECIPE", "FP8_SCALING"});
    const std::string r = recipe ? recipe->value : "";
    col["precision"] = r == "mxfp8"                            ? "MXFP8"
                       : (r == "tensorwise" || r == "current") ? "FP8-CS"
                                                               : "FP8";
    notes.push_back("precision from " + fp8->where + (recipe ? " and " + recipe->where : ""));
  } else {
    col["precision"] = "BF16";
    notes.push_back("precision BF16 (no FP8 / FP4 in " + c.config_rel + ")");
  }
  col["metric_name"] = "train_step_time_median_logged";
  col["metric_value"] = fmt(median(log.step_times));
  col["metric_unit"] = "s";
  notes.push_back("step time = median of " + std::to_string(log.step_times.size()) +
                  " tracked_stats train_step_time values, " + res + ":" +
                  std::to_string(log.first_line) + "-" + std::to_string(log.last_line));
  std::string joined;
  for (const auto& n : notes)
    joined += (joined.empty() ? "" : "; ") + n;
  col["notes"] = joined;
  std::vector<std::string> fields;
  for (const char* k : kColumns)
    fields.push_back(col[k]);
  return csv_line(fields);
}

}  // namespace

MlperfImport import_mlperf(const std::string& dir_in) {
  const fs::path root = fs::path(dir_in).lexically_normal();
  std::error_code ec;
  if (!fs::is_directory(root / "systems", ec) || !fs::is_directory(root / "results", ec)) {
    throw InputError(dir_in, "",
                     "expected an MLPerf Training results folder with systems/ and results/");
  }
  MlperfImport out;
  out.csv = csv_line(std::vector<std::string>(std::begin(kColumns), std::end(kColumns)));
  for (const fs::path& sys_file : sorted_entries(root / "systems", false)) {
    if (sys_file.extension() != ".json") continue;
    RowContext c;
    c.root = root;
    c.sys = read_mlperf_system(sys_file.string());
    c.system_rel = rel(sys_file, root);
    const fs::path results = root / "results" / sys_file.stem();
    for (const fs::path& bench : sorted_entries(results, true)) {
      const std::string where = rel(bench, root);
      std::string why;
      fs::path config;
      c.cfg.clear();
      if (!find_config({bench / "README.md", results / "README.md"}, root, &config, &why)) {
        out.skipped.push_back(where + ": " + why);
        continue;
      }
      c.config_rel = rel(config, root);
      read_config(config, root, 0, &c.cfg);
      for (const fs::path& result : sorted_entries(bench, false)) {
        const std::string name = result.filename().string();
        if (name.rfind("result_", 0) != 0 || result.extension() != ".txt") continue;
        const LogFacts log = read_log(result);
        if (log.step_times.empty()) {
          out.skipped.push_back(rel(result, root) + ": no tracked_stats train_step_time");
          continue;
        }
        out.csv += make_row(c, result, log, bench.filename().string());
        ++out.rows;
      }
    }
  }
  return out;
}

}  // namespace fleetsim
