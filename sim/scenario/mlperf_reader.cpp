// MLPerf Training system descriptions and MLLOG lines (mlperf_reader.h).
#include "scenario/mlperf_reader.h"

#include <sstream>

#include "scenario/json_reader.h"

namespace fleetsim {
namespace {

using jsonr::json;

std::string string_field(const json& j, const char* key, const std::string& file) {
  if (!j.contains(key)) return "";
  if (!j[key].is_string())
    throw InputError(file, std::string("/") + key,
                     std::string("expected a string, got ") + jsonr::type_name(j[key]));
  return j[key].get<std::string>();
}

int count_field(const json& j, const char* key, const std::string& file) {
  const std::string ptr = std::string("/") + key;
  if (!j.contains(key)) throw InputError(file, ptr, "missing; expected a positive integer");
  const json& v = j[key];
  long long n = 0;
  if (v.is_number_integer()) {
    n = v.get<long long>();
  } else if (v.is_string()) {
    const std::string s = v.get<std::string>();
    size_t pos = 0;
    try {
      n = std::stoll(s, &pos);
    } catch (const std::exception&) {
      pos = 0;
    }
    if (pos == 0 || pos != s.size()) n = 0;
  }
  if (n < 1 || n > 1'000'000)
    throw InputError(file, ptr, "expected a positive integer (number or numeric string)");
  return static_cast<int>(n);
}

}  // namespace

MlperfSystem read_mlperf_system(const std::string& path) {
  const json j = jsonr::parse_strict(jsonr::read_file(path), path);
  if (!j.is_object()) throw InputError(path, "", "expected an MLPerf system description object");
  MlperfSystem s;
  s.file = path;
  s.system_name = string_field(j, "system_name", path);
  s.submitter = string_field(j, "submitter", path);
  s.accelerator_model_name = string_field(j, "accelerator_model_name", path);
  s.framework = string_field(j, "framework", path);
  if (s.accelerator_model_name.empty())
    throw InputError(path, "/accelerator_model_name", "missing; expected the GPU's name");
  s.number_of_nodes = count_field(j, "number_of_nodes", path);
  s.accelerators_per_node = count_field(j, "accelerators_per_node", path);
  return s;
}

std::vector<MllogEvent> read_mllog(const std::string& path) {
  std::istringstream in(jsonr::read_file(path));
  std::vector<MllogEvent> out;
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    const auto at = text.find(":::MLLOG");
    if (at == std::string::npos) continue;
    const std::string where = "line " + std::to_string(line);
    json j;
    try {
      j = jsonr::parse_strict(text.substr(at + 8), path);
    } catch (const InputError& e) {
      throw InputError(
          path, where,
          "expected one complete MLLOG JSON object after ':::MLLOG' (" + e.message() + ")");
    }
    if (!j.is_object() || !j.contains("key") || !j["key"].is_string() || !j.contains("value"))
      throw InputError(path, where, "expected an MLLOG record with \"key\" and \"value\"");
    MllogEvent e;
    e.line = line;
    e.key = j["key"].get<std::string>();
    const json& v = j["value"];
    if (v.is_number()) {
      e.is_number = true;
      e.number = v.get<double>();
    } else if (v.is_string()) {
      e.text = v.get<std::string>();
    } else if (v.is_object()) {
      for (const auto& [k, x] : v.items())
        if (x.is_number()) e.fields[k] = x.get<double>();
    }
    if (j.contains("metadata") && j["metadata"].is_object()) {
      for (const auto& [k, x] : j["metadata"].items())
        if (x.is_number()) e.metadata_numbers[k] = x.get<double>();
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace fleetsim
