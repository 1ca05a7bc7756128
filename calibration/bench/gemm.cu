// GEMMs through cuBLASLt: C[m x n] = A[m x k] · W[n x k]^T (activations times nn.Linear weights,
// both K-major: the "TN" layout FP8 tensor cores need), BF16 and FP8 E4M3 with per-tensor scales
// on every GPU, MXFP8 (32-element UE8M0 block scales) and NVFP4 (16-element UE4M3 block scales)
// on sm_100 when the cuBLASLt version supports them; BF16 output, FP32 accumulation. The first
// heuristic algorithm is timed (what a framework calling cuBLASLt gets; should cublasLtMatmul
// refuse it, the next candidate that runs, named in the notes). A sample of output
// elements is compared with a reference kernel (FP64 dot products of the same quantized inputs)
// and a dtype whose check fails is dropped from the file with the reason in its header.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cmath>
#include <cstdint>

#include "calibrate.h"

namespace calib {
namespace {

#define CALIB_LT(x) lt_check((x), #x, __LINE__)
void lt_check(cublasStatus_t s, const char* expr, int line) {
  if (s != CUBLAS_STATUS_SUCCESS)
    fail(fmt("gemm.cu:%d: %s: cublasLt status %d", line, expr, static_cast<int>(s)));
}

enum class Kind { kBf16, kFp8, kMxfp8, kNvfp4 };

struct DtypeSpec {
  Kind kind;
  const char* name;          // dtype column
  const char* source_dtype;  // what exactly ran
  double bits;               // per element of A and W
};

// Deterministic pseudo-random value in [-1, 1) for element i of buffer `seed`.
__device__ __host__ inline float hash_unit(uint64_t i, uint32_t seed) {
  uint64_t x = i * 0x9E3779B97F4A7C15ull + seed * 0xBF58476D1CE4E5B9ull;
  x ^= x >> 31;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 29;
  return static_cast<float>(x >> 40) / static_cast<float>(1ull << 23) - 1.0f;
}

// E2M1 code -> value (sign in bit 3).
__device__ __host__ inline float e2m1(unsigned c) {
  const float mag[8] = {0.f, 0.5f, 1.f, 1.5f, 2.f, 3.f, 4.f, 6.f};
  return (c & 8u) ? -mag[c & 7u] : mag[c & 7u];
}

// Fills `bytes` of storage with elements of `kind` (NVFP4: both nibbles of a byte hold the same
// code, so the element order inside a byte does not matter to the reference).
__global__ void fill(uint8_t* p, size_t elements, Kind kind, uint32_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < elements;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float v = hash_unit(i, seed);
    switch (kind) {
      case Kind::kBf16:
        reinterpret_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16(v);
        break;
      case Kind::kFp8:
      case Kind::kMxfp8:
        reinterpret_cast<__nv_fp8_e4m3*>(p)[i] = __nv_fp8_e4m3(v);
        break;
      case Kind::kNvfp4:
        if (i % 2 == 0) {
          const unsigned c = static_cast<unsigned>((v + 1.0f) * 8.0f) & 15u;
          p[i / 2] = static_cast<uint8_t>(c | (c << 4));
        }
        break;
    }
  }
}

__device__ inline double element(const uint8_t* p, size_t i, Kind kind) {
  switch (kind) {
    case Kind::kBf16:
      return __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(p)[i]);
    case Kind::kFp8:
    case Kind::kMxfp8:
      return static_cast<float>(reinterpret_cast<const __nv_fp8_e4m3*>(p)[i]);
    case Kind::kNvfp4:
      return e2m1(p[i / 2] & 15u);
  }
  return 0;
}

// ref[s] = scale · sum_k A[i_s][k] · W[j_s][k] for sampled (i_s, j_s).
__global__ void reference(const uint8_t* a, const uint8_t* w, int64_t k, const int* is,
                          const int* js, int samples, Kind kind, double scale, double* ref) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= samples) return;
  double acc = 0;
  const size_t ra = static_cast<size_t>(is[s]) * k, rw = static_cast<size_t>(js[s]) * k;
  for (int64_t kk = 0; kk < k; ++kk)
    acc += element(a, ra + kk, kind) * element(w, rw + kk, kind);
  ref[s] = acc * scale;
}

