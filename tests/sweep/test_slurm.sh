#!/usr/bin/env bash
# The Slurm round trip: a real single-node Slurm (Debian's slurmctld + slurmd with munge on
# localhost, every file in a temporary directory; scripts/slurm-local.sh), the sweep's job array
# from --emit-slurm run with `sbatch --wait --array`, the merge job, and the merged results
# compared byte for byte with a local run. Stops the daemons it started. Exit 77 (skipped) only
# where Slurm cannot be installed or started without root.
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(pwd)
sweep="$root/scenarios/sweeps/quickstart-parallelism.json"
need=(slurmctld slurmd sbatch munged)
missing=0
for b in "${need[@]}"; do command -v "$b" >/dev/null 2>&1 || [ -x "/usr/sbin/$b" ] || missing=1; done
if [ "$missing" -eq 1 ] && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    slurmctld slurmd slurm-client munge >/dev/null 2>&1 || true
fi
tmp=$(mktemp -d /tmp/fleetsim-slurm.XXXXXX)
cleanup() { bash "$root/scripts/slurm-local.sh" stop "$tmp/slurm"; rm -rf "$tmp"; }
trap cleanup EXIT
env_line=$(bash "$root/scripts/slurm-local.sh" start "$tmp/slurm" 2>"$tmp/start.err")
rc=$?
if [ "$rc" -eq 77 ]; then
  echo "SKIP: Slurm cannot be installed or started here: $(cat "$tmp/start.err")"
  exit 77
fi
if [ "$rc" -ne 0 ]; then echo "FAIL: local Slurm did not start"; cat "$tmp/start.err"; exit 1; fi
eval "$env_line"
fail=0
"$bin" sweep "$sweep" --emit-slurm "$tmp/jobs" --shards 3 -j 1 >/dev/null 2>&1 || { echo "FAIL emit"; exit 1; }
if ! timeout 150 sbatch --wait --array=0-2 "$tmp/jobs/sweep.sbatch" >"$tmp/sbatch.out" 2>&1; then
  echo "FAIL: job array"; cat "$tmp/sbatch.out" "$tmp"/jobs/logs/* 2>/dev/null; exit 1
fi
if ! timeout 100 sbatch --wait "$tmp/jobs/merge.sbatch" >>"$tmp/sbatch.out" 2>&1; then
  echo "FAIL: merge job"; cat "$tmp/sbatch.out" "$tmp"/jobs/logs/* 2>/dev/null; exit 1
fi
for i in 0 1 2; do
  grep -q "shard $i/3: 21 points" "$tmp/jobs/logs/shard-$i.out" || { echo "FAIL: shard $i log"; cat "$tmp/jobs/logs/shard-$i.out"; fail=1; }
done
"$bin" sweep "$sweep" --out "$tmp/local" --progress none >/dev/null 2>&1 || { echo "FAIL local run"; exit 1; }
for f in results.jsonl results.csv manifest.json; do
  if cmp -s "$tmp/local/$f" "$tmp/jobs/merged/$f"; then echo "ok: merged $f equals the local run"; else echo "FAIL: merged $f differs"; fail=1; fi
done
exit "$fail"
