// Sweep-file parsing and expansion (sweep_loader.h): strict keys, JSON-pointer setting with
// checks against the scenario format, random sampling with fleetsim's own RNG; filter
// expressions are in sweep_filter.h.
#include "scenario/sweep_loader.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "core/rng.h"
#include "scenario/json_reader.h"
#include "scenario/sweep_filter.h"

namespace fleetsim {
namespace {

using namespace jsonr;

const std::vector<std::string> kSweepKeys = {"name", "description", "base", "axes", "filters"};
const std::vector<std::string> kGridKeys = {"mode", "pointer", "values"};
const std::vector<std::string> kZipKeys = {"mode", "parameters"};
const std::vector<std::string> kZipParamKeys = {"pointer", "values"};
const std::vector<std::string> kRandomKeys = {"mode", "n", "seed", "parameters"};
const std::vector<std::string> kRandomParamKeys = {"pointer", "distribution", "min",
                                                   "max",     "integer",      "values"};
const std::vector<std::string> kFilterKeys = {"name", "expr"};

// A JSON pointer split into tokens (~1 and ~0 unescaped).
std::vector<std::string> split_pointer(const std::string& p, const Obj& at,
                                       const std::string& key) {
  if (p.empty() || p[0] != '/')
    at.fail(at.at(key), "expected a JSON pointer starting with '/', got '" + p + "'");
  std::vector<std::string> out;
  std::string cur;
  for (size_t i = 1; i <= p.size(); ++i) {
    if (i == p.size() || p[i] == '/') {
      out.push_back(cur);
      cur.clear();
    } else if (p[i] == '~') {
      if (i + 1 >= p.size() || (p[i + 1] != '0' && p[i + 1] != '1'))
        at.fail(at.at(key), "bad escape in JSON pointer '" + p + "' (use ~0 or ~1)");
      cur += p[++i] == '0' ? '~' : '/';
    } else {
      cur += p[i];
    }
  }
  return out;
}

bool is_index(const std::string& t) {
  return !t.empty() && t.size() < 9 && t.find_first_not_of("0123456789") == std::string::npos &&
         (t == "0" || t[0] != '0');
}

// The scenario_keys() pattern of an object path: "/workload..." becomes "/workload#training..."
// for training workloads.
std::string key_pattern(const std::string& path, bool training) {
  if (training && path.rfind("/workload", 0) == 0 && (path.size() == 9 || path[9] == '/')) {
    return "/workload#training" + path.substr(9);
  }
  return path;
}

// Checks that `tokens` names a field the scenario format has: every step exists in the base, or
// is a key the loader accepts there (missing objects are created when the point is built).
void check_pointer(const json& base, const std::vector<std::string>& tokens, const Obj& at,
                   const std::string& key) {
  static const auto keys = scenario_keys();
  const bool training = base.contains("workload") && base["workload"].is_object() &&
                        base["workload"].value("type", "") == "training";
  const json* cur = &base;
  std::string path;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (cur != nullptr && cur->is_array()) {
      if (!is_index(t) || std::stoul(t) >= cur->size()) {
        at.fail(at.at(key), "'" + t + "' is not an index of the " + std::to_string(cur->size()) +
                                "-element array at " + (path.empty() ? "/" : path) +
                                " in the base scenario");
      }
      cur = &(*cur)[std::stoul(t)];
    } else if (cur == nullptr || cur->is_object()) {
      if (cur != nullptr && cur->contains(t)) {
        cur = &(*cur)[t];
      } else {
        const auto it = keys.find(key_pattern(path, training));
        if (it == keys.end()) {
          at.fail(at.at(key), "the base scenario has no '" + t + "' at " +
                                  (path.empty() ? "/" : path) + " and the scenario format " +
                                  "does not define the keys there");
        }
        if (std::find(it->second.begin(), it->second.end(), t) == it->second.end()) {
          std::string msg = "unknown scenario key '" + t + "' at " + (path.empty() ? "/" : path);
          const std::string near = closest_match(t, it->second);
          if (!near.empty()) msg += "; did you mean '" + near + "'?";
          at.fail(at.at(key), msg);
        }
        cur = nullptr;
      }
    } else {
      at.fail(at.at(key), (path.empty() ? std::string("/") : path) + " is " + type_name(*cur) +
                              " in the base scenario, not an object or array");
    }
    path += "/" + escape_pointer_token(t);
  }
}

void set_at(json& doc, const std::vector<std::string>& tokens, const json& value) {
  json* cur = &doc;
  for (size_t i = 0; i + 1 < tokens.size(); ++i)
    cur = cur->is_array() ? &(*cur)[std::stoul(tokens[i])] : &(*cur)[tokens[i]];
  if (cur->is_array()) {
    (*cur)[std::stoul(tokens.back())] = value;
  } else {
    (*cur)[tokens.back()] = value;
  }
}

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// ---- axes ----

struct Column {
  std::string pointer;
  std::vector<std::string> tokens;
  std::string sweep_ptr;  // where the axis sets it
};

struct Axis {
  bool random = false;       // random settings are checked through their ranges instead
  std::vector<int> columns;  // indices into the column list
  std::vector<std::vector<json>> settings;  // settings[k][c]: value of columns[c] in setting k
  std::vector<std::vector<std::string>> setting_ptrs;  // sweep-file pointer of each value
};

std::vector<json> read_values(const Obj& o, const std::string& key) {
  const json& v = o.get(key);
  if (!v.is_array())
    o.fail(o.at(key), std::string("expected an array of values, got ") + type_name(v));
  if (v.empty()) o.fail(o.at(key), "expected a non-empty array of values (an empty axis)");
  return std::vector<json>(v.begin(), v.end());
}

class SweepReader {
 public:
  SweepReader(const std::string& file, const LoadOptions& options) : file_(file), opt_(options) {}

