// `fleetsim validate --reference FILE.csv`: simulated against measured rows, and the MAPE.
#include <algorithm>
#include <cstdio>

#include "cli/commands.h"
#include "report/report.h"
#include "validate/validate.h"

namespace fleetsim {

int cmd_validate(const ValidateCli& o) {
  const ValidationReport rep = validate_reference(o.reference, default_data_dir(), o.options);
  if (o.json) {
    std::fputs(validation_json(rep).c_str(), stdout);
    return 0;
  }
  bool header = false;
  for (const auto& v : rep.rows) {
    if (v.skipped || !v.training) continue;
    if (!header) {
      std::printf("%-6s %-10s %5s %-24s %-52s %10s %10s %8s\n", "line", "hardware", "gpus", "model",
                  "configuration", "measured", "predicted", "error%");
      header = true;
    }
    std::printf("%-6d %-10.10s %5d %-24.24s %-52.52s %10.0f %10.0f %+8.1f\n", v.line,
                v.hardware.c_str(), v.num_gpus, v.model.c_str(), v.config.c_str(), v.measured,
                v.predicted, v.error_pct);
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
    if (v.skipped)
      std::printf("  line %-5d %-28.28s %-15s %s\n", v.line, v.hardware.c_str(), v.model.c_str(),
                  v.reason.c_str());
  }
  const bool training = std::any_of(rep.rows.begin(), rep.rows.end(),
                                    [](const ValidationRow& v) { return v.training; });
  std::printf("\n");
  for (const auto& [hw, e] : rep.mape_by_hardware)
    std::printf("MAPE %-28s %6.2f%% over %d rows\n", hw.c_str(), e.first, e.second);
  if (training) {
    std::printf("MAPE (all compared rows): %.2f%% over %d rows; worst row %.1f%%\n", rep.mape_pct,
                rep.n_rows, rep.max_abs_error_pct);
  } else {
    std::printf("MAPE (messages >= 1 MiB): %.2f%% over %d rows\n", rep.mape_pct, rep.n_rows);
    std::printf("MAPE (messages <  1 MiB): %.2f%% over %d rows\n", rep.mape_small_pct, rep.n_small);
  }
  std::printf("skipped: %d rows\n", rep.n_skipped);
  return 0;
}

}  // namespace fleetsim
