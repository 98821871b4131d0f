//! What MNIST, Fashion-MNIST and KMNIST share: the IDX format, the file names, ten classes.

use std::path::{Path, PathBuf};

use crate::formats::idx;
use crate::{DataError, DataSearch, ImageDataset, Split};

/// One dataset distributed as the four MNIST-named IDX files.
pub(crate) struct IdxDataset {
    pub name: &'static str,
    /// The folder under a data root.
    pub folder: &'static str,
    /// Where a distribution package installs the files.
    pub system_dir: Option<&'static str>,
    pub hint: &'static str,
}

/// Every dataset of the family has ten classes.
const CLASSES: usize = 10;

/// The images and labels file names of a split, without the `.gz` a file may add.
pub(crate) fn file_stems(split: Split) -> [&'static str; 2] {
    match split {
        Split::Train => ["train-images-idx3-ubyte", "train-labels-idx1-ubyte"],
        Split::Test => ["t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"],
    }
}

impl IdxDataset {
    pub(crate) fn find(
        &self,
        search: &DataSearch,
        split: Split,
    ) -> Result<ImageDataset, DataError> {
        let searched = search.candidates(self.folder, self.system_dir.map(Path::new));
        let [images, labels] = file_stems(split);
        for dir in &searched {
            if let (Some(images), Some(labels)) = (existing(dir, images), existing(dir, labels)) {
                return idx::read_pair(&images, &labels, Some(CLASSES));
            }
        }
        Err(DataError::NotFound {
            dataset: self.name,
            split,
            files: vec![format!("{images}[.gz]"), format!("{labels}[.gz]")],
            searched,
            hint: self.hint,
        })
    }
}

/// `dir/stem`, else `dir/stem.gz`, if either exists.
fn existing(dir: &Path, stem: &str) -> Option<PathBuf> {
    [dir.join(stem), dir.join(format!("{stem}.gz"))]
        .into_iter()
        .find(|path| path.is_file())
}

/// Parses a split embedded in the binary (gzip IDX bytes); `folder` names it in errors.
pub(crate) fn parse_embedded(
    folder: &str,
    split: Split,
    images: &[u8],
    labels: &[u8],
) -> Result<ImageDataset, DataError> {
    let [images_stem, labels_stem] = file_stems(split);
    let name = |stem: &str| PathBuf::from(format!("<embedded>/{folder}/{stem}.gz"));
    idx::parse_pair(
        &name(images_stem),
        images.to_vec(),
        &name(labels_stem),
        labels.to_vec(),
        Some(CLASSES),
    )
}