  int add_column(const Obj& o, const json& base) {
    Column c;
    c.pointer = o.str("pointer");
    c.tokens = split_pointer(c.pointer, o, "pointer");
    c.sweep_ptr = o.at("pointer");
    for (const auto& other : columns_) {
      if (other.pointer == c.pointer)
        o.fail(o.at("pointer"), "'" + c.pointer + "' is already set by " + other.sweep_ptr);
    }
    check_pointer(base, c.tokens, o, "pointer");
    columns_.push_back(std::move(c));
    return static_cast<int>(columns_.size()) - 1;
  }

  Axis read_axis(const Obj& root, size_t i, const json& base) {
    const std::string ptr = root.at("axes") + "/" + std::to_string(i);
    const json& aj = root.get("axes")[i];
    if (!aj.is_object())
      root.fail(ptr, std::string("expected an axis object, got ") + type_name(aj));
    if (!aj.contains("mode")) root.fail(ptr + "/mode", "missing required key 'mode'");
    const std::vector<std::string> modes = {"grid", "zip", "random"};
    const std::string mode = aj["mode"].is_string() ? aj["mode"].get<std::string>() : "";
    if (std::find(modes.begin(), modes.end(), mode) == modes.end()) {
      std::string msg = "expected one of 'grid', 'zip', 'random', got " + show(aj["mode"]);
      const std::string near = closest_match(mode, modes);
      if (!near.empty()) msg += "; did you mean '" + near + "'?";
      root.fail(ptr + "/mode", msg);
    }
    Axis axis;
    if (mode == "grid") {
      const Obj o(aj, file_, ptr, kGridKeys);
      axis.columns.push_back(add_column(o, base));
      const auto values = read_values(o, "values");
      for (size_t k = 0; k < values.size(); ++k) {
        axis.settings.push_back({values[k]});
        axis.setting_ptrs.push_back({o.at("values") + "/" + std::to_string(k)});
      }
    } else if (mode == "zip") {
      const Obj o(aj, file_, ptr, kZipKeys);
      const json& params = o.get("parameters");
      if (!params.is_array() || params.empty())
        o.fail(o.at("parameters"), "expected a non-empty array of {pointer, values}");
      size_t len = 0;
      for (size_t p = 0; p < params.size(); ++p) {
        const Obj po(params[p], file_, o.at("parameters") + "/" + std::to_string(p), kZipParamKeys);
        axis.columns.push_back(add_column(po, base));
        const auto values = read_values(po, "values");
        if (p == 0) {
          len = values.size();
          axis.settings.resize(len);
          axis.setting_ptrs.resize(len);
        } else if (values.size() != len) {
          po.fail(po.at("values"), "zip lists must have equal lengths: expected " +
                                       std::to_string(len) + " values, got " +
                                       std::to_string(values.size()));
        }
        for (size_t k = 0; k < len; ++k) {
          axis.settings[k].push_back(values[k]);
          axis.setting_ptrs[k].push_back(po.at("values") + "/" + std::to_string(k));
        }
      }
    } else {
      axis.random = true;
      read_random(Obj(aj, file_, ptr, kRandomKeys), base, &axis);
    }
    return axis;
  }

