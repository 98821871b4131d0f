//! Speed of saturate-study: TPE overhead per trial and journal loading.
//!
//! `cargo bench -p saturate-study --bench study`. The journal benchmark writes a
//! 100,000-line Optuna journal to `target/study-bench/journal-100k.log`; time Python
//! Optuna loading the same file with `scripts/python/bench_journal_load.py`. The TPE
//! benchmark against Python Optuna, in one run: `scripts/bench-study-overhead.sh`.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use divan::Bencher;
use saturate_study::prelude::*;

fn main() {
    divan::main();
}

/// A study whose storage holds `n` COMPLETE trials over 5 parameters, driven by TPE.
fn tpe_study_with_history(n: usize) -> DefaultStudy {
    let storage: Arc<dyn Storage> = Arc::new(InMemoryStorage::new());
    let warmup = StudyConfig::new()
        .with_name("bench")
        .with_storage(storage.clone())
        .with_sampler(RandomSamplerConfig::new().with_seed(0).init())
        .with_pruner(NopPruner)
        .init()
        .unwrap();
    warmup.optimize(Some(n), None, objective).unwrap();
    if let Ok(path) = std::env::var("SATURATE_BENCH_HISTORY") {
        write_history(&warmup, n, &path);
    }
    StudyConfig::new()
        .with_name("bench")
        .with_storage(storage)
        .with_sampler(TpeSamplerConfig::new().with_seed(0).init().unwrap())
        .with_pruner(NopPruner)
        .load()
        .unwrap()
}

/// Writes the history as JSON lines (internal parameter values and the value), to
/// `{path}-{n}.jsonl`: scripts/bench-study-overhead.sh gives Python Optuna the same trials.
fn write_history(study: &DefaultStudy, n: usize, path: &str) {
    let mut out = String::new();
    for t in study.trials(None).unwrap().iter() {
        let mut row: serde_json::Map<String, serde_json::Value> = t
            .params
            .iter()
            .map(|(k, p)| (k.clone(), p.internal.into()))
            .collect();
        row.insert("value".into(), t.value().unwrap().into());
        out.push_str(&serde_json::Value::Object(row).to_string());
        out.push('\n');
    }
    std::fs::write(format!("{path}-{n}.jsonl"), out).unwrap();
}

fn objective(trial: &mut Trial) -> Result<f64, saturate_study::study::ObjectiveError> {
    let x = trial.suggest_float("x", -5.0, 5.0)?;
    let lr = trial.suggest_float_log("lr", 1e-5, 1e-1)?;
    let n = trial.suggest_int("n", 1, 64)?;
    let q = trial.suggest_float_step("q", 0.0, 1.0, 0.1)?;
    let act = trial.suggest_categorical("act", ["relu", "gelu", "tanh"])?;
    let penalty = if act == "relu" { 0.0 } else { 0.5 };
    Ok(x * x + lr.ln().abs() + n as f64 / 64.0 + q + penalty)
}

/// One trial: ask, 5 suggests, tell, with TPE over `history` completed trials.
#[divan::bench(args = [100, 1000], sample_count = 50, sample_size = 1)]
fn tpe_ask_5_suggests_tell(bencher: Bencher, history: usize) {
    let study = tpe_study_with_history(history);
    bencher.bench_local(|| {
        let mut trial = study.ask().unwrap();
        let value = objective(&mut trial).unwrap();
        study.tell(&trial, &[value]).unwrap();
    });
}

/// Same with the random sampler: the study and storage overhead alone.
#[divan::bench(args = [1000], sample_count = 50, sample_size = 1)]
fn random_ask_5_suggests_tell(bencher: Bencher, history: usize) {
    let storage: Arc<dyn Storage> = Arc::new(InMemoryStorage::new());
    let study = StudyConfig::new()
        .with_storage(storage)
        .with_sampler(RandomSamplerConfig::new().with_seed(0).init())
        .with_pruner(NopPruner)
        .init()
        .unwrap();
    study.optimize(Some(history), None, objective).unwrap();
    bencher.bench_local(|| {
        let mut trial = study.ask().unwrap();
        let value = objective(&mut trial).unwrap();
        study.tell(&trial, &[value]).unwrap();
    });
}

/// Writes a journal of `lines` lines in Optuna's format: one study, then trials of
/// 8 lines each (create, 5 params, an intermediate value, the final state).
pub fn write_journal(path: &PathBuf, lines: usize) {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let w = "\"worker_id\":\"bench-0\"";
    writeln!(
        out,
        "{{\"op_code\":0,{w},\"study_name\":\"load\",\"directions\":[1]}}"
    )
    .unwrap();
    let float = r#"{\"name\": \"FloatDistribution\", \"attributes\": {\"step\": null, \"low\": -5.0, \"high\": 5.0, \"log\": false}}"#;
    let log = r#"{\"name\": \"FloatDistribution\", \"attributes\": {\"step\": null, \"low\": 1e-05, \"high\": 0.1, \"log\": true}}"#;
    let int = r#"{\"name\": \"IntDistribution\", \"attributes\": {\"log\": false, \"step\": 1, \"low\": 1, \"high\": 64}}"#;
    let cat = r#"{\"name\": \"CategoricalDistribution\", \"attributes\": {\"choices\": [\"relu\", \"gelu\", \"tanh\"]}}"#;
    let mut written = 1;
    let mut trial = 0u64;
    while written + 8 <= lines {
        let v = (trial as f64 * 0.618_033_988_7).fract();
        writeln!(out, "{{\"op_code\":4,{w},\"study_id\":0,\"datetime_start\":\"2026-11-29T21:48:20.808259\"}}").unwrap();
        for (name, value, dist) in [
            ("x", format!("{}", v * 10.0 - 5.0), float),
            ("y", format!("{}", 5.0 - v * 10.0), float),
            ("lr", format!("{}", 1e-5 + v * 0.01), log),
            ("n", format!("{}.0", 1 + trial % 64), int),
            ("act", format!("{}", trial % 3), cat),
        ] {
            writeln!(out, "{{\"op_code\":5,{w},\"trial_id\":{trial},\"param_name\":\"{name}\",\"param_value_internal\":{value},\"distribution\":\"{dist}\"}}").unwrap();
        }
        writeln!(
            out,
            "{{\"op_code\":7,{w},\"trial_id\":{trial},\"step\":0,\"intermediate_value\":{v}}}"
        )
        .unwrap();
        writeln!(out, "{{\"op_code\":6,{w},\"trial_id\":{trial},\"state\":1,\"values\":[{v}],\"datetime_complete\":\"2026-11-29T21:48:20.852208\"}}").unwrap();
        written += 8;
        trial += 1;
    }
    out.flush().unwrap();
}

fn journal_100k() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/study-bench");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("journal-100k.log");
    if !path.exists() {
        write_journal(&path, 100_000);
    }
    path
}

/// Replaying a 100,000-line journal and reading all its trials.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn journal_load_100k_lines(bencher: Bencher) {
    let path = journal_100k();
    bencher.bench_local(|| {
        let storage = JournalStorage::open(&path).unwrap();
        let id = storage.get_study_id_from_name("load").unwrap();
        let trials = storage.get_all_trials(id, None).unwrap();
        assert_eq!(trials.len(), 12_499);
        trials
    });
}
