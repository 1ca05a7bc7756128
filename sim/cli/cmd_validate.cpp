// `fleetsim validate --reference FILE.csv`: simulated against measured rows, and the MAPE; with
// --html / --csv the report page and the per-row breakdown. Malformed rows are printed as errors
// after the other rows are validated, and make the exit code 2.
#include <algorithm>
#include <cstdio>
#include <fstream>

#include "cli/commands.h"
#include "core/error.h"
#include "report/report.h"
#include "report/validate_html.h"
#include "scenario/scenario.h"
#include "validate/breakdown_csv.h"
#include "validate/names.h"
#include "validate/validate.h"
#include "validate/validate_dispatch.h"

namespace fleetsim {
namespace {

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw InputError(path, "", "cannot write file");
  f << text;
  if (!f) throw InputError(path, "", "cannot write file");
}

// --default KEY=VALUE → options.defaults; unknown keys are errors with a "did you mean".
void parse_defaults(const std::vector<std::string>& in, ValidateOptions* o) {
  for (const auto& kv : in) {
    const auto eq = kv.find('=');
    const std::string key = kv.substr(0, eq);
    if (eq == std::string::npos || eq + 1 == kv.size())
      throw InputError("command line", "--default", "expected KEY=VALUE, got '" + kv + "'");
    const auto& keys = default_keys();
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      const std::string near = closest_match(key, keys);
      std::string known;
      for (const auto& k : keys)
        known += (known.empty() ? "" : ", ") + k;
      throw InputError("command line", "--default",
                       "unknown key '" + key + "'" +
                           (near.empty() ? "" : " (did you mean '" + near + "'?)") +
                           "; keys: " + known);
    }
    o->defaults[key] = kv.substr(eq + 1);
  }
}

std::string value(const ValidationRow& v, double x) {
  char buf[32];
  const bool tokens = v.unit.rfind("tokens", 0) == 0 || v.unit.empty();
  std::snprintf(buf, sizeof buf, tokens ? "%.0f" : "%.4g", x);
  return buf;
}

void print_text(const ValidationReport& rep) {
  bool header = false;
  for (const auto& v : rep.rows) {
    if (v.skipped || !v.training) continue;
    if (!header) {
      std::printf("%-6s %-10s %5s %-24s %-52s %10s %10s %-12s %8s\n", "line", "hardware", "gpus",
                  "model", "configuration", "measured", "predicted", "unit", "error%");
      header = true;
    }
    std::printf("%-6d %-10.10s %5d %-24.24s %-52.52s %10s %10s %-12.12s %+8.1f\n", v.line,
                v.hardware.c_str(), v.num_gpus, v.model.c_str(), v.config.c_str(),
                value(v, v.measured).c_str(), value(v, v.predicted).c_str(), v.unit.c_str(),
                v.error_pct);
  }
  header = false;
  for (const auto& v : rep.rows) {
    if (v.skipped || v.training) continue;
    if (!header) {
      std::printf("%-6s %-28s %5s %-15s %14s %-10s %10s %10s %8s\n", "line", "hardware", "gpus",
                  "operation", "size(B)", "algo", "measured", "predicted", "error%");
      header = true;
    }
    std::printf("%-6d %-28.28s %5d %-15s %14lld %-10s %10.2f %10.2f %+8.1f%s\n", v.line,
                v.hardware.c_str(), v.num_gpus, v.model.c_str(),
                static_cast<long long>(v.size.count()), v.algorithm.c_str(), v.measured,
                v.predicted, v.error_pct, v.small ? "  (small)" : "");
  }
  std::printf("\nskipped rows:\n");
  for (const auto& v : rep.rows) {
    if (v.skipped && !v.error)
      std::printf("  line %-5d %-28.28s %-15s %s\n", v.line, v.hardware.c_str(), v.model.c_str(),
                  v.reason.c_str());
  }
  bool any_default = false;
  for (const auto& v : rep.rows) {
    if (v.defaults.empty() || v.skipped) continue;
    if (!any_default) std::printf("\n");
    any_default = true;
    std::printf("defaults used: line %d: %s\n", v.line, v.defaults.c_str());
  }
}

