//! The study benchmark: one hyperparameter study of a small CNN on Fashion-MNIST, run one trial
//! at a time in plain Burn (the *sequential* arm) or in groups of K trials trained as one
//! batched model by saturate's runner (the *grouped* arm). The protocol: the shipped
//! Fashion-MNIST subset (8,192 training / 2,048 validation images), batch 128, one epoch per
//! trial, 24 trials, groups of 8, one TPE seed per run (`scripts/bench-study.sh` runs 0 to 9).
//!
//! Both arms run the same study: the same search space (the width, learning rate, momentum,
//! weight decay, dropout; sampled in that order), the same TPE settings (seeded, constant liar, Optuna's
//! defaults otherwise), no pruner (one epoch: one report), the same model and the same batches
//! (every trial reads the training images in the same shuffled order). The sequential arm is
//! ordinary Burn: `Autodiff<Inner>`, `burn::nn::Dropout`, `burn::optim::Sgd`. The grouped arm is
//! `Autodiff<Vmap<Inner>>`, saturate's per-member dropout and SGD, driven by
//! [`run_trainer`].
//!
//! The model's width (conv 1→w→2w channels, a 64-unit hidden layer) is **searched** by
//! default, as in `examples/fashion_mnist.rs`: `width` in {8, 12, 16}, sampled first. In the
//! sequential arm (and the Python reference) it is one more per-trial parameter; in the grouped
//! arm it is the group's *shared* parameter, so the grouped arm runs the trainer's defaults:
//! refill on, at most `2K` trials per group, then the next group samples its own width. The
//! two arms then search the same space as a user would, with the constraint grouping puts on
//! it; each row records how many widths the arm tried. `--width N` fixes the width instead
//! (refill off in the grouped arm: each group is K trials asked together).
//!
//! One arm per process (the peak resident memory of a [`Profile`] is the process's):
//!
//! ```text
//! study_bench --arm sequential --seed 0 --csv target/bench/study.csv
//! study_bench --arm grouped --seed 0 --budget-seconds <sequential wall time> --csv ...
//! study_bench --table target/bench/study.csv        # the markdown table of the CSV
//! ```
//!
//! `--group-size K` sets the grouped arm's K (default 8). At K = 1 the runner trains one trial at
//! a time on `Vmap<Inner>` (refill off: each trial samples its own width), a sequential search
//! on saturate's kernels: against the plain Burn arm it shows what those kernels buy, against
//! K = 8 what grouping buys. Plain Burn's convolution is slow on NdArray (about 40 s per trial
//! at width 16 on a 2-core EPYC), so `scripts/bench-study.sh` runs the K = 1 arm as its
//! sequential search and takes its wall time as the budget.
//!
//! `--budget-seconds S` adds the fixed-time-budget arm: after its trials the grouped arm goes
//! on with more groups of the same study until S seconds have passed since it started (groups
//! still training at that point stop and are not counted), and records how many trials it
//! completed in S seconds and the best accuracy among them. Without it, an arm's budget is
//! its own wall time. `scripts/bench-study.sh` runs the protocol (with the Python reference of
//! `scripts/bench-python-reference.sh`, which also goes on until the budget) and writes the
//! table, which ends with each arm's median and interquartile range over seeds;
//! book/src/benchmarks/study.md has the results. `--short` (or `SATURATE_SHORT=1`) is the CI smoke test: 512 / 256 images, 2
//! trials in one group of 2, one epoch of 4 steps.
//!
//! The backend is NdArray by default and CUDA with `--features cuda` (examples/common); with
//! `--features nvml` the profile also samples GPU 0 (busy fraction, energy, peak memory).

mod common;

use std::error::Error;
use std::fmt::Write as _;
use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use burn::backend::Autodiff;
use burn::data::dataloader::batcher::Batcher;
use burn::data::dataset::transform::{PartialDataset, ShuffledDataset};
use burn::data::dataset::Dataset;
use burn::module::{AutodiffModule, Module};
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::loss::CrossEntropyLossConfig;
use burn::nn::pool::{MaxPool2d, MaxPool2dConfig};
use burn::nn::{Linear, LinearConfig, PaddingConfig2d, Relu};
use burn::optim::{GradientsParams, Optimizer};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{ElementConversion, Int, Tensor};
use common::backend::Inner;
use saturate::data::{FashionMnist, ImageBatch, ImageBatcher, ImageDataset, ImageItem};
use saturate::optim::{GroupMomentumConfig, GroupSgd, GroupSgdConfig, GroupWeightDecayConfig};
use saturate::prelude::*;
use saturate::profile::Profile;
use saturate::study::study::ObjectiveError;
use saturate::train::{GroupBackend, MemberScope, SharedScope, TimeoutPolicy};
use saturate::vmap::nn::{Dropout, DropoutConfig};

