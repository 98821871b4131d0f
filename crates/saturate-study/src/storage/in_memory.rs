//! A storage that keeps everything in the process.

use std::sync::Mutex;

use crate::error::Result;
use crate::storage::replay::{Applied, Operation, OperationLog, ReplayState};

/// Studies and trials in memory (Optuna's `InMemoryStorage`). Shared between threads of
/// one process; nothing is persisted.
#[derive(Debug, Default)]
pub struct InMemoryStorage {
    state: Mutex<ReplayState>,
}

impl InMemoryStorage {
    /// An empty storage.
    pub fn new() -> Self {
        Self::default()
    }
}

impl OperationLog for InMemoryStorage {
    fn write(&self, ops: Vec<Operation>) -> Result<Vec<Applied>> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        ops.into_iter().map(|op| state.apply(op)).collect()
    }

    fn read<R>(&self, f: impl FnOnce(&ReplayState) -> Result<R>) -> Result<R> {
        f(&self.state.lock().unwrap_or_else(|e| e.into_inner()))
    }
}
