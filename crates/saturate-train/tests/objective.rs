//! The objective level: scopes, group sizes, reports, failures and budgets.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use saturate_study::prelude::*;
use saturate_study::study::ObjectiveError;
use saturate_train::{
    run, Members, TimeoutPolicy, TrainError, GROUP_ATTR, STOPPED_ATTR, WORKER_ATTR,
};

use crate::common::{quiet, random_study, trials, PruneNumbers};

/// The trials of each group, by group id, in trial order.
fn groups(study: &DefaultStudy) -> BTreeMap<String, Vec<std::sync::Arc<FrozenTrial>>> {
    let mut groups: BTreeMap<String, Vec<_>> = BTreeMap::new();
    for t in trials(study) {
        let id = t.system_attrs[GROUP_ATTR].as_str().unwrap().to_string();
        groups.entry(id).or_default().push(t);
    }
    groups
}

#[test]
fn ten_trials_in_groups_of_four_share_their_shared_values() {
    let study = random_study(3);
    let mut seen_sizes = Vec::new();
    // ANCHOR: scopes
    let summary = run(&study, &quiet(4, 10), |g| {
        seen_sizes.push(g.members());
        let width = g.shared().suggest_int("width", 8, 48)?;
        let act = g.shared().suggest_categorical("act", ["relu", "gelu"])?;
        let lr = g.member().suggest_float_log("lr", 1e-4, 1e-1)?;
        // Suggesting a shared name again returns the group's value.
        assert_eq!(g.shared().suggest_int("width", 8, 48)?, width);
        let _ = act;
        Ok(lr.map(|lr| lr * width as f64))
    })
    .unwrap();
    // ANCHOR_END: scopes
    assert_eq!(seen_sizes, vec![4, 4, 2]);
    assert_eq!(
        (summary.complete, summary.groups, summary.failed),
        (10, 3, 0)
    );
    let groups = groups(&study);
    let mut sizes: Vec<usize> = groups.values().map(Vec::len).collect();
    sizes.sort();
    assert_eq!(sizes, vec![2, 4, 4]);
    let mut widths = BTreeSet::new();
    for members in groups.values() {
        let first = &members[0];
        for t in members {
            assert_eq!(t.state, TrialState::Complete);
            for name in ["width", "act"] {
                assert_eq!(
                    t.param(name),
                    first.param(name),
                    "{name} differs in a group"
                );
                assert_eq!(
                    t.params[name].distribution, first.params[name].distribution,
                    "{name}'s distribution differs in a group"
                );
            }
            assert!(t.system_attrs[WORKER_ATTR].as_str().unwrap().contains(':'));
        }
        widths.insert(first.param("width").unwrap().to_string());
        let lrs: BTreeSet<String> = members
            .iter()
            .map(|t| t.param("lr").unwrap().to_string())
            .collect();
        assert_eq!(
            lrs.len(),
            members.len(),
            "member values repeat within a group"
        );
    }
    assert!(
        widths.len() > 1,
        "every group got the same shared value: {widths:?}"
    );
}

#[test]
fn multi_objective_groups_tell_each_member_its_values() {
    let study = StudyConfig::new()
        .with_directions([StudyDirection::Minimize, StudyDirection::Maximize])
        .with_sampler(RandomSamplerConfig::new().with_seed(1).init())
        .init()
        .unwrap();
    run(&study, &quiet(3, 3), |g| {
        let x = g.member().suggest_float("x", 0.0, 1.0)?;
        // No intermediate values in multi-objective studies: report keeps everyone.
        assert_eq!(g.report(0, &x)?, vec![0, 1, 2]);
        Ok(x.map(|x| vec![*x, x * x]))
    })
    .unwrap();
    for t in trials(&study) {
        let x = t.param("x").unwrap().as_f64().unwrap();
        assert_eq!(t.values.as_deref(), Some(&[x, x * x][..]));
        assert!(t.intermediate_values.is_empty());
    }
}

