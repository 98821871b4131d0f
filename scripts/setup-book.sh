#!/usr/bin/env bash
# Installs the pinned mdBook used to build the book (`mdbook build book`).
# Does nothing when `mdbook` on PATH already has the pinned version.
# Debian has no mdbook package, so it comes from crates.io via cargo.
set -euo pipefail
MDBOOK_VERSION="0.5.4"
if command -v mdbook >/dev/null 2>&1 \
  && [ "$(mdbook --version)" = "mdbook v${MDBOOK_VERSION}" ]; then
  exit 0
fi
cargo install --locked mdbook --version "${MDBOOK_VERSION}"
