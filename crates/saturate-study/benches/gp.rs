//! The GP sampler on the test functions of `common/functions.rs`: best values over seeds
//! (next to random search), and the time per ask late in a study. `scripts/bench-gp.sh`
//! runs this and Optuna 5.0's GPSampler (`scripts/python/bench_gp.py`) and makes the table.
//!
//! `cargo bench -p saturate-study --bench gp -- quality N_SEEDS N_TRIALS F1,F2,..`
//! prints CSV `sampler,function,seed,best,seconds`;
//! `cargo bench -p saturate-study --bench gp -- ask-time N_SEEDS N_TRIALS F1,F2,..`
//! prints CSV `sampler,function,seed,trials,ms_per_ask`: the mean wall time of the last
//! 10 trials' ask and suggestions (the objective itself is a few arithmetic operations) of
//! one study of N_TRIALS trials. Optuna samples at the first suggestion, saturate in
//! `ask`: timing both together compares the same work.
//!
//! The modes `mo-quality` and `mo-ask-time` do the same on the two-objective functions of
//! `common/mo_functions.rs` (default `zdt1-5d,fonseca-3d,mixed-mo`); `mo-quality` prints CSV
//! `sampler,function,seed,hypervolume,seconds`: the hypervolume of all completed trials
//! against the function's reference point, for the GP sampler, TPE (Optuna 5.0's default
//! sampler for several objectives) and random search.

use std::time::Instant;

use saturate_study::prelude::*;
use saturate_study::study::{ObjectiveError, ObjectiveValues};

mod common;
use common::functions::{Objective, FUNCTIONS};
use common::mo_functions::{hypervolume, MoFunction, MO_FUNCTIONS};

fn gp(seed: u64) -> GpSampler {
    GpSamplerConfig::new().with_seed(seed).init().unwrap()
}

/// A study that minimises `objectives` objectives.
fn study(sampler: impl Sampler + 'static, objectives: usize) -> DefaultStudy {
    StudyConfig::new()
        .with_directions(vec![StudyDirection::Minimize; objectives])
        .with_sampler(sampler)
        .with_pruner(NopPruner)
        .init()
        .unwrap()
}

