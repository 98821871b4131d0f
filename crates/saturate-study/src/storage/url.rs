//! Opening a storage by URL, and the one password redactor every printed URL goes through.

use std::sync::Arc;

use super::{JournalStorage, RdbStorage, Storage};
use crate::error::{Result, StudyError};

/// Opens the storage a URL names, as Python Optuna's `--storage` takes it:
///
/// - a path without a scheme (`study.log`, `/runs/study.log`): a [`JournalStorage`] file,
///   created when missing;
/// - `sqlite:///relative.db`, `sqlite:////absolute.db` (SQLAlchemy's forms): an
///   [`RdbStorage`] on SQLite, the file and Optuna's tables created when missing;
/// - `postgresql://user:password@host:port/database` (also `postgres://` and
///   `postgresql+psycopg2://`): an [`RdbStorage`] on PostgreSQL (`PGPASSWORD` is used when the
///   URL has no password).
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let journal = saturate_study::storage::open(dir.path().join("study.log").to_str().unwrap())?;
/// let sqlite = saturate_study::storage::open(&format!(
///     "sqlite:///{}",
///     dir.path().join("study.db").display()
/// ))?;
/// # let _ = (journal, sqlite);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`StudyError::InvalidStorageUrl`] for a scheme saturate does not speak (`mysql://`,
/// `redis://`, `file://`: the reason says what to use instead); the storage's own errors
/// (an unreachable server, a schema of another Optuna version). Every URL in an error has
/// its password redacted ([`redact_url`]).
pub fn open(url: &str) -> Result<Arc<dyn Storage>> {
    Ok(match kind(url)? {
        Kind::Journal => Arc::new(JournalStorage::open(url)?),
        Kind::Rdb => Arc::new(RdbStorage::open(url)?),
    })
}

/// The storages a URL can name.
enum Kind {
    Journal,
    Rdb,
}

fn kind(url: &str) -> Result<Kind> {
    let Some((scheme, _)) = url.split_once("://") else {
        if is_dsn(url) {
            return Err(StudyError::InvalidStorageUrl {
                url: redact_url(url),
                reason: "a libpq `key=value` connection string is not a storage URL: give it \
                         as postgresql://USER:PASSWORD@HOST:PORT/DATABASE"
                    .into(),
            });
        }
        return Ok(Kind::Journal);
    };
    let driver = scheme.split('+').next().unwrap_or(scheme);
    let unsupported = |reason: &str| StudyError::InvalidStorageUrl {
        url: redact_url(url),
        reason: reason.into(),
    };
    match driver {
        "sqlite" | "postgresql" | "postgres" => Ok(Kind::Rdb),
        "redis" | "rediss" => Err(unsupported(
            "Optuna's Redis journal is not implemented: use a journal file, SQLite or PostgreSQL",
        )),
        "mysql" => Err(unsupported(
            "MySQL is not implemented: use PostgreSQL, SQLite or a journal file",
        )),
        "file" => Err(unsupported(
            "give a journal file as a plain path, without `file://`",
        )),
        other => Err(unsupported(&format!(
            "unknown scheme `{other}`: use a journal file path, `sqlite:///PATH` or \
             `postgresql://USER:PASSWORD@HOST:PORT/DATABASE`"
        ))),
    }
}

/// [`open`] with heartbeats (journal and RDB storages, see
/// [`RdbStorage::with_heartbeat`]): running trials record a heartbeat every `interval`, and a
/// RUNNING trial without one for `grace_period` (default twice `interval`) is failed and
/// passed to `callback` (e.g. [`RetryFailedTrialCallback`](super::RetryFailedTrialCallback))
/// by the next worker that asks.
///
/// # Errors
/// As [`open`]; [`StudyError::InvalidArgument`] for a zero interval or grace period.
pub fn open_with_heartbeat(
    url: &str,
    interval: std::time::Duration,
    grace_period: Option<std::time::Duration>,
    callback: Option<super::StaleTrialCallback>,
) -> Result<Arc<dyn Storage>> {
    Ok(match kind(url)? {
        Kind::Journal => {
            Arc::new(JournalStorage::open(url)?.with_heartbeat(interval, grace_period, callback)?)
        }
        Kind::Rdb => {
            Arc::new(RdbStorage::open(url)?.with_heartbeat(interval, grace_period, callback)?)
        }
    })
}

/// A libpq connection string (`host=db user=bob password=...`): whitespace-separated
/// `key=value` pairs whose first key is one of libpq's.
fn is_dsn(text: &str) -> bool {
    const KEYS: [&str; 8] = [
        "host", "hostaddr", "port", "dbname", "user", "password", "sslmode", "service",
    ];
    text.split_whitespace().next().is_some_and(|first| {
        first
            .split_once('=')
            .is_some_and(|(key, _)| KEYS.contains(&key.to_ascii_lowercase().as_str()))
    }) && text.contains(' ')
}

/// Query and DSN keys whose values are secrets (compared in lower case, as substrings:
/// `password`, `sslpassword`, `PGPASSWORD`, `passwd`, `api_token`, `client_secret`, ...).
const SECRET_KEYS: [&str; 5] = ["password", "passwd", "pwd", "secret", "token"];

fn is_secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    SECRET_KEYS.iter().any(|s| key.contains(s))
}

