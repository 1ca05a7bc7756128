// Benchmarks (not part of ctest) for the scale targets of issue 19: all-to-alls over 1,024 and
// 4,096 p6-b200 GPUs and inside / across GB200 NVL72 racks, DeepSeek-V3 steps with EP 256 and
// Dirichlet-skewed routing on 32 NVL72 racks and EP 64 on 8,192 B200, the Llama 3.1 405B step
// on 131,072 B200, and `auto` all-reduces (every applicable algorithm) over 32,768 and 131,072
// GPUs. Each row runs `fleetsim run` on a scenario written to a temporary folder, as a user
// would, in a child process whose CPU time (user + system: the machine may be shared, so wall
// time is only an upper bound) and peak RSS come from wait4(). --max-flows is raised so the
// 4,096-GPU all-to-all (16,773,120 flows; the default limit is 2^23) runs.
//
// Usage: fleetsim_bench_scale [FLEETSIM] [ROW...]   (default build/release/fleetsim, all rows)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_util.h"

using fleetsim::bench::now_s;

namespace {

struct Row {
  const char* name;
  const char* what;
  const char* scenario;  // JSON
};

#define A2A(sys, count, sizes)                                                      \
  "{\"name\": \"bench\", \"cluster\": {\"system\": \"" sys "\", \"count\": " #count \
  "}, \"workload\": {\"type\": \"collective\", \"operation\": \"all_to_all\", "     \
  "\"algorithm\": \"direct\", \"sizes\": " sizes "}}"
#define ALLREDUCE(count)                                                                     \
  "{\"name\": \"bench\", \"cluster\": {\"system\": \"p6-b200.48xlarge\", \"count\": " #count \
  "}, \"workload\": {\"type\": \"collective\", \"operation\": \"all_reduce\", "              \
  "\"algorithm\": \"auto\", \"sizes\": {\"min\": \"1GiB\", \"max\": \"1GiB\"}}}"
#define DEEPSEEK(sys, count, gpus, ep, pp, placement)                                            \
  "{\"name\": \"bench\", \"seed\": 1, \"cluster\": {\"system\": \"" sys "\", \"count\": " #count \
  "}, \"workload\": {\"type\": \"training\", \"model\": \"deepseek-v3\", "                       \
  "\"gpus\": " #gpus placement ", \"parallelism\": {\"tp\": 1, \"pp\": " #pp ", \"ep\": " #ep    \
  "}, \"batch\": {\"global\": 4096, \"micro\": 1, \"seq_len\": 4096}, \"recompute\": "           \
  "{\"mode\": \"selective\", \"modules\": [\"mlp\"]}, \"precision\": \"mxfp8\", "                \
  "\"framework\": {\"moe_dispatcher\": \"deepep\"}, \"routing\": {\"model\": \"dirichlet\", "    \
  "\"alpha\": 1.0}}}"

const Row kRows[] = {
    {"a2a-1024", "1 GiB all-to-all, 1,024 GPUs (128 x p6-b200), direct",
     A2A("p6-b200.48xlarge", 128, "{\"min\": \"1GiB\", \"max\": \"1GiB\"}")},
    {"a2a-4096", "1 GiB all-to-all, 4,096 GPUs (512 x p6-b200), direct",
     A2A("p6-b200.48xlarge", 512, "{\"min\": \"1GiB\", \"max\": \"1GiB\"}")},
    {"a2a-nvl72", "all-to-all 16 MiB-1 GiB, 72 GPUs (1 x p6e-gb200-ultraserver-72)",
     A2A("p6e-gb200-ultraserver-72", 1, "{\"min\": \"16MiB\", \"max\": \"1GiB\", \"factor\": 8}")},
    {"a2a-nvl72x2", "all-to-all 16 MiB-1 GiB, 144 GPUs (2 x p6e-gb200-ultraserver-72)",
     A2A("p6e-gb200-ultraserver-72", 2, "{\"min\": \"16MiB\", \"max\": \"1GiB\", \"factor\": 8}")},
    {"ds-ep256", "DeepSeek-V3 step, 2,048 GB200 (32 NVL72, 64/rack), EP 256, PP 8, Dirichlet",
     DEEPSEEK("p6e-gb200-ultraserver-72", 32, 2048, 256, 8,
              ", \"placement\": {\"ranks_per_domain\": 64}")},
    {"ds-ep64", "DeepSeek-V3 step, 8,192 B200 (1,024 x p6-b200), EP 64, PP 16, Dirichlet",
     DEEPSEEK("p6-b200.48xlarge", 1024, 8192, 64, 16, "")},
    {"llama-131k", "Llama 3.1 405B step, 131,072 B200 (16,384 x p6-b200), TP 8 PP 16 VP 8",
     "{\"name\": \"bench\", \"seed\": 1, \"cluster\": {\"system\": \"p6-b200.48xlarge\", "
     "\"count\": 16384}, \"workload\": {\"type\": \"training\", \"model\": \"llama3.1-405b\", "
     "\"parallelism\": {\"tp\": 8, \"pp\": 16, \"vp\": 8}, \"batch\": {\"global\": 16384, "
     "\"micro\": 1, \"seq_len\": 8192}, \"precision\": \"bf16\", \"framework\": "
     "{\"tp_comm_overlap\": true}}}"},
    {"ar-32k", "1 GiB all-reduce, 32,768 GPUs (4,096 x p6-b200), auto", ALLREDUCE(4096)},
    {"ar-131k", "1 GiB all-reduce, 131,072 GPUs (16,384 x p6-b200), auto", ALLREDUCE(16384)},
};

// Runs fleetsim on the row's scenario; prints CPU, wall, peak RSS and the last result line.
int run_row(const std::string& fleetsim, const Row& row, const std::string& tmp) {
  const std::string scenario = tmp + "/" + row.name + ".json";
  const std::string out = tmp + "/" + row.name;
  const std::string log = tmp + "/" + row.name + ".log";
  FILE* f = std::fopen(scenario.c_str(), "w");
  if (f == nullptr) return 1;
  std::fputs(row.scenario, f);
  std::fclose(f);
  const double t0 = now_s();
  const pid_t pid = fork();
  if (pid == 0) {
    FILE* o = std::freopen(log.c_str(), "w", stdout);
    (void)o;
    execl(fleetsim.c_str(), fleetsim.c_str(), "run", scenario.c_str(), "--out", out.c_str(),
          "--max-gpus", "1048576", "--max-flows", "100000000", "--progress", "none",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  rusage u{};
  wait4(pid, &status, 0, &u);
  const double wall = now_s() - t0;
  const double cpu = static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
                     static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
  std::string last;
  if (FILE* l = std::fopen(log.c_str(), "r")) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, l) != nullptr) {
      // The step time of a training run; the last size's row of a collective table.
      const std::string s = buf;
      const size_t digit = s.find_first_not_of(' ');
      if (s.rfind("step time", 0) == 0) {
        last = s;
        break;
      }
      if (digit != std::string::npos && digit > 0 && std::isdigit(s[digit])) last = s;
    }
    std::fclose(l);
  }
  while (!last.empty() && (last.back() == '\n' || last.back() == ' '))
    last.pop_back();
  // Exit 2 is a refusal of the input (a work limit): reported, not a benchmark failure.
  const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  const bool refused = WIFEXITED(status) && WEXITSTATUS(status) == 2;
  std::printf("%-12s %-78s %7.2f s CPU %7.2f s wall %6ld MiB peak RSS%s\n             %s\n",
              row.name, row.what, cpu, wall, u.ru_maxrss / 1024,
              ok ? "" : (refused ? "  REFUSED (exit 2)" : "  FAILED"), last.c_str());
  std::fflush(stdout);
  return ok || refused ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string fleetsim = "build/release/fleetsim";
  std::vector<std::string> want;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.find('/') != std::string::npos) {
      fleetsim = a;
    } else {
      want.push_back(a);
    }
  }
  char dir[] = "/tmp/fleetsim-bench-scale-XXXXXX";
  if (mkdtemp(dir) == nullptr) return 1;
  int failures = 0;
  for (const Row& r : kRows) {
    bool selected = want.empty();
    for (const auto& w : want)
      selected = selected || w == r.name;
    if (selected) failures += run_row(fleetsim, r, dir);
  }
  const std::string rm = std::string("rm -rf ") + dir;
  if (std::system(rm.c_str()) != 0) return 1;
  return failures == 0 ? 0 : 1;
}
