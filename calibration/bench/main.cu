// fleetsim-calibrate: measures this machine's GPUs and writes a calibration table
// (calibration/KERNELS.md format; how to use it: calibration/README.md).
//   fleetsim-calibrate [--out FILE] [--quick] [--gpu MODEL] [--device I] [--repeats N]
//                      [--warmup N] [--no-collectives]
// Exit codes: 0 measured and written; 77 no CUDA device (ctest: skipped); 2 bad arguments;
// 1 a measurement failed (the file is still written with what was measured and the error in its
// header).
#include <cublasLt.h>
#include <nccl.h>
#include <unistd.h>

#include <cctype>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>

#include "calibrate.h"

namespace calib {

void fail(const std::string& what) {
  throw std::runtime_error(what);
}

std::string fmt(const char* f, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

__global__ void spin_kernel(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

void spin(cudaStream_t stream, double ms) {
  int dev = 0, khz = 0;
  CALIB_CUDA(cudaGetDevice(&dev));
  CALIB_CUDA(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev));
  spin_kernel<<<1, 1, 0, stream>>>(static_cast<long long>(ms * khz));
  CALIB_CUDA(cudaGetLastError());
}

namespace {

// GpuSpec model (topologies/*.json gpu.model) from the CUDA device name.
std::string gpu_model(const std::string& name) {
  for (const char* m : {"GB300", "GB200", "B300", "B200", "H200", "H100", "H800", "H20"})
    if (name.find(m) != std::string::npos) return m;
  std::string s;
  for (char c : name)
    s += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
  return s;
}

std::string driver_version() {
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line;
  if (std::getline(f, line)) {
    // "NVRM version: NVIDIA UNIX [Open ]Kernel Module [for x86_64]  570.86.15  ...": the first
    // token after "Module" that starts with a digit and contains a dot.
    const size_t p = line.find("Module");
    if (p != std::string::npos) {
      std::istringstream ss(line.substr(p + 6));
      std::string v;
      while (ss >> v)
        if (std::isdigit(static_cast<unsigned char>(v[0])) && v.find('.') != std::string::npos)
          return v;
    }
  }
  int v = 0;
  cudaDriverGetVersion(&v);
  return fmt("unknown (CUDA driver API %d)", v);
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s)
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string num(double v) {
  return v > 0 ? fmt("%.6g", v) : "";
}

int usage(const char* why) {
  std::fprintf(stderr,
               "fleetsim-calibrate: %s\nusage: fleetsim-calibrate [--out FILE] [--quick] [--gpu "
               "MODEL] [--device I] [--repeats N] [--warmup N] [--no-collectives]\n",
               why);
  return 2;
}

}  // namespace
}  // namespace calib

int main(int argc, char** argv) {
  using namespace calib;
  Options o;
  std::string out;
  std::string command = "fleetsim-calibrate";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    command += " " + a;
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) return "";
      command += std::string(" ") + argv[i + 1];
      return argv[++i];
    };
    auto int_value = [&](int lo, int hi, int* dst) {
      const std::string v = value();
      char* end = nullptr;
      const long x = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || x < lo || x > hi) return false;
      *dst = static_cast<int>(x);
      return true;
    };
    if (a == "--out") {
      out = value();
      if (out.empty()) return usage("--out needs a file name");
    } else if (a == "--quick") {
      o.quick = true;
    } else if (a == "--gpu") {
      o.gpu_model = value();
      if (o.gpu_model.empty()) return usage("--gpu needs a model name (H200, B200, ...)");
    } else if (a == "--device") {
      if (!int_value(0, 1023, &o.device)) return usage("--device expects 0..1023");
    } else if (a == "--repeats") {
      if (!int_value(3, 10000, &o.repeats)) return usage("--repeats expects 3..10000");
    } else if (a == "--warmup") {
      if (!int_value(0, 10000, &o.warmup)) return usage("--warmup expects 0..10000");
    } else if (a == "--no-collectives") {
      o.collectives = false;
    } else if (a == "--help" || a == "-h") {
      usage("measures GEMM, memory-bound and NCCL timings (calibration/README.md)");
      return 0;
    } else {
      return usage(("unknown argument '" + a + "'").c_str());
    }
  }

  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    std::fprintf(stderr, "fleetsim-calibrate: no CUDA device (%s); nothing measured\n",
                 e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return 77;
  }
  if (o.device >= count) return usage("--device is not a CUDA device of this machine");
  cudaDeviceProp p{};
  if (cudaSetDevice(o.device) != cudaSuccess ||
      cudaGetDeviceProperties(&p, o.device) != cudaSuccess) {
    std::fprintf(stderr, "fleetsim-calibrate: no CUDA device (cannot open device %d)\n", o.device);
    return 77;
  }
  if (o.gpu_model.empty()) o.gpu_model = gpu_model(p.name);

  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char date[32], day[16];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
  std::strftime(day, sizeof day, "%Y%m%d", &tm);
  if (out.empty()) out = "calibration-" + o.gpu_model + "-" + day + ".csv";

  int rt = 0, sm_khz = 0, mem_khz = 0, bus_bits = 0, nccl = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, o.device);
  cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, o.device);
  cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, o.device);
  ncclGetVersion(&nccl);
  char host[256] = "";
  gethostname(host, sizeof host - 1);

  std::vector<Row> rows;
  Log log;
  int rc = 0;
  auto section = [&](const char* name, auto&& fn) {
    try {
      fn();
    } catch (const std::exception& ex) {
      std::fprintf(stderr, "fleetsim-calibrate: %s failed: %s\n", name, ex.what());
      log.header.push_back(std::string("error: ") + name + ": " + ex.what());
      rc = 1;
    }
  };
  section("gemm", [&] { run_gemms(o, p, &rows, &log); });
  section("memory", [&] { run_memory(o, p, &rows, &log); });
  if (o.collectives) {
    section("collectives", [&] { run_collectives(o, &rows, &log); });
  } else {
    log.header.push_back("skipped: collectives (--no-collectives)");
  }

  std::ostringstream f;
  f << "# fleetsim kernel calibration table; format: calibration/KERNELS.md\n";
  f << "# generator: fleetsim-calibrate (calibration/bench)\n";
  f << "# device: " << p.name << " (sm_" << p.major << p.minor << ", " << p.multiProcessorCount
    << " SMs, " << fmt("%.1f", static_cast<double>(p.totalGlobalMem) / (1 << 30)) << " GiB, L2 "
    << p.l2CacheSize / (1 << 20) << " MiB), device " << o.device << " of " << count << "\n";
  f << "# gpu_model: " << o.gpu_model << "\n";
  f << "# driver: " << driver_version() << "\n";
  f << "# cuda_runtime: " << rt << "\n";
  f << "# cublaslt: " << cublasLtGetVersion() << " (built against " << CUBLAS_VERSION << ")\n";
  f << "# nccl: " << nccl << "\n";
  f << "# clocks: sm max " << sm_khz / 1000 << " MHz, memory " << mem_khz / 1000 << " MHz, bus "
    << bus_bits << " bit (" << fmt("%.0f", 2.0 * mem_khz * 1e3 * bus_bits / 8 * 1e-9)
    << " GB/s theoretical)\n";
  f << "# date: " << date << "\n";
  f << "# host: " << host << "\n";
  f << "# command: " << command << "\n";
  f << "# method: CUDA events around each run, median of " << o.repeats << " runs after "
    << o.warmup << " warm-up, inputs rotated over sets larger than 3 x L2\n";
  for (const auto& l : log.header)
    f << "# " << l << "\n";
  f << "gpu,kernel,dtype,impl,batch,m,n,k,seq_q,seq_kv,heads,kv_heads,head_dim_qk,head_dim_v,"
       "causal,window,bytes,flops,time_us,achieved_tflops,achieved_gbps,time_from,source_gpu,"
       "source_dtype,source_url,notes\n";
  for (const Row& r : rows) {
    const double tflops = r.flops > 0 ? r.flops / r.time_us * 1e-6 : 0;
    const double gbps = r.gbps >= 0 ? r.gbps : r.bytes > 0 ? r.bytes / r.time_us * 1e-3 : 0;
    f << csv_field(o.gpu_model) << "," << r.kernel << "," << r.dtype << "," << r.impl << ","
      << (r.batch > 0 ? std::to_string(r.batch) : "") << "," << (r.m > 0 ? std::to_string(r.m) : "")
      << "," << (r.n > 0 ? std::to_string(r.n) : "") << "," << (r.k > 0 ? std::to_string(r.k) : "")
      << ",,,,,,,,," << (r.bytes > 0 ? fmt("%.0f", r.bytes) : "") << ","
      << (r.flops > 0 ? fmt("%.0f", r.flops) : "") << "," << fmt("%.6g", r.time_us) << ","
      << num(tflops) << "," << (r.kernel == "gemm" ? "" : num(gbps)) << ",measured,"
      << csv_field(p.name) << "," << csv_field(r.source_dtype)
      << ",fleetsim-calibrate (calibration/bench)," << csv_field(r.notes) << "\n";
  }
  std::ofstream file(out);
  file << f.str();
  file.close();
  if (!file) {
    std::fprintf(stderr, "fleetsim-calibrate: cannot write %s\n", out.c_str());
    return 1;
  }
  std::fprintf(stderr, "fleetsim-calibrate: %zu rows written to %s\n", rows.size(), out.c_str());
  return rc;
}
