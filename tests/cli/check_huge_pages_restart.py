#!/usr/bin/env python3
"""fleetsim restarts itself once with glibc's huge-page tunable (sim/cli/main.cpp,
restart_with_huge_pages; docs/performance.md#huge-pages). The environment a running fleetsim
has, read from /proc/PID/environ while it runs, shows whether it did: after the restart,
GLIBC_TUNABLES holds glibc.malloc.hugetlb=1 (appended to what the caller set). Expected only
where the kernel's THP mode is `madvise` and the binary is not built with AddressSanitizer
(ctest passes sanitize=ON for the FLEETSIM_SANITIZE build);
never with FLEETSIM_HUGE_PAGES=0, LD_PRELOAD set, or a hugetlb value the caller chose.

usage: check_huge_pages_restart.py FLEETSIM [sanitize=ON]    (run from the repository root)
"""
import os
import subprocess
import sys
import tempfile

SCENARIO = "scenarios/quickstart.json"


def tunables_seen(fleetsim, env, out):
    """Every GLIBC_TUNABLES value /proc shows for the process while it runs ('' for none)."""
    p = subprocess.Popen([fleetsim, "run", SCENARIO, "--out", out], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seen = set()
    while p.poll() is None:
        try:
            with open(f"/proc/{p.pid}/environ", "rb") as f:
                items = f.read().split(b"\0")
        except OSError:
            break
        if not any(items):  # a zombie shows nothing
            continue
        values = [i[len(b"GLIBC_TUNABLES="):].decode() for i in items
                  if i.startswith(b"GLIBC_TUNABLES=")]
        seen.add(values[0] if values else "")
    _, err = p.communicate()
    if p.returncode != 0:
        sys.exit(f"huge pages: fleetsim run {SCENARIO} failed ({p.returncode}): {err.decode()}")
    return seen


def main():
    fleetsim = sys.argv[1]
    try:
        mode = open("/sys/kernel/mm/transparent_hugepage/enabled").read()
    except OSError:
        mode = ""
    restarts = "[madvise]" in mode and "sanitize=ON" not in sys.argv[2:]
    base = {k: v for k, v in os.environ.items()
            if k not in ("GLIBC_TUNABLES", "FLEETSIM_HUGE_PAGES", "LD_PRELOAD")}
    cases = [  # name, extra environment, the value the run must show at the end (None: unset)
        ("default", {}, "glibc.malloc.hugetlb=1" if restarts else None),
        ("other tunable kept", {"GLIBC_TUNABLES": "glibc.malloc.check=0"},
         "glibc.malloc.check=0:glibc.malloc.hugetlb=1" if restarts else "glibc.malloc.check=0"),
        ("opt-out", {"FLEETSIM_HUGE_PAGES": "0"}, None),
        ("caller's choice", {"GLIBC_TUNABLES": "glibc.malloc.hugetlb=0"}, "glibc.malloc.hugetlb=0"),
    ]
    failures = 0
    with tempfile.TemporaryDirectory(prefix="fleetsim-hugepages-") as tmp:
        for i, (name, extra, want) in enumerate(cases):
            seen = tunables_seen(fleetsim, dict(base, **extra), os.path.join(tmp, str(i)))
            start = extra.get("GLIBC_TUNABLES", "")
            allowed = {start, want if want is not None else ""}
            ok = seen <= allowed and (want is None or want in seen)
            if not ok:
                failures += 1
                print(f"FAIL {name}: GLIBC_TUNABLES seen {sorted(seen)}, want {want!r} "
                      f"(THP mode {mode.strip()!r}, restart expected: {restarts})")
    print(f"{len(cases)} cases, {failures} failures (restart expected: {restarts})")
    sys.exit(1 if failures else 0)


main()
