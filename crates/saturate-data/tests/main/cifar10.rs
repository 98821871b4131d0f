use burn::data::dataset::Dataset;
use saturate_data::{Cifar10, ImageShape, Split};

use super::support::cifar_record;

/// Writes every CIFAR-10 file into `dir`: file `f` holds records labelled `f` and `f + 1`.
fn write_cifar(dir: &std::path::Path) {
    for split in [Split::Train, Split::Test] {
        for (file, name) in Cifar10::file_names(split).iter().enumerate() {
            let label = file as u8;
            let bytes = [
                cifar_record(label, 2 * file),
                cifar_record(label + 1, 2 * file + 1),
            ]
            .concat();
            std::fs::write(dir.join(name), bytes).unwrap();
        }
    }
}

#[test]
fn reads_every_file_of_a_split_in_order() {
    let dir = tempfile::tempdir().unwrap();
    write_cifar(dir.path());
    let train = Cifar10::from_dir(dir.path(), Split::Train).unwrap();
    assert_eq!(
        train.shape(),
        ImageShape {
            channels: 3,
            height: 32,
            width: 32
        }
    );
    assert_eq!(train.classes(), 10);
    assert_eq!(train.labels(), [0, 1, 1, 2, 2, 3, 3, 4, 4, 5]);
    for index in 0..train.len() {
        let item = train.get(index).unwrap();
        assert_eq!(item.pixels, cifar_record(item.label, index)[1..]);
    }
    let test = Cifar10::from_dir(dir.path(), Split::Test).unwrap();
    assert_eq!(test.labels(), [0, 1]);
}

#[test]
fn file_names_are_the_binary_versions() {
    assert_eq!(Cifar10::file_names(Split::Train).len(), 5);
    assert_eq!(Cifar10::file_names(Split::Train)[4], "data_batch_5.bin");
    assert_eq!(Cifar10::file_names(Split::Test), ["test_batch.bin"]);
}
