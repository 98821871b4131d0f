//! An interrupted study continued from its journal with `load_if_exists(true)`.
//!
//! The first run creates the study `resume` in the journal and runs trials; with
//! `--stop-after K` the process ends in the middle of trial K (after K finished trials,
//! having reported some steps of the next one), as a crash or a killed job would. A second
//! run on the same journal loads the study: trial numbers continue where the first run
//! stopped, and the best trial so far is kept (printed before the new trials start).
//!
//! The trial the interruption left RUNNING stays RUNNING in the journal: without heartbeats
//! nothing else knows that its process is gone. A storage opened with heartbeats
//! (`JournalStorage::with_heartbeat`, `RdbStorage::with_heartbeat`) has the next worker fail
//! such a trial once its last heartbeat is older than the grace period, as Optuna does (see
//! the book's runner chapter). This example uses no heartbeats and fails it explicitly
//! before going on, with the reason in its `fail_reason` system attribute, so the study holds
//! no trial that looks in progress forever. The `Study` API fails only trials it handed out itself
//! (`tell_fail` takes the live `Trial`), so this goes through the storage, as Optuna's
//! `fail_stale_trials` does. Do this only when no other process works on the study: another
//! worker's RUNNING trial would be failed too.
//!
//! Run (the journal is `resume.journal` unless `--storage URL` names another storage: a
//! journal file path, `sqlite:///PATH` or `postgresql://...`):
//!
//! ```text
//! cargo run --release --example resume -- --trials 20 --stop-after 7   # interrupted in trial 7
//! cargo run --release --example resume -- --trials 20                  # fails trial 7, runs 8..27
//! ```
//!
//! `--trials N`: trials to run in this process (default 20). `SATURATE_SHORT=1` shortens each
//! trial (4 steps instead of 20) and makes the default 6 trials.

use saturate::prelude::*;

/// The study's name in the journal.
const STUDY_NAME: &str = "resume";

fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    let short = std::env::var("SATURATE_SHORT").is_ok_and(|v| v == "1");
    let steps = if short { 4 } else { 20 };
    let storage = arg_value("--storage").unwrap_or_else(|| "resume.journal".into());
    let n_trials: usize =
        arg_value("--trials").map_or(Ok(if short { 6 } else { 20 }), |n| n.parse())?;
    let stop_after: Option<usize> = arg_value("--stop-after").map(|k| k.parse()).transpose()?;

    let study = StudyConfig::new()
        .with_name(STUDY_NAME)
        .with_direction(StudyDirection::Minimize)
        .with_storage(saturate::study::storage::open(&storage)?)
        .with_load_if_exists(true)
        .with_sampler(TpeSamplerConfig::new().with_n_startup_trials(4).init()?)
        // Pruning would make the counts below depend on the sampler's luck.
        .with_pruner(NopPruner)
        .init()?;

    let existing = study.trials(None)?;
    if existing.is_empty() {
        println!(
            "new study {STUDY_NAME} in {}",
            saturate::study::storage::redact_url(&storage)
        );
    } else {
        println!("loaded study {STUDY_NAME}: {} trials", existing.len());
        match study.best_trial() {
            Ok(best) => println!("best so far: {}", describe(&best)),
            Err(StudyError::NoCompletedTrial) => println!("best so far: none"),
            Err(e) => return Err(e.into()),
        }
    }
    fail_abandoned_trials(&study)?;

    for done in 0..n_trials {
        let mut trial = study.ask()?;
        let x = trial.suggest_float("x", -5.0, 5.0)?;
        let width = trial.suggest_int_log("width", 8, 512)?;
        let target = (x - 1.5).powi(2) + 0.1 * ((width as f64).log2() - 6.0).powi(2);
        for step in 0..steps {
            trial.report(step, target + 1.0 / (1.0 + step as f64))?;
            if stop_after == Some(done) && step == steps / 2 {
                println!(
                    "interrupted in trial {} at step {step} (--stop-after {done})",
                    trial.number()
                );
                // Ends the process as a crash would: no tell, no cleanup.
                std::process::exit(0);
            }
        }
        let frozen = study.tell(&trial, &[target])?;
        println!(
            "trial {:3} value {target:.4} x {x:.4} width {width}",
            frozen.number
        );
    }
    let best = study.best_trial()?;
    println!("best: {}", describe(&best));
    println!("trials in the study: {}", study.trials(None)?.len());
    Ok(())
}

/// Fails the trials left RUNNING by an interrupted process (see the module docs).
fn fail_abandoned_trials(study: &DefaultStudy) -> Result<(), StudyError> {
    for trial in study.trials(Some(&[TrialState::Running]))? {
        println!(
            "trial {} was left RUNNING (last step {:?}): marking it FAIL",
            trial.number,
            trial.last_step().map(|(step, _)| step)
        );
        let storage = study.storage();
        storage.set_trial_system_attr(
            trial.trial_id,
            "fail_reason",
            "abandoned: its process ended before the trial finished (failed by examples/resume)"
                .into(),
        )?;
        storage.set_trial_state_values(trial.trial_id, TrialState::Fail, None)?;
    }
    Ok(())
}

fn describe(trial: &FrozenTrial) -> String {
    format!(
        "trial {} value {:.6}",
        trial.number,
        trial.value().unwrap_or(f64::NAN)
    )
}

/// The value after `flag` on the command line, if given.
fn arg_value(flag: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1).cloned())
}
