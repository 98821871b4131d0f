//! A small CNN on Fashion-MNIST, 24 trials trained in groups of 8: the README's main job.
//!
//! Shows the trainer level of saturate's runner: a [`GroupTask`] describes the hyperparameters,
//! the model, the optimizer, one shared data batch per step and the evaluation, and
//! [`run_trainer`] does the rest. The conv width is a *shared* hyperparameter (it changes
//! shapes, so one value per group); learning rate, momentum, weight decay and dropout are
//! *member* hyperparameters (one value per trial, all trained as one batched model). TPE with
//! constant liar keeps a group's members apart; the median pruner stops weak members after
//! their second epoch, and refill gives their slots to new trials of the same width (up to 16
//! trials per group; then the next group samples its own width). The
//! study lives in a journal file that Python Optuna and optuna-dashboard read; rerunning the
//! example continues the same study.
//!
//! Run: `cargo run --release --example fashion_mnist` (the shipped subset: 8,192 training and
//! 2,048 test images; `-- --full` or `SATURATE_FULL=1` for the full 60,000 / 10,000 from
//! files, see saturate-data; `-- --storage URL` for another storage than
//! `./fashion_mnist.journal`: a journal file path, `sqlite:///PATH` or `postgresql://...`). `SATURATE_SHORT=1` shrinks everything to a smoke test (512 / 256
//! images, 6 trials in groups of 3, one epoch of 4 steps). `-- --seed N` sets TPE's seed, the
//! backend's, which draws the initial weights and the dropout masks, and the order of the
//! training images (0 by default); `-- --max-trials-per-group N|none` the most trials one group takes (16 by default:
//! `TrainerConfig::max_trials_per_group`); `-- --refill-while-promising` also closes a group
//! once TPE would no longer choose its width (`TrainerConfig::with_refill_while_promising`);
//! `-- --refill-halving ETA` refills a group only while its width is among the best 1/ETA of
//! the widths that have taken as many trials (`TrainerConfig::with_refill_halving`).
//! `-- --trials N`, `-- --epochs N` and
//! `-- --steps-per-epoch N` override the plan's trial count, epochs per trial and steps per
//! epoch (`scripts/bench-pbt.sh` sets the PBT benchmark's budget with them). The last line,
//! `RESULT key=value ...`, is for scripts: run wall time, best accuracy (the highest of any trial
//! at any evaluation, pruned trials included), member-epochs trained.
//!
//! The default run: widths 8, 12 or 16; 3 epochs of 48 steps of 64 images per member (about
//! one pass over the shipped subset), each followed by validation on the 2,048 test images.
//!
//! Time on a 2-core Intel Xeon (AVX-512; NdArray with saturate's host convolutions): the
//! default run (seed 0) took 54.0 s in release on the idle machine (2026-12-05, commit
//! 6e9f57a: 24 trials in 2 groups, widths 12 and 16, 14 complete, 10 pruned, 8 members
//! refilled, slots 86% busy, best validation accuracy 0.8193; the same run in
//! `scripts/bench-refill-limit.sh`); short mode a few seconds in `cargo test`'s build
//! (optimised dependencies, debug assertions on).

mod common;
#[path = "common/fashion_task.rs"]
mod fashion_task;
mod models;

use std::error::Error;

use burn::data::dataset::Dataset;
use burn::tensor::backend::Backend;
use common::backend::Inner;
use fashion_task::FashionTask;
use saturate::data::{FashionMnist, Split};
use saturate::prelude::*;

/// The run's sizes: the default job, or the smoke test of `SATURATE_SHORT=1`.
#[derive(Debug, Clone)]
struct Plan {
    trials: usize,
    group_size: usize,
    epochs: usize,
    batch_size: usize,
    steps_per_epoch: usize,
    /// Use only the first images of each split.
    train_images: Option<usize>,
    valid_images: Option<usize>,
}

impl Plan {
    fn from_env() -> Self {
        if std::env::var_os("SATURATE_SHORT").is_some_and(|v| v == "1") {
            Plan {
                trials: 6,
                group_size: 3,
                epochs: 1,
                batch_size: 64,
                steps_per_epoch: 4,
                train_images: Some(512),
                valid_images: Some(256),
            }
        } else {
            Plan {
                trials: 24,
                group_size: 8,
                epochs: 3,
                batch_size: 64,
                // 3,072 images per epoch (3 epochs: about one pass over the shipped subset):
                // NdArray's convolutions are direct loops, and the run should take minutes.
                steps_per_epoch: 48,
                train_images: None,
                valid_images: None,
            }
        }
    }
}

