//! The journal storage: replay of a journal file.

use std::sync::Mutex;

use crate::error::{Result, StudyError};
use crate::storage::journal::file::JournalFileBackend;
use crate::storage::journal::record;
use crate::storage::replay::{Applied, Operation, OperationLog, ReplayState};

/// Optuna's `JournalStorage` over a [`JournalFileBackend`].
///
/// Reads replay the lines appended since the last read (by anyone); writes take the
/// file lock, catch up, validate the operation against the up-to-date state, and append
/// it. A line without its final newline (a write in progress, or one cut short) is left
/// for a later read; an invalid line followed by more lines is
/// [`StudyError::CorruptJournal`].
#[derive(Debug)]
pub struct JournalStorage {
    backend: JournalFileBackend,
    worker_id: String,
    inner: Mutex<Replay>,
    heartbeat: Option<crate::storage::Heartbeat>,
}

#[derive(Debug, Default)]
struct Replay {
    state: ReplayState,
    /// Bytes of the file replayed so far (always at a line boundary).
    offset: u64,
    /// Lines replayed so far.
    lines: usize,
    buf: Vec<u8>,
    distributions: record::DistributionCache,
}

impl JournalStorage {
    /// Opens (or creates) the journal file at `path` with the default lock settings.
    pub fn open(path: impl Into<std::path::PathBuf>) -> Result<Self> {
        Ok(Self::new(JournalFileBackend::new(path)?))
    }

    /// A storage over a configured backend.
    pub fn new(backend: JournalFileBackend) -> Self {
        let worker_id = format!(
            "{}-{}-{}-{}-{}-{}",
            crate::random_id::random_hex(8),
            crate::random_id::random_hex(4),
            crate::random_id::random_hex(4),
            crate::random_id::random_hex(4),
            crate::random_id::random_hex(12),
            std::process::id()
        );
        Self {
            backend,
            worker_id,
            inner: Mutex::new(Replay::default()),
            heartbeat: None,
        }
    }

    /// Turns heartbeats on, with the semantics of
    /// [`RdbStorage::with_heartbeat`](crate::storage::RdbStorage::with_heartbeat): a running
    /// trial's heartbeat is its system attribute `saturate:heartbeat` (naive local time, as
    /// the journal's datetimes; Optuna's journal has no heartbeat of its own), and a RUNNING
    /// trial whose heartbeat is older than `grace_period` (default: twice `interval`) is
    /// failed by [`fail_stale_trials`](crate::storage::fail_stale_trials).
    ///
    /// # Errors
    /// [`StudyError::InvalidArgument`] for a zero interval or grace period.
    pub fn with_heartbeat(
        mut self,
        interval: std::time::Duration,
        grace_period: Option<std::time::Duration>,
        callback: Option<crate::storage::StaleTrialCallback>,
    ) -> Result<Self> {
        self.heartbeat = Some(crate::storage::Heartbeat::new(
            interval,
            grace_period,
            callback,
        )?);
        Ok(self)
    }

    /// The backend.
    pub fn backend(&self) -> &JournalFileBackend {
        &self.backend
    }

    fn lock_inner(&self) -> std::sync::MutexGuard<'_, Replay> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Replays the complete lines appended since the last sync.
    fn sync(&self, replay: &mut Replay) -> Result<()> {
        let mut buf = std::mem::take(&mut replay.buf);
        buf.clear();
        let result = self.replay_bytes(replay, &mut buf);
        replay.buf = buf;
        result
    }

    /// Before an append, with the file lock held: bytes after the last complete line are a
    /// line a writer died while appending (no writer is appending now). Without a newline in
    /// them, no reader has applied them (readers stop at an incomplete last line, as Optuna's
    /// do), so they are cut off, with a warning, and the append starts a fresh line; appended
    /// after them, the new line would be glued to the torn one and both lost. A complete but
    /// unreadable last line is refused instead of overwritten.
    fn repair_torn_tail(&self, replay: &Replay) -> Result<()> {
        let len = self.backend.len()?;
        if len <= replay.offset {
            return Ok(());
        }
        let mut tail = Vec::new();
        self.backend.read_from(replay.offset, &mut tail)?;
        if tail.contains(&b'\n') {
            return Err(StudyError::CorruptJournal {
                path: self.backend.path().to_owned(),
                line: replay.lines + 1,
                reason: "the last line is not a valid operation; saturate does not append after \
                         it (remove it, or restore the journal from a copy)"
                    .into(),
            });
        }
        log::warn!(
            "{}: its last {} byte(s) are a line cut off by a writer that died while appending; \
             truncated to the last complete line before appending",
            self.backend.path().display(),
            tail.len()
        );
        self.backend.truncate(replay.offset)
    }

    fn replay_bytes(&self, replay: &mut Replay, buf: &mut Vec<u8>) -> Result<()> {
        self.backend.read_from(replay.offset, buf)?;
        let mut start = 0;
        while let Some(len) = buf[start..].iter().position(|b| *b == b'\n') {
            let end = start + len;
            let parsed = std::str::from_utf8(&buf[start..end])
                .map_err(|e| e.to_string())
                .and_then(|line| record::from_line(line, &mut replay.distributions));
            match parsed {
                Ok(op) => {
                    if let Some(op) = op {
                        // Other writers' rejected operations are skipped, as Optuna skips them.
                        let _ = replay.state.apply(op);
                    }
                }
                Err(reason) if end + 1 < buf.len() => {
                    return Err(StudyError::CorruptJournal {
                        path: self.backend.path().to_owned(),
                        line: replay.lines + 1,
                        reason,
                    });
                }
                // An invalid last line may still be in the middle of being written over.
                Err(_) => return Ok(()),
            }
            replay.lines += 1;
            replay.offset += (end + 1 - start) as u64;
            start = end + 1;
        }
        Ok(())
    }
}

impl OperationLog for JournalStorage {
    fn write(&self, ops: Vec<Operation>) -> Result<Vec<Applied>> {
        let mut replay = self.lock_inner();
        let _file_lock = self.backend.lock()?;
        self.sync(&mut replay)?;
        self.repair_torn_tail(&replay)?;
        // `apply` validates before it changes anything, so the state and the file stay
        // in step: what was applied is written, the first rejected operation ends the batch.
        let mut bytes = String::new();
        let mut applied = Vec::with_capacity(ops.len());
        let mut written = 0;
        let mut failure = None;
        for op in ops {
            match replay.state.apply(op.clone()) {
                Ok(outcome) => {
                    if outcome != Applied::Accepted(false) {
                        record::to_line(&op, &self.worker_id, &mut bytes);
                        bytes.push('\n');
                        written += 1;
                    }
                    applied.push(outcome);
                }
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        if written > 0 {
            self.backend.append(bytes.as_bytes())?;
            replay.offset += bytes.len() as u64;
            replay.lines += written;
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(applied),
        }
    }

    fn read<R>(&self, f: impl FnOnce(&ReplayState) -> Result<R>) -> Result<R> {
        let mut replay = self.lock_inner();
        self.sync(&mut replay)?;
        f(&replay.state)
    }

    fn heartbeat(&self) -> Option<&crate::storage::Heartbeat> {
        self.heartbeat.as_ref()
    }
}
