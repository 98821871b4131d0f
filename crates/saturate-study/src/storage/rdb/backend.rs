//! What the storage needs from a database: values, rows, transactions with retries.

use std::time::Duration;

use chrono::NaiveDateTime;

use crate::error::StudyError;

/// One SQL value, as both backends bind and read it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SqlValue {
    Null,
    Int(i64),
    Real(f64),
    /// Text, also enum labels (PostgreSQL's native enums take and give their label).
    Text(String),
    /// A naive datetime (SQLite keeps it as SQLAlchemy's text form).
    Time(NaiveDateTime),
}

impl SqlValue {
    pub(crate) fn int(&self) -> Option<i64> {
        match self {
            SqlValue::Int(v) => Some(*v),
            SqlValue::Real(v) if v.fract() == 0.0 => Some(*v as i64),
            _ => None,
        }
    }

    pub(crate) fn real(&self) -> Option<f64> {
        match self {
            SqlValue::Real(v) => Some(*v),
            SqlValue::Int(v) => Some(*v as f64),
            _ => None,
        }
    }

    pub(crate) fn text(&self) -> Option<&str> {
        match self {
            SqlValue::Text(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn time(&self) -> Option<NaiveDateTime> {
        match self {
            SqlValue::Time(t) => Some(*t),
            SqlValue::Text(s) => parse_sqlite_datetime(s),
            _ => None,
        }
    }
}

impl From<i64> for SqlValue {
    fn from(v: i64) -> Self {
        SqlValue::Int(v)
    }
}

impl From<&str> for SqlValue {
    fn from(v: &str) -> Self {
        SqlValue::Text(v.to_owned())
    }
}

impl From<String> for SqlValue {
    fn from(v: String) -> Self {
        SqlValue::Text(v)
    }
}

impl From<Option<f64>> for SqlValue {
    fn from(v: Option<f64>) -> Self {
        v.map_or(SqlValue::Null, SqlValue::Real)
    }
}

impl From<Option<NaiveDateTime>> for SqlValue {
    fn from(v: Option<NaiveDateTime>) -> Self {
        v.map_or(SqlValue::Null, SqlValue::Time)
    }
}

/// SQLAlchemy's SQLite `DATETIME` text: `2026-11-29 21:48:20.806100`.
pub(crate) fn format_sqlite_datetime(dt: &NaiveDateTime) -> String {
    dt.format("%Y-%m-%d %H:%M:%S%.6f").to_string()
}

pub(crate) fn parse_sqlite_datetime(text: &str) -> Option<NaiveDateTime> {
    [
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S",
    ]
    .iter()
    .find_map(|f| NaiveDateTime::parse_from_str(text.trim(), f).ok())
}

pub(crate) type Row = Vec<SqlValue>;

/// The SQL dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// Row lock for a read that precedes a write (SQLite's write transactions lock the file).
    pub(crate) fn for_update(self) -> &'static str {
        match self {
            Dialect::Sqlite => "",
            Dialect::Postgres => " FOR UPDATE",
        }
    }

    /// The database's current time as the heartbeat columns keep it (SQLAlchemy's
    /// `func.now()`: SQLite `CURRENT_TIMESTAMP` is UTC; PostgreSQL's is the session's zone).
    pub(crate) fn now(self) -> &'static str {
        match self {
            Dialect::Sqlite => "CURRENT_TIMESTAMP",
            Dialect::Postgres => "LOCALTIMESTAMP",
        }
    }
}

/// A database failure, sorted by what to do about it.
#[derive(Debug)]
pub(crate) enum DbError {
    /// Serialization failure, deadlock or a busy database: run the transaction again.
    Retry(String),
    /// A unique (or other) constraint was violated.
    Constraint(String),
    /// Anything else.
    Other(String),
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DbError::Retry(m) | DbError::Constraint(m) | DbError::Other(m) => f.write_str(m),
        }
    }
}

/// What a transaction body can fail with.
#[derive(Debug)]
pub(crate) enum TxError {
    Db(DbError),
    Study(StudyError),
}

impl From<DbError> for TxError {
    fn from(e: DbError) -> Self {
        TxError::Db(e)
    }
}

impl From<StudyError> for TxError {
    fn from(e: StudyError) -> Self {
        TxError::Study(e)
    }
}

pub(crate) type TxResult<T> = Result<T, TxError>;