void print_summary(const ValidationReport& rep) {
  const bool training = std::any_of(rep.rows.begin(), rep.rows.end(),
                                    [](const ValidationRow& v) { return v.training; });
  std::printf("\n");
  for (const auto& [hw, e] : rep.mape_by_hardware)
    std::printf("MAPE %-28s %6.2f%% over %d rows\n", hw.c_str(), e.first, e.second);
  for (const auto& [src, e] : rep.memory_by_source)
    std::printf("memory rows, %s: MAPE %.2f%%, bias %+.2f%% over %d rows\n", src.c_str(),
                e.mape_pct, e.bias_pct, e.n);
  if (training) {
    std::printf("MAPE (all compared rows): %.2f%% over %d rows; worst row %.1f%%\n", rep.mape_pct,
                rep.n_rows, rep.max_abs_error_pct);
  } else {
    std::printf("MAPE (messages >= 1 MiB): %.2f%% over %d rows\n", rep.mape_pct, rep.n_rows);
    std::printf("MAPE (messages <  1 MiB): %.2f%% over %d rows\n", rep.mape_small_pct, rep.n_small);
  }
  if (rep.n_memory_checked) {
    std::printf("memory: %d of %d compared throughput rows predicted not to fit in HBM",
                rep.n_not_fitting, rep.n_memory_checked);
    std::string lines, infeasible;
    for (const auto& v : rep.rows) {
      if (v.skipped || !v.breakdown.memory_checked || v.breakdown.memory_fits) continue;
      std::string& list = v.breakdown.layout_infeasible ? infeasible : lines;
      list += (list.empty() ? "" : " ") + std::to_string(v.line);
    }
    if (lines.empty()) {
      std::printf("\n");
    } else {
      std::printf(" (lines %s)\n", lines.c_str());
    }
    if (rep.n_layout_infeasible) {
      std::printf(
          "memory: %d of %d state a layout whose weights, gradients and CUDA context alone exceed "
          "the HBM "
          "(layout_infeasible, not counted above; lines %s)\n",
          rep.n_layout_infeasible, rep.n_memory_checked, infeasible.c_str());
    }
    if (rep.n_layout_differs) {
      std::string differ, judged;
      for (const auto& v : rep.rows) {
        if (v.skipped || !v.breakdown.memory_checked || v.recipe_differences.empty()) continue;
        differ += (differ.empty() ? "" : " ") + std::to_string(v.line);
        if (v.layout_source == "recipe")
          judged += (judged.empty() ? "" : " ") + std::to_string(v.line);
      }
      std::printf(
          "memory: %d of %d print a layout that differs from their release's recipe "
          "(calibration/recipe-layouts.csv; lines %s)\n",
          rep.n_layout_differs, rep.n_memory_checked, differ.c_str());
      if (rep.n_recipe_layout)
        std::printf(
            "memory: %d of them judged with the recipe's layout: the printed one does not fit, "
            "the recipe's does (layout_source recipe; lines %s)\n",
            rep.n_recipe_layout, judged.c_str());
    }
  }
  std::printf("skipped: %d rows\n", rep.n_skipped);
  if (rep.n_errors) std::printf("malformed: %d rows (see the errors)\n", rep.n_errors);
}

}  // namespace

int cmd_validate(const ValidateCli& o) {
  ValidateOptions options = o.options;
  parse_defaults(o.defaults, &options);
  if (!o.model_map.empty()) options.models = load_model_map(o.model_map);
  if (!o.system.empty()) load_system(o.system, default_data_dir());  // unknown: exit 2 up front
  options.system = o.system;
  Progress progress = command_progress(o.progress, "validate", "rows");
  options.progress = &progress;
  const ValidationReport rep = validate_reference(o.reference, default_data_dir(), options);
  if (!o.html.empty()) write_file(o.html, validation_html(rep));
  if (!o.csv.empty()) write_file(o.csv, validation_breakdown_csv(rep));
  if (o.json) {
    std::fputs(validation_json(rep).c_str(), stdout);
  } else if (rep.dispatch) {
    std::fputs(dispatch_report_text(rep).c_str(), stdout);
  } else {
    print_text(rep);
    print_summary(rep);
  }
  for (const auto& v : rep.rows) {
    if (v.error)
      std::fprintf(stderr, "fleetsim: error: %s:line %d: %s\n", rep.reference.c_str(), v.line,
                   v.reason.c_str());
  }
  return rep.n_errors ? 2 : 0;
}

}  // namespace fleetsim
