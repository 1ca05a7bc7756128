// JSON Lines / CSV / manifest writers and readers of sweep results (sweep/sweep.h). Columns are
// stable and documented in docs/sweeps.md ("Results"): point, key, status, one column per axis
// (named by its JSON pointer), the metrics of kSweepMetricColumns, error. Numbers are printed
// in the shortest form that reads back to the same double, so files are byte-identical for the
// same sweep.
#pragma once

#include "sweep/sweep.h"

namespace fleetsim {

class SweepResultsCodec final : public ResultsCodec {
 public:
  std::string jsonl_row(const SweepRow& row,
                        const std::vector<std::string>& columns) const override;
  std::optional<SweepRow> parse_jsonl_row(const std::string& line,
                                          const std::vector<std::string>& columns) const override;
  std::string csv(const std::vector<SweepRow>& rows,
                  const std::vector<std::string>& columns) const override;
  std::string manifest_json(const SweepManifest& m) const override;
  SweepManifest parse_manifest(const std::string& text, const std::string& file) const override;
};

}  // namespace fleetsim