  // One parameter of a random axis: uniform / log-uniform over [lo, hi] (optionally integers), or
  // a choice among values.
  struct RandomDist {
    std::string kind;
    double lo = 0, hi = 0;
    bool integer = false;
    std::vector<json> choices;
  };

  RandomDist read_distribution(const Obj& po) {
    RandomDist d;
    d.kind = po.choice("distribution", {"uniform", "log_uniform", "choice"});
    if (d.kind == "choice") {
      for (const char* k : {"min", "max", "integer"})
        if (po.has(k)) po.fail(po.at(k), "'" + std::string(k) + "' does not apply to a choice");
      d.choices = read_values(po, "values");
    } else {
      if (po.has("values")) po.fail(po.at("values"), "'values' applies to a choice only");
      d.lo = po.number("min", -1e300, 1e300);
      d.hi = po.number("max", -1e300, 1e300);
      d.integer = po.has("integer") && po.boolean("integer");
      if (d.hi < d.lo) po.fail(po.at("max"), "expected max >= min");
      if (d.kind == "log_uniform" && d.lo <= 0) po.fail(po.at("min"), "log_uniform needs min > 0");
      if (d.integer && (d.lo != std::floor(d.lo) || d.hi != std::floor(d.hi) ||
                        std::fabs(d.lo) > 9e15 || std::fabs(d.hi) > 9e15))
        po.fail(po.at("min"), "integer sampling needs integer min and max");
    }
    return d;
  }

  static json sample(const RandomDist& d, Rng& rng) {
    if (d.kind == "choice") return d.choices[rng.uniform_below(d.choices.size())];
    if (d.kind == "uniform" && d.integer)
      return static_cast<int64_t>(d.lo) +
             static_cast<int64_t>(rng.uniform_below(static_cast<uint64_t>(d.hi - d.lo) + 1));
    const double u = rng.uniform01();
    if (d.kind == "uniform") {
      return d.lo + (d.hi - d.lo) * u;
    }
    const double x = std::exp(std::log(d.lo) + u * (std::log(d.hi) - std::log(d.lo)));
    if (d.integer)
      return static_cast<int64_t>(
          std::clamp(std::llround(x), static_cast<long long>(d.lo), static_cast<long long>(d.hi)));
    return std::clamp(x, d.lo, d.hi);
  }

  void read_random(const Obj& o, const json& base, Axis* axis) {
    const int64_t n = o.integer("n", 1, INT64_MAX);
    if (n > opt_.max_sweep_points)
      o.fail(o.at("n"), std::to_string(n) + " samples are more than the sweep's limit of " +
                            std::to_string(opt_.max_sweep_points) +
                            " points (raise it with --max-points)");
    const uint64_t seed =
        o.has("seed") ? static_cast<uint64_t>(o.integer("seed", 0, INT64_MAX)) : 1;
    const json& params = o.get("parameters");
    if (!params.is_array() || params.empty())
      o.fail(o.at("parameters"), "expected a non-empty array of {pointer, distribution, ...}");
    std::vector<RandomDist> dists;
    for (size_t p = 0; p < params.size(); ++p) {
      const Obj po(params[p], file_, o.at("parameters") + "/" + std::to_string(p),
                   kRandomParamKeys);
      axis->columns.push_back(add_column(po, base));
      dists.push_back(read_distribution(po));
    }
    Rng rng = Rng::stream(seed, "sweep-random-axis");
    for (int64_t k = 0; k < n; ++k) {
      std::vector<json> setting;
      std::vector<std::string> ptrs;
      for (size_t p = 0; p < dists.size(); ++p) {
        setting.push_back(sample(dists[p], rng));
        ptrs.push_back(o.at("parameters") + "/" + std::to_string(p));
      }
      axis->settings.push_back(std::move(setting));
      axis->setting_ptrs.push_back(std::move(ptrs));
    }
    // The values the loader must accept: both ends of each range, every choice.
    for (size_t p = 0; p < dists.size(); ++p) {
      const RandomDist& d = dists[p];
      const std::string pp = o.at("parameters") + "/" + std::to_string(p);
      if (d.kind == "choice") {
        for (size_t k = 0; k < d.choices.size(); ++k)
          extra_checks_.push_back(
              {axis->columns[p], d.choices[k], pp + "/values/" + std::to_string(k)});
      } else {
        for (double v : {d.lo, d.hi}) {
          extra_checks_.push_back({axis->columns[p],
                                   d.integer ? json(static_cast<int64_t>(v)) : json(v),
                                   pp + (v == d.lo ? "/min" : "/max")});
        }
      }
    }
  }

