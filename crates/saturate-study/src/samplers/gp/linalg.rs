//! Dense Cholesky factorisation and triangular solves on row-major square matrices.

/// Runs `f` compiled for AVX2 and FMA when this x86-64 CPU has them (pulp's `x86-v3`
/// level; AVX-512 is not enabled), chosen at run time; everything `f` inlines is compiled
/// that way. The results
/// are the same bit for bit on every instruction set: the operations and their order are
/// fixed by the code, and Rust never fuses a multiply and an add into one instruction, so
/// only the width of the vector registers changes.
#[inline(always)]
pub(crate) fn vectorized<R>(f: impl FnOnce() -> R) -> R {
    pulp::Arch::new().dispatch(f)
}

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

/// [`dot`] of `a` with each of `R` vectors stored as the lanes of `b` (`b[j][c]` is
/// element `j` of vector `c`, at least `a.len()` long): the same operations in the same
/// order as `R` calls of [`dot`], with the vectors side by side in vector registers.
#[inline(always)]
pub(crate) fn dot_lanes<const R: usize>(a: &[f64], b: &[[f64; R]]) -> [f64; R] {
    let m = a.len();
    let b = &b[..m];
    let (chunks_a, rest_a) = a.as_chunks::<4>();
    let (chunks_b, rest_b) = b.as_chunks::<4>();
    let mut acc = [[0.0f64; R]; 4];
    for (x, y) in chunks_a.iter().zip(chunks_b) {
        for k in 0..4 {
            for c in 0..R {
                acc[k][c] += x[k] * y[k][c];
            }
        }
    }
    let mut tail = [0.0f64; R];
    for (x, y) in rest_a.iter().zip(rest_b) {
        for c in 0..R {
            tail[c] += x * y[c];
        }
    }
    let mut out = [0.0; R];
    for c in 0..R {
        out[c] = (acc[0][c] + acc[1][c]) + (acc[2][c] + acc[3][c]) + tail[c];
    }
    out
}

/// `dot(b_c, b_c)` for each of the `R` vectors stored as the lanes of `b`, as
/// [`dot_lanes`].
#[inline(always)]
pub(crate) fn squared_norm_lanes<const R: usize>(b: &[[f64; R]]) -> [f64; R] {
    let (chunks_b, rest_b) = b.as_chunks::<4>();
    let mut acc = [[0.0f64; R]; 4];
    for y in chunks_b {
        for k in 0..4 {
            for c in 0..R {
                acc[k][c] += y[k][c] * y[k][c];
            }
        }
    }
    let mut tail = [0.0f64; R];
    for y in rest_b {
        for c in 0..R {
            tail[c] += y[c] * y[c];
        }
    }
    let mut out = [0.0; R];
    for c in 0..R {
        out[c] = (acc[0][c] + acc[1][c]) + (acc[2][c] + acc[3][c]) + tail[c];
    }
    out
}

/// The lower Cholesky factor of a symmetric positive definite `n × n` matrix; `None` when
/// a pivot is not positive (the matrix is not numerically positive definite).
#[cfg(test)]
pub(crate) fn cholesky(a: &[f64], n: usize) -> Option<Vec<f64>> {
    let mut l = Vec::new();
    cholesky_into(a, n, &mut l, &mut Vec::new()).then_some(l)
}

/// [`dot`] of `a` with `R` vectors side by side in `b`: element `k` of vector `c` is
/// `b[k * stride + c]` (the same operations in the same order as `R` calls of [`dot`]).
#[inline(always)]
fn dot_lanes_strided<const R: usize>(a: &[f64], b: &[f64], stride: usize) -> [f64; R] {
    let lane = |k: usize| -> &[f64; R] {
        b[k * stride..k * stride + R]
            .try_into()
            .expect("R elements")
    };
    let (chunks_a, rest_a) = a.as_chunks::<4>();
    let mut acc = [[0.0f64; R]; 4];
    for (j, x) in chunks_a.iter().enumerate() {
        for k in 0..4 {
            let y = lane(4 * j + k);
            for c in 0..R {
                acc[k][c] += x[k] * y[c];
            }
        }
    }
    let full = a.len() - rest_a.len();
    let mut tail = [0.0f64; R];
    for (k, x) in rest_a.iter().enumerate() {
        let y = lane(full + k);
        for c in 0..R {
            tail[c] += x * y[c];
        }
    }
    let mut out = [0.0; R];
    for c in 0..R {
        out[c] = (acc[0][c] + acc[1][c]) + (acc[2][c] + acc[3][c]) + tail[c];
    }
    out
}

