//! The sampler conformance suite (after Optuna's `optuna/testing/pytest_samplers.py`).
//!
//! Every property takes a factory `make(seed)` that builds a fresh sampler and panics,
//! naming the property and what went wrong, when the sampler breaks it. The studies
//! suggest only the parameters of [`suite_grid`] (a grid sampler needs them all).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::distributions::{
    CategoricalDistribution, Choice, Distribution, FloatDistribution, IntDistribution, ParamValue,
};
use crate::error::Result;
use crate::pruners::NopPruner;
use crate::samplers::{Sampler, SearchSpace};
use crate::study::{DefaultStudy, Study, StudyConfig, StudyView};
use crate::trial::{FrozenTrial, StudyDirection, Trial, TrialState};

/// Runs every property of the suite on the samplers `make` builds.
pub fn run_sampler_suite(make: impl Fn(u64) -> Box<dyn Sampler>) {
    values_stay_inside_their_distributions(&make);
    single_value_distributions_return_their_value(&make);
    same_seed_gives_the_same_sequence(&make);
    different_seeds_give_different_sequences(&make);
    nan_objective_values_are_survived(&make);
    conditional_parameters_are_sampled(&make);
    two_objective_studies_are_sampled(&make);
}

/// Distributions with exactly one value, of every kind (float, log, stepped wider than
/// the range, int, log int, stepped int, categorical).
pub fn single_value_distributions() -> Vec<(&'static str, Distribution)> {
    vec![
        (
            "single_f",
            FloatDistribution::new(2.0, 2.0, false, None)
                .expect("valid")
                .into(),
        ),
        (
            "single_flog",
            FloatDistribution::new(0.3, 0.3, true, None)
                .expect("valid")
                .into(),
        ),
        // The step is wider than the range: only `low` is on the grid.
        (
            "single_fstep",
            FloatDistribution::new(0.5, 0.7, false, Some(0.25))
                .expect("valid")
                .into(),
        ),
        (
            "single_i",
            IntDistribution::new(3, 3, false, 1).expect("valid").into(),
        ),
        (
            "single_ilog",
            IntDistribution::new(7, 7, true, 1).expect("valid").into(),
        ),
        (
            "single_istep",
            IntDistribution::new(4, 6, false, 3).expect("valid").into(),
        ),
        (
            "single_c",
            CategoricalDistribution::new(vec!["only".into()])
                .expect("valid")
                .into(),
        ),
    ]
}

