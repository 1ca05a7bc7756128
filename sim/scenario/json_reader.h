// Strict JSON reading shared by the scenario/ loaders (scenarios, topologies, calibration,
// models). Internal to sim/scenario: it includes nlohmann_json, which stays inside this
// directory. parse_strict refuses duplicate keys and nesting deeper than 64 levels; Obj checks
// an object's keys against the accepted list on construction ("did you mean" for near misses)
// and reads typed, range-checked values, naming the file and JSON pointer on every error.
#pragma once

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/csv.h"
#include "core/error.h"
#include "core/units.h"
#include "scenario/scenario.h"

namespace fleetsim::jsonr {

using json = nlohmann::json;
namespace fs = std::filesystem;

constexpr int kMaxDepth = 64;
constexpr size_t kMaxFileBytes = 16u << 20;

// A regular file of at most kMaxFileBytes (core/csv.h's reader: folders, devices and pipes are
// refused, so a /dev/zero path cannot be read without end).
inline std::string read_file(const std::string& path) {
  return read_text_file(path, kMaxFileBytes);
}

inline std::string escape_pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

// Parses with a callback that refuses duplicate keys and excessive nesting.
inline json parse_strict(const std::string& text, const std::string& file) {
  std::vector<std::set<std::string>> keys;
  std::vector<std::string> path;
  std::string error, error_ptr;
  auto pointer = [&] {
    std::string p;
    for (const auto& k : path)
      p += "/" + escape_pointer_token(k);
    return p;
  };
  auto cb = [&](int depth, json::parse_event_t event, json& parsed) -> bool {
    if (!error.empty()) return false;
    if (depth > kMaxDepth) {
      error = "nesting deeper than " + std::to_string(kMaxDepth) + " levels";
      error_ptr = pointer();
      return false;
    }
    switch (event) {
      case json::parse_event_t::object_start:
        keys.emplace_back();
        path.emplace_back();
        break;
      case json::parse_event_t::key: {
        const std::string k = parsed.get<std::string>();
        if (!keys.empty()) {
          if (!keys.back().insert(k).second) {
            path.back() = k;
            error = "duplicate key '" + k + "'";
            error_ptr = pointer();
            return false;
          }
          path.back() = k;
        }
        break;
      }
      case json::parse_event_t::object_end:
        if (!keys.empty()) keys.pop_back();
        if (!path.empty()) path.pop_back();
        break;
      default:
        break;
    }
    return true;
  };
  json j;
  try {
    j = json::parse(text, cb, /*allow_exceptions=*/true, /*ignore_comments=*/false);
  } catch (const json::exception& e) {
    if (!error.empty()) throw InputError(file, error_ptr, error);
    std::string what = e.what();
    const auto pos = what.find("] ");
    throw InputError(file, "",
                     "not valid JSON: " + (pos == std::string::npos ? what : what.substr(pos + 2)));
  }
  if (!error.empty()) throw InputError(file, error_ptr, error);
  return j;
}

inline const char* type_name(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    case json::value_t::number_float:
      return "a number";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    default:
      return "an unsupported value";
  }
}

