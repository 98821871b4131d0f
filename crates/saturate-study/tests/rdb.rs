//! The RDB storage (Optuna's tables on SQLite and PostgreSQL): conformance, schema,
//! credentials, heartbeats, worker processes, and interop with Python Optuna 4.9 / 5.0.
//!
//! PostgreSQL comes from `SATURATE_TEST_POSTGRES_URL` (scripts/test.sh starts a throwaway
//! server with scripts/setup-postgres.sh and sets it). Without it the PostgreSQL tests fail
//! in CI (any `CI` variable) and are skipped, saying so, elsewhere.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use saturate_study::prelude::*;
use saturate_study::storage::{fail_stale_trials, RdbStorage, RetryFailedTrialCallback};
use serde_json::Value;

use crate::common::{study_on, tempdir};
use crate::interop::{assert_same, dump, python, pythons, script, write_reference_studies};

const CHILD_ENV: &str = "SATURATE_RDB_CHILD";

/// The test server's URL, or `None` (outside CI only) when there is none.
fn postgres_url() -> Option<String> {
    match std::env::var("SATURATE_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var_os("CI").is_some() => panic!(
            "SATURATE_TEST_POSTGRES_URL is not set: scripts/test.sh starts a PostgreSQL with \
             scripts/setup-postgres.sh and sets it"
        ),
        _ => {
            eprintln!(
                "note: SATURATE_TEST_POSTGRES_URL is not set: PostgreSQL checks skipped \
                 (scripts/setup-postgres.sh start DIR starts a server)"
            );
            None
        }
    }
}

/// A fresh, empty database on the test server; its URL.
fn fresh_postgres() -> Option<String> {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let url = postgres_url()?;
    let name = format!(
        "sat_{}_{}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::SeqCst),
        rand::random::<u32>()
    );
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .unwrap();
    let base = &url[..url.rfind('/').unwrap()];
    Some(format!("{base}/{name}"))
}

fn sqlite_url(path: &Path) -> String {
    format!("sqlite:///{}", path.display())
}

fn open(url: &str) -> Arc<dyn Storage> {
    Arc::new(RdbStorage::open(url).unwrap())
}

/// The study `name` (created by the parent test) with a random sampler.
fn load_on(storage: Arc<dyn Storage>, name: &str) -> DefaultStudy {
    StudyConfig::new()
        .with_name(name)
        .with_storage(storage)
        .with_sampler(RandomSamplerConfig::new().init())
        .load()
        .unwrap()
}

/// The URL Python's SQLAlchemy takes (2.1 defaults to psycopg 3; setup-postgres.sh installs
/// psycopg2).
fn python_url(url: &str) -> String {
    url.replacen("postgresql://", "postgresql+psycopg2://", 1)
}

/// The public suite on SQLite, one property per test, is in `storage.rs`; here each property
/// is read back through a second connection.
#[test]
fn sqlite_storage_reads_back_every_property() {
    let dir = tempdir();
    crate::storage::each_property_reads_back(
        |i| sqlite_url(&dir.path().join(format!("study-{i}.db"))),
        |url| Box::new(RdbStorage::open(url).unwrap()),
    );
}

#[test]
fn sqlite_reuses_the_newest_deleted_study_id_like_optuna() {
    let dir = tempdir();
    let storage = RdbStorage::open(&sqlite_url(&dir.path().join("ids.db"))).unwrap();
    // Optuna's SQLite tables have no AUTOINCREMENT: the newest study's id comes back.
    assert_eq!(
        crate::storage::study_id_after_deleting_the_newest(&storage),
        (1, 1)
    );
}

/// The public suite on PostgreSQL, each property on a fresh database, read back through a
/// second connection.
#[test]
fn postgres_storage_reads_back_every_property() {
    if postgres_url().is_none() {
        return;
    }
    crate::storage::each_property_reads_back(
        |_| fresh_postgres().unwrap(),
        |url| Box::new(RdbStorage::open(url).unwrap()),
    );
}

