#include <cmath>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "coll/collective.h"
#include "core/error.h"
#include "scenario/scenario.h"
#include "study/cluster.h"
#include "study/collective.h"
#include "validate/validate.h"
#include "validate/validate_training.h"

namespace fleetsim {
namespace {

constexpr size_t kMaxNotesChars = 4096;

bool contains(const std::string& s, const char* sub) {
  return s.find(sub) != std::string::npos;
}

// Which fleetsim system stands for the hardware a row was measured on.
std::string system_for(const std::string& hw) {
  if (contains(hw, "GB200")) return "dgx-gb200-nvl72";
  if (contains(hw, "B200")) return "dgx-b200";
  if (contains(hw, "H100")) return "dgx-h100";
  if (contains(hw, "H200")) return "p5en.48xlarge";
  return "";
}

struct SystemCache {
  std::map<std::string, SystemSpec> systems;
  std::map<std::string, CollectiveParams> params;
};

}  // namespace

ValidationReport validate_reference(const std::string& csv_path, const std::string& data_dir,
                                    const ValidateOptions& options) {
  const CsvTable t = parse_csv(read_text_file(csv_path), csv_path);
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < t.header.size(); ++i)
    col[t.header[i]] = i;
  for (const char* need :
       {"hardware", "num_gpus", "model", "metric_name", "metric_value", "notes"}) {
    if (!col.count(need))
      throw InputError(csv_path, "line 1", std::string("missing column '") + need + "'");
  }
  ValidationReport rep;
  rep.reference = csv_path;
  SystemCache cache;
  TrainingCache training_cache;
  const std::regex size_re(R"(msg_bytes\s*[~=]+\s*(\d+))");
  double sum_large = 0, sum_small = 0;

  for (size_t r = 0; r < t.rows.size(); ++r) {
    const auto& row = t.rows[r];
    ValidationRow v;
    v.line = t.line_of_row[r];
    v.hardware = row[col["hardware"]];
    v.model = row[col["model"]];
    v.metric = row[col["metric_name"]];
    const std::string notes = row[col["notes"]];
    auto skip = [&](std::string why) {
      v.skipped = true;
      v.reason = std::move(why);
      rep.rows.push_back(v);
      ++rep.n_skipped;
    };
    try {
      v.num_gpus = std::stoi(row[col["num_gpus"]]);
      v.measured = std::stod(row[col["metric_value"]]);
    } catch (const std::exception&) {
      skip("num_gpus or metric_value is not a number");
      continue;
    }
    // std::regex matches recursively: a notes cell of a few 100 kB would overflow the stack.
    if (notes.size() > kMaxNotesChars) {
      skip("notes longer than " + std::to_string(kMaxNotesChars) + " characters");
      continue;
    }
    if (v.num_gpus < 1 || !std::isfinite(v.measured)) {
      skip("num_gpus below 1 or metric_value not finite");
      continue;
    }
    if (v.num_gpus > options.max_gpus) {
      skip("num_gpus " + std::to_string(v.num_gpus) + " is above the limit of " +
           std::to_string(options.max_gpus) + " GPUs (raise it with --max-gpus)");
      continue;
    }
    CollOp op;
    const std::string model = v.model == "alltoall" ? "all_to_all" : v.model;
    if (!parse_coll_op(model, &op)) {
      v.training = true;
      std::map<std::string, std::string> fields;
      for (size_t c = 0; c < t.header.size(); ++c)
        fields[t.header[c]] = row[c];
      std::string why;
      if (!predict_training_row(fields, data_dir, options, training_cache, &v, &why)) {
        skip(why);
        continue;
      }
      v.error_pct = (v.predicted - v.measured) / v.measured * 100.0;
      sum_large += std::fabs(v.error_pct);
      ++rep.n_rows;
      rep.rows.push_back(v);
      continue;
    }
    if (v.metric.rfind("busbw", 0) != 0) {
      skip("metric '" + v.metric +
           "' duplicates this size's busbw row; validate compares bus bandwidth");
      continue;
    }
    if (contains(v.metric, "nominal_reference")) {
      skip("nominal reference values of unstated provenance, not a measurement");
      continue;
    }
    std::smatch m;
    if (!std::regex_search(notes, m, size_re)) {
      skip("no message size (msg_bytes) in notes");
      continue;
    }
    if (v.num_gpus < 2) {
      skip("a collective needs at least 2 GPUs");
      continue;
    }
    if (m[1].length() > 13) {  // above 1 TiB (13 digits) also overflows nothing
      skip("message size (msg_bytes) above 1 TiB");
      continue;
    }
    v.size = Bytes(std::stoll(m[1].str()));
    if (v.size.count() < 1 || v.size.count() > (int64_t{1} << 40)) {
      skip("message size (msg_bytes) outside [1 B, 1 TiB]");
      continue;
    }
    v.small = v.size.count() < (1 << 20);
    if (v.measured <= 0) {
      skip("measured value is zero (below the source's print precision)");
      continue;
    }
    v.system = system_for(v.hardware);
    if (v.system.empty()) {
      skip("no fleetsim topology for this hardware");
      continue;
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
      skip("group does not split evenly over NVLink domains");
      continue;
    }
    const int per_domain = v.num_gpus / domains_used;
    if (per_domain > domain_gpus) {
      skip("placement in notes does not fit the NVLink domain");
      continue;
    }
    int nodes = domains_used * sys.scale_up.domain_nodes;
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
      skip("no algorithm can run this collective on this placement");
      continue;
    }
    const CollectiveResult best = simulate_fastest_collective(cluster, op, algos, v.size, ranks, 1);
    v.algorithm = to_string(best.algorithm);
    v.predicted = best.busbw_gbps;
    v.error_pct = (v.predicted - v.measured) / v.measured * 100.0;
    if (v.small) {
      sum_small += std::fabs(v.error_pct);
      ++rep.n_small;
    } else {
      sum_large += std::fabs(v.error_pct);
      ++rep.n_rows;
    }
    rep.rows.push_back(v);
  }
  rep.mape_pct = rep.n_rows ? sum_large / rep.n_rows : 0.0;
  for (const auto& v : rep.rows) {
    if (v.skipped || v.small) continue;
    rep.max_abs_error_pct = std::max(rep.max_abs_error_pct, std::fabs(v.error_pct));
    auto& [sum, n] = rep.mape_by_hardware[v.hardware];
    sum += std::fabs(v.error_pct);
    ++n;
  }
  for (auto& [hw, e] : rep.mape_by_hardware)
    e.first /= e.second;
  rep.mape_small_pct = rep.n_small ? sum_small / rep.n_small : 0.0;
  return rep;
}

}  // namespace fleetsim
