//! Several processes on one journal, SIGINT, and the journal read by Python Optuna. The child
//! processes are this test binary, re-run on the ignored `child_worker` test.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use saturate_study::prelude::*;
use saturate_study::study::ObjectiveError;
use saturate_train::{run, Members, RunConfig, TrainError, GROUP_ATTR, WORKER_ATTR};
use serde_json::Value;

const CHILD_ENV: &str = "SATURATE_TRAIN_CHILD";

fn journal_study(journal: &Path, seed: Option<u64>) -> DefaultStudy {
    let storage: Arc<dyn Storage> = Arc::new(JournalStorage::open(journal).unwrap());
    StudyConfig::new()
        .with_name("grouped")
        .with_storage(storage)
        .with_sampler(
            TpeSamplerConfig::new()
                .with_seed(seed.unwrap_or(0))
                .with_constant_liar(true)
                .init()
                .unwrap(),
        )
        .with_pruner(NopPruner)
        .with_load_if_exists(true)
        .init()
        .unwrap()
}

/// The grouped objective the children run: a shared width, a per-member learning rate.
fn objective(
    g: &mut saturate_train::GroupTrial<'_, DefaultStudy>,
) -> Result<Members<f64>, ObjectiveError> {
    let width = g.shared().suggest_int("width", 8, 48)?;
    let lr = g.member().suggest_float_log("lr", 1e-4, 1e-1)?;
    g.report(0, &lr)?;
    Ok(lr.map(|lr| (lr.log10() + 2.0).abs() + width as f64 / 100.0))
}

/// Entry point of a child process: `SATURATE_TRAIN_CHILD=<mode>:<journal>`.
#[test]
#[ignore = "a child process of the tests in this module, run by them"]
fn child_worker() {
    let spec = std::env::var(CHILD_ENV).expect("run by the tests of processes.rs");
    let (mode, journal) = spec.split_once(':').unwrap();
    let study = journal_study(Path::new(journal), Some(std::process::id() as u64));
    match mode {
        "share" => {
            let config = RunConfig::new()
                .with_group_size(4)
                .with_n_trials(6)
                .with_progress(false);
            let summary = run(&study, &config, objective).unwrap();
            assert_eq!(summary.complete, 6);
        }
        "sigint" => {
            let config = RunConfig::new()
                .with_group_size(3)
                .with_n_trials(9)
                .with_progress(false);
            let result = run(
                &study,
                &config,
                |g| -> Result<Members<f64>, ObjectiveError> {
                    let x = g.member().suggest_float("x", 0.0, 1.0)?;
                    println!("READY");
                    for step in 0.. {
                        std::thread::sleep(Duration::from_millis(20));
                        g.report(step, &x)?;
                    }
                    unreachable!()
                },
            );
            match result {
                Err(TrainError::Interrupted { failed }) => println!("INTERRUPTED {failed}"),
                other => panic!("expected an interrupt, got {other:?}"),
            }
        }
        "after" => {
            // "Before the run" is the default disposition here: a test harness started from a
            // background job of a non-interactive shell inherits SIGINT ignored, and the run
            // would then (rightly) restore "ignored".
            #[cfg(unix)]
            #[allow(unsafe_code)]
            // SAFETY: setting a signal's disposition to the default, before any thread of
            // this process could be handling it.
            unsafe {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
            }
            let config = RunConfig::new()
                .with_group_size(2)
                .with_n_trials(2)
                .with_progress(false);
            assert!(
                config.handle_interrupt,
                "the default catches SIGINT during the run"
            );
            let summary = run(&study, &config, objective).unwrap();
            assert_eq!(summary.complete, 2);
            println!("RAN");
            // Ctrl-C now must end the process, as it did before the run.
            std::thread::sleep(Duration::from_secs(30));
            println!("STILL ALIVE");
        }
        other => panic!("unknown child mode {other}"),
    }
}

fn spawn_child(mode: &str, journal: &Path) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "processes::child_worker",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, format!("{mode}:{}", journal.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

/// Waits until the child prints a line ending with `marker`, sends it SIGINT, and returns it
/// with the rest of its output (read to its end).
fn sigint_after(mut child: Child, marker: &str) -> (Child, Vec<String>) {
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for line in lines.by_ref() {
        // libtest prints "test processes::child_worker ... " before the child's own output.
        if line.unwrap().trim_end().ends_with(marker) {
            break;
        }
    }
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let rest = lines.map(Result::unwrap).collect();
    (child, rest)
}

/// The interpreters of the Optuna venvs that `scripts/setup-python.sh` creates.
pub(crate) fn pythons() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    ["4.9.0", "5.0.0"]
        .iter()
        .map(|v| {
            let python = root.join(format!("target/venv/optuna-{v}/bin/python"));
            assert!(
                python.exists(),
                "{} is missing: run scripts/setup-python.sh (the interop tests need Python \
                 Optuna 4.9.0 and 5.0.0)",
                python.display()
            );
            python
        })
        .collect()
}