#[test]
fn postgres_study_ids_are_not_reused() {
    let Some(url) = fresh_postgres() else { return };
    let storage = RdbStorage::open(&url).unwrap();
    assert_eq!(
        crate::storage::study_id_after_deleting_the_newest(&storage),
        (1, 2)
    );
}

#[test]
fn sqlite_schema_is_stamped_and_unknown_versions_are_refused() {
    let dir = tempdir();
    let path = dir.path().join("schema.db");
    RdbStorage::open(&sqlite_url(&path)).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let stamp: (i64, String) = conn
        .query_row(
            "SELECT schema_version, (SELECT version_num FROM alembic_version) FROM version_info",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(stamp, (12, "v3.2.0.a".to_string()));
    let tables: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(tables, 13);
    conn.execute("UPDATE alembic_version SET version_num = 'v3.0.0.d'", [])
        .unwrap();
    drop(conn);
    match RdbStorage::open(&sqlite_url(&path)) {
        Err(StudyError::UnsupportedSchema { found, .. }) => {
            assert!(found.contains("v3.0.0.d"), "{found}")
        }
        other => panic!("expected UnsupportedSchema, got {other:?}"),
    }
    let message = RdbStorage::open(&sqlite_url(&path))
        .unwrap_err()
        .to_string();
    assert!(message.contains("optuna storage upgrade"), "{message}");
}

#[test]
fn non_finite_values_are_stored_as_optuna_stores_them() {
    let dir = tempdir();
    let path = dir.path().join("values.db");
    let storage = open(&sqlite_url(&path));
    let id = storage
        .create_new_study(&[StudyDirection::Minimize], "values")
        .unwrap();
    for (value, last) in [
        (f64::INFINITY, f64::INFINITY),
        (f64::NEG_INFINITY, f64::NEG_INFINITY),
        (1.5, 2.0),
    ] {
        let t = storage.create_new_trial(id, None).unwrap();
        storage
            .set_trial_intermediate_value(t, 0, f64::NAN)
            .unwrap();
        storage.set_trial_intermediate_value(t, 1, last).unwrap();
        assert!(storage
            .set_trial_state_values(t, TrialState::Complete, Some(&[value]))
            .unwrap());
    }
    let conn = rusqlite::Connection::open(&path).unwrap();
    let rows: Vec<(Option<f64>, String)> = conn
        .prepare("SELECT value, value_type FROM trial_values ORDER BY trial_id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        rows,
        vec![
            (None, "INF_POS".to_string()),
            (None, "INF_NEG".to_string()),
            (Some(1.5), "FINITE".to_string())
        ]
    );
    let nan: Vec<(Option<f64>, String)> = conn
        .prepare(
            "SELECT intermediate_value, intermediate_value_type FROM trial_intermediate_values \
             WHERE step = 0",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(
        nan.iter().all(|(v, t)| v.is_none() && t == "NAN"),
        "{nan:?}"
    );
    let states: Vec<String> = conn
        .prepare("SELECT state FROM trials")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(states, ["COMPLETE"; 3]);
    let trials = storage.get_all_trials(id, None).unwrap();
    assert_eq!(trials[1].intermediate_values[&1], f64::NEG_INFINITY);
    assert_eq!(trials[0].values, Some(vec![f64::INFINITY]));
    assert_eq!(trials[1].values, Some(vec![f64::NEG_INFINITY]));
    assert!(trials[2].intermediate_values[&0].is_nan());
}

#[test]
fn passwords_never_appear_in_errors_debug_or_logs() {
    crate::common::logs();
    let secret = "hunter2-never-shown";
    let url = format!("postgresql://nobody:{secret}@127.0.0.1:1/nothing");
    let err = RdbStorage::open(&url).unwrap_err();
    for text in [err.to_string(), format!("{err:?}")] {
        assert!(!text.contains(secret), "{text}");
        assert!(text.contains("nobody:***@127.0.0.1"), "{text}");
        // The cause, not just "error connecting to server".
        assert!(text.to_lowercase().contains("refused"), "{text}");
    }
    // The password in the query string, in any case, and in other secret keys.
    for url in [
        format!("postgresql://nobody@127.0.0.1:1/nothing?password={secret}"),
        format!("postgresql://nobody@127.0.0.1:1/nothing?sslmode=disable&PassWord={secret}"),
        format!("postgresql://nobody@127.0.0.1:1/nothing?sslpassword={secret}"),
    ] {
        let err = RdbStorage::open(&url).unwrap_err();
        let text = format!("{err} {err:?}");
        assert!(!text.contains(secret), "{text}");
    }
    let err = RdbStorage::open(&format!("mysql://u:{secret}@h/db")).unwrap_err();
    assert!(matches!(err, StudyError::InvalidStorageUrl { .. }));
    assert!(!format!("{err} {err:?}").contains(secret));
    if let Some(url) = fresh_postgres() {
        let password = url.split(':').nth(2).unwrap().split('@').next().unwrap();
        let storage = RdbStorage::open(&url).unwrap();
        let study = study_on(Arc::new(storage), "logged");
        study
            .optimize(Some(3), None, |t| Ok(t.suggest_float("x", 0.0, 1.0)?))
            .unwrap();
        let shown = format!("{study:?}");
        assert!(!shown.contains(password), "{shown}");
        let logs = crate::common::logs().lock().unwrap().join("\n");
        assert!(!logs.contains(password) && !logs.contains(secret));
    }
}

/// Spawns this test binary as a worker (`child_worker`) with `spec`.
fn spawn_worker(spec: &str, stdout: Stdio) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "rdb::child_worker", "--ignored", "--nocapture"])
        .env(CHILD_ENV, spec)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A worker process: `run|URL|STUDY|N` runs N trials; `hang|URL|STUDY` starts one trial
