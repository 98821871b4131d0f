#!/usr/bin/env python3
"""Checks the relative links of README.md and book/src/**/*.md.

    python3 scripts/check-links.py

Every relative link target (not http:, https:, mailto:) must exist, resolved against the file
that holds the link, and every `#anchor` into a Markdown file (the same file or the target)
must name one of its headings, by mdBook's slug rules (lowercase; spaces become `-`;
punctuation other than `-` and `_` is dropped; repeated headings get `-1`, `-2`, ...).
Links inside code blocks and inline code are not links. Exit status 1 lists the broken ones.
"""

import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from book_pages import ROOT, markdown_files  # noqa: E402

FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
# [text](target) and ![alt](target); the target ends at whitespace or the closing parenthesis.
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
# [label]: target reference definitions.
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose_lines(path, keep_code=False):
    """(line number, text) of the lines outside fenced code blocks; inline code removed unless
    `keep_code` (a heading's slug includes the text of its inline code)."""
    fence = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
            continue
        if fence is not None:
            if line.strip().startswith(fence) and line.strip().strip(fence[0]) == "":
                fence = None
            continue
        yield number, line if keep_code else INLINE_CODE.sub("", line)


def slug(text):
    # mdBook's normalize_id: drop markup, lowercase, keep alphanumerics, `-` and `_`,
    # whitespace becomes `-`.
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.replace("`", "").replace("*", "")
    out = []
    for ch in text.strip().lower():
        if ch.isalnum() or ch in "-_":
            out.append(ch)
        elif ch.isspace():
            out.append("-")
    return "".join(out)


_anchor_cache = {}


def anchors(path):
    if path not in _anchor_cache:
        seen = {}
        found = set()
        for _, line in prose_lines(path, keep_code=True):
            m = HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            n = seen.get(base, 0)
            found.add(base if n == 0 else f"{base}-{n}")
            seen[base] = n + 1
        # Explicit ids: <a name="x"></a>, <span id="x">, {#x} heading attributes.
        text = path.read_text(encoding="utf-8")
        found.update(re.findall(r"""(?:name|id)\s*=\s*["']([^"']+)["']""", text))
        found.update(re.findall(r"\{#([A-Za-z0-9_-]+)\}", text))
        _anchor_cache[path] = found
    return _anchor_cache[path]


def check(path):
    broken = []
    for number, line in prose_lines(path):
        targets = [m.group(1) for m in LINK.finditer(line)]
        m = REFDEF.match(line)
        if m:
            targets.append(m.group(1))
        for target in targets:
            if EXTERNAL.match(target) or target.startswith("//"):
                continue
            file_part, _, anchor = target.partition("#")
            dest = path if not file_part else (path.parent / file_part).resolve()
            where = f"{path.relative_to(ROOT)}:{number}: {target}"
            if not dest.exists():
                broken.append(f"{where}: no such file")
                continue
            if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                broken.append(f"{where}: no heading `#{anchor}` in {dest.relative_to(ROOT)}")
    return broken


def main():
    broken = []
    for path in markdown_files():
        broken += check(path)
    for line in broken:
        print(line, file=sys.stderr)
    if broken:
        print(f"{len(broken)} broken link(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
