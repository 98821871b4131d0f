//! Writers of small IDX and CIFAR-10 files.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use flate2::write::GzEncoder;
use flate2::Compression;
use saturate_data::Split;

/// Held by every test that reads or writes environment variables (tests run in threads).
pub fn env_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The pixel a test image holds at `index` of image `image`: distinct across images.
pub fn pixel(image: usize, index: usize) -> u8 {
    (image * 31 + index * 7) as u8
}

/// An IDX images file of `count` `rows`x`cols` images filled by [`pixel`].
pub fn idx_images(count: usize, rows: usize, cols: usize) -> Vec<u8> {
    let mut bytes = Vec::new();
    for word in [0x0803, count, rows, cols] {
        bytes.extend_from_slice(&(word as u32).to_be_bytes());
    }
    for image in 0..count {
        bytes.extend((0..rows * cols).map(|index| pixel(image, index)));
    }
    bytes
}

/// An IDX labels file.
pub fn idx_labels(labels: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for word in [0x0801, labels.len()] {
        bytes.extend_from_slice(&(word as u32).to_be_bytes());
    }
    bytes.extend_from_slice(labels);
    bytes
}

/// `bytes` gzip-compressed.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// The MNIST-family file names of `split`.
pub fn idx_names(split: Split) -> [&'static str; 2] {
    match split {
        Split::Train => ["train-images-idx3-ubyte", "train-labels-idx1-ubyte"],
        Split::Test => ["t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"],
    }
}

/// Writes `split` as IDX files into `dir` (created), gzip-compressed (with `.gz`) when
/// `gz`; 2x3 images, one per label. Returns the images and labels paths.
pub fn write_idx_split(dir: &Path, split: Split, labels: &[u8], gz: bool) -> [PathBuf; 2] {
    std::fs::create_dir_all(dir).unwrap();
    let [images_name, labels_name] = idx_names(split);
    let contents = [idx_images(labels.len(), 2, 3), idx_labels(labels)];
    let mut paths = [images_name, labels_name].map(|name| dir.join(name));
    for (path, content) in paths.iter_mut().zip(contents) {
        if gz {
            path.set_extension("gz");
            // The names have no dot: this appends `.gz`.
            std::fs::write(&path, gzip(&content)).unwrap();
        } else {
            std::fs::write(&path, content).unwrap();
        }
    }
    paths
}

/// One CIFAR-10 record: the label then 3,072 bytes by [`pixel`] with image `seed`.
pub fn cifar_record(label: u8, seed: usize) -> Vec<u8> {
    std::iter::once(label)
        .chain((0..3072).map(|index| pixel(seed, index)))
        .collect()
}