/// with heartbeats on, prints `RUNNING`, and never finishes it.
#[test]
#[ignore = "a worker process run by the tests of rdb.rs"]
fn child_worker() {
    let spec = std::env::var(CHILD_ENV).expect("run by the tests of rdb.rs");
    let parts: Vec<&str> = spec.split('|').collect();
    match parts[..] {
        ["run", url, name, n] => {
            let study = load_on(open(url), name);
            study
                .optimize(Some(n.parse().unwrap()), None, |t| {
                    let x = t.suggest_float("x", 0.0, 1.0)?;
                    t.report(0, x)?;
                    Ok(x * x)
                })
                .unwrap();
        }
        ["hang", url, name] => {
            let storage = RdbStorage::open(url)
                .unwrap()
                .with_heartbeat(Duration::from_millis(500), None, None)
                .unwrap();
            let study = load_on(Arc::new(storage), name);
            let _ = study.optimize(Some(1), None, |t| {
                t.suggest_float("x", 0.0, 1.0)?;
                println!("RUNNING");
                std::thread::sleep(Duration::from_secs(600));
                Ok(0.0)
            });
        }
        ["hang-journal", path, name] => {
            let storage = JournalStorage::open(path)
                .unwrap()
                .with_heartbeat(Duration::from_millis(500), None, None)
                .unwrap();
            let study = load_on(Arc::new(storage), name);
            let _ = study.optimize(Some(1), None, |t| {
                t.suggest_float("x", 0.0, 1.0)?;
                println!("RUNNING");
                std::thread::sleep(Duration::from_secs(600));
                Ok(0.0)
            });
        }
        _ => panic!("bad spec {spec}"),
    }
}

fn wait_all(children: Vec<Child>) -> Vec<String> {
    children
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            assert!(out.status.success(), "worker failed:\n{stderr}");
            stderr + &String::from_utf8_lossy(&out.stdout)
        })
        .collect()
}

fn assert_numbers_are_0_to(storage: &dyn Storage, study_id: u64, n: u64) {
    let trials = storage.get_all_trials(study_id, None).unwrap();
    let mut numbers: Vec<u64> = trials.iter().map(|t| t.number).collect();
    numbers.sort_unstable();
    assert_eq!(numbers, (0..n).collect::<Vec<_>>());
    assert!(trials.iter().all(|t| t.state == TrialState::Complete));
}

