//! Interop with the real Python Optuna (4.9.0 and 5.0.0, installed by
//! `scripts/setup-python.sh` under `target/venv/`). The venvs are found through
//! `SATURATE_OPTUNA_VENVS` (colon-separated venv directories) or at their default paths.
//! A missing venv fails the tests, with the command that sets it up; only outside CI (no
//! `CI` variable) can `SATURATE_SKIP_INTEROP=1` skip them, and it says so.
//!
//! Each test compares a canonical dump of every study in a journal, made by Python
//! (`scripts/python/optuna_interop.py dump`) and by saturate (`dump` below).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use saturate_study::prelude::*;
use serde_json::{json, Value};

use crate::common::tempdir;

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The Python interpreters of the Optuna venvs that exist.
pub fn pythons() -> Vec<PathBuf> {
    let venvs: Vec<PathBuf> = match std::env::var("SATURATE_OPTUNA_VENVS") {
        Ok(list) => list
            .split(':')
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
            .collect(),
        Err(_) => ["optuna-4.9.0", "optuna-5.0.0"]
            .iter()
            .map(|v| workspace_root().join("target/venv").join(v))
            .collect(),
    };
    let (found, missing): (Vec<PathBuf>, Vec<PathBuf>) = venvs
        .iter()
        .map(|v| v.join("bin/python"))
        .partition(|p| p.exists());
    if missing.is_empty() {
        return found;
    }
    let skip = std::env::var_os("SATURATE_SKIP_INTEROP").is_some_and(|v| v == "1");
    if skip && std::env::var_os("CI").is_none() {
        eprintln!("note: SATURATE_SKIP_INTEROP=1: Optuna interop checks skipped");
        return Vec::new();
    }
    panic!(
        "no Python Optuna at {missing:?}: run scripts/setup-python.sh (or point \
         SATURATE_OPTUNA_VENVS at venvs with optuna); outside CI, SATURATE_SKIP_INTEROP=1 \
         skips these checks"
    );
}

pub fn script() -> PathBuf {
    workspace_root().join("scripts/python/optuna_interop.py")
}

