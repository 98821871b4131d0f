use std::path::Path;

use saturate_data::{Cifar10, DataError, DataSearch, FashionMnist, ImageDataset, Mnist, Split};

use super::support::{cifar_record, gzip, idx_images, idx_labels, write_idx_split};

fn read_pair(images: &[u8], labels: &[u8]) -> (tempfile::TempDir, Result<ImageDataset, DataError>) {
    let dir = tempfile::tempdir().unwrap();
    let (images_path, labels_path) = (dir.path().join("images"), dir.path().join("labels"));
    std::fs::write(&images_path, images).unwrap();
    std::fs::write(&labels_path, labels).unwrap();
    let result = ImageDataset::from_idx_files(&images_path, &labels_path);
    (dir, result)
}

#[test]
fn swapped_files_are_a_bad_magic_number() {
    let (dir, result) = read_pair(&idx_labels(&[1, 2]), &idx_images(2, 2, 2));
    match result {
        Err(DataError::BadMagic {
            path,
            found,
            expected,
            kind,
        }) => {
            assert_eq!(path, dir.path().join("images"));
            assert_eq!((found, expected, kind), (0x0801, 0x0803, "images"));
        }
        other => panic!("expected BadMagic, got {other:?}"),
    }
}

#[test]
fn a_truncated_file_is_a_size_mismatch() {
    let images = idx_images(3, 2, 2);
    let (_dir, result) = read_pair(&images[..images.len() - 1], &idx_labels(&[1, 2, 3]));
    match result {
        Err(DataError::SizeMismatch {
            expected, found, ..
        }) => assert_eq!((expected, found), (16 + 12, 16 + 11)),
        other => panic!("expected SizeMismatch, got {other:?}"),
    }
}

#[test]
fn trailing_bytes_are_a_size_mismatch() {
    let labels = [idx_labels(&[1, 2, 3]), vec![0]].concat();
    let (_dir, result) = read_pair(&idx_images(3, 2, 2), &labels);
    assert!(
        matches!(
            result,
            Err(DataError::SizeMismatch {
                expected: 11,
                found: 12,
                ..
            })
        ),
        "{result:?}"
    );
}

#[test]
fn a_file_shorter_than_its_header_is_a_size_mismatch() {
    let (_dir, result) = read_pair(&[0, 0], &idx_labels(&[1]));
    assert!(
        matches!(
            result,
            Err(DataError::SizeMismatch {
                expected: 16,
                found: 2,
                ..
            })
        ),
        "{result:?}"
    );
    let (_dir, result) = read_pair(&idx_images(1, 1, 1)[..10], &idx_labels(&[1]));
    assert!(
        matches!(
            result,
            Err(DataError::SizeMismatch {
                expected: 16,
                found: 10,
                ..
            })
        ),
        "{result:?}"
    );
}

#[test]
fn images_and_labels_must_agree_on_the_count() {
    let (dir, result) = read_pair(&idx_images(3, 2, 2), &idx_labels(&[1, 2]));
    match result {
        Err(DataError::CountMismatch {
            images_path,
            images,
            labels_path,
            labels,
        }) => {
            assert_eq!(
                (images_path, labels_path),
                (dir.path().join("images"), dir.path().join("labels"))
            );
            assert_eq!((images, labels), (3, 2));
        }
        other => panic!("expected CountMismatch, got {other:?}"),
    }
}

#[test]
fn a_damaged_gzip_file_is_bad_gzip() {
    let dir = tempfile::tempdir().unwrap();
    let [images, _labels] = write_idx_split(dir.path(), Split::Train, &[1, 2, 3], true);
    let compressed = std::fs::read(&images).unwrap();
    // Cut short, then not gzip at all (named .gz): both fail in the decompressor.
    for damaged in [
        compressed[..compressed.len() / 2].to_vec(),
        b"not gzip at all".to_vec(),
    ] {
        std::fs::write(&images, damaged).unwrap();
        match Mnist::from_dir(dir.path(), Split::Train) {
            Err(DataError::BadGzip { path, .. }) => assert_eq!(path, images),
            other => panic!("expected BadGzip, got {other:?}"),
        }
    }
}

