//! **matmul** of `f32` NdArray arrays of rank 2 or 3 (the member-batched products of
//! `Linear` and its gradients). burn-ndarray's `matmul` first copies every operand that is not
//! in row-major layout (the transposed weights and inputs of the backward pass: a tenth of the
//! 784-128-10 MLP's step) and zeroes its output on the calling thread. Here the operands are
//! read in place through their strides, the output is filled by rayon's threads, the members'
//! products run in parallel (one task each), and products too small to be worth waking a
//! thread run on the calling thread.
//!
//! With fewer members than threads, each member's product is split into blocks of rows or
//! columns, one per thread. Every element of the output is still summed by the same `sgemm`
//! micro-kernel over the same blocks of the inner dimension, in the same order (the blocks
//! split the outer dimensions only, on tile boundaries), so a member's result does not
//! depend on K or on the split, and equals NdArray's `matmul`, bit for bit.

#[cfg(feature = "ndarray")]
use super::base::{f32_pair, to_tensor};

/// Multiply-adds of all the members' products below which they run on the calling thread
/// (a few microseconds of work: less than waking another thread).
#[cfg(feature = "ndarray")]
const PARALLEL_WORK: usize = 1 << 18;

/// Multiply-adds of one member's product from which it is split into blocks when there are
/// fewer members than threads (the 784-128-10 MLP's first layer at K = 1: 12.8 million).
#[cfg(feature = "ndarray")]
const SPLIT_WORK: usize = 1 << 22;

/// Rows or columns per block: a multiple of the widest `sgemm` micro-kernel's tile (16 with
/// AVX-512), so that blocks end on tile boundaries.
#[cfg(feature = "ndarray")]
const BLOCK_ALIGN: usize = 16;

/// `lhs @ rhs` for `f32` NdArray arrays `[m, k] @ [k, n]` or `[bl, m, k] @ [br, k, n]` with
/// `bl`, `br` equal or 1 (broadcast), non-negative strides. Other tensors back unchanged.
#[cfg(feature = "ndarray")]
pub(crate) fn matmul<P: 'static>(lhs: P, rhs: P) -> Result<P, (P, P)> {
    use burn_ndarray::NdArrayTensor;
    use ndarray::linalg::general_mat_mul;
    use ndarray::{ArrayView2, ArrayViewMut2, Axis, Ix3};
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
    // With k > 0 every product below overwrites its part (beta 0): a spare buffer will do.
    let mut out = if k > 0 {
        super::spare::take(batches * m * n, 0.0f32)
    } else {
        super::filled(batches * m * n, 0.0f32)
    };
    if m > 0 && n > 0 {
        let threads = rayon::current_num_threads();
        // Fewer members than threads: each member's product in blocks, so that every thread
        // has one. Blocks of rows repeat the packing of `rhs` (k × n), blocks of columns that
        // of `lhs` (m × k): the smaller one is repeated.
        let blocks = if batches < threads && m * k * n >= SPLIT_WORK {
            threads / batches
        } else {
            1
        };
        let by_rows = n <= m;
        let mut tasks = Vec::with_capacity(batches * blocks);
        for (b, member) in out.chunks_mut(m * n).enumerate() {
            let mut a = l3.index_axis(Axis(0), pick(bl, b));
            let mut w = r3.index_axis(Axis(0), pick(br, b));
            let mut c = ArrayViewMut2::from_shape((m, n), member).expect("one member's output");
            let (len, axis) = if by_rows { (m, Axis(0)) } else { (n, Axis(1)) };
            let step = len.div_ceil(blocks).div_ceil(BLOCK_ALIGN) * BLOCK_ALIGN;
            let mut rest = len;
            while rest > step {
                let (c0, c1) = c.split_at(axis, step);
                if by_rows {
                    let (a0, a1) = a.split_at(Axis(0), step);
                    tasks.push((a0, w, c0));
                    a = a1;
                } else {
                    let (w0, w1) = w.split_at(Axis(1), step);
                    tasks.push((a, w0, c0));
                    w = w1;
                }
                c = c1;
                rest -= step;
            }
            tasks.push((a, w, c));
        }
        let product = |(a, w, mut c): (ArrayView2<f32>, ArrayView2<f32>, ArrayViewMut2<f32>)| {
            general_mat_mul(1.0, &a, &w, 0.0, &mut c)
        };
        if batches * m * k * n < PARALLEL_WORK {
            // Small products (the 8-16-4 MLP): waking another thread costs more than the work.
            tasks.into_iter().for_each(product);
        } else {
            tasks.into_par_iter().with_max_len(1).for_each(product);
            crate::host_pool::keep_warm();
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
