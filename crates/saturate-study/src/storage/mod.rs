//! Storages: where studies and trials live.
//!
//! [`InMemoryStorage`] keeps everything in the process; [`JournalStorage`] appends to a
//! file in Optuna's JournalStorage format, which Python Optuna and optuna-dashboard read.
//! Both replay the same operation log, so they behave identically. [`RdbStorage`] keeps
//! them in Optuna's RDB tables on SQLite or PostgreSQL, for many workers on many machines.

mod base;
mod heartbeat;
mod in_memory;
pub mod journal;
pub mod rdb;
pub(crate) mod replay;
mod url;

pub use base::Storage;
pub use heartbeat::{
    fail_stale_trials, Heartbeat, HeartbeatGuard, RetryFailedTrialCallback, StaleTrialCallback,
};
pub use in_memory::InMemoryStorage;
pub use journal::{JournalFileBackend, JournalLock, JournalStorage};
pub use rdb::RdbStorage;
pub use url::{open, open_with_heartbeat, redact_url};