/// What Python Optuna sees in a journal: per trial (number, state, params, group).
fn optuna_view(python: &Path, journal: &Path) -> Vec<Value> {
    let script = r#"
import json, sys, optuna
from optuna.storages.journal import JournalFileBackend, JournalStorage
storage = JournalStorage(JournalFileBackend(sys.argv[1]))
study = optuna.load_study(study_name="grouped", storage=storage)
print(json.dumps([{
    "number": t.number,
    "state": t.state.name,
    "params": t.params,
    "distributions": {k: optuna.distributions.distribution_to_json(v) for k, v in t.distributions.items()},
    "group": t.system_attrs.get("saturate:group"),
    "fail_reason": t.system_attrs.get("fail_reason"),
} for t in study.trials]))
"#;
    let out = Command::new(python)
        .args(["-c", script, journal.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{} failed: {}",
        python.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap()
}

#[test]
fn three_processes_share_one_journal_without_mixing_groups() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("grouped.log");
    journal_study(&journal, None);
    let children: Vec<Child> = (0..3).map(|_| spawn_child("share", &journal)).collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let trials = journal_study(&journal, None).trials(None).unwrap();
    assert_eq!(trials.len(), 18);
    let numbers: BTreeSet<u64> = trials.iter().map(|t| t.number).collect();
    assert_eq!(numbers, (0..18).collect());
    let mut groups: BTreeMap<String, Vec<_>> = BTreeMap::new();
    for t in &trials {
        assert_eq!(t.state, TrialState::Complete);
        groups
            .entry(t.system_attrs[GROUP_ATTR].as_str().unwrap().to_string())
            .or_default()
            .push(t.clone());
    }
    // Each process ran groups of 4 and 2; a group's trials come from one process and share
    // their width.
    let mut sizes: Vec<usize> = groups.values().map(Vec::len).collect();
    sizes.sort();
    assert_eq!(sizes, vec![2, 2, 2, 4, 4, 4]);
    for members in groups.values() {
        let workers: BTreeSet<String> = members
            .iter()
            .map(|t| t.system_attrs[WORKER_ATTR].to_string())
            .collect();
        assert_eq!(workers.len(), 1, "a group mixes processes");
        let widths: BTreeSet<String> = members
            .iter()
            .map(|t| t.param("width").unwrap().to_string())
            .collect();
        assert_eq!(widths.len(), 1);
    }
    // Python Optuna sees 18 ordinary trials with the same groups and shared values.
    for python in pythons() {
        let view = optuna_view(&python, &journal);
        assert_eq!(view.len(), 18, "{}", python.display());
        let mut by_group: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for t in &view {
            assert_eq!(t["state"], "COMPLETE");
            by_group
                .entry(t["group"].as_str().unwrap().to_string())
                .or_default()
                .insert(format!(
                    "{}|{}",
                    t["params"]["width"], t["distributions"]["width"]
                ));
        }
        assert_eq!(by_group.len(), 6);
        assert!(by_group.values().all(|w| w.len() == 1), "{by_group:?}");
    }
}

#[test]
fn sigint_marks_in_flight_trials_failed_and_leaves_a_loadable_journal() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("grouped.log");
    journal_study(&journal, None);
    let (mut child, rest) = sigint_after(spawn_child("sigint", &journal), "READY");
    assert!(child.wait().unwrap().success(), "child output: {rest:?}");
    assert!(
        rest.iter().any(|l| l.contains("INTERRUPTED 3")),
        "child output: {rest:?}"
    );
    let trials = journal_study(&journal, None).trials(None).unwrap();
    assert_eq!(trials.len(), 3, "no group may start after the interrupt");
    for t in &trials {
        assert_eq!(t.state, TrialState::Fail);
        assert_eq!(t.system_attrs["fail_reason"], "interrupted");
    }
    for python in pythons() {
        let view = optuna_view(&python, &journal);
        assert_eq!(view.len(), 3);
        assert!(view
            .iter()
            .all(|t| t["state"] == "FAIL" && t["fail_reason"] == "interrupted"));
    }
}

/// The SIGINT handler is the run's only while it runs: a Ctrl-C after `run` returned ends the
/// process as the default disposition does (it used to be swallowed into a log line).
#[cfg(unix)]
#[test]
fn sigint_after_the_run_ends_the_process_as_before() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("after.log");
    journal_study(&journal, None);
    let started = std::time::Instant::now();
    let (mut child, rest) = sigint_after(spawn_child("after", &journal), "RAN");
    let status = child.wait().unwrap();
    assert_eq!(
        status.signal(),
        Some(2),
        "the child was not ended by SIGINT ({status}, {:?} after it started); output: {rest:?}",
        started.elapsed()
    );
    assert!(!rest.iter().any(|l| l.contains("STILL ALIVE")), "{rest:?}");
}
