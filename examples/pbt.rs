//! Population-based training of the Fashion-MNIST CNN: one group of 8 members trains for the
//! whole budget, and every 2 epochs the worst quarter becomes copies of the best quarter
//! (weights and optimizer state: a gather inside the group's tensors) with their learning
//! rate, momentum, weight decay and dropout perturbed (x0.8 or x1.2) or resampled. Each
//! member's constant-hyperparameter segment is a trial of the study; the run ends by printing
//! the hyperparameter schedule (lineage) of the best final member.
//!
//! Run: `cargo run --release --example pbt` (the shipped subset; `-- --storage URL` for
//! another storage than `./pbt.journal`; `-- --seed N`; `-- --interval N` for an exploit step
//! every N epochs instead of 2, where an N above the 8 epochs trains the initial population
//! without any exploit; `-- --member width=12,lr=0.1,momentum=0.6,weight_decay=1e-4,dropout=0.3`,
//! repeatable, for a member that starts from these values instead of sampled ones, a name
//! left out being sampled). `SATURATE_SHORT=1` shrinks it to a
//! smoke test (a group of 4, 4 epochs of 4 steps on 512 images). The study is a new one
//! each run (`pbt-<seed>` with a number appended when taken): a PBT population lives in one
//! run. `saturate lineage --storage pbt.journal --study-name NAME --trial-number N` prints any
//! trial's schedule. The last line, `RESULT key=value ...`, is for scripts
//! (`scripts/bench-pbt.sh`): run wall time, best accuracy (the highest of any member at any
//! evaluation), best final member, width, member-epochs trained, exploits and their copy and
//! study-write times.

mod common;
#[path = "common/fashion_task.rs"]
mod fashion_task;
mod models;

use std::error::Error;

use fashion_task::FashionTask;
use saturate::data::FashionMnist;
use saturate::prelude::*;
use saturate::study::distributions::{Distribution, FloatDistribution};
use saturate::study::study::FixedParams;
use saturate::train::pbt::{lineage, PbtConfig};

