//! The default study: ask/tell, define-by-run semantics, enqueue, optimize.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::Duration;

use saturate_study::prelude::*;

use crate::common::study_on;

fn study() -> DefaultStudy {
    study_on(Arc::new(InMemoryStorage::new()), "s")
}

#[test]
fn ask_suggest_tell_round_trip() {
    let study = study();
    let mut trial = study.ask().unwrap();
    assert_eq!(trial.number(), 0);
    let x = trial.suggest_float("x", -1.0, 1.0).unwrap();
    let lr = trial.suggest_float_log("lr", 1e-5, 1e-1).unwrap();
    let q = trial.suggest_float_step("q", 0.0, 1.0, 0.25).unwrap();
    let n = trial.suggest_int("n", 1, 10).unwrap();
    let m = trial.suggest_int_log("m", 1, 1024).unwrap();
    let k = trial.suggest_int_step("k", 0, 100, 10).unwrap();
    let c = trial.suggest_categorical("c", ["a", "b"]).unwrap();
    let b = trial.suggest_categorical("b", [true, false]).unwrap();
    let z = trial
        .suggest_categorical("z", [Choice::Null, Choice::Int(3), Choice::Float(0.5)])
        .unwrap();
    assert!((-1.0..=1.0).contains(&x));
    assert!((1e-5..=1e-1).contains(&lr));
    assert_eq!((q / 0.25).fract(), 0.0);
    assert!((1..=10).contains(&n) && (1..=1024).contains(&m) && k % 10 == 0);
    assert!(c == "a" || c == "b");
    // The value comes back as the type given, and the study stores the same choice.
    assert_eq!(
        trial.params()["c"],
        ParamValue::Categorical(Choice::from(c))
    );
    assert_eq!(
        trial.params()["b"],
        ParamValue::Categorical(Choice::Bool(b))
    );
    assert!(matches!(
        z,
        Choice::Null | Choice::Int(3) | Choice::Float(_)
    ));
    let done = study.tell(&trial, &[x]).unwrap();
    assert_eq!(done.state, TrialState::Complete);
    assert_eq!(done.values, Some(vec![x]));
    assert_eq!(done.params.len(), 9);
    assert!(done.datetime_complete.is_some() && done.datetime_start.is_some());
    assert_eq!(study.best_trial().unwrap().number, 0);
}

#[test]
fn repeated_name_returns_the_same_value_and_other_distribution_is_an_error() {
    let study = study();
    let mut trial = study.ask().unwrap();
    let a = trial.suggest_float("x", 0.0, 1.0).unwrap();
    assert_eq!(trial.suggest_float("x", 0.0, 1.0).unwrap(), a);
    let err = trial.suggest_float("x", 0.0, 2.0).unwrap_err();
    assert!(
        matches!(err, StudyError::IncompatibleDistribution { .. }),
        "{err}"
    );
    assert!(trial.suggest_int("x", 0, 1).is_err());
}

#[test]
fn finished_trials_are_immutable() {
    let study = study();
    let mut trial = study.ask().unwrap();
    trial.suggest_float("x", 0.0, 1.0).unwrap();
    study.tell(&trial, &[1.0]).unwrap();
    assert!(matches!(
        study.tell(&trial, &[2.0]),
        Err(StudyError::TrialFinished {
            state: TrialState::Complete,
            ..
        })
    ));
    assert!(matches!(
        trial.report(1, 0.5),
        Err(StudyError::TrialFinished { .. })
    ));
    assert!(matches!(
        trial.suggest_float("y", 0.0, 1.0),
        Err(StudyError::TrialFinished { .. })
    ));
    assert!(matches!(
        trial.set_user_attr("k", 1),
        Err(StudyError::TrialFinished { .. })
    ));
}

