//! **matmul** of `f32` NdArray arrays of rank 2 or 3 (the member-batched products of
//! `Linear` and its gradients). burn-ndarray's `matmul` first copies every operand that is not
//! in row-major layout (the transposed weights and inputs of the backward pass: a tenth of the
//! 784-128-10 MLP's step), runs one task per batch (one per member: a single task at K = 1,
//! whose product matrixmultiply may split over threads of its own, outside rayon's pool), and
//! zeroes its output first. Here the operands are read in place through their strides, and
//! each member's rows are split into as many blocks as there are threads left over by the
//! members, every block one call of the same `sgemm` on rayon's pool.
//!
//! The blocks split the rows only, never the sum: every element is the same sum in the same
//! order as in one product of the whole matrices, so a member's result does not depend on K,
//! on the thread count, or on whether burn-ndarray's `matmul` computed it (bit for bit).

#[cfg(feature = "ndarray")]
use super::base::to_tensor;

/// The rows of one block: at least this many, so a block is worth a task.
#[cfg(feature = "ndarray")]
const MIN_BLOCK_ROWS: usize = 16;

/// Multiply-adds of all the members' products below which they run on the calling thread
/// (a few microseconds of work: less than waking another thread).
#[cfg(feature = "ndarray")]
const PARALLEL_WORK: usize = 1 << 18;

/// Multiply-adds of one member's product from which its rows are split into blocks.
#[cfg(feature = "ndarray")]
const SPLIT_WORK: usize = 1 << 21;

/// `lhs @ rhs` for `f32` NdArray arrays `[m, k] @ [k, n]` or `[bl, m, k] @ [br, k, n]` with
/// `bl`, `br` equal or 1 (broadcast), non-negative strides. Other tensors back unchanged.
#[cfg(feature = "ndarray")]
pub(crate) fn matmul<P: 'static>(lhs: P, rhs: P) -> Result<P, (P, P)> {
    use burn_ndarray::NdArrayTensor;
    use ndarray::linalg::general_mat_mul;
    use ndarray::{ArrayViewMut2, Axis, Ix3, Slice};
    use rayon::prelude::*;
    use std::any::Any;

    let (l, r): (Box<dyn Any>, Box<dyn Any>) = (Box::new(lhs), Box::new(rhs));
    let (l, r) = match (l.downcast::<NdArrayTensor>(), r.downcast::<NdArrayTensor>()) {
        (Ok(l), Ok(r)) => (*l, *r),
        (l, r) => {
            let undo = |t: Result<Box<NdArrayTensor>, Box<dyn Any>>| -> P {
                match t {
                    Ok(t) => to_tensor(*t),
                    Err(a) => *a.downcast::<P>().expect("the same type"),
                }
            };
            return Err((undo(l), undo(r)));
        }
    };
    let (la, ra) = match (l, r) {
        (NdArrayTensor::F32(l), NdArrayTensor::F32(r)) => (l.into_shared(), r.into_shared()),
        (l, r) => return Err((to_tensor(l), to_tensor(r))),
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
    let work = m * k * n;
    // Blocks per member: the threads the members leave idle, each block at least
    // MIN_BLOCK_ROWS rows, and only for products worth splitting.
    let threads = rayon::current_num_threads();
    let parts = if work >= SPLIT_WORK {
        threads.div_ceil(batches).min(m / MIN_BLOCK_ROWS).max(1)
    } else {
        1
    };
    let block = m.div_ceil(parts).max(1);
    let product = |b: usize, i: usize, rows: &mut [f32]| {
        let a = l3.index_axis(Axis(0), pick(bl, b));
        let w = r3.index_axis(Axis(0), pick(br, b));
        let r0 = i * block;
        let mr = rows.len() / n;
        let a = a.slice_axis(Axis(0), Slice::from(r0..r0 + mr));
        let mut c = ArrayViewMut2::from_shape((mr, n), rows).expect("a block of whole rows");
        general_mat_mul(1.0, &a, &w, 0.0, &mut c);
    };
    let mut out = super::filled(batches * m * n, 0.0f32);
    if m > 0 && n > 0 {
        if batches * work < PARALLEL_WORK {
            // Small products (the 8-16-4 MLP): waking another thread costs more than the work.
            out.chunks_mut(m * n)
                .enumerate()
                .for_each(|(b, member)| product(b, 0, member));
        } else {
            out.par_chunks_mut(m * n)
                .enumerate()
                .for_each(|(b, member)| {
                    member
                        .par_chunks_mut(block * n)
                        .enumerate()
                        .for_each(|(i, rows)| product(b, i, rows));
                });
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
