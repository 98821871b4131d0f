//! The study layer alone, no Burn: a TPE study driven by hand with `ask` / `tell`.
//!
//! Each trial suggests a log-uniform float (`lr`), a float (`dropout`), an int (`layers`) and
//! a categorical (`optimizer`), then "trains" a synthetic loss curve, reporting one
//! intermediate value per step and asking the [`MedianPruner`] whether to stop. A first
//! trial with fixed parameters is enqueued before the loop (the first `ask` claims it). The
//! best trial is printed at the end.
//!
//! Run: `cargo run --release --example ask_tell`
//!
//! With `-- --storage study.journal` the study is written in Optuna's JournalStorage format
//! (study name `ask-tell`; a later run on the same file adds trials to it), which Python reads
//! with `optuna.load_study(study_name="ask-tell",
//! storage=JournalStorage(JournalFileBackend("study.journal")))` or `optuna-dashboard`;
//! `--storage` also takes `sqlite:///PATH` and `postgresql://...`.
//! `SATURATE_SHORT=1` runs 12 trials of 6 steps instead of 60 of 20.

use saturate::prelude::*;

/// The study's name in the journal.
const STUDY_NAME: &str = "ask-tell";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let short = std::env::var("SATURATE_SHORT").is_ok_and(|v| v == "1");
    let (n_trials, steps) = if short { (12, 6) } else { (60, 20) };

    let mut builder = StudyConfig::new()
        .with_name(STUDY_NAME)
        .with_direction(StudyDirection::Minimize)
        .with_sampler(
            TpeSamplerConfig::new()
                .with_seed(42)
                .with_n_startup_trials(5)
                .init()?,
        )
        // No pruning before 3 trials are complete nor before step 2.
        .with_pruner(
            MedianPrunerConfig::new()
                .with_n_startup_trials(3)
                .with_n_warmup_steps(2)
                .init()?,
        );
    if let Some(url) = storage_arg() {
        builder = builder
            .with_storage(saturate::study::storage::open(&url)?)
            .with_load_if_exists(true);
        println!(
            "writing the study to {}",
            saturate::study::storage::redact_url(&url)
        );
    }
    let study = builder.init()?;

    // A configuration known to be good is tried first, as Optuna's `enqueue_trial`.
    let fixed: FixedParams = [
        ("lr".to_string(), ParamValue::from(0.01)),
        ("dropout".to_string(), ParamValue::from(0.1)),
        ("layers".to_string(), ParamValue::from(2_i64)),
        ("optimizer".to_string(), ParamValue::from("adam")),
    ]
    .into_iter()
    .collect();
    let enqueued = study.enqueue(fixed)?;
    println!("enqueued trial {enqueued} with fixed parameters");

    for _ in 0..n_trials {
        let mut trial = study.ask()?;
        let lr = trial.suggest_float_log("lr", 1e-4, 1.0)?;
        let dropout = trial.suggest_float("dropout", 0.0, 0.5)?;
        let layers = trial.suggest_int("layers", 1, 4)?;
        let optimizer = trial.suggest_categorical("optimizer", ["sgd", "adam"])?;
        let adam = optimizer == "adam";
        let final_loss = synthetic_loss(lr, dropout, layers, adam);

        let mut pruned_at = None;
        for step in 0..steps {
            // Decays towards the final loss; a better configuration is better at every step.
            let value = final_loss + 2.0 / (1.0 + step as f64);
            trial.report(step, value)?;
            if trial.should_prune()? {
                pruned_at = Some(step);
                break;
            }
        }
        let frozen = match pruned_at {
            Some(_) => study.tell_pruned(&trial)?,
            None => study.tell(&trial, &[final_loss])?,
        };
        println!(
            "trial {:3} {:9} value {:8.4}  lr {lr:.5} dropout {dropout:.3} layers {layers} \
             optimizer {optimizer}{}",
            frozen.number,
            format!("{:?}", frozen.state),
            frozen.value().unwrap_or(f64::NAN),
            pruned_at.map_or(String::new(), |s| format!(" (pruned at step {s})")),
        );
    }

    let trials = study.trials(None)?;
    let count = |state| trials.iter().filter(|t| t.state == state).count();
    println!(
        "trials: {} complete: {} pruned: {}",
        trials.len(),
        count(TrialState::Complete),
        count(TrialState::Pruned)
    );
    let best = study.best_trial()?;
    println!(
        "best trial: {} value {:.6}",
        best.number,
        best.value().unwrap_or(f64::NAN)
    );
    for (name, param) in &best.params {
        println!("  {name} = {}", param.value());
    }
    Ok(())
}

/// A loss with its minimum near lr = 0.01, dropout = 0.2, 3 layers, Adam.
fn synthetic_loss(lr: f64, dropout: f64, layers: i64, adam: bool) -> f64 {
    let lr_term = 0.3 * (lr.log10() + 2.0).powi(2);
    let dropout_term = (dropout - 0.2).powi(2);
    let depth_term = 0.1 * (layers - 3).abs() as f64;
    let optimizer_term = if adam { 0.0 } else { 0.2 };
    lr_term + dropout_term + depth_term + optimizer_term
}

/// The value of `--storage URL`, if given.
fn storage_arg() -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--storage")
        .and_then(|i| args.get(i + 1).cloned())
}
