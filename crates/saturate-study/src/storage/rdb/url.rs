//! Storage URLs: parsing (SQLAlchemy's forms) and password redaction.

use std::path::PathBuf;

use crate::error::{Result, StudyError};

/// Where an [`RdbStorage`](super::RdbStorage) lives.
#[derive(Clone)]
pub(crate) enum RdbUrl {
    /// A SQLite file (`None`: an in-memory database).
    Sqlite(Option<PathBuf>),
    /// A PostgreSQL server; the URL as the `postgres` crate parses it (driver suffix removed,
    /// `PGPASSWORD` filled in when the URL has no password).
    Postgres(String),
}

/// `url` with every password replaced by `***` (the storage module's one redactor).
pub(crate) fn redact(url: &str) -> String {
    crate::storage::redact_url(url)
}

fn invalid(url: &str, reason: impl Into<String>) -> StudyError {
    StudyError::InvalidStorageUrl {
        url: redact(url),
        reason: reason.into(),
    }
}

/// Parses `sqlite:///relative.db`, `sqlite:////absolute.db`, `sqlite://` / `sqlite:///:memory:`
/// (in memory) and `postgresql://user:password@host:port/database` (also `postgres://` and
/// `postgresql+psycopg2://`, the forms Python Optuna takes).
pub(crate) fn parse(url: &str) -> Result<RdbUrl> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(invalid(
            url,
            "expected `sqlite:///PATH` or `postgresql://USER:PASSWORD@HOST:PORT/DATABASE`",
        ));
    };
    let driver = scheme.split('+').next().unwrap_or(scheme);
    match driver {
        "sqlite" => {
            // SQLAlchemy: `sqlite:///x.db` is relative, `sqlite:////tmp/x.db` absolute.
            let path = rest.strip_prefix('/').unwrap_or(rest);
            let path = path.split('?').next().unwrap_or(path);
            if path.is_empty() || path == ":memory:" {
                Ok(RdbUrl::Sqlite(None))
            } else {
                Ok(RdbUrl::Sqlite(Some(PathBuf::from(path))))
            }
        }
        "postgresql" | "postgres" => {
            let mut url = format!("postgresql://{rest}");
            let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
            let has_password = rest[..authority_end]
                .rfind('@')
                .is_some_and(|at| rest[..at].contains(':'));
            if !has_password {
                if let Ok(password) = std::env::var("PGPASSWORD") {
                    let sep = if url.contains('?') { '&' } else { '?' };
                    url.push(sep);
                    url.push_str("password=");
                    url.push_str(&percent_encode(&password));
                }
            }
            Ok(RdbUrl::Postgres(url))
        }
        other => Err(invalid(
            url,
            format!(
                "unsupported scheme `{other}`: saturate's RDB storage speaks `sqlite` and \
                 `postgresql` (a journal file is opened with JournalStorage)"
            ),
        )),
    }
}

fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(
            redact("postgresql://bob:s3cr3t@localhost:5432/db"),
            "postgresql://bob:***@localhost:5432/db"
        );
        assert_eq!(
            redact("postgresql://bob@localhost/db"),
            "postgresql://bob@localhost/db"
        );
        assert_eq!(redact("sqlite:///x.db"), "sqlite:///x.db");
        assert_eq!(
            redact("postgresql://a:p@ss@h/db?x=1"),
            "postgresql://a:***@h/db?x=1"
        );
    }

    #[test]
    fn sqlite_paths_follow_sqlalchemy() {
        let path = |url| match parse(url).unwrap() {
            RdbUrl::Sqlite(p) => p,
            RdbUrl::Postgres(_) => panic!("not sqlite"),
        };
        assert_eq!(path("sqlite:///x.db"), Some(PathBuf::from("x.db")));
        assert_eq!(
            path("sqlite:////tmp/x.db"),
            Some(PathBuf::from("/tmp/x.db"))
        );
        assert_eq!(path("sqlite://"), None);
        assert_eq!(path("sqlite:///:memory:"), None);
        let Err(err) = parse("mysql://u:hunter2@h/db") else {
            panic!("mysql is not supported")
        };
        let err = err.to_string();
        assert!(!err.contains("hunter2"), "{err}");
    }
}
