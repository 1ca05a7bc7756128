// `fleetsim import mlperf DIR`: reference-CSV rows from an MLPerf Training results tree
// (sim/validate/mlperf.h), on stdout or --out FILE; benchmarks without usable logs on stderr.
#include <cstdio>
#include <fstream>

#include "cli/commands.h"
#include "core/error.h"
#include "validate/mlperf.h"

namespace fleetsim {

int cmd_import_mlperf(const ImportMlperfCli& o) {
  const MlperfImport imp = import_mlperf(o.dir);
  if (o.out.empty()) {
    std::fputs(imp.csv.c_str(), stdout);
  } else {
    std::ofstream f(o.out, std::ios::binary);
    if (!f) throw InputError(o.out, "", "cannot write file");
    f << imp.csv;
    if (!f) throw InputError(o.out, "", "cannot write file");
  }
  for (const auto& s : imp.skipped)
    std::fprintf(stderr, "fleetsim: import mlperf: skipped %s\n", s.c_str());
  std::fprintf(stderr, "fleetsim: import mlperf: %d rows\n", imp.rows);
  return 0;
}

}  // namespace fleetsim