__global__ void gather(const __nv_bfloat16* d, int64_t n, const int* is, const int* js, int samples,
                       double* out) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s < samples) out[s] = __bfloat162float(d[static_cast<size_t>(is[s]) * n + js[s]]);
}

struct Buffers {
  uint8_t* pool = nullptr;
  size_t pool_bytes = 0;
  __nv_bfloat16* d = nullptr;
  size_t d_bytes = 0;
  void* workspace = nullptr;
  size_t workspace_bytes = 64u << 20;
  uint8_t* scales = nullptr;  // block scales (MXFP8 / NVFP4), shared by all sets
  size_t scales_bytes = 0;
  // FP8 per-tensor scales: cuBLASLt's A scale at offset 0, its B scale at kScaleStride floats.
  // Each scale gets its own 256-byte-aligned slot. In the first H200 run they were 4 bytes apart
  // (B's pointer only 4-byte aligned) and cublasLtMatmul refused every FP8 GEMM with
  // NOT_SUPPORTED although the heuristic, which does not see the pointers, returned an algorithm:
  // the one departure from cuBLASLt's FP8 rules found. With separate slots the 2026-11-29 H200
  // re-run measured all 252 FP8 shapes with algo 0 (calibration/README.md).
  float* tensor_scales = nullptr;
  int* samples = nullptr;  // is, js
  double* ref = nullptr;   // ref, got
};

constexpr int kSamples = 256;
constexpr float kScaleA = 0.5f, kScaleB = 0.25f;  // FP8 per-tensor scales
constexpr size_t kScaleStride = 64;               // floats between the two scale slots (256 B)
constexpr int kHeuristicAlgos = 8;                // candidates asked of the heuristic
constexpr uint8_t kUe8m0Half = 126;               // 2^(126-127) = 0.5
constexpr uint8_t kUe4m3Half = 0x30;              // E4M3 0.5 (exponent 6, bias 7)

size_t round_up(size_t v, size_t to) {
  return (v + to - 1) / to * to;
}

// Times one shape; returns false (and fills *why) when the library has no algorithm for it.
bool time_shape(const DtypeSpec& dt, int64_t m, int64_t n, int64_t k, const Options& o,
                const cudaDeviceProp& p, cublasLtHandle_t lt, cudaStream_t stream, Buffers& b,
                Row* row, double* rel_err, std::string* why) {
  const double el_bytes = dt.bits / 8.0;
  const size_t a_bytes = static_cast<size_t>(static_cast<double>(m * k) * el_bytes);
  const size_t w_bytes = static_cast<size_t>(static_cast<double>(n * k) * el_bytes);
  const size_t set_bytes = round_up(a_bytes, 256) + round_up(w_bytes, 256);
  int sets = rotation_sets(static_cast<double>(set_bytes), p.l2CacheSize);
  while (sets > 2 && static_cast<size_t>(sets) * set_bytes > b.pool_bytes)
    --sets;
  if (static_cast<size_t>(sets) * set_bytes > b.pool_bytes ||
      static_cast<size_t>(m * n) * 2 > b.d_bytes) {
    *why = "buffers too small";
    return false;
  }
  auto a_of = [&](int s) { return b.pool + static_cast<size_t>(s) * set_bytes; };
  auto w_of = [&](int s) { return a_of(s) + round_up(a_bytes, 256); };
  for (int s = 0; s < sets; ++s) {
    fill<<<1024, 256, 0, stream>>>(a_of(s), static_cast<size_t>(m * k), dt.kind, 2 * s + 1);
    fill<<<1024, 256, 0, stream>>>(w_of(s), static_cast<size_t>(n * k), dt.kind, 2 * s + 2);
  }
  CALIB_CUDA(cudaGetLastError());

  // cuBLASLt, column-major: D[n x m] = op(Aw)[n x k] · Bx[k x m], Aw = W stored k x n (T),
  // Bx = A stored k x m (N); D column-major n x m is C row-major m x n.
  cudaDataType_t ab = CUDA_R_16BF;
  if (dt.kind == Kind::kFp8 || dt.kind == Kind::kMxfp8) ab = CUDA_R_8F_E4M3;
#if CUBLAS_VERSION >= 120800
  if (dt.kind == Kind::kNvfp4) ab = CUDA_R_4F_E2M1;
#endif
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  CALIB_LT(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  CALIB_LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  CALIB_LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  double ref_scale = 1.0;
  if (dt.kind == Kind::kFp8) {
    // kScaleA applies to cuBLASLt's A (W here), kScaleB to its B (the activations); the
    // reference multiplies by the product, so which is which does not matter to the check.
    const float* sa = b.tensor_scales;
    const float* sb = b.tensor_scales + kScaleStride;
    CALIB_LT(
        cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa));
    CALIB_LT(
        cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb));
    ref_scale = static_cast<double>(kScaleA) * kScaleB;
  }
