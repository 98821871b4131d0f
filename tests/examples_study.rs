//! The study-layer examples (no Burn), run in their short mode: what each prints and writes,
//! read back by saturate and by Python Optuna 4.9.0 and 5.0.0.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use saturate::study::prelude::*;
use saturate::train::{GROUP_ATTR, WORKER_ATTR};

use crate::support::{example, optuna_load, run_example};

/// The Optuna versions every journal is loaded with.
const OPTUNA_VERSIONS: [&str; 2] = ["4.9.0", "5.0.0"];

/// The trials of study `name` in `journal`, in number order, as saturate reads them.
fn journal_trials(journal: &Path, name: &str) -> Vec<Arc<FrozenTrial>> {
    assert!(journal.exists(), "{} was not written", journal.display());
    let storage = JournalStorage::open(journal).expect("the journal opens");
    let id = storage
        .get_study_id_from_name(name)
        .unwrap_or_else(|e| panic!("no study {name} in {}: {e}", journal.display()));
    storage.get_all_trials(id, None).expect("the trials load")
}

/// Checks that trial numbers are exactly 0..n, each once.
fn assert_consecutive(trials: &[Arc<FrozenTrial>]) {
    let numbers: Vec<u64> = trials.iter().map(|t| t.number).collect();
    let expected: Vec<u64> = (0..trials.len() as u64).collect();
    assert_eq!(
        numbers,
        expected,
        "trial numbers are not 0..{}",
        trials.len()
    );
    let ids: BTreeSet<u64> = trials.iter().map(|t| t.trial_id).collect();
    assert_eq!(ids.len(), trials.len(), "trial ids are not unique");
}

/// The best COMPLETE value (minimize).
fn best_value(trials: &[Arc<FrozenTrial>]) -> f64 {
    trials
        .iter()
        .filter(|t| t.state == TrialState::Complete)
        .filter_map(|t| t.value())
        .min_by(f64::total_cmp)
        .expect("a complete trial")
}

/// Checks Python Optuna's view of the journal: trial count, COMPLETE count and best value.
fn assert_optuna_agrees(journal: &Path, name: &str, trials: &[Arc<FrozenTrial>]) {
    let complete = trials
        .iter()
        .filter(|t| t.state == TrialState::Complete)
        .count();
    let best = best_value(trials);
    for version in OPTUNA_VERSIONS {
        let (n, c, b) = optuna_load(version, journal, name);
        assert_eq!((n, c), (trials.len(), complete), "Optuna {version}: counts");
        let b = b.unwrap_or_else(|| panic!("Optuna {version} sees no best value"));
        assert!(b.is_finite(), "Optuna {version}: best value {b}");
        assert!(
            (b - best).abs() <= 1e-12 * best.abs().max(1.0),
            "Optuna {version}: best {b}, saturate {best}"
        );
    }
}

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Every number in the first line of `text` that starts with `prefix`.
fn numbers_after(text: &str, prefix: &str) -> Vec<f64> {
    let line = text
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starting with {prefix:?} in:\n{text}"));
    line.split(|c: char| c.is_whitespace() || c == ',')
        .filter_map(|w| w.parse().ok())
        .collect()
}

#[test]
fn ask_tell_writes_a_journal_optuna_loads() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_example("ask_tell", &["--storage", "study.journal"], &[], dir.path());
    let text = stdout(&out);
    let journal = dir.path().join("study.journal");
    let trials = journal_trials(&journal, "ask-tell");

    assert_eq!(trials.len(), 12, "short mode runs 12 trials:\n{text}");
    assert_consecutive(&trials);
    // The enqueued trial is the first one, with its fixed parameters.
    let first = &trials[0];
    assert!(first.system_attrs.contains_key("fixed_params"));
    assert_eq!(first.param("lr"), Some(ParamValue::Float(0.01)));
    assert_eq!(first.param("layers"), Some(ParamValue::Int(2)));
    assert_eq!(first.param("optimizer"), Some(ParamValue::from("adam")));
    for trial in &trials {
        assert!(
            matches!(trial.state, TrialState::Complete | TrialState::Pruned),
            "trial {} is {:?}",
            trial.number,
            trial.state
        );
        assert!(!trial.intermediate_values.is_empty(), "nothing reported");
        for name in ["lr", "dropout", "layers", "optimizer"] {
            assert!(
                trial.params.contains_key(name),
                "trial {} lacks {name}",
                trial.number
            );
        }
    }
    assert!(
        trials.iter().any(|t| t.state == TrialState::Pruned),
        "the median pruner pruned nothing:\n{text}"
    );
    let best = best_value(&trials);
    assert!(
        text.contains(&format!("value {best:.6}")),
        "the printed best is not {best}:\n{text}"
    );
    assert_optuna_agrees(&journal, "ask-tell", &trials);
}

