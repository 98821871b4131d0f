use burn::data::dataset::Dataset;
use saturate_data::{ImageDataset, ImageItem, ImageShape, Kmnist, Mnist, Split};

use super::support::{gzip, idx_images, idx_labels, pixel, write_idx_split};

const LABELS: [u8; 5] = [3, 0, 9, 3, 7];

fn assert_matches_written(dataset: &ImageDataset) {
    let shape = ImageShape {
        channels: 1,
        height: 2,
        width: 3,
    };
    assert_eq!(dataset.len(), LABELS.len());
    assert_eq!(dataset.shape(), shape);
    assert_eq!(dataset.classes(), 10);
    assert_eq!(dataset.labels(), LABELS);
    for (image, &label) in LABELS.iter().enumerate() {
        let expected: Vec<u8> = (0..6).map(|index| pixel(image, index)).collect();
        assert_eq!(
            dataset.get(image),
            Some(ImageItem {
                pixels: expected,
                label,
                shape
            })
        );
    }
    assert_eq!(dataset.get(LABELS.len()), None);
    assert_eq!(dataset.image(LABELS.len()), None);
}

#[test]
fn raw_and_gzip_files_read_the_same() {
    for gz in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        write_idx_split(dir.path(), Split::Test, &LABELS, gz);
        assert_matches_written(&Mnist::from_dir(dir.path(), Split::Test).unwrap());
    }
}

#[test]
fn every_idx_reader_reads_its_split() {
    let dir = tempfile::tempdir().unwrap();
    write_idx_split(dir.path(), Split::Train, &LABELS, true);
    write_idx_split(dir.path(), Split::Test, &[1, 2], false);
    assert_matches_written(&Kmnist::from_dir(dir.path(), Split::Train).unwrap());
    assert_eq!(
        Kmnist::from_dir(dir.path(), Split::Test).unwrap().labels(),
        [1, 2]
    );
    assert_eq!(
        saturate_data::FashionMnist::from_dir(dir.path(), Split::Test)
            .unwrap()
            .labels(),
        [1, 2]
    );
}

#[test]
fn gzip_is_recognised_without_the_suffix() {
    let dir = tempfile::tempdir().unwrap();
    let (images, labels) = (dir.path().join("images"), dir.path().join("labels"));
    std::fs::write(&images, gzip(&idx_images(5, 2, 3))).unwrap();
    std::fs::write(&labels, idx_labels(&LABELS)).unwrap();
    assert_matches_written(&ImageDataset::from_idx_files(&images, &labels).unwrap());
}

#[test]
fn any_idx_pair_counts_classes_from_its_largest_label() {
    let dir = tempfile::tempdir().unwrap();
    let [images, labels] = write_idx_split(dir.path(), Split::Train, &[4, 1, 2], false);
    let dataset = ImageDataset::from_idx_files(&images, &labels).unwrap();
    assert_eq!((dataset.len(), dataset.classes()), (3, 5));
}
