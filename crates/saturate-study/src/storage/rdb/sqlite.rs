//! The SQLite backend (`rusqlite`, SQLite bundled).

use std::path::Path;
use std::time::Duration;

use rusqlite::types::{ToSqlOutput, Value, ValueRef};
use rusqlite::{ErrorCode, Transaction};

use super::backend::{format_sqlite_datetime, DbError, Row, SqlValue};

impl rusqlite::ToSql for SqlValue {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            SqlValue::Null => ToSqlOutput::Owned(Value::Null),
            SqlValue::Int(v) => ToSqlOutput::Owned(Value::Integer(*v)),
            SqlValue::Real(v) => ToSqlOutput::Owned(Value::Real(*v)),
            SqlValue::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
            SqlValue::Time(t) => ToSqlOutput::Owned(Value::Text(format_sqlite_datetime(t))),
        })
    }
}

/// Opens the file (creating it when `create`), or an in-memory database for `None`. Waits up
/// to 60 s for another writer's lock, as SQLAlchemy's default timeout would not.
pub(crate) fn open(path: Option<&Path>, create: bool) -> Result<rusqlite::Connection, DbError> {
    use rusqlite::OpenFlags;
    let conn = match path {
        Some(path) if create => rusqlite::Connection::open(path),
        Some(path) => rusqlite::Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_URI
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        ),
        None => rusqlite::Connection::open_in_memory(),
    }
    .map_err(classify)?;
    conn.busy_timeout(Duration::from_secs(60))
        .map_err(classify)?;
    conn.execute_batch("PRAGMA foreign_keys = ON")
        .map_err(classify)?;
    Ok(conn)
}

pub(crate) fn classify(e: rusqlite::Error) -> DbError {
    match &e {
        rusqlite::Error::SqliteFailure(f, _)
            if matches!(f.code, ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) =>
        {
            DbError::Retry(e.to_string())
        }
        rusqlite::Error::SqliteFailure(f, _) if f.code == ErrorCode::ConstraintViolation => {
            DbError::Constraint(e.to_string())
        }
        _ => DbError::Other(e.to_string()),
    }
}

pub(crate) fn execute(
    tx: &mut Transaction<'_>,
    sql: &str,
    params: &[SqlValue],
) -> Result<u64, DbError> {
    let mut stmt = tx.prepare_cached(sql).map_err(classify)?;
    let n = stmt
        .execute(rusqlite::params_from_iter(params))
        .map_err(classify)?;
    Ok(n as u64)
}

pub(crate) fn query(
    tx: &mut Transaction<'_>,
    sql: &str,
    params: &[SqlValue],
) -> Result<Vec<Row>, DbError> {
    let mut stmt = tx.prepare_cached(sql).map_err(classify)?;
    let columns = stmt.column_count();
    let mut rows = stmt
        .query(rusqlite::params_from_iter(params))
        .map_err(classify)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(classify)? {
        let mut values = Vec::with_capacity(columns);
        for i in 0..columns {
            values.push(match row.get_ref(i).map_err(classify)? {
                ValueRef::Null => SqlValue::Null,
                ValueRef::Integer(v) => SqlValue::Int(v),
                ValueRef::Real(v) => SqlValue::Real(v),
                ValueRef::Text(t) | ValueRef::Blob(t) => {
                    SqlValue::Text(String::from_utf8_lossy(t).into_owned())
                }
            });
        }
        out.push(values);
    }
    Ok(out)
}