inline std::string show(const json& j) {
  std::string s = j.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

// A JSON object whose keys are checked against `allowed` on construction.
class Obj {
 public:
  Obj(const json& j, std::string file, std::string ptr, const std::vector<std::string>& allowed)
      : j_(j), file_(std::move(file)), ptr_(std::move(ptr)) {
    if (!j_.is_object()) fail(ptr_, std::string("expected an object, got ") + type_name(j_));
    for (const auto& [k, v] : j_.items()) {
      if (std::find(allowed.begin(), allowed.end(), k) != allowed.end()) continue;
      std::string msg = "unknown key '" + k + "'";
      const std::string near = closest_match(k, allowed);
      if (!near.empty()) {
        msg += "; did you mean '" + near + "'?";
      } else {
        std::string list;
        for (const auto& a : allowed)
          list += (list.empty() ? "" : ", ") + a;
        msg += "; expected one of: " + list;
      }
      fail(at(k), msg);
    }
  }

  bool has(const std::string& key) const { return j_.contains(key); }
  std::string at(const std::string& key) const { return ptr_ + "/" + escape_pointer_token(key); }
  [[noreturn]] void fail(const std::string& ptr, const std::string& msg) const {
    throw InputError(file_, ptr, msg);
  }
  const json& get(const std::string& key) const {
    if (!j_.contains(key)) fail(at(key), "missing required key '" + key + "'");
    return j_.at(key);
  }

  std::string str(const std::string& key) const {
    const json& v = get(key);
    if (!v.is_string()) fail(at(key), std::string("expected a string, got ") + type_name(v));
    return v.get<std::string>();
  }
  std::string str_or(const std::string& key, const std::string& dflt) const {
    return has(key) ? str(key) : dflt;
  }
  std::string choice(const std::string& key, const std::vector<std::string>& options) const {
    const std::string s = str(key);
    if (std::find(options.begin(), options.end(), s) != options.end()) return s;
    std::string list;
    for (const auto& o : options)
      list += (list.empty() ? "" : ", ") + ("'" + o + "'");
    std::string msg = "expected one of " + list + ", got '" + s + "'";
    const std::string near = closest_match(s, options);
    if (!near.empty()) msg += "; did you mean '" + near + "'?";
    fail(at(key), msg);
  }
  int64_t integer(const std::string& key, int64_t lo, int64_t hi) const {
    const json& v = get(key);
    int64_t x = 0;
    if (v.is_number_integer()) {
      x = v.get<int64_t>();
    } else if (v.is_number_unsigned()) {
      const auto u = v.get<uint64_t>();
      if (u > static_cast<uint64_t>(hi)) fail(at(key), range_msg(lo, hi, show(v)));
      x = static_cast<int64_t>(u);
    } else if (v.is_number_float() && std::isfinite(v.get<double>()) &&
               v.get<double>() == std::floor(v.get<double>()) &&
               std::fabs(v.get<double>()) < 9e15) {
      x = static_cast<int64_t>(v.get<double>());
    } else {
      fail(at(key), std::string("expected an integer, got ") + type_name(v) + " " + show(v));
    }
    if (x < lo || x > hi) fail(at(key), range_msg(lo, hi, std::to_string(x)));
    return x;
  }
  double number(const std::string& key, double lo, double hi) const {
    const json& v = get(key);
    if (!v.is_number()) fail(at(key), std::string("expected a number, got ") + type_name(v));
    const double x = v.get<double>();
    if (!std::isfinite(x) || x < lo || x > hi) {
      std::ostringstream m;
      m << "expected a number in [" << lo << ", " << hi << "], got " << show(v);
      fail(at(key), m.str());
    }
    return x;
  }
  bool boolean(const std::string& key) const {
    const json& v = get(key);
    if (!v.is_boolean()) fail(at(key), std::string("expected true or false, got ") + type_name(v));
    return v.get<bool>();
  }
  Bytes bytes(const std::string& key) const { return bytes_value(get(key), at(key)); }
  Bytes bytes_value(const json& v, const std::string& ptr) const {
    if (v.is_number_integer() || v.is_number_unsigned()) {
      if (v.is_number_integer() && v.get<int64_t>() < 0)
        fail(ptr, "expected a size >= 0, got " + show(v));
      if (v.is_number_unsigned() && v.get<uint64_t>() > (1ULL << 62))
        fail(ptr, "size too large: " + show(v));
      return Bytes(v.is_number_unsigned() ? static_cast<int64_t>(v.get<uint64_t>())
                                          : v.get<int64_t>());
    }
    if (!v.is_string())
      fail(ptr, std::string("expected a size such as \"1GiB\", got ") + type_name(v));
    std::string err;
    auto b = parse_bytes(v.get<std::string>(), &err);
    if (!b) fail(ptr, err);
    return *b;
  }
  Bandwidth bandwidth(const std::string& key) const {
    const json& v = get(key);
    if (!v.is_string())
      fail(at(key), std::string("expected a bandwidth such as \"400Gbps\", got ") + type_name(v));
    std::string err;
    auto b = parse_bandwidth(v.get<std::string>(), &err);
    if (!b) fail(at(key), err);
    if (b->bytes_per_second() <= 0) fail(at(key), "expected a bandwidth > 0, got " + show(v));
    return *b;
  }
  Time time(const std::string& key) const {
    const json& v = get(key);
    if (!v.is_string())
      fail(at(key), std::string("expected a time such as \"2.5us\", got ") + type_name(v));
    std::string err;
    auto t = parse_time(v.get<std::string>(), &err);
    if (!t) fail(at(key), err);
    return *t;
  }
  Obj object(const std::string& key, const std::vector<std::string>& allowed) const {
    return Obj(get(key), file_, at(key), allowed);
  }
  const json& raw() const { return j_; }
  const std::string& file() const { return file_; }
  const std::string& ptr() const { return ptr_; }

 private:
  static std::string range_msg(int64_t lo, int64_t hi, const std::string& got) {
    return "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
           got;
  }
  const json& j_;
  std::string file_;
  std::string ptr_;
};

// Stems of the *.json files in `dir`, sorted (none when it cannot be read).
inline std::vector<std::string> json_stems(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".json") out.push_back(e.path().stem().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// "unknown WHAT 'NAME'; did you mean 'X'? (known: A, B<extra>)"; the suggestion is the name
// closest to `lookup` (NAME, or a normalised form of it).
inline std::string unknown_name_message(const std::string& what, const std::string& name,
                                        const std::string& lookup,
                                        const std::vector<std::string>& names,
                                        const std::string& extra = "") {
  std::string msg = "unknown " + what + " '" + name + "'";
  const std::string near = closest_match(lookup, names);
  if (!near.empty()) msg += "; did you mean '" + near + "'?";
  std::string list;
  for (const auto& n : names)
    list += (list.empty() ? "" : ", ") + n;
  return msg + " (known: " + list + extra + ")";
}

// A data file by name (<data_dir>/<subdir>/NAME.json) or by path (anything with a '/' or
// ".json" in it, returned as given). InputError without a file ("unknown WHAT ...") when no
// such name exists.
inline std::string resolve_named_file(const std::string& name_or_path, const std::string& data_dir,
                                      const std::string& subdir, const std::string& what) {
  if (name_or_path.find('/') != std::string::npos ||
      name_or_path.find(".json") != std::string::npos)
    return name_or_path;
  const std::string path = (fs::path(data_dir) / subdir / (name_or_path + ".json")).string();
  std::error_code ec;  // e.g. a name longer than the file system allows: not a known name
  if (!fs::exists(path, ec)) {
    const auto names = json_stems(fs::path(data_dir) / subdir);
    throw InputError("", "", unknown_name_message(what, name_or_path, name_or_path, names));
  }
  return path;
}

// 1-128 characters from [A-Za-z0-9._-]: safe as a folder name (scenario and sweep names).
inline bool is_folder_name(const std::string& s) {
  return !s.empty() && s.size() <= 128 &&
         s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
             std::string::npos;
}

}  // namespace fleetsim::jsonr
