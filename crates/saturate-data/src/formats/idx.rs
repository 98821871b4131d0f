//! The IDX format of MNIST, Fashion-MNIST and KMNIST
//! (<http://yann.lecun.com/exdb/mnist/>): a big-endian header (magic number, then one
//! `u32` per dimension), then unsigned bytes.

use std::path::Path;

use crate::formats::file;
use crate::{DataError, ImageDataset, ImageShape};

/// Unsigned bytes (0x08), three dimensions: `[count, rows, columns]`.
pub(crate) const IMAGES_MAGIC: u32 = 0x0000_0803;
/// Unsigned bytes (0x08), one dimension: `[count]`.
pub(crate) const LABELS_MAGIC: u32 = 0x0000_0801;

/// Reads an images file and a labels file. `classes`: the dataset's class count, or
/// `None` to take one more than the largest label.
pub(crate) fn read_pair(
    images_path: &Path,
    labels_path: &Path,
    classes: Option<usize>,
) -> Result<ImageDataset, DataError> {
    let images = file::read_raw(images_path)?;
    let labels = file::read_raw(labels_path)?;
    parse_pair(images_path, images, labels_path, labels, classes)
}

/// [`read_pair`] on bytes already in memory (raw or gzip); the paths name them in errors.
pub(crate) fn parse_pair(
    images_path: &Path,
    images: Vec<u8>,
    labels_path: &Path,
    labels: Vec<u8>,
    classes: Option<usize>,
) -> Result<ImageDataset, DataError> {
    let images = file::decode(images_path, images)?;
    let labels = file::decode(labels_path, labels)?;
    let (dims, pixels) = parse(images_path, images, IMAGES_MAGIC, "images")?;
    let (label_dims, labels) = parse(labels_path, labels, LABELS_MAGIC, "labels")?;
    if dims[0] != label_dims[0] {
        return Err(DataError::CountMismatch {
            images_path: images_path.to_path_buf(),
            images: dims[0],
            labels_path: labels_path.to_path_buf(),
            labels: label_dims[0],
        });
    }
    let shape = ImageShape {
        channels: 1,
        height: dims[1],
        width: dims[2],
    };
    let classes = classes.unwrap_or_else(|| {
        labels
            .iter()
            .max()
            .map_or(0, |&label| usize::from(label) + 1)
    });
    ImageDataset::new(shape, classes, pixels, labels, labels_path)
}

/// Checks the header against `magic` and the length against the header; returns the
/// dimensions and the data after the header.
fn parse(
    path: &Path,
    mut bytes: Vec<u8>,
    magic: u32,
    kind: &'static str,
) -> Result<(Vec<usize>, Vec<u8>), DataError> {
    let rank = (magic & 0xff) as usize;
    let header_len = 4 * (1 + rank);
    let word = |index: usize| {
        let start = 4 * index;
        u32::from_be_bytes([
            bytes[start],
            bytes[start + 1],
            bytes[start + 2],
            bytes[start + 3],
        ])
    };
    if bytes.len() < 4 {
        return Err(DataError::SizeMismatch {
            path: path.to_path_buf(),
            expected: header_len,
            found: bytes.len(),
        });
    }
    if word(0) != magic {
        return Err(DataError::BadMagic {
            path: path.to_path_buf(),
            found: word(0),
            expected: magic,
            kind,
        });
    }
    if bytes.len() < header_len {
        return Err(DataError::SizeMismatch {
            path: path.to_path_buf(),
            expected: header_len,
            found: bytes.len(),
        });
    }
    let dims: Vec<usize> = (1..=rank).map(|index| word(index) as usize).collect();
    let expected = header_len + dims.iter().product::<usize>();
    if bytes.len() != expected {
        return Err(DataError::SizeMismatch {
            path: path.to_path_buf(),
            expected,
            found: bytes.len(),
        });
    }
    bytes.drain(..header_len);
    Ok((dims, bytes))
}
