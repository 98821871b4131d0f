//! A group of CNNs trained by burn-train's own loop: `SupervisedTraining`, `Learner`, burn's
//! metrics (loss and accuracy of every member), its renderers, checkpointer and early
//! stopping. Then each member's best checkpoint is saved on its own with Burn's recorder, and
//! one member is loaded as a plain `Cnn<NdArray>` for inference.
//!
//! What a Burn user writes is unchanged: the CNN's `TrainStep` / `InferenceStep` below are
//! burn-train's, for one model. saturate adds three things:
//! - [`GroupModel`]: the K-member group as one burn `Module` (one forward and one backward train
//!   all members; its record holds one record per member);
//! - burn's `Optimizer` for it: [`GroupAdamConfig`]'s optimizer, here with one learning-rate
//!   factor per member applied to the `Learner`'s scheduler;
//! - per-member metrics, checkpoints and early stopping ([`saturate::train::learner`]): burn's
//!   `LossMetric` and `AccuracyMetric` on each member, under the names `Loss member k` and
//!   `Accuracy member k`; the checkpoints of each member's best validation-loss epoch; a stop
//!   once every member's validation loss has stalled.
//!
//! Run: `cargo run --release --example burn_train` (4 members, the shipped Fashion-MNIST
//! subset, up to 6 epochs; `--features tui` for burn-train's terminal UI, whose metric panel
//! shows one member's plot at a time: switch with the arrow keys). `SATURATE_SHORT=1` shrinks
//! it to a smoke test (512 / 256 images, 2 epochs). Everything is written under
//! `./burn_train/` (burn-train's logs and checkpoints, then `member-<k>.mpk`; removed at the
//! start of a run); the last line, `RESULT key=value ...`, is for scripts.
//!
//! Time on a 2-core AMD EPYC shared with other builds (2026-12-03, NdArray, the dev profile of
//! `cargo run`, whose dependencies and saturate are optimised): the default run took 111 s for
//! 6 epochs of 128 steps (validation accuracy 78% to 86% for the four members, each member's
//! best epoch the last); short mode about 3 s.
//!
//! What burn-train 0.21 cannot host, and where (burn-train 0.21.0 sources, `src/`):
//! - one metric gives one value per update (`metric/base.rs:114`, `Metric::update`), so a
//!   group's loss is K metrics; the TUI keeps one plot per metric name
//!   (`renderer/tui/metric_numeric.rs:50`) and shows one at a time (left/right arrows,
//!   `:145`), never the K members overlaid; the CLI renderer prints progress only
//!   (`renderer/cli.rs`), so without the TUI the per-member values appear in the summary at the
//!   end (`.summary()`) and in the metric logs (`train/` and `valid/`);
//! - a checkpoint is the whole learner at one epoch (`learner/base.rs:152`,
//!   `LearningCheckpointer::checkpoint`): the files kept are the union of the members' best
//!   epochs, each holding all K members, which is why member k is taken from the checkpoint of
//!   its own best epoch;
//! - the scheduler gives one rate per step (`learner/base.rs:86`, `Learner::lr_step`): no
//!   per-member schedule, only fixed factors or fixed rates per member;
//! - the `Learner`'s model and optimizer are private (`learner/base.rs:31-36`) and strategies
//!   see only the metric store, so members cannot be pruned or replaced during `launch`;
//! - `Optimizer::step` and `Optimizer::load_record` return no error (burn-optim 0.21.0
//!   `src/optim/base.rs:67-91`): a group of another member count panics with saturate's
//!   message instead of returning it;
//! - the checkpointing and early-stopping strategies run right after the last validation step
//!   (`learner/supervised/strategies/single/strategy.rs:96-100`) while the metric thread may
//!   still be busy with that epoch: saturate's strategies wait for every member's value first;
//! - `TrainStep` / `InferenceStep` can only be implemented for `GroupModel` where `GroupModel`
//!   is defined (Rust's orphan rule), so saturate-vmap has a `burn-train` feature for them.

mod common;
mod models;

use std::error::Error;
use std::path::Path;

use burn::backend::{Autodiff, NdArray};
use burn::data::dataloader::batcher::Batcher;
use burn::data::dataloader::DataLoaderBuilder;
use burn::data::dataset::transform::PartialDataset;
use burn::data::dataset::Dataset;
use burn::module::Module;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::record::{FullPrecisionSettings, NamedMpkFileRecorder, Recorder};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{ElementConversion, Int, Tensor};
use burn::train::checkpoint::{ComposedCheckpointingStrategy, KeepLastNCheckpoints};
use burn::train::metric::store::{Aggregate, Direction, Split};
use burn::train::metric::{AccuracyMetric, LossMetric};
use burn::train::{
    ClassificationOutput, InferenceStep, Learner, StoppingCondition, SupervisedTraining,
    TrainOutput, TrainStep,
};
use saturate::data::{FashionMnist, ImageBatch, ImageBatcher, ImageItem};
use saturate::prelude::*;
use saturate::train::learner::{
    MemberBestCheckpoints, MemberEarlyStopping, MemberMetrics, MetricBackend,
};
use saturate::vmap::GroupModel;