/// `url` with every password replaced by `***`, for messages and logs: the password of a
/// URL's user info (`scheme://user:PASSWORD@host`), secret query parameters
/// (`?password=`, `&sslpassword=`, any case, any scheme) and secret `key=value` pairs of a
/// libpq DSN (`host=h password=PASSWORD`, quoted values included).
///
/// ```
/// use saturate_study::storage::redact_url;
/// assert_eq!(redact_url("postgresql://bob:s3cret@db/optuna"), "postgresql://bob:***@db/optuna");
/// assert_eq!(
///     redact_url("postgresql://db/optuna?user=bob&Password=s3cret"),
///     "postgresql://db/optuna?user=bob&Password=***"
/// );
/// assert_eq!(redact_url("host=db password='s 3cret' user=bob"), "host=db password=*** user=bob");
/// assert_eq!(redact_url("runs/lr=0.1/study.log"), "runs/lr=0.1/study.log");
/// ```
pub fn redact_url(url: &str) -> String {
    redact_pairs(&redact_user_info(url))
}

/// `scheme://user:PASSWORD@host...` → `scheme://user:***@host...`.
fn redact_user_info(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_owned();
    };
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let Some(at) = authority.rfind('@') else {
        return url.to_owned();
    };
    match authority[..at].find(':') {
        Some(colon) => format!(
            "{}{}:***{}",
            &url[..scheme_end + 3],
            &authority[..colon],
            &rest[at..]
        ),
        None => url.to_owned(),
    }
}

/// Secret `key=value` pairs (a key at the start or after whitespace, `?`, `&` or `;`) get
/// `***` for their value; a value ends at whitespace, `&`, `;` or `#`, or at its closing quote.
fn redact_pairs(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let at_boundary =
            i == 0 || matches!(chars[i - 1], '?' | '&' | ';') || chars[i - 1].is_whitespace();
        if at_boundary {
            let key_end = (i..chars.len())
                .find(|&j| {
                    !(chars[j].is_ascii_alphanumeric() || matches!(chars[j], '_' | '-' | '.'))
                })
                .unwrap_or(chars.len());
            if key_end > i && key_end < chars.len() && chars[key_end] == '=' {
                let key: String = chars[i..key_end].iter().collect();
                if is_secret_key(&key) {
                    out.push_str(&key);
                    out.push_str("=***");
                    i = skip_value(&chars, key_end + 1);
                    continue;
                }
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// The index after the value that starts at `start`.
fn skip_value(chars: &[char], start: usize) -> usize {
    match chars.get(start) {
        Some(&quote @ ('\'' | '"')) => {
            let mut j = start + 1;
            while j < chars.len() {
                match chars[j] {
                    '\\' => j += 2,
                    c if c == quote => return j + 1,
                    _ => j += 1,
                }
            }
            chars.len()
        }
        _ => (start..chars.len())
            .find(|&j| chars[j].is_whitespace() || matches!(chars[j], '&' | ';' | '#'))
            .unwrap_or(chars.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_of_password_is_redacted() {
        for (url, want) in [
            (
                "postgresql://bob:s3cret@localhost:5432/db",
                "postgresql://bob:***@localhost:5432/db",
            ),
            (
                "postgresql://a:p@ss@h/db?x=1",
                "postgresql://a:***@h/db?x=1",
            ),
            (
                "postgresql://bob@h/db?password=s3cret",
                "postgresql://bob@h/db?password=***",
            ),
            (
                "postgresql://h/db?sslmode=require&SSLPASSWORD=s3cret&user=bob",
                "postgresql://h/db?sslmode=require&SSLPASSWORD=***&user=bob",
            ),
            (
                "postgresql+psycopg2://u:s3cret@h/db?PassWord=s3cret",
                "postgresql+psycopg2://u:***@h/db?PassWord=***",
            ),
            (
                "host=db port=5432 password=s3cret user=bob",
                "host=db port=5432 password=*** user=bob",
            ),
            (
                r#"host=db password="a \"s3cret\" b" dbname=x"#,
                "host=db password=*** dbname=x",
            ),
            ("redis://:s3cret@h:6379/0", "redis://:***@h:6379/0"),
            (
                "mysql://h/db?passwd=s3cret;token=s3cret",
                "mysql://h/db?passwd=***;token=***",
            ),
            ("sqlite:///x.db", "sqlite:///x.db"),
            ("runs/lr=0.1/study.log", "runs/lr=0.1/study.log"),
            ("postgresql://bob@h/db", "postgresql://bob@h/db"),
        ] {
            let got = redact_url(url);
            assert_eq!(got, want, "{url}");
            assert!(!got.contains("s3cret"), "{url} -> {got}");
        }
    }

    #[test]
    fn unsupported_schemes_say_what_to_use_without_the_password() {
        for url in [
            "mysql://bob:s3cret@h/db",
            "redis://:s3cret@h/0",
            "file:///tmp/x.log?password=s3cret",
            "ftp://bob:s3cret@h/x",
            "host=db user=bob password=s3cret dbname=optuna",
        ] {
            let Err(err) = open(url) else {
                panic!("{url} opened")
            };
            let (shown, debug) = (err.to_string(), format!("{err:?}"));
            assert!(
                matches!(err, StudyError::InvalidStorageUrl { .. }),
                "{debug}"
            );
            assert!(
                !shown.contains("s3cret") && !debug.contains("s3cret"),
                "{debug}"
            );
            assert!(shown.contains("use") || shown.contains("give"), "{shown}");
        }
    }
}
