#!/usr/bin/env python3
"""Collects every ```rust block of README.md and book/src/**/*.md into tests/book_snippets.rs,
so that compiling the tests compiles every code sample a reader sees.

    python3 scripts/book-snippets.py           # (re)writes tests/book_snippets.rs
    python3 scripts/book-snippets.py --check   # exit 1 if tests/book_snippets.rs is out of date

Rules:
- a block whose info string starts with `rust` is compiled unless it also says `ignore` or
  `compile_fail` (```rust,ignore); every other language (text, toml, sh, console, ...) is
  skipped;
- mdBook's hidden lines (`# code` or a lone `#`) are kept, without the `# `;
- `{{#include path}}`, `{{#include path:ANCHOR}}` and `{{#include path:START:END}}` lines are
  expanded (path relative to the Markdown file; ANCHOR between `ANCHOR: name` and
  `ANCHOR_END: name` comments; START and END are 1-based and inclusive, either may be empty);
- a block containing `fn main` goes at module level as it is; any other block becomes the body
  of `pub fn snippet() -> Result<(), Box<dyn std::error::Error>>`.

One `mod` per Markdown file, one `mod snippet_N` per block (N counts from 1 in file order).
Nothing calls the functions: compiling them is the test.
"""

import argparse
import keyword
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from book_pages import ROOT, markdown_files  # noqa: E402

OUTPUT = ROOT / "tests" / "book_snippets.rs"
RUST_KEYWORDS = {
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn",
    "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref",
    "return", "self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use",
    "where", "while", "async", "await", "dyn", "abstract", "become", "box", "do", "final",
    "macro", "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
}
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
INCLUDE = re.compile(r"^(?P<indent>\s*)\{\{#include\s+(?P<arg>[^}]+?)\s*\}\}\s*$")
ANCHOR = re.compile(r"ANCHOR(_END)?:\s*(\S+)")


def module_name(path):
    rel = path.relative_to(ROOT).as_posix()
    if rel.startswith("book/src/"):
        rel = rel[len("book/src/"):]
    rel = rel[: -len(".md")] if rel.endswith(".md") else rel
    name = re.sub(r"[^0-9a-zA-Z]+", "_", rel).strip("_").lower() or "page"
    if name[0].isdigit():
        name = "page_" + name
    if name in RUST_KEYWORDS or keyword.iskeyword(name):
        name += "_md"
    return name


def expand_include(arg, md_path):
    """The lines a `{{#include arg}}` stands for."""
    parts = arg.split(":")
    target = (md_path.parent / parts[0]).resolve()
    try:
        lines = target.read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise SystemExit(f"{md_path.relative_to(ROOT)}: {{{{#include {arg}}}}}: {err}")
    rest = parts[1:]
    if not rest:
        return [l for l in lines if not ANCHOR.search(l)]
    if len(rest) == 1 and rest[0] and not rest[0].isdigit():
        name = rest[0]
        out, inside, found = [], False, False
        for line in lines:
            m = ANCHOR.search(line)
            if m and m.group(2) == name:
                if m.group(1):
                    inside = False
                else:
                    inside, found = True, True
                continue
            if m:
                continue  # other anchors' markers are not part of the text
            if inside:
                out.append(line)
        if not found:
            raise SystemExit(
                f"{md_path.relative_to(ROOT)}: anchor `{name}` not found in {parts[0]}"
            )
        return out
    start = int(rest[0]) if rest[0] else 1
    end = int(rest[1]) if len(rest) > 1 and rest[1] else len(lines)
    return lines[start - 1:end]


def unhide(line):
    stripped = line.lstrip()
    indent = line[: len(line) - len(stripped)]
    if stripped == "#":
        return indent
    if stripped.startswith("# "):
        return indent + stripped[2:]
    return line


def blocks(md_path):
    """The compiled Rust blocks of one Markdown file, as lists of lines."""
    lines = md_path.read_text(encoding="utf-8").splitlines()
    out = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = m.group("indent"), m.group("fence"), m.group("info").strip()
        body = []
        i += 1
        while i < len(lines):
            line = lines[i]
            closing = line.strip()
            if closing.startswith(fence[0] * len(fence)) and closing.strip(fence[0]) == "":
                break
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            i += 1
        i += 1
        tokens = [t.strip() for t in re.split(r"[,\s]+", info) if t.strip()]
        if not tokens or tokens[0] != "rust":
            continue
        if "ignore" in tokens or "compile_fail" in tokens:
            continue
        code = []
        for line in body:
            inc = INCLUDE.match(line)
            if inc:
                code += [inc.group("indent") + l for l in expand_include(inc.group("arg"), md_path)]
            else:
                code.append(unhide(line))
        out.append(code)
    return out


def indent(lines, by):
    return [(by + l) if l.strip() else "" for l in lines]


def generate():
    out = [
        "// @generated by `python3 scripts/book-snippets.py` from README.md and book/src/**/*.md;",
        "// do not edit. Check that it is current: `python3 scripts/book-snippets.py --check`.",
        "//",
        "// Every ```rust block of the README and the book, compiled (nothing calls them).",
    ]
    for md in markdown_files():
        found = blocks(md)
        if not found:
            continue
        out.append("")
        out.append(f"/// {md.relative_to(ROOT).as_posix()}")
        out.append("#[rustfmt::skip]")
        out.append(f"mod {module_name(md)} {{")
        out.append("    #![allow(unused, dead_code, clippy::all)]")
        for n, code in enumerate(found, start=1):
            out.append("")
            out.append(f"    mod snippet_{n} {{")
            text = "\n".join(code)
            if re.search(r"\bfn\s+main\b", text):
                out += indent(code, "        ")
            else:
                out.append(
                    "        pub fn snippet() -> Result<(), Box<dyn std::error::Error>> {"
                )
                out += indent(code, "            ")
                out.append("            #[allow(unreachable_code)]")
                out.append("            Ok(())")
                out.append("        }")
            out.append("    }")
        out.append("}")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is out of date")
    args = parser.parse_args()
    text = generate()
    if args.check:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else None
        if current != text:
            print(
                f"{OUTPUT.relative_to(ROOT)} is out of date: run python3 scripts/book-snippets.py",
                file=sys.stderr,
            )
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
