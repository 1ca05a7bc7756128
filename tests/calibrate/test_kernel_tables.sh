#!/bin/bash
# calibration/kernels/*.csv are a pure function of calibration/sources/kernel-timings.csv and the
# other calibration/sources/*.csv: rerunning the importer must reproduce them byte for byte.
set -euo pipefail
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
/usr/bin/python3 calibration/import_kernels.py --out "$out" 2>/dev/null
for f in calibration/kernels/*.csv; do
  if ! cmp -s "$f" "$out/$(basename "$f")"; then
    echo "FAIL $f differs from a fresh import (run /usr/bin/python3 calibration/import_kernels.py)"
    diff "$f" "$out/$(basename "$f")" | head -20
    exit 1
  fi
done
[ "$(ls "$out" | wc -l)" -eq "$(ls calibration/kernels/*.csv | wc -l)" ] || { echo "FAIL table count"; exit 1; }
echo "ok: $(ls "$out" | wc -l) kernel tables reproduced"
