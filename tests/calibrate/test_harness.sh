#!/usr/bin/env bash
# fleetsim-calibrate on this machine: exit 77 (ctest: skipped) without a CUDA device; with one,
# a quick run whose file must pass 'fleetsim calibrate import'.
set -u
harness="$1" fleetsim="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$harness" --quick --repeats 5 --warmup 2 --no-collectives --out "$tmp/cal.csv" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 77 ]; then
  grep -q "no CUDA device" "$tmp/err" || { echo "FAIL: exit 77 without the 'no CUDA device' message"; exit 1; }
  cat "$tmp/err"
  exit 77
fi
[ -s "$tmp/cal.csv" ] || { echo "FAIL: rc=$rc and no file"; cat "$tmp/err"; exit 1; }
"$fleetsim" calibrate import "$tmp/cal.csv" --set "$tmp/set" || { echo "FAIL: import"; exit 1; }
echo "harness rc=$rc; file imported"
