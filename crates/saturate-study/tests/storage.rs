//! Storage conformance suite (run on every storage) and journal-file specifics.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use saturate_study::distributions::FloatDistribution;
use saturate_study::prelude::*;
use saturate_study::storage::JournalFileBackend;
use saturate_study::testing::storages;
use serde_json::json;

use crate::common::tempdir;

/// Everything a storage holds, as text: each study's id, name, directions and attributes,
/// and its trials in full. Two connections to one store must give the same text.
pub(crate) fn snapshot(storage: &dyn Storage) -> String {
    let mut out = String::new();
    for (id, name) in storage.get_all_studies().unwrap() {
        out += &format!(
            "study {id} {name:?} {:?} user {:?} system {:?}\n",
            storage.get_study_directions(id).unwrap(),
            storage.get_study_user_attrs(id).unwrap(),
            storage.get_study_system_attrs(id).unwrap(),
        );
        for trial in storage.get_all_trials(id, None).unwrap() {
            out += &format!("  {trial:?}\n");
        }
    }
    out
}

/// Every property of the public suite (`saturate_study::testing::storages`), each on a fresh
/// store: `fresh(i)` names store `i`, `open` connects to it. After the property, a second
/// connection to the same store must read exactly what the first one holds (what the storage
/// keeps in memory and what it wrote agree).
pub(crate) fn each_property_reads_back<K>(
    fresh: impl Fn(usize) -> K,
    open: impl Fn(&K) -> Box<dyn Storage>,
) {
    for (i, (name, property)) in storages::STORAGE_PROPERTIES.into_iter().enumerate() {
        let store = fresh(i);
        let first = open(&store);
        property(first.as_ref());
        let written = snapshot(first.as_ref());
        assert!(
            written.contains("study "),
            "{name}: left no study to read back"
        );
        assert_eq!(
            written,
            snapshot(open(&store).as_ref()),
            "{name}: a second connection reads another state"
        );
    }
}

/// Creates studies `a` and `b`, deletes `b` (the newest) and creates `c`: `(b, c)`'s ids.
/// Whether `c` gets `b`'s id back is the storage's own choice (Optuna's SQLite tables
/// reuse it; the journal and PostgreSQL do not); the suite only forbids reusing a live id.
pub(crate) fn study_id_after_deleting_the_newest(storage: &dyn Storage) -> (u64, u64) {
    let minimize = [StudyDirection::Minimize];
    storage.create_new_study(&minimize, "a").unwrap();
    let b = storage.create_new_study(&minimize, "b").unwrap();
    storage.delete_study(b).unwrap();
    (b, storage.create_new_study(&minimize, "c").unwrap())
}

/// One test per (storage, property) of the public conformance suite.
macro_rules! conformance {
    ($($storage:ident => $make:expr;)*) => {$(
        mod $storage {
            #[allow(unused_imports)]
            use super::*;
            use saturate_study::testing::storages;

            conformance!(@properties $make;
                studies_have_ids_names_and_directions,
                study_attributes_round_trip,
                trial_ids_are_global_and_numbers_per_study,
                trial_fields_round_trip,
                finished_trials_are_immutable,
                waiting_trials_are_claimed_once,
                trials_are_listed_in_number_order_and_filtered,
                unknown_ids_are_typed_errors,
                deleted_studies_are_gone_with_their_trials,
                trial_ids_keep_counting_across_studies,
            );
        }
    )*};
    (@properties $make:expr; $($property:ident,)*) => {$(
        #[test]
        fn $property() {
            let (storage, _keep) = $make;
            storages::$property(&*storage);
        }
    )*};
}

conformance! {
    in_memory => (Box::new(InMemoryStorage::new()) as Box<dyn Storage>, ());
    journal => {
        let dir = tempdir();
        let storage = JournalStorage::open(dir.path().join("journal.log")).unwrap();
        (Box::new(storage) as Box<dyn Storage>, dir)
    };
    rdb_sqlite => {
        let dir = tempdir();
        let url = format!("sqlite:///{}", dir.path().join("study.db").display());
        let storage = saturate_study::storage::RdbStorage::open(&url).unwrap();
        (Box::new(storage) as Box<dyn Storage>, dir)
    };
}

