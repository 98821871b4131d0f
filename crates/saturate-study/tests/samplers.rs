//! Sampler conformance suite (run on every sampler) and sampler-specific behaviour.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use saturate_study::prelude::*;
use saturate_study::samplers::SearchSpace;
use saturate_study::study::StudyView;

type Factory = fn(u64) -> Box<dyn Sampler>;

fn factories() -> Vec<(&'static str, Factory)> {
    vec![
        ("random", |s| Box::new(RandomSampler::new(Some(s)))),
        ("tpe", |s| {
            Box::new(TpeSampler::builder().seed(s).n_startup_trials(5).build())
        }),
        ("tpe-multivariate", |s| {
            Box::new(
                TpeSampler::builder()
                    .seed(s)
                    .n_startup_trials(5)
                    .multivariate(true)
                    .group(true)
                    .constant_liar(true)
                    .build(),
            )
        }),
        ("qmc-sobol", |s| {
            Box::new(QmcSampler::new(QmcKind::Sobol, Some(s)))
        }),
        ("qmc-halton", |s| {
            Box::new(QmcSampler::new(QmcKind::Halton, Some(s)))
        }),
        ("cmaes", |s| {
            Box::new(CmaEsSampler::new(Some(s), None, None))
        }),
        ("grid", |s| Box::new(GridSampler::new(grid(), Some(s)))),
    ]
}

fn grid() -> BTreeMap<String, Vec<ParamValue>> {
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
        (
            k.to_string(),
            vec![d.to_external(d.single_value().unwrap())],
        )
    }))
    .collect()
}

/// Distributions with exactly one value, of every kind.
fn single_value_distributions() -> Vec<(&'static str, Distribution)> {
    vec![
        (
            "single_f",
            FloatDistribution::new(2.0, 2.0, false, None)
                .unwrap()
                .into(),
        ),
        (
            "single_flog",
            FloatDistribution::new(0.3, 0.3, true, None).unwrap().into(),
        ),
        // The step is wider than the range: only `low` is on the grid.
        (
            "single_fstep",
            FloatDistribution::new(0.5, 0.7, false, Some(0.25))
                .unwrap()
                .into(),
        ),
        (
            "single_i",
            IntDistribution::new(3, 3, false, 1).unwrap().into(),
        ),
        (
            "single_ilog",
            IntDistribution::new(7, 7, true, 1).unwrap().into(),
        ),
        (
            "single_istep",
            IntDistribution::new(4, 6, false, 3).unwrap().into(),
        ),
        (
            "single_c",
            CategoricalDistribution::new(vec!["only".into()])
                .unwrap()
                .into(),
        ),
    ]
}

/// Runs 30 trials over every kind of distribution; every 7th objective is NaN.
fn run(sampler: Box<dyn Sampler>) -> Vec<BTreeMap<String, ParamValue>> {
    let study = DefaultStudy::builder()
        .sampler(sampler)
        .pruner(NopPruner)
        .build()
        .unwrap();
    for i in 0..30 {
        let mut t = study.ask().unwrap();
        let value = suggest_every_kind(&mut t, i);
        study.tell(&t, &[value]).unwrap();
    }
    study
        .trials(None)
        .unwrap()
        .iter()
        .map(|t| {
            t.params
                .iter()
                .map(|(k, p)| (k.clone(), p.value()))
                .collect()
        })
        .collect()
}

/// Suggests one parameter of every kind of distribution; the objective of trial `i`, NaN
/// for every 7th.
fn suggest_every_kind(t: &mut Trial, i: usize) -> f64 {
    let f = t.suggest_float("f", -1.0, 1.0).unwrap();
    let flog = t.suggest_float_log("flog", 1e-3, 1.0).unwrap();
    let fstep = t.suggest_float_step("fstep", 0.0, 1.0, 0.25).unwrap();
    let i_ = t.suggest_int("i", -3, 3).unwrap();
    let ilog = t.suggest_int_log("ilog", 1, 100).unwrap();
    let istep = t.suggest_int_step("istep", 0, 10, 3).unwrap();
    let c = t
        .suggest_categorical("c", [Choice::from("x"), Choice::Null, Choice::Bool(true)])
        .unwrap();
    assert!((-1.0..=1.0).contains(&f));
    assert!((1e-3..=1.0).contains(&flog));
    assert!(
        (0.0..=1.0).contains(&fstep) && (fstep / 0.25).fract() == 0.0,
        "{fstep}"
    );
    assert!((-3..=3).contains(&i_) && (1..=100).contains(&ilog));
    assert!([0, 3, 6, 9].contains(&istep), "{istep}");
    assert!(matches!(
        c,
        Choice::Str(_) | Choice::Null | Choice::Bool(true)
    ));
    if i % 7 == 6 {
        f64::NAN
    } else {
        f * f + flog + fstep + (i_ * i_) as f64
    }
}

/// Forwards to a sampler the test also holds, and records every value it returns that is
/// not inside its distribution.
struct Checked {
    sampler: Arc<Mutex<Box<dyn Sampler>>>,
    outside: Arc<Mutex<Vec<String>>>,
}

