// Memory-bound kernels for achieved HBM bandwidth: device-to-device copy (cudaMemcpyAsync), a
// row-wise RMSNorm (bf16 in/out, fp32 statistics, one block per row) and SwiGLU
// (out = silu(gate) · up, bf16). Bytes counted are the minimum HBM traffic (reads + writes).
// Results of sampled rows / elements are checked against a CPU computation.
#include <cuda_bf16.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "calibrate.h"

namespace calib {
namespace {

constexpr int kNormThreads = 256;
constexpr int kMaxVecPerThread = 8;  // hidden <= 256 threads x 8 vectors x 8 elements = 16384

__global__ void fill_bf16(__nv_bfloat16* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    uint64_t x = i * 0x9E3779B97F4A7C15ull + seed * 0xBF58476D1CE4E5B9ull;
    x ^= x >> 31;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 29;
    p[i] = __float2bfloat16(static_cast<float>(x >> 40) / static_cast<float>(1ull << 22) - 2.0f);
  }
}

// y = x / sqrt(mean(x^2) + eps) · w; hidden % (kNormThreads · 8) == 0; each thread keeps its
// vectors in registers, so x is read once.
__global__ void __launch_bounds__(kNormThreads)
    rms_norm(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int hidden) {
  const int vecs = hidden / (kNormThreads * 8);
  const uint4* xr = reinterpret_cast<const uint4*>(x + static_cast<size_t>(blockIdx.x) * hidden);
  uint4* yr = reinterpret_cast<uint4*>(y + static_cast<size_t>(blockIdx.x) * hidden);
  const uint4* wr = reinterpret_cast<const uint4*>(w);
  uint4 v[kMaxVecPerThread];
  float ss = 0;
#pragma unroll
  for (int i = 0; i < kMaxVecPerThread; ++i) {
    if (i < vecs) {
      v[i] = xr[i * kNormThreads + threadIdx.x];
      const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&v[i]);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float2 f = __bfloat1622float2(h[j]);
        ss += f.x * f.x + f.y * f.y;
      }
    }
  }
  __shared__ float part[kNormThreads / 32];
  for (int o = 16; o > 0; o /= 2)
    ss += __shfl_xor_sync(0xffffffffu, ss, o);
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = ss;
  __syncthreads();
  float total = 0;
#pragma unroll
  for (int i = 0; i < kNormThreads / 32; ++i)
    total += part[i];
  const float inv = rsqrtf(total / static_cast<float>(hidden) + 1e-5f);
#pragma unroll
  for (int i = 0; i < kMaxVecPerThread; ++i) {
    if (i < vecs) {
      const uint4 wv = wr[i * kNormThreads + threadIdx.x];
      const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&v[i]);
      const __nv_bfloat162* hw = reinterpret_cast<const __nv_bfloat162*>(&wv);
      uint4 out;
      __nv_bfloat162* ho = reinterpret_cast<__nv_bfloat162*>(&out);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float2 f = __bfloat1622float2(h[j]);
        const float2 g = __bfloat1622float2(hw[j]);
        ho[j] = __floats2bfloat162_rn(f.x * inv * g.x, f.y * inv * g.y);
      }
      yr[i * kNormThreads + threadIdx.x] = out;
    }
  }
}

// in: rows x [gate (f) | up (f)], out: rows x f; f % 8 == 0.
__global__ void swiglu(const __nv_bfloat16* in, __nv_bfloat16* out, int64_t rows, int f) {
  const int64_t vec_per_row = f / 8;
  const int64_t total = rows * vec_per_row;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / vec_per_row, c = i % vec_per_row;
    const uint4 gv = reinterpret_cast<const uint4*>(in + r * 2 * f)[c];
    const uint4 uv = reinterpret_cast<const uint4*>(in + r * 2 * f + f)[c];
    const __nv_bfloat162* g = reinterpret_cast<const __nv_bfloat162*>(&gv);
    const __nv_bfloat162* u = reinterpret_cast<const __nv_bfloat162*>(&uv);
    uint4 ov;
    __nv_bfloat162* o = reinterpret_cast<__nv_bfloat162*>(&ov);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float2 gf = __bfloat1622float2(g[j]), uf = __bfloat1622float2(u[j]);
      o[j] = __floats2bfloat162_rn(gf.x / (1.0f + __expf(-gf.x)) * uf.x,
                                   gf.y / (1.0f + __expf(-gf.y)) * uf.y);
    }
    reinterpret_cast<uint4*>(out + r * f)[c] = ov;
  }
}

