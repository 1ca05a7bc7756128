#!/usr/bin/python3
"""The worked examples of README.md print what fleetsim prints today.

Usage: check_readme_examples.py REPO_ROOT FLEETSIM_BINARY

Every fenced block whose first line is `$ fleetsim run|memory|plan ...` is rerun (with --out in a
temporary folder, so nothing is written into the repository) and every line of the block after
the command must be the start of an output line, in the same order. Lines that are `...` (or
indented `...`) stand for omitted output; the `wrote ...` / `# report: ...` lines name the output
folder and are not compared. The sweep, merge and calibrate examples are left out: their output
names temporary paths or a progress rate.
"""
import re
import shlex
import subprocess
import sys
import tempfile

CHECKED = ("run", "memory", "plan")


def blocks(readme):
    """(README line of the first expected line, command, expected lines) of every fenced block starting with a command."""
    lines = readme.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("```") and i + 1 < len(lines) and lines[i + 1].startswith("$ fleetsim "):
            start = i + 2
            j = start
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            yield start + 1, lines[i + 1][2:], lines[start:j]
            i = j
        i += 1


def main():
    root, binary = sys.argv[1], sys.argv[2]
    readme = open(f"{root}/README.md", encoding="utf-8").read()
    failures, checked = [], 0
    for line_no, command, expected in blocks(readme):
        argv = shlex.split(command)
        if argv[1] not in CHECKED:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            if argv[1] in ("run", "plan"):
                argv += ["--out", tmp]
            if argv[1] == "plan":
                argv += ["--progress", "none"]
            out = subprocess.run([binary] + argv[1:], cwd=root, capture_output=True, text=True)
        if out.returncode != 0:
            failures.append(f"README.md:{line_no}: `{command}` exited {out.returncode}: {out.stderr.strip()}")
            continue
        got = [l.rstrip() for l in out.stdout.splitlines()]
        pos = 0
        for k, want in enumerate(expected):
            want = want.rstrip()
            if re.fullmatch(r"\s*\.\.\.", want) or want.startswith("wrote ") or want.startswith("# report:"):
                continue
            while pos < len(got) and not got[pos].startswith(want):
                pos += 1
            if pos == len(got):
                failures.append(f"README.md:{line_no + k}: `{command}` no longer prints (in this order):\n  {want}")
                break
            pos += 1
        checked += 1
    for f in failures:
        print(f)
    print(f"check_readme_examples.py: {checked} examples rerun, {len(failures)} stale")
    if checked == 0:
        print("no example found: the README's fenced `$ fleetsim` blocks moved?")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