#[test]
fn custom_sampler_and_pruner_are_used() {
    let dir = tempfile::tempdir().unwrap();
    let text = stdout(&run_example("custom_sampler_pruner", &[], &[], dir.path()));
    let counts = numbers_after(&text, "trials:");
    let (trials, complete, pruned) = (counts[0], counts[1], counts[2]);
    assert_eq!(trials, 30.0, "short mode runs 30 trials:\n{text}");
    assert_eq!(complete + pruned, trials, "every trial complete or pruned");
    assert!(pruned > 0.0, "WorseThanBestPruner pruned nothing:\n{text}");
    assert!(complete > 0.0, "no trial completed:\n{text}");
    let draws = numbers_after(&text, "sampler:");
    let (local, uniform) = (draws[0], draws[1]);
    // Five parameters per trial, each drawn by the custom sampler one way or the other.
    assert_eq!(local + uniform, 5.0 * trials, "draws:\n{text}");
    assert!(local > 0.0, "the local search never ran:\n{text}");
    // The first 5 trials (no parent yet) are all uniform.
    assert!(uniform >= 25.0, "startup trials were not uniform:\n{text}");
    let best = numbers_after(&text, "best trial:");
    assert!(best[1].is_finite(), "best value:\n{text}");
}

#[test]
fn distributed_workers_share_one_journal() {
    const WORKERS: usize = 3;
    const TRIALS: usize = 12;
    let dir = tempfile::tempdir().unwrap();
    let children: Vec<_> = (0..WORKERS)
        .map(|_| {
            Command::new(example("distributed"))
                .args([
                    "--storage",
                    "study.journal",
                    "--trials",
                    &TRIALS.to_string(),
                ])
                .env("SATURATE_SHORT", "1")
                .current_dir(dir.path())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("the example starts")
        })
        .collect();
    let mut pids = BTreeSet::new();
    for child in children {
        pids.insert(child.id());
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "a worker failed ({}):\n{}\n{}",
            out.status,
            stdout(&out),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    let journal = dir.path().join("study.journal");
    let trials = journal_trials(&journal, "distributed");
    assert_eq!(trials.len(), WORKERS * TRIALS);
    assert_consecutive(&trials);

    let attr = |t: &FrozenTrial, key: &str| -> String {
        t.system_attrs
            .get(key)
            .and_then(|v| v.as_str())
            .unwrap_or_else(|| panic!("trial {} has no {key}", t.number))
            .to_owned()
    };
    let mut groups: BTreeMap<String, Vec<&FrozenTrial>> = BTreeMap::new();
    let mut per_worker: BTreeMap<String, usize> = BTreeMap::new();
    for trial in &trials {
        assert!(
            matches!(trial.state, TrialState::Complete | TrialState::Pruned),
            "trial {} is {:?}",
            trial.number,
            trial.state
        );
        groups
            .entry(attr(trial, GROUP_ATTR))
            .or_default()
            .push(trial);
        *per_worker.entry(attr(trial, WORKER_ATTR)).or_default() += 1;
    }
    // Each worker ran its own trials, and the workers are the processes started here.
    assert_eq!(per_worker.len(), WORKERS, "workers: {per_worker:?}");
    for (worker, count) in &per_worker {
        assert_eq!(*count, TRIALS, "worker {worker}");
        let pid: u32 = worker.rsplit(':').next().unwrap().parse().unwrap();
        assert!(
            pids.contains(&pid),
            "worker {worker} is not one of {pids:?}"
        );
    }
    // Groups never mix processes: one worker per group, at most 4 trials, one shared depth.
    assert_eq!(
        groups.len(),
        WORKERS * TRIALS / 4,
        "groups: {:?}",
        groups.keys()
    );
    for (group, members) in &groups {
        let workers: BTreeSet<String> = members.iter().map(|t| attr(t, WORKER_ATTR)).collect();
        assert_eq!(workers.len(), 1, "group {group} mixes workers {workers:?}");
        let worker = workers.first().unwrap();
        assert!(group.starts_with(&format!("{worker}:")), "group {group}");
        assert!(members.len() <= 4, "group {group} has {}", members.len());
        let depths: BTreeSet<String> = members
            .iter()
            .map(|t| format!("{:?}", t.param("depth")))
            .collect();
        assert_eq!(depths.len(), 1, "group {group} depths {depths:?}");
    }
    assert_optuna_agrees(&journal, "distributed", &trials);
}

#[test]
fn resume_continues_an_interrupted_study() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["--storage", "study.journal", "--trials", "6"];
    let first = stdout(&run_example(
        "resume",
        &[&args[..], &["--stop-after", "3"]].concat(),
        &[],
        dir.path(),
    ));
    assert!(first.contains("interrupted in trial 3"), "{first}");
    let journal = dir.path().join("study.journal");
    let trials = journal_trials(&journal, "resume");
    assert_eq!(trials.len(), 4, "3 finished trials and the interrupted one");
    assert_eq!(trials[3].state, TrialState::Running);
    let best_before = best_value(&trials);

    let second = stdout(&run_example("resume", &args, &[], dir.path()));
    assert!(second.contains("loaded study resume: 4 trials"), "{second}");
    assert!(
        second.lines().any(|l| l.starts_with("best so far: trial")
            && l.ends_with(&format!("value {best_before:.6}"))),
        "the best so far is not kept:\n{second}"
    );
    assert!(second.contains("trial 3 was left RUNNING"), "{second}");
    let new_numbers: Vec<u64> = second
        .lines()
        .filter(|l| l.starts_with("trial ") && l.contains(" value "))
        .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
        .collect();
    assert_eq!(new_numbers, (4..10).collect::<Vec<_>>(), "{second}");

    let trials = journal_trials(&journal, "resume");
    assert_eq!(trials.len(), 10);
    assert_consecutive(&trials);
    for trial in &trials {
        let expected = if trial.number == 3 {
            TrialState::Fail
        } else {
            TrialState::Complete
        };
        assert_eq!(trial.state, expected, "trial {}", trial.number);
    }
    assert!(trials[3].system_attrs.contains_key("fail_reason"));
    assert!(best_value(&trials) <= best_before);
    assert_optuna_agrees(&journal, "resume", &trials);
}

