//! Dense Cholesky factorisation and triangular solves on row-major square matrices.

/// `a · b` with four running sums, which the compiler turns into vector instructions (a
/// single running sum must be kept in order, one element at a time).
#[inline]
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0; 4];
    let (chunks_a, rest_a) = a.split_at(n - n % 4);
    let (chunks_b, rest_b) = b.split_at(n - n % 4);
    for (x, y) in chunks_a.chunks_exact(4).zip(chunks_b.chunks_exact(4)) {
        for k in 0..4 {
            acc[k] += x[k] * y[k];
        }
    }
    let tail: f64 = rest_a.iter().zip(rest_b).map(|(x, y)| x * y).sum();
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// The lower Cholesky factor of a symmetric positive definite `n × n` matrix; `None` when
/// a pivot is not positive (the matrix is not numerically positive definite).
pub(crate) fn cholesky(a: &[f64], n: usize) -> Option<Vec<f64>> {
    let mut l = vec![0.0; n * n];
    for j in 0..n {
        let row_j = &l[j * n..j * n + j];
        let d = a[j * n + j] - dot(row_j, row_j);
        if d.is_nan() || d <= 0.0 || !d.is_finite() {
            return None;
        }
        let d = d.sqrt();
        l[j * n + j] = d;
        for i in j + 1..n {
            let s = a[i * n + j] - dot(&l[i * n..i * n + j], &l[j * n..j * n + j]);
            l[i * n + j] = s / d;
        }
    }
    Some(l)
}

/// Solves `L v = b` for lower-triangular `L` by substitution.
#[cfg(test)]
pub(crate) fn solve_lower(l: &[f64], n: usize, b: &[f64]) -> Vec<f64> {
    let mut v = b.to_vec();
    for i in 0..n {
        let s = dot(&l[i * n..i * n + i], &v[..i]);
        v[i] = (v[i] - s) / l[i * n + i];
    }
    v
}

/// A Cholesky factor `L` with its inverse, for solves with `L Lᵀ`. Products with `L⁻¹`
/// are independent dot products, which run several times faster than the chain of
/// dependent steps of a triangular solve, at the same number of operations.
#[derive(Debug, Clone)]
pub(crate) struct Cholesky {
    pub n: usize,
    /// `L`, row-major.
    pub lower: Vec<f64>,
    /// `L⁻¹` (lower-triangular), row-major.
    lower_inverse: Vec<f64>,
}

impl Cholesky {
    pub(crate) fn new(a: &[f64], n: usize) -> Option<Self> {
        let lower = cholesky(a, n)?;
        // Row i of L⁻¹ is (e_i − Σ_{k<i} L[i][k] · row k of L⁻¹) / L[i][i].
        let mut inv = vec![0.0; n * n];
        for i in 0..n {
            let (done, rest) = inv.split_at_mut(i * n);
            let row = &mut rest[..n];
            for k in 0..i {
                let factor = lower[i * n + k];
                if factor != 0.0 {
                    let source = &done[k * n..k * n + k + 1];
                    for (r, s) in row[..=k].iter_mut().zip(source) {
                        *r -= factor * s;
                    }
                }
            }
            row[i] = 1.0;
            let d = lower[i * n + i];
            for v in row[..=i].iter_mut() {
                *v /= d;
            }
        }
        Some(Self {
            n,
            lower,
            lower_inverse: inv,
        })
    }

    /// `L⁻¹ b`.
    pub(crate) fn solve_lower(&self, b: &[f64]) -> Vec<f64> {
        let n = self.n;
        (0..n)
            .map(|i| dot(&self.lower_inverse[i * n..i * n + i + 1], &b[..=i]))
            .collect()
    }

    /// `(L Lᵀ)⁻¹ b = L⁻ᵀ (L⁻¹ b)`.
    pub(crate) fn solve(&self, b: &[f64]) -> Vec<f64> {
        let n = self.n;
        let v = self.solve_lower(b);
        let mut out = vec![0.0; n];
        for (i, vi) in v.iter().enumerate() {
            let row = &self.lower_inverse[i * n..i * n + i + 1];
            for (o, r) in out[..=i].iter_mut().zip(row) {
                *o += vi * r;
            }
        }
        out
    }

    /// `(L Lᵀ)⁻¹ = L⁻ᵀ L⁻¹`, row-major (symmetric).
    pub(crate) fn inverse(&self) -> Vec<f64> {
        let n = self.n;
        let mut inv = vec![0.0; n * n];
        for k in 0..n {
            let row = &self.lower_inverse[k * n..k * n + k + 1];
            for i in 0..=k {
                let factor = row[i];
                for (o, r) in inv[i * n..i * n + k + 1].iter_mut().zip(row) {
                    *o += factor * r;
                }
            }
        }
        inv
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cholesky_solves_a_small_system() {
        let a = [4.0, 2.0, 0.4, 2.0, 5.0, 1.0, 0.4, 1.0, 3.0];
        let c = Cholesky::new(&a, 3).unwrap();
        let x = c.solve(&[1.0, 2.0, 3.0]);
        let inv = c.inverse();
        let by_substitution = solve_lower(&c.lower, 3, &[1.0, 2.0, 3.0]);
        for (a, b) in c.solve_lower(&[1.0, 2.0, 3.0]).iter().zip(by_substitution) {
            assert!((a - b).abs() < 1e-14);
        }
        for i in 0..3 {
            let ax: f64 = (0..3).map(|j| a[i * 3 + j] * x[j]).sum();
            assert!((ax - [1.0, 2.0, 3.0][i]).abs() < 1e-12);
            for j in 0..3 {
                let aa: f64 = (0..3).map(|k| a[i * 3 + k] * inv[k * 3 + j]).sum();
                assert!((aa - f64::from(u8::from(i == j))).abs() < 1e-12);
            }
        }
        assert!(cholesky(&[1.0, 2.0, 2.0, 1.0], 2).is_none());
    }

    #[test]
    fn dot_matches_the_plain_sum() {
        let a: Vec<f64> = (0..11).map(|i| i as f64 * 0.5).collect();
        let b: Vec<f64> = (0..11).map(|i| 1.0 - i as f64).collect();
        let plain: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - plain).abs() < 1e-12);
    }
}
