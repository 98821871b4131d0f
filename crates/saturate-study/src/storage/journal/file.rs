//! The journal file and its lock, compatible with Optuna's `JournalFileBackend`.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crate::error::{Result, StudyError};

/// How processes sharing a journal take `<journal>.lock`: one of Optuna's two file locks.
/// Every process writing a journal must use the same one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JournalLock {
    /// Optuna's `JournalFileSymlinkLock`, its default: the lock is a symlink to the
    /// journal, and it is stale when the journal has not changed for the grace period.
    /// The default on Unix; on Windows, creating symlinks needs a privilege (or developer
    /// mode); elsewhere it fails with [`std::io::ErrorKind::Unsupported`].
    Symlink,
    /// Optuna's `JournalFileOpenLock`: the lock is an empty file created exclusively
    /// (`O_CREAT | O_EXCL`), stale when it is older than the grace period. Works on every
    /// platform; the default off Unix, as Optuna recommends it on Windows.
    OpenFile,
}

impl Default for JournalLock {
    fn default() -> Self {
        if cfg!(unix) {
            JournalLock::Symlink
        } else {
            JournalLock::OpenFile
        }
    }
}

impl JournalLock {
    /// One attempt at taking the lock; `AlreadyExists` when someone holds it.
    fn try_acquire(self, journal: &Path, lock_path: &Path) -> std::io::Result<()> {
        match self {
            JournalLock::Symlink => symlink(journal, lock_path),
            JournalLock::OpenFile => OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(lock_path)
                .map(drop),
        }
    }
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(windows)]
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::windows::fs::symlink_file(target, link)
}

#[cfg(not(any(unix, windows)))]
fn symlink(_target: &Path, _link: &Path) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "symlinks are not supported here: use JournalLock::OpenFile",
    ))
}

/// A journal file shared by any number of processes, Python Optuna's included.
///
/// Appends take `<file>.lock` the way Optuna's file locks do ([`JournalLock`]): create the
/// lock atomically (it fails with `EEXIST` when held), retry with a backoff from 1 ms
/// doubling to 1 s, and forcibly release a lock that has not changed for the grace period
/// (30 s by default: its holder is presumed dead). Release renames the lock to a unique
/// name and then unlinks it, so a waiter never removes a lock that someone else has just
/// taken. Every append is one `write` followed by `fsync`.
#[derive(Debug, Clone)]
pub struct JournalFileBackend {
    path: PathBuf,
    lock_path: PathBuf,
    lock: JournalLock,
    grace_period: Duration,
    lock_timeout: Option<Duration>,
}

impl JournalFileBackend {
    /// A backend on `path`; the file is created if missing. An existing file is only
    /// opened for reading here (a read-only journal can be read; a write to it fails with
    /// [`StudyError::Io`] when it happens).
    pub fn new(path: impl Into<PathBuf>) -> Result<Self> {
        let path = path.into();
        let opened = if path.exists() {
            File::open(&path).map(drop)
        } else {
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map(drop)
        };
        opened.map_err(|source| StudyError::Io {
            path: path.clone(),
            source,
        })?;
        // The symlink lock points to the journal; an absolute target keeps it resolvable
        // (the stale-lock check follows it) whatever the working directory.
        let path = path.canonicalize().map_err(|source| StudyError::Io {
            path: path.clone(),
            source,
        })?;
        let mut lock_path = path.clone().into_os_string();
        lock_path.push(".lock");
        Ok(Self {
            path,
            lock_path: lock_path.into(),
            lock: JournalLock::default(),
            grace_period: Duration::from_secs(30),
            lock_timeout: None,
        })
    }

    /// Which of Optuna's locks to take ([`JournalLock::default`]: the symlink lock on Unix,
    /// the open-file lock elsewhere).
    pub fn with_lock(mut self, lock: JournalLock) -> Self {
        self.lock = lock;
        self
    }

    /// How long an unchanged lock is honoured before it is forcibly released (30 s).
    pub fn with_grace_period(mut self, grace_period: Duration) -> Self {
        self.grace_period = grace_period;
        self
    }

    /// Give up acquiring the lock after this long with
    /// [`StudyError::LockTimeout`] (default: wait forever, as Optuna does).
    pub fn with_lock_timeout(mut self, timeout: Duration) -> Self {
        self.lock_timeout = Some(timeout);
        self
    }

    /// The journal file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The lock path, `<journal>.lock`.
    pub fn lock_path(&self) -> &Path {
        &self.lock_path
    }

    fn io(&self, source: std::io::Error) -> StudyError {
        StudyError::Io {
            path: self.path.clone(),
            source,
        }
    }

    /// Reads the bytes from `offset` to the current end of the file.
    pub(crate) fn read_from(&self, offset: u64, buf: &mut Vec<u8>) -> Result<()> {
        let mut file = File::open(&self.path).map_err(|e| self.io(e))?;
        file.seek(SeekFrom::Start(offset)).map_err(|e| self.io(e))?;
        file.read_to_end(buf).map_err(|e| self.io(e))?;
        Ok(())
    }

