// calibration/releases.json: NeMo releases and the recipe switches of each (release_loader.h).
#include "scenario/release_loader.h"

#include <algorithm>
#include <regex>

#include "core/error.h"
#include "scenario/json_reader.h"

namespace fleetsim {

using namespace jsonr;

namespace {

enum class Kind { kBool, kChoice, kList };

struct SwitchDef {
  const char* name;
  Kind kind;
  bool modelled;                    // apply_release sets it on the workload
  std::vector<std::string> values;  // choices, or list items (empty = any string)
};

// Every switch the table may set. "modelled" = a mechanism of the step simulator on this commit;
// the others are recorded and reported until their mechanism exists.
const std::vector<SwitchDef>& switch_defs() {
  static const std::vector<SwitchDef> defs = {
      {"tp_comm_overlap", Kind::kBool, true, {}},
      {"overlap_grad_reduce", Kind::kBool, true, {}},
      {"overlap_param_gather", Kind::kBool, true, {}},
      {"moe_dispatcher", Kind::kChoice, true, {"alltoall", "flex"}},
      {"ep_comm_overlap", Kind::kBool, true, {}},
      {"recompute", Kind::kChoice, true, {"none", "selective", "full"}},
      {"recompute_modules",
       Kind::kList,
       true,
       {"core_attn", "mlp", "mla_up_proj", "moe_act", "layernorm", "moe", "shared_experts"}},
      {"moe_flex_backend", Kind::kChoice, true, {"deepep", "hybridep"}},
      {"cuda_graphs", Kind::kChoice, true, {"none", "local", "scopes", "full_iteration"}},
      {"cuda_graph_scopes",
       Kind::kList,
       true,
       {"attn", "mlp", "moe", "moe_router", "moe_preprocess", "mamba"}},
      {"moe_router_fusion", Kind::kBool, true, {}},
      {"moe_router_force_load_balancing", Kind::kBool, true, {}},
      {"megatron_experimental", Kind::kBool, true, {}},
      {"moe_grouped_gemm", Kind::kBool, true, {}},
      {"moe_permute_fusion", Kind::kBool, true, {}},
      {"moe_token_drop", Kind::kBool, false, {}},
      {"fused_grouped_mlp", Kind::kBool, false, {}},
      {"te_op_fuser", Kind::kBool, false, {}},
      {"fp8_attention", Kind::kBool, false, {}},
  };
  return defs;
}

const SwitchDef* find_def(const std::string& name) {
  for (const SwitchDef& d : switch_defs())
    if (name == d.name) return &d;
  return nullptr;
}

std::string table_path(const std::string& data_dir) {
  return data_dir + "/calibration/releases.json";
}

struct Table {
  std::string path;
  std::vector<std::string> names;
  std::string default_release;
  json doc;
};

// Reads and checks the whole table (release names, rule ranges, switch names and values).
Table load_table(const std::string& data_dir) {
  Table t;
  t.path = table_path(data_dir);
  t.doc = parse_strict(read_file(t.path), t.path);
  const Obj top(t.doc, t.path, "", {"description", "default_release", "releases", "rules"});
  const json& rels = top.get("releases");
  if (!rels.is_array() || rels.empty()) top.fail("/releases", "expected a non-empty array");
  for (size_t i = 0; i < rels.size(); ++i) {
    const Obj r(
        rels[i], t.path, "/releases/" + std::to_string(i),
        {"name", "container", "stack", "finetune_stack", "recipes", "version_source", "note"});
    const std::string name = r.str("name");
    if (std::find(t.names.begin(), t.names.end(), name) != t.names.end())
      r.fail(r.at("name"), "release '" + name + "' listed twice");
    t.names.push_back(name);
  }
  t.default_release = top.choice("default_release", t.names);
  const json& rules = top.get("rules");
  if (!rules.is_array()) top.fail("/rules", "expected an array");
  for (size_t i = 0; i < rules.size(); ++i) {
    const std::string rp = "/rules/" + std::to_string(i);
    const Obj r(rules[i], t.path, rp,
                {"releases", "model", "gpu", "precision", "layout", "set", "source"});
    const json& range = r.get("releases");
    if (!range.is_array() || range.size() != 2 || !range[0].is_string() || !range[1].is_string())
      r.fail(r.at("releases"), "expected [first release, last release]");
    for (int k = 0; k < 2; ++k) {
      const std::string n = range[k].get<std::string>();
      if (std::find(t.names.begin(), t.names.end(), n) == t.names.end())
        r.fail(r.at("releases") + "/" + std::to_string(k), "unknown release '" + n + "'");
    }
    if (r.str("source").empty()) r.fail(r.at("source"), "every rule cites its source");
    if (r.has("layout")) {
      const Obj l = r.object("layout", {"pp", "vp", "ep"});
      for (const char* k : {"pp", "vp", "ep"})
        if (l.has(k)) l.integer(k, 1, 1 << 20);
    }
    const json& set = r.get("set");
    if (!set.is_object() || set.empty()) r.fail(r.at("set"), "expected an object of switches");
    for (const auto& [k, v] : set.items()) {
      const std::string at = rp + "/set/" + escape_pointer_token(k);
      const SwitchDef* d = find_def(k);
      if (!d) {
        std::vector<std::string> names;
        for (const SwitchDef& s : switch_defs())
          names.push_back(s.name);
        const std::string near = closest_match(k, names);
        throw InputError(
            t.path, at,
            "unknown switch '" + k + "'" + (near.empty() ? "" : "; did you mean '" + near + "'?"));
      }
      const auto allowed = [&](const json& s) {
        return s.is_string() &&
               (d->values.empty() || std::find(d->values.begin(), d->values.end(),
                                               s.get<std::string>()) != d->values.end());
      };
      bool ok = d->kind == Kind::kBool ? v.is_boolean()
                : d->kind == Kind::kChoice
                    ? allowed(v)
                    : v.is_array() && std::all_of(v.begin(), v.end(), allowed);
      if (!ok) throw InputError(t.path, at, "value " + show(v) + " not allowed for '" + k + "'");
    }
  }
  return t;
}

bool listed(const Obj& r, const char* key, const std::string& value) {
  if (!r.has(key)) return true;
  const json& list = r.get(key);
  if (!list.is_array()) r.fail(r.at(key), "expected an array of names");
  for (const json& e : list)
    if (e.is_string() && e.get<std::string>() == value) return true;
  return false;
}

std::string render(const json& v) {
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_string()) return v.get<std::string>();
  std::string s;
  for (const json& e : v)
    s += (s.empty() ? "" : "+") + e.get<std::string>();
  return s.empty() ? "none" : s;
}

}  // namespace