#if CUBLAS_VERSION >= 120800
  if (dt.kind == Kind::kMxfp8 || dt.kind == Kind::kNvfp4) {
    const int32_t mode = dt.kind == Kind::kMxfp8 ? CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0
                                                 : CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3;
    const size_t need = round_up(static_cast<size_t>(std::max(m, n)), 128) *
                        round_up(static_cast<size_t>(k / 16), 4);
    if (need > b.scales_bytes) {
      *why = "block-scale buffer too small";
      return false;
    }
    const uint8_t* sc = b.scales;
    CALIB_LT(
        cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode, sizeof mode));
    CALIB_LT(
        cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode, sizeof mode));
    CALIB_LT(
        cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sc, sizeof sc));
    CALIB_LT(
        cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sc, sizeof sc));
    ref_scale = 0.25;  // every block scale is 0.5, on A and on W
  }
#endif
  CALIB_LT(cublasLtMatrixLayoutCreate(&la, ab, k, n, k));
  CALIB_LT(cublasLtMatrixLayoutCreate(&lb, ab, k, m, k));
  CALIB_LT(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, n, m, n));
  cublasLtMatmulPreference_t pref = nullptr;
  CALIB_LT(cublasLtMatmulPreferenceCreate(&pref));
  CALIB_LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                &b.workspace_bytes, sizeof b.workspace_bytes));
  // The same descriptors (op, la, lb, lc) go to the heuristic and to every cublasLtMatmul call.
  cublasLtMatmulHeuristicResult_t heur[kHeuristicAlgos] = {};
  int found = 0;
  const cublasStatus_t hs =
      cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, kHeuristicAlgos, heur, &found);
  auto cleanup = [&] {
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(op);
  };
  if (hs != CUBLAS_STATUS_SUCCESS || found == 0) {
    cleanup();
    *why = fmt("no cuBLASLt algorithm (status %d)", static_cast<int>(hs));
    return false;
  }
  const float alpha = 1.0f, beta = 0.0f;
  auto matmul = [&](int s, int algo) {
    return cublasLtMatmul(lt, op, &alpha, w_of(s), la, a_of(s), lb, &beta, b.d, lc, b.d, lc,
                          &heur[algo].algo, b.workspace, b.workspace_bytes, stream);
  };
  // The first heuristic algorithm is the one timed (what a framework gets). The heuristic does not
  // see the pointers, so an algorithm can still be refused at execution: then the next candidate
  // that runs is timed (named in the notes); if none runs, the error lists every status.
  int algo = 0;
  std::string refused;
  for (; algo < found; ++algo) {
    const cublasStatus_t ms = matmul(0, algo);
    if (ms == CUBLAS_STATUS_SUCCESS) break;
    refused += fmt("%salgo %d: status %d", refused.empty() ? "" : ", ", algo, static_cast<int>(ms));
  }
  if (algo == found) {
    cleanup();
    fail(
        fmt("gemm.cu:%d: cublasLtMatmul %s m=%lld n=%lld k=%lld refused all %d heuristic "
            "algorithms (%s)",
            __LINE__, dt.name, static_cast<long long>(m), static_cast<long long>(n),
            static_cast<long long>(k), found, refused.c_str()));
  }
  auto launch = [&](int i) { CALIB_LT(matmul(i % sets, algo)); };
  const Timing t = time_runs(stream, o.warmup, o.repeats, launch);

  // Check: set 0 once more, sampled elements against the reference.
  launch(0);
  std::vector<int> idx(2 * kSamples);
  for (int s = 0; s < kSamples; ++s) {
    idx[s] = static_cast<int>((static_cast<uint64_t>(s) * 2654435761u + 7) % m);
    idx[kSamples + s] = static_cast<int>((static_cast<uint64_t>(s) * 40503u * 977u + 3) % n);
  }
  CALIB_CUDA(cudaMemcpyAsync(b.samples, idx.data(), idx.size() * sizeof(int),
                             cudaMemcpyHostToDevice, stream));
  reference<<<(kSamples + 127) / 128, 128, 0, stream>>>(
      a_of(0), w_of(0), k, b.samples, b.samples + kSamples, kSamples, dt.kind, ref_scale, b.ref);
  gather<<<(kSamples + 127) / 128, 128, 0, stream>>>(b.d, n, b.samples, b.samples + kSamples,
                                                     kSamples, b.ref + kSamples);
  std::vector<double> h(2 * kSamples);
  CALIB_CUDA(
      cudaMemcpyAsync(h.data(), b.ref, h.size() * sizeof(double), cudaMemcpyDeviceToHost, stream));
  CALIB_CUDA(cudaStreamSynchronize(stream));
  cleanup();
  double num = 0, den = 0;
  for (int s = 0; s < kSamples; ++s) {
    num += (h[kSamples + s] - h[s]) * (h[kSamples + s] - h[s]);
    den += h[s] * h[s];
  }
  *rel_err = den > 0 && std::isfinite(num) ? std::sqrt(num / den) : INFINITY;

  row->kernel = "gemm";
  row->dtype = dt.name;
  row->impl = "cublaslt";
  row->batch = 1;
  row->m = m;
  row->n = n;
  row->k = k;
  row->bytes = static_cast<double>(a_bytes + w_bytes) + 2.0 * static_cast<double>(m * n);
  row->flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  row->time_us = t.median_us;
  row->source_dtype = dt.source_dtype;
  row->notes = fmt(
      "cuBLASLt heuristic algo %d%s, TN, fp32 accumulate, bf16 out; median of %d runs after %d "
      "warm-up (p10 %.4g us, p90 %.4g us), %d rotated input sets; check: rel. error %.2e over %d "
      "sampled outputs",
      algo, algo > 0 ? (" (refused: " + refused + ")").c_str() : "", o.repeats, o.warmup, t.p10_us,
      t.p90_us, sets, *rel_err, kSamples);
  return true;
}

}  // namespace

