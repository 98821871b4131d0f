use std::io::Read;
use std::path::Path;

use flate2::read::MultiGzDecoder;

use crate::DataError;

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Reads a file whole, decompressing it when it is gzip.
pub(crate) fn read(path: &Path) -> Result<Vec<u8>, DataError> {
    decode(path, read_raw(path)?)
}

/// Reads a file whole, as it is on disk.
pub(crate) fn read_raw(path: &Path) -> Result<Vec<u8>, DataError> {
    std::fs::read(path).map_err(|source| DataError::io(path, source))
}

/// Decompresses `bytes` when they are gzip: when the name ends in `.gz` (so that a
/// damaged header is reported as bad gzip, not as a bad IDX magic number) or when
/// they start with gzip's magic bytes (a compressed file without the suffix).
pub(crate) fn decode(path: &Path, bytes: Vec<u8>) -> Result<Vec<u8>, DataError> {
    let named_gz = path.extension().is_some_and(|extension| extension == "gz");
    if !named_gz && !bytes.starts_with(&GZIP_MAGIC) {
        return Ok(bytes);
    }
    let mut decoded = Vec::with_capacity(bytes.len() * 4);
    MultiGzDecoder::new(bytes.as_slice())
        .read_to_end(&mut decoded)
        .map_err(|source| DataError::BadGzip {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(decoded)
}