use crate::common::backend::Inner;
use crate::models::cnn::Cnn;

/// The group's training backend: autodiff over the member axis.
type Train = Autodiff<Vmap<Inner>>;

/// Where burn-train writes its logs and checkpoints, and this example the members' files.
const DIR: &str = "burn_train";
/// The CNN's width (channels of the first convolution).
const WIDTH: usize = 8;

/// The run's sizes.
struct Plan {
    epochs: usize,
    train_images: usize,
    valid_images: usize,
    batch_size: usize,
}

impl Plan {
    fn from_env() -> Self {
        if std::env::var_os("SATURATE_SHORT").is_some_and(|v| v == "1") {
            Plan {
                epochs: 2,
                train_images: 512,
                valid_images: 256,
                batch_size: 64,
            }
        } else {
            Plan {
                epochs: 6,
                train_images: usize::MAX,
                valid_images: usize::MAX,
                batch_size: 64,
            }
        }
    }
}

// ANCHOR: steps
/// The CNN's loss and logits on a batch, as burn-train's classification output.
fn classify<B: Backend>(model: &Cnn<B>, batch: ImageBatch<B>) -> ClassificationOutput<B> {
    let logits = model.forward(batch.images);
    let loss = CrossEntropyLossConfig::new()
        .init(&logits.device())
        .forward(logits.clone(), batch.targets.clone());
    ClassificationOutput::new(loss, logits, batch.targets)
}

/// burn-train's training step of one CNN. On a group's backend the loss holds one value per
/// member, and its backward pass gives each member the gradient of its own loss.
impl<B: AutodiffBackend> TrainStep for Cnn<B> {
    type Input = ImageBatch<B>;
    type Output = ClassificationOutput<B>;

    fn step(&self, batch: ImageBatch<B>) -> TrainOutput<ClassificationOutput<B>> {
        let item = classify(self, batch);
        TrainOutput::new(self, item.loss.backward(), item)
    }
}

/// burn-train's validation step of one CNN.
impl<B: Backend> InferenceStep for Cnn<B> {
    type Input = ImageBatch<B>;
    type Output = ClassificationOutput<B>;

    fn step(&self, batch: ImageBatch<B>) -> ClassificationOutput<B> {
        classify(self, batch)
    }
}
// ANCHOR_END: steps

/// The first `n` images of `dataset`.
fn first(
    dataset: saturate::data::ImageDataset,
    n: usize,
) -> PartialDataset<saturate::data::ImageDataset, ImageItem> {
    let n = n.min(dataset.len());
    PartialDataset::new(dataset, 0, n)
}

/// The share of rows of `logits` whose largest entry is the target class.
fn accuracy<B: Backend>(logits: Tensor<B, 2>, targets: Tensor<B, 1, Int>) -> f64 {
    let n = targets.dims()[0] as f64;
    let hits = logits
        .argmax(1)
        .squeeze_dim::<1>(1)
        .equal(targets)
        .int()
        .sum()
        .into_scalar()
        .elem::<f64>();
    hits / n
}

