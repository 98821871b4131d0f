//! Speed of the RDB storage: one trial (ask, 3 suggests, 1 report, tell) through
//! `RdbStorage` on a SQLite file and on PostgreSQL, next to the journal file, with a
//! random sampler, on a study that already holds 100 trials.
//!
//! `cargo bench -p saturate-study --bench rdb`; the PostgreSQL rows need
//! `SATURATE_TEST_POSTGRES_URL` (e.g. from `scripts/setup-postgres.sh start DIR`) and are
//! skipped without it. Every write is its own transaction, committed to disk (SQLite's
//! default `synchronous=FULL`; the test cluster runs with `fsync=off`).

use std::sync::Arc;

use divan::Bencher;
use saturate_study::prelude::*;
use saturate_study::storage::RdbStorage;

fn main() {
    divan::main();
}

fn objective(trial: &mut Trial) -> Result<f64, saturate_study::study::ObjectiveError> {
    let x = trial.suggest_float("x", -5.0, 5.0)?;
    let lr = trial.suggest_float_log("lr", 1e-5, 1e-1)?;
    let n = trial.suggest_int("n", 1, 8)?;
    trial.report(0, x * x)?;
    Ok(x * x + lr + n as f64)
}

fn study(storage: Arc<dyn Storage>) -> DefaultStudy {
    let study = StudyConfig::new()
        .with_name("bench")
        .with_storage(storage)
        .with_sampler(RandomSamplerConfig::new().with_seed(0).init())
        .with_pruner(NopPruner)
        .init()
        .unwrap();
    study.optimize(Some(100), None, objective).unwrap();
    study
}

fn run(bencher: Bencher, storage: Arc<dyn Storage>) {
    let study = study(storage);
    bencher.bench_local(|| study.optimize(Some(1), None, objective).unwrap());
}

#[divan::bench(sample_count = 20, sample_size = 5)]
fn trial_sqlite_file(bencher: Bencher) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:///{}", dir.path().join("bench.db").display());
    run(bencher, Arc::new(RdbStorage::open(&url).unwrap()));
}

#[divan::bench(sample_count = 20, sample_size = 5)]
fn trial_postgres(bencher: Bencher) {
    let Ok(url) = std::env::var("SATURATE_TEST_POSTGRES_URL") else {
        eprintln!("SATURATE_TEST_POSTGRES_URL unset: PostgreSQL bench skipped");
        return;
    };
    let name = format!("bench_{}", std::process::id());
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    client
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name}"))
        .unwrap();
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .unwrap();
    let url = format!("{}/{name}", &url[..url.rfind('/').unwrap()]);
    run(bencher, Arc::new(RdbStorage::open(&url).unwrap()));
}

#[divan::bench(sample_count = 20, sample_size = 5)]
fn trial_journal_file(bencher: Bencher) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.log");
    run(bencher, Arc::new(JournalStorage::open(path).unwrap()));
}
