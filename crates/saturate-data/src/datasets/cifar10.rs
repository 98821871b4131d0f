use std::path::{Path, PathBuf};

use crate::formats::cifar10;
use crate::{DataError, DataSearch, ImageDataset, Split};

const FOLDER: &str = "cifar-10-batches-bin";
const HINT: &str =
    "CIFAR-10: download cifar-10-binary.tar.gz from https://www.cs.toronto.edu/~kriz/cifar.html \
                    and unpack it in $SATURATE_DATA or ./data (it makes cifar-10-batches-bin/)";

/// CIFAR-10 (Krizhevsky 2009, "Learning Multiple Layers of Features from Tiny Images"):
/// 50,000 training and 10,000 test 32x32 RGB images of ten classes, in the binary
/// version's files (`data_batch_1.bin` to `data_batch_5.bin`, `test_batch.bin`). Not shipped.
#[derive(Clone, Copy, Debug)]
pub struct Cifar10;

impl Cifar10 {
    /// The file names of `split`, in reading order.
    pub fn file_names(split: Split) -> &'static [&'static str] {
        match split {
            Split::Train => &[
                "data_batch_1.bin",
                "data_batch_2.bin",
                "data_batch_3.bin",
                "data_batch_4.bin",
                "data_batch_5.bin",
            ],
            Split::Test => &["test_batch.bin"],
        }
    }

    /// Reads `split` from the binary files in `dir` (the unpacked `cifar-10-batches-bin/`).
    pub fn from_dir(dir: impl Into<PathBuf>, split: Split) -> Result<ImageDataset, DataError> {
        Self::find(&DataSearch::in_dir(dir), split)
    }

    /// Reads `split` from the first directory of `search` holding all its files
    /// (`cifar-10-batches-bin/` under each root).
    pub fn find(search: &DataSearch, split: Split) -> Result<ImageDataset, DataError> {
        let names = Self::file_names(split);
        let searched = search.candidates(FOLDER, None);
        for dir in &searched {
            let files: Vec<PathBuf> = names.iter().map(|name| dir.join(name)).collect();
            if files.iter().all(|file| file.is_file()) {
                return cifar10::read_files(
                    &files.iter().map(PathBuf::as_path).collect::<Vec<&Path>>(),
                );
            }
        }
        Err(DataError::NotFound {
            dataset: "CIFAR-10",
            split,
            files: names.iter().map(|name| name.to_string()).collect(),
            searched,
            hint: HINT,
        })
    }
}