#[test]
fn eight_worker_processes_on_one_postgres_study_make_400_trials() {
    let Some(url) = fresh_postgres() else { return };
    let storage = open(&url);
    let study = study_on(storage.clone(), "shared");
    let started = Instant::now();
    let workers: Vec<Child> = (0..8)
        .map(|_| spawn_worker(&format!("run|{url}|shared|50"), Stdio::piped()))
        .collect();
    let outputs = wait_all(workers);
    let elapsed = started.elapsed();
    assert_numbers_are_0_to(&*storage, study.id(), 400);
    eprintln!(
        "8 processes x 50 trials on PostgreSQL: {:.1} s, {:.0} trials/s",
        elapsed.as_secs_f64(),
        400.0 / elapsed.as_secs_f64()
    );
    let password = url.split(':').nth(2).unwrap().split('@').next().unwrap();
    assert!(outputs.iter().all(|o| !o.contains(password)));
}

#[test]
fn four_worker_processes_on_one_sqlite_study_make_200_trials() {
    let dir = tempdir();
    let url = sqlite_url(&dir.path().join("shared.db"));
    let storage = open(&url);
    let study = study_on(storage.clone(), "shared");
    let workers: Vec<Child> = (0..4)
        .map(|_| spawn_worker(&format!("run|{url}|shared|50"), Stdio::piped()))
        .collect();
    wait_all(workers);
    assert_numbers_are_0_to(&*storage, study.id(), 200);
}

/// Starts a `hang` worker, waits until its trial runs, and SIGKILLs it.
fn kill_hung_worker(spec: &str) {
    let mut child = spawn_worker(spec, Stdio::piped());
    // The test harness prints its own lines first.
    let started = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .any(|line| line.trim() == "RUNNING");
    assert!(started, "the worker did not start its trial");
    // Let it beat at least once more, then kill it (SIGKILL on Unix).
    std::thread::sleep(Duration::from_millis(700));
    child.kill().unwrap();
    child.wait().unwrap();
}

fn retry_after_kill(storage: Arc<dyn Storage>, name: &str) {
    let study = StudyConfig::new()
        .with_name(name)
        .with_storage(storage.clone())
        .load()
        .unwrap();
    let killed = study.trials(None).unwrap();
    assert_eq!(killed.len(), 1);
    assert_eq!(killed[0].state, TrialState::Running);
    let x = killed[0].params["x"].internal;
    // Within the grace period the trial is alive.
    assert!(fail_stale_trials(&*storage, study.id()).unwrap().is_empty());
    // Past it (4 s: the last beat was at most 0.5 s before the kill, SQLite's
    // CURRENT_TIMESTAMP has whole seconds, and a loaded machine may stall; a margin that
    // keeps the check above from seeing a stale trial), the next worker fails it
    // and the retry callback enqueues a copy, which that worker then runs.
    std::thread::sleep(Duration::from_millis(5500));
    let mut seen = None;
    study
        .optimize(Some(1), None, |t| {
            seen = Some(t.suggest_float("x", 0.0, 1.0)?);
            Ok(1.0)
        })
        .unwrap();
    let trials = study.trials(None).unwrap();
    assert_eq!(trials.len(), 2);
    assert_eq!(trials[0].state, TrialState::Fail);
    assert_eq!(trials[1].state, TrialState::Complete);
    assert_eq!(
        seen,
        Some(x),
        "the retry runs the failed trial's parameters"
    );
    assert_eq!(
        RetryFailedTrialCallback::retried_trial_number(&trials[1]),
        Some(0)
    );
    assert_eq!(
        trials[1].system_attrs["retry_history"],
        serde_json::json!([0])
    );
}

