//! Several processes on one journal file. The worker processes are this test binary,
//! re-run on the `worker_process` test with `SATURATE_STUDY_WORKER` set: no extra build.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Child, Command};
use std::sync::Arc;
use std::time::Duration;

use saturate_study::prelude::*;
use saturate_study::storage::{JournalFileBackend, JournalLock};

use crate::common::tempdir;

const WORKER_ENV: &str = "SATURATE_STUDY_WORKER";

/// Entry point of a worker process: `SATURATE_STUDY_WORKER=<journal>:<n_trials>:<lock>`
/// (`symlink` or `open`). Does nothing in a normal test run.
#[test]
fn worker_process() {
    let Ok(spec) = std::env::var(WORKER_ENV) else {
        return;
    };
    let (rest, lock) = spec.rsplit_once(':').unwrap();
    let (path, n) = rest.rsplit_once(':').unwrap();
    let lock = match lock {
        "symlink" => JournalLock::Symlink,
        _ => JournalLock::OpenFile,
    };
    let backend = JournalFileBackend::new(path).unwrap().with_lock(lock);
    let storage: Arc<dyn Storage> = Arc::new(JournalStorage::new(backend));
    let study = StudyConfig::new()
        .with_name("shared")
        .with_storage(storage)
        .with_sampler(RandomSamplerConfig::new().init())
        .with_pruner(NopPruner)
        .with_load_if_exists(true)
        .init()
        .unwrap();
    for _ in 0..n.parse::<usize>().unwrap() {
        let mut t = study.ask().unwrap();
        let x = t.suggest_float("x", 0.0, 1.0).unwrap();
        t.report(0, x).unwrap();
        study.tell(&t, &[x]).unwrap();
    }
}

fn spawn_worker(journal: &Path, n_trials: usize, lock: JournalLock) -> Child {
    let lock = match lock {
        JournalLock::Symlink => "symlink",
        JournalLock::OpenFile => "open",
    };
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "concurrency::worker_process",
            "--test-threads=1",
            "--quiet",
        ])
        .env(
            WORKER_ENV,
            format!("{}:{n_trials}:{lock}", journal.display()),
        )
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

fn create_shared(journal: &Path) {
    JournalStorage::open(journal)
        .unwrap()
        .create_new_study(&[StudyDirection::Minimize], "shared")
        .unwrap();
}

#[test]
fn four_processes_times_one_hundred_trials() {
    four_processes_times_one_hundred_trials_with(JournalLock::default());
}

#[test]
fn four_processes_with_the_open_file_lock() {
    // The lock of platforms without symlinks, exercised here too.
    four_processes_times_one_hundred_trials_with(JournalLock::OpenFile);
}

fn four_processes_times_one_hundred_trials_with(lock: JournalLock) {
    let dir = tempdir();
    let journal = dir.path().join("shared.log");
    create_shared(&journal);
    let workers: Vec<Child> = (0..4).map(|_| spawn_worker(&journal, 100, lock)).collect();
    for mut w in workers {
        assert!(w.wait().unwrap().success());
    }
    let trials = JournalStorage::open(&journal)
        .unwrap()
        .get_all_trials(0, None)
        .unwrap();
    assert_eq!(trials.len(), 400);
    assert!(trials
        .iter()
        .all(|t| t.state == TrialState::Complete && t.params.contains_key("x")));
    let numbers: BTreeSet<u64> = trials.iter().map(|t| t.number).collect();
    assert_eq!(numbers, (0..400).collect());
    let ids: BTreeSet<u64> = trials.iter().map(|t| t.trial_id).collect();
    assert_eq!(ids.len(), 400);
}

#[test]
fn a_worker_killed_mid_study_leaves_a_loadable_file() {
    let dir = tempdir();
    let journal = dir.path().join("killed.log");
    create_shared(&journal);
    let mut worker = spawn_worker(&journal, 100_000, JournalLock::default());
    // Let it write for a while, then SIGKILL it (Child::kill sends SIGKILL on Unix).
    let storage = JournalStorage::open(&journal).unwrap();
    while storage.get_all_trials(0, None).unwrap().len() < 20 {
        std::thread::sleep(Duration::from_millis(20));
    }
    worker.kill().unwrap();
    worker.wait().unwrap();
    let reloaded = JournalStorage::open(&journal).unwrap();
    let trials = reloaded.get_all_trials(0, None).unwrap();
    assert!(trials.len() >= 20);
    assert!(trials[..trials.len() - 1]
        .iter()
        .all(|t| t.state == TrialState::Complete));
    // Python Optuna loads it too.
    for py in crate::interop::pythons() {
        let dump = crate::interop::python(&py, &["dump", journal.to_str().unwrap()]);
        assert!(dump.contains("\"name\": \"shared\""));
    }
    // New writers continue; a lock left by the killed worker is released after the grace
    // period (shortened here from Optuna's 30 s).
    let backend = JournalFileBackend::new(&journal)
        .unwrap()
        .with_grace_period(Duration::from_millis(500));
    let study = crate::common::study_on(Arc::new(JournalStorage::new(backend)), "after-kill");
    study
        .optimize(Some(3), None, |t| Ok(t.suggest_float("x", 0.0, 1.0)?))
        .unwrap();
    assert_eq!(
        study.trials(Some(&[TrialState::Complete])).unwrap().len(),
        3
    );
}