/// Command-line options.
struct Options {
    /// `--full`: the full Fashion-MNIST from files instead of the shipped subset.
    full: bool,
    /// `--storage URL`: a journal file path, `sqlite:///PATH` or `postgresql://...`.
    storage: String,
    /// `--max-trials-per-group N|none` (`none`: `usize::MAX`).
    per_group: Option<usize>,
    /// `--seed N`: TPE's seed, the backend's and the order of the training images.
    seed: u64,
    /// `--refill-while-promising`: refill a group only while TPE would still choose its width.
    while_promising: bool,
    /// `--refill-halving ETA`: successive halving across widths.
    halving: Option<usize>,
    /// `--trials N`, `--epochs N`, `--steps-per-epoch N`: override the plan.
    trials: Option<usize>,
    epochs: Option<usize>,
    steps_per_epoch: Option<usize>,
}

fn options() -> Result<Options, Box<dyn Error>> {
    let mut full = std::env::var_os(saturate::data::FULL_VAR).is_some_and(|v| v == "1");
    let mut storage = String::from("fashion_mnist.journal");
    let mut per_group = None;
    let mut seed = 0;
    let mut while_promising = false;
    let mut halving = None;
    let (mut trials, mut epochs, mut steps_per_epoch) = (None, None, None);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--full" => full = true,
            "--refill-while-promising" => while_promising = true,
            "--storage" => storage = args.next().ok_or("--storage needs a URL or a path")?,
            "--max-trials-per-group" => {
                let n = args
                    .next()
                    .ok_or("--max-trials-per-group needs a number (or `none`)")?;
                per_group = Some(if n == "none" {
                    usize::MAX
                } else {
                    n.parse()
                        .map_err(|e| format!("--max-trials-per-group {n}: {e}"))?
                });
            }
            "--refill-halving" => {
                let n = args.next().ok_or("--refill-halving needs a number (2 or more)")?;
                halving = Some(n.parse().map_err(|e| format!("--refill-halving {n}: {e}"))?);
            }
            "--seed" => {
                let n = args.next().ok_or("--seed needs a number")?;
                seed = n.parse().map_err(|e| format!("--seed {n}: {e}"))?;
            }
            flag @ ("--trials" | "--epochs" | "--steps-per-epoch") => {
                let n = args.next().ok_or(format!("{flag} needs a number"))?;
                let n = Some(n.parse().map_err(|e| format!("{flag} {n}: {e}"))?);
                match flag {
                    "--trials" => trials = n,
                    "--epochs" => epochs = n,
                    _ => steps_per_epoch = n,
                }
            }
            other => {
                return Err(format!(
                    "unknown argument `{other}` (--full, --storage URL, \
                     --max-trials-per-group N|none, --refill-while-promising, --refill-halving ETA, --seed N, \
                     --trials N, --epochs N, --steps-per-epoch N)"
                )
                .into())
            }
        }
    }
    Ok(Options {
        full,
        storage,
        per_group,
        seed,
        while_promising,
        halving,
        trials,
        epochs,
        steps_per_epoch,
    })
}

