//! `storage upgrade`: reports the schema version (no migration is implemented yet).

use std::io::Write;

use super::print;
use crate::error::Result;
use crate::storage::{kind, StorageKind};

/// The schema saturate-study's `RdbStorage` accepts (its `storage/rdb/schema.rs`, Optuna
/// 4.9's `models.SCHEMA_VERSION` and newest alembic revision); it refuses any other.
const RDB_SCHEMA_VERSION: i64 = 12;
const RDB_ALEMBIC_REVISION: &str = "v3.2.0.a";

pub fn upgrade(url: &str, out: &mut dyn Write) -> Result<()> {
    match kind(url)? {
        StorageKind::Journal => {
            if !std::path::Path::new(url).is_file() {
                return Err(crate::error::CliError::MissingJournal { path: url.into() });
            }
            print(
                out,
                &format!(
                    "{url} is a journal file: Optuna's journal format has no schema version, \
                     there is nothing to upgrade."
                ),
            )
        }
        StorageKind::Rdb => {
            // Opening checks the schema: a version saturate does not know is refused with
            // the version found (exit code 3).
            crate::storage::open(url, false)?;
            print(
                out,
                &format!(
                    "{}: Optuna RDB schema version {RDB_SCHEMA_VERSION} (alembic {RDB_ALEMBIC_REVISION}), \
                     the one saturate reads and writes: up to date, nothing to upgrade.",
                    crate::storage::redact(url)
                ),
            )
        }
    }
}
