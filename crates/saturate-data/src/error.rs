use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::Split;

/// Everything that can go wrong reading a dataset: the one error type of this crate.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// No place searched holds the split's files.
    #[error("{dataset} ({split}): {} not found; looked in:{}\n{hint}", .files.join(", "), bullet_list(.searched))]
    NotFound {
        /// The dataset's name, such as `Fashion-MNIST`.
        dataset: &'static str,
        /// The split asked for.
        split: Split,
        /// The file names looked for in each directory.
        files: Vec<String>,
        /// Every directory looked in, in search order.
        searched: Vec<PathBuf>,
        /// How to get the data.
        hint: &'static str,
    },
    /// A file exists but could not be read.
    #[error("{}: cannot read: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A gzip-compressed file (by name or by its first bytes) does not decompress.
    #[error("{}: not a valid gzip stream: {source}", .path.display())]
    BadGzip {
        /// The file.
        path: PathBuf,
        /// The decompressor's error.
        #[source]
        source: std::io::Error,
    },
    /// An IDX file starts with the wrong magic number: not IDX, or images and labels swapped.
    #[error("{}: magic number {found:#010x}, expected {expected:#010x} (an IDX {kind} file)", .path.display())]
    BadMagic {
        /// The file (decompressed content).
        path: PathBuf,
        /// What the file starts with.
        found: u32,
        /// What an IDX file of this kind starts with.
        expected: u32,
        /// `images` or `labels`.
        kind: &'static str,
    },
    /// An IDX file's length differs from what its header says (truncated, or trailing bytes).
    #[error("{}: {found} bytes, but its header implies {expected}: truncated or corrupt", .path.display())]
    SizeMismatch {
        /// The file (decompressed content).
        path: PathBuf,
        /// The length the header implies.
        expected: usize,
        /// The actual length.
        found: usize,
    },
    /// A CIFAR-10 binary file is not a whole number of records.
    #[error("{}: {found} bytes is not a whole number of {record_len}-byte records: truncated or corrupt", .path.display())]
    PartialRecord {
        /// The file.
        path: PathBuf,
        /// The file's length.
        found: usize,
        /// One record: a label byte and the pixels.
        record_len: usize,
    },
    /// The images file and the labels file disagree on the number of items.
    #[error("{} holds {images} images but {} holds {labels} labels", .images_path.display(), .labels_path.display())]
    CountMismatch {
        /// The images file.
        images_path: PathBuf,
        /// Its item count.
        images: usize,
        /// The labels file.
        labels_path: PathBuf,
        /// Its item count.
        labels: usize,
    },
    /// A label is not a class of the dataset.
    #[error("{}: label {label} of item {index} is not below the class count {classes}", .path.display())]
    LabelOutOfRange {
        /// The file.
        path: PathBuf,
        /// The item's position in the file.
        index: usize,
        /// The label found.
        label: u8,
        /// The dataset's class count.
        classes: usize,
    },
}

fn bullet_list(paths: &[PathBuf]) -> String {
    paths.iter().fold(String::new(), |mut out, path| {
        let _ = write!(out, "\n  - {}", path.display());
        out
    })
}

impl DataError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
