//! The CNN on Fashion-MNIST as a [`GroupTask`], shared by the `fashion_mnist` (search with
//! refill and pruning) and `pbt` (population-based training) examples.

use std::sync::Arc;

use burn::data::dataloader::batcher::Batcher;
use burn::data::dataset::transform::{PartialDataset, ShuffledDataset};
use burn::data::dataset::Dataset;
use burn::module::AutodiffModule;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::tensor::{Int, Tensor};
use saturate::data::{ImageBatch, ImageBatcher, ImageDataset, ImageItem};
use saturate::optim::{GroupMomentumConfig, GroupSgd, GroupSgdConfig, GroupWeightDecayConfig};
use saturate::prelude::*;
use saturate::study::prelude::*;
use saturate::study::study::ObjectiveError;
use saturate::train::{GroupBackend, MemberScope, SharedScope};

use crate::common::backend::Inner;
use crate::models::cnn::Cnn;

/// What the group trains on: autodiff over the member-axis decorator.
pub type Train = GroupBackend<Inner>;
/// Evaluation: the same members without autodiff (dropout off).
pub type Valid = Vmap<Inner>;

/// Validation images per forward pass. Every member runs on each chunk, so the activations
/// are K times a single model's: at 32 images and K = 8 the first conv's output is
/// 8 x 32 x w x 28 x 28 floats (9.6 MB at w = 12), at 512 images 154 MB. The smaller chunks
/// keep each pass over them (ReLU, pooling) closer to the core: the 8 evaluations of
/// `examples/pbt.rs --seed 4` took about 3.0 s in chunks of 32 against 4.0 s in chunks of 512
/// on a 2-core Xeon (16 and 64: 3.0 and 3.3 s).
const VALID_CHUNK: usize = 32;

/// The highest validation accuracy of any trial at any evaluation (its intermediate values
/// and its final value): the best accuracy the benchmarks compare, the same quantity as Ray
/// Tune's best result over all iterations. A trial's value alone is its last evaluation,
/// which can be below an earlier one.
pub fn best_evaluation(trials: &[Arc<FrozenTrial>]) -> f64 {
    trials
        .iter()
        .flat_map(|t| {
            let last = t.values.iter().flatten().copied();
            t.intermediate_values.values().copied().chain(last)
        })
        .fold(f64::NAN, f64::max)
}

/// Correct predictions of each member on one batch.
fn correct<B: VmapBackend>(logits: Tensor<B, 2>, targets: Tensor<B, 1, Int>) -> Vec<f64> {
    let predicted = logits.argmax(1).squeeze_dim::<1>(1);
    member_values(predicted.equal(targets).float().sum()).expect("a sum is one value per member")
}

// ANCHOR: task
/// The training job: data, batcher and the position in the shuffled training set.
pub struct FashionTask {
    pub train: Arc<PartialDataset<ImageDataset, ImageItem>>,
    pub valid: PartialDataset<ImageDataset, ImageItem>,
    batcher: ImageBatcher,
    batch_size: usize,
    /// This pass's order of the training images, and how far we are in it.
    order: ShuffledDataset<Arc<PartialDataset<ImageDataset, ImageItem>>, ImageItem>,
    cursor: usize,
    passes: u64,
    /// Seeds the order of every pass (see [`FashionTask::with_shuffle_seed`]).
    shuffle_seed: u64,
}

impl FashionTask {
    /// A task on the first `train_images` / `valid_images` images (all when `None`),
    /// `batch_size` images per step.
    pub fn new(
        train: ImageDataset,
        valid: ImageDataset,
        train_images: Option<usize>,
        valid_images: Option<usize>,
        batch_size: usize,
    ) -> Self {
        let train_len = train_images.unwrap_or(train.len()).min(train.len());
        let valid_len = valid_images.unwrap_or(valid.len()).min(valid.len());
        let train = Arc::new(PartialDataset::new(train, 0, train_len));
        Self {
            order: ShuffledDataset::new(train.clone(), 0),
            train,
            valid: PartialDataset::new(valid, 0, valid_len),
            // Fashion-MNIST's pixel mean and standard deviation.
            batcher: ImageBatcher::normalized(vec![0.286], vec![0.353]),
            batch_size,
            cursor: 0,
            passes: 0,
            shuffle_seed: 0,
        }
    }

    /// Draws the order of the training images from `seed` (0 by default): pass p is shuffled
    /// with the seed `seed * 2^32 + p` (modulo 2^64, so only the low 32 bits of `seed` count:
    /// seeds that differ by a multiple of 2^32 read the same order), and runs with different
    /// seeds read the images in different orders, as independent repeats of an experiment
    /// should. Every member of a group reads the same batches.
    pub fn with_shuffle_seed(mut self, seed: u64) -> Self {
        self.shuffle_seed = seed;
        self.order = ShuffledDataset::new(self.train.clone(), self.pass_seed());
        self
    }