#[test]
fn a_gzip_stream_of_a_truncated_file_is_a_size_mismatch() {
    let images = idx_images(2, 2, 2);
    let (_dir, result) = read_pair(&gzip(&images[..images.len() - 3]), &idx_labels(&[1, 2]));
    assert!(
        matches!(result, Err(DataError::SizeMismatch { .. })),
        "{result:?}"
    );
}

#[test]
fn a_label_outside_the_ten_classes_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let [_images, labels] = write_idx_split(dir.path(), Split::Test, &[1, 9, 10], false);
    match Mnist::from_dir(dir.path(), Split::Test) {
        Err(DataError::LabelOutOfRange {
            path,
            index,
            label,
            classes,
        }) => {
            assert_eq!((path, index, label, classes), (labels, 2, 10, 10));
        }
        other => panic!("expected LabelOutOfRange, got {other:?}"),
    }
}

#[test]
fn an_unreadable_file_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let result = ImageDataset::from_idx_files(&missing, &missing);
    assert!(
        matches!(&result, Err(DataError::Io { path, .. }) if *path == missing),
        "{result:?}"
    );
}

#[test]
fn not_found_names_every_place_searched_and_how_to_get_the_data() {
    let (first, second) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // Only the labels: a directory counts when it holds both files of the split.
    let [images, _labels] = write_idx_split(
        &first.path().join("fashion-mnist"),
        Split::Train,
        &[1],
        false,
    );
    std::fs::remove_file(images).unwrap();
    let error = FashionMnist::find(
        &DataSearch::in_roots([first.path(), second.path()]),
        Split::Train,
    )
    .unwrap_err();
    let expected = [
        first.path().join("fashion-mnist"),
        second.path().join("fashion-mnist"),
    ];
    match &error {
        DataError::NotFound {
            dataset,
            split,
            files,
            searched,
            hint,
        } => {
            assert_eq!((*dataset, *split), ("Fashion-MNIST", Split::Train));
            assert_eq!(
                files,
                &[
                    "train-images-idx3-ubyte[.gz]",
                    "train-labels-idx1-ubyte[.gz]"
                ]
            );
            assert_eq!(searched, &expected);
            assert!(
                hint.contains("apt-get install dataset-fashion-mnist"),
                "{hint}"
            );
        }
        other => panic!("expected NotFound, got {other:?}"),
    }
    let message = error.to_string();
    for place in &expected {
        assert!(message.contains(&place.display().to_string()), "{message}");
    }
    assert!(
        message.contains("apt-get install dataset-fashion-mnist"),
        "{message}"
    );
}

#[test]
fn cifar_not_found_lists_its_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data_batch_1.bin"), cifar_record(0, 0)).unwrap();
    match Cifar10::from_dir(dir.path(), Split::Train) {
        Err(DataError::NotFound {
            files,
            searched,
            hint,
            ..
        }) => {
            assert_eq!(files.len(), 5);
            assert_eq!(searched, [dir.path()]);
            assert!(hint.contains("cifar-10-binary.tar.gz"), "{hint}");
        }
        other => panic!("expected NotFound, got {other:?}"),
    }
}

#[test]
fn a_partial_cifar_record_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("test_batch.bin");
    let record = cifar_record(1, 0);
    std::fs::write(&path, [record.clone(), record[..100].to_vec()].concat()).unwrap();
    match Cifar10::from_dir(dir.path(), Split::Test) {
        Err(DataError::PartialRecord {
            path: found_path,
            found,
            record_len,
        }) => {
            assert_eq!((found_path, found, record_len), (path, 3073 + 100, 3073));
        }
        other => panic!("expected PartialRecord, got {other:?}"),
    }
}

#[test]
fn a_cifar_label_outside_the_ten_classes_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("test_batch.bin"),
        [cifar_record(2, 0), cifar_record(11, 1)].concat(),
    )
    .unwrap();
    let result = Cifar10::from_dir(dir.path(), Split::Test);
    assert!(
        matches!(
            result,
            Err(DataError::LabelOutOfRange {
                index: 1,
                label: 11,
                classes: 10,
                ..
            })
        ),
        "{result:?}"
    );
}

#[test]
fn an_explicit_directory_is_the_only_place_searched() {
    let dir = Path::new("/nonexistent/saturate-data-test");
    match Mnist::from_dir(dir, Split::Test) {
        Err(DataError::NotFound { searched, .. }) => assert_eq!(searched, [dir]),
        other => panic!("expected NotFound, got {other:?}"),
    }
}