/// [`cholesky`] into `l` (resized); `false` when a pivot is not positive. Each element
/// below the diagonal is `(a_ij − dot(L[i][..j], L[j][..j])) / L[j][j]` with the same
/// operations as [`dot`], eight or four rows at a time side by side in vector registers:
/// `transposed` holds `Lᵀ` (row `k` is column `k` of `L`, contiguous over the rows).
#[inline(always)]
pub(crate) fn cholesky_into(
    a: &[f64],
    n: usize,
    l: &mut Vec<f64>,
    transposed: &mut Vec<f64>,
) -> bool {
    // Only the lower triangle of `l` (and the upper one of `transposed`) is written, each
    // element once; the rest stays 0.
    if l.len() != n * n {
        l.clear();
        l.resize(n * n, 0.0);
    }
    if transposed.len() != n * n {
        transposed.clear();
        transposed.resize(n * n, 0.0);
    }
    for j in 0..n {
        let pivot = &l[j * n..j * n + j];
        let d = a[j * n + j] - dot(pivot, pivot);
        if d.is_nan() || d <= 0.0 || !d.is_finite() {
            return false;
        }
        let d = d.sqrt();
        l[j * n + j] = d;
        transposed[j * n + j] = d;
        let mut i = j + 1;
        while i + 8 <= n {
            column_rows::<8>(a, n, j, i, d, l, transposed);
            i += 8;
        }
        while i + 4 <= n {
            column_rows::<4>(a, n, j, i, d, l, transposed);
            i += 4;
        }
        while i < n {
            column_rows::<1>(a, n, j, i, d, l, transposed);
            i += 1;
        }
    }
    true
}

/// Rows `i..i + R` of column `j` of the Cholesky factor (pivot `d`), side by side in
/// vector registers: `(a_ij − dot(L[i][..j], L[j][..j])) / d`, into `l` and `transposed`.
#[inline(always)]
fn column_rows<const R: usize>(
    a: &[f64],
    n: usize,
    j: usize,
    i: usize,
    d: f64,
    l: &mut [f64],
    transposed: &mut [f64],
) {
    let sums = dot_lanes_strided::<R>(&l[j * n..j * n + j], &transposed[i..], n);
    for (c, s) in sums.into_iter().enumerate() {
        let v = (a[(i + c) * n + j] - s) / d;
        l[(i + c) * n + j] = v;
        transposed[j * n + i + c] = v;
    }
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
    /// `Lᵀ`, a buffer of the factorisation ([`cholesky_into`]).
    transposed: Vec<f64>,
}

impl Cholesky {
    /// A 0 × 0 factor, to [`Self::factor`] into.
    pub(crate) fn empty() -> Self {
        Self {
            n: 0,
            lower: Vec::new(),
            lower_inverse: Vec::new(),
            transposed: Vec::new(),
        }
    }

    pub(crate) fn new(a: &[f64], n: usize) -> Option<Self> {
        let mut chol = Self::empty();
        chol.factor(a, n).then_some(chol)
    }

    /// Factorises `a` in place of the current factor, reusing the buffers; `false` (and
    /// the factor unusable) when `a` is not numerically positive definite.
    pub(crate) fn factor(&mut self, a: &[f64], n: usize) -> bool {
        self.n = n;
        vectorized(
            #[inline(always)]
            || {
                if !cholesky_into(a, n, &mut self.lower, &mut self.transposed) {
                    return false;
                }
                self.invert_lower();
                true
            },
        )
    }

    /// `L⁻¹` from `L`. Row i of `L⁻¹` is `(e_i − Σ_{k<i} L[i][k] · row k of L⁻¹) / L[i][i]`:
    /// element m starts at 0 and loses `L[i][k] · L⁻¹[k][m]` for k = m, m+1, …, i−1 in
    /// turn (k with `L[i][k] = 0` skipped), then is divided by `L[i][i]`. Blocks of
    /// sixteen elements keep their running values in registers.
    #[inline(always)]
    fn invert_lower(&mut self) {
        const W: usize = 16;
        let n = self.n;
        let lower = &self.lower;
        let inv = &mut self.lower_inverse;
        // Only the lower triangle is written; the upper one stays 0.
        if inv.len() != n * n {
            inv.clear();
            inv.resize(n * n, 0.0);
        }
        for i in 0..n {
            let (done, rest) = inv.split_at_mut(i * n);
            let row = &mut rest[..n];
            let factors = &lower[i * n..i * n + i];
            let d = lower[i * n + i];
            let mut m0 = 0;
            while m0 < i {
                let width = W.min(i - m0);
                let mut r = [0.0f64; W];
                if width == W {
                    // For k < m, L⁻¹[k][m] = 0 (the upper triangle), and r − f·0 = r: r
                    // starts at +0 and never becomes −0, and f is finite (|L[i][k]| is at
                    // most √C[i][i]). So the block updates all its elements from k = m0.
                    let rows = done[m0 * n..].chunks_exact(n);
                    for (row_k, &f) in rows.zip(&factors[m0..i]) {
                        if f != 0.0 {
                            let (source, _) = row_k[m0..].as_chunks::<W>();
                            for c in 0..W {
                                r[c] -= f * source[0][c];
                            }
                        }
                    }
                } else {
                    // The last, partial block: at k < m only the elements m ≤ k.
                    let ragged_end = m0 + width - 1;
                    for k in m0..ragged_end {
                        let f = factors[k];
                        if f != 0.0 {
                            let source = &done[k * n + m0..=k * n + k];
                            for (r, s) in r.iter_mut().zip(source) {
                                *r -= f * s;
                            }
                        }
                    }
                    for k in ragged_end..i {
                        let f = factors[k];
                        if f != 0.0 {
                            let source = &done[k * n + m0..k * n + m0 + width];
                            for (r, s) in r.iter_mut().zip(source) {
                                *r -= f * s;
                            }
                        }
                    }
                }
                for (o, r) in row[m0..m0 + width].iter_mut().zip(&r) {
                    *o = r / d;
                }
                m0 += width;
            }
            row[i] = 1.0 / d;
        }
    }

