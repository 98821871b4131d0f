//! Helpers shared by the test modules.

use std::sync::Arc;

use saturate_study::prelude::*;

/// A study with a seeded random sampler and no pruning on `storage`.
pub fn study_on(storage: Arc<dyn Storage>, name: &str) -> DefaultStudy {
    StudyConfig::new()
        .with_name(name)
        .with_storage(storage)
        .with_sampler(RandomSamplerConfig::new().with_seed(0).init())
        .with_pruner(NopPruner)
        .init()
        .unwrap()
}

/// Takes `backend`'s lock as another process would, and never releases it.
pub fn hold_lock(backend: &saturate_study::storage::JournalFileBackend) {
    #[cfg(unix)]
    std::os::unix::fs::symlink(backend.path(), backend.lock_path()).unwrap();
    #[cfg(not(unix))]
    std::fs::File::create(backend.lock_path()).unwrap();
}

/// A fresh temporary directory (kept alive by the returned guard).
pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// Builds a trial template for hand-made histories.
pub fn finished(state: TrialState, value: Option<f64>, intermediate: &[(i64, f64)]) -> FrozenTrial {
    let mut t = FrozenTrial::new(0, 0, state);
    t.values = value.map(|v| vec![v]);
    t.intermediate_values = intermediate.iter().copied().collect();
    t
}

/// Collects the `log` records of this test binary as `LEVEL message`.
struct Capture(std::sync::Mutex<Vec<String>>);

impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, record: &log::Record<'_>) {
        let line = format!("{} {}", record.level(), record.args());
        self.0.lock().unwrap().push(line);
    }
    fn flush(&self) {}
}

static CAPTURE: Capture = Capture(std::sync::Mutex::new(Vec::new()));

/// Every log record of this test binary since the first call (which installs the logger).
pub fn logs() -> &'static std::sync::Mutex<Vec<String>> {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        log::set_logger(&CAPTURE).unwrap();
        log::set_max_level(log::LevelFilter::Trace);
    });
    &CAPTURE.0
}