fn retrying(
    interval: Duration,
    grace: Duration,
) -> (
    Duration,
    Option<Duration>,
    Option<saturate_study::storage::StaleTrialCallback>,
) {
    let retry = RetryFailedTrialCallback {
        max_retry: Some(1),
        inherit_intermediate_values: false,
    };
    (interval, Some(grace), Some(retry.into_callback()))
}

#[test]
fn a_killed_workers_trial_fails_after_the_grace_period_and_is_retried_on_sqlite() {
    let dir = tempdir();
    let url = sqlite_url(&dir.path().join("heartbeat.db"));
    let (interval, grace, callback) = retrying(Duration::from_millis(500), Duration::from_secs(4));
    let storage: Arc<dyn Storage> = Arc::new(
        RdbStorage::open(&url)
            .unwrap()
            .with_heartbeat(interval, grace, callback)
            .unwrap(),
    );
    study_on(storage.clone(), "beats");
    kill_hung_worker(&format!("hang|{url}|beats"));
    retry_after_kill(storage, "beats");
}

#[test]
fn a_killed_workers_trial_fails_after_the_grace_period_and_is_retried_on_postgres() {
    let Some(url) = fresh_postgres() else { return };
    let (interval, grace, callback) = retrying(Duration::from_millis(500), Duration::from_secs(4));
    let storage: Arc<dyn Storage> = Arc::new(
        RdbStorage::open(&url)
            .unwrap()
            .with_heartbeat(interval, grace, callback)
            .unwrap(),
    );
    study_on(storage.clone(), "beats");
    kill_hung_worker(&format!("hang|{url}|beats"));
    retry_after_kill(storage, "beats");
}

#[test]
fn a_killed_workers_trial_fails_after_the_grace_period_and_is_retried_on_a_journal() {
    let dir = tempdir();
    let path = dir.path().join("heartbeat.log");
    let (interval, grace, callback) = retrying(Duration::from_millis(500), Duration::from_secs(4));
    let storage: Arc<dyn Storage> = Arc::new(
        JournalStorage::open(&path)
            .unwrap()
            .with_heartbeat(interval, grace, callback)
            .unwrap(),
    );
    study_on(storage.clone(), "beats");
    kill_hung_worker(&format!("hang-journal|{}|beats", path.display()));
    retry_after_kill(storage, "beats");
}

/// `ask_new` and `claim_waiting` (the group runner's asks) write each trial's first
/// heartbeat with its start, so a worker killed before its heartbeat thread's first beat
/// still leaves trials that go stale; `ask` (ask-and-tell, no heartbeat promised) does not.
fn runner_asks_start_with_a_heartbeat(storage: Arc<dyn Storage>) {
    let kind = format!("{storage:?}");
    let kind = &kind[..kind.len().min(40)];
    let study = study_on(storage.clone(), "first-beat");
    let enqueued: FixedParams = [("x".to_string(), ParamValue::Float(0.5))].into();
    study.enqueue(enqueued).unwrap();
    let waiting = study.trials(Some(&[TrialState::Waiting])).unwrap()[0].trial_id;
    let mut started: Vec<u64> = study
        .ask_new(&vec![FixedParams::new(); 3])
        .unwrap()
        .iter()
        .map(|t| t.id())
        .collect();
    started.extend(
        study
            .claim_waiting(&[waiting])
            .unwrap()
            .iter()
            .map(|t| t.id()),
    );
    let plain = study.ask().unwrap().id();
    assert_eq!(started.len(), 4, "{kind}");
    assert!(
        storage.stale_trial_ids(study.id()).unwrap().is_empty(),
        "{kind}: fresh trials are not stale"
    );
    // Grace 1 s; SQLite's clock has whole seconds.
    std::thread::sleep(Duration::from_millis(2500));
    let mut stale = storage.stale_trial_ids(study.id()).unwrap();
    stale.sort_unstable();
    started.sort_unstable();
    assert_eq!(
        stale, started,
        "{kind}: every runner trial is stale, the asked one ({plain}) not"
    );
}

/// Heartbeats that no thread records, stale after one second.
const NEVER_BEAT: Duration = Duration::from_secs(600);
const ONE_SECOND: Option<Duration> = Some(Duration::from_secs(1));