    fn pass_seed(&self) -> u64 {
        (self.shuffle_seed << 32).wrapping_add(self.passes)
    }
}

impl GroupTask<Inner> for FashionTask {
    /// The conv width.
    type Shared = usize;
    type Model = Cnn<Train>;
    type Rule = GroupSgd;
    type Batch = ImageBatch<Train>;

    fn suggest_shared<S: Study>(
        &mut self,
        scope: &mut SharedScope<'_, '_, S>,
    ) -> Result<usize, ObjectiveError> {
        Ok(scope.suggest_int_with("width", 8, 16, false, 4)? as usize)
    }

    fn suggest_members<S: Study>(
        &mut self,
        _width: &usize,
        scope: &mut MemberScope<'_, '_, S>,
    ) -> Result<MemberHyper, ObjectiveError> {
        Ok(MemberHyper::new()
            .with("lr", scope.suggest_float_log("lr", 1e-3, 0.3)?)
            .with("momentum", scope.suggest_float("momentum", 0.0, 0.95)?)
            .with(
                "weight_decay",
                scope.suggest_float_log("weight_decay", 1e-6, 1e-2)?,
            )
            .with("dropout", scope.suggest_float("dropout", 0.0, 0.6)?))
    }

    fn init_model(
        &mut self,
        width: &usize,
        hyper: &MemberHyper,
        device: &VmapDevice<Inner>,
    ) -> Result<Cnn<Train>, ObjectiveError> {
        Ok(Cnn::new(*width, hyper.get("dropout"), device))
    }

    /// SGD with momentum and coupled weight decay, as PyTorch's `torch.optim.SGD` with its
    /// default dampening of 0 (burn's `MomentumConfig` defaults to 0.1, which scales every
    /// step after a member's first by 0.9): the benchmarks' PyTorch arms train the same way.
    fn optimizer(&self, _width: &usize, hyper: &MemberHyper) -> GroupSgdConfig {
        GroupSgdConfig::new()
            .with_momentum(Some(
                GroupMomentumConfig::new()
                    .with_momentum(hyper.get("momentum").to_hyper())
                    .with_dampening(0.0),
            ))
            .with_weight_decay(Some(GroupWeightDecayConfig::new(
                hyper.get("weight_decay").to_hyper(),
            )))
    }

    fn update_model_hyper(
        &mut self,
        model: &Cnn<Train>,
        hyper: &MemberHyper,
    ) -> Result<(), ObjectiveError> {
        Ok(model.set_dropout(hyper.get("dropout"))?)
    }

    fn next_batch(
        &mut self,
        device: &VmapDevice<Inner>,
    ) -> Result<ImageBatch<Train>, ObjectiveError> {
        if self.cursor + self.batch_size > self.order.len() {
            self.passes += 1;
            self.order = ShuffledDataset::new(self.train.clone(), self.pass_seed());
            self.cursor = 0;
        }
        let items = (self.cursor..self.cursor + self.batch_size)
            .map(|i| self.order.get(i).ok_or(format!("no training image {i}")))
            .collect::<Result<_, _>>()?;
        self.cursor += self.batch_size;
        // One unbatched tensor on the group's device: every member reads the same images.
        Ok(self.batcher.batch(items, device))
    }

    fn loss(
        &mut self,
        model: &Cnn<Train>,
        batch: &ImageBatch<Train>,
        _hyper: &MemberHyper,
    ) -> Result<Tensor<Train, 1>, ObjectiveError> {
        let logits = model.forward(batch.images.clone());
        Ok(CrossEntropyLossConfig::new()
            .init(&logits.device())
            .forward(logits, batch.targets.clone()))
    }

    fn evaluate(
        &mut self,
        model: &Cnn<Train>,
        device: &VmapDevice<Inner>,
        _hyper: &MemberHyper,
    ) -> Result<Members<f64>, ObjectiveError> {
        let model: Cnn<Valid> = model.valid();
        let mut hits = vec![0.0; device.members];
        let indices: Vec<usize> = (0..self.valid.len()).collect();
        for chunk in indices.chunks(VALID_CHUNK) {
            let items = chunk.iter().filter_map(|&i| self.valid.get(i)).collect();
            let batch: ImageBatch<Valid> = self.batcher.batch(items, device);
            let correct = correct(model.forward(batch.images), batch.targets);
            hits.iter_mut().zip(correct).for_each(|(h, c)| *h += c);
        }
        Ok(hits.iter().map(|h| h / self.valid.len() as f64).collect())
    }
}
// ANCHOR_END: task
