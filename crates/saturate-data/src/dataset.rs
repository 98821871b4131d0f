use std::fmt;
use std::path::Path;

use burn::data::dataset::Dataset;

use crate::formats::{cifar10, idx};
use crate::{DataError, ImageItem, ImageShape};

/// Which part of a dataset: the training or the test images.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Split {
    /// The training images.
    Train,
    /// The held-out test images.
    Test,
}

impl fmt::Display for Split {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Split::Train => "train",
            Split::Test => "test",
        })
    }
}

/// Labelled images of one shape, held in memory: the [`Dataset`] every reader of this
/// crate returns.
///
/// All pixels live in one buffer; [`Dataset::get`] copies one image out of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageDataset {
    shape: ImageShape,
    classes: usize,
    pixels: Vec<u8>,
    labels: Vec<u8>,
}

impl ImageDataset {
    /// Builds a dataset from one buffer of `labels.len()` images of `shape`, in
    /// [`ImageItem::pixels`] order, after checking every label is below `classes`.
    /// `source` names the data in errors.
    pub(crate) fn new(
        shape: ImageShape,
        classes: usize,
        pixels: Vec<u8>,
        labels: Vec<u8>,
        source: &Path,
    ) -> Result<Self, DataError> {
        debug_assert_eq!(pixels.len(), labels.len() * shape.pixel_count());
        if let Some((index, &label)) = labels
            .iter()
            .enumerate()
            .find(|(_, &label)| usize::from(label) >= classes)
        {
            return Err(DataError::LabelOutOfRange {
                path: source.to_path_buf(),
                index,
                label,
                classes,
            });
        }
        Ok(Self {
            shape,
            classes,
            pixels,
            labels,
        })
    }

    /// Reads an IDX images file and its IDX labels file (raw, or gzip-compressed), such as
    /// `train-images-idx3-ubyte.gz` and `train-labels-idx1-ubyte.gz`. The class count is
    /// taken as one more than the largest label.
    pub fn from_idx_files(images: &Path, labels: &Path) -> Result<Self, DataError> {
        idx::read_pair(images, labels, None)
    }

    /// Reads CIFAR-10 binary files (`data_batch_1.bin`, ..., `test_batch.bin`), in order.
    pub fn from_cifar10_files(files: &[&Path]) -> Result<Self, DataError> {
        cifar10::read_files(files)
    }

    /// The shape of every image.
    pub fn shape(&self) -> ImageShape {
        self.shape
    }

    /// The number of classes: labels are `0..classes`.
    pub fn classes(&self) -> usize {
        self.classes
    }

    /// Every label, in item order.
    pub fn labels(&self) -> &[u8] {
        &self.labels
    }

    /// The pixels of image `index`, or `None` past the end.
    pub fn image(&self, index: usize) -> Option<&[u8]> {
        let size = self.shape.pixel_count();
        self.pixels.get(index * size..(index + 1) * size)
    }
}

impl Dataset<ImageItem> for ImageDataset {
    fn get(&self, index: usize) -> Option<ImageItem> {
        Some(ImageItem {
            pixels: self.image(index)?.to_vec(),
            label: *self.labels.get(index)?,
            shape: self.shape,
        })
    }

    fn len(&self) -> usize {
        self.labels.len()
    }
}
