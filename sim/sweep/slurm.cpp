// Slurm job-array scripts for a sweep (sweep.h): one array task per shard, each running
// `fleetsim sweep FILE --shard $SLURM_ARRAY_TASK_ID/N`, and a merge job that runs after them.
// Tasks resume: a requeued or resubmitted task skips the points its folder already holds.
#include <sys/stat.h>
#include <filesystem>

#include "core/error.h"
#include "sweep/sweep.h"

namespace fleetsim {
namespace {

std::string quote(const std::string& s) {  // POSIX shell single quotes
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string header(const SlurmOptions& opt, const std::string& job, const std::string& log) {
  std::string h = "#!/bin/bash\n";
  h += "#SBATCH --job-name=" + job + "\n";
  h += "#SBATCH --output=" + log + "\n";
  if (!opt.partition.empty()) h += "#SBATCH --partition=" + opt.partition + "\n";
  if (!opt.time_limit.empty()) h += "#SBATCH --time=" + opt.time_limit + "\n";
  return h;
}

}  // namespace

std::vector<std::string> emit_slurm(const SweepPlan& plan, const SlurmOptions& opt) {
  namespace fs = std::filesystem;
  if (opt.shards < 1) throw InputError("--shards", "", "expected at least 1 shard");
  for (const std::string* v : {&opt.partition, &opt.time_limit}) {
    if (v->find_first_of(" \t\n'\"$`\\;") != std::string::npos)
      throw InputError("--emit-slurm", "", "unexpected characters in '" + *v + "'");
  }
  std::error_code ec;
  fs::create_directories(opt.dir, ec);
  if (ec) throw InputError(opt.dir, "", "cannot create the folder: " + ec.message());
  const std::string dir = fs::absolute(opt.dir).lexically_normal().string();
  const std::string exe = fs::absolute(opt.fleetsim_exe).lexically_normal().string();
  const std::string sweep = fs::absolute(opt.sweep_file).lexically_normal().string();
  fs::create_directories(dir + "/logs", ec);
  const std::string n = std::to_string(opt.shards);
  const std::string job = "fleetsim-" + plan.name;

  std::string array = header(opt, job, dir + "/logs/shard-%a.out");
  array += "#SBATCH --array=0-" + std::to_string(opt.shards - 1) + "\n";
  array += "#SBATCH --cpus-per-task=" + std::to_string(opt.cpus_per_task) + "\n";
  array += "# fleetsim sweep " + plan.name + ": " + std::to_string(plan.points.size()) +
           " points in " + n + " shards, one array task per shard (shard i = points with index " +
           "% " + n + " == i).\n";
  array += "set -euo pipefail\n";
  std::string limits;
  for (const std::string& a : opt.limit_args)
    limits += " " + quote(a);
  array += "exec " + quote(exe) + " sweep " + quote(sweep) + " --shard \"${SLURM_ARRAY_TASK_ID}/" +
           n + "\" -j \"${SLURM_CPUS_PER_TASK:-" + std::to_string(opt.cpus_per_task) + "}\"" +
           limits + " --progress lines --out " + quote(dir) + "/shard-\"${SLURM_ARRAY_TASK_ID}\"\n";

  std::string merge = header(opt, job + "-merge", dir + "/logs/merge.out");
  merge += "# Merges the " + n + " shard folders into " + dir + "/merged; fails naming the " +
           "missing points if a shard did not finish.\n";
  merge += "set -euo pipefail\nexec " + quote(exe) + " merge " + quote(dir + "/merged");
  for (int i = 0; i < opt.shards; ++i)
    merge += " " + quote(dir + "/shard-" + std::to_string(i));
  merge += "\n";

  std::string submit =
      "#!/bin/bash\n# Submits the sweep's job array, then the merge once every "
      "task has succeeded.\nset -euo pipefail\n";
  submit += "array=$(sbatch --parsable " + quote(dir + "/sweep.sbatch") + ")\n";
  submit += "merge=$(sbatch --parsable --dependency=afterok:\"${array%%;*}\" " +
            quote(dir + "/merge.sbatch") + ")\n";
  submit += "echo \"submitted array ${array%%;*} (" + n +
            " tasks) and merge ${merge%%;*}; results: " + dir + "/merged\"\n";

  std::vector<std::string> files;
  for (const auto& [name, text] : {std::pair{std::string("sweep.sbatch"), array},
                                   std::pair{std::string("merge.sbatch"), merge},
                                   std::pair{std::string("submit.sh"), submit}}) {
    const std::string path = dir + "/" + name;
    replace_file_durably(path, text);
    ::chmod(path.c_str(), 0755);
    files.push_back(path);
  }
  return files;
}

}  // namespace fleetsim
