//! Optuna's JournalStorage on a file: append-only JSON lines that Python Optuna,
//! optuna-dashboard and other saturate processes read and write concurrently.

mod file;
mod record;
mod storage;

pub use file::JournalFileBackend;
pub use storage::JournalStorage;

/// `n` random lowercase hex digits (worker ids, lock rename suffixes).
pub(crate) fn random_hex(n: usize) -> String {
    use rand::Rng;
    let mut rng = rand::rng();
    (0..n)
        .map(|_| char::from_digit(rng.random_range(0..16), 16).expect("digit < 16"))
        .collect()
}