/// Optuna 4.9/5.0 (`_check_values_are_feasible`): NaN fails the trial, ±inf is a value.
#[test]
fn nan_fails_the_trial_and_infinities_complete_it() {
    let study = study();
    let trial = study.ask().unwrap();
    let done = study.tell(&trial, &[f64::NAN]).unwrap();
    assert_eq!(done.state, TrialState::Fail);
    assert_eq!(done.values, None);
    let reason = done.system_attrs["fail_reason"].as_str().unwrap();
    assert!(reason.contains("NaN is not acceptable"), "{reason}");
    assert!(matches!(
        study.best_trial(),
        Err(StudyError::NoCompletedTrial)
    ));
    for value in [f64::INFINITY, f64::NEG_INFINITY] {
        let trial = study.ask().unwrap();
        let done = study.tell(&trial, &[value]).unwrap();
        assert_eq!(done.state, TrialState::Complete);
        assert_eq!(done.values, Some(vec![value]));
        assert!(!done.system_attrs.contains_key("fail_reason"));
    }
    // The study minimizes: -inf is the best value.
    assert_eq!(
        study.best_trial().unwrap().values,
        Some(vec![f64::NEG_INFINITY])
    );
}

#[test]
fn pruned_trial_takes_its_last_intermediate_value() {
    let study = study();
    let mut trial = study.ask().unwrap();
    trial.report(0, 3.0).unwrap();
    trial.report(5, 2.0).unwrap();
    let done = study.tell_pruned(&trial).unwrap();
    assert_eq!(done.state, TrialState::Pruned);
    assert_eq!(done.values, Some(vec![2.0]));
    let mut trial = study.ask().unwrap();
    trial.report(0, f64::NAN).unwrap();
    assert_eq!(study.tell_pruned(&trial).unwrap().values, None);
    // As Optuna: an infinite last value is kept.
    let mut trial = study.ask().unwrap();
    trial.report(0, f64::INFINITY).unwrap();
    assert_eq!(
        study.tell_pruned(&trial).unwrap().values,
        Some(vec![f64::INFINITY])
    );
}

#[test]
fn enqueued_trials_come_first_with_fixed_params() {
    let study = study();
    let fixed: FixedParams = [
        ("x".to_string(), ParamValue::Float(0.25)),
        ("n".to_string(), ParamValue::Int(3)),
        ("c".to_string(), ParamValue::from("b")),
    ]
    .into();
    assert_eq!(study.enqueue(fixed).unwrap(), 0);
    assert_eq!(study.trials(Some(&[TrialState::Waiting])).unwrap().len(), 1);
    let mut trial = study.ask().unwrap();
    assert_eq!(trial.number(), 0);
    assert_eq!(trial.suggest_float("x", 0.0, 1.0).unwrap(), 0.25);
    assert_eq!(trial.suggest_int("n", 0, 10).unwrap(), 3);
    assert_eq!(trial.suggest_categorical("c", ["a", "b"]).unwrap(), "b");
    // Not fixed: sampled.
    trial.suggest_float("y", 0.0, 1.0).unwrap();
    assert_eq!(study.ask().unwrap().number(), 1);
}

#[test]
fn ask_with_fixed_params_and_several_at_once() {
    let study = study();
    let shared: FixedParams = [("width".to_string(), ParamValue::Int(64))].into();
    let mut trials = study
        .ask_batch(&[shared.clone(), shared.clone(), FixedParams::new()])
        .unwrap();
    let numbers: Vec<u64> = trials.iter().map(Trial::number).collect();
    assert_eq!(numbers, vec![0, 1, 2]);
    assert_eq!(trials[0].suggest_int("width", 8, 128).unwrap(), 64);
    assert_eq!(trials[1].suggest_int("width", 8, 128).unwrap(), 64);
    let running = study.trials(Some(&[TrialState::Running])).unwrap();
    assert_eq!(running.len(), 3);
    let many = study.ask_many(4).unwrap();
    assert_eq!(many.len(), 4);
    assert_eq!(many[3].number(), 6);
}

#[test]
fn fixed_categorical_value_outside_the_choices_is_an_error() {
    let study = study();
    let mut trial = study
        .ask_with([("c".to_string(), ParamValue::from("zzz"))].into())
        .unwrap();
    assert!(matches!(
        trial.suggest_categorical("c", ["a", "b"]),
        Err(StudyError::ParamOutOfDistribution { .. })
    ));
}

