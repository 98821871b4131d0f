//! **Sum over each member's rows** (`[K, M, N]` to `[K, N]`): the bias gradient of `Linear`.
//! burn-ndarray's `sum_dim(1)` takes ndarray's `sum_axis`, which adds one `[K, N]` view per row
//! through the dynamic-rank iterators: per row a view, a shape check and a strided zip. On the
//! 8-16-4 MLP's step at K = 1 that was a sixth of the step (`perf`). Here each member's rows
//! are added into its output row in one loop over slices.
//!
//! The order is `sum_axis`'s: the output starts at zero and row 0, 1, ..., M - 1 are added in
//! turn, so the values are the same bit for bit. With `N = 1`, `sum_axis` adds the column
//! with ndarray's unrolled `sum` instead; that case is handed back.

/// `x` `[K, M, N]` summed over `M`, as `[K, N]`, for an `f32` NdArray array in row-major
/// layout with `N > 1`; any other tensor back unchanged.
#[cfg(feature = "ndarray")]
pub(crate) fn sum_rows<P: 'static>(p: P) -> Result<P, P> {
    use burn_ndarray::NdArrayTensor;
    use rayon::prelude::*;

    use super::base::{f32_row_major, to_tensor, ELEMENTWISE_CHUNK};

    let x = f32_row_major(p, |shape| matches!(shape, &[_, _, n] if n > 1))?.array;
    let (k, m, n) = (x.shape()[0], x.shape()[1], x.shape()[2]);
    let values = x.as_slice().expect("row-major");
    let mut out = vec![0.0f32; k * n];
    let member = |(x, acc): (&[f32], &mut [f32])| {
        for row in x.chunks_exact(n) {
            for (a, v) in acc.iter_mut().zip(row) {
                *a += v;
            }
        }
    };
    if m * n > 0 {
        if k > 1 && k * m * n >= 2 * ELEMENTWISE_CHUNK {
            values
                .par_chunks(m * n)
                .zip(out.par_chunks_mut(n))
                .for_each(member);
            crate::host_pool::keep_warm();
        } else {
            values.chunks(m * n).zip(out.chunks_mut(n)).for_each(member);
        }
    }
    let array = ndarray::Array::from_shape_vec(ndarray::IxDyn(&[k, n]), out)
        .expect("[K, N]")
        .into_shared();
    Ok(to_tensor(NdArrayTensor::from(array)))
}

/// Without NdArray compiled in, every backend takes its own `sum_dim`.
#[cfg(not(feature = "ndarray"))]
pub(crate) fn sum_rows<P: 'static>(p: P) -> Result<P, P> {
    Err(p)
}
