use std::path::PathBuf;

use crate::datasets::idx_family::{self, IdxDataset};
use crate::{DataError, DataSearch, ImageDataset, Split};

/// The environment variable that makes [`FashionMnist::load`] read the full dataset:
/// `SATURATE_FULL=1`.
pub const FULL_VAR: &str = "SATURATE_FULL";

const FASHION_MNIST: IdxDataset = IdxDataset {
    name: "Fashion-MNIST",
    folder: "fashion-mnist",
    system_dir: Some("/usr/share/datasets/fashion-mnist"),
    hint:
        "Fashion-MNIST: `apt-get install dataset-fashion-mnist` (Debian, Ubuntu), or download the \
           four .gz files from https://github.com/zalandoresearch/fashion-mnist into \
           $SATURATE_DATA/fashion-mnist or ./data/fashion-mnist. \
           FashionMnist::subset_train() and subset_test() need no files.",
};

// The shipped subset: see fashion-mnist-subset/LICENSE and scripts/make-fmnist-subset.py.
const SUBSET_TRAIN_IMAGES: &[u8] =
    include_bytes!("../../fashion-mnist-subset/train-images-idx3-ubyte.gz");
const SUBSET_TRAIN_LABELS: &[u8] =
    include_bytes!("../../fashion-mnist-subset/train-labels-idx1-ubyte.gz");
const SUBSET_TEST_IMAGES: &[u8] =
    include_bytes!("../../fashion-mnist-subset/t10k-images-idx3-ubyte.gz");
const SUBSET_TEST_LABELS: &[u8] =
    include_bytes!("../../fashion-mnist-subset/t10k-labels-idx1-ubyte.gz");

/// Fashion-MNIST (Xiao, Rasul and Vollgraf 2017, "Fashion-MNIST: a Novel Image Dataset
/// for Benchmarking Machine Learning Algorithms", arXiv:1708.07747): 60,000 training and
/// 10,000 test grey-scale 28x28 images of ten kinds of clothing, Zalando SE, MIT licence.
///
/// A subset ships inside this crate, so that examples and tests need no download: the
/// first 8,192 training and the first 2,048 test images ([`FashionMnist::subset_train`],
/// [`FashionMnist::subset_test`]). The full set is read from files
/// ([`FashionMnist::full`]).
///
/// ```
/// use burn::data::dataset::Dataset;
/// use saturate_data::FashionMnist;
///
/// let train = FashionMnist::subset_train();
/// assert_eq!(train.len(), 8192);
/// let first = train.get(0).unwrap();
/// assert_eq!((first.shape.height, first.shape.width, first.label), (28, 28, 9)); // an ankle boot
/// ```
#[derive(Clone, Copy, Debug)]
pub struct FashionMnist;

impl FashionMnist {
    /// The first 8,192 training images, embedded in the crate.
    pub fn subset_train() -> ImageDataset {
        Self::subset(Split::Train)
    }

    /// The first 2,048 test images, embedded in the crate.
    pub fn subset_test() -> ImageDataset {
        Self::subset(Split::Test)
    }

    /// The embedded subset of `split`.
    pub fn subset(split: Split) -> ImageDataset {
        let (images, labels) = match split {
            Split::Train => (SUBSET_TRAIN_IMAGES, SUBSET_TRAIN_LABELS),
            Split::Test => (SUBSET_TEST_IMAGES, SUBSET_TEST_LABELS),
        };
        idx_family::parse_embedded(FASHION_MNIST.folder, split, images, labels)
            .expect("the embedded Fashion-MNIST subset is valid (checked by the crate's tests)")
    }

    /// The full `split` (60,000 or 10,000 images) from the first directory of
    /// [`DataSearch::from_env`] holding it: `$SATURATE_DATA/fashion-mnist`,
    /// `./data/fashion-mnist`, then Debian's `/usr/share/datasets/fashion-mnist`.
    pub fn full(split: Split) -> Result<ImageDataset, DataError> {
        Self::find(&DataSearch::from_env(), split)
    }

    /// The full `split` when `SATURATE_FULL=1` ([`FULL_VAR`]), else the embedded subset:
    /// what examples call, so that they run with no setup and at full size on request.
    pub fn load(split: Split) -> Result<ImageDataset, DataError> {
        if std::env::var_os(FULL_VAR).is_some_and(|value| value == "1") {
            Self::full(split)
        } else {
            Ok(Self::subset(split))
        }
    }

    /// Reads `split` from the IDX files (raw or `.gz`) in `dir`.
    pub fn from_dir(dir: impl Into<PathBuf>, split: Split) -> Result<ImageDataset, DataError> {
        Self::find(&DataSearch::in_dir(dir), split)
    }

    /// Reads `split` from the first directory of `search` holding its files
    /// (`fashion-mnist/` under each root, then Debian's directory if `search` allows it).
    pub fn find(search: &DataSearch, split: Split) -> Result<ImageDataset, DataError> {
        FASHION_MNIST.find(search, split)
    }
}
