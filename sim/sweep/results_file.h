// Reading a results.jsonl back and writing the final results files (internal to sim/sweep: the
// runner's resume and the merge).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sweep/sweep.h"

namespace fleetsim {

// The complete rows of a results.jsonl: newline-terminated lines the codec parses. A line cut
// short by a kill (no newline) or anything else is skipped and `clean` set to false.
struct ExistingResults {
  std::vector<std::string> lines;  // the valid lines, in file order
  std::vector<SweepRow> rows;
  bool clean = true;
};
ExistingResults read_results(const std::string& path, const std::vector<std::string>& columns,
                             const ResultsCodec& codec);

// Writes <out_dir>/results.jsonl and results.csv (each replaced durably) from the present rows,
// in point order; the rows are moved out.
void write_final_results(const std::string& out_dir, std::vector<std::optional<SweepRow>>* rows,
                         const std::vector<std::string>& columns, const ResultsCodec& codec);

}  // namespace fleetsim
