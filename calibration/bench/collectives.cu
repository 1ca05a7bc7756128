// NCCL collectives over the GPUs of this machine (one process, ncclCommInitAll), measured like
// nccl-tests: out-of-place, `warmup` untimed then `repeats` iterations between two events per
// GPU, time = the slowest GPU's mean; algbw = size / time, busbw = algbw x (2(n-1)/n for
// all-reduce, (n-1)/n for all-gather, reduce-scatter and all-to-all). `size` is nccl-tests'
// size: the all-reduce buffer, the all-gather output, the reduce-scatter input, each rank's
// all-to-all send buffer. Every result is checked (rank r sends the value r + 1).
#include <cuda_bf16.h>
#include <nccl.h>

#include <cstdio>
#include <vector>

#include "calibrate.h"

namespace calib {
namespace {

#define CALIB_NCCL(x) nccl_check((x), #x, __LINE__)
void nccl_check(ncclResult_t r, const char* expr, int line) {
  if (r != ncclSuccess) fail(fmt("collectives.cu:%d: %s: %s", line, expr, ncclGetErrorString(r)));
}

__global__ void fill_value(__nv_bfloat16* p, size_t n, float v) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    p[i] = __float2bfloat16(v);
}

float bf_value(const __nv_bfloat16* d, size_t i) {
  __nv_bfloat16 h;
  CALIB_CUDA(cudaMemcpy(&h, d + i, sizeof h, cudaMemcpyDeviceToHost));
  return __bfloat162float(h);
}

enum class Op { kAllReduce, kAllGather, kReduceScatter, kAllToAll };

}  // namespace