/// Runs the interop script; panics with its stderr on failure.
pub fn python(python: &Path, args: &[&str]) -> String {
    let out = Command::new(python)
        .arg(script())
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{} {args:?} failed:\n{}",
        python.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn python_dump(py: &Path, journal: &Path) -> Value {
    serde_json::from_str(&python(py, &["dump", journal.to_str().unwrap()])).unwrap()
}

fn canon(x: f64) -> Value {
    if x.is_nan() {
        json!("NaN")
    } else if x.is_infinite() {
        json!(if x > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        json!(x)
    }
}

fn state_name(state: TrialState) -> &'static str {
    match state {
        TrialState::Running => "RUNNING",
        TrialState::Complete => "COMPLETE",
        TrialState::Pruned => "PRUNED",
        TrialState::Fail => "FAIL",
        TrialState::Waiting => "WAITING",
    }
}

fn datetime(dt: Option<chrono::NaiveDateTime>) -> Value {
    dt.map_or(Value::Null, |dt| {
        json!(dt.format("%Y-%m-%dT%H:%M:%S%.6f").to_string())
    })
}

/// saturate's view of every study in a storage, in the script's canonical form.
pub fn dump(storage: &dyn Storage) -> Value {
    let mut studies = Vec::new();
    for (id, name) in storage.get_all_studies().unwrap() {
        let trials: Vec<Value> = storage
            .get_all_trials(id, None)
            .unwrap()
            .iter()
            .map(|t| {
                let params: BTreeMap<&String, Value> = t
                    .params
                    .iter()
                    .map(|(k, p)| {
                        let v = match p.value() {
                            ParamValue::Float(f) => canon(f),
                            ParamValue::Int(i) => json!(i),
                            ParamValue::Categorical(c) => serde_json::from_str(&c.to_string()).unwrap(),
                        };
                        (k, v)
                    })
                    .collect();
                json!({
                    "number": t.number,
                    "trial_id": t.trial_id,
                    "state": state_name(t.state),
                    "values": t.values.as_ref().map(|v| v.iter().map(|x| canon(*x)).collect::<Vec<_>>()),
                    "params": params,
                    "distributions": t.params.iter().map(|(k, p)| (k.clone(), json!(p.distribution.to_json_string()))).collect::<serde_json::Map<_, _>>(),
                    "intermediate_values": t.intermediate_values.iter().map(|(s, v)| (s.to_string(), canon(*v))).collect::<serde_json::Map<_, _>>(),
                    "user_attrs": t.user_attrs,
                    "system_attrs": t.system_attrs,
                    "datetime_start": datetime(t.datetime_start),
                    "datetime_complete": datetime(t.datetime_complete),
                })
            })
            .collect();
        let directions: Vec<&str> = storage
            .get_study_directions(id)
            .unwrap()
            .iter()
            .map(|d| match d {
                StudyDirection::Minimize => "MINIMIZE",
                StudyDirection::Maximize => "MAXIMIZE",
                StudyDirection::NotSet => "NOT_SET",
            })
            .collect();
        studies.push(json!({
            "name": name,
            "directions": directions,
            "user_attrs": storage.get_study_user_attrs(id).unwrap(),
            "system_attrs": storage.get_study_system_attrs(id).unwrap(),
            "trials": trials,
        }));
    }
    Value::Array(studies)
}

pub fn assert_same(rust: &Value, python: &Value) {
    if rust != python {
        let (r, p) = (rust.to_string(), python.to_string());
        let at = r
            .bytes()
            .zip(p.bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        panic!(
            "saturate and Optuna disagree at byte {at}:\n saturate: …{}\n optuna:   …{}",
            &r[at.saturating_sub(200)..(at + 200).min(r.len())],
            &p[at.saturating_sub(200)..(at + 200).min(p.len())]
        );
    }
}

/// Writes, through saturate, studies that use every feature the journal carries.
pub fn write_reference_studies(storage: Arc<dyn Storage>) {
    let study = StudyConfig::new()
        .with_name("from-rust")
        .with_storage(storage.clone())
        .with_sampler(
            TpeSamplerConfig::new()
                .with_seed(5)
                .with_n_startup_trials(2)
                .init()
                .unwrap(),
        )
        .with_pruner(NopPruner)
        .init()
        .unwrap();
    study
        .set_user_attr("owner", json!({"team": "rs", "ids": [1, 2.5, null, true]}))
        .unwrap();
    study
        .set_system_attr("study:metric_names", json!(["loss"]))
        .unwrap();
    for i in 0..5 {
        let mut t = study.ask().unwrap();
        let f = t.suggest_float("f", -1.0, 1.0).unwrap();
        t.suggest_float_log("flog", 1e-5, 1e-1).unwrap();
        t.suggest_float_step("fstep", 0.0, 1.0, 0.25).unwrap();
        t.suggest_int("i", -3, 3).unwrap();
        t.suggest_int_log("ilog", 1, 1024).unwrap();
        t.suggest_int_step("istep", 1, 10, 2).unwrap();
        t.suggest_categorical(
            "c",
            [
                Choice::from("a"),
                Choice::Null,
                Choice::Float(1.5),
                Choice::Bool(true),
                Choice::Int(7),
            ],
        )
        .unwrap();
        t.set_user_attr("note", "é ☃ \"quoted\"\n").unwrap();
        t.report(0, f64::NAN).unwrap();
        t.report(1, 0.5).unwrap();
        match i {
            1 => drop(study.tell_pruned(&t).unwrap()),
            2 => drop(study.tell(&t, &[f64::NAN]).unwrap()),
            3 => drop(study.tell_fail(&t, "diverged").unwrap()),
            _ => drop(study.tell(&t, &[f * f]).unwrap()),
        }
    }
    study
        .enqueue(
            [
                ("f".to_string(), ParamValue::Float(0.25)),
                ("c".to_string(), ParamValue::Categorical(Choice::Null)),
            ]
            .into(),
        )
        .unwrap();
    let mut running = study
        .ask_with([("f".to_string(), ParamValue::Float(-0.5))].into())
        .unwrap();
    running.suggest_float("f", -1.0, 1.0).unwrap();
    let deleted = StudyConfig::new()
        .with_name("deleted")
        .with_storage(storage.clone())
        .init()
        .unwrap();
    deleted.ask().unwrap();
    storage.delete_study(deleted.id()).unwrap();
    let mo = StudyConfig::new()
        .with_name("mo-rust")
        .with_storage(storage)
        .with_directions([StudyDirection::Minimize, StudyDirection::Maximize])
        .with_sampler(RandomSamplerConfig::new().with_seed(1).init())
        .init()
        .unwrap();
    mo.optimize(Some(3), None, |t| {
        let x = t.suggest_float("x", 0.0, 1.0)?;
        let y = t.suggest_int("y", 0, 4)?;
        Ok([x, y as f64])
    })
    .unwrap();
}

#[test]
fn study_written_by_saturate_loads_in_optuna_identically() {
    for py in pythons() {
        let dir = tempdir();
        let path = dir.path().join("rust.log");
        let storage = Arc::new(JournalStorage::open(&path).unwrap());
        write_reference_studies(storage.clone());
        let ours = dump(&*storage);
        assert_eq!(ours.as_array().unwrap().len(), 2);
        assert_same(&ours, &python_dump(&py, &path));
        // Optuna continues the study; saturate sees exactly what Optuna sees.
        python(&py, &["continue", path.to_str().unwrap(), "from-rust", "3"]);
        let reread = JournalStorage::open(&path).unwrap();
        let after = dump(&reread);
        assert_same(&after, &python_dump(&py, &path));
        // Optuna claimed the enqueued trial first.
        let trials = after[0]["trials"].as_array().unwrap();
        assert_eq!(trials.len(), 9);
        assert_eq!(trials[5]["state"], "COMPLETE");
        assert_eq!(trials[5]["params"]["f"], 0.25);
    }
}

#[test]
fn study_written_by_optuna_loads_in_saturate_identically_and_continues() {
    for py in pythons() {
        let dir = tempdir();
        let path = dir.path().join("py.log");
        let theirs: Value =
            serde_json::from_str(&python(&py, &["write", path.to_str().unwrap()])).unwrap();
        let storage: Arc<dyn Storage> = Arc::new(JournalStorage::open(&path).unwrap());
        assert_same(&dump(&*storage), &theirs);
        let study = StudyConfig::new()
            .with_name("from-python")
            .with_storage(storage.clone())
            .with_sampler(TpeSamplerConfig::new().with_seed(0).init().unwrap())
            .load()
            .unwrap();
        // The enqueued (WAITING) trial comes first, with its fixed parameters.
        let mut t = study.ask().unwrap();
        assert_eq!(t.number(), 5);
        assert_eq!(t.suggest_float("f", -1.0, 1.0).unwrap(), 0.25);
        assert_eq!(
            t.suggest_categorical(
                "c",
                [
                    Choice::from("a"),
                    Choice::Null,
                    Choice::Float(1.5),
                    Choice::Bool(true),
                    Choice::Int(7)
                ]
            )
            .unwrap(),
            Choice::Null
        );
        study.tell(&t, &[0.0625]).unwrap();
        study
            .optimize(Some(3), None, |t| {
                Ok(t.suggest_float("f", -1.0, 1.0)?.powi(2))
            })
            .unwrap();
        assert_eq!(study.trials(None).unwrap().len(), 9);
        assert_same(&dump(&*storage), &python_dump(&py, &path));
    }
}

#[test]
fn concurrent_python_and_rust_workers_lose_nothing() {
    for py in pythons() {
        let dir = tempdir();
        let path = dir.path().join("mixed.log");
        let storage: Arc<dyn Storage> = Arc::new(JournalStorage::open(&path).unwrap());
        let study = crate::common::study_on(storage, "mixed");
        let children: Vec<_> = (0..2)
            .map(|_| {
                Command::new(&py)
                    .arg(script())
                    .args(["worker", path.to_str().unwrap(), "mixed", "40"])
                    .spawn()
                    .unwrap()
            })
            .collect();
        std::thread::scope(|scope| {
            for _ in 0..2 {
                let study = study.clone();
                scope.spawn(move || {
                    for _ in 0..40 {
                        let mut t = study.ask().unwrap();
                        let x = t.suggest_float("x", 0.0, 1.0).unwrap();
                        t.report(0, x).unwrap();
                        study.tell(&t, &[x]).unwrap();
                    }
                });
            }
        });
        for mut child in children {
            assert!(child.wait().unwrap().success());
        }
        let ours = dump(&JournalStorage::open(&path).unwrap());
        let trials = ours[0]["trials"].as_array().unwrap();
        assert_eq!(trials.len(), 160);
        assert!(trials.iter().all(|t| t["state"] == "COMPLETE"));
        let ids: std::collections::BTreeSet<u64> = trials
            .iter()
            .map(|t| t["trial_id"].as_u64().unwrap())
            .collect();
        assert_eq!(ids.len(), 160);
        assert_same(&ours, &python_dump(&py, &path));
    }
}

/// Python that writes (`write PATH`) or prints (`read PATH`) integer attributes outside i64.
const BIG_INTEGERS_PY: &str = r#"
import json, sys
import optuna
storage = optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(sys.argv[2]))
if sys.argv[1] == "write":
    study = optuna.create_study(study_name="from-python", storage=storage)
    trial = study.ask()
    trial.set_user_attr("max", 2**64 - 1)
    trial.set_user_attr("big", 2**70)
    study.tell(trial, 0.0)
else:
    attrs = optuna.load_study(study_name="from-rust", storage=storage).trials[0].user_attrs
    print(json.dumps({k: [v, type(v).__name__] for k, v in sorted(attrs.items())}))
"#;

#[test]
fn integers_outside_i64_cross_between_optuna_and_saturate_exactly() {
    for py in pythons() {
        let dir = tempdir();
        let path = dir.path().join("big.log");
        let run = |mode: &str| {
            let out = Command::new(&py)
                .args(["-c", BIG_INTEGERS_PY, mode, path.to_str().unwrap()])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout).unwrap()
        };
        run("write");
        let storage: Arc<dyn Storage> = Arc::new(JournalStorage::open(&path).unwrap());
        let theirs = &storage.get_all_trials(0, None).unwrap()[0].user_attrs;
        assert_eq!(theirs["max"].as_u64(), Some(u64::MAX));
        // serde_json's Value holds no integer above u64: 2**70 is its nearest float.
        assert_eq!(theirs["big"].as_f64(), Some(2f64.powi(70)));
        let study = crate::common::study_on(storage, "from-rust");
        let mut trial = study.ask().unwrap();
        trial.set_user_attr("max", u64::MAX).unwrap();
        trial.set_user_attr("min", i64::MIN).unwrap();
        study.tell(&trial, &[0.0]).unwrap();
        let read: Value = serde_json::from_str(&run("read")).unwrap();
        assert_eq!(
            read,
            json!({"max": [u64::MAX, "int"], "min": [i64::MIN, "int"]})
        );
    }
}

