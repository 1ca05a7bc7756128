// `fleetsim calibrate import FILE`: a fleetsim-calibrate file checked and added to a calibration
// set.
#include <cstdio>

#include "cli/commands.h"
#include "compute/import.h"
#include "core/error.h"
#include "scenario/scenario.h"

namespace fleetsim {

// Checks a fleetsim-calibrate file and adds it to a calibration set (calibration/README.md).
int cmd_calibrate_import(const CalibrateImportCli& o) {
  const std::string& file = o.file;
  const std::string& sets_dir = o.sets_dir;
  std::string set = o.set;
  const CalibrationFile f = read_calibration_file(file);
  if (set.empty()) set = f.gpu + "-" + f.header.at("date").substr(0, 10);
  const bool is_path = set.find('/') != std::string::npos;
  if (!is_path && set.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789._-") != std::string::npos)
    throw InputError("--set", "",
                     "expected a name from [A-Za-z0-9._-] or a path, got '" + set + "'");
  const std::string dir =
      is_path
          ? set
          : (sets_dir.empty() ? default_data_dir() + "/calibration/sets" : sets_dir) + "/" + set;
  const std::string dest = import_calibration_file(file, dir);
  int gemm = 0, mem = 0, coll = 0;
  for (const auto& r : f.rows) {
    gemm += r.kernel == "gemm";
    mem += is_memory_kernel(r.kernel);
    coll += r.kernel.rfind("nccl_", 0) == 0;
  }
  std::printf("imported %s (%s, %s): %d GEMM, %d memory-bound, %d collective rows\n", file.c_str(),
              f.gpu.c_str(), f.header.at("device").c_str(), gemm, mem, coll);
  std::printf("set: %s\nfile: %s\n", dir.c_str(), dest.c_str());
  std::printf("use it: \"cluster\": {..., \"calibration_set\": \"%s\"}\n", set.c_str());
  return 0;
}

}  // namespace fleetsim
