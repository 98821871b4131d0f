//! Optuna's JournalStorage on a file: append-only JSON lines that Python Optuna,
//! optuna-dashboard and other saturate processes read and write concurrently.

mod file;
mod record;
mod storage;

pub use file::{JournalFileBackend, JournalLock};
pub use storage::JournalStorage;