    /// `L⁻¹ b` for `R` right-hand sides stored as the lanes of `b` (each the same as
    /// [`Self::solve_lower`]), into `out` (resized to `n`), lanes likewise.
    #[inline(always)]
    pub(crate) fn solve_lower_lanes<const R: usize>(
        &self,
        b: &[[f64; R]],
        out: &mut Vec<[f64; R]>,
    ) {
        let n = self.n;
        out.clear();
        // A plain loop rather than `extend` over a `map`: the iterator's fold would be a
        // function of its own, compiled without the caller's vector instructions.
        for (i, row) in self.lower_inverse.chunks_exact(n).enumerate() {
            out.push(dot_lanes(&row[..=i], b));
        }
    }

    /// `L⁻¹ b`.
    #[inline(always)]
    pub(crate) fn solve_lower(&self, b: &[f64]) -> Vec<f64> {
        let n = self.n;
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            out.push(dot(&self.lower_inverse[i * n..i * n + i + 1], &b[..=i]));
        }
        out
    }

    /// `(L Lᵀ)⁻¹ b = L⁻ᵀ (L⁻¹ b)`.
    #[inline(always)]
    pub(crate) fn solve(&self, b: &[f64]) -> Vec<f64> {
        self.solve_upper(&self.solve_lower(b))
    }

    /// `L⁻ᵀ v` (with `v = L⁻¹ b`, [`Self::solve`] of `b`).
    #[inline(always)]
    pub(crate) fn solve_upper(&self, v: &[f64]) -> Vec<f64> {
        let n = self.n;
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
    #[cfg(test)]
    pub(crate) fn inverse(&self) -> Vec<f64> {
        let n = self.n;
        let mut inv = Vec::new();
        self.inverse_lower_into(&mut inv);
        for i in 0..n {
            for j in 0..i {
                inv[j * n + i] = inv[i * n + j];
            }
        }
        inv
    }

    /// The lower triangle (diagonal included) of [`Self::inverse`] into `inv` (resized),
    /// the strict upper triangle 0: each element is the same sum in the same order.
    #[inline(always)]
    pub(crate) fn inverse_lower_into(&self, inv: &mut Vec<f64>) {
        const W: usize = 16;
        let n = self.n;
        let linv = &self.lower_inverse;
        if inv.len() != n * n {
            inv.clear();
            inv.resize(n * n, 0.0);
        }
        // Element (i, j), j ≤ i: Σ_{k ≥ i} L⁻¹[k][i] · L⁻¹[k][j], from 0 in increasing k;
        // sixteen j at a time in registers (those past i computed and dropped).
        for i in 0..n {
            let mut j0 = 0;
            while j0 <= i {
                if j0 + W <= n {
                    let mut acc = [0.0f64; W];
                    for row_k in linv[i * n..].chunks_exact(n) {
                        let f = row_k[i];
                        let (source, _) = row_k[j0..].as_chunks::<W>();
                        for c in 0..W {
                            acc[c] += f * source[0][c];
                        }
                    }
                    let end = (j0 + W).min(i + 1);
                    inv[i * n + j0..i * n + end].copy_from_slice(&acc[..end - j0]);
                    j0 += W;
                } else {
                    for j in j0..=i {
                        let mut acc = 0.0;
                        for k in i..n {
                            acc += linv[k * n + i] * linv[k * n + j];
                        }
                        inv[i * n + j] = acc;
                    }
                    break;
                }
            }
        }
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
