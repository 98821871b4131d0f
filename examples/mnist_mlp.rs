//! An MLP on MNIST-format data with the objective level of saturate's runner: you write the
//! training loop yourself.
//!
//! [`run`] hands the objective a [`GroupTrial`]: `g.shared()` samples the hidden width once for
//! the group (it changes shapes), `g.member()` samples a learning rate and a momentum per
//! trial, the loop trains the K members as one [`Batched`] model with one shared batch per
//! step, and `g.report(epoch, &accuracy)?` asks the pruner about each member and says which go
//! on: the loop then `retain`s them on the model, the optimizer and its own [`Members`] lists,
//! so pruned members stop costing compute.
//!
//! Data: the IDX files (raw or `.gz`) of MNIST in `--data DIR`, or of KMNIST with
//! `--data DIR --kmnist` (same code, same format). Without `--data` it trains on the
//! Fashion-MNIST subset shipped in saturate-data (same format, no download) and says so.
//!
//! Run: `cargo run --release --example mnist_mlp [-- --data DIR [--kmnist]]`; the journal is
//! `./mnist_mlp.journal` (study `mnist_mlp`; `--storage URL` for another: a journal file path,
//! `sqlite:///PATH` or `postgresql://...`). `SATURATE_SHORT=1`
//! shrinks the run to a smoke test (512 / 256 images, 6 trials in groups of 3, one epoch).
//!
//! Time on the 2-core development machine (NdArray; `cargo test`'s build: optimised code,
//! debug assertions on; release is not slower): 10 s for the default run on the shipped
//! subset (16 trials in groups of 8, 3 epochs of 64 steps of 128 images; best validation
//! accuracy 0.86), 0.2 s in short mode.

mod common;
mod models;

use std::error::Error;
use std::path::PathBuf;
use std::sync::Arc;

use burn::data::dataloader::batcher::Batcher;
use burn::data::dataset::transform::{PartialDataset, ShuffledDataset};
use burn::data::dataset::Dataset;
use burn::module::AutodiffModule;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::GradientsParams;
use burn::tensor::{Int, Tensor};
use common::backend::Inner;
use models::mlp::Mlp;
use saturate::data::{FashionMnist, ImageBatch, ImageBatcher, ImageDataset, Kmnist, Mnist, Split};
use saturate::optim::{GroupMomentumConfig, GroupSgdConfig};
use saturate::prelude::*;

type Train = burn::backend::Autodiff<Vmap<Inner>>;
type Valid = Vmap<Inner>;

/// The run's sizes: the default job, or the smoke test of `SATURATE_SHORT=1`.
struct Plan {
    trials: usize,
    group_size: usize,
    epochs: usize,
    batch_size: usize,
    train_images: usize,
    valid_images: usize,
}

impl Plan {
    fn new(short: bool) -> Self {
        if short {
            Plan {
                trials: 6,
                group_size: 3,
                epochs: 1,
                batch_size: 64,
                train_images: 512,
                valid_images: 256,
            }
        } else {
            Plan {
                trials: 16,
                group_size: 8,
                epochs: 3,
                batch_size: 128,
                train_images: usize::MAX,
                valid_images: usize::MAX,
            }
        }
    }
}

/// Command-line options.
struct Options {
    data: Option<PathBuf>,
    kmnist: bool,
    storage: String,
}

fn options() -> Result<Options, Box<dyn Error>> {
    let mut options = Options {
        data: None,
        kmnist: false,
        storage: String::from("mnist_mlp.journal"),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--data" => options.data = Some(args.next().ok_or("--data needs a directory")?.into()),
            "--kmnist" => options.kmnist = true,
            "--storage" => {
                options.storage = args.next().ok_or("--storage needs a URL or a path")?
            }
            other => {
                return Err(format!(
                    "unknown argument `{other}` (--data DIR, --kmnist, --storage URL)"
                )
                .into())
            }
        }
    }
    Ok(options)
}

/// The training and validation (test) splits, and what they are.
fn datasets(options: &Options) -> Result<(ImageDataset, ImageDataset, String), Box<dyn Error>> {
    Ok(match (&options.data, options.kmnist) {
        (Some(dir), false) => (
            Mnist::from_dir(dir, Split::Train)?,
            Mnist::from_dir(dir, Split::Test)?,
            format!("MNIST from {}", dir.display()),
        ),
        (Some(dir), true) => (
            Kmnist::from_dir(dir, Split::Train)?,
            Kmnist::from_dir(dir, Split::Test)?,
            format!("KMNIST from {}", dir.display()),
        ),
        (None, true) => return Err("--kmnist needs --data DIR (KMNIST is not shipped)".into()),
        (None, false) => (
            FashionMnist::subset_train(),
            FashionMnist::subset_test(),
            "no --data given: the Fashion-MNIST subset shipped in saturate-data (same IDX \
             format; pass --data DIR for MNIST, --data DIR --kmnist for KMNIST)"
                .to_string(),
        ),
    })
}