/// Python that takes Optuna's `JournalFileOpenLock` on `PATH` and exits holding it.
const OPTUNA_TAKES_OPEN_LOCK_PY: &str = r#"
import sys
from optuna.storages.journal import JournalFileOpenLock
assert JournalFileOpenLock(sys.argv[1]).acquire()
"#;

/// Python worker on Optuna's `JournalFileOpenLock`: `PATH STUDY N_TRIALS`.
const OPEN_LOCK_WORKER_PY: &str = r#"
import sys
import optuna
from optuna.storages.journal import JournalFileBackend, JournalFileOpenLock
optuna.logging.set_verbosity(optuna.logging.WARNING)
path, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
backend = JournalFileBackend(path, lock_obj=JournalFileOpenLock(path))
study = optuna.load_study(study_name=name, storage=optuna.storages.JournalStorage(backend))
study.optimize(lambda t: t.suggest_float("x", 0.0, 1.0), n_trials=n)
"#;

#[test]
fn optuna_and_saturate_share_a_journal_with_the_open_file_lock() {
    for py in pythons() {
        let dir = tempdir();
        let path = dir.path().join("open-lock.log");
        let backend = saturate_study::storage::JournalFileBackend::new(&path)
            .unwrap()
            .with_lock(saturate_study::storage::JournalLock::OpenFile);
        // A lock that Optuna took (and never released) is the one saturate waits for.
        let out = Command::new(&py)
            .args(["-c", OPTUNA_TAKES_OPEN_LOCK_PY, path.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let waiting = JournalStorage::new(
            backend
                .clone()
                .with_lock_timeout(std::time::Duration::from_millis(100)),
        );
        let err = waiting
            .create_new_study(&[StudyDirection::Minimize], "blocked")
            .unwrap_err();
        assert!(matches!(err, StudyError::LockTimeout { .. }), "{err}");
        std::fs::remove_file(backend.lock_path()).unwrap();
        let storage: Arc<dyn Storage> = Arc::new(JournalStorage::new(backend));
        let study = crate::common::study_on(storage, "open-lock");
        let children: Vec<_> = (0..2)
            .map(|_| {
                Command::new(&py)
                    .args([
                        "-c",
                        OPEN_LOCK_WORKER_PY,
                        path.to_str().unwrap(),
                        "open-lock",
                        "40",
                    ])
                    .spawn()
                    .unwrap()
            })
            .collect();
        for _ in 0..40 {
            let mut t = study.ask().unwrap();
            let x = t.suggest_float("x", 0.0, 1.0).unwrap();
            study.tell(&t, &[x]).unwrap();
        }
        for mut child in children {
            assert!(child.wait().unwrap().success());
        }
        let ours = dump(&JournalStorage::open(&path).unwrap());
        let trials = ours[0]["trials"].as_array().unwrap();
        assert_eq!(trials.len(), 120);
        assert!(trials.iter().all(|t| t["state"] == "COMPLETE"));
        let numbers: std::collections::BTreeSet<u64> = trials
            .iter()
            .map(|t| t["number"].as_u64().unwrap())
            .collect();
        assert_eq!(numbers.len(), 120);
        assert_same(&ours, &python_dump(&py, &path));
    }
}

/// The venvs whose Optuna has `trial.set_constraint` (5.0 and later).
fn pythons_with_set_constraint() -> Vec<PathBuf> {
    let all = pythons();
    let found: Vec<PathBuf> = all
        .iter()
        .filter(|py| {
            let out = Command::new(py)
                .args(["-c", "import optuna; print(optuna.__version__)"])
                .output()
                .unwrap();
            let version = String::from_utf8_lossy(&out.stdout);
            version
                .split('.')
                .next()
                .and_then(|m| m.trim().parse::<u32>().ok())
                >= Some(5)
        })
        .cloned()
        .collect();
    assert!(
        all.is_empty() || !found.is_empty(),
        "no Optuna 5 among {all:?}: run scripts/setup-python.sh"
    );
    found
}

/// What the interop script's `constraints` command prints, from saturate's side.
fn constraints_summary(study: &DefaultStudy) -> Value {
    let trials = study.trials(None).unwrap();
    let constraints: serde_json::Map<String, Value> = trials
        .iter()
        .map(|t| (t.number.to_string(), serde_json::json!(t.constraints())))
        .collect();
    let best = match study.best_trial() {
        Ok(t) => serde_json::json!(t.number),
        Err(StudyError::NoFeasibleTrial | StudyError::NoCompletedTrial) => Value::Null,
        Err(e) => panic!("{e}"),
    };
    let mut front: Vec<u64> = study
        .best_trials()
        .unwrap()
        .iter()
        .map(|t| t.number)
        .collect();
    front.sort();
    serde_json::json!({"constraints": constraints, "best": best, "front": front})
}

#[test]
fn constraints_cross_between_optuna_5_and_saturate() {
    for py in pythons_with_set_constraint() {
        // Written by saturate, read by Optuna: the same constraints, best trial and front.
        let dir = tempdir();
        let path = dir.path().join("c.log");
        let study = StudyConfig::new()
            .with_name("constrained-rust")
            .with_storage(Arc::new(JournalStorage::open(&path).unwrap()))
            .with_sampler(
                TpeSamplerConfig::new()
                    .with_seed(0)
                    .with_n_startup_trials(4)
                    .init()
                    .unwrap(),
            )
            .init()
            .unwrap();
        study
            .optimize(Some(12), None, |t| {
                let x = t.suggest_float("x", -3.0, 3.0)?;
                t.set_constraint("x_at_least_1", 1.0 - x)?;
                t.set_constraint("x_at_most_2", x - 2.0)?;
                Ok(x * x)
            })
            .unwrap();
        let theirs: Value = serde_json::from_str(&python(
            &py,
            &["constraints", path.to_str().unwrap(), "constrained-rust"],
        ))
        .unwrap();
        assert_same(&constraints_summary(&study), &theirs);
        // Written by Optuna 5 with `trial.set_constraint`, read by saturate.
        let path = dir.path().join("py.log");
        let theirs: Value =
            serde_json::from_str(&python(&py, &["write-constrained", path.to_str().unwrap()]))
                .unwrap();
        let study = StudyConfig::new()
            .with_name("constrained-python")
            .with_storage(Arc::new(JournalStorage::open(&path).unwrap()))
            .load()
            .unwrap();
        assert_same(&constraints_summary(&study), &theirs);
        assert!(theirs["best"].is_u64(), "{theirs}");
    }
}

#[test]
fn a_discard_trials_record_is_read_as_optuna_5_reads_it() {
    for py in pythons_with_set_constraint() {
        let dir = tempdir();
        let path = dir.path().join("d.log");
        let storage = Arc::new(JournalStorage::open(&path).unwrap());
        write_reference_studies(storage.clone());
        drop(storage);
        // Operation 10 (DISCARD_TRIALS), as another Optuna-journal writer emits it to drop
        // finished trials from its memory. Optuna 5.0 skips the record: so does saturate.
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"op_code\": 10, \"worker_id\": \"other-0\", \"trial_ids\": [0, 1]}\n");
        std::fs::write(&path, text).unwrap();
        let reread = JournalStorage::open(&path).unwrap();
        assert_same(&dump(&reread), &python_dump(&py, &path));
        // Both go on writing after it.
        python(&py, &["continue", path.to_str().unwrap(), "from-rust", "1"]);
        let study = StudyConfig::new()
            .with_name("from-rust")
            .with_storage(Arc::new(JournalStorage::open(&path).unwrap()))
            .load()
            .unwrap();
        study
            .optimize(Some(1), None, |t| Ok(t.suggest_float("f", -1.0, 1.0)?))
            .unwrap();
        assert_same(
            &dump(&JournalStorage::open(&path).unwrap()),
            &python_dump(&py, &path),
        );
    }
}

#[test]
fn a_study_sampled_by_the_gp_sampler_loads_in_optuna_identically_and_continues() {
    for py in pythons() {
        let dir = tempdir();
        let path = dir.path().join("gp.log");
        let storage = Arc::new(JournalStorage::open(&path).unwrap());
        let sampler = GpSamplerConfig::new()
            .with_seed(0)
            .with_n_startup_trials(4)
            .init()
            .unwrap();
        let study = StudyConfig::new()
            .with_name("gp")
            .with_storage(storage.clone())
            .with_sampler(sampler)
            .init()
            .unwrap();
        let objective = |t: &mut Trial| -> Result<f64, saturate_study::study::ObjectiveError> {
            let x = t.suggest_float_log("lr", 1e-4, 1.0)?;
            let n = t.suggest_int("n", 1, 8)?;
            let c = t.suggest_categorical("act", ["relu", "gelu"])?;
            Ok(x.ln().powi(2) + n as f64 + if c == "relu" { 0.0 } else { 0.5 })
        };
        study.optimize(Some(8), None, objective).unwrap();
        // Three trials asked together and left RUNNING: their relative parameters are
        // published in system attributes, which Optuna must read as saturate wrote them.
        let mut running = study.ask_many(3).unwrap();
        for t in &mut running {
            objective(t).unwrap();
        }
        let ours = dump(&*storage);
        let attrs = ours[0]["trials"][9]["system_attrs"].as_object().unwrap();
        assert!(
            attrs.keys().any(|k| k.starts_with("gp:relative_params")),
            "{attrs:?}"
        );
        assert_same(&ours, &python_dump(&py, &path));
        // Optuna continues the study (its own sampler), and both still read the same.
        python(&py, &["continue", path.to_str().unwrap(), "gp", "2"]);
        let reread = JournalStorage::open(&path).unwrap();
        assert_same(&dump(&reread), &python_dump(&py, &path));
    }
}
