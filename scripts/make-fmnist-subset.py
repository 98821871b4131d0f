#!/usr/bin/env python3
"""Writes the Fashion-MNIST subset that saturate-data ships (crates/saturate-data/fashion-mnist-subset/).

The subset is the first 8,192 training and the first 2,048 test images of Fashion-MNIST
(Xiao, Rasul and Vollgraf 2017, MIT licence, Zalando SE), in the original IDX format,
gzip level 9 with no name or timestamp in the header so that reruns give identical files.

Source: Debian's `dataset-fashion-mnist` package (apt-get install dataset-fashion-mnist),
or any directory holding the four original .gz files:

    scripts/make-fmnist-subset.py [SOURCE_DIR]    # default /usr/share/datasets/fashion-mnist
"""
import gzip
import pathlib
import struct
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "crates" / "saturate-data" / "fashion-mnist-subset"
SPLITS = {"train": 8192, "t10k": 2048}
IMAGE_MAGIC, LABEL_MAGIC = 0x00000803, 0x00000801


def write_gz(path, data):
    # mtime=0 and no file name: the bytes depend on the content only.
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as gz:
        gz.write(data)


def main():
    source = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "/usr/share/datasets/fashion-mnist")
    OUT.mkdir(parents=True, exist_ok=True)
    for prefix, count in SPLITS.items():
        images = gzip.decompress((source / f"{prefix}-images-idx3-ubyte.gz").read_bytes())
        labels = gzip.decompress((source / f"{prefix}-labels-idx1-ubyte.gz").read_bytes())
        magic, total, rows, cols = struct.unpack(">IIII", images[:16])
        assert magic == IMAGE_MAGIC and total >= count, (magic, total)
        magic, total_labels = struct.unpack(">II", labels[:8])
        assert magic == LABEL_MAGIC and total_labels == total, (magic, total_labels)
        size = rows * cols
        write_gz(
            OUT / f"{prefix}-images-idx3-ubyte.gz",
            struct.pack(">IIII", IMAGE_MAGIC, count, rows, cols) + images[16 : 16 + count * size],
        )
        write_gz(
            OUT / f"{prefix}-labels-idx1-ubyte.gz",
            struct.pack(">II", LABEL_MAGIC, count) + labels[8 : 8 + count],
        )
        print(f"{prefix}: {count} of {total} images -> {OUT}")


if __name__ == "__main__":
    main()