fn main() -> Result<(), Box<dyn Error>> {
    saturate::malloc::tune();
    // On NdArray, `main` becomes a worker of rayon's pool: its parallel loops run in place.
    let _ = saturate::vmap::join_host_pool_for::<Inner>();
    let start = std::time::Instant::now();
    let plan = Plan::from_env();
    // A run starts afresh: burn-train would mix this run's metric logs with an earlier one's.
    if Path::new(DIR).exists() {
        std::fs::remove_dir_all(DIR)?;
    }
    let device: burn::tensor::Device<Inner> = Default::default();
    let members = 4;
    // Fashion-MNIST's pixel mean and standard deviation.
    let batcher = ImageBatcher::normalized(vec![0.286], vec![0.353]);
    let train = first(FashionMnist::subset_train(), plan.train_images);
    let valid = first(FashionMnist::subset_test(), plan.valid_images);
    println!("backend: {}", common::backend::name());
    println!(
        "{members} members, {} training / {} validation images, up to {} epochs",
        train.len(),
        valid.len(),
        plan.epochs
    );

    // ANCHOR: group
    let dropouts: Members<f64> = vec![0.0, 0.1, 0.2, 0.3].into();
    let group = Batched::init(members, &device, |d| Cnn::<Train>::new(WIDTH, &dropouts, d))?;
    let model = GroupModel::from(group);
    // Member k learns at the scheduler's rate times factors[k].
    let optim = GroupAdamConfig::new()
        .init(members)?
        .with_lr_factors([1.0, 0.5, 0.25, 0.1])?;
    // ANCHOR_END: group

    // ANCHOR: training
    // The loaders build batches on the default device; burn-train moves them to the group's.
    let train_loader = DataLoaderBuilder::<Train, _, _>::new(batcher.clone())
        .batch_size(plan.batch_size)
        .shuffle(0)
        .build(train);
    let valid_loader = DataLoaderBuilder::<Vmap<Inner>, _, _>::new(batcher.clone())
        .batch_size(plan.batch_size)
        .build(first(FashionMnist::subset_test(), plan.valid_images));

    let loss = LossMetric::<MetricBackend>::new();
    let best = MemberBestCheckpoints::new(
        &loss,
        members,
        Aggregate::Mean,
        Direction::Lowest,
        Split::Valid,
    );
    let best_epochs = best.best_epochs();
    let recorder = NamedMpkFileRecorder::<FullPrecisionSettings>::new();
    let training = SupervisedTraining::new(DIR, train_loader, valid_loader)
        .metric_per_member_numeric(members, loss.clone())
        .metric_per_member_numeric(members, AccuracyMetric::<MetricBackend>::new())
        .with_file_checkpointer(recorder.clone())
        .with_checkpointing_strategy(
            ComposedCheckpointingStrategy::builder()
                .add(KeepLastNCheckpoints::new(1))
                .add(best)
                .build(),
        )
        .early_stopping(MemberEarlyStopping::new(
            &loss,
            members,
            Aggregate::Mean,
            Direction::Lowest,
            Split::Valid,
            StoppingCondition::NoImprovementSince { n_epochs: 2 },
        ))
        .num_epochs(plan.epochs)
        .summary();
    let result = training.launch(Learner::new(model, optim, 1e-3));
    // ANCHOR_END: training

    // ANCHOR: members
    // Member k's best weights are member k of the checkpoint of its best epoch (each
    // checkpoint holds the whole group): saved on their own, they are an ordinary Cnn record.
    let dir = Path::new(DIR);
    let best_epochs = best_epochs.get();
    let cpu = Default::default();
    for (k, epoch) in best_epochs.iter().enumerate() {
        let epoch = epoch.ok_or(format!("member {k} has no best epoch"))?;
        let records: Vec<<Cnn<NdArray> as Module<NdArray>>::Record> = Recorder::<NdArray>::load(
            &recorder,
            dir.join("checkpoint").join(format!("model-{epoch}")),
            &cpu,
        )?;
        let record = records
            .into_iter()
            .nth(k)
            .ok_or(format!("the checkpoint of epoch {epoch} has no member {k}"))?;
        Cnn::<NdArray>::without_dropout(WIDTH, &cpu)
            .load_record(record)
            .save_file(dir.join(format!("member-{k}")), &recorder)?;
    }
    // ANCHOR_END: members

    // ANCHOR: inference
    // One member as a plain CNN on NdArray (no group, no saturate type).
    let chosen = 1;
    let plain = Cnn::<NdArray>::without_dropout(WIDTH, &cpu).load_file(
        dir.join(format!("member-{chosen}")),
        &recorder,
        &cpu,
    )?;
    let items = (0..valid.len()).filter_map(|i| valid.get(i)).collect();
    let batch: ImageBatch<NdArray> = batcher.batch(items, &cpu);
    let logits = plain.forward(batch.images.clone());
    let plain_accuracy = accuracy(logits.clone(), batch.targets.clone());
    // ANCHOR_END: inference

    // The same member inside the group, loaded from the same checkpoint: the plain module
    // must compute what the group computed.
    let epoch = best_epochs[chosen].ok_or("no best epoch")?;
    let group_record = Recorder::<Vmap<Inner>>::load(
        &recorder,
        dir.join("checkpoint").join(format!("model-{epoch}")),
        &Default::default(),
    )?;
    let group = result.model.load_record(group_record);
    let valid_batch: ImageBatch<Vmap<Inner>> = batcher.batch(
        (0..valid.len()).filter_map(|i| valid.get(i)).collect(),
        &group.device(),
    );
    let in_group = member_data(group.forward(valid_batch.images))
        .into_iter()
        .nth(chosen)
        .ok_or("no such member")?;
    let gap = in_group
        .iter::<f32>()
        .zip(logits.into_data().iter::<f32>())
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    if gap > 1e-4 {
        return Err(format!("member {chosen}: plain module and group differ by {gap}").into());
    }

    println!("best epoch of each member (validation loss): {best_epochs:?}");
    println!(
        "member {chosen} as a plain Cnn<NdArray>: validation accuracy {plain_accuracy:.3} \
         (largest logit gap to the group: {gap:.1e})"
    );
    println!(
        "RESULT wall_s={:.1} members={members} best_epochs={} plain_member={chosen} \
         plain_accuracy={plain_accuracy:.4} logit_gap={gap:.2e}",
        start.elapsed().as_secs_f64(),
        best_epochs
            .iter()
            .map(|e| e.map_or("-".to_string(), |e| e.to_string()))
            .collect::<Vec<_>>()
            .join(","),
    );
    Ok(())
}
