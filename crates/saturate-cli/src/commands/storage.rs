//! `storage upgrade`: reports the schema version (no migration is implemented yet).

use std::io::Write;

use super::print;
use crate::error::Result;
use crate::storage::{kind, StorageKind};

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
            crate::storage::open(url, false)?;
            Ok(())
        }
    }
}