/// The grouped arm's training backend.
type Train = GroupBackend<Inner>;
/// The grouped arm's evaluation backend (dropout off).
type Valid = Vmap<Inner>;
/// The sequential arm's training backend: plain Burn.
type Single = Autodiff<Inner>;

/// The protocol's sizes.
#[derive(Debug, Clone)]
struct Plan {
    trials: usize,
    group_size: usize,
    batch_size: usize,
    epochs: usize,
    /// The fixed width, or `None` when the width is searched ([`WIDTH`]).
    width: Option<usize>,
    train_images: usize,
    valid_images: usize,
}

impl Plan {
    fn paper() -> Self {
        Plan {
            trials: 24,
            group_size: 8,
            batch_size: 128,
            epochs: 1,
            width: None,
            train_images: 8192,
            valid_images: 2048,
        }
    }

    fn short() -> Self {
        Plan {
            trials: 2,
            group_size: 2,
            batch_size: 128,
            epochs: 1,
            width: None,
            train_images: 512,
            valid_images: 256,
        }
    }

    /// Training steps of one epoch (the last partial batch is dropped).
    fn steps_per_epoch(&self) -> usize {
        self.train_images / self.batch_size
    }
}

// ---------------------------------------------------------------------------------------------
// The model: the examples' small CNN (examples/fashion_mnist.rs) at a fixed width.

/// Everything of the CNN but its dropout layer, which differs between the arms.
#[derive(Module, Debug)]
struct Body<B: Backend> {
    conv1: Conv2d<B>,
    conv2: Conv2d<B>,
    pool: MaxPool2d,
    hidden: Linear<B>,
    out: Linear<B>,
    relu: Relu,
}

impl<B: Backend> Body<B> {
    /// `width` channels in the first conv, twice that in the second, 64 hidden units.
    fn new(width: usize, device: &B::Device) -> Self {
        let conv = |from, to| {
            Conv2dConfig::new([from, to], [3, 3])
                .with_padding(PaddingConfig2d::Same)
                .init(device)
        };
        Self {
            conv1: conv(1, width),
            conv2: conv(width, 2 * width),
            pool: MaxPool2dConfig::new([2, 2]).with_strides([2, 2]).init(),
            hidden: LinearConfig::new(2 * width * 7 * 7, 64).init(device),
            out: LinearConfig::new(64, 10).init(device),
            relu: Relu::new(),
        }
    }

    /// Images `[batch, 1, 28, 28]` -> logits `[batch, 10]`, with `dropout` applied to the
    /// flattened features.
    fn forward(
        &self,
        images: Tensor<B, 4>,
        dropout: impl FnOnce(Tensor<B, 2>) -> Tensor<B, 2>,
    ) -> Tensor<B, 2> {
        let x = self
            .pool
            .forward(self.relu.forward(self.conv1.forward(images)));
        let x = self.pool.forward(self.relu.forward(self.conv2.forward(x)));
        let x = dropout(x.flatten::<2>(1, 3));
        self.out.forward(self.relu.forward(self.hidden.forward(x)))
    }
}

/// The sequential arm's model: one trial, burn's dropout.
#[derive(Module, Debug)]
struct SingleCnn<B: Backend> {
    body: Body<B>,
    dropout: burn::nn::Dropout,
}

impl<B: Backend> SingleCnn<B> {
    fn forward(&self, images: Tensor<B, 4>) -> Tensor<B, 2> {
        self.body.forward(images, |x| self.dropout.forward(x))
    }
}

/// The grouped arm's model: K trials, saturate's per-member dropout.
#[derive(Module, Debug)]
struct GroupCnn<B: Backend> {
    body: Body<B>,
    dropout: Dropout<B>,
}

impl<B: Backend> GroupCnn<B> {
    fn forward(&self, images: Tensor<B, 4>) -> Tensor<B, 2> {
        self.body.forward(images, |x| self.dropout.forward(x))
    }
}

// ---------------------------------------------------------------------------------------------
// Data and the search space, shared by both arms.

/// The training and validation images and the batch order every trial uses.
struct Data {
    train: Arc<PartialDataset<ImageDataset, ImageItem>>,
    valid: PartialDataset<ImageDataset, ImageItem>,
    /// The training images in the order every trial reads them (one shuffle, seeded).
    order: ShuffledDataset<Arc<PartialDataset<ImageDataset, ImageItem>>, ImageItem>,
    batcher: ImageBatcher,
}

impl Data {
    fn new(plan: &Plan, seed: u64) -> Self {
        let train = FashionMnist::subset_train();
        let valid = FashionMnist::subset_test();
        let train_len = plan.train_images.min(train.len());
        let valid_len = plan.valid_images.min(valid.len());
        let train = Arc::new(PartialDataset::new(train, 0, train_len));
        Self {
            order: ShuffledDataset::new(train.clone(), seed),
            train,
            valid: PartialDataset::new(valid, 0, valid_len),
            // Fashion-MNIST's pixel mean and standard deviation.
            batcher: ImageBatcher::normalized(vec![0.286], vec![0.353]),
        }
    }