#[test]
fn a_name_in_both_scopes_is_a_typed_error_that_fails_the_group() {
    let study = random_study(0);
    let mut error = None;
    let summary = run(&study, &quiet(2, 2), |g| {
        g.shared().suggest_float("lr", 0.0, 1.0)?;
        let e = g.member().suggest_float("lr", 0.0, 1.0).unwrap_err();
        let message = e.to_string();
        error = Some(e);
        Err::<Members<f64>, _>(message.into())
    })
    .unwrap();
    assert!(matches!(
        error,
        Some(TrainError::ScopeConflict {
            first: "shared",
            second: "member",
            ..
        })
    ));
    assert_eq!((summary.failed, summary.complete), (2, 0));
    assert!(summary.group_errors[0].contains("shared hyperparameter and then as a member"));
    for t in trials(&study) {
        assert!(t.system_attrs["fail_reason"]
            .as_str()
            .unwrap()
            .contains("`lr`"));
    }
}

#[test]
fn a_shared_name_with_another_distribution_is_an_error() {
    let study = random_study(0);
    run(&study, &quiet(2, 2), |g| {
        g.shared().suggest_int("width", 8, 16)?;
        let e = g.shared().suggest_int("width", 8, 32).unwrap_err();
        assert!(
            matches!(
                e,
                TrainError::Study(StudyError::IncompatibleDistribution { .. })
            ),
            "{e}"
        );
        Ok(Members::from(vec![1.0, 2.0]))
    })
    .unwrap();
}

#[test]
fn suggesting_after_a_report_is_a_typed_error() {
    let study = random_study(0);
    run(&study, &quiet(2, 2), |g| {
        let x = g.member().suggest_float("x", 0.0, 1.0)?;
        g.report(0, &x)?;
        let e = g.member().suggest_float("y", 0.0, 1.0).unwrap_err();
        assert!(matches!(e, TrainError::SuggestAfterReport { ref name } if name == "y"));
        let e = g.shared().suggest_float("z", 0.0, 1.0).unwrap_err();
        assert!(matches!(e, TrainError::SuggestAfterReport { .. }));
        Ok(x)
    })
    .unwrap();
}

#[test]
fn bad_reports_are_typed_errors() {
    let study = random_study(0);
    run(&study, &quiet(3, 3), |g| {
        let x = g.member().suggest_float("x", 0.0, 1.0)?;
        let e = g.report(0, &x.retained(&[0, 1])).unwrap_err();
        assert!(matches!(
            e,
            TrainError::WrongMemberCount {
                expected: 3,
                got: 2,
                ..
            }
        ));
        g.report(5, &x)?;
        let e = g.report(5, &x).unwrap_err();
        assert!(matches!(
            e,
            TrainError::StepNotIncreasing {
                step: 5,
                previous: 5
            }
        ));
        Ok(x)
    })
    .unwrap();
}

#[test]
fn returning_the_wrong_number_of_values_fails_the_group_and_the_run_goes_on() {
    let study = random_study(0);
    let mut group = 0;
    let summary = run(&study, &quiet(3, 6), |g| {
        group += 1;
        let x = g.member().suggest_float("x", 0.0, 1.0)?;
        Ok(if group == 1 { x.retained(&[0]) } else { x })
    })
    .unwrap();
    assert_eq!((summary.failed, summary.complete), (3, 3));
    assert!(summary.group_errors[0].contains("has 1 values but the group has 3 members"));
}

#[test]
fn bad_configs_are_typed_errors() {
    let study = random_study(0);
    let e = run(&study, &quiet(0, 4), |_| Ok(Members::<f64>::default())).unwrap_err();
    assert!(matches!(
        e,
        TrainError::InvalidConfig {
            setting: "group_size",
            ..
        }
    ));
    let config = saturate_train::RunConfig::new().with_progress(false);
    let e = run(&study, &config, |_| Ok(Members::<f64>::default())).unwrap_err();
    assert!(matches!(
        e,
        TrainError::InvalidConfig {
            setting: "n_trials",
            ..
        }
    ));
    assert!(study.trials(None).unwrap().is_empty());
}

