//! Spare buffers: large buffers that the kernels consumed and would otherwise free, kept for
//! the next output of the same size.
//!
//! A kernel's output of tens of megabytes (a convolution's output, a max pool's values and
//! indices) was first filled with zeros or minus infinity, then overwritten in full: one pass
//! over memory that is too large for the caches, for nothing (about a tenth of the CNN step at
//! K = 8 on NdArray, measured with `perf`). A training step allocates the same sizes step after
//! step, and frees buffers of those sizes in its backward pass; a buffer handed in here with
//! [`give`] comes back from [`take`] with whatever values it held (initialised values: no
//! `unsafe`), for a kernel that writes every element. Outputs that need zeros take
//! [`filled`](super::filled), or zero each task's part where the task is about to write it
//! (in the cache).
//!
//! The shelf holds at most [`MAX_BUFFERS`] buffers of each element type and [`MAX_BYTES`] in
//! all; the oldest goes first. Buffers under [`MIN_LEN`] elements are left to the allocator.

use std::sync::Mutex;

/// Buffers kept per element type.
pub(crate) const MAX_BUFFERS: usize = 16;
/// Bytes kept per element type.
pub(crate) const MAX_BYTES: usize = 256 << 20;
/// Elements below which a buffer is not kept (small buffers cost little to fill).
pub(crate) const MIN_LEN: usize = super::PARALLEL_FILL;

/// An element type with a shelf of spare buffers.
pub(crate) trait Spare: Copy + Send + Sync + 'static {
    /// The shelf of this element type.
    fn shelf() -> &'static Mutex<Vec<Vec<Self>>>;
}

static F32_SHELF: Mutex<Vec<Vec<f32>>> = Mutex::new(Vec::new());
static I64_SHELF: Mutex<Vec<Vec<i64>>> = Mutex::new(Vec::new());

impl Spare for f32 {
    fn shelf() -> &'static Mutex<Vec<Vec<f32>>> {
        &F32_SHELF
    }
}

impl Spare for i64 {
    fn shelf() -> &'static Mutex<Vec<Vec<i64>>> {
        &I64_SHELF
    }
}

/// Keeps `buffer` for a later [`take`] (when it is large enough; the oldest buffers go when the
/// shelf is full).
pub(crate) fn give<T: Spare>(buffer: Vec<T>) {
    if buffer.len() < MIN_LEN {
        return;
    }
    // A poisoned shelf (a panic while it was held) only loses its buffers.
    let mut shelf = T::shelf().lock().unwrap_or_else(|e| e.into_inner());
    shelf.push(buffer);
    let size = std::mem::size_of::<T>();
    while shelf.len() > MAX_BUFFERS
        || shelf.iter().map(|b| b.len() * size).sum::<usize>() > MAX_BYTES
    {
        shelf.remove(0);
    }
}

/// A buffer of exactly `len` elements whose values are unspecified: a spare one of that length
/// when the shelf has one, else `len` copies of `value`. For outputs that the caller writes in
/// full.
pub(crate) fn take<T: Spare>(len: usize, value: T) -> Vec<T> {
    if len >= MIN_LEN {
        let mut shelf = T::shelf().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(at) = shelf.iter().rposition(|b| b.len() == len) {
            return shelf.remove(at);
        }
    }
    super::filled(len, value)
}