void run_collectives(const Options& o, std::vector<Row>* rows, Log* log) {
  int n = 0;
  CALIB_CUDA(cudaGetDeviceCount(&n));
  if (n < 2) {
    log->header.push_back(
        fmt("skipped: collectives: %d CUDA device on this machine (NCCL "
            "collectives need >= 2)",
            n));
    return;
  }
  int version = 0;
  CALIB_NCCL(ncclGetVersion(&version));
  std::vector<ncclComm_t> comms(n);
  std::vector<int> devs(n);
  for (int i = 0; i < n; ++i)
    devs[i] = i;
  CALIB_NCCL(ncclCommInitAll(comms.data(), n, devs.data()));
  std::vector<size_t> sizes;
  for (size_t s = size_t{1} << 20; s <= (size_t{1} << 30); s *= o.quick ? 16 : 4)
    sizes.push_back(s);
  const size_t max_bytes = sizes.back();
  std::vector<__nv_bfloat16*> send(n), recv(n);
  std::vector<cudaStream_t> streams(n);
  for (int i = 0; i < n; ++i) {
    CALIB_CUDA(cudaSetDevice(i));
    CALIB_CUDA(cudaMalloc(&send[i], max_bytes));
    CALIB_CUDA(cudaMalloc(&recv[i], max_bytes));
    CALIB_CUDA(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
    fill_value<<<1024, 256, 0, streams[i]>>>(send[i], max_bytes / 2, static_cast<float>(i + 1));
  }
  const struct {
    Op op;
    const char* kernel;
    double bus_factor;
  } ops[] = {{Op::kAllReduce, "nccl_all_reduce", 2.0 * (n - 1) / n},
             {Op::kAllGather, "nccl_all_gather", 1.0 * (n - 1) / n},
             {Op::kReduceScatter, "nccl_reduce_scatter", 1.0 * (n - 1) / n},
             {Op::kAllToAll, "nccl_all_to_all", 1.0 * (n - 1) / n}};
  for (const auto& op : ops) {
    for (size_t size : sizes) {
      const size_t count = size / 2;  // bf16 elements of the nccl-tests "size"
      auto launch = [&] {
        CALIB_NCCL(ncclGroupStart());
        for (int i = 0; i < n; ++i) {
          switch (op.op) {
            case Op::kAllReduce:
              CALIB_NCCL(ncclAllReduce(send[i], recv[i], count, ncclBfloat16, ncclSum, comms[i],
                                       streams[i]));
              break;
            case Op::kAllGather:
              CALIB_NCCL(
                  ncclAllGather(send[i], recv[i], count / n, ncclBfloat16, comms[i], streams[i]));
              break;
            case Op::kReduceScatter:
              CALIB_NCCL(ncclReduceScatter(send[i], recv[i], count / n, ncclBfloat16, ncclSum,
                                           comms[i], streams[i]));
              break;
            case Op::kAllToAll:
              for (int peer = 0; peer < n; ++peer) {
                CALIB_NCCL(ncclSend(send[i] + peer * (count / n), count / n, ncclBfloat16, peer,
                                    comms[i], streams[i]));
                CALIB_NCCL(ncclRecv(recv[i] + peer * (count / n), count / n, ncclBfloat16, peer,
                                    comms[i], streams[i]));
              }
              break;
          }
        }
        CALIB_NCCL(ncclGroupEnd());
      };
      for (int w = 0; w < o.warmup; ++w)
        launch();
      std::vector<cudaEvent_t> start(n), stop(n);
      for (int i = 0; i < n; ++i) {
        CALIB_CUDA(cudaSetDevice(i));
        CALIB_CUDA(cudaEventCreate(&start[i]));
        CALIB_CUDA(cudaEventCreate(&stop[i]));
        CALIB_CUDA(cudaEventRecord(start[i], streams[i]));
      }
      for (int r = 0; r < o.repeats; ++r)
        launch();
      double worst_ms = 0;
      for (int i = 0; i < n; ++i) {
        CALIB_CUDA(cudaSetDevice(i));
        CALIB_CUDA(cudaEventRecord(stop[i], streams[i]));
      }
      for (int i = 0; i < n; ++i) {
        CALIB_CUDA(cudaSetDevice(i));
        CALIB_CUDA(cudaEventSynchronize(stop[i]));
        float ms = 0;
        CALIB_CUDA(cudaEventElapsedTime(&ms, start[i], stop[i]));
        worst_ms = std::max(worst_ms, static_cast<double>(ms));
        cudaEventDestroy(start[i]);
        cudaEventDestroy(stop[i]);
      }
      // Check the last result on the last rank.
      CALIB_CUDA(cudaSetDevice(n - 1));
      const size_t probe = count / n - 1;  // last element of rank 0's part
      const float got = bf_value(recv[n - 1], probe);
      // Reductions: the sum of r + 1 over ranks; all-gather / all-to-all: rank 0's block (1).
      const float want = (op.op == Op::kAllReduce || op.op == Op::kReduceScatter)
                             ? static_cast<float>(n * (n + 1) / 2)
                             : 1.0f;
      if (got != want)
        fail(fmt("%s %zu bytes: check failed (got %g, expected %g)", op.kernel, size, got, want));
      const double t_us = worst_ms * 1e3 / o.repeats;
      const double algbw = static_cast<double>(size) / t_us * 1e-3;
      Row row;
      row.kernel = op.kernel;
      row.dtype = "bf16";
      row.impl = "nccl";
      row.batch = n;
      row.bytes = static_cast<double>(size);
      row.time_us = t_us;
      row.source_dtype = "bf16";
      row.notes =
          fmt("NCCL %d, %d GPUs of this machine, out-of-place; algbw %.2f GB/s, busbw = "
              "algbw x %.4g; mean of %d iterations after %d warm-up (nccl-tests method); "
              "check: exact",
              version, n, algbw, op.bus_factor, o.repeats, o.warmup);
      row.gbps = algbw * op.bus_factor;  // achieved_gbps column: busbw
      rows->push_back(row);
      std::fprintf(stderr, "%-20s %12zu B %10.2f us algbw %7.2f busbw %7.2f GB/s\n", op.kernel,
                   size, t_us, algbw, algbw * op.bus_factor);
    }
  }
  for (int i = 0; i < n; ++i) {
    CALIB_CUDA(cudaSetDevice(i));
    cudaFree(send[i]);
    cudaFree(recv[i]);
    cudaStreamDestroy(streams[i]);
    ncclCommDestroy(comms[i]);
  }
  CALIB_CUDA(cudaSetDevice(o.device));
  log->header.push_back(fmt("collectives: NCCL %d over %d GPUs, checked exactly", version, n));
}

}  // namespace calib