    /// The file's length in bytes.
    pub(crate) fn len(&self) -> Result<u64> {
        std::fs::metadata(&self.path)
            .map(|m| m.len())
            .map_err(|e| self.io(e))
    }

    /// Cuts the file to `len` bytes and fsyncs. The caller holds the lock.
    pub(crate) fn truncate(&self, len: u64) -> Result<()> {
        let file = OpenOptions::new()
            .write(true)
            .open(&self.path)
            .map_err(|e| self.io(e))?;
        file.set_len(len).map_err(|e| self.io(e))?;
        file.sync_all().map_err(|e| self.io(e))
    }

    /// Appends `bytes` in one write and fsyncs. The caller holds the lock.
    pub(crate) fn append(&self, bytes: &[u8]) -> Result<()> {
        let mut file = OpenOptions::new()
            .append(true)
            .open(&self.path)
            .map_err(|e| self.io(e))?;
        file.write_all(bytes).map_err(|e| self.io(e))?;
        file.sync_all().map_err(|e| self.io(e))
    }

    /// Takes the lock; it is released when the guard drops.
    pub(crate) fn lock(&self) -> Result<LockGuard<'_>> {
        let started = Instant::now();
        let mut sleep = Duration::from_millis(1);
        let mut last_mtime: Option<SystemTime> = None;
        let mut last_change = Instant::now();
        loop {
            match self.lock.try_acquire(&self.path, &self.lock_path) {
                Ok(()) => return Ok(LockGuard { backend: self }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    return Err(StudyError::Io {
                        path: self.lock_path.clone(),
                        source: e,
                    })
                }
            }
            // `metadata` follows a symlink lock: the journal's mtime tells whether the
            // holder is still writing. An open-file lock has its own mtime, its creation.
            if let Ok(mtime) = std::fs::metadata(&self.lock_path).and_then(|m| m.modified()) {
                if last_mtime != Some(mtime) {
                    last_mtime = Some(mtime);
                    last_change = Instant::now();
                }
                if last_change.elapsed() > self.grace_period {
                    release(&self.lock_path);
                    sleep = Duration::from_millis(1);
                    continue;
                }
            }
            if let Some(timeout) = self.lock_timeout {
                if started.elapsed() >= timeout {
                    return Err(StudyError::LockTimeout {
                        path: self.lock_path.clone(),
                        waited: started.elapsed(),
                    });
                }
            }
            std::thread::sleep(sleep);
            sleep = (sleep * 2).min(Duration::from_secs(1));
        }
    }
}

fn release(lock_path: &Path) {
    let mut renamed = lock_path.as_os_str().to_owned();
    renamed.push(format!("{}.rename", crate::random_id::random_hex(32)));
    if std::fs::rename(lock_path, &renamed).is_ok() {
        let _ = std::fs::remove_file(&renamed);
    }
}

/// Holds the journal lock until dropped.
pub(crate) struct LockGuard<'a> {
    backend: &'a JournalFileBackend,
}

impl Drop for LockGuard<'_> {
    fn drop(&mut self) {
        release(&self.backend.lock_path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open_file_backend(dir: &Path) -> JournalFileBackend {
        JournalFileBackend::new(dir.join("j.log"))
            .unwrap()
            .with_lock(JournalLock::OpenFile)
    }

    #[test]
    fn the_open_file_lock_is_a_plain_file_held_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let backend = open_file_backend(dir.path());
        let guard = backend.lock().unwrap();
        let kind = std::fs::symlink_metadata(backend.lock_path())
            .unwrap()
            .file_type();
        assert!(kind.is_file(), "{kind:?}");
        let waiter = backend.clone().with_lock_timeout(Duration::from_millis(20));
        assert!(matches!(waiter.lock(), Err(StudyError::LockTimeout { .. })));
        drop(guard);
        assert!(!backend.lock_path().exists());
        drop(waiter.lock().unwrap());
        // Only the journal is left: released locks are renamed, then unlinked.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_stale_open_file_lock_is_released_after_the_grace_period() {
        let dir = tempfile::tempdir().unwrap();
        let backend = open_file_backend(dir.path());
        // Left by a process that died holding it: nobody touches it again.
        File::create(backend.lock_path()).unwrap();
        let patient = backend
            .clone()
            .with_lock_timeout(Duration::from_millis(100));
        assert!(matches!(
            patient.lock(),
            Err(StudyError::LockTimeout { .. })
        ));
        let impatient = backend
            .with_grace_period(Duration::from_millis(50))
            .with_lock_timeout(Duration::from_secs(60));
        drop(impatient.lock().unwrap());
        assert!(!impatient.lock_path().exists());
    }

    #[test]
    fn the_default_lock_is_the_symlink_lock_only_on_unix() {
        assert_eq!(JournalLock::default() == JournalLock::Symlink, cfg!(unix));
    }
}