  // Sets one value alone in the base and runs the scenario loader: a type or range error at
  // that pointer ("expected ...") is an error of the sweep file, whatever the other axes hold.
  void check_value(const json& base, int column, const json& value, const std::string& where) {
    const Column& c = columns_[column];
    const std::string id = c.pointer + "=" + value.dump();
    if (!checked_.insert(id).second) return;
    json doc = base;
    set_at(doc, c.tokens, value);
    try {
      parse_scenario(doc.dump(), file_, opt_);
    } catch (const InputError& e) {
      const std::string& p = e.pointer();
      const bool at_pointer = p == c.pointer || p.rfind(c.pointer + "/", 0) == 0;
      if (at_pointer && e.message().rfind("expected", 0) == 0) {
        throw InputError(file_, where,
                         "value " + show(value) + " for " + c.pointer + ": " + e.message());
      }
    }
  }

  struct ExtraCheck {
    int column;
    json value;
    std::string where;
  };
  const std::vector<Column>& columns() const { return columns_; }
  const std::vector<ExtraCheck>& extra_checks() const { return extra_checks_; }

 private:
  std::string file_;
  LoadOptions opt_;
  std::vector<Column> columns_;
  std::vector<ExtraCheck> extra_checks_;
  std::set<std::string> checked_;
};

// The base scenario: a path relative to the sweep file, or an inline object.
json read_base(const Obj& root, const std::string& file, SweepPlan* plan) {
  json base;
  const json& bj = root.get("base");
  if (bj.is_string()) {
    std::filesystem::path p = bj.get<std::string>();
    if (p.is_relative()) p = std::filesystem::path(file).parent_path() / p;
    plan->base_file = p.lexically_normal().string();
    try {
      base = parse_strict(read_file(plan->base_file), plan->base_file);
    } catch (const InputError& e) {
      if (!e.pointer().empty()) throw;
      root.fail(root.at("base"), "base scenario " + plan->base_file + ": " + e.message());
    }
  } else if (bj.is_object()) {
    base = bj;
  } else {
    root.fail(
        root.at("base"),
        std::string("expected a scenario path or an inline scenario object, got ") + type_name(bj));
  }
  return base;
}

// Cartesian product of the axes (first axis slowest), filtered and de-duplicated.
void expand(const json& base, const std::vector<Axis>& axes, const std::vector<Column>& columns,
            std::vector<sweep_filter::Filter>& filters, SweepPlan* out) {
  SweepPlan& plan = *out;
  std::vector<int> filter_skips(filters.size(), 0);
  std::vector<size_t> idx(axes.size(), 0);
  std::unordered_map<std::string, int> seen;  // key → point index (lookups only)
  int duplicates = 0;
  std::string keys_concat;
  for (long long combo = 0; combo < plan.combinations; ++combo) {
    json doc = base;
    std::vector<const json*> values(columns.size(), nullptr);
    for (size_t a = 0; a < axes.size(); ++a) {
      const auto& setting = axes[a].settings[idx[a]];
      for (size_t c = 0; c < axes[a].columns.size(); ++c) {
        set_at(doc, columns[axes[a].columns[c]].tokens, setting[c]);
        values[axes[a].columns[c]] = &setting[c];
      }
    }
    bool keep = true;
    for (size_t f = 0; f < filters.size() && keep; ++f) {
      if (!filters[f].keep(doc, static_cast<int>(combo))) {
        keep = false;
        ++filter_skips[f];
      }
    }
    if (keep) {
      SweepPoint p;
      p.scenario_json = doc.dump();
      p.key = hex64(fnv1a64(p.scenario_json));
      const auto [it, fresh] = seen.emplace(p.key, static_cast<int>(plan.points.size()));
      if (!fresh) {
        if (plan.points[it->second].scenario_json != p.scenario_json)
          throw InternalError("sweep: FNV-1a 64 collision between two points");
        ++duplicates;
      } else {
        p.index = static_cast<int>(plan.points.size());
        for (const json* v : values)
          p.values_json.push_back(v->dump());
        keys_concat += p.key;
        plan.points.push_back(std::move(p));
      }
    }
    for (size_t a = axes.size(); a-- > 0;) {  // odometer, last axis fastest
      if (++idx[a] < axes[a].settings.size()) break;
      idx[a] = 0;
    }
  }
  for (size_t f = 0; f < filters.size(); ++f)
    if (filter_skips[f] > 0) plan.skipped.push_back({filters[f].name(), filter_skips[f]});
  if (duplicates > 0) plan.skipped.push_back({"duplicate of an earlier point", duplicates});
  plan.sweep_key = hex64(fnv1a64(keys_concat));
}

}  // namespace

