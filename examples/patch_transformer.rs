//! A ViT-style transformer on Fashion-MNIST, trained in groups: the transformer family.
//!
//! Each 28x28 image is cut into 16 patches of 7x7 pixels; a linear layer embeds each patch,
//! a learned position embedding is added, burn-nn's `TransformerEncoder` mixes them, and the
//! mean over patches goes to a linear classifier. `d_model` is a *shared* hyperparameter (it
//! changes every shape, so one value per group); the learning rate and the weight decay of
//! AdamW are *member* hyperparameters, one per trial, all K trained as one batched model. The
//! objective level of the runner: the loop is written out, and `g.report` prunes members.
//!
//! Run: `cargo run --release --example patch_transformer` (the shipped Fashion-MNIST subset;
//! `SATURATE_FULL=1` for the full set from files, see saturate-data); the journal is
//! `./patch_transformer.journal` (study `patch_transformer`; `--storage URL` for another: a
//! journal file path, `sqlite:///PATH` or `postgresql://...`).
//! `SATURATE_SHORT=1` shrinks the run to a smoke test (512 / 256 images, 6 trials in groups
//! of 3, one epoch).
//!
//! Time on the 2-core development machine (NdArray; `cargo test`'s build: optimised code,
//! debug assertions on; release is not slower): 4 minutes for the default run (16 trials in
//! groups of 8, 2 epochs of 64 steps of 128 images; best validation accuracy 0.80), 4 s in
//! short mode.

mod common;
mod models;

use std::error::Error;
use std::sync::Arc;

use burn::data::dataloader::batcher::Batcher;
use burn::data::dataset::transform::{PartialDataset, ShuffledDataset};
use burn::data::dataset::Dataset;
use burn::module::AutodiffModule;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::GradientsParams;
use burn::tensor::{Int, Tensor};
use common::backend::Inner;
use models::transformer::PatchTransformer;
use saturate::data::{FashionMnist, ImageBatch, ImageBatcher, ImageItem, Split};
use saturate::optim::GroupAdamWConfig;
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
                epochs: 2,
                batch_size: 128,
                train_images: usize::MAX,
                valid_images: usize::MAX,
            }
        }
    }
}

/// `--storage URL`.
fn storage_url() -> Result<String, Box<dyn Error>> {
    let mut storage = String::from("patch_transformer.journal");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--storage" => storage = args.next().ok_or("--storage needs a URL or a path")?,
            other => return Err(format!("unknown argument `{other}` (--storage URL)").into()),
        }
    }
    Ok(storage)
}

/// The accuracy of every member on `valid`, in batches, without autodiff.
fn accuracy(
    model: &Batched<PatchTransformer<Train>>,
    valid: &impl Dataset<ImageItem>,
    batcher: &ImageBatcher,
) -> Members<f64> {
    let model: PatchTransformer<Valid> = model.valid();
    let device = model.device();
    let mut hits = vec![0.0; device.members];
    let indices: Vec<usize> = (0..valid.len()).collect();
    for chunk in indices.chunks(512) {
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
    let storage = storage_url()?;
    let plan = Plan::new(std::env::var_os("SATURATE_SHORT").is_some_and(|v| v == "1"));
    let (train, valid) = (
        FashionMnist::load(Split::Train)?,
        FashionMnist::load(Split::Test)?,
    );
    let train = Arc::new(PartialDataset::new(
        train.clone(),
        0,
        plan.train_images.min(train.len()),
    ));
    let valid = PartialDataset::new(valid.clone(), 0, plan.valid_images.min(valid.len()));
    let steps_per_epoch = train.len() / plan.batch_size;
    println!(
        "Fashion-MNIST: {} training / {} validation images; {} trials in groups of {}, \
         {} epoch(s) of {} steps of {} images",
        train.len(),
        valid.len(),
        plan.trials,
        plan.group_size,
        plan.epochs,
        steps_per_epoch,
        plan.batch_size
    );
    let batcher = ImageBatcher::normalized(vec![0.286], vec![0.353]);
    let device = Default::default();

    let study = StudyConfig::new()
        .with_name("patch_transformer")
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
        .with_storage(saturate::study::storage::open(&storage)?)
        .with_load_if_exists(true)
        .init()?;
    let config = RunConfig::new()
        .with_group_size(plan.group_size)
        .with_n_trials(plan.trials);
    let mut seed = 0;

    // ANCHOR: objective
    let summary = run(&study, &config, |g| {
        // 4 attention heads: d_model a multiple of 4.
        let d_model = g.shared().suggest_int_with("d_model", 16, 64, false, 16)? as usize;
        let mut lr = g.member().suggest_float_log("lr", 1e-4, 1e-2)?;
        let mut weight_decay = g.member().suggest_float_log("weight_decay", 1e-5, 1e-1)?;

        let mut model: Batched<PatchTransformer<Train>> =
            Batched::init(g.members(), &device, |d| PatchTransformer::new(d_model, d))?;
        let mut optim = GroupAdamWConfig::new()
            .with_weight_decay(weight_decay.to_hyper())
            .init(g.members())?;
        let mut accuracy_now = Members::default();
        for epoch in 1..=plan.epochs {
            seed += 1;
            let order = ShuffledDataset::new(train.clone(), seed);
            let device = model.device();
            for step in 0..steps_per_epoch {
                let items = (step * plan.batch_size..(step + 1) * plan.batch_size)
                    .filter_map(|i| order.get(i))
                    .collect();
                let batch: ImageBatch<Train> = batcher.batch(items, &device);
                let loss = CrossEntropyLossConfig::new()
                    .init(&device)
                    .forward(model.forward(batch.images), batch.targets);
                let grads = GradientsParams::from_grads(loss.backward(), &*model);
                model = optim.step(&lr, model, grads)?;
            }
            accuracy_now = accuracy(&model, &valid, &batcher);
            let keep = g.report(epoch as i64, &accuracy_now)?;
            model = model.retain(&keep)?;
            optim.retain(&keep)?;
            for values in [&mut lr, &mut weight_decay, &mut accuracy_now] {
                values.retain(&keep);
            }
        }
        Ok(accuracy_now)
    })?;
    // ANCHOR_END: objective

    // The summary ends with the best trial: its number, value and parameters.
    print!("{summary}");
    println!("(a trial's value is its accuracy on the validation images)");
    println!(
        "storage: {} (study \"patch_transformer\")",
        saturate::study::storage::redact_url(&storage)
    );
    Ok(())
}
