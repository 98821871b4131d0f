use burn::data::dataloader::batcher::Batcher;
use burn::data::dataloader::DataLoaderBuilder;
use burn::data::dataset::Dataset;
use burn_ndarray::{NdArray, NdArrayDevice};
use saturate_data::{FashionMnist, ImageBatcher, ImageItem, ImageShape, Mnist, Split};

use super::support::write_idx_split;

type B = NdArray<f32>;

fn item(pixels: Vec<u8>, label: u8, shape: ImageShape) -> ImageItem {
    ImageItem {
        pixels,
        label,
        shape,
    }
}

#[test]
fn pixels_are_scaled_to_the_unit_interval() {
    let shape = ImageShape {
        channels: 1,
        height: 1,
        width: 2,
    };
    let items = vec![item(vec![0, 255], 3, shape), item(vec![51, 102], 7, shape)];
    let batch: saturate_data::ImageBatch<B> = ImageBatcher::new().batch(items, &NdArrayDevice::Cpu);
    assert_eq!(batch.images.dims(), [2, 1, 1, 2]);
    let images: Vec<f32> = batch.images.into_data().to_vec().unwrap();
    assert_eq!(images, [0.0, 1.0, 0.2, 0.4]);
    let targets: Vec<i64> = batch.targets.into_data().iter::<i64>().collect();
    assert_eq!(targets, [3, 7]);
}

#[test]
fn each_channel_is_normalised_with_its_own_mean_and_std() {
    let shape = ImageShape {
        channels: 2,
        height: 1,
        width: 1,
    };
    let batcher = ImageBatcher::normalized(vec![0.5, 0.0], vec![0.5, 2.0]);
    let batch: saturate_data::ImageBatch<B> =
        batcher.batch(vec![item(vec![255, 255], 0, shape)], &NdArrayDevice::Cpu);
    let images: Vec<f32> = batch.images.into_data().to_vec().unwrap();
    assert_eq!(images, [1.0, 0.5]);
}

#[test]
#[should_panic(expected = "2 normalisation values for 1 channels")]
fn normalisation_must_fit_the_channels() {
    let shape = ImageShape {
        channels: 1,
        height: 1,
        width: 1,
    };
    let batcher = ImageBatcher::normalized(vec![0.0, 0.0], vec![1.0, 1.0]);
    let _: saturate_data::ImageBatch<B> =
        batcher.batch(vec![item(vec![0], 0, shape)], &NdArrayDevice::Cpu);
}

#[test]
#[should_panic(expected = "images of different shapes")]
fn one_batch_has_one_shape() {
    let (small, large) = (
        ImageShape {
            channels: 1,
            height: 1,
            width: 1,
        },
        ImageShape {
            channels: 1,
            height: 1,
            width: 2,
        },
    );
    let items = vec![item(vec![0], 0, small), item(vec![0, 0], 0, large)];
    let _: saturate_data::ImageBatch<B> = ImageBatcher::new().batch(items, &NdArrayDevice::Cpu);
}

/// The one-pipeline counter: one batch built per loader step, shared by clones of the
/// batcher, counting across epochs; saturate-train's tests use it to show a group of K
/// members builds each batch once per step.
#[test]
fn the_counter_counts_one_batch_per_loader_step() {
    let dir = tempfile::tempdir().unwrap();
    write_idx_split(
        dir.path(),
        Split::Train,
        &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
        true,
    );
    let dataset = Mnist::from_dir(dir.path(), Split::Train).unwrap();
    let batcher = ImageBatcher::new();
    let counter = batcher.counter();
    let clone_counter = batcher.clone().counter();
    let loader = DataLoaderBuilder::<B, _, _>::new(batcher)
        .batch_size(4)
        .build(dataset);
    assert_eq!(counter.batches_built(), 0);
    let mut sizes = Vec::new();
    for (step, batch) in loader.iter().enumerate() {
        assert_eq!(
            counter.batches_built(),
            step + 1,
            "built lazily, once per step"
        );
        sizes.push(batch.targets.dims()[0]);
    }
    assert_eq!(sizes, [4, 4, 2]);
    assert_eq!(loader.iter().count(), 3);
    assert_eq!(
        (counter.batches_built(), clone_counter.batches_built()),
        (6, 6)
    );
}

#[test]
fn the_subset_batches_to_the_documented_shapes() {
    let test = FashionMnist::subset_test();
    let items: Vec<ImageItem> = (0..3).map(|index| test.get(index).unwrap()).collect();
    let batch: saturate_data::ImageBatch<B> = ImageBatcher::new().batch(items, &NdArrayDevice::Cpu);
    assert_eq!(batch.images.dims(), [3, 1, 28, 28]);
    let images: Vec<f32> = batch.images.into_data().to_vec().unwrap();
    assert!(images.iter().all(|value| (0.0..=1.0).contains(value)));
    assert!(images.iter().any(|&value| value > 0.5), "not all dark");
}
