//! The standard normal distribution.

use std::f64::consts::SQRT_2;

/// Φ(a), the standard normal CDF.
pub(crate) fn ndtr(a: f64) -> f64 {
    0.5 * libm::erfc(-a / SQRT_2)
}