#[test]
fn optimize_runs_n_trials_and_callbacks() {
    let study = study();
    let mut seen = Vec::new();
    let mut callback = |t: &FrozenTrial| {
        seen.push(t.number);
        ControlFlow::Continue(())
    };
    study
        .optimize_with_callbacks(
            Some(5),
            None,
            |trial| Ok(trial.suggest_float("x", 0.0, 1.0)?),
            &mut [&mut callback],
        )
        .unwrap();
    assert_eq!(seen, vec![0, 1, 2, 3, 4]);
    let mut stop_after_two = |t: &FrozenTrial| {
        if t.number >= 6 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    study
        .optimize_with_callbacks(Some(100), None, |_| Ok(1.0), &mut [&mut stop_after_two])
        .unwrap();
    assert_eq!(study.trials(None).unwrap().len(), 7);
}

#[test]
fn optimize_stops_at_the_timeout() {
    // No wall-clock bound is asserted: a zero timeout runs nothing, and a trial that
    // outlasts the timeout (sleep never returns early) is the last one.
    let study = study();
    study
        .optimize(Some(5), Some(Duration::ZERO), |_| Ok(0.0))
        .unwrap();
    assert_eq!(study.trials(None).unwrap().len(), 0);
    let timeout = Duration::from_millis(100);
    study
        .optimize(Some(5), Some(timeout), |_| {
            std::thread::sleep(timeout);
            Ok(0.0)
        })
        .unwrap();
    assert_eq!(study.trials(None).unwrap().len(), 1);
    // Without a timeout, n_trials decides.
    study.optimize(Some(3), None, |_| Ok(0.0)).unwrap();
    assert_eq!(study.trials(None).unwrap().len(), 4);
}

#[test]
fn objective_errors_and_panics_fail_the_trial_and_the_study_stays_usable() {
    let study = study();
    let err = study
        .optimize(Some(3), None, |trial| -> Result<f64, _> {
            trial.suggest_float("x", 0.0, 1.0)?;
            Err("diverged".into())
        })
        .unwrap_err();
    assert!(
        matches!(&err, StudyError::ObjectiveFailed { number: 0, message } if message == "diverged")
    );
    let err = study
        .optimize(Some(1), None, |_| -> Result<f64, _> { panic!("boom") })
        .unwrap_err();
    assert!(
        matches!(&err, StudyError::ObjectiveFailed { number: 1, message } if message.contains("boom"))
    );
    let trials = study.trials(None).unwrap();
    assert!(trials.iter().all(|t| t.state == TrialState::Fail));
    assert_eq!(trials[0].system_attrs["fail_reason"], "diverged");
    // Still usable.
    study.optimize(Some(2), None, |_| Ok(1.0)).unwrap();
    assert_eq!(
        study.trials(Some(&[TrialState::Complete])).unwrap().len(),
        2
    );
}

#[test]
fn objective_can_prune() {
    let study = StudyConfig::new()
        .with_sampler(RandomSamplerConfig::new().with_seed(0).init())
        .with_pruner(
            ThresholdPrunerConfig::new()
                .with_upper(Some(1.0))
                .init()
                .unwrap(),
        )
        .init()
        .unwrap();
    study
        .optimize(Some(2), None, |trial| {
            for step in 0..10 {
                trial.report(step, step as f64)?;
                if trial.should_prune()? {
                    return Err(TrialPruned.into());
                }
            }
            Ok(0.0)
        })
        .unwrap();
    let trials = study.trials(None).unwrap();
    assert!(trials.iter().all(|t| t.state == TrialState::Pruned));
    assert_eq!(trials[0].values, Some(vec![2.0]));
}

#[test]
fn multi_objective_pareto_front_and_value_count() {
    let study = StudyConfig::new()
        .with_directions([StudyDirection::Minimize, StudyDirection::Maximize])
        .with_sampler(RandomSamplerConfig::new().with_seed(0).init())
        .init()
        .unwrap();
    for values in [[1.0, 1.0], [2.0, 3.0], [2.0, 0.5], [0.5, 0.0]] {
        let t = study.ask().unwrap();
        study.tell(&t, &values).unwrap();
    }
    let front: Vec<u64> = study
        .best_trials()
        .unwrap()
        .iter()
        .map(|t| t.number)
        .collect();
    assert_eq!(front, vec![0, 1, 3]);
    assert!(matches!(
        study.best_trial(),
        Err(StudyError::MultiObjective { .. })
    ));
    let t = study.ask().unwrap();
    assert!(matches!(
        study.tell(&t, &[1.0]),
        Err(StudyError::WrongNumberOfValues {
            expected: 2,
            got: 1
        })
    ));
    assert_eq!(study.trials(None).unwrap()[4].state, TrialState::Fail);
    assert!(matches!(
        t.should_prune(),
        Err(StudyError::MultiObjective { .. })
    ));
}

#[test]
fn attributes_and_load_if_exists() {
    let storage: Arc<dyn Storage> = Arc::new(InMemoryStorage::new());
    let study = study_on(storage.clone(), "attrs");
    study.set_user_attr("owner", "me".into()).unwrap();
    study
        .set_system_attr("k", serde_json::json!([1, 2]))
        .unwrap();
    let mut trial = study.ask().unwrap();
    trial
        .set_user_attr("note", serde_json::json!({"a": 1.5}))
        .unwrap();
    study.tell(&trial, &[0.0]).unwrap();
    assert!(matches!(
        StudyConfig::new()
            .with_name("attrs")
            .with_storage(storage.clone())
            .init(),
        Err(StudyError::DuplicateStudy { .. })
    ));
    let again = StudyConfig::new()
        .with_name("attrs")
        .with_storage(storage.clone())
        .with_load_if_exists(true)
        .init()
        .unwrap();
    assert_eq!(again.user_attrs().unwrap()["owner"], "me");
    assert_eq!(
        again.system_attrs().unwrap()["k"],
        serde_json::json!([1, 2])
    );
    assert_eq!(again.trials(None).unwrap()[0].user_attrs["note"]["a"], 1.5);
    let loaded = StudyConfig::new()
        .with_name("attrs")
        .with_storage(storage.clone())
        .load()
        .unwrap();
    assert_eq!(loaded.id(), study.id());
    assert!(matches!(
        StudyConfig::new()
            .with_name("nope")
            .with_storage(storage)
            .load(),
        Err(StudyError::UnknownStudy { .. })
    ));
}

#[test]
fn maximize_picks_the_largest() {
    let study = StudyConfig::new()
        .with_direction(StudyDirection::Maximize)
        .with_sampler(RandomSamplerConfig::new().with_seed(3).init())
        .init()
        .unwrap();
    for v in [1.0, 5.0, 3.0] {
        let t = study.ask().unwrap();
        study.tell(&t, &[v]).unwrap();
    }
    assert_eq!(study.best_value().unwrap(), 5.0);
    let params: BTreeMap<String, ParamValue> = study
        .best_trial()
        .unwrap()
        .params
        .iter()
        .map(|(k, p)| (k.clone(), p.value()))
        .collect();
    assert!(params.is_empty());
}

#[test]
fn record_param_stores_a_value_decided_elsewhere() {
    let study = study();
    let mut trials = study.ask_many(2).unwrap();
    let distribution: Distribution = IntDistribution::new(8, 48, false, 1).unwrap().into();
    let width = trials[0].suggest("width", distribution.clone()).unwrap();
    trials[1]
        .record_param("width", distribution.clone(), &width)
        .unwrap();
    // Recording the same value again is a no-op; another value or distribution is an error.
    trials[1]
        .record_param("width", distribution.clone(), &width)
        .unwrap();
    let other = ParamValue::Int(if width == ParamValue::Int(8) { 9 } else { 8 });
    assert!(matches!(
        trials[1].record_param("width", distribution.clone(), &other),
        Err(StudyError::ParamOutOfDistribution { .. })
    ));
    let wider: Distribution = IntDistribution::new(8, 64, false, 1).unwrap().into();
    assert!(matches!(
        trials[1].record_param("width", wider, &width),
        Err(StudyError::IncompatibleDistribution { .. })
    ));
    assert!(matches!(
        trials[1].record_param("depth", distribution.clone(), &ParamValue::Int(100)),
        Err(StudyError::ParamOutOfDistribution { .. })
    ));
    // Stored: a later suggest of the same name returns the recorded value.
    assert_eq!(trials[1].suggest("width", distribution).unwrap(), width);
    for trial in &trials {
        study.tell(trial, &[1.0]).unwrap();
    }
    let stored = study.trials(None).unwrap();
    assert_eq!(stored[0].param("width"), stored[1].param("width"));
    assert_eq!(
        stored[0].params["width"].distribution,
        stored[1].params["width"].distribution
    );
}

#[test]
fn single_value_distributions_are_returned_without_asking_the_sampler() {
    // Issue 13: once the startup trials were over, TPE returned NaN for `a` in [2, 2] and
    // the journal stored it (optuna-dashboard then could not open the study).
    for multivariate in [false, true] {
        let dir = crate::common::tempdir();
        let path = dir.path().join("journal.log");
        let study = StudyConfig::new()
            .with_storage(Arc::new(JournalStorage::open(&path).unwrap()))
            .with_sampler(
                TpeSamplerConfig::new()
                    .with_seed(0)
                    .with_n_startup_trials(2)
                    .with_multivariate(multivariate)
                    .init()
                    .unwrap(),
            )
            .init()
            .unwrap();
        study
            .optimize(Some(8), None, |t| {
                let a = t.suggest_float("a", 2.0, 2.0)?;
                let b = t.suggest_float_log("b", 0.5, 0.5)?;
                let n = t.suggest_int("n", 3, 3)?;
                let x = t.suggest_float("x", 0.0, 1.0)?;
                assert_eq!((a, b, n), (2.0, 0.5, 3), "multivariate {multivariate}");
                Ok(x)
            })
            .unwrap();
        assert_eq!(
            study.trials(Some(&[TrialState::Complete])).unwrap().len(),
            8
        );
        let journal = std::fs::read_to_string(&path).unwrap();
        assert!(!journal.contains("NaN"), "{journal}");
    }
}

/// Returns `value` for every parameter.
struct Constant(f64);

impl Sampler for Constant {
    fn sample_independent(
        &mut self,
        _: &saturate_study::study::StudyView<'_>,
        _: &FrozenTrial,
        _: &str,
        _: &Distribution,
    ) -> saturate_study::Result<f64> {
        Ok(self.0)
    }
}

#[test]
fn a_sampled_value_outside_the_distribution_is_an_error_and_is_not_stored() {
    for value in [f64::NAN, 1.5, 0.25] {
        let study = StudyConfig::new()
            .with_sampler(Constant(value))
            .init()
            .unwrap();
        let mut trial = study.ask().unwrap();
        // A single value never reaches the sampler.
        assert_eq!(trial.suggest_float("a", 2.0, 2.0).unwrap(), 2.0);
        let err = match value {
            0.25 => trial.suggest_int("n", 0, 1).unwrap_err(),
            _ => trial.suggest_float("x", 0.0, 1.0).unwrap_err(),
        };
        match &err {
            StudyError::SampledOutOfDistribution {
                value: got,
                distribution,
                ..
            } => {
                assert_eq!(got.to_bits(), value.to_bits());
                assert!(distribution.contains("\"low\": 0"), "{distribution}");
            }
            other => panic!("{other:?}"),
        }
        assert!(err.to_string().contains("bug in the sampler"), "{err}");
        let stored = study.storage().get_trial(trial.id()).unwrap();
        assert_eq!(stored.params.keys().collect::<Vec<_>>(), ["a"]);
        assert_eq!(trial.params().len(), 1);
    }
}

#[test]
fn report_of_a_step_already_reported_keeps_the_first_value_and_warns() {
    let logs = crate::common::logs();
    let study = study();
    let mut trial = study.ask().unwrap();
    trial.report(3, 1.25).unwrap();
    trial.report(3, 98765.5).unwrap();
    assert_eq!(trial.frozen().intermediate_values[&3], 1.25);
    let stored = study.storage().get_trial(trial.id()).unwrap();
    assert_eq!(stored.intermediate_values[&3], 1.25);
    let logs = logs.lock().unwrap();
    assert!(
        logs.iter().any(|line| line.starts_with("WARN")
            && line.contains("step 3 is already reported")
            && line.contains("98765.5")),
        "{logs:?}"
    );
}

#[test]
fn report_rejects_a_negative_step_and_a_multi_objective_study() {
    let study = study();
    let mut trial = study.ask().unwrap();
    let err = trial.report(-1, 0.5).unwrap_err();
    assert!(
        matches!(err, StudyError::InvalidArgument { what: "step", .. }),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "invalid step: -1 is negative; steps start at 0"
    );
    assert!(trial.frozen().intermediate_values.is_empty());
    let two = StudyConfig::new()
        .with_directions([StudyDirection::Minimize, StudyDirection::Maximize])
        .init()
        .unwrap();
    let mut trial = two.ask().unwrap();
    assert!(matches!(
        trial.report(0, 0.5),
        Err(StudyError::MultiObjective {
            operation: "report",
            objectives: 2
        })
    ));
    let stored = two.storage().get_trial(trial.id()).unwrap();
    assert!(stored.intermediate_values.is_empty());
}

fn ask_x(study: &DefaultStudy, x: f64) -> Trial {
    let mut trial = study
        .ask_with([("x".to_string(), ParamValue::Float(x))].into())
        .unwrap();
    trial.suggest_float("x", -10.0, 10.0).unwrap();
    trial
}

#[test]
fn constraints_pick_the_best_feasible_trial_and_survive_a_journal_reload() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.log");
    let open = || {
        StudyConfig::new()
            .with_name("c")
            .with_storage(Arc::new(JournalStorage::open(&path).unwrap()))
            .with_load_if_exists(true)
            .init()
            .unwrap()
    };
    let study = open();
    // (x, value, constraints): the lowest value is infeasible.
    for (x, value, constraints) in [
        (0.0, 0.0, vec![("a", 1.0)]),
        (1.0, 1.0, vec![("a", 0.0), ("b", -2.0)]),
        (2.0, 0.5, vec![("a", 0.25), ("b", -1.0)]),
        (3.0, 2.0, vec![]),
    ] {
        let mut trial = ask_x(&study, x);
        for (key, c) in constraints {
            trial.set_constraint(key, c).unwrap();
        }
        study.tell(&trial, &[value]).unwrap();
    }
    let check = |study: &DefaultStudy| {
        let trials = study.trials(None).unwrap();
        assert_eq!(
            trials[1].constraints(),
            BTreeMap::from([("a".to_string(), 0.0), ("b".to_string(), -2.0)])
        );
        assert_eq!(trials[2].infeasibility(), 0.25);
        assert!(!trials[0].is_feasible() && trials[1].is_feasible());
        assert!(trials[3].is_feasible() && !trials[3].is_constrained());
        assert_eq!(study.best_trial().unwrap().number, 1);
        let front: Vec<u64> = study
            .best_trials()
            .unwrap()
            .iter()
            .map(|t| t.number)
            .collect();
        assert_eq!(front, vec![1]);
    };
    check(&study);
    check(&open());
    // Optuna's attribute names, so Python Optuna 5.0 reads them as `trial.constraints`.
    let t1 = &study.trials(None).unwrap()[1];
    assert_eq!(t1.system_attrs["constraints:b"], serde_json::json!(-2.0));
}

