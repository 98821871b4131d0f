use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use burn::data::dataloader::batcher::Batcher;
use burn::prelude::{Backend, Int, Tensor, TensorData};

use crate::ImageItem;

/// A batch of images and their labels, on one device.
#[derive(Clone, Debug)]
pub struct ImageBatch<B: Backend> {
    /// `[batch, channels, height, width]`, pixels scaled to `[0, 1]` then normalised.
    pub images: Tensor<B, 4>,
    /// `[batch]`, the class indices.
    pub targets: Tensor<B, 1, Int>,
}

/// How many batches an [`ImageBatcher`] and its clones have built: each one is one
/// transfer of images and targets to the device. A group of K members trained as one
/// model should see one batch per group step, not K.
#[derive(Clone, Debug, Default)]
pub struct BatchCounter(Arc<AtomicUsize>);

impl BatchCounter {
    /// Batches built so far.
    pub fn batches_built(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }
}

/// Burn [`Batcher`] from [`ImageItem`]s to an [`ImageBatch`] on any backend's device:
/// pixels become `f32` in `[0, 1]`, then `(x - mean[c]) / std[c]` per channel `c`.
///
/// Generic over `B: Backend`; under saturate's `Vmap<B>` the batch is one unbatched
/// tensor that all members of a group share.
///
/// ```
/// use burn::data::dataloader::DataLoaderBuilder;
/// use burn_ndarray::NdArray;
/// use saturate_data::{FashionMnist, ImageBatcher};
///
/// let batcher = ImageBatcher::new();
/// let counter = batcher.counter();
/// let loader = DataLoaderBuilder::<NdArray, _, _>::new(batcher)
///     .batch_size(1024)
///     .build(FashionMnist::subset_test());
/// let batch = loader.iter().next().unwrap();
/// assert_eq!(batch.images.dims(), [1024, 1, 28, 28]);
/// assert_eq!(batch.targets.dims(), [1024]);
/// assert_eq!(counter.batches_built(), 1);
/// ```
#[derive(Clone, Debug)]
pub struct ImageBatcher {
    mean: Vec<f32>,
    std: Vec<f32>,
    counter: BatchCounter,
}

impl Default for ImageBatcher {
    fn default() -> Self {
        Self::new()
    }
}

impl ImageBatcher {
    /// Pixels scaled to `[0, 1]` (divided by 255), not centred.
    pub fn new() -> Self {
        Self::normalized(vec![0.0], vec![1.0])
    }

    /// Pixels scaled to `[0, 1]`, then `(x - mean[c]) / std[c]` for channel `c`; one
    /// value (used for every channel) or one per channel.
    ///
    /// # Panics
    /// If `mean` and `std` differ in length, are empty, or a `std` is not positive.
    pub fn normalized(mean: Vec<f32>, std: Vec<f32>) -> Self {
        assert!(
            !mean.is_empty() && mean.len() == std.len(),
            "ImageBatcher: mean ({}) and std ({}) need the same, non-zero, length",
            mean.len(),
            std.len()
        );
        assert!(
            std.iter().all(|&s| s > 0.0),
            "ImageBatcher: std must be positive, got {std:?}"
        );
        Self {
            mean,
            std,
            counter: BatchCounter::default(),
        }
    }

    /// A handle on the count of batches this batcher (and its clones) built.
    pub fn counter(&self) -> BatchCounter {
        self.counter.clone()
    }
}

impl<B: Backend> Batcher<B, ImageItem, ImageBatch<B>> for ImageBatcher {
    /// # Panics
    /// If `items` is empty, if the images differ in shape, or if the normalisation has
    /// neither one value nor one per channel.
    fn batch(&self, items: Vec<ImageItem>, device: &B::Device) -> ImageBatch<B> {
        let shape = items.first().expect("ImageBatcher: an empty batch").shape;
        let per_channel = |values: &[f32]| -> Vec<f32> {
            match values.len() {
                1 => vec![values[0]; shape.channels],
                n if n == shape.channels => values.to_vec(),
                n => panic!(
                    "ImageBatcher: {n} normalisation values for {} channels",
                    shape.channels
                ),
            }
        };
        let (mean, std) = (per_channel(&self.mean), per_channel(&self.std));
        let plane = shape.height * shape.width;
        let mut images = Vec::with_capacity(items.len() * shape.pixel_count());
        let mut targets = Vec::with_capacity(items.len());
        for item in &items {
            assert_eq!(
                item.shape, shape,
                "ImageBatcher: images of different shapes in one batch"
            );
            for (channel, pixels) in item.pixels.chunks_exact(plane).enumerate() {
                let (mean, std) = (mean[channel], std[channel]);
                images.extend(
                    pixels
                        .iter()
                        .map(|&pixel| (f32::from(pixel) / 255.0 - mean) / std),
                );
            }
            targets.push(i64::from(item.label));
        }
        let dims = [items.len(), shape.channels, shape.height, shape.width];
        self.counter.0.fetch_add(1, Ordering::Relaxed);
        ImageBatch {
            images: Tensor::from_data(TensorData::new(images, dims), device),
            targets: Tensor::from_data(TensorData::new(targets, [items.len()]), device),
        }
    }
}
