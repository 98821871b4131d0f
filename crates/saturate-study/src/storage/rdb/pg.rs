//! The PostgreSQL backend (the `postgres` crate: synchronous, maintained by the
//! rust-postgres project, no runtime for the caller to manage).

use std::error::Error;

use bytes::BytesMut;
use chrono::{DateTime, NaiveDateTime, Utc};
use postgres::error::SqlState;
use postgres::types::{FromSql, IsNull, ToSql, Type};
use postgres::Transaction;

use super::backend::{DbError, Row, SqlValue};

type BoxError = Box<dyn Error + Sync + Send>;

impl ToSql for SqlValue {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        match self {
            SqlValue::Null => Ok(IsNull::Yes),
            SqlValue::Int(v) => match *ty {
                Type::INT2 => i16::try_from(*v)?.to_sql(ty, out),
                Type::INT4 => i32::try_from(*v)?.to_sql(ty, out),
                Type::FLOAT8 => (*v as f64).to_sql(ty, out),
                _ => v.to_sql(ty, out),
            },
            SqlValue::Real(v) => match *ty {
                Type::FLOAT4 => (*v as f32).to_sql(ty, out),
                _ => v.to_sql(ty, out),
            },
            // Text, varchar and enum labels share their binary form: the UTF-8 bytes.
            SqlValue::Text(s) => {
                out.extend_from_slice(s.as_bytes());
                Ok(IsNull::No)
            }
            SqlValue::Time(t) => t.to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    fn to_sql_checked(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        self.to_sql(ty, out)
    }
}

impl<'a> FromSql<'a> for SqlValue {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        Ok(match *ty {
            Type::INT2 => SqlValue::Int(i16::from_sql(ty, raw)?.into()),
            Type::INT4 => SqlValue::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT8 => SqlValue::Int(i64::from_sql(ty, raw)?),
            Type::FLOAT4 => SqlValue::Real(f32::from_sql(ty, raw)?.into()),
            Type::FLOAT8 => SqlValue::Real(f64::from_sql(ty, raw)?),
            Type::TIMESTAMP => SqlValue::Time(NaiveDateTime::from_sql(ty, raw)?),
            Type::TIMESTAMPTZ => SqlValue::Time(DateTime::<Utc>::from_sql(ty, raw)?.naive_utc()),
            _ => SqlValue::Text(std::str::from_utf8(raw)?.to_owned()),
        })
    }

    fn from_sql_null(_: &Type) -> Result<Self, BoxError> {
        Ok(SqlValue::Null)
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// Connects. The error never carries the password: it is the client's message only.
pub(crate) fn connect(url: &str) -> Result<postgres::Client, DbError> {
    postgres::Client::connect(url, postgres::NoTls).map_err(classify)
}

pub(crate) fn classify(e: postgres::Error) -> DbError {
    let retry = [
        SqlState::T_R_SERIALIZATION_FAILURE,
        SqlState::T_R_DEADLOCK_DETECTED,
    ];
    let message = match e.as_db_error() {
        Some(db) => format!("{}: {}", db.code().code(), db.message()),
        // "error connecting to server" alone hides why: the causes follow (connection
        // refused, a host that does not resolve, a timeout); none of them carries the URL.
        None => {
            let mut message = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(cause) = source {
                message.push_str(": ");
                message.push_str(&cause.to_string());
                source = cause.source();
            }
            message
        }
    };
    match e.code() {
        Some(code) if retry.contains(code) => DbError::Retry(message),
        Some(code) if code.code().starts_with("23") => DbError::Constraint(message),
        _ => DbError::Other(message),
    }
}

/// `?` placeholders to PostgreSQL's `$1, $2, ...` (the SQL here has no `?` in literals).
fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    for c in sql.chars() {
        if c == '?' {
            n += 1;
            out.push('$');
            out.push_str(&n.to_string());
        } else {
            out.push(c);
        }
    }
    out
}

fn refs(params: &[SqlValue]) -> Vec<&(dyn ToSql + Sync)> {
    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect()
}

pub(crate) fn execute(
    tx: &mut Transaction<'_>,
    sql: &str,
    params: &[SqlValue],
) -> Result<u64, DbError> {
    tx.execute(numbered(sql).as_str(), &refs(params))
        .map_err(classify)
}

pub(crate) fn query(
    tx: &mut Transaction<'_>,
    sql: &str,
    params: &[SqlValue],
) -> Result<Vec<Row>, DbError> {
    let rows = tx
        .query(numbered(sql).as_str(), &refs(params))
        .map_err(classify)?;
    rows.iter()
        .map(|row| {
            (0..row.len())
                .map(|i| row.try_get::<_, SqlValue>(i).map_err(classify))
                .collect()
        })
        .collect()
}
