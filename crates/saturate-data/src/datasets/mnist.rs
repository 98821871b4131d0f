use std::path::PathBuf;

use crate::datasets::idx_family::IdxDataset;
use crate::{DataError, DataSearch, ImageDataset, Split};

const MNIST: IdxDataset = IdxDataset {
    name: "MNIST",
    folder: "mnist",
    system_dir: None,
    hint: "MNIST: download train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, \
           t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz (http://yann.lecun.com/exdb/mnist/ \
           or a mirror) into $SATURATE_DATA/mnist or ./data/mnist",
};

/// MNIST handwritten digits (LeCun, Bottou, Bengio and Haffner 1998): 60,000 training
/// and 10,000 test grey-scale 28x28 images of ten classes, in IDX files. Not shipped.
#[derive(Clone, Copy, Debug)]
pub struct Mnist;

impl Mnist {
    /// Reads `split` from the IDX files (raw or `.gz`) in `dir`.
    pub fn from_dir(dir: impl Into<PathBuf>, split: Split) -> Result<ImageDataset, DataError> {
        Self::find(&DataSearch::in_dir(dir), split)
    }

    /// Reads `split` from the first directory of `search` holding its files
    /// (`mnist/` under each root).
    pub fn find(search: &DataSearch, split: Split) -> Result<ImageDataset, DataError> {
        MNIST.find(search, split)
    }
}