/// The throwaway PostgreSQL server's URL that `scripts/test.sh` sets.
fn test_postgres_url() -> String {
    std::env::var("SATURATE_TEST_POSTGRES_URL").expect(
        "SATURATE_TEST_POSTGRES_URL is unset: scripts/test.sh starts a throwaway PostgreSQL \
         (scripts/setup-postgres.sh start DIR) and sets it",
    )
}

/// Creates a minimizing study with a name no other run uses on `storage`; returns the name.
/// (Created before the workers start, so that none races another to create it.)
fn fresh_study(storage: &str, prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let name = format!("{prefix}-{}-{nanos}", std::process::id());
    StudyConfig::new()
        .with_name(name.clone())
        .with_direction(StudyDirection::Minimize)
        .with_storage(saturate::study::storage::open(storage).unwrap())
        .init()
        .unwrap();
    name
}

/// The multi-machine setup, on one machine: 3 `distributed` runner workers and 2 Python
/// Optuna 4.9 workers on one study in PostgreSQL (the throwaway server `scripts/test.sh`
/// starts, `SATURATE_TEST_POSTGRES_URL`). Every trial ends finished, numbered 0..N-1 once,
/// the runners' groups never mix processes, and Python Optuna reads the whole study.
#[test]
fn distributed_runners_and_python_workers_share_one_postgresql_study() {
    const RUNNERS: usize = 3;
    const RUNNER_TRIALS: usize = 8;
    const PYTHONS: usize = 2;
    const PYTHON_TRIALS: usize = 4;
    let url = test_postgres_url();
    let name = fresh_study(&url, "distributed");
    let python_url = url.replacen("postgresql://", "postgresql+psycopg2://", 1);
    let password = url
        .split_once("://")
        .and_then(|(_, rest)| rest.split_once('@'))
        .and_then(|(user_info, _)| user_info.split_once(':'))
        .map(|(_, password)| password.to_owned());
    let dir = tempfile::tempdir().unwrap();
    let mut children = Vec::new();
    for _ in 0..RUNNERS {
        let child = Command::new(example("distributed"))
            .args(["--storage", &url, "--study", &name])
            .args(["--trials", &RUNNER_TRIALS.to_string()])
            .env("SATURATE_SHORT", "1")
            .current_dir(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the example starts");
        children.push(("runner", child));
    }
    for _ in 0..PYTHONS {
        let child = python_distributed_worker(&python_url, &name, PYTHON_TRIALS);
        children.push(("python", child));
    }
    let mut runner_pids = BTreeSet::new();
    for (kind, child) in children {
        if kind == "runner" {
            runner_pids.insert(child.id());
        }
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "a {kind} worker failed ({}):\n{}\n{stderr}",
            out.status,
            stdout(&out)
        );
        if let Some(password) = password.as_deref().filter(|p| p.len() >= 4) {
            assert!(
                !stderr.contains(password) && !stdout(&out).contains(password),
                "a {kind} worker printed the database password"
            );
        }
    }

    let storage = saturate::study::storage::open(&url).unwrap();
    let id = storage.get_study_id_from_name(&name).unwrap();
    let trials = storage.get_all_trials(id, None).unwrap();
    assert_eq!(
        trials.len(),
        RUNNERS * RUNNER_TRIALS + PYTHONS * PYTHON_TRIALS
    );
    assert_consecutive(&trials);
    let mut groups: BTreeMap<String, Vec<&FrozenTrial>> = BTreeMap::new();
    let mut python = 0;
    for t in &trials {
        assert!(
            matches!(t.state, TrialState::Complete | TrialState::Pruned),
            "trial {} is {:?}",
            t.number,
            t.state
        );
        match t.system_attrs.get(GROUP_ATTR).and_then(|g| g.as_str()) {
            Some(group) => groups.entry(group.to_owned()).or_default().push(t),
            None => python += 1,
        }
    }
    assert_eq!(python, PYTHONS * PYTHON_TRIALS);
    assert_eq!(
        groups.len(),
        RUNNERS * RUNNER_TRIALS / 4,
        "{:?}",
        groups.keys()
    );
    for (group, members) in &groups {
        let workers: BTreeSet<&str> = members
            .iter()
            .map(|t| t.system_attrs[WORKER_ATTR].as_str().unwrap())
            .collect();
        assert_eq!(workers.len(), 1, "group {group} mixes workers {workers:?}");
        let pid: u32 = workers
            .first()
            .unwrap()
            .rsplit(':')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            runner_pids.contains(&pid),
            "group {group} of an unknown worker"
        );
        let depths: BTreeSet<String> = members
            .iter()
            .map(|t| format!("{:?}", t.param("depth")))
            .collect();
        assert_eq!(depths.len(), 1, "group {group} depths {depths:?}");
    }
    // Python Optuna reads the whole study back.
    let script = r#"