    /// Training batch number `step` (of `batch_size` images) of an epoch.
    fn batch<B: Backend>(
        &self,
        step: usize,
        batch_size: usize,
        device: &B::Device,
    ) -> ImageBatch<B> {
        let items = (step * batch_size..(step + 1) * batch_size)
            .map(|i| self.order.get(i).expect("index inside the training images"))
            .collect();
        self.batcher.batch(items, device)
    }

    /// The validation images in batches of 512.
    fn valid_batches<B: Backend>(&self, device: &B::Device) -> Vec<ImageBatch<B>> {
        let indices: Vec<usize> = (0..self.valid.len()).collect();
        indices
            .chunks(512)
            .map(|chunk| {
                let items = chunk.iter().filter_map(|&i| self.valid.get(i)).collect();
                self.batcher.batch(items, device)
            })
            .collect()
    }
}

/// The study both arms run: TPE seeded with `seed`, constant liar (it matters only when
/// trials run together), no pruner, maximising validation accuracy, in memory.
fn study(seed: u64) -> Result<DefaultStudy, Box<dyn Error>> {
    Ok(StudyConfig::new()
        .with_name("study_bench")
        .with_direction(StudyDirection::Maximize)
        .with_sampler(
            TpeSamplerConfig::new()
                .with_seed(seed)
                .with_constant_liar(true)
                .init()?,
        )
        // No pruning: a study's default pruner is the median pruner (as Optuna's), and the
        // runner reports each epoch's accuracy to it, where the sequential arm (and the
        // Python reference) report nothing.
        .with_pruner(NopPruner)
        .init()?)
}

/// The searched width: an integer from 8 to 16 in steps of 4 (the main example's).
const WIDTH: (i64, i64, i64) = (8, 16, 4);

/// The search space's bounds, in sampling order (after the width).
const LR: (f64, f64) = (1e-3, 0.3);
const MOMENTUM: (f64, f64) = (0.0, 0.95);
const WEIGHT_DECAY: (f64, f64) = (1e-6, 1e-2);
const DROPOUT: (f64, f64) = (0.0, 0.6);

// ---------------------------------------------------------------------------------------------
// The sequential arm: one trial at a time in plain Burn.

/// One trial's hyperparameters.
#[derive(Debug, Clone, Copy)]
struct Hyper {
    width: usize,
    lr: f64,
    momentum: f64,
    weight_decay: f64,
    dropout: f64,
}

/// Trains one CNN for the plan's epochs and returns its validation accuracy.
fn train_single(plan: &Plan, data: &Data, hyper: Hyper) -> f64 {
    let device = Default::default();
    let mut model = SingleCnn::<Single> {
        body: Body::new(hyper.width, &device),
        dropout: burn::nn::DropoutConfig::new(hyper.dropout).init(),
    };
    let mut optim = burn::optim::SgdConfig::new()
        .with_momentum(Some(burn::optim::momentum::MomentumConfig {
            momentum: hyper.momentum,
            dampening: 0.0,
            nesterov: false,
        }))
        .with_weight_decay(Some(burn::optim::decay::WeightDecayConfig::new(
            hyper.weight_decay as f32,
        )))
        .init();
    let loss_fn = CrossEntropyLossConfig::new().init(&device);
    for _ in 0..plan.epochs {
        for step in 0..plan.steps_per_epoch() {
            let batch: ImageBatch<Single> = data.batch(step, plan.batch_size, &device);
            let loss = loss_fn.forward(model.forward(batch.images), batch.targets);
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(hyper.lr, model, grads);
        }
    }
    let model: SingleCnn<<Single as AutodiffBackend>::InnerBackend> = model.valid();
    let mut hits = 0.0;
    for batch in data.valid_batches(&device) {
        let predicted = model.forward(batch.images).argmax(1).squeeze_dim::<1>(1);
        hits += predicted
            .equal(batch.targets)
            .int()
            .sum()
            .into_scalar()
            .elem::<f64>();
    }
    hits / data.valid.len() as f64
}

