#!/usr/bin/env bash
# Installs the full Fashion-MNIST (Debian's dataset-fashion-mnist, into
# /usr/share/datasets/fashion-mnist) when it is missing: saturate-data's tests check the
# shipped subset against it, and FashionMnist::full() reads it. Needs apt-get and root;
# elsewhere it says what to do and succeeds (the tests then skip that check, except
# when CI is set).
set -euo pipefail
DIR=/usr/share/datasets/fashion-mnist
FILES=(train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz)

missing=0
for file in "${FILES[@]}"; do
  [ -f "$DIR/$file" ] || missing=1
done
[ "$missing" = 0 ] && exit 0

if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  apt-get update
  apt-get install -y dataset-fashion-mnist
else
  echo "setup-data: $DIR is missing; install it with: sudo apt-get install dataset-fashion-mnist" >&2
fi
