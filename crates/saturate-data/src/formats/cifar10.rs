//! The CIFAR-10 binary format (<https://www.cs.toronto.edu/~kriz/cifar.html>): records of
//! one label byte then 3,072 pixel bytes (the red, green and blue 32x32 planes, row-major).

use std::path::Path;

use crate::formats::file;
use crate::{DataError, ImageDataset, ImageShape};

/// Three 32x32 colour planes.
pub(crate) const SHAPE: ImageShape = ImageShape {
    channels: 3,
    height: 32,
    width: 32,
};
/// The ten classes: airplane, automobile, bird, cat, deer, dog, frog, horse, ship, truck.
pub(crate) const CLASSES: usize = 10;
const RECORD_LEN: usize = 1 + 3 * 32 * 32;

/// Reads and concatenates CIFAR-10 binary files, in order.
pub(crate) fn read_files(files: &[&Path]) -> Result<ImageDataset, DataError> {
    let mut pixels = Vec::new();
    let mut labels = Vec::new();
    for &path in files {
        let bytes = file::read(path)?;
        if bytes.len() % RECORD_LEN != 0 {
            return Err(DataError::PartialRecord {
                path: path.to_path_buf(),
                found: bytes.len(),
                record_len: RECORD_LEN,
            });
        }
        pixels.reserve(bytes.len() / RECORD_LEN * (RECORD_LEN - 1));
        for (index, record) in bytes.chunks_exact(RECORD_LEN).enumerate() {
            if usize::from(record[0]) >= CLASSES {
                return Err(DataError::LabelOutOfRange {
                    path: path.to_path_buf(),
                    index,
                    label: record[0],
                    classes: CLASSES,
                });
            }
            labels.push(record[0]);
            pixels.extend_from_slice(&record[1..]);
        }
    }
    let source = files
        .first()
        .copied()
        .unwrap_or(Path::new("<no CIFAR-10 files>"));
    ImageDataset::new(SHAPE, CLASSES, pixels, labels, source)
}