fn main() -> Result<(), Box<dyn Error>> {
    // Large tensors are freed and allocated every step: keep freed memory in the heap
    // (glibc's defaults return it to the kernel and page-fault it back; book: CPU backends).
    saturate::malloc::tune();
    // On NdArray, `main` becomes a worker of rayon's pool: its parallel loops run in place.
    let _ = saturate::vmap::join_host_pool_for::<Inner>();
    let Options {
        full,
        storage,
        per_group,
        seed,
        while_promising,
        halving,
        trials,
        epochs,
        steps_per_epoch,
    } = options()?;
    // The same seed, the same run: the weights' initialisation and the dropout masks come
    // from the backend's generator.
    Inner::seed(&Default::default(), seed);
    let mut plan = Plan::from_env();
    plan.trials = trials.unwrap_or(plan.trials);
    plan.epochs = epochs.unwrap_or(plan.epochs);
    plan.steps_per_epoch = steps_per_epoch.unwrap_or(plan.steps_per_epoch);
    let (train, valid) = if full {
        (
            FashionMnist::full(Split::Train)?,
            FashionMnist::full(Split::Test)?,
        )
    } else {
        (FashionMnist::subset_train(), FashionMnist::subset_test())
    };
    let task = FashionTask::new(
        train,
        valid,
        plan.train_images,
        plan.valid_images,
        plan.batch_size,
    )
    .with_shuffle_seed(seed);
    let steps_per_epoch = plan.steps_per_epoch;
    println!("backend: {}", common::backend::name());
    println!(
        "Fashion-MNIST: {} training / {} validation images{}; {} trials in groups of {}, \
         {} epoch(s) of {} steps of {} images",
        task.train.len(),
        task.valid.len(),
        if full {
            " (full set)"
        } else {
            " (shipped subset)"
        },
        plan.trials,
        plan.group_size,
        plan.epochs,
        steps_per_epoch,
        plan.batch_size,
    );

    // ANCHOR: study
    let study = StudyConfig::new()
        .with_name("fashion_mnist")
        .with_direction(StudyDirection::Maximize)
        .with_sampler(
            TpeSamplerConfig::new()
                .with_seed(seed)
                .with_constant_liar(true)
                .init()?,
        )
        // Members are judged from their second epoch on, once 8 trials have finished.
        .with_pruner(
            MedianPrunerConfig::new()
                .with_n_startup_trials(8)
                .with_n_warmup_steps(2)
                .init()?,
        )
        .with_storage(saturate::study::storage::open(&storage)?)
        .with_load_if_exists(true)
        .init()?;
    // ANCHOR_END: study

    // ANCHOR: run
    let mut trainer_config = TrainerConfig::new(steps_per_epoch, plan.epochs);
    if let Some(n) = per_group {
        trainer_config = trainer_config.with_max_trials_per_group(n);
    }
    let mut trainer_config = trainer_config.with_refill_while_promising(while_promising);
    if let Some(eta) = halving {
        trainer_config = trainer_config.with_refill_halving(eta);
    }
    let mut trainer = trainer_config.init(task)?;
    let config = RunConfig::new()
        .with_group_size(plan.group_size)
        .with_n_trials(plan.trials);
    let summary = run_trainer(&study, &config, &mut trainer, &Default::default())?;
    // ANCHOR_END: run

    // The summary ends with the best trial: its number, value and parameters.
    print!("{summary}");
    let occupancy = trainer.occupancy();
    println!(
        "{} group steps, {} members refilled, slots busy {:.0}%, {} group(s) closed by the \
         sampler, {} held by successive halving",
        occupancy.group_steps,
        occupancy.refilled,
        100.0 * occupancy.busy_fraction(),
        occupancy.closed_unpromising,
        occupancy.held_by_halving
    );
    // How the shared width was explored: trials per width over the whole study.
    let mut widths = std::collections::BTreeMap::<i64, usize>::new();
    for trial in study.trials(None)? {
        if let Some(width) = trial.param("width").and_then(|w| w.as_f64()) {
            *widths.entry(width as i64).or_default() += 1;
        }
    }
    let widths: Vec<String> = widths
        .iter()
        .map(|(w, n)| format!("{w} ({n} trials)"))
        .collect();
    println!("widths tried: {}", widths.join(", "));
    println!("(a trial's value is its accuracy on the validation images)");
    println!(
        "storage: {} (study \"fashion_mnist\"; rerun to continue it, or open it with \
         optuna-dashboard)",
        saturate::study::storage::redact_url(&storage)
    );
    let best = summary.best.as_ref();
    println!(
        "RESULT arm=saturate-tpe seed={seed} width={} wall_seconds={:.3} best_accuracy={:.6} \
         member_epochs={:.2} trials={} pruned={} refilled={}",
        best.and_then(|t| t.param("width"))
            .and_then(|w| w.as_f64())
            .unwrap_or(f64::NAN),
        summary.elapsed.as_secs_f64(),
        fashion_task::best_evaluation(&study.trials(None)?),
        occupancy.member_steps as f64 / steps_per_epoch as f64,
        summary.trials(),
        summary.pruned,
        occupancy.refilled
    );
    Ok(())
}
