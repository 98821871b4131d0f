//! The Fashion-MNIST subset shipped in the crate.
//!
//! Golden values from the shipped files, by:
//!
//! ```python
//! import gzip, collections
//! for p in ['train', 't10k']:
//!     im = gzip.decompress(open(p + '-images-idx3-ubyte.gz', 'rb').read())[16:]
//!     lb = gzip.decompress(open(p + '-labels-idx1-ubyte.gz', 'rb').read())[8:]
//!     h = 0xcbf29ce484222325                      # FNV-1a, 64 bits
//!     for b in im[:784]:
//!         h ^= b; h = (h * 0x100000001b3) & 0xffffffffffffffff
//!     print(p, hex(h), lb[0], sorted(collections.Counter(lb).items()))
//! ```

use std::path::Path;

use burn::data::dataset::Dataset;
use saturate_data::{FashionMnist, ImageDataset, ImageShape, Split};

const DEBIAN_DIR: &str = "/usr/share/datasets/fashion-mnist";

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn histogram(dataset: &ImageDataset) -> [usize; 10] {
    let mut counts = [0; 10];
    for &label in dataset.labels() {
        counts[usize::from(label)] += 1;
    }
    counts
}

/// Each class within 20% of an even share: the subset is not, say, sorted by class.
fn assert_balanced(counts: [usize; 10], total: usize) {
    for (class, &count) in counts.iter().enumerate() {
        let share = total as f64 / 10.0;
        assert!(
            (count as f64 - share).abs() < 0.2 * share,
            "class {class}: {count} of {total}"
        );
    }
}

#[test]
fn train_subset_is_the_first_8192_images() {
    let train = FashionMnist::subset_train();
    assert_eq!(train.len(), 8192);
    assert_eq!(
        train.shape(),
        ImageShape {
            channels: 1,
            height: 28,
            width: 28
        }
    );
    assert_eq!(train.classes(), 10);
    assert_eq!(
        histogram(&train),
        [762, 872, 824, 830, 786, 815, 831, 834, 813, 825]
    );
    assert_balanced(histogram(&train), 8192);
    let first = train.get(0).unwrap();
    assert_eq!(
        (first.label, fnv1a(&first.pixels)),
        (9, 0x01fd_f725_9054_1338)
    );
}

#[test]
fn test_subset_is_the_first_2048_images() {
    let test = FashionMnist::subset_test();
    assert_eq!(test.len(), 2048);
    assert_eq!(
        test.shape(),
        ImageShape {
            channels: 1,
            height: 28,
            width: 28
        }
    );
    assert_eq!(
        histogram(&test),
        [203, 209, 220, 197, 223, 199, 201, 205, 199, 192]
    );
    assert_balanced(histogram(&test), 2048);
    let first = test.get(0).unwrap();
    assert_eq!(
        (first.label, fnv1a(&first.pixels)),
        (9, 0xcb45_b758_9f1b_853b)
    );
    assert_eq!(FashionMnist::subset(Split::Test), test);
}

/// The subset is a prefix of the package's files, image for image. Skipped when the
/// package is not installed, except in CI (`CI` set), where scripts/setup-data.sh
/// installs it.
#[test]
fn subset_matches_the_debian_package() {
    if !Path::new(DEBIAN_DIR)
        .join("train-images-idx3-ubyte.gz")
        .is_file()
    {
        assert!(
            std::env::var_os("CI").is_none(),
            "{DEBIAN_DIR} is missing but CI is set: run scripts/setup-data.sh \
             (apt-get install dataset-fashion-mnist) so the shipped subset is checked against it"
        );
        eprintln!("skipped: {DEBIAN_DIR} missing (apt-get install dataset-fashion-mnist)");
        return;
    }
    for (split, total) in [(Split::Train, 60_000), (Split::Test, 10_000)] {
        let full = FashionMnist::from_dir(DEBIAN_DIR, split).unwrap();
        let subset = FashionMnist::subset(split);
        assert_eq!(full.len(), total);
        assert_eq!(full.shape(), subset.shape());
        assert_eq!(
            full.labels()[..subset.len()],
            *subset.labels(),
            "{split} labels"
        );
        for index in 0..subset.len() {
            assert_eq!(
                full.image(index),
                subset.image(index),
                "{split} image {index}"
            );
        }
        assert_balanced(histogram(&full), total);
    }
}
