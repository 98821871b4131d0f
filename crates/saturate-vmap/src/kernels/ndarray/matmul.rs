//! **matmul** of `f32` NdArray arrays of rank 2 or 3 (the member-batched products of
//! `Linear` and its gradients). burn-ndarray's `matmul` first copies every operand that is not
//! in row-major layout (the transposed weights and inputs of the backward pass: a tenth of the
//! 784-128-10 MLP's step) and zeroes its output on the calling thread. Here the operands are
//! read in place through their strides, the output is filled by rayon's threads, the members'
//! products run in parallel (one task each), and products too small to be worth waking a
//! thread run on the calling thread.
//!
//! Splitting one member's rows into blocks over the threads was measured and left out: at
//! K = 1 the 784-128-10 MLP's step took 0.78 ms with two blocks per product and 0.66 ms with
//! one (2-core Xeon, `matrixmultiply` single-threaded, the same run).
//!
//! Each product is one call of the same `sgemm` as NdArray's `matmul` on the same matrices,
//! so a member's result does not depend on K and equals NdArray's, bit for bit.

#[cfg(feature = "ndarray")]
use super::base::{f32_pair, to_tensor};

/// Multiply-adds of all the members' products below which they run on the calling thread
/// (a few microseconds of work: less than waking another thread).
#[cfg(feature = "ndarray")]
const PARALLEL_WORK: usize = 1 << 18;

/// `lhs @ rhs` for `f32` NdArray arrays `[m, k] @ [k, n]` or `[bl, m, k] @ [br, k, n]` with
/// `bl`, `br` equal or 1 (broadcast), non-negative strides. Other tensors back unchanged.
#[cfg(feature = "ndarray")]
pub(crate) fn matmul<P: 'static>(lhs: P, rhs: P) -> Result<P, (P, P)> {
    use burn_ndarray::NdArrayTensor;
    use ndarray::linalg::general_mat_mul;
    use ndarray::{ArrayViewMut2, Axis, Ix3};
    use rayon::prelude::*;

    let (la, ra) = match f32_pair(lhs, rhs, |_, _| true) {
        Ok((l, r)) => (l.array, r.array),
        Err(both) => return Err(both),
    };
    let back = |la, ra| -> (P, P) {
        (
            to_tensor(NdArrayTensor::from(la)),
            to_tensor(NdArrayTensor::from(ra)),
        )
    };
    let rank = la.ndim();
    let fits = rank == ra.ndim()
        && (rank == 2 || rank == 3)
        && la.strides().iter().chain(ra.strides()).all(|&s| s >= 0);
    if !fits {
        return Err(back(la, ra));
    }
    // Rank 2 as one batch of rank 3 (a view: no copy).
    let (l3, r3) = if rank == 2 {
        (
            la.view()
                .insert_axis(Axis(0))
                .into_dimensionality::<Ix3>()
                .expect("rank 3"),
            ra.view()
                .insert_axis(Axis(0))
                .into_dimensionality::<Ix3>()
                .expect("rank 3"),
        )
    } else {
        (
            la.view().into_dimensionality::<Ix3>().expect("rank 3"),
            ra.view().into_dimensionality::<Ix3>().expect("rank 3"),
        )
    };
    let (bl, m, k) = l3.dim();
    let (br, k2, n) = r3.dim();
    if k != k2 || (bl != br && bl != 1 && br != 1) {
        return Err(back(la, ra));
    }
    let batches = bl.max(br);
    let pick = |count: usize, b: usize| if count == 1 { 0 } else { b };
    let product = |b: usize, member: &mut [f32]| {
        let a = l3.index_axis(Axis(0), pick(bl, b));
        let w = r3.index_axis(Axis(0), pick(br, b));
        let mut c = ArrayViewMut2::from_shape((m, n), member).expect("one member's output");
        general_mat_mul(1.0, &a, &w, 0.0, &mut c);
    };
    let mut out = super::filled(batches * m * n, 0.0f32);
    if m > 0 && n > 0 {
        if batches * m * k * n < PARALLEL_WORK {
            // Small products (the 8-16-4 MLP): waking another thread costs more than the work.
            out.chunks_mut(m * n)
                .enumerate()
                .for_each(|(b, member)| product(b, member));
        } else {
            out.par_chunks_mut(m * n)
                .enumerate()
                .for_each(|(b, member)| product(b, member));
        }
    }
    let shape = if rank == 2 {
        vec![m, n]
    } else {
        vec![batches, m, n]
    };
    let array = ndarray::Array::from_shape_vec(ndarray::IxDyn(&shape), out)
        .expect("the output's shape")
        .into_shared();
    Ok(to_tensor(NdArrayTensor::from(array)))
}

/// Without NdArray compiled in, every backend takes its own `matmul`.
#[cfg(not(feature = "ndarray"))]
pub(crate) fn matmul<P: 'static>(lhs: P, rhs: P) -> Result<P, (P, P)> {
    Err((lhs, rhs))
}
