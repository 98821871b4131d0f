//! Storages: where studies and trials live.
//!
//! [`InMemoryStorage`] keeps everything in the process; [`JournalStorage`] appends to a
//! file in Optuna's JournalStorage format, which Python Optuna and optuna-dashboard read.
//! Both replay the same operation log, so they behave identically.

mod base;
mod in_memory;
pub mod journal;
pub(crate) mod replay;

pub use base::Storage;
pub use in_memory::InMemoryStorage;
pub use journal::{JournalFileBackend, JournalLock, JournalStorage};