/// Runs the study one trial at a time; returns the best accuracy.
fn sequential(plan: &Plan, data: &Data, seed: u64) -> Result<ArmRun, Box<dyn Error>> {
    let study = study(seed)?;
    let started = Instant::now();
    for _ in 0..plan.trials {
        let mut trial = study.ask()?;
        let width = match plan.width {
            Some(width) => width,
            None => trial.suggest_int_with("width", WIDTH.0, WIDTH.1, false, WIDTH.2)? as usize,
        };
        let hyper = Hyper {
            width,
            lr: trial.suggest_float_log("lr", LR.0, LR.1)?,
            momentum: trial.suggest_float("momentum", MOMENTUM.0, MOMENTUM.1)?,
            weight_decay: trial.suggest_float_log(
                "weight_decay",
                WEIGHT_DECAY.0,
                WEIGHT_DECAY.1,
            )?,
            dropout: trial.suggest_float("dropout", DROPOUT.0, DROPOUT.1)?,
        };
        let accuracy = train_single(plan, data, hyper);
        study.tell(&trial, &[accuracy])?;
        println!(
            "trial {:2}: accuracy {accuracy:.4} (width {}, lr {:.4}, momentum {:.3}, weight decay {:.2e}, \
             dropout {:.3}) at {:.1} s",
            trial.number(),
            hyper.width,
            hyper.lr,
            hyper.momentum,
            hyper.weight_decay,
            hyper.dropout,
            started.elapsed().as_secs_f64()
        );
    }
    ArmRun::of(&study)
}

// ---------------------------------------------------------------------------------------------
// The grouped arm: saturate's runner, K trials as one model.

/// The grouped arm's training job for [`GroupTrainer`].
struct StudyTask {
    data: Data,
    plan: Plan,
    /// The next batch of the group's epoch.
    step: usize,
}

impl GroupTask<Inner> for StudyTask {
    /// The width: searched once per group, or the plan's fixed width.
    type Shared = usize;
    type Model = GroupCnn<Train>;
    type Rule = GroupSgd;
    type Batch = ImageBatch<Train>;

    fn suggest_shared<S: Study>(
        &mut self,
        scope: &mut SharedScope<'_, '_, S>,
    ) -> Result<usize, ObjectiveError> {
        Ok(match self.plan.width {
            Some(width) => width,
            None => scope.suggest_int_with("width", WIDTH.0, WIDTH.1, false, WIDTH.2)? as usize,
        })
    }

    fn suggest_members<S: Study>(
        &mut self,
        _shared: &usize,
        scope: &mut MemberScope<'_, '_, S>,
    ) -> Result<MemberHyper, ObjectiveError> {
        Ok(MemberHyper::new()
            .with("lr", scope.suggest_float_log("lr", LR.0, LR.1)?)
            .with(
                "momentum",
                scope.suggest_float("momentum", MOMENTUM.0, MOMENTUM.1)?,
            )
            .with(
                "weight_decay",
                scope.suggest_float_log("weight_decay", WEIGHT_DECAY.0, WEIGHT_DECAY.1)?,
            )
            .with(
                "dropout",
                scope.suggest_float("dropout", DROPOUT.0, DROPOUT.1)?,
            ))
    }

    fn init_model(
        &mut self,
        width: &usize,
        hyper: &MemberHyper,
        device: &VmapDevice<Inner>,
    ) -> Result<GroupCnn<Train>, ObjectiveError> {
        // A new group: its epoch starts at the first batch, as every sequential trial's does
        // (with refill, members that replace the first ones all start at the next epoch's
        // first batch: there is no pruner, so a group's members finish together).
        self.step = 0;
        Ok(GroupCnn {
            body: Body::new(*width, device),
            dropout: DropoutConfig::new(hyper.get("dropout").to_vec()).init(device)?,
        })
    }

