use std::path::PathBuf;

use crate::datasets::idx_family::IdxDataset;
use crate::{DataError, DataSearch, ImageDataset, Split};

const KMNIST: IdxDataset = IdxDataset {
    name: "KMNIST",
    folder: "kmnist",
    system_dir: None,
    hint:
        "KMNIST: download the four MNIST-format .gz files from https://github.com/rois-codh/kmnist \
           into $SATURATE_DATA/kmnist or ./data/kmnist",
};

/// Kuzushiji-MNIST (Clanuwat et al. 2018, "Deep Learning for Classical Japanese
/// Literature"): 60,000 training and 10,000 test 28x28 images of ten cursive Japanese
/// characters, in MNIST's IDX format and file names. Not shipped.
#[derive(Clone, Copy, Debug)]
pub struct Kmnist;

impl Kmnist {
    /// Reads `split` from the IDX files (raw or `.gz`) in `dir`.
    pub fn from_dir(dir: impl Into<PathBuf>, split: Split) -> Result<ImageDataset, DataError> {
        Self::find(&DataSearch::in_dir(dir), split)
    }

    /// Reads `split` from the first directory of `search` holding its files
    /// (`kmnist/` under each root).
    pub fn find(search: &DataSearch, split: Split) -> Result<ImageDataset, DataError> {
        KMNIST.find(search, split)
    }
}