#[test]
fn the_whole_suite_runs_on_a_journal_per_property() {
    let dir = tempdir();
    let count = std::sync::atomic::AtomicUsize::new(0);
    saturate_study::testing::run_storage_suite(|| {
        let n = count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = dir.path().join(format!("journal-{n}.log"));
        Box::new(JournalStorage::open(path).unwrap())
    });
    assert_eq!(count.into_inner(), 11);
}

#[test]
fn journal_storage_reads_back_every_property() {
    let dir = tempdir();
    each_property_reads_back(
        |i| dir.path().join(format!("journal-{i}.log")),
        |path| Box::new(JournalStorage::open(path).unwrap()),
    );
}

#[test]
fn journal_study_ids_are_not_reused() {
    let dir = tempdir();
    let storage = JournalStorage::open(dir.path().join("journal.log")).unwrap();
    assert_eq!(study_id_after_deleting_the_newest(&storage), (1, 2));
}

#[test]
fn journal_lines_are_optunas_format() {
    let dir = tempdir();
    let path = dir.path().join("j.log");
    let storage = JournalStorage::open(&path).unwrap();
    let s = storage
        .create_new_study(&[StudyDirection::Minimize], "demo")
        .unwrap();
    let t = storage.create_new_trial(s, None).unwrap();
    let log = Distribution::Float(FloatDistribution::new(1e-5, 0.1, true, None).unwrap());
    storage.set_trial_param(t, "lr", 0.000495, &log).unwrap();
    let cat = Distribution::Categorical(
        CategoricalDistribution::new(vec!["a".into(), "b".into(), Choice::Null, 1.5.into()])
            .unwrap(),
    );
    storage.set_trial_param(t, "c", 0.0, &cat).unwrap();
    storage
        .set_trial_intermediate_value(t, 0, f64::NAN)
        .unwrap();
    storage
        .set_trial_state_values(t, TrialState::Complete, Some(&[1.5]))
        .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 6);
    let strip_worker = |line: &str| {
        let start = line.find(",\"worker_id\":\"").unwrap();
        let end = line[start + 14..].find('"').unwrap() + start + 15;
        format!("{}{}", &line[..start], &line[end..])
    };
    assert_eq!(
        strip_worker(lines[0]),
        r#"{"op_code":0,"study_name":"demo","directions":[1]}"#
    );
    assert!(strip_worker(lines[1]).starts_with(r#"{"op_code":4,"study_id":0,"datetime_start":"20"#));
    assert_eq!(
        strip_worker(lines[2]),
        r#"{"op_code":5,"trial_id":0,"param_name":"lr","param_value_internal":0.000495,"distribution":"{\"name\": \"FloatDistribution\", \"attributes\": {\"step\": null, \"low\": 1e-05, \"high\": 0.1, \"log\": true}}"}"#
    );
    assert_eq!(
        strip_worker(lines[3]),
        r#"{"op_code":5,"trial_id":0,"param_name":"c","param_value_internal":0,"distribution":"{\"name\": \"CategoricalDistribution\", \"attributes\": {\"choices\": [\"a\", \"b\", null, 1.5]}}"}"#
    );
    assert_eq!(
        strip_worker(lines[4]),
        r#"{"op_code":7,"trial_id":0,"step":0,"intermediate_value":NaN}"#
    );
    let last = strip_worker(lines[5]);
    assert!(
        last.starts_with(
            r#"{"op_code":6,"trial_id":0,"state":1,"values":[1.5],"datetime_complete":""#
        ),
        "{last}"
    );
    // Naive local datetime with exactly six fractional digits.
    let dt = &last[last.len() - 28..last.len() - 2];
    assert_eq!(dt.len(), 26);
    assert_eq!(&dt[10..11], "T");
    assert_eq!(dt[20..].len(), 6, "{dt}");
}

#[test]
fn torn_last_line_is_ignored_until_completed() {
    let dir = tempdir();
    let path = dir.path().join("j.log");
    let writer = JournalStorage::open(&path).unwrap();
    writer
        .create_new_study(&[StudyDirection::Minimize], "s")
        .unwrap();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(br#"{"op_code":4,"worker_id":"w","study_id":0,"datetime_"#)
        .unwrap();
    let reader = JournalStorage::open(&path).unwrap();
    assert_eq!(reader.get_all_trials(0, None).unwrap().len(), 0);
    file.write_all(b"start\":null}\n").unwrap();
    assert_eq!(reader.get_all_trials(0, None).unwrap().len(), 1);
}

/// A writer killed mid-append leaves a torn last line; the next writer cuts it off before it
/// appends (else its line is glued to the torn one and both are lost). Every cut of the last
/// line, at every byte offset: the study written next is there, the journal reads back whole,
/// and what the torn line would have written is not.
#[test]
fn a_torn_last_line_is_cut_off_before_the_next_append_at_every_offset() {
    let dir = tempdir();
    let path = dir.path().join("j.log");
    let study = StudyConfig::new()
        .with_name("s1")
        .with_storage(Arc::new(JournalStorage::open(&path).unwrap()))
        .init()
        .unwrap();
    let mut trial = study.ask().unwrap();
    trial.suggest_float("x", 0.0, 1.0).unwrap();
    study.tell(&trial, &[0.5]).unwrap();
    let mut trial = study.ask().unwrap();
    let before_last = std::fs::read(&path).unwrap().len();
    trial.set_user_attr("last", "torn").unwrap();
    let whole = std::fs::read(&path).unwrap();
    assert_eq!(*whole.last().unwrap(), b'\n');
    // Cuts from one byte of the last line to all of it but its newline.
    for cut in before_last + 1..whole.len() {
        let torn = dir.path().join(format!("torn-{cut}.log"));
        std::fs::write(&torn, &whole[..cut]).unwrap();
        let storage = JournalStorage::open(&torn).unwrap();
        let id = storage
            .create_new_study(&[StudyDirection::Minimize], "s2")
            .unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
        assert!(id > 0);
        let reread = JournalStorage::open(&torn).unwrap();
        let names: Vec<String> = reread
            .get_all_studies()
            .unwrap_or_else(|e| panic!("cut at {cut}: {e}"))
            .into_iter()
            .map(|(_, name)| name)
            .collect();
        assert_eq!(names, ["s1", "s2"], "cut at {cut}");
        let s1 = reread.get_study_id_from_name("s1").unwrap();
        let trials = reread.get_all_trials(s1, None).unwrap();
        assert_eq!(trials.len(), 2, "cut at {cut}");
        assert!(
            trials[1].user_attrs.is_empty(),
            "cut at {cut}: {:?}",
            trials[1]
        );
        let bytes = std::fs::read(&torn).unwrap();
        assert_eq!(&bytes[..before_last], &whole[..before_last], "cut at {cut}");
        assert_eq!(*bytes.last().unwrap(), b'\n');
    }
}

/// A complete but unreadable last line (not a torn append: it ends with a newline) is not
/// overwritten: the next write is refused with the file and line.
#[test]
fn a_write_after_an_unreadable_last_line_is_refused() {
    let dir = tempdir();
    let path = dir.path().join("j.log");
    let writer = JournalStorage::open(&path).unwrap();
    writer
        .create_new_study(&[StudyDirection::Minimize], "s")
        .unwrap();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(b"{\"op_code\":4,\"wor\n").unwrap();
    let before = std::fs::read(&path).unwrap();
    let err = JournalStorage::open(&path)
        .unwrap()
        .create_new_study(&[StudyDirection::Minimize], "s2")
        .unwrap_err();
    assert!(
        matches!(&err, StudyError::CorruptJournal { line: 2, .. }),
        "{err}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn corrupt_line_followed_by_more_lines_is_an_error_with_file_and_line() {
    let dir = tempdir();
    let path = dir.path().join("j.log");
    let writer = JournalStorage::open(&path).unwrap();
    writer
        .create_new_study(&[StudyDirection::Minimize], "s")
        .unwrap();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(b"{\"op_code\":4,\"wor\n").unwrap();
    // Alone at the end, an invalid line is treated as still being written.
    let reader = JournalStorage::open(&path).unwrap();
    assert_eq!(reader.get_all_studies().unwrap().len(), 1);
    file.write_all(b"{\"op_code\":4,\"worker_id\":\"w\",\"study_id\":0,\"datetime_start\":null}\n")
        .unwrap();
    let err = JournalStorage::open(&path)
        .unwrap()
        .get_all_studies()
        .unwrap_err();
    match &err {
        StudyError::CorruptJournal { path: p, line, .. } => {
            assert_eq!((p.as_path(), *line), (path.as_path(), 2));
        }
        other => panic!("{other}"),
    }
    assert!(err.to_string().contains("j.log:2"), "{err}");
}

#[test]
fn lock_timeout_and_stale_lock_release() {
    let dir = tempdir();
    let path = dir.path().join("j.log");
    let backend = JournalFileBackend::new(&path).unwrap();
    // Someone else holds the lock.
    crate::common::hold_lock(&backend);
    let storage = JournalStorage::new(backend.clone().with_lock_timeout(Duration::from_millis(50)));
    let err = storage
        .create_new_study(&[StudyDirection::Minimize], "s")
        .unwrap_err();
    assert!(matches!(err, StudyError::LockTimeout { .. }), "{err}");
    // A lock whose journal has not changed for the grace period is released.
    let storage = JournalStorage::new(backend.with_grace_period(Duration::from_millis(100)));
    storage
        .create_new_study(&[StudyDirection::Minimize], "s")
        .unwrap();
    assert!(!dir.path().join("j.log.lock").exists());
    let leftovers = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(
        leftovers, 1,
        "only the journal remains (renamed locks are unlinked)"
    );
}

#[test]
fn threads_sharing_one_journal_storage_lose_nothing() {
    let dir = tempdir();
    let storage: Arc<dyn Storage> =
        Arc::new(JournalStorage::open(dir.path().join("j.log")).unwrap());
    let study = crate::common::study_on(storage.clone(), "threads");
    std::thread::scope(|scope| {
        for _ in 0..4 {
            let study = study.clone();
            scope.spawn(move || {
                for _ in 0..25 {
                    let mut t = study.ask().unwrap();
                    let x = t.suggest_float("x", 0.0, 1.0).unwrap();
                    study.tell(&t, &[x]).unwrap();
                }
            });
        }
    });
    let trials = JournalStorage::open(dir.path().join("j.log"))
        .unwrap()
        .get_all_trials(0, None)
        .unwrap();
    assert_eq!(trials.len(), 100);
    assert!(trials.iter().all(|t| t.state == TrialState::Complete));
}

#[test]
fn u64_attributes_stay_exact_integers_in_the_journal() {
    let dir = tempdir();
    let path = dir.path().join("j.log");
    let storage = JournalStorage::open(&path).unwrap();
    let s = storage
        .create_new_study(&[StudyDirection::Minimize], "big")
        .unwrap();
    let t = storage.create_new_trial(s, None).unwrap();
    storage
        .set_trial_user_attr(t, "max", json!(u64::MAX))
        .unwrap();
    storage
        .set_study_system_attr(s, "ids", json!({"ids": [u64::MAX, 1]}))
        .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    // Python's json.dumps writes the same digits; a float would be 1.8446744073709552e+19.
    assert!(
        text.contains(r#""user_attr":{"max":18446744073709551615}"#),
        "{text}"
    );
    assert!(
        text.contains(r#""system_attr":{"ids":{"ids":[18446744073709551615,1]}}"#),
        "{text}"
    );
    let reread = JournalStorage::open(&path).unwrap();
    let trial = reread.get_trial(t).unwrap();
    assert_eq!(trial.user_attrs["max"].as_u64(), Some(u64::MAX));
    assert_eq!(
        reread.get_study_system_attrs(s).unwrap()["ids"],
        json!({"ids": [u64::MAX, 1]})
    );
}