    fn optimizer(&self, _shared: &usize, hyper: &MemberHyper) -> GroupSgdConfig {
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

    fn next_batch(
        &mut self,
        device: &VmapDevice<Inner>,
    ) -> Result<ImageBatch<Train>, ObjectiveError> {
        let step = self.step % self.plan.steps_per_epoch();
        self.step += 1;
        // One unbatched tensor: every member reads the same images.
        Ok(self.data.batch(step, self.plan.batch_size, device))
    }

    fn loss(
        &mut self,
        model: &GroupCnn<Train>,
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
        model: &GroupCnn<Train>,
        device: &VmapDevice<Inner>,
        _hyper: &MemberHyper,
    ) -> Result<Members<f64>, ObjectiveError> {
        let model: GroupCnn<Valid> = model.valid();
        let mut hits = vec![0.0; device.members];
        for batch in self.data.valid_batches::<Valid>(device) {
            let correct = correct(model.forward(batch.images), batch.targets);
            hits.iter_mut().zip(correct).for_each(|(h, c)| *h += c);
        }
        Ok(hits
            .iter()
            .map(|h| h / self.data.valid.len() as f64)
            .collect())
    }
}

/// Correct predictions of each member on one batch.
fn correct<B: VmapBackend>(logits: Tensor<B, 2>, targets: Tensor<B, 1, Int>) -> Vec<f64> {
    let predicted = logits.argmax(1).squeeze_dim::<1>(1);
    member_values(predicted.equal(targets).float().sum()).expect("a sum is one value per member")
}

/// The grouped arm's trainer and study, kept for the budget's continuation.
struct Grouped {
    study: DefaultStudy,
    trainer: GroupTrainer<StudyTask>,
}

fn grouped(plan: &Plan, data: Data, seed: u64) -> Result<(ArmRun, Grouped), Box<dyn Error>> {
    let study = study(seed)?;
    // A searched width is shared by a group: the trainer's default refill (a group takes at
    // most 2K trials, then the next samples its own width). A fixed width, or K = 1 (a
    // sequential search, where each trial samples its own width): refill off, each group is
    // K trials asked together.
    let mut trainer = TrainerConfig::new(plan.steps_per_epoch(), plan.epochs)
        .with_refill(plan.width.is_none() && plan.group_size > 1)
        .init(StudyTask {
            data,
            plan: plan.clone(),
            step: 0,
        })?;
    let config = RunConfig::new()
        .with_group_size(plan.group_size)
        .with_n_trials(plan.trials)
        .with_progress(false);
    let summary = run_trainer(&study, &config, &mut trainer, &Default::default())?;
    print!("{summary}");
    if !summary.group_errors.is_empty() {
        return Err(format!("groups failed: {:?}", summary.group_errors).into());
    }
    Ok((ArmRun::of(&study)?, Grouped { study, trainer }))
}

/// More groups of the same study until `left` has passed; groups still training then are
/// stopped at their report (told PRUNED, not counted in the budget).
fn continue_until(plan: &Plan, arm: &mut Grouped, left: Duration) -> Result<(), Box<dyn Error>> {
    if !left.is_zero() {
        let config = RunConfig::new()
            .with_group_size(plan.group_size)
            .with_timeout(left)
            .with_on_timeout(TimeoutPolicy::StopAtNextReport)
            .with_progress(false);
        let summary = run_trainer(&arm.study, &config, &mut arm.trainer, &Default::default())?;
        println!(
            "budget: {} more trials complete, {} stopped at the budget",
            summary.complete, summary.pruned
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Recording.

/// What a study run finished: complete trials, the best accuracy among them and how many
/// different widths they trained.
#[derive(Debug, Clone, Copy)]
struct ArmRun {
    complete: usize,
    /// Complete trials and failed ones (a member whose loss diverged fails its trial).
    finished: usize,
    best: f64,
    widths: usize,
}

impl ArmRun {
    /// Every complete trial of `study`.
    fn of(study: &DefaultStudy) -> Result<Self, Box<dyn Error>> {
        Self::within(study, f64::INFINITY)
    }

    /// The trials of `study` that completed within `budget` seconds of the first trial's
    /// start (the trials' own timestamps).
    fn within(study: &DefaultStudy, budget: f64) -> Result<Self, Box<dyn Error>> {
        let trials = study.trials(None)?;
        let Some(first) = trials.iter().filter_map(|t| t.datetime_start).min() else {
            return Ok(Self {
                complete: 0,
                finished: 0,
                best: f64::NAN,
                widths: 0,
            });
        };
        let finished: Vec<_> = trials
            .iter()
            .filter(|t| matches!(t.state, TrialState::Complete | TrialState::Fail))
            .filter(|t| {
                t.datetime_complete.is_some_and(|done| {
                    (done - first).num_microseconds().unwrap_or(i64::MAX) as f64 / 1e6 <= budget
                })
            })
            .collect();
        let in_budget: Vec<_> = finished
            .iter()
            .filter(|t| t.state == TrialState::Complete)
            .collect();
        let mut widths: Vec<i64> = in_budget
            .iter()
            .filter_map(|t| t.param("width").and_then(|w| w.as_f64()))
            .map(|w| w as i64)
            .collect();
        widths.sort_unstable();
        widths.dedup();
        Ok(Self {
            complete: in_budget.len(),
            finished: finished.len(),
            best: in_budget
                .iter()
                .filter_map(|t| t.value())
                .fold(f64::NAN, f64::max),
            // A fixed width is not a parameter of the trials: one width.
            widths: if in_budget.is_empty() {
                0
            } else {
                widths.len().max(1)
            },
        })
    }
}

/// The CSV's columns: the run's, then the profile's (`profile_` + [`Profile::csv_header`]).
/// scripts/python/study_reference.py writes the same columns.
fn csv_header() -> String {
    let profile: Vec<String> = Profile::csv_header()
        .split(',')
        .map(|c| format!("profile_{c}"))
        .collect();
    format!(
        "arm,seed,backend,commit,width,train_images,valid_images,batch_size,epochs,group_size,\
         trials,wall_seconds,trials_per_minute,best_accuracy,budget_seconds,budget_trials,\
         budget_best_accuracy,load_before,load_after,widths_tried,{}",
        profile.join(",")
    )
}

/// The one-minute load average (`/proc/loadavg`), if the platform has it.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_owned))
        .unwrap_or_default()
}

/// Appends `row` to `path`, writing the header first if the file is new or empty.
fn append_row(path: &Path, row: &str) -> Result<(), Box<dyn Error>> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let new = std::fs::metadata(path).map_or(true, |m| m.len() == 0);
    let mut file = OpenOptions::new().create(true).append(true).open(path)?;
    if new {
        writeln!(file, "{}", csv_header())?;
    } else {
        let header = std::fs::read_to_string(path)?
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned();
        if header != csv_header() {
            return Err(format!(
                "{} has other columns than this benchmark writes: move it away or pass another \
                 --csv",
                path.display()
            )
            .into());
        }
    }
    writeln!(file, "{row}")?;
    Ok(())
}

/// Profiles `work`: wall time, CPU time, peak RSS, and GPU 0 with `--features nvml`.
fn profiled<T>(work: impl FnOnce() -> T) -> (T, Profile) {
    #[cfg(feature = "nvml")]
    {
        match saturate::profile::ProfilerConfig::new()
            .with_nvml(0)
            .and_then(|b| b.init())
        {
            Ok(profiler) => {
                let result = work();
                return (result, profiler.finish());
            }
            Err(e) => {
                eprintln!("no GPU telemetry ({e}); profiling CPU and memory only");
                return saturate::profile::profile(work);
            }
        }
    }
    #[cfg(not(feature = "nvml"))]
    saturate::profile::profile(work)
}

// ---------------------------------------------------------------------------------------------
// The markdown table of a CSV.

/// One CSV row by column name.
struct Row(Vec<(String, String)>);

impl Row {
    fn get(&self, column: &str) -> &str {
        self.0
            .iter()
            .find(|(c, _)| c == column)
            .map_or("", |(_, v)| v.as_str())
    }
    fn num(&self, column: &str) -> Option<f64> {
        self.get(column).parse().ok()
    }
}

fn read_rows(path: &Path) -> Result<Vec<Row>, Box<dyn Error>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("could not read {}: {e}", path.display()))?;
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = lines.next().ok_or("the CSV is empty")?.split(',').collect();
    Ok(lines
        .map(|line| {
            Row(header
                .iter()
                .zip(line.split(','))
                .map(|(c, v)| (c.to_string(), v.to_string()))
                .collect())
        })
        .collect())
}