void run_gemms(const Options& o, const cudaDeviceProp& p, std::vector<Row>* rows, Log* log) {
  // Shapes of the model zoo (workloads/models): tokens per micro-batch (m) 2K-16K and smaller
  // (MoE experts, TP/CP splits); n and k span hidden sizes (2048-18432), FFN widths / TP,
  // heads x head_dim / TP and vocab / TP (up to 32K). A full power-of-two grid, so the compute
  // model can interpolate in log space.
  std::vector<int64_t> ms = {256, 512, 1024, 2048, 4096, 8192, 16384};
  std::vector<int64_t> nk = {1024, 2048, 4096, 8192, 16384, 32768};
  if (o.quick) {
    ms = {1024, 4096, 16384};
    nk = {1024, 4096, 8192, 16384};
  }
  std::vector<DtypeSpec> dts = {
      {Kind::kBf16, "bf16", "bf16 x bf16 -> bf16", 16},
      {Kind::kFp8, "fp8", "fp8_e4m3 x fp8_e4m3, per-tensor fp32 scales (0.5, 0.25) -> bf16", 8}};
#if CUBLAS_VERSION >= 120800
  if (p.major >= 10) {
    dts.push_back(
        {Kind::kMxfp8, "mxfp8", "mxfp8 (e4m3, 32-element ue8m0 block scales) -> bf16", 8});
    dts.push_back(
        {Kind::kNvfp4, "nvfp4", "nvfp4 (e2m1, 16-element ue4m3 block scales) -> bf16", 4});
  } else {
    log->header.push_back("skipped: gemm mxfp8, nvfp4: need sm_100 block-scaled tensor cores (sm_" +
                          std::to_string(p.major * 10 + p.minor) + ")");
  }
#else
  log->header.push_back("skipped: gemm mxfp8, nvfp4: cuBLASLt older than 12.8");
#endif
  const int64_t m_max = ms.back(), nk_max = nk.back();
  Buffers b;
  b.pool_bytes = 2 * static_cast<size_t>((m_max + nk_max) * nk_max) * 2 + (64u << 20);
  b.d_bytes = static_cast<size_t>(m_max * nk_max) * 2;
  b.scales_bytes = round_up(static_cast<size_t>(std::max(m_max, nk_max)), 128) *
                   round_up(static_cast<size_t>(nk_max / 16), 4);
  CALIB_CUDA(cudaMalloc(&b.pool, b.pool_bytes));
  CALIB_CUDA(cudaMalloc(&b.d, b.d_bytes));
  CALIB_CUDA(cudaMalloc(&b.workspace, b.workspace_bytes));
  CALIB_CUDA(cudaMalloc(&b.scales, b.scales_bytes));
  CALIB_CUDA(cudaMalloc(&b.tensor_scales, 2 * kScaleStride * sizeof(float)));
  CALIB_CUDA(cudaMalloc(&b.samples, 2 * kSamples * sizeof(int)));
  CALIB_CUDA(cudaMalloc(&b.ref, 2 * kSamples * sizeof(double)));
  std::vector<float> scales(2 * kScaleStride, 0.0f);
  scales[0] = kScaleA;
  scales[kScaleStride] = kScaleB;
  CALIB_CUDA(cudaMemcpy(b.tensor_scales, scales.data(), scales.size() * sizeof(float),
                        cudaMemcpyHostToDevice));
  cublasLtHandle_t lt = nullptr;
  CALIB_LT(cublasLtCreate(&lt));
  cudaStream_t stream = nullptr;
  CALIB_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  constexpr double kMaxRelErr = 0.02;  // bf16 output rounding is ~0.002
  for (const DtypeSpec& dt : dts) {
    const uint8_t scale_byte = dt.kind == Kind::kNvfp4 ? kUe4m3Half : kUe8m0Half;
    CALIB_CUDA(cudaMemset(b.scales, scale_byte, b.scales_bytes));
    std::vector<Row> got;
    std::string why;
    double worst = 0;
    for (int64_t m : ms) {
      for (int64_t n : nk) {
        for (int64_t k : nk) {
          Row r;
          double err = 0;
          if (!time_shape(dt, m, n, k, o, p, lt, stream, b, &r, &err, &why)) {
            why = fmt("m=%lld n=%lld k=%lld: %s", static_cast<long long>(m),
                      static_cast<long long>(n), static_cast<long long>(k), why.c_str());
            break;
          }
          if (!(err <= kMaxRelErr)) {
            why = fmt("m=%lld n=%lld k=%lld: check failed, relative error %.3g > %.3g",
                      static_cast<long long>(m), static_cast<long long>(n),
                      static_cast<long long>(k), err, kMaxRelErr);
            break;
          }
          worst = std::max(worst, err);
          got.push_back(r);
          std::fprintf(stderr, "gemm %-5s m=%-6lld n=%-6lld k=%-6lld %10.2f us %8.1f TFLOP/s\n",
                       dt.name, static_cast<long long>(m), static_cast<long long>(n),
                       static_cast<long long>(k), r.time_us, r.flops / r.time_us * 1e-6);
        }
        if (!why.empty()) break;
      }
      if (!why.empty()) break;
    }
    if (!why.empty()) {
      // The compute model interpolates on a full grid: a dtype with a gap is left out entirely.
      log->header.push_back(std::string("skipped: gemm ") + dt.name + ": " + why);
      std::fprintf(stderr, "gemm %s skipped: %s\n", dt.name, why.c_str());
      continue;
    }
    log->header.push_back(fmt("check: gemm %s: %zu shapes, worst relative error %.2e (limit %.2g)",
                              dt.name, got.size(), worst, kMaxRelErr));
    rows->insert(rows->end(), got.begin(), got.end());
  }
  cublasLtDestroy(lt);
  cudaStreamDestroy(stream);
  for (void* ptr : {static_cast<void*>(b.pool), static_cast<void*>(b.d), b.workspace,
                    static_cast<void*>(b.scales), static_cast<void*>(b.tensor_scales),
                    static_cast<void*>(b.samples), static_cast<void*>(b.ref)})
    cudaFree(ptr);
}

}  // namespace calib