/// Values as Optuna treats them: a NaN report is recorded and fails its member; a NaN
/// return fails its member; an infinite return completes the trial with that value.
#[test]
fn a_nan_member_fails_its_own_trial_only_and_infinity_is_a_value() {
    let study = random_study(0);
    let summary = run(&study, &quiet(5, 5), |g| {
        let x = g.member().suggest_float("x", 0.0, 1.0)?;
        // Member 1 diverges during training, member 4 reports +inf: `report` drops member 1.
        let mut values = x.to_vec();
        values[1] = f64::NAN;
        values[4] = f64::INFINITY;
        let keep = g.report(0, &Members::from(values))?;
        assert_eq!(keep, vec![0, 2, 3, 4]);
        assert_eq!(g.members(), 4);
        // Of the survivors, member 1 (trial 2) returns NaN, member 2 (trial 3) -inf.
        let mut last = x.retained(&keep).to_vec();
        last[1] = f64::NAN;
        last[2] = f64::NEG_INFINITY;
        Ok(Members::from(last))
    })
    .unwrap();
    assert_eq!((summary.complete, summary.failed), (3, 2));
    let all = trials(&study);
    let states: Vec<TrialState> = all.iter().map(|t| t.state).collect();
    use TrialState::*;
    assert_eq!(states, vec![Complete, Fail, Fail, Complete, Complete]);
    assert!(all[1].intermediate_values[&0].is_nan());
    assert_eq!(
        all[1].system_attrs["fail_reason"].as_str().unwrap(),
        "the value reported at step 0 is NaN"
    );
    assert!(all[2].system_attrs["fail_reason"]
        .as_str()
        .unwrap()
        .contains("NaN"));
    assert_eq!(all[3].values, Some(vec![f64::NEG_INFINITY]));
    assert_eq!(all[4].intermediate_values[&0], f64::INFINITY);
    assert!(all[4].values.as_ref().unwrap()[0] < 1.0);
}

#[test]
fn a_panic_fails_its_group_and_the_run_goes_on() {
    let study = random_study(0);
    let mut group = 0;
    let summary = run(&study, &quiet(2, 6), |g| {
        group += 1;
        let x = g.member().suggest_float("x", 0.0, 1.0)?;
        if group == 2 {
            panic!("diverged in group two");
        }
        Ok(x)
    })
    .unwrap();
    assert_eq!(
        (summary.complete, summary.failed, summary.groups),
        (4, 2, 3)
    );
    assert_eq!(
        summary.group_errors,
        vec!["panicked: diverged in group two".to_string()]
    );
    let failed: Vec<u64> = study
        .trials(Some(&[TrialState::Fail]))
        .unwrap()
        .iter()
        .map(|t| t.number)
        .collect();
    assert_eq!(failed, vec![2, 3]);
}

#[test]
fn report_prunes_members_per_member() {
    let study = StudyConfig::new()
        .with_sampler(RandomSamplerConfig::new().with_seed(0).init())
        .with_pruner(PruneNumbers {
            numbers: [1, 2].into(),
            step: 1,
        })
        .init()
        .unwrap();
    // ANCHOR: report
    run(&study, &quiet(4, 4), |g| {
        let x = g.member().suggest_float("x", 0.0, 1.0)?;
        assert_eq!(g.report(0, &x)?, vec![0, 1, 2, 3]);
        let keep = g.report(1, &x)?; // the pruner asked per member: trials 1 and 2 stop
                                     // (a real objective retains `keep` on its model, optimizer and Members lists here)
        assert_eq!(keep, vec![0, 3]);
        assert_eq!(g.trial_numbers(), vec![0, 3]);
        Ok(x.retained(&keep))
    })
    .unwrap();
    // ANCHOR_END: report
    let states: Vec<TrialState> = trials(&study).iter().map(|t| t.state).collect();
    use TrialState::*;
    assert_eq!(states, vec![Complete, Pruned, Pruned, Complete]);
    // A pruned trial's value is its last intermediate value, as in Optuna.
    let pruned = &trials(&study)[1];
    assert_eq!(
        pruned.value(),
        Some(pruned.param("x").unwrap().as_f64().unwrap())
    );
}

