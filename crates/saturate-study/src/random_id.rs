//! Random identifiers (journal worker ids, lock rename suffixes, default study names).

use rand::Rng;

/// `n` random lowercase hex digits.
pub(crate) fn random_hex(n: usize) -> String {
    let mut rng = rand::rng();
    (0..n)
        .map(|_| char::from_digit(rng.random_range(0..16), 16).expect("digit < 16"))
        .collect()
}
