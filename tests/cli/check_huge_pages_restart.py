#!/usr/bin/env python3
"""fleetsim restarts itself once with glibc's huge-page tunable (sim/cli/main.cpp,
restart_with_huge_pages; docs/performance.md#huge-pages). A running fleetsim shows whether it did:
its environment (/proc/PID/environ) has glibc.malloc.hugetlb=1 appended to the GLIBC_TUNABLES the
caller set, and glibc's malloc has marked its large mappings for huge pages (`hg` in the VmFlags
of /proc/PID/smaps). Expected only where the kernel's THP mode is `madvise` and the binary is not
built with AddressSanitizer (ctest passes sanitize=ON for the FLEETSIM_SANITIZE build); never
with FLEETSIM_HUGE_PAGES=0, LD_PRELOAD set, or a hugetlb value the caller chose. The process
keeps its name (/proc/PID/comm) across the restart.

usage: check_huge_pages_restart.py FLEETSIM [sanitize=ON]    (run from the repository root)
"""
import os
import subprocess
import sys
import tempfile

# A command whose output is many times a pipe's capacity (64 KiB by default): it blocks writing until the
# test reads, so it is still running, past the restart, when its first byte arrives.
COMMAND = ["topo", "show", "p6-b200.48xlarge", "--count", "1024", "--dot"]
MIN_OUTPUT = 1 << 20  # the largest pipe capacity an unprivileged process may set (pipe-max-size)


def running_state(fleetsim, env):
    """(GLIBC_TUNABLES or '', mappings marked for huge pages, comm) of fleetsim while it writes.

    fleetsim writes nothing before main() has decided on the restart, so once a byte is read what
    /proc shows is final (no race with the exec, however busy the machine)."""
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen([fleetsim] + COMMAND, env=env, stdout=subprocess.PIPE, stderr=err)
        first = p.stdout.read(1)
        proc = f"/proc/{p.pid}"
        try:
            with open(f"{proc}/environ", "rb") as f:
                items = f.read().split(b"\0")
            with open(f"{proc}/smaps") as f:
                marked = sum(1 for line in f
                             if line.startswith("VmFlags:") and " hg" in line)
            with open(f"{proc}/comm") as f:
                comm = f.read().strip()
            error = "" if any(items) else "empty environment (the process had exited)"
        except OSError as e:
            error = str(e)
        size = len(first) + len(p.stdout.read())
        p.wait()
        if p.returncode != 0:
            err.seek(0)
            sys.exit(f"huge pages: fleetsim {' '.join(COMMAND)} failed ({p.returncode}): "
                     f"{err.read().decode()}")
    if size < MIN_OUTPUT:
        sys.exit(f"huge pages: fleetsim {' '.join(COMMAND)} wrote {size} bytes, fewer than the "
                 f"{MIN_OUTPUT} this check needs to find it running")
    if error:
        sys.exit(f"huge pages: {proc}: {error}")
    # glibc 2.36 writes NULs over the ':' between tunables in the string the process started
    # with, so the tunables after the first show as entries of their own: join them back.
    key = b"GLIBC_TUNABLES="
    tunables = ""
    for i, item in enumerate(items):
        if item.startswith(key):
            parts = [item[len(key):]]
            for rest in items[i + 1:]:
                if not rest.startswith(b"glibc."):
                    break
                parts.append(rest)
            tunables = b":".join(parts).decode()
            break
    return tunables, marked, comm


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
    name_want = os.path.basename(fleetsim)[:15]  # the kernel keeps 15 characters of a name
    for name, extra, want in cases:
        tunables, marked, comm = running_state(fleetsim, dict(base, **extra))
        huge = want is not None and want.endswith("glibc.malloc.hugetlb=1")
        problems = []
        if tunables != (want or ""):
            problems.append(f"GLIBC_TUNABLES {tunables!r}, want {want!r}")
        if (marked > 0) != huge:
            problems.append(f"{marked} mappings marked for huge pages, want "
                            f"{'some' if huge else 'none'}")
        if comm != name_want:
            problems.append(f"process name {comm!r}, want {name_want!r}")
        if problems:
            failures += 1
            print(f"FAIL {name}: {'; '.join(problems)} (THP mode {mode.strip()!r}, "
                  f"restart expected: {restarts})")
    print(f"{len(cases)} cases, {failures} failures (restart expected: {restarts})")
    sys.exit(1 if failures else 0)


main()
