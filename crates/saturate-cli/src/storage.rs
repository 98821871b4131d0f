//! `--storage URL`: a journal file path, `sqlite:///PATH` or `postgresql://...`.

use std::path::Path;
use std::sync::Arc;

use saturate_study::storage::{JournalStorage, Storage};

use crate::error::{CliError, Result};

/// What kind of storage a URL names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StorageKind {
    /// Optuna's JournalStorage in a file.
    Journal,
    /// Optuna's RDB schema (SQLite or PostgreSQL).
    Rdb,
}

/// The kind of storage `url` names, or why saturate cannot open it.
pub fn kind(url: &str) -> Result<StorageKind> {
    match url.split_once("://").map(|(scheme, _)| scheme) {
        None => Ok(StorageKind::Journal),
        Some(scheme) => match scheme.split('+').next().unwrap_or(scheme) {
            "sqlite" | "postgresql" | "postgres" => Ok(StorageKind::Rdb),
            "redis" | "rediss" => Err(CliError::UnsupportedStorage {
                url: redact(url),
                reason: "Optuna's Redis journal is not implemented".into(),
            }),
            "mysql" => Err(CliError::UnsupportedStorage {
                url: redact(url),
                reason: "MySQL is not implemented".into(),
            }),
            "file" => Err(CliError::UnsupportedStorage {
                url: redact(url),
                reason: "give a journal file as a plain path, without `file://`".into(),
            }),
            other => Err(CliError::UnsupportedStorage {
                url: redact(url),
                reason: format!("unknown scheme `{other}`"),
            }),
        },
    }
}

/// Opens the storage at `url`. A journal file must exist unless `create` (only the
/// commands that write a new study create one).
pub fn open(url: &str, create: bool) -> Result<Arc<dyn Storage>> {
    match kind(url)? {
        StorageKind::Journal => {
            if !create && !Path::new(url).is_file() {
                return Err(CliError::MissingJournal { path: url.into() });
            }
            Ok(Arc::new(JournalStorage::open(url)?))
        }
        StorageKind::Rdb => open_rdb(url),
    }
}

fn open_rdb(url: &str) -> Result<Arc<dyn Storage>> {
    Err(CliError::UnsupportedStorage {
        url: redact(url),
        reason: "this build of saturate has no RDB storage yet (saturate-study's RdbStorage \
                 is not available); use a journal file path"
            .into(),
    })
}

/// `url` with the password (between `user:` and `@`) replaced by `***`.
pub fn redact(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_owned();
    };
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else {
        return url.to_owned();
    };
    match rest[..at].find(':') {
        Some(colon) => format!(
            "{}{}:***{}",
            &url[..scheme_end + 3],
            &rest[..colon],
            &rest[at..]
        ),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_messages() {
        assert_eq!(
            redact("postgresql://alice:s3cret@db:5432/optuna"),
            "postgresql://alice:***@db:5432/optuna"
        );
        assert_eq!(redact("sqlite:///x.db"), "sqlite:///x.db");
        let err = kind("mysql://bob:hunter2@h/db").unwrap_err().to_string();
        assert!(!err.contains("hunter2"), "{err}");
    }
}