std::string sweep_point_file(const SweepPlan& plan, int index) {
  return plan.file + "[point " + std::to_string(index) + "]";
}

std::vector<std::pair<std::string, std::vector<std::string>>> sweep_keys() {
  return {{"", kSweepKeys},
          {"/axes#grid", kGridKeys},
          {"/axes#zip", kZipKeys},
          {"/axes#zip/parameters", kZipParamKeys},
          {"/axes#random", kRandomKeys},
          {"/axes#random/parameters", kRandomParamKeys},
          {"/filters", kFilterKeys}};
}

SweepPlan load_sweep(const std::string& path, const LoadOptions& options) {
  return parse_sweep(read_file(path), path, options);
}

SweepPlan parse_sweep(const std::string& text, const std::string& file, const LoadOptions& opt_in) {
  LoadOptions opt = opt_in;
  if (opt.data_dir.empty()) opt.data_dir = default_data_dir();
  const json j = parse_strict(text, file);
  const Obj root(j, file, "", kSweepKeys);
  SweepPlan plan;
  plan.file = file;
  plan.name = root.str("name");
  if (!is_folder_name(plan.name))
    root.fail(root.at("name"),
              "expected a name matching [A-Za-z0-9._-]{1,128}, got '" + plan.name + "'");
  plan.description = root.str_or("description", "");

  const json base = read_base(root, file, &plan);

  const json& axes_j = root.get("axes");
  if (!axes_j.is_array() || axes_j.empty())
    root.fail(root.at("axes"), "expected a non-empty array of axes");
  SweepReader reader(file, opt);
  std::vector<Axis> axes;
  long double total = 1;
  for (size_t i = 0; i < axes_j.size(); ++i) {
    axes.push_back(reader.read_axis(root, i, base));
    total *= static_cast<long double>(axes.back().settings.size());
    if (total > static_cast<long double>(opt.max_sweep_points)) {
      root.fail(root.at("axes") + "/" + std::to_string(i),
                "the sweep expands to more points than its limit of " +
                    std::to_string(opt.max_sweep_points) + " (raise it with --max-points)");
    }
  }
  for (const auto& c : reader.columns())
    plan.columns.push_back(c.pointer);
  plan.combinations = static_cast<long long>(total);

  // Every distinct value through the scenario loader once (types and ranges).
  for (const Axis& a : axes) {
    for (size_t k = 0; k < a.settings.size(); ++k)
      for (size_t c = 0; c < a.columns.size(); ++c) {
        if (a.random) continue;  // checked through their ranges (extra_checks) below
        reader.check_value(base, a.columns[c], a.settings[k][c], a.setting_ptrs[k][c]);
      }
  }
  for (const auto& e : reader.extra_checks())
    reader.check_value(base, e.column, e.value, e.where);

  std::vector<sweep_filter::Filter> filters;
  if (root.has("filters")) {
    const json& fj = root.get("filters");
    if (!fj.is_array()) root.fail(root.at("filters"), "expected an array of {name, expr}");
    for (size_t i = 0; i < fj.size(); ++i) {
      const Obj fo(fj[i], file, root.at("filters") + "/" + std::to_string(i), kFilterKeys);
      filters.emplace_back(fo.str("name"), fo.str("expr"), file, fo.at("expr"), opt.data_dir);
    }
  }

  expand(base, axes, reader.columns(), filters, &plan);
  return plan;
}

}  // namespace fleetsim