/// An open connection.
pub(crate) enum Conn {
    Sqlite(rusqlite::Connection),
    Postgres(Box<postgres::Client>),
}

/// An open transaction.
pub(crate) enum Tx<'a> {
    Sqlite(rusqlite::Transaction<'a>),
    Postgres(postgres::Transaction<'a>),
}

impl Tx<'_> {
    pub(crate) fn dialect(&self) -> Dialect {
        match self {
            Tx::Sqlite(_) => Dialect::Sqlite,
            Tx::Postgres(_) => Dialect::Postgres,
        }
    }

    /// Runs a statement with `?` placeholders; the number of rows it changed.
    pub(crate) fn execute(&mut self, sql: &str, params: &[SqlValue]) -> Result<u64, DbError> {
        match self {
            Tx::Sqlite(tx) => super::sqlite::execute(tx, sql, params),
            Tx::Postgres(tx) => super::pg::execute(tx, sql, params),
        }
    }

    /// Runs a query with `?` placeholders.
    pub(crate) fn query(&mut self, sql: &str, params: &[SqlValue]) -> Result<Vec<Row>, DbError> {
        match self {
            Tx::Sqlite(tx) => super::sqlite::query(tx, sql, params),
            Tx::Postgres(tx) => super::pg::query(tx, sql, params),
        }
    }

    /// Runs an `INSERT` and returns the new row's primary key `pk`.
    pub(crate) fn insert(
        &mut self,
        sql: &str,
        params: &[SqlValue],
        pk: &str,
    ) -> Result<i64, DbError> {
        match self {
            Tx::Sqlite(tx) => {
                super::sqlite::execute(tx, sql, params)?;
                Ok(tx.last_insert_rowid())
            }
            Tx::Postgres(tx) => {
                let rows = super::pg::query(tx, &format!("{sql} RETURNING {pk}"), params)?;
                rows.first()
                    .and_then(|r| r.first())
                    .and_then(SqlValue::int)
                    .ok_or_else(|| DbError::Other(format!("INSERT returned no {pk}")))
            }
        }
    }
}

/// Optuna retries a failed trial creation five times; so does every write here.
const MAX_ATTEMPTS: u32 = 5;

impl Conn {
    /// Runs `body` in a transaction (a write transaction when `write`), committing on
    /// success and rolling back on error; serialization failures, deadlocks and a busy
    /// database run it again, up to [`MAX_ATTEMPTS`] times with a random backoff.
    pub(crate) fn transaction<R>(
        &mut self,
        write: bool,
        mut body: impl FnMut(&mut Tx<'_>) -> TxResult<R>,
    ) -> TxResult<R> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let result = self.once(write, &mut body);
            match result {
                Err(TxError::Db(DbError::Retry(reason))) => {
                    if attempt >= MAX_ATTEMPTS {
                        return Err(TxError::Db(DbError::Other(format!(
                            "{reason} (gave up after {MAX_ATTEMPTS} attempts)"
                        ))));
                    }
                    // Optuna sleeps up to 2 s without growth; a shorter, growing random
                    // backoff resolves the same conflicts sooner.
                    let cap_ms = 20u64 << attempt.min(6);
                    let ms = rand::random_range(0..=cap_ms);
                    log::debug!("rdb: retrying a transaction in {ms} ms: {reason}");
                    std::thread::sleep(Duration::from_millis(ms));
                }
                other => return other,
            }
        }
    }

    fn once<R>(
        &mut self,
        write: bool,
        body: &mut impl FnMut(&mut Tx<'_>) -> TxResult<R>,
    ) -> TxResult<R> {
        let mut tx = match self {
            Conn::Sqlite(conn) => {
                let behavior = if write {
                    rusqlite::TransactionBehavior::Immediate
                } else {
                    rusqlite::TransactionBehavior::Deferred
                };
                Tx::Sqlite(
                    conn.transaction_with_behavior(behavior)
                        .map_err(super::sqlite::classify)?,
                )
            }
            Conn::Postgres(client) => {
                Tx::Postgres(client.transaction().map_err(super::pg::classify)?)
            }
        };
        let value = body(&mut tx)?;
        match tx {
            Tx::Sqlite(tx) => tx.commit().map_err(super::sqlite::classify)?,
            Tx::Postgres(tx) => tx.commit().map_err(super::pg::classify)?,
        }
        Ok(value)
    }
}