fn main() -> Result<(), Box<dyn Error>> {
    saturate::malloc::tune();
    let short = std::env::var_os("SATURATE_SHORT").is_some_and(|v| v == "1");
    let (mut storage, mut seed, mut interval) = (String::from("pbt.journal"), 0u64, 2usize);
    let mut members: Vec<FixedParams> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--storage" => storage = args.next().ok_or("--storage needs a URL or a path")?,
            "--seed" => {
                let n = args.next().ok_or("--seed needs a number")?;
                seed = n.parse().map_err(|e| format!("--seed {n}: {e}"))?;
            }
            "--interval" => {
                let n = args.next().ok_or("--interval needs a number of epochs")?;
                interval = n.parse().map_err(|e| format!("--interval {n}: {e}"))?;
            }
            "--member" => {
                let spec = args.next().ok_or("--member needs name=value,...")?;
                members.push(member_values(&spec)?);
            }
            other => {
                return Err(format!(
                    "unknown argument `{other}` (--storage URL, --seed N, --interval EPOCHS, \
                     --member name=value,...)"
                )
                .into())
            }
        }
    }
    // The same seed, the same run: the weights' initialisation and the dropout masks come
    // from the backend's generator, the order of the training images from the task's shuffle
    // seed (the PBT draws and the sampler take the seed below).
    {
        use burn::tensor::backend::Backend;
        common::backend::Inner::seed(&Default::default(), seed);
    }
    // (group size, epochs, steps per epoch, training images, validation images)
    let (k, epochs, steps, train_images, valid_images) = if short {
        (4, 4, 4, Some(512), Some(256))
    } else {
        (8, 8, 24, None, None)
    };
    let task = FashionTask::new(
        FashionMnist::subset_train(),
        FashionMnist::subset_test(),
        train_images,
        valid_images,
        64,
    )
    .with_shuffle_seed(seed);
    println!("backend: {}", common::backend::name());

    // ANCHOR: pbt
    // The distributions are the task's own (`suggest_members`): explored values stay in them.
    let float = |low, high, log| -> Result<Distribution, Box<dyn Error>> {
        Ok(Distribution::Float(FloatDistribution::new(
            low, high, log, None,
        )?))
    };
    let pbt = PbtConfig::new(interval)
        .with_mutation("lr", float(1e-3, 0.3, true)?)
        .with_mutation("momentum", float(0.0, 0.95, false)?)
        .with_mutation("weight_decay", float(1e-6, 1e-2, true)?)
        // Dropout lives in the model: the task's `update_model_hyper` sets it.
        .with_mutation("dropout", float(0.0, 0.6, false)?)
        .with_seed(seed);
    let storage = saturate::study::storage::open(&storage)?;
    let mut name = format!("pbt-{seed}");
    let taken: Vec<String> = storage
        .get_all_studies()?
        .into_iter()
        .map(|(_, n)| n)
        .collect();
    let mut n = 1;
    while taken.contains(&name) {
        n += 1;
        name = format!("pbt-{seed}-{n}");
    }
    let study = StudyConfig::new()
        .with_name(&name)
        .with_direction(StudyDirection::Maximize)
        .with_sampler(RandomSamplerConfig::new().with_seed(seed).init())
        .with_storage(storage)
        .init()?;
    // Enqueued trials: the group's first members start from them (the width, shared, from
    // the first one that names it).
    for fixed in members {
        study.enqueue(fixed)?;
    }
    let mut trainer = TrainerConfig::new(steps, epochs).with_pbt(pbt).init(task)?;
    let config = RunConfig::new().with_group_size(k).with_n_trials(k);
    let summary = run_trainer(&study, &config, &mut trainer, &Default::default())?;
    // ANCHOR_END: pbt

    print!("{summary}");
    let occupancy = trainer.occupancy();
    println!(
        "study {name}: {} trials ({} exploits), {} group steps",
        study.trials(None)?.len(),
        occupancy.exploits,
        occupancy.group_steps
    );
    println!(
        "exploit steps: {:.2} ms copying members (model and optimizer state), {:.2} ms of \
         study writes",
        occupancy.exploit_copy_time.as_secs_f64() * 1e3,
        occupancy.exploit_study_time.as_secs_f64() * 1e3
    );
    // The members at the last epoch, the best of them, and the schedule that produced it.
    let finals: Vec<_> = study
        .trials(None)?
        .into_iter()
        .filter(|t| t.last_step().is_some_and(|(step, _)| step == epochs as i64))
        .collect();
    let final_value = |t: &saturate::study::FrozenTrial| t.values.as_ref().unwrap()[0];
    let mean_final = finals.iter().map(|t| final_value(t)).sum::<f64>() / finals.len() as f64;
    let last = finals
        .iter()
        .max_by(|a, b| final_value(a).total_cmp(&final_value(b)))
        .ok_or("no member reached the last epoch")?;
    println!(
        "best final member: trial {} (accuracy {:.4}); its schedule:",
        last.number,
        last.values.as_ref().unwrap()[0]
    );
    for segment in lineage(&study, last.number)? {
        let lr = segment
            .params
            .get("lr")
            .and_then(|v| v.as_f64())
            .unwrap_or(f64::NAN);
        let momentum = segment
            .params
            .get("momentum")
            .and_then(|v| v.as_f64())
            .unwrap_or(f64::NAN);
        println!(
            "  epochs {:>2}..{:<2} trial {:>3}: lr {lr:.4}, momentum {momentum:.3}",
            segment.start_step,
            segment.end_step.unwrap_or(segment.start_step),
            segment.trial_number
        );
    }
    let width = summary
        .best
        .as_ref()
        .and_then(|t| t.param("width"))
        .and_then(|w| w.as_f64())
        .unwrap_or(f64::NAN);
    println!(
        "RESULT arm=saturate-pbt seed={seed} width={width} wall_seconds={:.3} \
         best_accuracy={:.6} best_final_accuracy={:.6} mean_final_accuracy={:.6} \
         member_epochs={:.2} exploits={} \
         exploit_copy_ms={:.3} exploit_study_ms={:.3}",
        summary.elapsed.as_secs_f64(),
        fashion_task::best_evaluation(&study.trials(None)?),
        last.values.as_ref().unwrap()[0],
        mean_final,
        occupancy.member_steps as f64 / steps as f64,
        occupancy.exploits,
        occupancy.exploit_copy_time.as_secs_f64() * 1e3,
        occupancy.exploit_study_time.as_secs_f64() * 1e3
    );
    Ok(())
}

/// `width=12,lr=0.1,...`: the values one `--member` pins (the width an integer, the others
/// floats).
fn member_values(spec: &str) -> Result<FixedParams, Box<dyn Error>> {
    const NAMES: [&str; 5] = ["width", "lr", "momentum", "weight_decay", "dropout"];
    let mut fixed = FixedParams::new();
    for pair in spec.split(',') {
        let (name, value) = pair
            .split_once('=')
            .ok_or_else(|| format!("--member {spec}: `{pair}` is not name=value"))?;
        let value = match name {
            "width" => ParamValue::from(
                value
                    .parse::<i64>()
                    .map_err(|e| format!("--member {spec}: width {value}: {e}"))?,
            ),
            _ if NAMES.contains(&name) => ParamValue::from(
                value
                    .parse::<f64>()
                    .map_err(|e| format!("--member {spec}: {name} {value}: {e}"))?,
            ),
            _ => {
                return Err(format!("--member {spec}: unknown `{name}` (one of {NAMES:?})").into())
            }
        };
        fixed.insert(name.to_string(), value);
    }
    Ok(fixed)
}
