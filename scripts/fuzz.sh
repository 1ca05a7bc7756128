#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang++ (ASan + UBSan) and runs each for a fixed time
# on a copy of its seed corpus (fuzz/corpus/<parser>/) plus the regression inputs
# (fuzz/regressions/<parser>/). A finding (crash, sanitizer report, uncaught non-input exception,
# hang beyond --timeout, memory beyond 2 GiB) fails the script and leaves the input under
# BUILD/artifacts/; reproduce it with `BUILD/fuzz/fuzz_<parser> FILE`, fix the parser, and copy
# the input to fuzz/regressions/<parser>/ (ctest replays it in every build from then on).
#
#   scripts/fuzz.sh [--seconds N] [--timeout S] [--build DIR] [--jobs N] [--if-available] [PARSER...]
#
# --if-available: exit 0 with a note when clang++ or libFuzzer is missing (make test uses it).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=60 timeout=10 build=build/fuzz jobs=1 if_available=0 targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --timeout) timeout="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --if-available) if_available=1; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done

clangxx=$(command -v clang++ || true)
if [ -z "$clangxx" ] || ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
    "$clangxx" -x c++ -fsanitize=fuzzer,address,undefined -o /dev/null - 2>/dev/null; then
  if [ "$if_available" -eq 1 ]; then
    echo "fuzz.sh: clang++ with libFuzzer not found; fuzzers skipped (scripts/install-deps.sh installs clang)"
    exit 0
  fi
  echo "fuzz.sh: needs clang++ with libFuzzer (Debian: clang libclang-rt-14-dev)" >&2
  exit 2
fi

cmake -S . -B "$build" -DCMAKE_CXX_COMPILER="$clangxx" -DFLEETSIM_FUZZ=ON -DFLEETSIM_BUILD_TESTS=OFF \
  -DFLEETSIM_BUILD_BENCH=OFF -DFLEETSIM_BUILD_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" >/dev/null
if [ ${#targets[@]} -eq 0 ]; then
  for f in fuzz/fuzz_*.cpp; do n=$(basename "$f" .cpp); targets+=("${n#fuzz_}"); done
fi
cmake --build "$build" -j "$jobs" --target "${targets[@]/#/fuzz_}"

export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
mkdir -p "$build/artifacts"
failed=()
for t in "${targets[@]}"; do
  work="$build/corpus/$t"
  mkdir -p "$work"
  dirs=("$work" "fuzz/corpus/$t")
  [ -d "fuzz/regressions/$t" ] && dirs+=("fuzz/regressions/$t")
  start=$(date +%s)
  if "$build/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb=2048 \
      -max_len=65536 -print_final_stats=1 -artifact_prefix="$build/artifacts/$t-" "${dirs[@]}" \
      >"$build/fuzz_$t.log" 2>&1; then
    echo "fuzz $t: $(grep -m1 -o 'Done [0-9]* runs' "$build/fuzz_$t.log" || echo 'done'), no finding ($(( $(date +%s) - start )) s)"
  else
    echo "fuzz $t: FINDING (log: $build/fuzz_$t.log)"
    grep -E 'ERROR|SUMMARY|Test unit written|runtime error|terminate called' "$build/fuzz_$t.log" | head -8
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: findings in: ${failed[*]}" >&2
  exit 1
fi
