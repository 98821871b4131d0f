//! `--storage URL`: a journal file path, `sqlite:///PATH` or `postgresql://...`.

use std::path::Path;
use std::sync::Arc;

use saturate_study::storage::Storage;

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
        // `host=db user=bob password=...`: libpq's form, not a path (nor printed as one).
        None if url.contains('=') && url.split_whitespace().count() > 1 => {
            Err(CliError::UnsupportedStorage {
                url: redact(url),
                reason: "a libpq `key=value` connection string is not a storage URL: give it as \
                         postgresql://USER:PASSWORD@HOST:PORT/DATABASE"
                    .into(),
            })
        }
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

/// Opens the storage at `url`. A journal file, a SQLite file and a database's Optuna tables
/// must exist unless `create` (only the commands that write a new study create them): a
/// listing of a wrong or emptied database fails instead of creating an empty store there.
pub fn open(url: &str, create: bool) -> Result<Arc<dyn Storage>> {
    match kind(url)? {
        StorageKind::Journal => {
            if !create && !Path::new(url).is_file() {
                return Err(CliError::MissingJournal { path: url.into() });
            }
            Ok(saturate_study::storage::open(url)?)
        }
        StorageKind::Rdb => {
            if let Some(path) = sqlite_file(url) {
                if !create && !path.is_file() {
                    return Err(CliError::MissingDatabase {
                        url: redact(url),
                        path: path.display().to_string(),
                    });
                }
            }
            if create {
                Ok(saturate_study::storage::open(url)?)
            } else {
                Ok(Arc::new(
                    saturate_study::storage::RdbStorage::open_existing(url)?,
                ))
            }
        }
    }
}

/// The file of a `sqlite:///PATH` URL (SQLAlchemy's form: three slashes and a relative path,
/// four for an absolute one); `None` for an in-memory database or another scheme.
pub fn sqlite_file(url: &str) -> Option<std::path::PathBuf> {
    let (scheme, rest) = url.split_once("://")?;
    if scheme.split('+').next() != Some("sqlite") {
        return None;
    }
    let path = rest.strip_prefix('/').unwrap_or(rest);
    let path = path.split('?').next().unwrap_or(path);
    (!path.is_empty() && path != ":memory:").then(|| std::path::PathBuf::from(path))
}

/// `url` with every password replaced by `***` (user info, query parameters, DSN pairs).
pub fn redact(url: &str) -> String {
    saturate_study::storage::redact_url(url)
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
        assert_eq!(sqlite_file("sqlite:///x.db").unwrap(), Path::new("x.db"));
        assert_eq!(
            sqlite_file("sqlite:////tmp/x.db").unwrap(),
            Path::new("/tmp/x.db")
        );
        assert_eq!(sqlite_file("sqlite:///:memory:"), None);
        assert_eq!(sqlite_file("postgresql://h/db"), None);
        for url in [
            "mysql://bob:hunter2@h/db",
            "host=h user=bob password=hunter2",
            "postgresql://h/db?user=bob&PASSWORD=hunter2&x=1",
        ] {
            let shown = redact(url);
            assert!(!shown.contains("hunter2"), "{shown}");
        }
        let err = kind("mysql://bob:hunter2@h/db").unwrap_err().to_string();
        assert!(!err.contains("hunter2"), "{err}");
        let err = kind("host=h user=bob password=hunter2")
            .unwrap_err()
            .to_string();
        assert!(
            !err.contains("hunter2") && err.contains("postgresql://"),
            "{err}"
        );
    }
}