#[test]
fn all_members_pruned_ends_the_group_normally() {
    let study = StudyConfig::new()
        .with_sampler(RandomSamplerConfig::new().with_seed(0).init())
        .with_pruner(PruneNumbers {
            numbers: [0, 1].into(),
            step: 0,
        })
        .init()
        .unwrap();
    let summary = run(&study, &quiet(2, 4), |g| {
        let x = g.member().suggest_float("x", 0.0, 1.0)?;
        g.report(0, &x)?; // group 1: everyone pruned, `?` ends it
        Ok(x)
    })
    .unwrap();
    assert_eq!(
        (summary.pruned, summary.complete, summary.failed),
        (2, 2, 0)
    );
    assert!(summary.group_errors.is_empty());
}

/// Control flow survives wrapping: the group `report` finished stays PRUNED whether the
/// objective returns its error wrapped in `anyhow` context or replaced by a string; a
/// `TrialPruned` deep in a source chain prunes; only a real error fails its group.
#[test]
fn wrapped_or_replaced_control_flow_errors_keep_their_meaning() {
    use anyhow::Context;
    let study = StudyConfig::new()
        .with_sampler(RandomSamplerConfig::new().with_seed(0).init())
        .with_pruner(PruneNumbers {
            numbers: [0, 1, 2, 3].into(),
            step: 0,
        })
        .init()
        .unwrap();
    let mut group = 0;
    let summary = run(
        &study,
        &quiet(2, 8),
        |g| -> Result<Members<f64>, ObjectiveError> {
            group += 1;
            let x = g.member().suggest_float("x", 0.0, 1.0)?;
            match group {
                // Everyone pruned; the error comes back with context.
                1 => {
                    g.report(0, &x).context("epoch 0")?;
                }
                // Everyone pruned; the error is replaced by a string.
                2 => {
                    g.report(0, &x).map_err(|e| format!("stopped: {e}"))?;
                }
                // The objective prunes itself, under two layers of context.
                3 => {
                    return Err(anyhow::Error::new(TrialPruned)
                        .context("validation")
                        .context("epoch 3")
                        .into())
                }
                _ => {
                    return Err(anyhow::anyhow!("disk full")
                        .context("loading a batch")
                        .into())
                }
            }
            unreachable!("report pruned every member")
        },
    )
    .unwrap();
    assert_eq!(
        (summary.pruned, summary.complete, summary.failed),
        (6, 0, 2),
        "{:?}",
        summary.group_errors
    );
    assert_eq!(summary.group_errors, vec!["loading a batch".to_string()]);
    let states: Vec<TrialState> = trials(&study).iter().map(|t| t.state).collect();
    use TrialState::*;
    assert_eq!(
        states,
        vec![Pruned, Pruned, Pruned, Pruned, Pruned, Pruned, Fail, Fail]
    );

    // `Study::optimize` reads the chain the same way.
    let study = random_study(1);
    study
        .optimize(Some(2), None, |_| -> Result<f64, ObjectiveError> {
            Err(anyhow::Error::new(TrialPruned).context("epoch 1").into())
        })
        .unwrap();
    assert!(trials(&study).iter().all(|t| t.state == Pruned));
}

#[test]
fn timeout_finish_groups_lets_the_running_group_end() {
    let study = random_study(0);
    let config = quiet(2, 100).with_timeout(Duration::from_millis(30));
    let summary = run(&study, &config, |g| {
        std::thread::sleep(Duration::from_millis(60));
        Ok(g.member().suggest_float("x", 0.0, 1.0)?)
    })
    .unwrap();
    // The first group started before the timeout and finished; no group started after it.
    assert_eq!((summary.groups, summary.complete), (1, 2));
}

#[test]
fn timeout_stop_at_next_report_prunes_the_running_group() {
    let study = random_study(0);
    let config = quiet(3, 100)
        .with_timeout(Duration::from_millis(30))
        .with_on_timeout(TimeoutPolicy::StopAtNextReport);
    let mut reports = 0;
    let summary = run(
        &study,
        &config,
        |g| -> Result<Members<f64>, ObjectiveError> {
            let x = g.member().suggest_float("x", 0.0, 1.0)?;
            for step in 0.. {
                std::thread::sleep(Duration::from_millis(10));
                g.report(step, &x)?;
                reports += 1;
            }
            unreachable!()
        },
    )
    .unwrap();
    assert!(reports >= 1);
    assert_eq!(
        (summary.groups, summary.pruned, summary.complete),
        (1, 3, 0)
    );
    for t in trials(&study) {
        assert_eq!(t.state, TrialState::Pruned);
        assert_eq!(t.system_attrs[STOPPED_ATTR], "timeout");
    }
}

