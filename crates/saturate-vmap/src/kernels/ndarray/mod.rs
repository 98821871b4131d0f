//! Host kernels on NdArray's buffers, reached by downcasting the inner primitive (no
//! `unsafe`), one file per op family.
//!
//! - `sgemm.rs`: the one safe entry to the `gemm` crate's `f32` kernels (the crate's only
//!   `unsafe` call, its operands checked against their slices first), for the host
//!   convolution's products.
//! - `conv.rs`: the host convolution of
//!   [`ConvLowering::HostGemm`](crate::ConvLowering::HostGemm) (im2col + GEMM per (member,
//!   image) pair). It runs on any backend's host copy of its operands; on NdArray it reads and
//!   writes the arrays themselves.
//! - `random.rs`: counter-based `f32` draws (dropout's masks, initialisations): other values
//!   than NdArray's own draw, so [`lowering::plan`](crate::lowering::plan) decides who gets them.
//! - `adam.rs`: Adam's step in one pass per parameter tensor (called by saturate-optim
//!   through [`fused`](crate::fused)), the op-by-op form's values bit for bit.
//! - `matmul.rs`: the member-batched matrix product read through its operands' strides, the
//!   members' products spread over rayon's threads (the same values as NdArray's `matmul`, bit
//!   for bit).
//! - `reshape.rs`, `relu.rs`, `pool.rs`, `member_scalar.rs`, `sum_rows.rs`: the copy-free
//!   reshape, one-pass `relu` and `relu_backward`, the 2-d max pool with its backward,
//!   arithmetic with one value per member, and the sum over each member's rows (the bias
//!   gradient of `Linear`). They give the same values as the backend's own op, bit for bit, and
//!   hand back any tensor that is not an NdArray array in the layout they need, so the
//!   batching rules try them directly.
//! - `spare.rs`: large buffers that kernels consumed, kept for the next output of the same
//!   length that a kernel writes in full (instead of filling a new buffer first).
//!
//! Without the crate's `ndarray` feature only the host convolution is compiled (reading through
//! `float_into_data`); the other kernels hand every tensor back.

mod adam;
#[cfg(feature = "ndarray")]
mod base;
pub(crate) mod conv;
mod matmul;
mod member_scalar;
mod pool;
mod random;
mod relu;
mod reshape;
mod sgemm;
pub(crate) mod spare;
mod sum_rows;

pub(crate) use adam::adam_step;
pub(crate) use matmul::matmul;
pub(crate) use member_scalar::{member_scalar_binary, Arith};
pub(crate) use pool::{max_pool2d, max_pool2d_backward, max_pool2d_with_indices, Pool2d};
pub(crate) use random::random_float;
pub(crate) use relu::{relu, relu_backward};
pub(crate) use reshape::reshape;
pub(crate) use sum_rows::sum_rows;

/// After a parallel loop over `elements` values: keeps the pool's other workers looking for
/// work ([`keep_warm`](crate::host_pool::keep_warm)) when the loop was large enough to have
/// been split over them. A loop that ran on the calling thread alone leaves them as they are,
/// so that a small model's step, which runs no parallel loop, does not keep them spinning.
fn warm_after(elements: usize) {
    if elements >= 2 * WARM_ELEMENTS {
        crate::host_pool::keep_warm();
    }
}

/// Elements per task of the elementwise loops (see `base::ELEMENTWISE_CHUNK`): a loop over
/// fewer than two tasks' worth runs on the calling thread.
const WARM_ELEMENTS: usize = 1 << 15;

/// Elements from which [`filled`] writes in parallel.
const PARALLEL_FILL: usize = 1 << 18;

/// A new buffer of `len` copies of `value`, written by rayon's threads when it is large. The
/// kernels' outputs start as zeros (or minus infinity) of tens of megabytes; `vec![0.0; len]`
/// zeroes them on the calling thread alone (`calloc` from a heap that keeps its freed memory,
/// as `saturate::malloc::tune` sets it: 9% of the benchmark CNN's step at K = 8).
pub(crate) fn filled<T: Copy + Send + Sync>(len: usize, value: T) -> Vec<T> {
    use rayon::prelude::*;
    if len < PARALLEL_FILL {
        return vec![value; len];
    }
    let mut v = Vec::with_capacity(len);
    v.par_extend(rayon::iter::repeat_n(value, len));
    crate::host_pool::keep_warm();
    v
}