impl Checked {
    fn check(&self, name: &str, distribution: &Distribution, value: f64) {
        if !distribution.contains(value) {
            self.outside
                .lock()
                .unwrap()
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
        let mut sampler = self.sampler.lock().unwrap();
        sampler.infer_relative_search_space(study, trial)
    }

    fn sample_relative(
        &mut self,
        study: &StudyView<'_>,
        trial: &FrozenTrial,
        search_space: &SearchSpace,
    ) -> Result<BTreeMap<String, f64>> {
        let mut sampler = self.sampler.lock().unwrap();
        let values = sampler.sample_relative(study, trial, search_space)?;
        for (name, value) in &values {
            self.check(name, &search_space[name], *value);
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
        let mut sampler = self.sampler.lock().unwrap();
        let value = sampler.sample_independent(study, trial, name, distribution)?;
        self.check(name, distribution, value);
        Ok(value)
    }

    fn before_trial(&mut self, study: &StudyView<'_>, trial: &FrozenTrial) -> Result<()> {
        self.sampler.lock().unwrap().before_trial(study, trial)
    }

    fn after_trial(
        &mut self,
        study: &StudyView<'_>,
        trial: &FrozenTrial,
        state: TrialState,
        values: Option<&[f64]>,
    ) -> Result<()> {
        let mut sampler = self.sampler.lock().unwrap();
        sampler.after_trial(study, trial, state, values)
    }
}

#[test]
fn every_sampler_returns_values_inside_the_distribution() {
    for (name, factory) in factories() {
        let sampler = Arc::new(Mutex::new(factory(3)));
        let checked = Checked {
            sampler: sampler.clone(),
            outside: Arc::default(),
        };
        let outside = checked.outside.clone();
        let study = DefaultStudy::builder()
            .sampler(checked)
            .pruner(NopPruner)
            .build()
            .unwrap();
        // 20 trials: TPE's 5 startup trials and CMA-ES's first generations are well past.
        for i in 0..20 {
            let mut t = study.ask().unwrap();
            let value = suggest_every_kind(&mut t, i);
            for (param, distribution) in single_value_distributions() {
                // `Trial::suggest` no longer asks the sampler for these: ask it directly.
                let sampled = sampler
                    .lock()
                    .unwrap()
                    .sample_independent(&study.view(), t.frozen(), param, &distribution)
                    .unwrap();
                assert!(
                    distribution.contains(sampled),
                    "{name}, trial {i}: {param} = {sampled} not in {distribution}"
                );
                let suggested = t.suggest(param, distribution.clone()).unwrap();
                assert_eq!(suggested, distribution.to_external(sampled), "{name}");
            }
            study.tell(&t, &[value]).unwrap();
        }
        let outside = outside.lock().unwrap();
        assert!(outside.is_empty(), "{name}: {outside:?}");
    }
}

#[test]
fn every_sampler_conforms() {
    for (name, factory) in factories() {
        let a = run(factory(1));
        let b = run(factory(1));
        let c = run(factory(2));
        assert_eq!(a, b, "{name}: same seed, same sequence");
        assert_ne!(a, c, "{name}: different seed, different sequence");
    }
}

#[test]
fn grid_sampler_visits_every_point_once() {
    let space: BTreeMap<String, Vec<ParamValue>> = [
        (
            "a".to_string(),
            vec![ParamValue::Int(1), ParamValue::Int(2), ParamValue::Int(3)],
        ),
        (
            "b".to_string(),
            vec![ParamValue::from("x"), ParamValue::from("y")],
        ),
    ]
    .into();
    let sampler = GridSampler::new(space, Some(0));
    assert_eq!(sampler.len(), 6);
    let study = DefaultStudy::builder().sampler(sampler).build().unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..6 {
        let mut t = study.ask().unwrap();
        let a = t.suggest_int("a", 1, 3).unwrap();
        let b = t.suggest_categorical("b", ["x", "y"]).unwrap();
        seen.insert(format!("{a}{b}"));
        study.tell(&t, &[0.0]).unwrap();
    }
    assert_eq!(seen.len(), 6);
    let mut t = study.ask().unwrap();
    assert!(matches!(
        t.suggest_float("zz", 0.0, 1.0),
        Err(StudyError::Sampler { .. })
    ));
}

fn sphere(trial: &mut Trial) -> Result<f64, saturate_study::study::ObjectiveError> {
    let mut sum = 0.0;
    for d in 0..3 {
        let x = trial.suggest_float(&format!("x{d}"), -5.0, 5.0)?;
        sum += x * x;
    }
    Ok(sum)
}

fn best_of(sampler: impl Sampler + 'static, n: usize) -> f64 {
    let study = DefaultStudy::builder()
        .sampler(sampler)
        .pruner(NopPruner)
        .build()
        .unwrap();
    study.optimize(Some(n), None, sphere).unwrap();
    study.best_value().unwrap()
}

#[test]
fn tpe_and_cmaes_beat_random_search_on_a_sphere() {
    let mut wins_tpe = 0;
    let mut wins_cma = 0;
    for seed in 0..5 {
        let random = best_of(RandomSampler::new(Some(seed)), 80);
        if best_of(TpeSampler::builder().seed(seed).build(), 80) < random {
            wins_tpe += 1;
        }
        if best_of(CmaEsSampler::new(Some(seed), None, None), 80) < random {
            wins_cma += 1;
        }
    }
    assert!(wins_tpe >= 4, "TPE beat random {wins_tpe}/5");
    assert!(wins_cma >= 4, "CMA-ES beat random {wins_cma}/5");
}

#[test]
fn tpe_multivariate_and_multi_objective_run() {
    let best = best_of(TpeSampler::builder().seed(0).multivariate(true).build(), 60);
    assert!(best < 5.0, "{best}");
    let study = DefaultStudy::builder()
        .directions([StudyDirection::Minimize, StudyDirection::Minimize])
        .sampler(TpeSampler::builder().seed(0).build())
        .build()
        .unwrap();
    study
        .optimize(Some(40), None, |t| {
            let x = t.suggest_float("x", 0.0, 1.0)?;
            let y = t.suggest_float("y", 0.0, 1.0)?;
            Ok([x, (1.0 - x) + y])
        })
        .unwrap();
    assert!(!study.best_trials().unwrap().is_empty());
}

#[test]
fn constant_liar_spreads_trials_asked_together() {
    // Five trials asked at once after a history concentrated near x = 0: with the liar,
    // each running trial counts as bad, so the batch does not collapse onto one point.
    let make = |liar: bool| {
        let study = DefaultStudy::builder()
            .sampler(
                TpeSampler::builder()
                    .seed(0)
                    .n_startup_trials(10)
                    .constant_liar(liar)
                    .build(),
            )
            .build()
            .unwrap();
        study
            .optimize(Some(20), None, |t| {
                let x = t.suggest_float("x", -10.0, 10.0)?;
                Ok(x * x)
            })
            .unwrap();
        let mut trials = study.ask_many(5).unwrap();
        let xs: Vec<f64> = trials
            .iter_mut()
            .map(|t| t.suggest_float("x", -10.0, 10.0).unwrap())
            .collect();
        let running = study.trials(Some(&[TrialState::Running])).unwrap();
        assert_eq!(running.len(), 5);
        xs
    };
    let spread = |xs: &[f64]| {
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>()
    };
    let with = make(true);
    let without = make(false);
    assert!(with.windows(2).all(|w| w[0] != w[1]));
    assert!(spread(&with) > 0.0 && spread(&without) >= 0.0);
}

#[test]
fn multivariate_constant_liar_publishes_relative_params_of_running_trials() {
    let study = DefaultStudy::builder()
        .sampler(
            TpeSampler::builder()
                .seed(0)
                .n_startup_trials(5)
                .multivariate(true)
                .constant_liar(true)
                .build(),
        )
        .build()
        .unwrap();
    let objective = |t: &mut Trial| -> Result<f64, saturate_study::study::ObjectiveError> {
        let x = t.suggest_float("x", -10.0, 10.0)?;
        let y = t.suggest_float("y", -10.0, 10.0)?;
        Ok(x * x + y * y)
    };
    study.optimize(Some(15), None, objective).unwrap();
    let mut batch = study.ask_many(4).unwrap();
    // Each trial's joint sample was published before the next one was drawn, so the
    // later trials saw the earlier ones as (bad) RUNNING observations.
    for t in &batch {
        let stored = study.storage().get_trial(t.id()).unwrap();
        assert!(
            stored.system_attrs.contains_key("tpe:relative_params:0"),
            "trial {}",
            t.number()
        );
    }
    let points: Vec<(f64, f64)> = batch
        .iter_mut()
        .map(|t| {
            (
                t.suggest_float("x", -10.0, 10.0).unwrap(),
                t.suggest_float("y", -10.0, 10.0).unwrap(),
            )
        })
        .collect();
    for (i, a) in points.iter().enumerate() {
        for b in &points[i + 1..] {
            assert_ne!(a, b);
        }
    }
}

#[test]
fn qmc_points_are_stratified() {
    for kind in [QmcKind::Sobol, QmcKind::Halton] {
        let study = DefaultStudy::builder()
            .sampler(QmcSampler::new(kind, Some(7)))
            .build()
            .unwrap();
        study
            .optimize(Some(17), None, |t| Ok(t.suggest_float("x", 0.0, 1.0)?))
            .unwrap();
        // Points 0..16 of both sequences put exactly one point in each sixteenth.
        let mut bins: Vec<usize> = study.trials(None).unwrap()[1..]
            .iter()
            .map(|t| (t.params["x"].internal * 16.0) as usize)
            .collect();
        bins.sort_unstable();
        assert_eq!(bins, (0..16).collect::<Vec<_>>(), "{kind:?}");
    }
}