const ReleaseSwitch* ReleaseRecipe::find(const std::string& name) const {
  for (const ReleaseSwitch& s : switches)
    if (s.name == name) return &s;
  return nullptr;
}

std::vector<std::string> known_releases(const std::string& data_dir) {
  return load_table(data_dir).names;
}

std::string default_release(const std::string& data_dir) {
  return load_table(data_dir).default_release;
}

std::string release_for_version(const std::string& source_version, const std::string& data_dir) {
  static const std::regex ver_re(R"((\d{2})\.(\d{2})(\.\d{2})?)");
  std::smatch m;
  if (!std::regex_search(source_version, m, ver_re)) return "";
  const std::string name = "nemo-" + m[0].str();
  const std::vector<std::string> names = known_releases(data_dir);
  return std::find(names.begin(), names.end(), name) != names.end() ? name : "";
}

std::string release_stack(const std::string& release, const std::string& data_dir,
                          bool fine_tuning) {
  const Table t = load_table(data_dir);
  for (const json& r : t.doc.at("releases")) {
    if (r.at("name").get<std::string>() != release) continue;
    for (const char* key : {fine_tuning ? "finetune_stack" : "stack", "stack"})
      if (r.contains(key) && r.at(key).is_string()) return r.at(key).get<std::string>();
    return "";
  }
  return "";
}