/// K member suggestions asked together must not be near-duplicates: TPE's constant liar sees
/// the group's running trials. Measured as the smallest distance between two members of a
/// group in log10(lr), after TPE's startup trials, over five seeds; compared with the same
/// studies without the liar.
#[test]
fn member_suggestions_of_a_group_are_diverse_with_the_constant_liar() {
    let min_gap = |liar: bool, seed: u64| -> f64 {
        let study = StudyConfig::new()
            .with_sampler(
                TpeSamplerConfig::new()
                    .with_seed(seed)
                    .with_n_startup_trials(8)
                    .with_constant_liar(liar)
                    .init()
                    .unwrap(),
            )
            .init()
            .unwrap();
        let mut gaps = Vec::new();
        run(&study, &quiet(8, 48), |g| {
            let lr = g.member().suggest_float_log("lr", 1e-5, 1.0)?;
            if g.trial_numbers()[0] >= 8 {
                let mut logs: Vec<f64> = lr.iter().map(|v| v.log10()).collect();
                logs.sort_by(f64::total_cmp);
                let gap = logs
                    .windows(2)
                    .map(|w| w[1] - w[0])
                    .fold(f64::INFINITY, f64::min);
                gaps.push(gap);
            }
            // A smooth objective with its optimum at lr = 1e-2.
            Ok(lr.map(|lr| (lr.log10() + 2.0).powi(2)))
        })
        .unwrap();
        gaps.iter().sum::<f64>() / gaps.len() as f64
    };
    let with: Vec<f64> = (0..5).map(|s| min_gap(true, s)).collect();
    let without: Vec<f64> = (0..5).map(|s| min_gap(false, s)).collect();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    eprintln!("mean smallest log10 gap within a group: liar {with:?}, no liar {without:?}");
    assert!(
        mean(&with) > 1.5 * mean(&without),
        "the liar does not spread a group's members: {} vs {}",
        mean(&with),
        mean(&without)
    );
}

