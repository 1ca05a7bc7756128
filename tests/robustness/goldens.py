#!/usr/bin/env python3
"""Determinism goldens: each small scenario below runs twice, the second time in 4 KiB pages
(FLEETSIM_HUGE_PAGES=0: fleetsim does not restart itself with glibc's huge-page tunable, see
sim/cli/main.cpp); stdout, report.json (and the Chrome trace where asked) must be byte-identical
between the two runs and equal to the expected outputs
checked in under tests/robustness/expected/<name>/ (the trace by SHA-256). Those change only
through the explicit update command:

    make update-goldens        (= tests/robustness/goldens.py build/ci/fleetsim --update)

usage: goldens.py FLEETSIM [--update]     (run from the repository root)
Paths in the outputs stay relative: the data directory is "." (FLEETSIM_DATA_DIR).
"""
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

GOLDENS = [  # name, scenario, extra arguments
    ("collective-allreduce", "scenarios/allreduce-2x-p6-b200.json", []),
    ("collective-alltoall-nvl72", "scenarios/alltoall-nvl72.json", []),
    ("training-quickstart", "scenarios/quickstart.json", ["--trace", "{out}/trace.json"]),
    ("training-moe-skew", "scenarios/deepseek-v3-skew-p6-b200.json", []),
    ("run-failures", "scenarios/run-quickstart-tiered.json", []),
]
EXPECTED = "tests/robustness/expected"


def run(fleetsim, scenario, extra, out, small_pages=False):
    env = dict(os.environ, FLEETSIM_DATA_DIR=".")
    if small_pages:
        env["FLEETSIM_HUGE_PAGES"] = "0"
    args = [fleetsim, "run", scenario, "--out", out] + [a.format(out=out) for a in extra]
    p = subprocess.run(args, capture_output=True, env=env, timeout=600)
    if p.returncode != 0:
        sys.exit(f"goldens: {' '.join(args)} failed ({p.returncode}):\n{p.stderr.decode()}")
    # the output folder is a temporary path: drop the lines that name it
    stdout = b"".join(l for l in p.stdout.splitlines(keepends=True)
                      if not l.startswith((b"# report:", b"# trace:", b"# events:")))
    files = {"stdout.txt": stdout, "report.json": open(os.path.join(out, "report.json"), "rb").read()}
    trace = os.path.join(out, "trace.json")
    if os.path.exists(trace):
        files["trace.sha256"] = (hashlib.sha256(open(trace, "rb").read()).hexdigest() + "\n").encode()
    return files


def main():
    fleetsim, update = sys.argv[1], "--update" in sys.argv
    tmp = tempfile.mkdtemp(prefix="fleetsim-goldens-")
    failures = 0
    try:
        for name, scenario, extra in GOLDENS:
            a = run(fleetsim, scenario, extra, os.path.join(tmp, name, "a"))
            b = run(fleetsim, scenario, extra, os.path.join(tmp, name, "b"), small_pages=True)
            for f in a:
                if a[f] != b[f]:
                    failures += 1
                    print(f"FAIL {name}: {f} differs between two runs of the same scenario and seed "
                          "(the second in 4 KiB pages)")
            exp_dir = os.path.join(EXPECTED, name)
            if update:
                shutil.rmtree(exp_dir, ignore_errors=True)
                os.makedirs(exp_dir)
                for f, data in a.items():
                    open(os.path.join(exp_dir, f), "wb").write(data)
                print(f"updated {exp_dir}")
                continue
            for f, data in a.items():
                path = os.path.join(exp_dir, f)
                if not os.path.exists(path):
                    failures += 1
                    print(f"FAIL {name}: no expected {path} (make update-goldens)")
                elif open(path, "rb").read() != data:
                    failures += 1
                    print(f"FAIL {name}: {f} differs from {path}; if the change is intended, run "
                          "`make update-goldens` and commit the new expected outputs")
                    subprocess.run(["diff", path, "-"], input=data)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(GOLDENS)} goldens, {failures} failures")
    sys.exit(1 if failures else 0)


main()