/// The markdown table of every row of the CSV, with the speedup and accuracy difference of
/// each arm against the sequential search of the same seed: its plain Burn arm's last row, or
/// without one the runner's at K = 1.
fn table(path: &Path) -> Result<String, Box<dyn Error>> {
    let rows = read_rows(path)?;
    let sequential = |seed: &str| {
        let last = |label: &str| {
            rows.iter()
                .rev()
                .find(|r| arm_label(r) == label && r.get("seed") == seed)
        };
        last("sequential").or_else(|| last("grouped K=1"))
    };
    let mut out = String::new();
    writeln!(
        out,
        "| seed | arm | commit | trials | wall time (s) | speedup vs sequential | trials/min | \
         best accuracy | vs sequential | budget (s) | trials in budget | best in budget | \
         CPU time (s) | peak RSS (MiB) | load before → after |"
    )?;
    writeln!(
        out,
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    )?;
    for row in &rows {
        let base = sequential(row.get("seed"));
        let wall = row.num("wall_seconds");
        let speedup = match (base.and_then(|b| b.num("wall_seconds")), wall) {
            (Some(b), Some(w)) if w > 0.0 => format!("{:.2}x", b / w),
            _ => "-".into(),
        };
        let delta = match (
            base.and_then(|b| b.num("best_accuracy")),
            row.num("best_accuracy"),
        ) {
            (Some(b), Some(a)) => format!("{:+.4}", a - b),
            _ => "-".into(),
        };
        let f = |c: &str, digits: usize| row.num(c).map_or("-".into(), |v| format!("{v:.digits$}"));
        let rss = row
            .num("profile_peak_resident_bytes")
            .map_or("-".into(), |b| format!("{:.0}", b / (1024.0 * 1024.0)));
        writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} → {} |",
            row.get("seed"),
            arm_label(row),
            row.get("commit"),
            row.get("trials"),
            f("wall_seconds", 1),
            speedup,
            f("trials_per_minute", 2),
            f("best_accuracy", 4),
            delta,
            f("budget_seconds", 0),
            row.get("budget_trials"),
            f("budget_best_accuracy", 4),
            f("profile_cpu_seconds", 0),
            rss,
            row.get("load_before"),
            row.get("load_after"),
        )?;
    }
    writeln!(out)?;
    out.push_str(&summary(&rows)?);
    Ok(out)
}

