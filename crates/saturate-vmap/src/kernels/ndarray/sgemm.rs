//! One safe entry to the `gemm` crate's `f32` kernels: strided operands checked against their
//! slices, then one single-threaded product. The host convolution (`conv.rs`) takes all its
//! products here.
//!
//! Its products are small and lopsided: the weight gradient multiplies a short, wide `dy`
//! `[O, P]` by one image's transposed columns `[P, rows]` (a long inner dimension, a small
//! output), where `matrixmultiply` packs both operands and runs its masked edge kernel on most
//! of the output. Measured on the benchmark CNN's shapes (one thread, AMD EPYC Zen 4 with
//! AVX-512, `matrixmultiply` 0.3.11 against `gemm` 0.19): weight gradients 12 x 784 x 9 in 8.9
//! against 1.7 us and 24 x 196 x 108 in 22.4 against 15.6 us, the second layer's forward
//! 24 x 108 x 196 in 18.3 against 13.2 us; the full example run 10.5 s against 8.6 s.
//!
//! This module is the crate's only `unsafe` code: `gemm::gemm` takes raw pointers and strides.
#![allow(unsafe_code)]

/// A read-only strided matrix: `data[i * rows_stride + j * cols_stride]` is element `(i, j)`.
#[derive(Clone, Copy)]
pub(crate) struct Strided<'a> {
    /// The values.
    pub(crate) data: &'a [f32],
    /// The distance between two rows.
    pub(crate) row_stride: usize,
    /// The distance between two columns.
    pub(crate) col_stride: usize,
}

/// The number of values that a `rows` x `cols` matrix with these strides reaches from its
/// first element. Panics when a stride does not fit an `isize`.
fn reach(rows: usize, cols: usize, row_stride: usize, col_stride: usize) -> usize {
    assert!(
        isize::try_from(row_stride).is_ok() && isize::try_from(col_stride).is_ok(),
        "saturate-vmap: a matrix stride past isize::MAX"
    );
    if rows == 0 || cols == 0 {
        return 0;
    }
    (rows - 1)
        .checked_mul(row_stride)
        .and_then(|r| {
            (cols - 1)
                .checked_mul(col_stride)
                .and_then(|c| r.checked_add(c))
        })
        .and_then(|last| last.checked_add(1))
        .expect("saturate-vmap: a matrix reaches past usize::MAX")
}

/// `c = a @ b` (`accumulate` false) or `c += a @ b` (true) for `a` `[m, k]`, `b` `[k, n]` and
/// `c` `[m, n]` with row stride `ldc` and unit column stride, on the calling thread.
///
/// Each element is the same sum in the same order for the same shapes and strides, whatever
/// the values around it or the thread that runs it.
///
/// # Panics
///
/// When an operand's last element lies outside its slice.
pub(crate) fn gemm(
    (m, k, n): (usize, usize, usize),
    a: Strided<'_>,
    b: Strided<'_>,
    c: &mut [f32],
    ldc: usize,
    accumulate: bool,
) {
    let a_len = reach(m, k, a.row_stride, a.col_stride);
    let b_len = reach(k, n, b.row_stride, b.col_stride);
    let c_len = reach(m, n, ldc, 1);
    assert!(
        a_len <= a.data.len() && b_len <= b.data.len() && c_len <= c.len(),
        "saturate-vmap: a matrix product's operand lies outside its buffer"
    );
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if !accumulate {
            for row in c.chunks_mut(ldc.max(1)).take(m) {
                row[..n].fill(0.0);
            }
        }
        return;
    }
    // SAFETY: every element `gemm` reads or writes, `(i, j) -> i * rs + j * cs` for `i`, `j`
    // inside the operand's shape, lies at most at `reach - 1` (all strides are non-negative),
    // and `reach` is within each slice (asserted above); the strides fit `isize` (asserted in
    // `reach`). `c` is a unique borrow, so it overlaps neither `a` nor `b`. With
    // `Parallelism::None` the product runs on this thread only, inside these borrows.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c.as_mut_ptr(),
            1,
            ldc as isize,
            accumulate,
            a.data.as_ptr(),
            a.col_stride as isize,
            a.row_stride as isize,
            b.data.as_ptr(),
            b.col_stride as isize,
            b.row_stride as isize,
            1.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The product of small strided operands against the plain triple loop, written and added.
    #[test]
    fn strided_products_match_the_triple_loop() {
        let (m, k, n) = (5, 7, 3);
        let a: Vec<f32> = (0..m * k).map(|i| ((i * 7) % 11) as f32 - 5.0).collect();
        // b given transposed: [n, k] row-major, read as [k, n] with strides (1, k).
        let bt: Vec<f32> = (0..k * n).map(|i| ((i * 5) % 13) as f32 - 6.0).collect();
        let ldc = n + 2;
        let mut c = vec![1.5f32; m * ldc];
        let a_view = Strided {
            data: &a,
            row_stride: k,
            col_stride: 1,
        };
        let b_view = Strided {
            data: &bt,
            row_stride: 1,
            col_stride: k,
        };
        gemm((m, k, n), a_view, b_view, &mut c, ldc, false);
        let expected = |i: usize, j: usize| -> f32 {
            (0..k).map(|p| a[i * k + p] * bt[j * k + p]).sum::<f32>()
        };
        for i in 0..m {
            for j in 0..n {
                assert_eq!(c[i * ldc + j], expected(i, j), "element ({i}, {j})");
            }
            // The padding after each row is left alone.
            assert_eq!(
                &c[i * ldc + n..(i + 1) * ldc],
                &[1.5, 1.5],
                "padding of row {i}"
            );
        }
        gemm((m, k, n), a_view, b_view, &mut c, ldc, true);
        for i in 0..m {
            for j in 0..n {
                assert_eq!(
                    c[i * ldc + j],
                    2.0 * expected(i, j),
                    "accumulated ({i}, {j})"
                );
            }
        }
    }

    /// An operand shorter than its shape and strides is refused before any read.
    #[test]
    #[should_panic(expected = "outside its buffer")]
    fn an_operand_past_its_buffer_is_refused() {
        let a = vec![0.0f32; 11];
        let b = vec![0.0f32; 12];
        let mut c = vec![0.0f32; 12];
        let view = |data| Strided {
            data,
            row_stride: 4,
            col_stride: 1,
        };
        gemm((3, 4, 4), view(&a), view(&b), &mut c, 4, false);
    }
}
