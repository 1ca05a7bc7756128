#!/usr/bin/env python3
"""A 1,000-point sweep from Python (fleetsim.sweep) against the CLI (fleetsim sweep) on the same
points: wall time of each, the ratio, and a check that both gave the same rows. Not a ctest
(timings depend on the machine); `make bench` runs it after the C++ benchmarks.

usage: bench_python_sweep.py BUILD_DIR [--sweep FILE] [--threads N]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", help="build folder with fleetsim and python/ (e.g. build/release)")
    ap.add_argument("--sweep", default="scenarios/sweeps/bench-1000-64gpu.json")
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    build = Path(a.build).resolve()
    sys.path.insert(0, str(build / "python"))
    import fleetsim

    os.chdir(ROOT)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        subprocess.run([str(build / "fleetsim"), "sweep", a.sweep, "-j", str(a.threads),
                        "--progress", "none", "--out", tmp], check=True, capture_output=True)
        cli_s = time.perf_counter() - t0
        cli_rows = [json.loads(x) for x in Path(tmp, "results.jsonl").read_text().splitlines()]
    t0 = time.perf_counter()
    rows = fleetsim.sweep(a.sweep, threads=a.threads)
    py_s = time.perf_counter() - t0
    same = list(rows) == cli_rows
    n = len(rows)
    print(f"sweep {a.sweep}: {n} points, {a.threads} thread(s)")
    print(f"  CLI    fleetsim sweep     {cli_s:8.2f} s  {n / cli_s:8.1f} points/s")
    print(f"  Python fleetsim.sweep()   {py_s:8.2f} s  {n / py_s:8.1f} points/s")
    print(f"  Python / CLI              {py_s / cli_s:8.3f}  (target <= 1.2)")
    print(f"  same rows as the CLI: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