/// Enqueued trials join groups by their shared values: once a group of the study has
/// suggested `width` as shared, the oldest WAITING trial leads the next group, the WAITING
/// trials that pin its width (or none) join it with their own learning rates, and a trial
/// pinning another width leads a group of its own.
#[test]
fn enqueued_trials_join_groups_that_agree_on_their_shared_values() {
    let study = random_study(4);
    let objective = |g: &mut saturate_train::GroupTrial<'_, DefaultStudy>| {
        let width = g.shared().suggest_int("width", 8, 64)?;
        let lr = g.member().suggest_float_log("lr", 1e-4, 1e-1)?;
        Ok::<_, ObjectiveError>(lr.map(|lr| lr * width as f64))
    };
    run(&study, &quiet(2, 2), objective).unwrap();
    assert_eq!(
        study.system_attrs().unwrap()[saturate_train::SHARED_PARAMS_ATTR],
        serde_json::json!(["width"])
    );
    let enqueue = |pairs: &[(&str, ParamValue)]| {
        study
            .enqueue(
                pairs
                    .iter()
                    .map(|(n, v)| (n.to_string(), v.clone()))
                    .collect(),
            )
            .unwrap()
    };
    use ParamValue::{Float, Int};
    // ANCHOR: enqueue
    let a = enqueue(&[("width", Int(16)), ("lr", Float(0.01))]);
    let b = enqueue(&[("width", Int(32)), ("lr", Float(0.02))]);
    let c = enqueue(&[("width", Int(16)), ("lr", Float(0.03))]);
    let d = enqueue(&[("lr", Float(0.04))]);
    // A, C and D train as one group (width 16), B leads another (width 32).
    let summary = run(&study, &quiet(3, 6), objective).unwrap();
    // ANCHOR_END: enqueue
    assert_eq!((summary.complete, summary.groups), (6, 2));
    let all = trials(&study);
    assert!(all.iter().all(|t| t.state == TrialState::Complete));
    let by_number = |n: u64| all.iter().find(|t| t.number == n).unwrap().clone();
    let (ta, tb, tc, td) = (by_number(a), by_number(b), by_number(c), by_number(d));
    let width = |t: &FrozenTrial| t.param("width").unwrap().as_f64().unwrap();
    let lr = |t: &FrozenTrial| t.param("lr").unwrap().as_f64().unwrap();
    // A leads: C (same width) and D (no width) join it, with their own learning rates.
    for (t, want) in [(&ta, 0.01), (&tc, 0.03), (&td, 0.04)] {
        assert_eq!(t.system_attrs[GROUP_ATTR], ta.system_attrs[GROUP_ATTR]);
        assert_eq!((width(t), lr(t)), (16.0, want));
        assert_eq!(t.values, Some(vec![want * 16.0]));
    }
    // B pins another width: it leads the next group, filled with two new trials.
    assert_ne!(tb.system_attrs[GROUP_ATTR], ta.system_attrs[GROUP_ATTR]);
    assert_eq!((width(&tb), lr(&tb)), (32.0, 0.02));
    let with_b: Vec<_> = all
        .iter()
        .filter(|t| t.system_attrs[GROUP_ATTR] == tb.system_attrs[GROUP_ATTR])
        .collect();
    assert_eq!(with_b.len(), 3);
    assert!(with_b.iter().all(|t| width(t) == 32.0));
}

/// Before any group of a study has recorded which names are shared, a group takes WAITING
/// trials in order. When two of them pin different values of a name the group then samples
/// as shared, nothing is replaced: the group fails with `PinnedValueConflict` naming the
/// trial, the name and both values, and the names are recorded, so the same trials
/// enqueued again train in separate groups.
#[test]
fn an_enqueued_shared_value_that_conflicts_fails_the_group_instead_of_being_replaced() {
    let study = random_study(5);
    let objective = |g: &mut saturate_train::GroupTrial<'_, DefaultStudy>| {
        let width = g.shared().suggest_int("width", 8, 64)?;
        let lr = g.member().suggest_float_log("lr", 1e-4, 1e-1)?;
        Ok::<_, ObjectiveError>(lr.map(|lr| lr * width as f64))
    };
    let enqueue = |width: i64, lr: f64| {
        use ParamValue::{Float, Int};
        study
            .enqueue(
                [
                    ("width".to_string(), Int(width)),
                    ("lr".to_string(), Float(lr)),
                ]
                .into(),
            )
            .unwrap()
    };
    let (a, b) = (enqueue(16, 0.01), enqueue(32, 0.02));
    let summary = run(&study, &quiet(2, 2), objective).unwrap();
    assert_eq!((summary.failed, summary.complete), (2, 0));
    let all = trials(&study);
    let tb = all.iter().find(|t| t.number == b).unwrap();
    let reason = tb.system_attrs["fail_reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("trial {b} pins `width` = 32")) && reason.contains("has 16"),
        "{reason}"
    );
    assert!(
        tb.param("width").is_none(),
        "the pinned value was not replaced"
    );
    assert!(all
        .iter()
        .any(|t| t.number == a && t.state == TrialState::Fail));
    assert_eq!(
        study.system_attrs().unwrap()[saturate_train::SHARED_PARAMS_ATTR],
        serde_json::json!(["width"])
    );
    // Enqueued again, they train apart.
    let (a, b) = (enqueue(16, 0.01), enqueue(32, 0.02));
    let summary = run(&study, &quiet(2, 4), objective).unwrap();
    assert_eq!((summary.complete, summary.groups), (4, 2));
    let all = trials(&study);
    let group_of =
        |n: u64| all.iter().find(|t| t.number == n).unwrap().system_attrs[GROUP_ATTR].clone();
    assert_ne!(group_of(a), group_of(b));
}
