//! Optuna's RDB storage on SQLite and PostgreSQL: the tables Python Optuna 4.9 and 5.0
//! create (schema version 12, alembic revision `v3.2.0.a`), so Python workers,
//! optuna-dashboard and saturate share one study.
//!
//! - `schema`: the DDL, enum labels and the stored form of non-finite values (NULL plus a
//!   type column; NaN only for intermediate values).
//! - `backend`: SQL values, transactions and their retries (serialization failures,
//!   deadlocks, a busy SQLite file).
//! - `sqlite`: `rusqlite` with SQLite bundled (no system library needed).
//! - `pg`: the `postgres` crate. Chosen because it is synchronous (the [`Storage`](super::Storage)
//!   contract is blocking, and a blocking client needs no async runtime threaded through
//!   saturate's API), maintained by the rust-postgres project that also maintains the
//!   widely used `tokio-postgres`, speaks PostgreSQL's binary protocol with native enum
//!   support, and is much lighter to build than `sqlx` (no macros, no compile-time
//!   database). It connects without TLS: use it on a trusted network or a local socket.
//! - `url`: URL parsing (SQLAlchemy's forms) and password redaction.
//! - `storage`: [`RdbStorage`].

mod backend;
mod pg;
mod schema;
mod sqlite;
mod storage;
mod url;

pub use storage::RdbStorage;
