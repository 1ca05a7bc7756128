#!/usr/bin/python3
"""Every relative link of the documentation resolves.

Checks README.md, docs/*.md, sim/README.md and sim/*/README.md (or the files given after the
repository root),
and that README.md stays within README_MAX_BYTES when run on the whole tree:
each Markdown link or image `[text](target)` and reference definition `[id]: target` whose target
is not a URL (http:, https:, mailto:) must name an existing file or folder, relative to the page,
and a `#anchor` (on its own or after a .md file) must be the GitHub-style slug of a heading of
that page: lower case, punctuation other than `-` and `_` removed, spaces turned into `-`, and
`-1`, `-2` ... appended to repeated headings. Links inside code spans and fenced code blocks are
not links and are skipped.

Usage: check_links.py REPO_ROOT [FILE.md ...]; exit 0 when every link resolves, 1 with one line
per broken link (`FILE:LINE: link 'TARGET': what is wrong`), 2 on bad usage.
"""
import pathlib
import re
import sys
import unicodedata

INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^()\s>]*(?:\([^()\s]*\)[^()\s>]*)*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^ {0,3}(```+|~~~+)")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def strip_code_spans(line):
    """The line with every `code span` blanked (same length, so columns stay)."""
    out, i = [], 0
    while i < len(line):
        if line[i] == "`":
            n = len(line[i:]) - len(line[i:].lstrip("`"))
            end = line.find(line[i:i + n], i + n)
            if end >= 0:
                out.append(" " * (end + n - i))
                i = end + n
                continue
            out.append(line[i:i + n])
            i += n
            continue
        out.append(line[i])
        i += 1
    return "".join(out)


def slug(text):
    """GitHub's anchor for a heading: markup removed, lower case, punctuation dropped."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links keep their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "").replace("*", "")
    text = re.sub(r"(?<!\w)_+|_+(?!\w)", "", text)  # _emphasis_, not snake_case
    text = text.strip().lower()
    kept = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch in "- " or cat[0] in "LMN" or cat == "Pc":
            kept.append(ch)
    return "".join(kept).replace(" ", "-")


def lines_outside_fences(path):
    """(line number, text) of the lines that are not inside a fenced code block."""
    fence = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)[0] * 3
            continue
        if fence is not None:
            if line.lstrip().startswith(fence):
                fence = None
            continue
        yield number, line


def anchors(path, cache={}):
    if path not in cache:
        seen, found = {}, set()
        for _, line in lines_outside_fences(path):
            m = HEADING.match(line)
            if m:
                base = slug(m.group(2))
                n = seen.get(base, 0)
                seen[base] = n + 1
                found.add(base if n == 0 else f"{base}-{n}")
            found.update(HTML_ANCHOR.findall(line))
        cache[path] = found
    return cache[path]


def targets(path):
    for number, line in lines_outside_fences(path):
        text = strip_code_spans(line)
        m = REFERENCE_DEF.match(text)
        if m:
            yield number, m.group(1)
            continue
        for m in INLINE_LINK.finditer(text):
            yield number, m.group(1)


def check(root, page):
    problems = []
    for number, target in targets(page):
        if not target or EXTERNAL.match(target):
            continue
        where = f"{page.relative_to(root)}:{number}: link '{target}'"
        file_part, _, anchor = target.partition("#")
        dest = page if not file_part else (page.parent / file_part).resolve()
        if file_part:
            if not dest.exists():
                problems.append(f"{where}: no file or folder {dest.relative_to(root) if dest.is_relative_to(root) else dest}")
                continue
            if not dest.is_relative_to(root):
                problems.append(f"{where}: points outside the repository")
                continue
        if anchor:
            if dest.is_dir() or dest.suffix.lower() != ".md":
                problems.append(f"{where}: an anchor on a file that is not Markdown")
            elif anchor not in anchors(dest):
                problems.append(f"{where}: no heading with anchor #{anchor} in {dest.relative_to(root)}")
    return problems


# README.md is the front door (issue 15): what fleetsim answers, the commands, a worked example per
# subcommand and links; the references live in docs/.
README_MAX_BYTES = 15000


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    root = pathlib.Path(argv[1]).resolve()
    if not root.is_dir():
        print(f"check_links.py: {argv[1]}: not a directory", file=sys.stderr)
        return 2
    if len(argv) > 2:
        pages = [pathlib.Path(a).resolve() for a in argv[2:]]
    else:
        pages = (
            [root / "README.md"]
            + sorted((root / "docs").glob("*.md"))
            + sorted(root.glob("sim/README.md"))
            + sorted(root.glob("sim/*/README.md"))
        )
    problems, links = [], 0
    for page in pages:
        if not page.is_file():
            problems.append(f"{page}: no such file")
            continue
        links += sum(1 for _ in targets(page))
        problems += check(root, page)
    readme = root / "README.md"
    if len(argv) == 2 and readme.is_file() and readme.stat().st_size > README_MAX_BYTES:
        problems.append(f"{readme}: {readme.stat().st_size} bytes; the front door stays within "
                        f"{README_MAX_BYTES} (references belong in docs/)")
    for p in problems:
        print(p)
    if problems:
        print(f"check_links.py: {len(problems)} problem(s) in {len(pages)} page(s)", file=sys.stderr)
        return 1
    print(f"check_links.py: {links} links in {len(pages)} pages, all resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
