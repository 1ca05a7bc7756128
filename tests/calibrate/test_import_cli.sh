#!/usr/bin/env bash
# fleetsim calibrate import, end to end: import the sample into a temporary set, run an H200
# scenario that names it, and check that the report lists the set; bad files and unknown sets
# exit 2 with the file, line / JSON pointer and what was expected.
set -u
bin="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL $1"; cat "$tmp/out" "$tmp/err" 2>/dev/null | head -20; }
check() {  # name, expected rc, command...
  local name="$1" want="$2"; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" -eq "$want" ]; then ok; else bad "$name: rc=$rc want $want"; fi
}
sample=calibration/samples/h200-sample.csv
check import 0 "$bin" calibrate import "$sample" --set "$tmp/sets/h200"
[ -f "$tmp/sets/h200/h200-sample.csv" ] && ok || bad "imported file missing"
cmp -s "$sample" "$tmp/sets/h200/h200-sample.csv" && ok || bad "imported file differs"
grep -q "8 GEMM, 11 memory-bound, 0 collective rows" "$tmp/out" && ok || bad "import summary"
check import-named 0 "$bin" calibrate import "$sample" --set mine --sets-dir "$tmp/named"
[ -f "$tmp/named/mine/h200-sample.csv" ] && ok || bad "named set"

cat >"$tmp/s.json" <<JSON
{"name": "cal", "cluster": {"system": "p5en.48xlarge", "count": 1, "calibration_set": "$tmp/sets/h200"},
 "workload": {"type": "training", "model": "llama3-8b", "parallelism": {"tp": 1},
              "batch": {"global": 8, "micro": 1, "seq_len": 8192}, "precision": "bf16"}}
JSON
check run-with-set 0 "$bin" run "$tmp/s.json" --out "$tmp/run"
/usr/bin/python3 - "$tmp/run/report.json" "$tmp/sets/h200" <<'PY' && ok || bad "compute_sources"
import json, sys
src = json.load(open(sys.argv[1]))["compute_sources"]
assert any(s.startswith("calibration set " + sys.argv[2]) and "h200-sample.csv" in s for s in src), src
assert any(s.startswith("gemm bf16: 8 measured shapes of the calibration set") for s in src), src
assert any("measured rows >= 32 MiB of the calibration set" in s for s in src), src
PY
# The same scenario without the set does not list it, and its step time differs.
sed 's/, "calibration_set": "[^"]*"//' "$tmp/s.json" >"$tmp/plain.json"
check run-without-set 0 "$bin" run "$tmp/plain.json" --out "$tmp/plain"
grep -q "calibration set" "$tmp/plain/report.json" && bad "set listed without a set" || ok

# Errors: exit 2 with file, line and column / JSON pointer.
sed '0,/,gemm,bf16,/s/,gemm,bf16,/,gemm,bf17,/' "$sample" >"$tmp/bad.csv"
check bad-dtype 2 "$bin" calibrate import "$tmp/bad.csv" --set "$tmp/sets/x"
grep -q "bad.csv:line [0-9]*, column dtype: expected fp32, bf16, fp8, mxfp8 or nvfp4, got 'bf17'" "$tmp/err" && ok || bad "bad-dtype message"
check missing-file 2 "$bin" calibrate import "$tmp/none.csv"
sed "s|$tmp/sets/h200|no-such-set|" "$tmp/s.json" >"$tmp/unknown.json"
check unknown-set 2 "$bin" run "$tmp/unknown.json"
grep -q "unknown.json:/cluster/calibration_set: calibration set 'no-such-set' not found" "$tmp/err" && ok || bad "unknown-set message"
sed 's/"calibration_set"/"calibration_sets"/' "$tmp/s.json" >"$tmp/typo.json"
check typo-key 2 "$bin" run "$tmp/typo.json"
grep -q "did you mean 'calibration_set'" "$tmp/err" && ok || bad "typo-key message"
# A B200 scenario cannot use an H200 set.
sed 's/p5en.48xlarge/p6-b200.48xlarge/' "$tmp/s.json" >"$tmp/b200.json"
check other-gpu 2 "$bin" run "$tmp/b200.json"
grep -q "calibration set has no rows for GPU B200 (it has: H200)" "$tmp/err" && ok || bad "other-gpu message"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