/// The spread over seeds: per arm, the median and interquartile range of the best accuracy
/// after the protocol's trials and within the budget, and the medians of the trials in the
/// budget, the widths tried and the wall time. A seed counts once per arm (its last row).
fn summary(rows: &[Row]) -> Result<String, Box<dyn Error>> {
    let mut arms: Vec<String> = Vec::new();
    for row in rows {
        let label = arm_label(row);
        if !arms.contains(&label) {
            arms.push(label);
        }
    }
    let mut out = String::new();
    writeln!(
        out,
        "| arm | seeds | best accuracy: median (IQR) | best in budget: median (IQR) | \
         trials in budget (median) | widths tried (median) | wall time (s, median) |"
    )?;
    writeln!(out, "|---|---|---|---|---|---|---|")?;
    for arm in &arms {
        let mut last: Vec<&Row> = Vec::new();
        for row in rows.iter().rev().filter(|r| &arm_label(r) == arm) {
            if !last.iter().any(|r| r.get("seed") == row.get("seed")) {
                last.push(row);
            }
        }
        let column = |c: &str| -> Vec<f64> {
            let mut v: Vec<f64> = last
                .iter()
                .filter_map(|r| r.num(c))
                .filter(|x| x.is_finite())
                .collect();
            v.sort_by(f64::total_cmp);
            v
        };
        let spread = |c: &str| match quartiles(&column(c)) {
            Some((q1, m, q3)) => format!("{m:.4} ({q1:.4} to {q3:.4})"),
            None => "-".into(),
        };
        let median = |c: &str, digits: usize| {
            quartiles(&column(c)).map_or("-".into(), |(_, m, _)| format!("{m:.digits$}"))
        };
        writeln!(
            out,
            "| {arm} | {} | {} | {} | {} | {} | {} |",
            last.len(),
            spread("best_accuracy"),
            spread("budget_best_accuracy"),
            median("budget_trials", 1),
            median("widths_tried", 1),
            median("wall_seconds", 1),
        )?;
    }
    Ok(out)
}

/// The first quartile, the median and the third quartile of sorted `values` (linear
/// interpolation between order statistics, numpy's default); `None` when empty.
fn quartiles(values: &[f64]) -> Option<(f64, f64, f64)> {
    let at = |q: f64| {
        let pos = q * (values.len() - 1) as f64;
        let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
        values[lo] + (values[hi] - values[lo]) * (pos - lo as f64)
    };
    (!values.is_empty()).then(|| (at(0.25), at(0.5), at(0.75)))
}

/// The width as the CSV and the log name it: the fixed width, or the searched range.
fn width_label(plan: &Plan) -> String {
    match plan.width {
        Some(width) => width.to_string(),
        None => format!("{}-{} step {}", WIDTH.0, WIDTH.1, WIDTH.2),
    }
}

/// The arm as the table names it: the grouped arm with its group size (the runner at K = 1
/// separates what grouping buys from what saturate's kernels buy).
fn arm_label(row: &Row) -> String {
    match row.get("arm") {
        "grouped" => format!("grouped K={}", row.get("group_size")),
        arm => arm.to_owned(),
    }
}

// ---------------------------------------------------------------------------------------------

/// The command line.
#[derive(Debug)]
struct Options {
    arm: Option<String>,
    seed: u64,
    short: bool,
    width: Option<usize>,
    trials: Option<usize>,
    group_size: Option<usize>,
    csv: PathBuf,
    budget: Option<f64>,
    table: Option<PathBuf>,
}

const USAGE: &str = "study_bench --arm sequential|grouped [--seed N] [--width N] [--trials N] \
                     [--group-size K] [--budget-seconds S] [--csv PATH] [--short] \
                     | study_bench --table CSV";

fn options() -> Result<Options, Box<dyn Error>> {
    let mut o = Options {
        arm: None,
        seed: 0,
        short: std::env::var_os("SATURATE_SHORT").is_some_and(|v| v == "1"),
        width: None,
        trials: None,
        group_size: None,
        csv: PathBuf::from("target/bench/study.csv"),
        budget: None,
        table: None,
    };
    let mut args = std::env::args().skip(1);
    let value = |name: &str, args: &mut dyn Iterator<Item = String>| {
        args.next()
            .ok_or_else(|| format!("{name} needs a value ({USAGE})"))
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--arm" => o.arm = Some(value("--arm", &mut args)?),
            "--seed" => o.seed = value("--seed", &mut args)?.parse()?,
            "--width" => o.width = Some(value("--width", &mut args)?.parse()?),
            "--trials" => o.trials = Some(value("--trials", &mut args)?.parse()?),
            "--group-size" => o.group_size = Some(value("--group-size", &mut args)?.parse()?),
            "--csv" => o.csv = value("--csv", &mut args)?.into(),
            "--budget-seconds" => o.budget = Some(value("--budget-seconds", &mut args)?.parse()?),
            "--table" => o.table = Some(value("--table", &mut args)?.into()),
            "--short" => o.short = true,
            other => return Err(format!("unknown argument `{other}` ({USAGE})").into()),
        }
    }
    Ok(o)
}

