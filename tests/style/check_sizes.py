#!/usr/bin/env python3
"""House-style size check (STYLE.md "Size", DESIGN.md): no C++ file under sim/ over 600 lines and
no function body over 80 lines, unless a `// size-exception: <reason>` comment says why — in the
file's first 15 lines for a file, in the 3 lines above a function's signature for a function.

Usage: check_sizes.py ROOT [--list]   (--list prints every function over the limit, excepted or
not, longest first). Exit 1 with one line per violation."""
import os
import re
import sys

MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80
EXCEPTION = "size-exception:"


def strip(text):
    """Comments, string and character literals blanked out (newlines kept, so lines still count)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i)
            j = n if j < 0 else j + len(end)
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (min(j + 1, n) - i))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


SIGNATURE_END = re.compile(
    r"\)\s*(const|noexcept|override|final|mutable|&|&&|->\s*[\w:<>,\s\*&]+|\s)*$")
CONTROL = re.compile(r"\b(if|for|while|switch|catch)\s*\([^()]*(\([^()]*\)[^()]*)*\)\s*$")


def functions(stripped):
    """(first line of the body, last line) of every function body not nested in another one."""
    result = []
    stack = []  # kinds: 'fn', 'other'
    line = 1
    last_stmt_end = 0
    start_line = {}
    for i, c in enumerate(stripped):
        if c == "\n":
            line += 1
        elif c == "{":
            head = stripped[last_stmt_end:i]
            in_fn = "fn" in stack
            kind = "other"
            if not in_fn and SIGNATURE_END.search(head) and not CONTROL.search(head):
                if not re.search(r"=\s*[^=]*$", head.split("(")[0]) or "operator" in head:
                    kind = "fn"
            stack.append(kind)
            if kind == "fn":
                start_line[len(stack)] = line
            last_stmt_end = i + 1
        elif c == "}":
            if stack:
                if stack[-1] == "fn":
                    result.append((start_line[len(stack)], line))
                stack.pop()
            last_stmt_end = i + 1
        elif c == ";":
            last_stmt_end = i + 1
    return result


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    list_all = "--list" in sys.argv
    problems, longest = [], []
    for base, dirs, files in os.walk(os.path.join(root, "sim")):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith((".cpp", ".h")):
                continue
            path = os.path.join(base, name)
            rel = os.path.relpath(path, root)
            text = open(path, encoding="utf-8").read()
            lines = text.split("\n")
            head = "\n".join(lines[:15])
            if len(lines) > MAX_FILE_LINES and EXCEPTION not in head:
                problems.append(f"{rel}: {len(lines)} lines (limit {MAX_FILE_LINES})")
            for first, last in functions(strip(text)):
                length = last - first + 1
                if length <= MAX_FUNCTION_LINES:
                    continue
                # the signature may span lines above the body's first line
                sig = first
                while sig > 1 and not lines[sig - 2].strip() == "" and \
                        not lines[sig - 2].lstrip().startswith(("//", "}")) and first - sig < 6:
                    sig -= 1
                above = "\n".join(lines[max(0, sig - 4):first])
                excepted = EXCEPTION in above
                longest.append((length, f"{rel}:{first}", excepted))
                if not excepted:
                    problems.append(f"{rel}:{first}: function body of {length} lines "
                                    f"(limit {MAX_FUNCTION_LINES})")
    if list_all:
        for length, where, excepted in sorted(longest, reverse=True):
            print(f"{length:5d}  {where}{'  (size-exception)' if excepted else ''}")
    for p in problems:
        print(p)
    if problems:
        print(f"check_sizes: {len(problems)} over the limits (STYLE.md 'Size'); put a "
              f"'// {EXCEPTION} <reason>' comment above to keep one on purpose")
        return 1
    print("check_sizes: every file and function within the limits")
    return 0


if __name__ == "__main__":
    sys.exit(main())