#[test]
fn runner_trials_carry_their_first_heartbeat_on_sqlite() {
    let dir = tempdir();
    let url = sqlite_url(&dir.path().join("beat.db"));
    runner_asks_start_with_a_heartbeat(Arc::new(
        RdbStorage::open(&url)
            .unwrap()
            .with_heartbeat(NEVER_BEAT, ONE_SECOND, None)
            .unwrap(),
    ));
}

#[test]
fn runner_trials_carry_their_first_heartbeat_on_postgres() {
    let Some(url) = fresh_postgres() else { return };
    runner_asks_start_with_a_heartbeat(Arc::new(
        RdbStorage::open(&url)
            .unwrap()
            .with_heartbeat(NEVER_BEAT, ONE_SECOND, None)
            .unwrap(),
    ));
}

#[test]
fn runner_trials_carry_their_first_heartbeat_on_a_journal() {
    let dir = tempdir();
    let path = dir.path().join("beat.log");
    runner_asks_start_with_a_heartbeat(Arc::new(
        JournalStorage::open(&path)
            .unwrap()
            .with_heartbeat(NEVER_BEAT, ONE_SECOND, None)
            .unwrap(),
    ));
}

#[test]
fn heartbeat_arguments_are_checked() {
    let storage = RdbStorage::open("sqlite://").unwrap();
    assert!(matches!(
        storage.with_heartbeat(Duration::ZERO, None, None),
        Err(StudyError::InvalidArgument { .. })
    ));
}

/// The dump without trial ids (the database's are 1-based in Python, 0-based here).
fn without_ids(mut dump: Value) -> Value {
    for study in dump.as_array_mut().unwrap() {
        for trial in study["trials"].as_array_mut().unwrap() {
            trial.as_object_mut().unwrap().remove("trial_id");
        }
    }
    dump
}

#[test]
fn optuna_reads_a_saturate_written_sqlite_database_and_continues_it() {
    for py in pythons() {
        let dir = tempdir();
        let url = sqlite_url(&dir.path().join("rust.db"));
        let storage = open(&url);
        write_reference_studies(storage.clone());
        let ours = without_ids(dump(&*storage));
        assert_eq!(ours.as_array().unwrap().len(), 2);
        let theirs: Value = serde_json::from_str(&python(&py, &["dump", &url])).unwrap();
        assert_same(&ours, &without_ids(theirs));
        python(&py, &["continue", &url, "from-rust", "3"]);
        let after = without_ids(dump(&*open(&url)));
        let theirs: Value = serde_json::from_str(&python(&py, &["dump", &url])).unwrap();
        assert_same(&after, &without_ids(theirs));
        let trials = after[0]["trials"].as_array().unwrap();
        assert_eq!(trials.len(), 9);
        assert_eq!(
            trials[5]["params"]["f"], 0.25,
            "Optuna claimed the enqueued trial"
        );
    }
}

#[test]
fn saturate_reads_an_optuna_written_sqlite_database_and_continues_it() {
    for py in pythons() {
        let dir = tempdir();
        let url = sqlite_url(&dir.path().join("py.db"));
        let theirs: Value = serde_json::from_str(&python(&py, &["write", &url])).unwrap();
        let storage = open(&url);
        assert_same(&without_ids(dump(&*storage)), &without_ids(theirs));
        let study = StudyConfig::new()
            .with_name("from-python")
            .with_storage(storage.clone())
            .with_sampler(TpeSamplerConfig::new().with_seed(0).init().unwrap())
            .load()
            .unwrap();
        let mut t = study.ask().unwrap();
        assert_eq!(t.number(), 5, "the enqueued trial comes first");
        assert_eq!(t.suggest_float("f", -1.0, 1.0).unwrap(), 0.25);
        study.tell(&t, &[0.0625]).unwrap();
        study
            .optimize(Some(3), None, |t| {
                Ok(t.suggest_float("f", -1.0, 1.0)?.powi(2))
            })
            .unwrap();
        assert_eq!(study.trials(None).unwrap().len(), 9);
        let theirs: Value =
            serde_json::from_str(&python(&py, &["dump", &python_url(&url)])).unwrap();
        assert_same(&without_ids(dump(&*storage)), &without_ids(theirs));
    }
}

