//! Heartbeats of groups on a journal with heartbeats: a group's trials stay alive while it
//! trains, and a dead worker's trials are failed and retried before the runner asks.

use std::sync::Arc;
use std::time::Duration;

use saturate_study::prelude::*;
use saturate_study::storage::{fail_stale_trials, RetryFailedTrialCallback};
use saturate_study::TrialState;
use saturate_train::run;
use serde_json::Value;

use crate::common::{quiet, trials};

fn heartbeat_study(dir: &tempfile::TempDir, interval: Duration, grace: Duration) -> DefaultStudy {
    let storage = JournalStorage::open(dir.path().join("journal.log"))
        .unwrap()
        .with_heartbeat(
            interval,
            Some(grace),
            Some(RetryFailedTrialCallback::default().into_callback()),
        )
        .unwrap();
    StudyConfig::new()
        .with_name("heartbeats")
        .with_storage(Arc::new(storage))
        .with_sampler(RandomSamplerConfig::new().with_seed(0).init())
        .with_pruner(NopPruner)
        .init()
        .unwrap()
}

/// The journal's heartbeat attribute of a trial (its last beat).
fn last_beat(study: &DefaultStudy, trial_id: u64) -> Option<Value> {
    study
        .storage()
        .get_trial(trial_id)
        .unwrap()
        .system_attrs
        .get("saturate:heartbeat")
        .cloned()
}

#[test]
fn a_group_training_past_the_grace_period_keeps_every_trial_alive() {
    let dir = tempfile::tempdir().unwrap();
    let study = heartbeat_study(&dir, Duration::from_millis(50), Duration::from_millis(600));
    let summary = run(&study, &quiet(3, 3), |g| {
        let x = g.member().suggest_float("x", 0.0, 1.0)?;
        let ids: Vec<u64> = study
            .trials(Some(&[TrialState::Running]))?
            .iter()
            .map(|t| t.trial_id)
            .collect();
        assert_eq!(ids.len(), 3);
        let first: Vec<_> = ids.iter().map(|&id| last_beat(&study, id)).collect();
        assert!(
            first.iter().all(Option::is_some),
            "no first heartbeat: {first:?}"
        );
        // Three grace periods: without a beat in between, another worker would fail them.
        std::thread::sleep(Duration::from_millis(1800));
        let failed = fail_stale_trials(&**study.storage(), study.id())?;
        assert_eq!(
            failed,
            Vec::<u64>::new(),
            "a live group's trials were failed as stale"
        );
        for (id, before) in ids.iter().zip(&first) {
            assert_ne!(
                &last_beat(&study, *id),
                before,
                "trial {id}'s heartbeat did not move"
            );
        }
        Ok(x)
    })
    .unwrap();
    assert_eq!((summary.complete, summary.failed), (3, 0));
}

#[test]
fn a_dead_workers_trials_are_failed_and_retried_before_the_next_group() {
    let dir = tempfile::tempdir().unwrap();
    let study = heartbeat_study(&dir, Duration::from_millis(50), Duration::from_millis(200));
    // A worker that asked two trials, beat once, and died.
    let mut dead = study.ask_many(2).unwrap();
    let mut dead_x = Vec::new();
    for trial in &mut dead {
        dead_x.push(trial.suggest_float("x", 0.0, 1.0).unwrap());
        study.storage().record_heartbeat(trial.id()).unwrap();
    }
    drop(dead);
    std::thread::sleep(Duration::from_millis(500));
    let summary = run(&study, &quiet(3, 3), |g| {
        Ok(g.member().suggest_float("x", 0.0, 1.0)?)
    })
    .unwrap();
    assert_eq!(summary.complete, 3);
    let all = trials(&study);
    let states: Vec<_> = all.iter().map(|t| t.state).collect();
    assert_eq!(
        states,
        [
            TrialState::Fail,
            TrialState::Fail,
            TrialState::Complete,
            TrialState::Complete,
            TrialState::Complete
        ]
    );
    // The group claimed both retries (with their original values) and one new trial.
    for (number, x) in dead_x.iter().enumerate() {
        let retry = all
            .iter()
            .find(|t| RetryFailedTrialCallback::retried_trial_number(t) == Some(number as u64))
            .unwrap_or_else(|| panic!("trial {number} was not retried"));
        assert_eq!(retry.state, TrialState::Complete);
        assert_eq!(retry.params["x"].value().as_f64(), Some(*x));
    }
}
