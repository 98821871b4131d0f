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

use std::time::Instant;

use saturate_study::prelude::*;

mod common;
use common::functions::{Objective, FUNCTIONS};

fn gp(seed: u64) -> GpSampler {
    GpSamplerConfig::new().with_seed(seed).init().unwrap()
}

fn study(sampler: impl Sampler + 'static) -> DefaultStudy {
    StudyConfig::new()
        .with_sampler(sampler)
        .with_pruner(NopPruner)
        .init()
        .unwrap()
}

fn lookup(names: &str) -> Vec<(&'static str, Objective)> {
    names
        .split(',')
        .map(|name| {
            FUNCTIONS
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
                let study = study(sampler);
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

fn ask_time(n_seeds: u64, n_trials: usize, functions: &[(&'static str, Objective)]) {
    println!("sampler,function,seed,trials,ms_per_ask");
    for (name, f) in functions {
        for seed in 0..n_seeds {
            let study = study(gp(seed));
            let mut times = Vec::with_capacity(n_trials);
            for _ in 0..n_trials {
                let started = Instant::now();
                let mut trial = study.ask().unwrap();
                let value = f(&mut trial).unwrap();
                times.push(started.elapsed().as_secs_f64());
                study.tell(&trial, &[value]).unwrap();
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
            let study = study(gp(seed));
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
            let study = study(gp(seed));
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
    let functions = lookup(
        args.get(3)
            .map_or("branin,hartmann-6,mixed", String::as_str),
    );
    match mode {
        "quality" => quality(n_seeds, n_trials, &functions),
        "ask-time" => ask_time(n_seeds, n_trials, &functions),
        "params" => params(n_seeds, n_trials, &functions),
        "params-batch" => params_batch(n_seeds, n_trials, &functions, true),
        "params-batch-unconstrained" => params_batch(n_seeds, n_trials, &functions, false),
        other => panic!(
            "unknown mode {other}: quality, ask-time, params, params-batch or \
             params-batch-unconstrained"
        ),
    }
}