/// The accuracy of every member on `valid`, in batches, without autodiff (no graph is kept).
fn accuracy(
    model: &Batched<Mlp<Train>>,
    valid: &impl Dataset<saturate::data::ImageItem>,
    batcher: &ImageBatcher,
) -> Members<f64> {
    let model: Mlp<Valid> = model.valid();
    let device = model.device();
    let mut hits = vec![0.0; device.members];
    let indices: Vec<usize> = (0..valid.len()).collect();
    for chunk in indices.chunks(1024) {
        let items = chunk.iter().filter_map(|&i| valid.get(i)).collect();
        let batch: ImageBatch<Valid> = batcher.batch(items, &device);
        let predicted: Tensor<Valid, 1, Int> = model.forward(batch.images).argmax(1).squeeze_dim(1);
        let correct = member_values(predicted.equal(batch.targets).float().sum())
            .expect("a sum is one value per member");
        hits.iter_mut().zip(correct).for_each(|(h, c)| *h += c);
    }
    hits.iter().map(|h| h / valid.len() as f64).collect()
}

fn main() -> Result<(), Box<dyn Error>> {
    // Large tensors are freed and allocated every step: keep freed memory in the heap
    // (glibc's defaults return it to the kernel and page-fault it back; book: CPU backends).
    saturate::malloc::tune();
    // On NdArray, `main` becomes a worker of rayon's pool: its parallel loops run in place.
    let _ = saturate::vmap::join_host_pool_for::<Inner>();
    let options = options()?;
    let plan = Plan::new(std::env::var_os("SATURATE_SHORT").is_some_and(|v| v == "1"));
    let (train, valid, what) = datasets(&options)?;
    let train = Arc::new(PartialDataset::new(
        train.clone(),
        0,
        plan.train_images.min(train.len()),
    ));
    let valid = PartialDataset::new(valid.clone(), 0, plan.valid_images.min(valid.len()));
    let steps_per_epoch = train.len() / plan.batch_size;
    println!("data: {what}");
    println!(
        "{} training / {} validation images; {} trials in groups of {}, {} epoch(s) of {} steps \
         of {} images",
        train.len(),
        valid.len(),
        plan.trials,
        plan.group_size,
        plan.epochs,
        steps_per_epoch,
        plan.batch_size
    );
    let batcher = ImageBatcher::normalized(vec![0.13], vec![0.31]);
    let device = Default::default();

    let study = StudyConfig::new()
        .with_name("mnist_mlp")
        .with_direction(StudyDirection::Maximize)
        .with_sampler(
            TpeSamplerConfig::new()
                .with_seed(0)
                .with_constant_liar(true)
                .init()?,
        )
        .with_pruner(
            MedianPrunerConfig::new()
                .with_n_startup_trials(4)
                .with_n_warmup_steps(1)
                .init()?,
        )
        .with_storage(saturate::study::storage::open(&options.storage)?)
        .with_load_if_exists(true)
        .init()?;
    let config = RunConfig::new()
        .with_group_size(plan.group_size)
        .with_n_trials(plan.trials);
    let mut seed = 0;

    // ANCHOR: objective
    let summary = run(&study, &config, |g| {
        let hidden = g.shared().suggest_int_with("hidden", 32, 256, true, 1)? as usize;
        let mut lr = g.member().suggest_float_log("lr", 1e-3, 0.5)?;
        let mut momentum = g.member().suggest_float("momentum", 0.0, 0.95)?;

        let mut model: Batched<Mlp<Train>> =
            Batched::init(g.members(), &device, |d| Mlp::new(hidden, d))?;
        let mut optim = GroupSgdConfig::new()
            .with_momentum(Some(
                GroupMomentumConfig::new().with_momentum(momentum.to_hyper()),
            ))
            .init(g.members())?;
        let mut accuracy_now = Members::default();
        for epoch in 1..=plan.epochs {
            seed += 1;
            let order = ShuffledDataset::new(train.clone(), seed);
            let device = model.device(); // its member count follows `retain`
            for step in 0..steps_per_epoch {
                let items = (step * plan.batch_size..(step + 1) * plan.batch_size)
                    .filter_map(|i| order.get(i))
                    .collect();
                // One batch for the whole group: every member reads the same images.
                let batch: ImageBatch<Train> = batcher.batch(items, &device);
                let logits = model.forward(batch.images);
                let loss = CrossEntropyLossConfig::new()
                    .init(&device)
                    .forward(logits, batch.targets);
                let grads = GradientsParams::from_grads(loss.backward(), &*model);
                model = optim.step(&lr, model, grads)?;
            }
            accuracy_now = accuracy(&model, &valid, &batcher);
            // The pruner's verdict per member; `?` ends the group if none goes on.
            let keep = g.report(epoch as i64, &accuracy_now)?;
            // Everything that holds one entry per member keeps the same members, in one call.
            (
                &mut model,
                &mut optim,
                &mut lr,
                &mut momentum,
                &mut accuracy_now,
            )
                .retain_members(&keep)?;
        }
        Ok(accuracy_now) // told to the members still running
    })?;
    // ANCHOR_END: objective

    // The summary ends with the best trial: its number, value and parameters.
    print!("{summary}");
    println!("(a trial's value is its accuracy on the validation images)");
    println!(
        "storage: {} (study \"mnist_mlp\")",
        saturate::study::storage::redact_url(&options.storage)
    );
    Ok(())
}
