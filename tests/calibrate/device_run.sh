#!/usr/bin/env bash
# One prepared run of fleetsim-calibrate on a GPU machine (how calibration/samples/h200-measured.csv
# was produced; calibration/README.md). Writes everything under $OUT.
set -u
OUT=${OUT:-out/device}
mkdir -p "$OUT"
nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1
bin=build/gpu/fleetsim-calibrate
cmake -S . -B build/gpu -DCMAKE_BUILD_TYPE=Release -DFLEETSIM_BUILD_TESTS=OFF -DFLEETSIM_BUILD_BENCH=OFF \
  >"$OUT/cmake.log" 2>&1 && cmake --build build/gpu -j16 --target fleetsim-calibrate >>"$OUT/cmake.log" 2>&1
if [ ! -x "$bin" ]; then
  # The simulator's own dependencies (Boost, Eigen, ...) may be missing here: build the harness alone.
  echo "cmake build failed; nvcc directly" >>"$OUT/cmake.log"
  mkdir -p build/gpu
  nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 calibration/bench/*.cu -lcublasLt -lnccl \
    -o "$bin" >>"$OUT/cmake.log" 2>&1
fi
[ -x "$bin" ] || { echo "no binary"; tail -50 "$OUT/cmake.log"; exit 1; }
# The quick run logs cuBLASLt's own errors (why an algorithm is refused) to $OUT/cublaslt.log.
CUBLASLT_LOG_LEVEL=1 CUBLASLT_LOG_FILE="$OUT/cublaslt.log" \
  timeout 90 "$bin" --quick --repeats 10 --out "$OUT/h200-quick.csv" 2>"$OUT/quick.err"
echo "quick rc=$?"
tail -5 "$OUT/quick.err"
grep -E "^# (error|skipped|check)" "$OUT/h200-quick.csv"
head -c 2000 "$OUT/cublaslt.log" 2>/dev/null
# bf16 + fp8 full grids: about twice the GEMM time of the bf16-only run.
timeout 300 "$bin" --out "$OUT/h200-measured.csv" 2>"$OUT/full.err"; echo "full rc=$?"
tail -5 "$OUT/full.err"
grep -E "^# (driver|error|skipped|check)" "$OUT/h200-measured.csv"
grep -E "m=(4096|8192) +n=\1 +k=\1|copy|rms_norm|swiglu|skipped" "$OUT/full.err" "$OUT/quick.err" | head -30
