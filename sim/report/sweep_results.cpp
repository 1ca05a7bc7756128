// Sweep result rows as JSON Lines and CSV, and the results folder's manifest (sweep_results.h).
#include "report/sweep_results.h"

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace fleetsim {
namespace {

using ojson = nlohmann::ordered_json;
using json = nlohmann::json;

ojson metric_json(const MetricValue& m) {
  switch (m.kind) {
    case MetricValue::Kind::kNumber:
      return m.number;
    case MetricValue::Kind::kInteger:
      return m.integer;
    case MetricValue::Kind::kBool:
      return m.boolean;
    case MetricValue::Kind::kString:
      return m.text;
    case MetricValue::Kind::kNone:
      break;
  }
  return nullptr;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s)
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// A JSON value as a CSV cell: strings bare, null empty, everything else as JSON text.
std::string csv_cell(const ojson& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return csv_field(v.get<std::string>());
  return csv_field(v.dump());
}

bool is_status(const std::string& s) {
  return s == "ok" || s == "invalid" || s == "error";
}

}  // namespace

std::string SweepResultsCodec::jsonl_row(const SweepRow& row,
                                         const std::vector<std::string>& columns) const {
  FLEETSIM_ASSERT(row.values_json.size() == columns.size());
  ojson j;
  j["point"] = row.point;
  j["key"] = row.key;
  j["status"] = row.status;
  for (size_t c = 0; c < columns.size(); ++c)
    j[columns[c]] = ojson::parse(row.values_json[c]);
  for (size_t i = 0; i < kNumSweepMetrics; ++i)
    j[std::string(kSweepMetricColumns[i])] = metric_json(row.metrics[i]);
  j["error"] = row.status == "ok" ? ojson(nullptr) : ojson(row.error);
  return j.dump();
}

std::optional<SweepRow> SweepResultsCodec::parse_jsonl_row(
    const std::string& line, const std::vector<std::string>& columns) const {
  const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  auto str = [&](const char* k) -> const json* {
    const auto it = j.find(k);
    return it != j.end() && it->is_string() ? &*it : nullptr;
  };
  const json* key = str("key");
  const json* status = str("status");
  const auto point = j.find("point");
  const auto error = j.find("error");
  if (key == nullptr || status == nullptr || point == j.end() || !point->is_number_integer() ||
      error == j.end() || !(error->is_null() || error->is_string()) ||
      key->get<std::string>().size() != 16 || !is_status(status->get<std::string>()))
    return std::nullopt;
  SweepRow row;
  row.point = point->get<int>();
  row.key = key->get<std::string>();
  row.status = status->get<std::string>();
  if (error->is_string()) row.error = error->get<std::string>();
  for (const auto& c : columns) {
    const auto it = j.find(c);
    row.values_json.push_back(it == j.end() ? "null" : it->dump());
  }
  for (size_t i = 0; i < kNumSweepMetrics; ++i) {
    const auto it = j.find(std::string(kSweepMetricColumns[i]));
    if (it == j.end()) return std::nullopt;  // every metric column is always written
    if (it->is_number_integer()) {
      row.metrics[i] = MetricValue::integral(it->get<int64_t>());
    } else if (it->is_number()) {
      row.metrics[i] = MetricValue::num(it->get<double>());
    } else if (it->is_boolean()) {
      row.metrics[i] = MetricValue::flag(it->get<bool>());
    } else if (it->is_string()) {
      row.metrics[i] = MetricValue::str(it->get<std::string>());
    } else if (!it->is_null()) {
      return std::nullopt;
    }
  }
  return row;
}

std::string SweepResultsCodec::csv(const std::vector<SweepRow>& rows,
                                   const std::vector<std::string>& columns) const {
  std::string out = "point,key,status";
  for (const auto& c : columns)
    out += "," + csv_field(c);
  for (const auto& m : kSweepMetricColumns)
    out += "," + std::string(m);
  out += ",error\n";
  for (const auto& r : rows) {
    out += std::to_string(r.point) + "," + r.key + "," + r.status;
    for (const auto& v : r.values_json)
      out += "," + csv_cell(ojson::parse(v));
    for (const auto& m : r.metrics)
      out += "," + csv_cell(metric_json(m));
    out += "," + csv_field(r.error) + "\n";
  }
  return out;
}

std::string SweepResultsCodec::manifest_json(const SweepManifest& m) const {
  ojson j;
  j["fleetsim_sweep_version"] = 1;
  j["name"] = m.name;
  j["sweep_key"] = m.sweep_key;
  j["combinations"] = m.combinations;
  j["skipped"] = ojson::array();
  for (const auto& s : m.skipped)
    j["skipped"].push_back({{"reason", s.reason}, {"count", s.count}});
  j["shard"] = {{"index", m.shard.index}, {"count", m.shard.count}};
  j["columns"] = m.columns;
  j["points"] = ojson::array();
  for (size_t i = 0; i < m.keys.size(); ++i) {
    ojson p = ojson::array({m.keys[i]});
    for (const auto& v : m.values_json[i])
      p.push_back(ojson::parse(v));
    j["points"].push_back(std::move(p));
  }
  return j.dump() + "\n";
}

SweepManifest SweepResultsCodec::parse_manifest(const std::string& text,
                                                const std::string& file) const {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  auto bad = [&](const std::string& ptr, const std::string& what) {
    return InputError(file, ptr, "expected " + what + " (a fleetsim sweep manifest)");
  };
  if (j.is_discarded() || !j.is_object()) throw bad("", "a JSON object");
  if (j.value("fleetsim_sweep_version", 0) != 1) throw bad("/fleetsim_sweep_version", "1");
  SweepManifest m;
  try {
    m.name = j.at("name").get<std::string>();
    m.sweep_key = j.at("sweep_key").get<std::string>();
    m.combinations = j.at("combinations").get<long long>();
    for (const auto& s : j.at("skipped"))
      m.skipped.push_back({s.at("reason").get<std::string>(), s.at("count").get<int>()});
    m.shard.index = j.at("shard").at("index").get<int>();
    m.shard.count = j.at("shard").at("count").get<int>();
    m.columns = j.at("columns").get<std::vector<std::string>>();
    for (const auto& p : j.at("points")) {
      if (!p.is_array() || p.size() != m.columns.size() + 1)
        throw bad("/points", "[key, values...]");
      m.keys.push_back(p[0].get<std::string>());
      std::vector<std::string> values;
      for (size_t c = 1; c < p.size(); ++c)
        values.push_back(p[c].dump());
      m.values_json.push_back(std::move(values));
    }
  } catch (const json::exception& e) {
    throw bad("", std::string("the manifest's keys: ") + e.what());
  }
  if (m.shard.count < 1 || m.shard.index < 0 || m.shard.index >= m.shard.count)
    throw bad("/shard", "0 <= index < count");
  return m;
}

}  // namespace fleetsim