/// Two values of every parameter the suite suggests: the grid a grid sampler needs to
/// pass it.
pub fn suite_grid() -> BTreeMap<String, Vec<ParamValue>> {
    [
        ("f", vec![ParamValue::Float(-1.0), ParamValue::Float(0.5)]),
        (
            "flog",
            vec![ParamValue::Float(1e-3), ParamValue::Float(0.5)],
        ),
        (
            "fstep",
            vec![ParamValue::Float(0.25), ParamValue::Float(1.0)],
        ),
        ("i", vec![ParamValue::Int(-3), ParamValue::Int(3)]),
        ("ilog", vec![ParamValue::Int(1), ParamValue::Int(100)]),
        ("istep", vec![ParamValue::Int(0), ParamValue::Int(9)]),
        (
            "c",
            vec![ParamValue::from("x"), ParamValue::Categorical(Choice::Null)],
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .chain(single_value_distributions().into_iter().map(|(k, d)| {
        let value = d.single_value().expect("single-valued");
        (k.to_string(), vec![d.to_external(value)])
    }))
    .collect()
}

/// Suggests one parameter of every kind of distribution (`skip_odd`: the integer ones
/// only in even trials) and returns the objective of trial `i`: NaN for every 7th.
fn suggest_every_kind(t: &mut Trial, i: usize, skip_odd: bool) -> Result<f64> {
    let f = t.suggest_float("f", -1.0, 1.0)?;
    let flog = t.suggest_float_log("flog", 1e-3, 1.0)?;
    let fstep = t.suggest_float_step("fstep", 0.0, 1.0, 0.25)?;
    let mut int = 0;
    if !skip_odd || i.is_multiple_of(2) {
        int = t.suggest_int("i", -3, 3)?;
        let ilog = t.suggest_int_log("ilog", 1, 100)?;
        let istep = t.suggest_int_step("istep", 0, 10, 3)?;
        assert!((-3..=3).contains(&int) && (1..=100).contains(&ilog));
        assert!([0, 3, 6, 9].contains(&istep), "istep = {istep}");
    }
    let c = t.suggest_categorical("c", [Choice::from("x"), Choice::Null, Choice::Bool(true)])?;
    assert!((-1.0..=1.0).contains(&f), "f = {f}");
    assert!((1e-3..=1.0).contains(&flog), "flog = {flog}");
    assert!(
        (0.0..=1.0).contains(&fstep) && (fstep / 0.25).fract() == 0.0,
        "fstep = {fstep}"
    );
    assert!(matches!(
        c,
        Choice::Str(_) | Choice::Null | Choice::Bool(true)
    ));
    Ok(if i % 7 == 6 {
        f64::NAN
    } else {
        f * f + flog + fstep + (int * int) as f64
    })
}

fn study_with(sampler: impl Sampler + 'static, objectives: usize) -> DefaultStudy {
    StudyConfig::new()
        .with_directions(vec![StudyDirection::Minimize; objectives])
        .with_sampler(sampler)
        .with_pruner(NopPruner)
        .init()
        .expect("an in-memory study")
}

/// Runs `n` trials of [`suggest_every_kind`] and returns the parameters of each trial.
fn run(sampler: Box<dyn Sampler>, n: usize) -> Vec<BTreeMap<String, ParamValue>> {
    let study = study_with(sampler, 1);
    for i in 0..n {
        let mut t = study.ask().expect("ask");
        let value = suggest_every_kind(&mut t, i, false).expect("suggest");
        study.tell(&t, &[value]).expect("tell");
    }
    study
        .trials(None)
        .expect("trials")
        .iter()
        .map(|t| {
            t.params
                .iter()
                .map(|(k, p)| (k.clone(), p.value()))
                .collect()
        })
        .collect()
}

/// Forwards to a sampler the suite also holds, and records every value it returns that
/// is not inside its distribution (the study would refuse it before the suite saw it).
struct Checked {
    sampler: Arc<Mutex<Box<dyn Sampler>>>,
    outside: Arc<Mutex<Vec<String>>>,
}

impl Checked {
    fn check(&self, name: &str, distribution: &Distribution, value: f64) {
        if !distribution.contains(value) {
            self.outside
                .lock()
                .expect("not poisoned")
                .push(format!("{name} = {value} not in {distribution}"));
        }
    }
}

impl Sampler for Checked {
    fn infer_relative_search_space(
        &mut self,
        study: &StudyView<'_>,
        trial: &FrozenTrial,
    ) -> Result<SearchSpace> {
        let mut sampler = self.sampler.lock().expect("not poisoned");
        sampler.infer_relative_search_space(study, trial)
    }

    fn sample_relative(
        &mut self,
        study: &StudyView<'_>,
        trial: &FrozenTrial,
        search_space: &SearchSpace,
    ) -> Result<BTreeMap<String, f64>> {
        let mut sampler = self.sampler.lock().expect("not poisoned");
        let values = sampler.sample_relative(study, trial, search_space)?;
        for (name, value) in &values {
            match search_space.get(name) {
                Some(distribution) => self.check(name, distribution, *value),
                None => self.outside.lock().expect("not poisoned").push(format!(
                    "sample_relative returned `{name}`, which is not in the search space"
                )),
            }
        }
        Ok(values)
    }

    fn sample_independent(
        &mut self,
        study: &StudyView<'_>,
        trial: &FrozenTrial,
        name: &str,
        distribution: &Distribution,
    ) -> Result<f64> {
        let mut sampler = self.sampler.lock().expect("not poisoned");
        let value = sampler.sample_independent(study, trial, name, distribution)?;
        self.check(name, distribution, value);
        Ok(value)
    }

    fn before_trial(&mut self, study: &StudyView<'_>, trial: &FrozenTrial) -> Result<()> {
        self.sampler
            .lock()
            .expect("not poisoned")
            .before_trial(study, trial)
    }

    fn still_promising(
        &mut self,
        study: &StudyView<'_>,
        values: &BTreeMap<String, (Distribution, f64)>,
    ) -> Result<Option<bool>> {
        self.sampler
            .lock()
            .expect("not poisoned")
            .still_promising(study, values)
    }

    fn after_trial(
        &mut self,
        study: &StudyView<'_>,
        trial: &FrozenTrial,
        state: TrialState,
        values: Option<&[f64]>,
    ) -> Result<()> {
        let mut sampler = self.sampler.lock().expect("not poisoned");
        sampler.after_trial(study, trial, state, values)
    }
}

/// Every value the sampler returns, relative or independent, lies inside its
/// distribution (float, log, stepped, int, log int, stepped int, categorical) over 20
/// trials, past TPE's startup trials and CMA-ES's first generations.
pub fn values_stay_inside_their_distributions(make: &dyn Fn(u64) -> Box<dyn Sampler>) {
    let sampler = Arc::new(Mutex::new(make(3)));
    let checked = Checked {
        sampler: sampler.clone(),
        outside: Arc::default(),
    };
    let outside = checked.outside.clone();
    let study = study_with(checked, 1);
    for i in 0..20 {
        let mut t = study.ask().expect("ask");
        let value = suggest_every_kind(&mut t, i, false)
            .unwrap_or_else(|e| panic!("trial {i}: suggesting failed: {e}"));
        study.tell(&t, &[value]).expect("tell");
    }
    let outside = outside.lock().expect("not poisoned");
    assert!(
        outside.is_empty(),
        "values_stay_inside_their_distributions: {outside:?}"
    );
}

/// Asked directly for a distribution with a single value, the sampler returns that
/// value (the study itself does not ask it; Optuna's `test_sample_single_distribution`).
pub fn single_value_distributions_return_their_value(make: &dyn Fn(u64) -> Box<dyn Sampler>) {
    let sampler = Arc::new(Mutex::new(make(4)));
    let study = study_with(
        Checked {
            sampler: sampler.clone(),
            outside: Arc::default(),
        },
        1,
    );
    for i in 0..12 {
        let mut t = study.ask().expect("ask");
        let value = suggest_every_kind(&mut t, i, false).expect("suggest");
        for (param, distribution) in single_value_distributions() {
            let sampled = sampler
                .lock()
                .expect("not poisoned")
                .sample_independent(&study.view(), t.frozen(), param, &distribution)
                .unwrap_or_else(|e| panic!("trial {i}: {param}: {e}"));
            assert!(
                distribution.contains(sampled),
                "single_value_distributions_return_their_value: trial {i}: {param} = \
                 {sampled} not in {distribution}"
            );
            let suggested = t.suggest(param, distribution.clone()).expect("suggest");
            assert_eq!(suggested, distribution.to_external(sampled), "{param}");
        }
        study.tell(&t, &[value]).expect("tell");
    }
}

/// Two samplers built with the same seed produce the same 30 trials.
pub fn same_seed_gives_the_same_sequence(make: &dyn Fn(u64) -> Box<dyn Sampler>) {
    assert_eq!(
        run(make(1), 30),
        run(make(1), 30),
        "same_seed_gives_the_same_sequence"
    );
}

/// Two samplers built with different seeds produce different sequences.
pub fn different_seeds_give_different_sequences(make: &dyn Fn(u64) -> Box<dyn Sampler>) {
    assert_ne!(
        run(make(1), 30),
        run(make(2), 30),
        "different_seeds_give_different_sequences"
    );
}

/// Studies whose objective is NaN for some (or all) trials keep sampling (Optuna's
/// `test_nan_objective_value`).
pub fn nan_objective_values_are_survived(make: &dyn Fn(u64) -> Box<dyn Sampler>) {
    let study = study_with(make(5), 1);
    for i in 0..15 {
        let mut t = study.ask().expect("ask");
        suggest_every_kind(&mut t, i, false)
            .unwrap_or_else(|e| panic!("nan_objective_values_are_survived: trial {i}: {e}"));
        study.tell(&t, &[f64::NAN]).expect("tell");
    }
    assert_eq!(study.trials(None).expect("trials").len(), 15);
}

/// Parameters that only some trials suggest (Optuna's
/// `test_conditional_parameter_objective`) are sampled inside their distributions.
pub fn conditional_parameters_are_sampled(make: &dyn Fn(u64) -> Box<dyn Sampler>) {
    let study = study_with(make(6), 1);
    for i in 0..20 {
        let mut t = study.ask().expect("ask");
        let value = suggest_every_kind(&mut t, i, true)
            .unwrap_or_else(|e| panic!("conditional_parameters_are_sampled: trial {i}: {e}"));
        study.tell(&t, &[value]).expect("tell");
    }
    let trials = study.trials(None).expect("trials");
    assert!(!trials[1].params.contains_key("i") && trials[2].params.contains_key("i"));
}

/// Studies with two objectives are sampled inside the distributions (Optuna's
/// `test_multi_objective_sample_independent`).
pub fn two_objective_studies_are_sampled(make: &dyn Fn(u64) -> Box<dyn Sampler>) {
    let study = study_with(make(7), 2);
    for i in 0..15 {
        let mut t = study.ask().expect("ask");
        let value = suggest_every_kind(&mut t, i, false)
            .unwrap_or_else(|e| panic!("two_objective_studies_are_sampled: trial {i}: {e}"));
        let f = t.params()["f"].clone();
        let f = match f {
            ParamValue::Float(f) => f,
            other => panic!("f = {other:?}"),
        };
        study.tell(&t, &[value, 1.0 - f]).expect("tell");
    }
}