// A rule's "layout" (the recipe variant's pp / vp / ep) matches `par`; no layout = any.
bool layout_matches(const Obj& r, const ParallelConfig& par) {
  if (!r.has("layout")) return true;
  const Obj l = r.object("layout", {"pp", "vp", "ep"});
  return (!l.has("pp") || l.integer("pp", 1, 1 << 20) == par.pp) &&
         (!l.has("vp") || l.integer("vp", 1, 1 << 20) == par.vp) &&
         (!l.has("ep") || l.integer("ep", 1, 1 << 20) == par.ep);
}

ReleaseRecipe resolve_release(const std::string& release, const std::string& model,
                              const std::string& gpu, const ParallelConfig& par,
                              const std::string& data_dir, const std::string& file,
                              const std::string& ptr) {
  const Table t = load_table(data_dir);
  const auto pos = std::find(t.names.begin(), t.names.end(), release);
  if (pos == t.names.end()) {
    std::string list;
    for (const std::string& n : t.names)
      list += (list.empty() ? "" : ", ") + n;
    const std::string near = closest_match(release, t.names);
    throw InputError(file, ptr,
                     "unknown release '" + release + "'" +
                         (near.empty() ? "" : "; did you mean '" + near + "'?") +
                         " (known: " + list + "; " + table_path(data_dir) + ")");
  }
  const auto index = [&](const std::string& n) {
    return std::find(t.names.begin(), t.names.end(), n) - t.names.begin();
  };
  const auto at = pos - t.names.begin();
  ReleaseRecipe out;
  out.release = release;
  const json& rules = t.doc["rules"];
  for (size_t i = 0; i < rules.size(); ++i) {
    const Obj r(rules[i], t.path, "/rules/" + std::to_string(i),
                {"releases", "model", "gpu", "precision", "layout", "set", "source"});
    const json& range = r.get("releases");
    if (at < index(range[0].get<std::string>()) || at > index(range[1].get<std::string>()))
      continue;
    if (!listed(r, "model", model) || !listed(r, "gpu", gpu) ||
        !listed(r, "precision", to_string(par.precision)) || !layout_matches(r, par))
      continue;
    for (const auto& [k, v] : r.get("set").items()) {
      ReleaseSwitch s{k, render(v), r.str("source"), find_def(k)->modelled};
      auto it = std::find_if(out.switches.begin(), out.switches.end(),
                             [&s](const ReleaseSwitch& e) { return e.name == s.name; });
      if (it == out.switches.end()) {
        out.switches.push_back(s);
      } else {
        *it = s;
      }
    }
  }
  std::sort(out.switches.begin(), out.switches.end(),
            [](const ReleaseSwitch& a, const ReleaseSwitch& b) { return a.name < b.name; });
  return out;
}

// cuda_graphs (with the recipe's cuda_graph_scopes): "local" is Megatron-Core's per-layer
// graphs (enable_cuda_graph), which capture a layer up to what a dropless MoE layer cannot: every
// scope fleetsim models. "scopes" without a scope list captures kDefaultGraphScopes.
template <class Note>
void apply_graphs(const ReleaseRecipe& r, const ReleaseSwitch& s, FrameworkOptions* fw,
                  const Note& note) {
  if (s.value == "none") {
    fw->cuda_graphs = CudaGraphs::kNone;
  } else if (s.value == "full_iteration") {
    fw->cuda_graphs = CudaGraphs::kFullIteration;
  } else if (s.value == "local") {
    fw->cuda_graphs = CudaGraphs::kScopes;
    fw->cuda_graph_scopes =
        kGraphAttn | kGraphMlp | kGraphMoeRouter | kGraphMoePreprocess | kGraphMamba;
    note(s,
         "modelled as per-layer graphs of every capturable scope (attn, mlp, moe_router, "
         "moe_preprocess, mamba)");
  } else {
    fw->cuda_graphs = CudaGraphs::kScopes;
    fw->cuda_graph_scopes = kDefaultGraphScopes;
    const ReleaseSwitch* list = r.find("cuda_graph_scopes");
    if (!list || list->value == "none") return;
    fw->cuda_graph_scopes = 0;
    size_t start = 0;
    while (start <= list->value.size()) {
      const size_t end = std::min(list->value.find('+', start), list->value.size());
      unsigned bit = 0;
      if (parse_cuda_graph_scope(list->value.substr(start, end - start), &bit))
        fw->cuda_graph_scopes |= bit;
      else
        note(*list, "scope '" + list->value.substr(start, end - start) + "' not modelled");
      start = end + 1;
    }
  }
}