fn main() -> Result<(), Box<dyn Error>> {
    // Large tensors are freed and allocated every step: keep freed memory in the heap
    // (glibc's defaults return it to the kernel and page-fault it back; book: CPU backends).
    saturate::malloc::tune();
    // On NdArray, `main` becomes a worker of rayon's pool: its parallel loops run in place.
    let _ = saturate::vmap::join_host_pool_for::<Inner>();
    let o = options()?;
    if let Some(csv) = &o.table {
        print!("{}", table(csv)?);
        return Ok(());
    }
    let arm = o
        .arm
        .clone()
        .ok_or_else(|| format!("choose an arm ({USAGE})"))?;
    let mut plan = if o.short {
        Plan::short()
    } else {
        Plan::paper()
    };
    if let Some(width) = o.width {
        plan.width = Some(width);
    }
    if let Some(trials) = o.trials {
        plan.trials = trials;
    }
    if let Some(k) = o.group_size {
        if k == 0 {
            return Err(format!("--group-size must be at least 1 ({USAGE})").into());
        }
        if arm != "grouped" {
            return Err(format!("--group-size is the grouped arm's ({USAGE})").into());
        }
        plan.group_size = k;
    }
    Inner::seed(&Default::default(), o.seed);
    let data = Data::new(&plan, o.seed);
    let backend = common::backend::name();
    let commit = std::env::var("SATURATE_BENCH_COMMIT").unwrap_or_default();
    println!(
        "{arm} arm, seed {}: {} trials{} of the CNN (width {}) on {} / {} images, batch {}, \
         {} epoch(s) of {} steps; backend {backend}",
        o.seed,
        plan.trials,
        if arm == "grouped" {
            format!(" in groups of {}", plan.group_size)
        } else {
            String::new()
        },
        width_label(&plan),
        data.train.len(),
        data.valid.len(),
        plan.batch_size,
        plan.epochs,
        plan.steps_per_epoch(),
    );

    let (train_len, valid_len) = (data.train.len(), data.valid.len());
    let load_before = load_average();
    let started = Instant::now();
    let (run, profile, group_size, budget) = match arm.as_str() {
        "sequential" => {
            let (run, profile) = profiled(|| sequential(&plan, &data, o.seed));
            let run = run?;
            // The fixed time budget is this arm's own wall time.
            (run, profile.clone(), 1, (profile.wall_seconds, run))
        }
        "grouped" => {
            let (result, profile) = profiled(|| grouped(&plan, data, o.seed));
            let (run, mut state) = result?;
            let budget = o.budget.unwrap_or(profile.wall_seconds);
            let left = Duration::from_secs_f64(budget).saturating_sub(started.elapsed());
            if o.budget.is_some() {
                continue_until(&plan, &mut state, left)?;
            }
            let in_budget = ArmRun::within(&state.study, budget)?;
            (run, profile, plan.group_size, (budget, in_budget))
        }
        other => return Err(format!("unknown arm `{other}` ({USAGE})").into()),
    };
    let load_after = load_average();

    let wall = profile.wall_seconds;
    let row = format!(
        "{arm},{},{backend},{commit},{},{},{},{},{},{group_size},{},{wall},{},{},{},{},{},{},{},{},{}",
        o.seed,
        width_label(&plan),
        train_len,
        valid_len,
        plan.batch_size,
        plan.epochs,
        plan.trials,
        plan.trials as f64 / (wall / 60.0),
        run.best,
        budget.0,
        budget.1.complete,
        budget.1.best,
        load_before,
        load_after,
        budget.1.widths,
        profile.to_csv_row(),
    );
    append_row(&o.csv, &row)?;
    println!(
        "{arm}: {} trials in {wall:.1} s ({:.2} trials/min), best accuracy {:.4}; in {:.0} s: \
         {} trials, best {:.4}, {} width(s)",
        plan.trials,
        plan.trials as f64 / (wall / 60.0),
        run.best,
        budget.0,
        budget.1.complete,
        budget.1.best,
        budget.1.widths,
    );
    print!("{profile}");
    println!("row appended to {}", o.csv.display());
    if run.finished != plan.trials {
        // The row is written first: a long run is not thrown away, its `best_accuracy` is
        // over the complete trials only, and this exit status says it is not the protocol.
        // A failed trial (its loss diverged) has finished: it is a result of the search.
        return Err(format!(
            "{} of {} trials finished: the benchmark needs all of them",
            run.finished, plan.trials
        )
        .into());
    }
    Ok(())
}