fn lookup<T: Copy>(table: &[(&'static str, T)], names: &str) -> Vec<(&'static str, T)> {
    names
        .split(',')
        .map(|name| {
            table
                .iter()
                .copied()
                .find(|(n, _)| *n == name)
                .unwrap_or_else(|| panic!("no function {name}"))
        })
        .collect()
}

fn quality(n_seeds: u64, n_trials: usize, functions: &[(&'static str, Objective)]) {
    println!("sampler,function,seed,best,seconds");
    for (name, f) in functions {
        for seed in 0..n_seeds {
            for (label, sampler) in [
                ("saturate-gp", Box::new(gp(seed)) as Box<dyn Sampler>),
                (
                    "random",
                    Box::new(RandomSamplerConfig::new().with_seed(seed).init()),
                ),
            ] {
                let started = Instant::now();
                let study = study(sampler, 1);
                study.optimize(Some(n_trials), None, *f).unwrap();
                let seconds = started.elapsed().as_secs_f64();
                println!(
                    "{label},{name},{seed},{:?},{seconds:.3}",
                    study.best_value().unwrap()
                );
            }
        }
    }
}

fn mo_quality(n_seeds: u64, n_trials: usize, functions: &[(&'static str, MoFunction)]) {
    println!("sampler,function,seed,hypervolume,seconds");
    for (name, function) in functions {
        for seed in 0..n_seeds {
            for (label, sampler) in [
                ("saturate-gp", Box::new(gp(seed)) as Box<dyn Sampler>),
                (
                    "saturate-tpe",
                    Box::new(
                        TpeSamplerConfig::new()
                            .with_optuna_defaults(OptunaDefaults::V5_0)
                            .with_seed(seed)
                            .init()
                            .unwrap(),
                    ),
                ),
                (
                    "random",
                    Box::new(RandomSamplerConfig::new().with_seed(seed).init()),
                ),
            ] {
                let started = Instant::now();
                let study = study(sampler, 2);
                study
                    .optimize(Some(n_trials), None, function.objective)
                    .unwrap();
                let seconds = started.elapsed().as_secs_f64();
                let points: Vec<[f64; 2]> = study
                    .trials(Some(&[TrialState::Complete]))
                    .unwrap()
                    .iter()
                    .map(|t| {
                        let values = t.values.as_deref().unwrap();
                        [values[0], values[1]]
                    })
                    .collect();
                let volume = hypervolume(&points, function.reference);
                println!("{label},{name},{seed},{volume:?},{seconds:.3}");
            }
        }
    }
}

/// The GP sampler's time per ask on a study of `objectives` objectives.
fn ask_time<V, F>(objectives: usize, n_seeds: u64, n_trials: usize, functions: &[(&'static str, F)])
where
    V: ObjectiveValues,
    F: Fn(&mut Trial) -> Result<V, ObjectiveError>,
{
    println!("sampler,function,seed,trials,ms_per_ask");
    for (name, f) in functions {
        for seed in 0..n_seeds {
            let study = study(gp(seed), objectives);
            let mut times = Vec::with_capacity(n_trials);
            for _ in 0..n_trials {
                let started = Instant::now();
                let mut trial = study.ask().unwrap();
                let values = f(&mut trial).unwrap();
                times.push(started.elapsed().as_secs_f64());
                study.tell(&trial, &values.into_values()).unwrap();
            }
            let last = &times[times.len().saturating_sub(10)..];
            let ms = 1e3 * last.iter().sum::<f64>() / last.len() as f64;
            println!("saturate-gp,{name},{seed},{n_trials},{ms:.3}");
        }
    }
}

/// Every trial's parameters (`{:?}`, bit for bit) and value: a fixed-seed trace to check
/// that an optimisation does not change what the sampler suggests.
fn params(n_seeds: u64, n_trials: usize, functions: &[(&'static str, Objective)]) {
    println!("function,seed,trial,params,value");
    for (name, f) in functions {
        for seed in 0..n_seeds {
            let study = study(gp(seed), 1);
            for number in 0..n_trials {
                let mut trial = study.ask().unwrap();
                let value = f(&mut trial).unwrap();
                let params: Vec<String> = trial
                    .params()
                    .iter()
                    .map(|(k, v)| format!("{k}={v:?}"))
                    .collect();
                println!("{name},{seed},{number},{},{value:?}", params.join(";"));
                study.tell(&trial, &[value]).unwrap();
            }
        }
    }
}

/// [`params`] with three trials asked before they are told (qLogEI on the RUNNING ones) and,
/// with `constrained`, a constraint on the value (feasible below the median-ish
/// `value <= 10`; qLogCEI): the trace of the sampler's other paths.
fn params_batch(
    n_seeds: u64,
    n_trials: usize,
    functions: &[(&'static str, Objective)],
    constrained: bool,
) {
    println!("function,seed,trial,params,value");
    for (name, f) in functions {
        for seed in 0..n_seeds {
            let study = study(gp(seed), 1);
            let mut number = 0;
            while number < n_trials {
                let mut trials: Vec<_> = (0..3).map(|_| study.ask().unwrap()).collect();
                for trial in &mut trials {
                    let value = f(trial).unwrap();
                    if constrained {
                        trial.set_constraint("c", value - 10.0).unwrap();
                    }
                    let params: Vec<String> = trial
                        .params()
                        .iter()
                        .map(|(k, v)| format!("{k}={v:?}"))
                        .collect();
                    println!("{name},{seed},{number},{},{value:?}", params.join(";"));
                    study.tell(trial, &[value]).unwrap();
                    number += 1;
                }
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let mode = args.first().map_or("quality", String::as_str);
    let n_seeds = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(10);
    let n_trials = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(60);
    let names = args.get(3).map(String::as_str);
    let functions = || lookup(&FUNCTIONS, names.unwrap_or("branin,hartmann-6,mixed"));
    let mo_functions = || {
        lookup(
            &MO_FUNCTIONS,
            names.unwrap_or("zdt1-5d,fonseca-3d,mixed-mo"),
        )
    };
    match mode {
        "quality" => quality(n_seeds, n_trials, &functions()),
        "ask-time" => ask_time(1, n_seeds, n_trials, &functions()),
        "mo-quality" => mo_quality(n_seeds, n_trials, &mo_functions()),
        "mo-ask-time" => {
            let objectives: Vec<_> = mo_functions()
                .into_iter()
                .map(|(name, function)| (name, function.objective))
                .collect();
            ask_time(2, n_seeds, n_trials, &objectives);
        }
        "params" => params(n_seeds, n_trials, &functions()),
        "params-batch" => params_batch(n_seeds, n_trials, &functions(), true),
        "params-batch-unconstrained" => params_batch(n_seeds, n_trials, &functions(), false),
        other => panic!(
            "unknown mode {other}: quality, ask-time, mo-quality, mo-ask-time, params, \
             params-batch or params-batch-unconstrained"
        ),
    }
}
