"""The Markdown pages a reader sees (README.md and book/src/**/*.md), shared by
scripts/book-snippets.py and scripts/check-links.py."""

import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent


def markdown_files():
    """README.md, then every book page in path order."""
    files = [ROOT / "README.md"]
    files += sorted((ROOT / "book" / "src").rglob("*.md"))
    return [f for f in files if f.is_file()]