import sys, optuna
s = optuna.load_study(study_name=sys.argv[2], storage=sys.argv[1])
print(len(s.trials), sum(t.state.is_finished() for t in s.trials))
"#;
    let out = Command::new(crate::support::optuna_python("4.9.0"))
        .args(["-c", script, &python_url, &name])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let n = trials.len();
    assert_eq!(stdout(&out).trim(), format!("{n} {n}"));
}

/// A Python Optuna 4.9 worker on `storage` (a journal path or an RDB URL as SQLAlchemy takes
/// it), `n` trials of the `distributed` example's search space.
fn python_distributed_worker(storage: &str, name: &str, n: usize) -> std::process::Child {
    let script = r#"
import math, sys, optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)
url, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
if "://" not in url:
    from optuna.storages.journal import JournalFileBackend, JournalStorage
    url = JournalStorage(JournalFileBackend(url))
study = optuna.load_study(study_name=name, storage=url)
def objective(t):
    depth = t.suggest_int("depth", 1, 6)
    lr = t.suggest_float("lr", 1e-4, 1.0, log=True)
    momentum = t.suggest_float("momentum", 0.0, 0.99)
    return 0.2 * abs(depth - 3) + 0.5 * (math.log10(lr) + 1.5) ** 2 + (momentum - 0.9) ** 2
