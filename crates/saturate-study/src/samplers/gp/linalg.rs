//! Dense Cholesky factorisation and triangular solves on row-major square matrices.

/// The lower Cholesky factor of a symmetric positive definite `n × n` matrix; `None` when
/// a pivot is not positive (the matrix is not numerically positive definite).
pub(crate) fn cholesky(a: &[f64], n: usize) -> Option<Vec<f64>> {
    let mut l = vec![0.0; n * n];
    for j in 0..n {
        let mut d = a[j * n + j];
        for k in 0..j {
            d -= l[j * n + k] * l[j * n + k];
        }
        if d.is_nan() || d <= 0.0 || !d.is_finite() {
            return None;
        }
        let d = d.sqrt();
        l[j * n + j] = d;
        for i in j + 1..n {
            let mut s = a[i * n + j];
            for k in 0..j {
                s -= l[i * n + k] * l[j * n + k];
            }
            l[i * n + j] = s / d;
        }
    }
    Some(l)
}

/// Solves `L v = b` for lower-triangular `L`.
pub(crate) fn solve_lower(l: &[f64], n: usize, b: &[f64]) -> Vec<f64> {
    let mut v = b.to_vec();
    for i in 0..n {
        let row = &l[i * n..i * n + i];
        let s: f64 = row.iter().zip(&v[..i]).map(|(a, b)| a * b).sum();
        v[i] = (v[i] - s) / l[i * n + i];
    }
    v
}

/// Solves `Lᵀ v = b` for lower-triangular `L`.
pub(crate) fn solve_upper_transposed(l: &[f64], n: usize, b: &[f64]) -> Vec<f64> {
    let mut v = b.to_vec();
    for i in (0..n).rev() {
        let mut s = v[i];
        for k in i + 1..n {
            s -= l[k * n + i] * v[k];
        }
        v[i] = s / l[i * n + i];
    }
    v
}

/// Solves `L Lᵀ v = b`.
pub(crate) fn cholesky_solve(l: &[f64], n: usize, b: &[f64]) -> Vec<f64> {
    solve_upper_transposed(l, n, &solve_lower(l, n, b))
}

/// `(L Lᵀ)⁻¹`, row-major.
pub(crate) fn cholesky_inverse(l: &[f64], n: usize) -> Vec<f64> {
    let mut inv = vec![0.0; n * n];
    let mut e = vec![0.0; n];
    for j in 0..n {
        e.iter_mut().for_each(|v| *v = 0.0);
        e[j] = 1.0;
        let col = cholesky_solve(l, n, &e);
        for i in 0..n {
            inv[i * n + j] = col[i];
        }
    }
    inv
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cholesky_solves_a_small_system() {
        let a = [4.0, 2.0, 0.4, 2.0, 5.0, 1.0, 0.4, 1.0, 3.0];
        let l = cholesky(&a, 3).unwrap();
        let x = cholesky_solve(&l, 3, &[1.0, 2.0, 3.0]);
        for i in 0..3 {
            let ax: f64 = (0..3).map(|j| a[i * 3 + j] * x[j]).sum();
            assert!((ax - [1.0, 2.0, 3.0][i]).abs() < 1e-12);
        }
        assert!(cholesky(&[1.0, 2.0, 2.0, 1.0], 2).is_none());
    }
}
