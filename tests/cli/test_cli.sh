#!/usr/bin/env bash
# CLI contract: exit codes (0 ok, 2 bad input), messages with file and JSON pointer, byte-identical
# reports for the same scenario and seed.
set -u
bin="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
check() {  # name, expected rc, command...
  local name="$1" want="$2"; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" -eq "$want" ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL $name: rc=$rc want $want"; cat "$tmp/err"; fi
}
check version 0 "$bin" --version
check help 0 "$bin" run --help
check run-quickstart 0 "$bin" run scenarios/quickstart.json --out "$tmp/a"
check run-again 0 "$bin" run scenarios/quickstart.json --out "$tmp/b"
if cmp -s "$tmp/a/report.json" "$tmp/b/report.json"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL determinism"; fi
printf '{"name": "x", "cluster": {"system": "p6-b200.48xlarge", "count": 2, "fabrc": {}}, "workload": {}}' >"$tmp/bad.json"
check bad-key 2 "$bin" run "$tmp/bad.json"
if grep -q "bad.json:/cluster/fabrc: unknown key 'fabrc'; did you mean 'fabric'?" "$tmp/err"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL bad-key message"; cat "$tmp/err"; fi
printf '\xff\xfe not json' >"$tmp/binary.json"
check not-json 2 "$bin" run "$tmp/binary.json"
check missing-file 2 "$bin" run "$tmp/none.json"
check unknown-flag 2 "$bin" run scenarios/quickstart.json --frobnicate
check topo 0 "$bin" topo show p6-b200.48xlarge --count 4
check topo-dot 0 "$bin" topo show p6e-gb200-ultraserver-72 --dot
check topo-unknown 2 "$bin" topo show p7.48xlarge
printf 'a,b\n"unterminated,1\n' >"$tmp/bad.csv"
check validate-bad-csv 2 "$bin" validate --reference "$tmp/bad.csv"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