float bf(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

std::vector<uint16_t> to_host(const void* d, size_t elements) {
  std::vector<uint16_t> h(elements);
  CALIB_CUDA(cudaMemcpy(h.data(), d, elements * 2, cudaMemcpyDeviceToHost));
  return h;
}

Row make_row(const char* kernel, const char* dtype, long long m, long long n, double bytes,
             const Timing& t, int sets, const Options& o, const std::string& what, double rel_err) {
  Row r;
  r.kernel = kernel;
  r.dtype = dtype;
  r.impl = "cuda";
  r.batch = 1;
  r.m = m;
  r.n = n;
  r.bytes = bytes;
  r.time_us = t.median_us;
  r.source_dtype = dtype;
  r.notes =
      fmt("%s; median of %d runs after %d warm-up (p10 %.4g us, p90 %.4g us), %d rotated buffer "
          "sets; check: max rel. error %.2e",
          what.c_str(), o.repeats, o.warmup, t.p10_us, t.p90_us, sets, rel_err);
  return r;
}

}  // namespace

void run_memory(const Options& o, const cudaDeviceProp& p, std::vector<Row>* rows, Log* log) {
  cudaStream_t stream = nullptr;
  CALIB_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const double l2 = p.l2CacheSize;
  constexpr size_t kPool = size_t{8} << 30;
  uint8_t* pool = nullptr;
  CALIB_CUDA(cudaMalloc(&pool, kPool));
  fill_bf16<<<4096, 256, 0, stream>>>(reinterpret_cast<__nv_bfloat16*>(pool), kPool / 2, 7);
  CALIB_CUDA(cudaStreamSynchronize(stream));
  auto sets_for = [&](size_t set_bytes) {
    int s = rotation_sets(static_cast<double>(set_bytes), l2);
    while (s > 2 && static_cast<size_t>(s) * set_bytes > kPool)
      --s;
    return s;
  };

  // Device-to-device copy: reads and writes `size` bytes.
  std::vector<size_t> copy_sizes = {size_t{32} << 20, size_t{128} << 20, size_t{512} << 20,
                                    size_t{1} << 30};
  if (o.quick) copy_sizes = {size_t{128} << 20, size_t{1} << 30};
  for (size_t size : copy_sizes) {
    const size_t set = 2 * size;
    const int sets = sets_for(set);
    const Timing t = time_runs(stream, o.warmup, o.repeats, [&](int i) {
      uint8_t* base = pool + static_cast<size_t>(i % sets) * set;
      CALIB_CUDA(cudaMemcpyAsync(base + size, base, size, cudaMemcpyDeviceToDevice, stream));
    });
    CALIB_CUDA(cudaMemcpyAsync(pool + size, pool, size, cudaMemcpyDeviceToDevice, stream));
    CALIB_CUDA(cudaStreamSynchronize(stream));
    const auto a = to_host(pool + size - 8192, 4096), b = to_host(pool + 2 * size - 8192, 4096);
    const double err = a == b ? 0.0 : 1.0;
    if (err != 0) fail(fmt("copy_d2d %zu bytes: copied data differs", size));
    rows->push_back(
        make_row("copy_d2d", "u8", 0, 0, 2.0 * static_cast<double>(size), t, sets, o,
                 fmt("cudaMemcpyAsync device to device, %zu bytes read + written", size), err));
    std::fprintf(stderr, "copy %10zu B %9.2f us %8.1f GB/s\n", size, t.median_us,
                 2.0 * static_cast<double>(size) / t.median_us * 1e-3);
  }

  // RMSNorm over rows x hidden (tokens x model width); the small shape gives the kernel floor.
  std::vector<std::pair<int, int>> norm_shapes = {
      {1024, 2048}, {16384, 4096}, {16384, 8192}, {16384, 16384}};
  if (o.quick) norm_shapes = {{1024, 2048}, {16384, 8192}};
  for (const auto& shape : norm_shapes) {
    const int nrows = shape.first, hidden = shape.second;
    const size_t tensor = static_cast<size_t>(nrows) * hidden * 2;
    const size_t set = 2 * tensor + static_cast<size_t>(hidden) * 2;
    const int sets = sets_for(set);
    auto x_of = [&](int s) {
      return reinterpret_cast<__nv_bfloat16*>(pool + static_cast<size_t>(s) * set);
    };
    auto launch = [&](int i) {
      __nv_bfloat16* x = x_of(i % sets);
      rms_norm<<<nrows, kNormThreads, 0, stream>>>(x, x + 2 * static_cast<size_t>(nrows) * hidden,
                                                   x + static_cast<size_t>(nrows) * hidden, hidden);
    };
    const Timing t = time_runs(stream, o.warmup, o.repeats, launch);
    CALIB_CUDA(cudaGetLastError());
    launch(0);
    CALIB_CUDA(cudaStreamSynchronize(stream));
    double err = 0;
    const auto w = to_host(x_of(0) + 2 * static_cast<size_t>(nrows) * hidden, hidden);
    for (int r : {0, nrows / 2, nrows - 1}) {
      const auto x = to_host(x_of(0) + static_cast<size_t>(r) * hidden, hidden);
      const auto y = to_host(
          x_of(0) + static_cast<size_t>(nrows) * hidden + static_cast<size_t>(r) * hidden, hidden);
      double ss = 0;
      for (int c = 0; c < hidden; ++c)
        ss += static_cast<double>(bf(x[c])) * bf(x[c]);
      const double inv = 1.0 / std::sqrt(ss / hidden + 1e-5);
      for (int c = 0; c < hidden; ++c) {
        const double ref = bf(x[c]) * inv * bf(w[c]);
        err = std::max(err, std::abs(bf(y[c]) - ref) / std::max(std::abs(ref), 1e-2));
      }
    }
    if (!(err < 0.02))
      fail(fmt("rms_norm %dx%d: check failed, rel. error %.3g", nrows, hidden, err));
    const double bytes = 2.0 * static_cast<double>(tensor) + 2.0 * hidden;
    rows->push_back(make_row("rms_norm_fwd", "bf16", nrows, hidden, bytes, t, sets, o,
                             "row-wise RMSNorm, m = rows (tokens), n = hidden; bytes = read x + "
                             "write y + weight",
                             err));
    std::fprintf(stderr, "rms_norm %6d x %6d %9.2f us %8.1f GB/s\n", nrows, hidden, t.median_us,
                 bytes / t.median_us * 1e-3);
  }

  // SwiGLU over rows x ffn.
  std::vector<std::pair<int, int>> act_shapes = {{16384, 4096}, {16384, 14336}, {16384, 28672}};
  if (o.quick) act_shapes = {{16384, 14336}};
  for (const auto& shape : act_shapes) {
    const int nrows = shape.first, f = shape.second;
    const size_t in_el = static_cast<size_t>(nrows) * 2 * f,
                 out_el = static_cast<size_t>(nrows) * f;
    const size_t set = 2 * (in_el + out_el);
    const int sets = sets_for(set);
    auto in_of = [&](int s) {
      return reinterpret_cast<__nv_bfloat16*>(pool + static_cast<size_t>(s) * set);
    };
    auto launch = [&](int i) {
      __nv_bfloat16* in = in_of(i % sets);
      swiglu<<<4 * p.multiProcessorCount, 512, 0, stream>>>(in, in + in_el, nrows, f);
    };
    const Timing t = time_runs(stream, o.warmup, o.repeats, launch);
    CALIB_CUDA(cudaGetLastError());
    launch(0);
    CALIB_CUDA(cudaStreamSynchronize(stream));
    double err = 0;
    for (int r : {0, nrows - 1}) {
      const auto in =
          to_host(in_of(0) + static_cast<size_t>(r) * 2 * f, 2 * static_cast<size_t>(f));
      const auto out = to_host(in_of(0) + in_el + static_cast<size_t>(r) * f, f);
      for (int c = 0; c < f; ++c) {
        const double g = bf(in[c]), u = bf(in[f + c]);
        const double ref = g / (1.0 + std::exp(-g)) * u;
        err = std::max(err, std::abs(bf(out[c]) - ref) / std::max(std::abs(ref), 1e-2));
      }
    }
    if (!(err < 0.02)) fail(fmt("swiglu %dx%d: check failed, rel. error %.3g", nrows, f, err));
    const double bytes = 2.0 * static_cast<double>(in_el + out_el);
    rows->push_back(make_row("swiglu_fwd", "bf16", nrows, f, bytes, t, sets, o,
                             "SwiGLU silu(gate) * up, in [m, 2n] -> out [m, n]; bytes = read + "
                             "write",
                             err));
    std::fprintf(stderr, "swiglu %6d x %6d %9.2f us %8.1f GB/s\n", nrows, f, t.median_us,
                 bytes / t.median_us * 1e-3);
  }
  log->header.push_back("check: memory-bound kernels verified against CPU on sampled rows");
  cudaFree(pool);
  cudaStreamDestroy(stream);
}

}  // namespace calib