std::vector<std::string> apply_release(const ReleaseRecipe& r, bool set_recompute,
                                       TrainingWorkload* t) {
  std::vector<std::string> notes;
  FrameworkOptions& fw = t->fw;
  const auto note = [&](const ReleaseSwitch& s, const std::string& why) {
    notes.push_back("framework.release " + r.release + ": " + s.name + "=" + s.value + " " + why +
                    " (" + s.source + ")");
  };
  bool hybridep = false;
  for (const ReleaseSwitch& s : r.switches) {
    const bool on = s.value == "true";
    if (!s.modelled) {
      note(s, "recorded, not yet modelled");
    } else if (s.name == "cuda_graphs" || s.name == "cuda_graph_scopes") {
      if (s.name == "cuda_graphs") apply_graphs(r, s, &fw, note);
    } else if (s.name == "tp_comm_overlap") {
      fw.tp_comm_overlap = on;
    } else if (s.name == "overlap_grad_reduce") {
      fw.overlap_grad_reduce = on;
    } else if (s.name == "overlap_param_gather") {
      fw.overlap_param_gather = on;
    } else if (s.name == "moe_router_fusion") {
      fw.moe_router_fusion = on;
    } else if (s.name == "moe_router_force_load_balancing") {
      fw.moe_router_force_load_balancing = on;
    } else if (s.name == "megatron_experimental") {
      fw.megatron_experimental = on;
    } else if (s.name == "moe_grouped_gemm") {
      fw.moe_grouped_gemm = on;
    } else if (s.name == "moe_permute_fusion") {
      fw.moe_permute_fusion = on;
    } else if (s.name == "moe_dispatcher") {
      fw.moe_dispatcher = s.value == "flex" ? MoeDispatcher::kDeepEp : MoeDispatcher::kAllToAll;
    } else if (s.name == "moe_flex_backend") {
      hybridep = s.value == "hybridep";
    } else if (s.name == "ep_comm_overlap") {
      // Megatron-Core runs it only without pipelining or with the interleaved schedule.
      if (on && t->par.pp > 1 && t->par.vp == 1) {
        note(s, "not applied: needs vp > 1 when pp > 1, as in Megatron-Core");
        fw.ep_comm_overlap = false;
      } else {
        fw.ep_comm_overlap = on;
      }
    } else if (s.name == "recompute" || s.name == "recompute_modules") {
      if (!set_recompute) {
        note(s, "not applied: the scenario's recompute section sets it");
      } else if (s.name == "recompute") {
        parse_recompute(s.value, &t->par.recompute);
      } else {
        unsigned bits = 0;
        size_t start = 0;
        while (start <= s.value.size() && s.value != "none") {
          const size_t end = std::min(s.value.find('+', start), s.value.size());
          unsigned bit = 0;
          if (parse_recompute_module(s.value.substr(start, end - start), &bit)) bits |= bit;
          start = end + 1;
        }
        t->par.recompute_modules = bits;
      }
    }
  }
  // The flex dispatcher's backend. Megatron-Bridge's performance scripts give HybridEP 32 SMs
  // whenever a recipe selects it (scripts/performance/utils/helpers.py v0.2.0 L111-L113,
  // overrides.py v0.3.0-v0.6.0: moe_hybridep_num_sms = 32); DeepEP keeps Megatron's 20.
  if (hybridep && fw.moe_dispatcher == MoeDispatcher::kDeepEp) {
    fw.moe_dispatcher = MoeDispatcher::kHybridEp;
    fw.moe_dispatcher_sms = 32;
  }
  return notes;
}

}  // namespace fleetsim