study.optimize(objective, n_trials=n)
print(len(study.trials))
"#;
    Command::new(crate::support::optuna_python("4.9.0"))
        .args(["-c", script, storage, name, &n.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("Python starts")
}

/// Workers die: 3 `distributed` runner workers (groups of 4, heartbeat 1 s, grace 3 s,
/// retry callback) and 2 Python Optuna workers on one study; one runner is SIGKILLed in the
/// middle of its first group. After the grace period a late runner worker starts: nothing is
/// left RUNNING or WAITING, numbers are 0..N-1 once each, every trial the kill left behind
/// was failed and retried with its parameters to a finished trial, and Python Optuna reads
/// the study. On PostgreSQL (the throwaway server of `scripts/test.sh`), a journal file and
/// SQLite.
#[test]
fn a_killed_runner_worker_s_trials_are_retried_on_every_storage() {
    const RUNNER_TRIALS: usize = 8;
    const PYTHON_TRIALS: usize = 3;
    let postgres = test_postgres_url();
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("killed.journal").display().to_string();
    let sqlite = format!("sqlite:///{}", dir.path().join("killed.db").display());
    for (storage, python_storage) in [
        (
            postgres.clone(),
            postgres.replacen("postgresql://", "postgresql+psycopg2://", 1),
        ),
        (journal.clone(), journal),
        (sqlite.clone(), sqlite),
    ] {
        let shown = saturate::study::storage::redact_url(&storage);
        let name = fresh_study(&storage, "killed");
        let runner = |trials: usize| {
            Command::new(example("distributed"))
                .args(["--storage", &storage, "--study", &name, "--heartbeat", "1"])
                .args(["--trials", &trials.to_string(), "--step-ms", "200"])
                .env("SATURATE_SHORT", "1")
                .current_dir(dir.path())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("the example starts")
        };
        let mut victim = runner(RUNNER_TRIALS);
        let others = [runner(RUNNER_TRIALS), runner(RUNNER_TRIALS)];
        let pythons = [
            python_distributed_worker(&python_storage, &name, PYTHON_TRIALS),
            python_distributed_worker(&python_storage, &name, PYTHON_TRIALS),
        ];
        // SIGKILL once the victim's first group is training.
        let mut lines =
            std::io::BufRead::lines(std::io::BufReader::new(victim.stdout.take().unwrap()));
        let started = lines
            .by_ref()
            .map(Result::unwrap)
            .find(|l| l.contains("] group "));
        assert!(
            started.is_some(),
            "{shown}: the victim never started a group"
        );
        victim.kill().unwrap();
        let killed_at = std::time::Instant::now();
        victim.wait().unwrap();
        for child in others.into_iter().chain(pythons) {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{shown}: a worker failed ({}):\n{}\n{}",
                out.status,
                stdout(&out),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        // The victim's heartbeats are older than the grace period (3 s) now.
        std::thread::sleep(Duration::from_secs(4).saturating_sub(killed_at.elapsed()));
        let late = runner(4).wait_with_output().unwrap();
        assert!(
            late.status.success(),
            "{shown}: the late worker failed:\n{}\n{}",
            stdout(&late),
            String::from_utf8_lossy(&late.stderr)
        );

        let store = saturate::study::storage::open(&storage).unwrap();
        let id = store.get_study_id_from_name(&name).unwrap();
        let trials = store.get_all_trials(id, None).unwrap();
        assert_consecutive(&trials);
        let failed: Vec<_> = trials
            .iter()
            .filter(|t| t.state == TrialState::Fail)
            .collect();
        assert!(!failed.is_empty(), "{shown}: the kill left no trial behind");
        for t in &trials {
            assert!(
                t.state.is_finished(),
                "{shown}: trial {} is {:?}",
                t.number,
                t.state
            );
        }
        for f in &failed {
            let retry = trials
                .iter()
                .find(|t| {
                    saturate::study::storage::RetryFailedTrialCallback::retried_trial_number(t)
                        == Some(f.number)
                })
                .unwrap_or_else(|| panic!("{shown}: trial {} was not retried", f.number));
            assert!(
                matches!(retry.state, TrialState::Complete | TrialState::Pruned),
                "{shown}: retry {} of {} is {:?}",
                retry.number,
                f.number,
                retry.state
            );
            for name in ["depth", "lr", "momentum"] {
                assert_eq!(retry.param(name), f.param(name), "{shown}: {name}");
            }
        }
        // Python Optuna reads the whole study.
        let python = python_distributed_worker(&python_storage, &name, 0)
            .wait_with_output()
            .unwrap();
        assert!(
            python.status.success(),
            "{shown}: {}",
            String::from_utf8_lossy(&python.stderr)
        );
        assert_eq!(stdout(&python).trim(), trials.len().to_string(), "{shown}");
    }
}