/// Gives the buffer of an array that the caller is done with, when the array holds it alone and
/// it is exactly the array's elements.
#[cfg(feature = "ndarray")]
pub(crate) fn give_array<T: Spare>(array: ndarray::ArcArray<T, ndarray::IxDyn>) {
    if array.len() < MIN_LEN || !array.is_standard_layout() {
        return;
    }
    let len = array.len();
    if let Ok(owned) = array.try_into_owned_nocopy() {
        let (buffer, offset) = owned.into_raw_vec_and_offset();
        if buffer.len() == len && offset.unwrap_or(0) == 0 {
            give(buffer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A length no other test's kernels produce, so that parallel tests do not take it.
    const LEN: usize = MIN_LEN + 12_345;

    #[test]
    fn a_given_buffer_comes_back_for_its_length_only() {
        give(vec![7.0f32; LEN]);
        // Another length: a new buffer of the value asked for.
        assert!(take(LEN + 1, 0.0f32).iter().all(|&v| v == 0.0));
        // Its length: the spare one, values as they were.
        assert!(take(LEN, 0.0f32).iter().all(|&v| v == 7.0));
        // Taken: the next one is new.
        assert!(take(LEN, 1.0f32).iter().all(|&v| v == 1.0));
    }

    #[test]
    fn small_buffers_are_not_kept() {
        give(vec![3i64; MIN_LEN - 1]);
        let shelf = i64::shelf().lock().unwrap();
        assert!(shelf.iter().all(|b| b.len() != MIN_LEN - 1));
    }

    #[test]
    fn the_shelf_stays_within_its_limits() {
        for _ in 0..3 * MAX_BUFFERS {
            give(vec![0i64; MIN_LEN + 99]);
        }
        let shelf = i64::shelf().lock().unwrap();
        assert!(shelf.len() <= MAX_BUFFERS);
        assert!(shelf.iter().map(|b| b.len() * 8).sum::<usize>() <= MAX_BYTES);
    }

    /// The kernels that take spare buffers write every element: run on a shelf stocked with
    /// NaN buffers of their output lengths, they give what they give on an empty one.
    #[cfg(feature = "ndarray")]
    #[test]
    fn kernels_overwrite_the_old_values_of_spare_buffers() {
        use crate::kernels::ndarray::conv::{conv, conv_weight_grad, conv_x_grad};
        use crate::kernels::Geometry;
        use burn_ndarray::NdArrayTensor;

        type B = burn_ndarray::NdArray<f32>;
        let tensor = |shape: &[usize], seed: usize| -> NdArrayTensor {
            let len: usize = shape.iter().product();
            let values = (0..len)
                .map(|i| ((i * 31 + seed * 7) % 17) as f32 * 0.25 - 2.0)
                .collect();
            NdArrayTensor::from(
                ndarray::Array::from_shape_vec(ndarray::IxDyn(shape), values)
                    .unwrap()
                    .into_shared(),
            )
        };
        let values = |t: NdArrayTensor| -> Vec<f32> {
            match t {
                NdArrayTensor::F32(s) => s.into_shared().iter().copied().collect(),
                _ => unreachable!("f32"),
            }
        };
        let geo = Geometry {
            stride: vec![1, 1],
            padding: vec![1, 1],
            dilation: vec![1, 1],
            groups: 1,
        };
        // One member, 29 images of 3 x 61 x 59, 7 output channels: lengths no other test uses,
        // each over MIN_LEN (the input gradient's, 29 * 3 * 61 * 59, too).
        let (x, w, dy) = ([1, 29, 3, 61, 59], [1, 7, 3, 3, 3], [1, 29, 7, 61, 59]);
        // The operands stay held here, so the kernels cannot give their buffers: the shelf
        // holds only the buffers below.
        let (x, w, dy) = (tensor(&x, 1), tensor(&w, 2), tensor(&dy, 3));
        let run = || {
            let y = conv::<B>(x.clone(), w.clone(), None, &geo, true);
            let dx = conv_x_grad::<B>(dy.clone(), w.clone(), &geo, &[61, 59], true);
            let dw = conv_weight_grad::<B>(x.clone(), dy.clone(), &geo, &[3, 3], true);
            (values(y), values(dx), values(dw))
        };
        let fresh = run();
        for len in [fresh.0.len(), fresh.1.len()] {
            assert!(len >= MIN_LEN);
            give(vec![f32::NAN; len]);
        }
        let reused = run();
        assert!(fresh.0.iter().all(|v| v.is_finite()));
        let same = |a: &[f32], b: &[f32]| {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
        };
        assert!(same(&fresh.0, &reused.0), "forward");
        assert!(same(&fresh.1, &reused.1), "input gradient");
        assert!(same(&fresh.2, &reused.2), "weight gradient");
    }
}
