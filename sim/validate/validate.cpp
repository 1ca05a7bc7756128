// `fleetsim validate` over a reference CSV (validate.h): the columns, the cells every row needs,
// one compared row per run, collective rows, and the summary statistics.
#include "validate/validate.h"

#include <climits>
#include <cmath>
#include <map>
#include <regex>

#include "coll/collective.h"
#include "core/error.h"
#include "scenario/scenario.h"
#include "study/cluster.h"
#include "study/collective.h"
#include "validate/metrics.h"
#include "validate/validate_dispatch.h"
#include "validate/validate_memory.h"
#include "validate/validate_training.h"

namespace fleetsim {
namespace {

constexpr size_t kMaxNotesChars = 4096;

bool contains(const std::string& s, const char* sub) {
  return s.find(sub) != std::string::npos;
}

const std::vector<std::string>& required_columns() {
  static const std::vector<std::string> k = {"hardware",    "num_gpus",     "model",
                                             "metric_name", "metric_value", "notes"};
  return k;
}

// Every column a reference CSV may have: validation/README.md's throughput columns, the memory
// rows' extra ones, and `system` / `peak_tflops_per_gpu` (names.h, metrics.h).
const std::vector<std::string>& known_columns() {
  static const std::vector<std::string> k = {"source_url",
                                             "source_version",
                                             "hardware",
                                             "num_gpus",
                                             "model",
                                             "precision",
                                             "seq_len",
                                             "gbs",
                                             "mbs",
                                             "tp",
                                             "pp",
                                             "cp",
                                             "vp",
                                             "ep",
                                             "etp",
                                             "dp",
                                             "metric_name",
                                             "metric_value",
                                             "metric_unit",
                                             "notes",
                                             "fsdp",
                                             "recompute",
                                             "optimizer",
                                             "system",
                                             "peak_tflops_per_gpu",
                                             "framework"};
  return k;
}

void check_header(const CsvTable& t, const std::string& path) {
  for (const auto& h : t.header) {
    bool known = false;
    for (const auto& k : known_columns())
      known = known || h == k;
    if (!known) {
      const std::string near = closest_match(h, known_columns());
      throw InputError(path, "line 1",
                       "unknown column '" + h + "'" +
                           (near.empty() ? "" : " (did you mean '" + near + "'?)") +
                           "; expected columns of validation/README.md");
    }
  }
  for (const auto& need : required_columns()) {
    if (t.column(need) < 0) throw InputError(path, "line 1", "missing column '" + need + "'");
  }
}

std::string cell(const CsvTable& t, size_t r, const char* name) {
  const int c = t.column(name);
  return c < 0 ? "" : t.rows[r][static_cast<size_t>(c)];
}

// The run a training row belongs to: every cell but the metric's. Rows of one run restate one
// measurement in several units (tokens/s/GPU and model TFLOP/s/GPU of NVIDIA's tables).
std::string run_key(const CsvTable& t, size_t r) {
  std::string key;
  for (size_t c = 0; c < t.header.size(); ++c) {
    const std::string& h = t.header[c];
    if (h != "metric_name" && h != "metric_value" && h != "metric_unit")
      key += t.rows[r][c] + '\x1f';
  }
  return key;
}

struct CollectiveCache {
  std::map<std::string, SystemSpec> systems;
  std::map<std::string, CollectiveParams> params;
};

// A collective row: skips with the reason in *why, else fills v->predicted (bus bandwidth).
bool predict_collective_row(const std::string& notes, CollOp op, const std::string& data_dir,
                            CollectiveCache& cache, ValidationRow& v, std::string* why);

}  // namespace

const std::vector<std::string>& default_keys() {
  static const std::vector<std::string> k = {"seq_len", "gbs", "mbs", "tp", "pp",
                                             "cp",      "vp",  "ep",  "etp"};
  return k;
}

// size-exception: the row loop reads as one pass over the columns every row shares (cells,
// errors, the counted-once rule, then training or collective); its parts are the functions above.
ValidationReport validate_reference(const std::string& csv_path, const std::string& data_dir,
                                    const ValidateOptions& options) {
  const CsvTable t = parse_csv(read_text_file(csv_path), csv_path);
  if (is_dispatch_table(t)) return validate_dispatch_table(t, csv_path, data_dir, options);
  check_header(t, csv_path);
  ValidationReport rep;
  rep.reference = csv_path;
  CollectiveCache cache;
  TrainingContext training(data_dir, options);

  // Training rows of one run: the one with the highest-priority metric is compared.
  std::map<std::string, std::pair<int, size_t>> compared;  // run → (priority, row)
  std::vector<MetricSpec> specs(t.rows.size());
  for (size_t r = 0; r < t.rows.size(); ++r) {
    std::string why;
    char* end = nullptr;
    const std::string value = cell(t, r, "metric_value");
    const double x = std::strtod(value.c_str(), &end);
    if (!classify_metric(cell(t, r, "metric_name"), cell(t, r, "metric_unit"), x, &specs[r], &why))
      continue;
    if (specs[r].kind == MetricKind::kNone) continue;
    const int prio = metric_priority(specs[r].kind);
    auto [it, fresh] = compared.try_emplace(run_key(t, r), prio, r);
    if (!fresh && prio < it->second.first) it->second = {prio, r};
  }

  double sum_large = 0, sum_small = 0;
  const auto n_rows = static_cast<int64_t>(t.rows.size());
  for (size_t r = 0; r < t.rows.size(); ++r) {
    if (options.progress != nullptr) {
      const auto done = static_cast<int64_t>(r);
      options.progress->show(done, n_rows, done, 0, false);
    }
    ValidationRow v;
    v.line = t.line_of_row[r];
    v.hardware = cell(t, r, "hardware");
    v.model = cell(t, r, "model");
    v.metric = cell(t, r, "metric_name");
    v.unit = cell(t, r, "metric_unit");
    const std::string notes = cell(t, r, "notes");
    auto skip = [&](std::string why) {
      v.skipped = true;
      v.reason = std::move(why);
      rep.rows.push_back(v);
      ++rep.n_skipped;
    };
    auto malformed = [&](std::string why) {
      v.skipped = true;
      v.error = true;
      v.reason = std::move(why);
      rep.rows.push_back(v);
      ++rep.n_errors;
    };
    const std::string gpus = cell(t, r, "num_gpus"), value = cell(t, r, "metric_value");
    char* end = nullptr;
    const long long g = std::strtoll(gpus.c_str(), &end, 10);
    // An empty cell is "not stated" (validation/README.md): memory rows may give dp instead.
    const bool memory = is_memory_metric(v.metric);
    if (gpus.empty() && !memory) {
      skip("num_gpus not stated");
      continue;
    }
    if (!gpus.empty() && (*end != '\0' || g < 1 || g > INT_MAX)) {
      malformed("column 'num_gpus': expected a positive integer, got '" + gpus + "'");
      continue;
    }
    v.num_gpus = static_cast<int>(g);
    v.measured = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !std::isfinite(v.measured)) {
      malformed("column 'metric_value': expected a finite number, got '" + value + "'");
      continue;
    }
    if (v.measured < 0) {
      malformed("column 'metric_value': expected a positive " + v.metric + ", got " + value);
      continue;
    }
    // std::regex matches recursively: a notes cell of a few 100 kB would overflow the stack.
    if (notes.size() > kMaxNotesChars) {
      skip("notes longer than " + std::to_string(kMaxNotesChars) + " characters");
      continue;
    }
    if (v.num_gpus > options.max_gpus) {
      skip("num_gpus " + std::to_string(v.num_gpus) + " is above the limit of " +
           std::to_string(options.max_gpus) + " GPUs (raise it with --max-gpus)");
      continue;
    }
    CollOp op;
    const std::string coll = v.model == "alltoall" ? "all_to_all" : v.model;
    if (parse_coll_op(coll, &op)) {
      std::string why;
      if (!predict_collective_row(notes, op, data_dir, cache, v, &why)) {
        skip(why);
        continue;
      }
      v.error_pct = (v.predicted - v.measured) / v.measured * 100.0;
      (v.small ? sum_small : sum_large) += std::fabs(v.error_pct);
      ++(v.small ? rep.n_small : rep.n_rows);
      rep.rows.push_back(v);
      continue;
    }
    v.training = true;
    std::string why;
    std::map<std::string, std::string> fields;
    for (size_t c = 0; c < t.header.size(); ++c)
      fields[t.header[c]] = t.rows[r][c];
    if (memory) {  // peak memory rows: the memory estimator (validate_memory.h)
      if (v.measured == 0) {
        malformed("column 'metric_value': expected a positive " + v.metric + ", got " + value);
        continue;
      }
      if (!predict_memory_row(fields, data_dir, &v, &why)) {
        skip(why);
        continue;
      }
      v.unit = v.metric.size() > 3 && v.metric.compare(v.metric.size() - 3, 3, "_gb") == 0 ? "GB"
                                                                                           : "GiB";
      v.family = v.model;
      v.source = memory_row_source(fields["source_url"]) + " " + v.metric;
      v.error_pct = (v.predicted - v.measured) / v.measured * 100.0;
      sum_large += std::fabs(v.error_pct);
      ++rep.n_rows;
      rep.rows.push_back(v);
      continue;
    }
    MetricSpec spec;
    if (!classify_metric(v.metric, v.unit, v.measured, &spec, &why)) {
      malformed(why);
      continue;
    }
    if (spec.kind == MetricKind::kNone) {
      skip("metric '" + v.metric +
           "': validate compares tokens/s (per GPU or total), step time, model TFLOP/s per GPU "
           "and MFU");
      continue;
    }
    if (v.measured == 0) {
      malformed("column 'metric_value': expected a positive " + v.metric + ", got " + value);
      continue;
    }
    v.unit = spec.unit;
    const size_t first = compared.at(run_key(t, r)).second;
    if (first != r) {
      skip("same run as line " + std::to_string(t.line_of_row[first]) + " (" +
           cell(t, first, "metric_name") + "), counted once");
      continue;
    }
    const RowOutcome o = predict_training_row(fields, spec, training, &v, &why);
    if (o == RowOutcome::kMalformed) {
      malformed(why);
      continue;
    }
    if (o == RowOutcome::kSkipped) {
      skip(why);
      continue;
    }
    v.error_pct = (v.predicted - v.measured) / v.measured * 100.0;
    sum_large += std::fabs(v.error_pct);
    ++rep.n_rows;
    rep.rows.push_back(v);
  }
  if (options.progress != nullptr) options.progress->show(n_rows, n_rows, n_rows, 0, true);
  rep.mape_pct = rep.n_rows ? sum_large / rep.n_rows : 0.0;
  for (const auto& v : rep.rows) {
    if (v.skipped || !v.breakdown.memory_checked) continue;
    ++rep.n_memory_checked;
    if (!v.recipe_differences.empty()) ++rep.n_layout_differs;
    if (v.layout_source == "recipe") ++rep.n_recipe_layout;
    if (v.breakdown.layout_infeasible) {
      ++rep.n_layout_infeasible;
    } else if (!v.breakdown.memory_fits) {
      ++rep.n_not_fitting;
    }
  }
  for (const auto& v : rep.rows) {
    if (v.skipped || v.small) continue;
    rep.max_abs_error_pct = std::max(rep.max_abs_error_pct, std::fabs(v.error_pct));
    auto& [sum, n] = rep.mape_by_hardware[v.hardware];
    sum += std::fabs(v.error_pct);
    ++n;
  }
  for (auto& [hw, e] : rep.mape_by_hardware)
    e.first /= e.second;
  for (const auto& v : rep.rows) {
    if (v.skipped || v.source.empty()) continue;
    ValidationReport::SourceError& e = rep.memory_by_source[v.source];
    e.mape_pct += std::fabs(v.error_pct);
    e.bias_pct += v.error_pct;
    ++e.n;
  }
  for (auto& [src, e] : rep.memory_by_source) {
    e.mape_pct /= e.n;
    e.bias_pct /= e.n;
  }
  rep.mape_small_pct = rep.n_small ? sum_small / rep.n_small : 0.0;
  return rep;
}