#[test]
fn set_constraint_keeps_the_first_value_refuses_nan_and_every_infeasible_study_has_no_best() {
    let study = study();
    let mut trial = ask_x(&study, 1.0);
    trial.set_constraint("c", 3.0).unwrap();
    trial.set_constraint("c", -3.0).unwrap(); // ignored, as in Optuna
    assert!(matches!(
        trial.set_constraint("d", f64::NAN),
        Err(StudyError::InvalidArgument { what: "value", .. })
    ));
    study.tell(&trial, &[1.0]).unwrap();
    let stored = &study.trials(None).unwrap()[0];
    assert_eq!(
        stored.constraints(),
        BTreeMap::from([("c".to_string(), 3.0)])
    );
    assert!(matches!(
        study.best_trial(),
        Err(StudyError::NoFeasibleTrial)
    ));
    assert!(study.best_trials().unwrap().is_empty());
    // A finished trial takes no constraint.
    assert!(matches!(
        trial.set_constraint("e", 0.0),
        Err(StudyError::TrialFinished { .. })
    ));
}

#[test]
fn optuna_4_constraint_lists_are_read_and_a_named_constraint_wins() {
    let mut trial = FrozenTrial::new(0, 0, TrialState::Complete);
    // What Optuna 4's `constraints_func` stores, and a 5.0 constraint of the same name.
    trial
        .system_attrs
        .insert("constraints".into(), serde_json::json!([-1.0, 2.0]));
    trial
        .system_attrs
        .insert("constraints:1".into(), serde_json::json!(-0.5));
    trial
        .system_attrs
        .insert("constraintsX".into(), serde_json::json!(7.0));
    assert_eq!(
        trial.constraints(),
        BTreeMap::from([("0".to_string(), -1.0), ("1".to_string(), -0.5)])
    );
    assert!(trial.is_feasible() && trial.is_constrained());
}
