//! The truncated normal distribution, computed in log space where it matters (as Optuna's
//! `_truncnorm.py`, itself from SciPy, does): mass, log-density and quantile function.

use std::f64::consts::PI;

use crate::normal::ndtr;

const LOG_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// log Φ(a), accurate in both tails.
pub(crate) fn log_ndtr(a: f64) -> f64 {
    if a > 6.0 {
        return -ndtr(-a);
    }
    if a > -20.0 {
        return ndtr(a).ln();
    }
    // Asymptotic series of the Mills ratio.
    let log_lhs = -0.5 * a * a - (-a).ln() - 0.5 * (2.0 * PI).ln();
    let (mut last, mut total, mut numerator, mut denominator): (f64, f64, f64, f64) =
        (0.0, 1.0, 1.0, 1.0);
    let mut sign = 1.0;
    let mut i = 0.0;
    while (last - total).abs() > f64::EPSILON {
        i += 1.0;
        last = total;
        sign = -sign;
        denominator /= a * a;
        numerator *= 2.0 * i - 1.0;
        total += sign * numerator * denominator;
    }
    log_lhs + total.ln()
}

fn log_diff(log_p: f64, log_q: f64) -> f64 {
    log_p + (-(log_q - log_p).exp()).ln_1p()
}

fn log_sum(a: f64, b: f64) -> f64 {
    let max = a.max(b);
    if max == f64::NEG_INFINITY {
        return max;
    }
    max + ((a - max).exp() + (b - max).exp()).ln()
}

/// log(Φ(b) − Φ(a)) for a < b.
pub(crate) fn log_gauss_mass(a: f64, b: f64) -> f64 {
    // Both tails below Φ(−8.3) ≈ 5e-17: the mass is 1 to double precision.
    if a < -8.3 && b > 8.3 {
        return 0.0;
    }
    if b <= 0.0 {
        log_diff(log_ndtr(b), log_ndtr(a))
    } else if a > 0.0 {
        log_gauss_mass(-b, -a)
    } else {
        (-ndtr(a) - ndtr(-b)).ln_1p()
    }
}

/// Φ⁻¹(p) by Acklam's rational approximation (relative error 1.2e-9), refined below.
fn ndtri_approx(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.383_577_518_672_69e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] = [
        -5.447609879822406e1,
        1.615858368580409e2,
        -1.556989798598866e2,
        6.680131188771972e1,
        -1.328068155288572e1,
    ];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [
        7.784695709041462e-3,
        3.224671290700398e-1,
        2.445134137142996,
        3.754408661907416,
    ];
    let p_low = 0.02425;
    if p < p_low {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if p <= 1.0 - p_low {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        -ndtri_approx(1.0 - p)
    }
}

/// x such that log Φ(x) = y (y <= 0).
pub(crate) fn ndtri_exp(y: f64) -> f64 {
    if y >= 0.0 {
        return f64::INFINITY;
    }
    let p = y.exp();
    let mut x = if p > 1e-300 {
        ndtri_approx(p.min(1.0 - 1e-16))
    } else {
        // Φ(x) ≈ φ(x)/|x| far in the left tail.
        -(-2.0 * y).sqrt()
    };
    // Newton steps on log Φ: d/dx log Φ(x) = φ(x)/Φ(x).
    for _ in 0..4 {
        let log_cdf = log_ndtr(x);
        let log_pdf = -0.5 * x * x - LOG_SQRT_2PI;
        let step = (log_cdf - y) / (log_pdf - log_cdf).exp();
        if !step.is_finite() {
            break;
        }
        x -= step;
        if step.abs() < 1e-14 * x.abs().max(1.0) {
            break;
        }
    }
    x
}

/// The quantile `q` of the standard normal truncated to [a, b].
pub(crate) fn ppf(q: f64, a: f64, b: f64) -> f64 {
    if a == b {
        return f64::NAN;
    }
    if q <= 0.0 {
        return a;
    }
    if q >= 1.0 {
        return b;
    }
    let log_mass = log_gauss_mass(a, b);
    if a < 0.0 {
        ndtri_exp(log_sum(log_ndtr(a), q.ln() + log_mass))
    } else {
        -ndtri_exp(log_sum(log_ndtr(-b), (-q).ln_1p() + log_mass))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mass_matches_scipy() {
        // Golden values from Optuna 4.9:
        // optuna.samplers._tpe._truncnorm._log_gauss_mass([-1, 0, 2, -30], [1, 1, 3, -29])
        let cases = [
            (-1.0, 1.0, -0.381_715_146_302_126_16),
            (0.0, 1.0, -1.074_862_326_862_071_4),
            (2.0, 3.0, -3.844_353_426_334_204_7),
            (-30.0, -29.0, -4.247_874_199_097_303e2),
        ];
        for (a, b, expected) in cases {
            let got = log_gauss_mass(a, b);
            assert!(
                (got - expected).abs() < 1e-12 * expected.abs().max(1.0),
                "{a} {b}: {got} vs {expected}"
            );
        }
    }

    #[test]
    fn ppf_inverts_the_cdf() {
        for (a, b) in [(-1.0, 1.0), (-10.0, -8.0), (3.0, 9.0), (-0.5, 40.0)] {
            for q in [1e-9, 0.1, 0.5, 0.9, 1.0 - 1e-9] {
                let x = ppf(q, a, b);
                assert!(a <= x && x <= b, "{x} not in [{a}, {b}]");
                let back = (log_gauss_mass(a, x) - log_gauss_mass(a, b)).exp();
                assert!((back - q).abs() < 1e-7, "q {q} -> {x} -> {back}");
            }
        }
    }
}