namespace {

// size-exception: one linear pass over a collective row's conditions (metric, size, placement,
// algorithms), each a skip with its own reason.
bool predict_collective_row(const std::string& notes, CollOp op, const std::string& data_dir,
                            CollectiveCache& cache, ValidationRow& v, std::string* why) {
  static const std::regex size_re(R"(msg_bytes\s*[~=]+\s*(\d+))");
  if (v.metric.rfind("busbw", 0) != 0) {
    *why = "metric '" + v.metric +
           "' duplicates this size's busbw row; validate compares bus "
           "bandwidth";
    return false;
  }
  if (contains(v.metric, "nominal_reference")) {
    *why = "nominal reference values of unstated provenance, not a measurement";
    return false;
  }
  std::smatch m;
  if (!std::regex_search(notes, m, size_re)) {
    *why = "no message size (msg_bytes) in notes";
    return false;
  }
  if (v.num_gpus < 2) {
    *why = "a collective needs at least 2 GPUs";
    return false;
  }
  if (m[1].length() > 13) {  // above 1 TiB (13 digits) also overflows nothing
    *why = "message size (msg_bytes) above 1 TiB";
    return false;
  }
  v.size = Bytes(std::stoll(m[1].str()));
  if (v.size.count() < 1 || v.size.count() > (int64_t{1} << 40)) {
    *why = "message size (msg_bytes) outside [1 B, 1 TiB]";
    return false;
  }
  v.small = v.size.count() < (1 << 20);
  if (v.measured <= 0) {
    *why = "measured value is zero (below the source's print precision)";
    return false;
  }
  const SystemChoice sc = system_for_hardware(v.hardware, notes);
  v.system = sc.system;
  if (v.system.empty()) {
    *why = sc.reason;
    return false;
  }
  if (!cache.systems.count(v.system)) {
    cache.systems[v.system] = load_system(v.system, data_dir);
    cache.params[v.system] = load_collective_params(cache.systems[v.system], data_dir);
  }
  SystemSpec sys = cache.systems[v.system];
  const CollectiveParams& params = cache.params[v.system];
  // "pure RDMA" rows ran with NVLink only inside each tray. The 144-GPU rows also say
  // NCCL_MNNVL_ENABLE=0, but their ~750 GB/s busbw is impossible over 4 x 400G NICs per tray, so
  // they are modelled as two NVLink domains (README, "Validation").
  const bool mnnvl_off = contains(notes, "pure RDMA");
  const bool cross_domain = contains(notes, "cross-domain");
  if (mnnvl_off) sys.scale_up.domain_nodes = 1;  // NVLink only inside each tray
  const int gpn = sys.node.gpus;
  const int domain_gpus = gpn * sys.scale_up.domain_nodes;
  const int domains_used =
      cross_domain ? 2 : std::max(1, (v.num_gpus + domain_gpus - 1) / domain_gpus);
  if (v.num_gpus % domains_used != 0) {
    *why = "group does not split evenly over NVLink domains";
    return false;
  }
  const int per_domain = v.num_gpus / domains_used;
  if (per_domain > domain_gpus) {
    *why = "placement in notes does not fit the NVLink domain";
    return false;
  }
  const int nodes = domains_used * sys.scale_up.domain_nodes;
  const StudyCluster cluster{Topology(sys, sys.fabric, nodes), params, nullptr};
  const Topology& topo = cluster.topo;
  std::vector<int> ranks;
  for (int d = 0; d < domains_used; ++d) {
    for (int k = 0; k < per_domain; ++k)
      ranks.push_back(d * domain_gpus + k);
  }
  std::vector<Algorithm> algos = candidate_algorithms(topo, op, ranks);
  if (contains(notes, "NVLS_ENABLE=0")) {
    std::erase_if(algos,
                  [](Algorithm a) { return a == Algorithm::kNvls || a == Algorithm::kNvlsTree; });
  }
  if (algos.empty()) {
    *why = "no algorithm can run this collective on this placement";
    return false;
  }
  const CollectiveResult best = simulate_fastest_collective(cluster, op, algos, v.size, ranks, 1);
  v.algorithm = to_string(best.algorithm);
  v.predicted = best.busbw_gbps;
  return true;
}

}  // namespace
}  // namespace fleetsim
