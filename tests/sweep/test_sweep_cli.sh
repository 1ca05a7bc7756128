#!/usr/bin/env bash
# fleetsim sweep / merge through the CLI: progress output, kill -9 in the middle of a sweep and
# resume (nothing lost, nothing duplicated, same bytes as an uninterrupted run), shards + merge,
# Slurm script generation, exit code 2 with the JSON pointer for bad sweep files.
set -u
bin="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL $*"; }
check() {  # name, expected rc, command...
  local name="$1" want="$2"; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" -eq "$want" ]; then ok; else bad "$name: rc=$rc want $want"; cat "$tmp/err"; fi
}
sweep=scenarios/sweeps/bench-1000-64gpu.json

# Reference: uninterrupted, 2 threads; plain progress lines when stderr is not a terminal.
check reference 0 "$bin" sweep "$sweep" -j 2 --out "$tmp/ref"
grep -q "1000/1000 points (100%), .* points/s, ETA" "$tmp/err" && ok || bad "progress line"
[ "$(wc -l <"$tmp/ref/results.jsonl")" -eq 1000 ] && ok || bad "reference rows"
[ "$(wc -l <"$tmp/ref/results.csv")" -eq 1001 ] && ok || bad "reference csv rows"

# Kill -9 mid-sweep, add half a line as a write cut by the kill would leave, resume.
"$bin" sweep "$sweep" -j 2 --out "$tmp/killed" --progress none >/dev/null 2>&1 &
pid=$!
# Wait on rows, not on a time budget: a loaded CI machine may take many seconds to reach 150.
deadline=$((SECONDS + 300))
while [ "$SECONDS" -lt "$deadline" ] && kill -0 "$pid" 2>/dev/null; do
  n=$(cat "$tmp/killed/results.jsonl" 2>/dev/null | wc -l)
  [ "$n" -ge 150 ] && break
  sleep 0.01
done
kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
done_rows=$(wc -l <"$tmp/killed/results.jsonl")
if [ "$done_rows" -ge 150 ] && [ "$done_rows" -lt 1000 ]; then ok; else bad "kill landed after $done_rows rows"; fi
[ ! -e "$tmp/killed/results.csv" ] && ok || bad "a killed shard must not have results.csv"
head -c 120 "$tmp/ref/results.jsonl" >>"$tmp/killed/results.jsonl"
check resume 0 "$bin" sweep "$sweep" -j 2 --out "$tmp/killed" --progress none
grep -q "1000 points ($done_rows already done, $((1000 - done_rows)) run" "$tmp/out" && ok || { bad "resume counts"; cat "$tmp/out"; }
cmp -s "$tmp/ref/results.jsonl" "$tmp/killed/results.jsonl" && ok || bad "resumed jsonl differs"
cmp -s "$tmp/ref/results.csv" "$tmp/killed/results.csv" && ok || bad "resumed csv differs"
[ "$(cut -d, -f2 "$tmp/killed/results.csv" | sort | uniq -d | wc -l)" -eq 0 ] && ok || bad "duplicate keys"

# Shards + merge = unsharded; a missing shard is named.
q=scenarios/sweeps/quickstart-parallelism.json
check q-all 0 "$bin" sweep "$q" --out "$tmp/q"
for i in 0 1 2; do check "q-shard-$i" 0 "$bin" sweep "$q" --shard "$i/3" -j 2 --out "$tmp/qs$i"; done
check merge 0 "$bin" merge "$tmp/qm" "$tmp/qs0" "$tmp/qs1" "$tmp/qs2"
for f in results.jsonl results.csv manifest.json; do
  cmp -s "$tmp/q/$f" "$tmp/qm/$f" && ok || bad "merged $f differs"
done
check merge-missing 2 "$bin" merge "$tmp/qx" "$tmp/qs0" "$tmp/qs2"
grep -q "21 of 63 points are missing" "$tmp/err" && grep -q "shards with no input folder: 1/3" "$tmp/err" && ok || { bad "merge-missing message"; cat "$tmp/err"; }

# Slurm scripts.
check emit 0 "$bin" sweep "$q" --emit-slurm "$tmp/slurm" --shards 3 -j 2
grep -q '^#SBATCH --array=0-2$' "$tmp/slurm/sweep.sbatch" && grep -q -- '--shard "${SLURM_ARRAY_TASK_ID}/3"' "$tmp/slurm/sweep.sbatch" && ok || bad "sbatch script"
grep -q "merge '$tmp/slurm/merged' '$tmp/slurm/shard-0' '$tmp/slurm/shard-1' '$tmp/slurm/shard-2'" "$tmp/slurm/merge.sbatch" && ok || bad "merge script"
bash -n "$tmp/slurm/submit.sh" && ok || bad "submit.sh syntax"
# The array tasks repeat the limits the sweep was expanded under (raised ones included).
check emit-limits 0 "$bin" sweep "$q" --emit-slurm "$tmp/slurm2" --shards 2 --max-points 500 --max-flows 1000000 --max-sim-memory 2GiB
grep -q -- "'--max-points' '500' '--max-gpus' '131072' '--max-passes' '20000000' '--max-flows' '1000000' '--max-run-events' '200000000' '--max-sim-memory' '2GiB' --progress" "$tmp/slurm2/sweep.sbatch" && ok || { bad "sbatch limits"; grep exec "$tmp/slurm2/sweep.sbatch"; }
check points-limit 2 "$bin" sweep "$q" --max-points 62 --emit-slurm "$tmp/slurm3"
grep -q "points than its limit of 62 (raise it with --max-points)" "$tmp/err" && ok || { bad "points-limit message"; cat "$tmp/err"; }

# Bad sweep files: exit 2, file and JSON pointer.
printf '{"name": "b", "base": "%s/scenarios/quickstart.json", "axes": [{"mode": "grid", "pointer": "/workload/parallelism/tpp", "values": [1]}]}' "$PWD" >"$tmp/b1.json"
check unknown-pointer 2 "$bin" sweep "$tmp/b1.json" --out "$tmp/b"
grep -q "b1.json:/axes/0/pointer: unknown scenario key 'tpp' at /workload/parallelism; did you mean 'tp'?" "$tmp/err" && ok || { bad "unknown-pointer message"; cat "$tmp/err"; }
printf '{"name": "b", "base": "%s/scenarios/quickstart.json", "axes": [{"mode": "grid", "pointer": "/workload/parallelism/tp", "values": []}]}' "$PWD" >"$tmp/b2.json"
check empty-axis 2 "$bin" sweep "$tmp/b2.json" --out "$tmp/b"
grep -q "b2.json:/axes/0/values: expected a non-empty array" "$tmp/err" && ok || bad "empty-axis message"
printf '{"name": "b", "base": "%s/scenarios/quickstart.json", "axes": [{"mode": "grid", "pointer": "/workload/parallelism/tp", "values": [4, true]}]}' "$PWD" >"$tmp/b3.json"
check wrong-type 2 "$bin" sweep "$tmp/b3.json" --out "$tmp/b"
grep -q "b3.json:/axes/0/values/1: value true for /workload/parallelism/tp: expected an integer" "$tmp/err" && ok || { bad "wrong-type message"; cat "$tmp/err"; }
check bad-shard 2 "$bin" sweep "$q" --shard 3/3 --out "$tmp/b"
check merge-not-results 2 "$bin" merge "$tmp/m" "$tmp"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