#[test]
fn python_and_rust_workers_share_one_postgres_study() {
    let pys = pythons();
    for py in pys {
        let Some(url) = fresh_postgres() else { return };
        let storage = open(&url);
        let study = study_on(storage.clone(), "mixed");
        let python_workers: Vec<Child> = (0..2)
            .map(|_| {
                Command::new(&py)
                    .arg(script())
                    .args(["worker", &python_url(&url), "mixed", "25"])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let rust_workers: Vec<Child> = (0..2)
            .map(|_| spawn_worker(&format!("run|{url}|mixed|25"), Stdio::piped()))
            .collect();
        wait_all(python_workers.into_iter().chain(rust_workers).collect());
        assert_numbers_are_0_to(&*storage, study.id(), 100);
        let theirs: Value =
            serde_json::from_str(&python(&py, &["dump", &python_url(&url)])).unwrap();
        assert_same(&without_ids(dump(&*storage)), &without_ids(theirs));
    }
}

/// Every row of a catalog query, as text.
fn catalog(url: &str, sql: &str) -> Vec<Vec<Option<String>>> {
    let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
    client
        .simple_query(sql)
        .unwrap()
        .into_iter()
        .filter_map(|m| match m {
            postgres::SimpleQueryMessage::Row(row) => Some(
                (0..row.len())
                    .map(|i| row.get(i).map(str::to_owned))
                    .collect(),
            ),
            _ => None,
        })
        .collect()
}

#[test]
fn sqlite_tables_are_the_ones_optuna_creates() {
    for py in pythons() {
        let dir = tempdir();
        let ours = dir.path().join("ours.db");
        let theirs = dir.path().join("theirs.db");
        RdbStorage::open(&sqlite_url(&ours)).unwrap();
        // Opening a storage makes Optuna create (and stamp) its tables.
        python(&py, &["dump", &sqlite_url(&theirs)]);
        let schema = |path: &Path| -> Vec<(String, String, Option<String>)> {
            rusqlite::Connection::open(path)
                .unwrap()
                .prepare("SELECT type, name, sql FROM sqlite_master ORDER BY name")
                .unwrap()
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        };
        assert_eq!(schema(&ours), schema(&theirs));
        let stamp = |path: &Path| -> (i64, String) {
            rusqlite::Connection::open(path)
                .unwrap()
                .query_row(
                    "SELECT schema_version, (SELECT version_num FROM alembic_version) \
                     FROM version_info",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .unwrap()
        };
        assert_eq!(stamp(&ours), stamp(&theirs));
    }
}

#[test]
fn postgres_tables_are_the_ones_optuna_creates() {
    for py in pythons() {
        let (Some(ours), Some(theirs)) = (fresh_postgres(), fresh_postgres()) else {
            return;
        };
        RdbStorage::open(&ours).unwrap();
        python(&py, &["dump", &python_url(&theirs)]);
        for sql in [
            "SELECT table_name, column_name, data_type, udt_name, is_nullable, column_default, \
             character_maximum_length, numeric_precision, ordinal_position \
             FROM information_schema.columns WHERE table_schema = 'public' \
             ORDER BY table_name, ordinal_position",
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' \
             ORDER BY indexname",
            "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint \
             WHERE connamespace = 'public'::regnamespace ORDER BY conname",
            "SELECT t.typname, e.enumlabel FROM pg_enum e JOIN pg_type t \
             ON t.oid = e.enumtypid ORDER BY t.typname, e.enumsortorder",
            "SELECT schema_version, (SELECT version_num FROM alembic_version) FROM version_info",
        ] {
            assert_eq!(catalog(&ours, sql), catalog(&theirs, sql), "{sql}");
        }
    }
}

#[test]
fn a_closed_postgres_connection_is_reopened_on_the_next_call() {
    let Some(url) = fresh_postgres() else { return };
    let storage = RdbStorage::open(&url).unwrap();
    let id = storage
        .create_new_study(&[StudyDirection::Minimize], "s")
        .unwrap();
    let database = &url[url.rfind('/').unwrap() + 1..];
    let killed = catalog(
        &url,
        &format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = '{database}' AND pid <> pg_backend_pid()"
        ),
    );
    assert_eq!(killed.len(), 1, "the storage's one connection");
    // pg_terminate_backend only signals the backend: wait until it has gone, or the next
    // call may still be answered by it and the one after meet the closed connection (the
    // race that made this test fail once in CI at 7974f64).
    let others = format!(
        "SELECT pid FROM pg_stat_activity WHERE datname = '{database}' AND pid <> pg_backend_pid()"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while !catalog(&url, &others).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the terminated backend is still there after 10 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The call that meets the closed connection fails; the next one reconnects.
    let first = storage.get_study_name_from_id(id);
    assert!(
        matches!(first, Err(StudyError::Database { .. })),
        "{first:?}"
    );
    assert_eq!(storage.get_study_name_from_id(id).unwrap(), "s");
}

/// Python Optuna with heartbeats on: `hang URL STUDY` starts a trial and never finishes it;
/// `run URL STUDY` runs one trial (failing stale trials first, as Optuna does).
const HEARTBEAT_PY: &str = r#"
import sys, time, warnings
import optuna
warnings.simplefilter("ignore")
optuna.logging.set_verbosity(optuna.logging.ERROR)
storage = optuna.storages.RDBStorage(sys.argv[2], heartbeat_interval=1, grace_period=2)
study = optuna.load_study(study_name=sys.argv[3], storage=storage)
def hang(trial):
    trial.suggest_float("x", 0.0, 1.0)
    print("RUNNING", flush=True)
    time.sleep(600)
if sys.argv[1] == "hang":
    study.optimize(hang, n_trials=1)
else:
    study.optimize(lambda t: t.suggest_float("x", 0.0, 1.0), n_trials=1)
"#;

#[test]
fn heartbeats_cross_between_optuna_and_saturate() {
    for py in pythons() {
        // Optuna's worker dies; saturate fails its trial and retries it.
        let dir = tempdir();
        let url = sqlite_url(&dir.path().join("py-dies.db"));
        let (interval, grace, callback) =
            retrying(Duration::from_millis(500), Duration::from_secs(4));
        let storage: Arc<dyn Storage> = Arc::new(
            RdbStorage::open(&url)
                .unwrap()
                .with_heartbeat(interval, grace, callback)
                .unwrap(),
        );
        study_on(storage.clone(), "beats");
        let mut child = Command::new(&py)
            .args(["-c", HEARTBEAT_PY, "hang", &url, "beats"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let started = BufReader::new(child.stdout.take().unwrap())
            .lines()
            .map_while(Result::ok)
            .any(|line| line.trim() == "RUNNING");
        assert!(started, "Optuna's worker did not start its trial");
        std::thread::sleep(Duration::from_millis(700));
        child.kill().unwrap();
        child.wait().unwrap();
        retry_after_kill(storage, "beats");

        // saturate's worker dies; Optuna fails its trial.
        let url = sqlite_url(&dir.path().join("rust-dies.db"));
        let storage = open(&url);
        study_on(storage.clone(), "beats");
        kill_hung_worker(&format!("hang|{url}|beats"));
        std::thread::sleep(Duration::from_millis(3500));
        let out = Command::new(&py)
            .args(["-c", HEARTBEAT_PY, "run", &url, "beats"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let trials = storage.get_all_trials(0, None).unwrap();
        assert_eq!(trials.len(), 2);
        assert_eq!(
            trials[0].state,
            TrialState::Fail,
            "Optuna failed the stale trial"
        );
        assert_eq!(trials[1].state, TrialState::Complete);
    }
}
