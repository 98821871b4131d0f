//! Several processes optimizing one study through one storage, each running the group
//! runner ([`saturate::train::run`], groups of 4 trials): a journal file for the processes
//! of one machine, PostgreSQL for several machines.
//!
//! Every worker opens the same storage and the same study (`load_if_exists(true)`: the first
//! one creates it, the others load it). Writes go through the journal's file lock or the
//! database's transactions, so trial numbers stay unique across processes; each group's trials are asked in
//! one write and carry the `saturate:group` and `saturate:worker` (`host:pid`) system
//! attributes. The objective is a cheap synthetic one: a shared `depth` (the same for the
//! whole group, as a shape-changing hyperparameter must be) and per-member `lr` and
//! `momentum`, with a noisy decaying "training curve" reported at every step.
//!
//! Start three workers on one journal:
//!
//! ```text
//! cargo build --release --example distributed
//! for i in 1 2 3; do target/release/examples/distributed --storage study.journal --trials 12 & done; wait
//! ```
//!
//! On several machines, point every worker at one PostgreSQL database (create it once with
//! `createdb optuna`; the first worker creates Optuna's tables), on each host:
//!
//! ```text
//! target/release/examples/distributed --storage postgresql://USER:PASSWORD@DBHOST:5432/optuna --trials 12
//! ```
//!
//! Python Optuna workers may join the same study (`optuna.load_study(study_name="distributed",
//! storage="postgresql://...")`). Each worker prints its groups and trials, then the study's
//! best trial over all workers. Arguments: `--storage URL` (a journal file path,
//! `sqlite:///PATH` or `postgresql://...`; default `distributed.journal`), `--study NAME`
//! (default `distributed`), `--trials N` trials for this worker (default 12), `--heartbeat
//! SECS` (heartbeats every SECS seconds, a trial without one for 3 x SECS failed and retried
//! by the next worker: what a fleet of machines that may die needs), `--step-ms MS` how long
//! each "training step" sleeps (default 10). `SATURATE_SHORT=1` shortens the "training" (5 steps instead of 30).

use std::time::Duration;

use saturate::prelude::*;
use saturate::study::storage::RetryFailedTrialCallback;

/// The study's name in the storage (`--study NAME` for another).
const STUDY_NAME: &str = "distributed";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let short = std::env::var("SATURATE_SHORT").is_ok_and(|v| v == "1");
    let steps = if short { 5 } else { 30 };
    let storage = arg_value("--storage").unwrap_or_else(|| "distributed.journal".into());
    let n_trials: usize = arg_value("--trials").map_or(Ok(12), |n| n.parse())?;
    let study_name = arg_value("--study").unwrap_or_else(|| STUDY_NAME.into());
    let heartbeat: Option<f64> = arg_value("--heartbeat").map(|s| s.parse()).transpose()?;
    let step_ms: u64 = arg_value("--step-ms").map_or(Ok(10), |n| n.parse())?;
    let storage = match heartbeat {
        None => saturate::study::storage::open(&storage)?,
        Some(seconds) => {
            let interval = Duration::try_from_secs_f64(seconds)
                .map_err(|e| format!("--heartbeat {seconds}: {e}"))?;
            saturate::study::storage::open_with_heartbeat(
                &storage,
                interval,
                Some(3 * interval),
                Some(RetryFailedTrialCallback::default().into_callback()),
            )?
        }
    };
    let pid = std::process::id();

    let study = StudyConfig::new()
        .with_name(study_name)
        .with_direction(StudyDirection::Minimize)
        .with_storage(storage)
        .with_load_if_exists(true)
        // `constant_liar` keeps apart the trials asked together (a group, other workers').
        .with_sampler(TpeSamplerConfig::new().with_constant_liar(true).init()?)
        .with_pruner(
            MedianPrunerConfig::new()
                .with_n_startup_trials(4)
                .with_n_warmup_steps(2)
                .init()?,
        )
        .init()?;

    let config = RunConfig::new()
        .with_group_size(4)
        .with_n_trials(n_trials)
        .with_progress(false);
    let summary = run(&study, &config, |g: &mut GroupTrial<'_, DefaultStudy>| {
        let depth = g.shared().suggest_int("depth", 1, 6)?;
        let mut lr = g.member().suggest_float_log("lr", 1e-4, 1.0)?;
        let mut momentum = g.member().suggest_float("momentum", 0.0, 0.99)?;
        let mut numbers = Members::from(g.trial_numbers());
        println!(
            "[worker {pid}] group {} trials {:?} depth {depth}",
            g.group_id(),
            g.trial_numbers()
        );
        let mut values = Members::default();
        for step in 0..steps {
            values = lr
                .iter()
                .zip(momentum.iter())
                .zip(numbers.iter())
                .map(|((&lr, &momentum), &number)| {
                    let noise = 0.05 * noise(number, step as u64);
                    final_loss(depth, lr, momentum) + 1.0 / (1.0 + step as f64) + noise
                })
                .collect();
            // Sleeping stands in for training, so that the workers' groups interleave.
            std::thread::sleep(Duration::from_millis(step_ms));
            let keep = g.report(step, &values)?;
            lr.retain(&keep);
            momentum.retain(&keep);
            numbers.retain(&keep);
            values.retain(&keep);
        }
        for ((number, lr), (momentum, value)) in numbers
            .iter()
            .zip(lr.iter())
            .zip(momentum.iter().zip(values.iter()))
        {
            println!(
                "[worker {pid}] trial {number:3} value {value:.4} depth {depth} lr {lr:.5} \
                 momentum {momentum:.3}"
            );
        }
        Ok(values)
    })?;

    println!(
        "[worker {pid}] done: {} complete, {} pruned, {} failed in {} groups",
        summary.complete, summary.pruned, summary.failed, summary.groups
    );
    let best = study.best_trial()?;
    println!(
        "[worker {pid}] study best so far: trial {} value {:.6} ({} trials in the study)",
        best.number,
        best.value().unwrap_or(f64::NAN),
        study.trials(None)?.len()
    );
    Ok(())
}

/// The loss a member would reach: best near depth 3, lr = 0.03, momentum = 0.9.
fn final_loss(depth: i64, lr: f64, momentum: f64) -> f64 {
    0.2 * (depth - 3).abs() as f64 + 0.5 * (lr.log10() + 1.5).powi(2) + (momentum - 0.9).powi(2)
}

/// Deterministic noise in [-1, 1) for a trial and step (a hash, so no `rand` dependency).
fn noise(trial: u64, step: u64) -> f64 {
    let mut z = trial
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(step.wrapping_mul(0xBF58_476D_1CE4_E5B9));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    2.0 * ((z >> 11) as f64 / (1u64 << 53) as f64) - 1.0
}

/// The value after `flag` on the command line, if given.
fn arg_value(flag: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1).cloned())
}
