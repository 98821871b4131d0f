//! NdArray-specific fast paths, reached by downcasting the inner primitive (no `unsafe`, and
//! the same values as the backend's own op, bit for bit).
//!
//! **reshape**:
//! burn-ndarray 0.21's `reshape` goes through ndarray's `to_shape(..).into_shared()`, which
//! copies the whole array even when it is contiguous and the reshape could be a view. Vmap
//! reshapes at every batching rule that folds the member axis into the batch (pooling,
//! interpolation, matmul, the convolution lowerings): on the benchmark CNN at K = 8 those
//! copies were about a sixth of a training step (`perf`). A contiguous array is reshaped here
//! in place of the copy; anything else takes the backend's own `reshape`.
//!
//! **max_pool2d_with_indices** and its backward: burn-ndarray pads the input into a copy and
//! indexes every element through a 4-d view; at K = 8 the two were a quarter of the CNN step.
//! Here each (image, channel) plane is read as a slice, with the same scan order, the same
//! strict `>` (the first maximum wins, NaN never does) and the same index convention.
//!
//! The backward reads the indices in place instead of copying them.
//!
//! **float_random** (Bernoulli and the default uniform `[0, 1)`, `f32`): burn-ndarray draws
//! element by element through `TensorData::random`, which builds a new sampler for every
//! element and runs ChaCha12 on one thread (5% of the CNN step at K = 8, for dropout's masks).
//! Here a counter-based generator (SplitMix64 of `seed + index`) fills the tensor in parallel;
//! the seed is two 32-bit draws from NdArray's own generator, so `Backend::seed` still makes
//! every draw reproducible, and the values depend neither on the thread count nor on how the
//! work is split. Member `m` of a `[K, ...]` draw takes the indices `m * n..(m + 1) * n`: a
//! group's first member draws what a group of one would.
//!
//! **relu** and **relu_backward**: burn-ndarray's `relu` (`clamp_min`) copies a shared array
//! before mapping it in place; burn's default `relu_backward` (`lower_equal_elem` then
//! `mask_fill`) makes a bool mask and walks both arrays twice (a tenth of the CNN step at
//! K = 8). Here one parallel pass each: `relu` in place when its array is not shared, and
//! otherwise both collect their output straight into a new buffer (no zero fill first:
//! 1.7x faster than zeroing and overwriting 51 MB on the AVX2 machine).

use burn_backend::Shape;

/// `p` reshaped to `shape` without a copy when `p` is an NdArray tensor in row-major layout;
/// otherwise `Err(p)` unchanged.
#[cfg(feature = "ndarray")]
pub(crate) fn reshape<P: 'static>(p: P, shape: &Shape) -> Result<P, P> {
    use burn_ndarray::NdArrayTensor;
    use std::any::Any;

    let any: Box<dyn Any> = Box::new(p);
    let tensor = match any.downcast::<NdArrayTensor>() {
        Ok(tensor) => *tensor,
        Err(any) => return Err(*any.downcast::<P>().expect("the same type")),
    };
    let back = |t: NdArrayTensor| -> P {
        *(Box::new(t) as Box<dyn Any>)
            .downcast::<P>()
            .expect("the same type")
    };
    let dims = ndarray::IxDyn(shape.as_slice());
    // The storage type is private to burn-ndarray; its methods are public.
    macro_rules! each {
        ($($variant:ident),*) => {
            match tensor {
                $(NdArrayTensor::$variant(storage) => {
                    if !storage.is_owned() {
                        return Err(back(NdArrayTensor::$variant(storage)));
                    }
                    let array = storage.into_shared(); // owned: the same array, no copy
                    if !array.is_standard_layout() || array.len() != shape.num_elements() {
                        return Err(back(NdArrayTensor::from(array)));
                    }
                    match array.into_shape_with_order(dims) {
                        Ok(array) => Ok(back(NdArrayTensor::from(array))),
                        Err(_) => unreachable!("a contiguous array takes any shape of its size (checked)"),
                    }
                })*
            }
        };
    }
    each!(F64, F32, I64, I32, I16, I8, U64, U32, U16, U8, Bool)
}

/// `grad` where `output > 0`, else 0 (burn's `relu_backward`: `mask_fill(grad, output <= 0,
/// 0)`), for two `f32` NdArray tensors of one shape in row-major layout; otherwise both back
/// unchanged.
#[cfg(feature = "ndarray")]
pub(crate) fn relu_backward<P: 'static>(output: P, grad: P) -> Result<P, (P, P)> {
    use burn_ndarray::NdArrayTensor;
    use rayon::prelude::*;
    use std::any::Any;

    let back = |t: NdArrayTensor| -> P {
        *(Box::new(t) as Box<dyn Any>)
            .downcast::<P>()
            .expect("the same type")
    };
    let (o, g): (Box<dyn Any>, Box<dyn Any>) = (Box::new(output), Box::new(grad));
    let (o, g) = match (o.downcast::<NdArrayTensor>(), g.downcast::<NdArrayTensor>()) {
        (Ok(o), Ok(g)) => (*o, *g),
        (o, g) => {
            let undo = |r: Result<Box<NdArrayTensor>, Box<dyn Any>>| -> P {
                match r {
                    Ok(t) => back(*t),
                    Err(a) => *a.downcast::<P>().expect("the same type"),
                }
            };
            return Err((undo(o), undo(g)));
        }
    };
    let (os, gs) = match (o, g) {
        (NdArrayTensor::F32(os), NdArrayTensor::F32(gs)) => (os, gs),
        (o, g) => return Err((back(o), back(g))),
    };
    let (oa, ga) = (os.into_shared(), gs.into_shared());
    let (Some(ov), Some(gv)) = (oa.as_slice(), ga.as_slice()) else {
        return Err((back(NdArrayTensor::from(oa)), back(NdArrayTensor::from(ga))));
    };
    if oa.shape() != ga.shape() {
        return Err((back(NdArrayTensor::from(oa)), back(NdArrayTensor::from(ga))));
    }
    let out: Vec<f32> = ov
        .par_iter()
        .zip(gv.par_iter())
        .with_min_len(ELEMENTWISE_CHUNK)
        .map(|(&o, &g)| if o <= 0.0 { 0.0 } else { g })
        .collect();
    let array = ndarray::Array::from_shape_vec(oa.raw_dim(), out)
        .expect("the same shape")
        .into_shared();
    Ok(back(NdArrayTensor::from(array)))
}

/// Elements per task of the parallel elementwise passes: large enough that rayon's scheduling
/// is noise next to the work.
#[cfg(feature = "ndarray")]
const ELEMENTWISE_CHUNK: usize = 1 << 15;

/// burn-ndarray's `relu` (`clamp_min(x, 0)`: `if x < 0 { 0 } else { x }`, so NaN and `-0.0`
/// pass through) on an `f32` NdArray tensor in row-major layout: in place when the array is not
/// shared, otherwise written once into a new buffer. Other tensors back unchanged.
#[cfg(feature = "ndarray")]
pub(crate) fn relu<P: 'static>(p: P) -> Result<P, P> {
    use burn_ndarray::NdArrayTensor;
    use rayon::prelude::*;

    let any: Box<dyn std::any::Any> = Box::new(p);
    let storage = match any.downcast::<NdArrayTensor>() {
        Ok(t) => match *t {
            NdArrayTensor::F32(storage) => storage,
            other => return Err(to_tensor(other)),
        },
        Err(any) => return Err(*any.downcast::<P>().expect("the same type")),
    };
    let unique = storage.is_unique();
    let mut array = storage.into_shared();
    if !array.is_standard_layout() {
        return Err(to_tensor(NdArrayTensor::from(array)));
    }
    let relu = |x: f32| if x < 0.0 { 0.0 } else { x };
    if unique {
        // Unique: `as_slice_mut` neither copies nor reallocates.
        let values = array.as_slice_mut().expect("row-major");
        values
            .par_chunks_mut(ELEMENTWISE_CHUNK)
            .for_each(|chunk| chunk.iter_mut().for_each(|x| *x = relu(*x)));
        return Ok(to_tensor(NdArrayTensor::from(array)));
    }
    let out: Vec<f32> = array
        .as_slice()
        .expect("row-major")
        .par_iter()
        .with_min_len(ELEMENTWISE_CHUNK)
        .map(|&x| relu(x))
        .collect();
    let out = ndarray::Array::from_shape_vec(array.raw_dim(), out)
        .expect("the same shape")
        .into_shared();
    Ok(to_tensor(NdArrayTensor::from(out)))
}

/// SplitMix64's output function of `state` (Steele, Lea and Flood, 2014): a bijective mix of
/// 64 bits whose values for consecutive states pass BigCrush.
#[cfg(feature = "ndarray")]
fn splitmix64(state: u64) -> u64 {
    let mut z = state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A draw of `shape` from `distribution` as an NdArray `f32` tensor, for
/// [`Distribution::Bernoulli`] (1.0 with probability `p`, else 0.0) and
/// [`Distribution::Default`] (uniform on `[0, 1)` in steps of 2^-24); `None` for other
/// distributions. The seed comes from `seed_draw`, two values below 2^32 from the backend's
/// own generator.
#[cfg(feature = "ndarray")]
pub(crate) fn random_f32<P: 'static>(
    shape: &Shape,
    distribution: burn_backend::Distribution,
    seed_draw: impl FnOnce() -> [u64; 2],
) -> Option<P> {
    use burn_backend::Distribution;
    use burn_ndarray::NdArrayTensor;
    use rayon::prelude::*;

    // The golden-ratio increment of SplitMix64's state.
    const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;
    let threshold = match distribution {
        // `x < p * 2^64` with probability p (rand's `Bernoulli` compares the same way).
        Distribution::Bernoulli(p) if (0.0..=1.0).contains(&p) => Some(if p >= 1.0 {
            None
        } else {
            Some((p * 2f64.powi(64)) as u64)
        }),
        Distribution::Default => None,
        _ => return None,
    };
    let [hi, lo] = seed_draw();
    let seed = splitmix64((hi << 32) | (lo & 0xffff_ffff));
    let len = shape.num_elements();
    let mut out = vec![0.0f32; len];
    out.par_chunks_mut(ELEMENTWISE_CHUNK)
        .enumerate()
        .for_each(|(chunk, values)| {
            let first = (chunk * ELEMENTWISE_CHUNK) as u64;
            for (i, v) in values.iter_mut().enumerate() {
                let x = splitmix64(seed.wrapping_add((first + i as u64).wrapping_mul(GAMMA)));
                *v = match threshold {
                    Some(Some(t)) => (x < t) as u32 as f32,
                    Some(None) => 1.0,
                    None => (x >> 40) as f32 * (1.0 / (1u64 << 24) as f32),
                };
            }
        });
    let array = ndarray::Array::from_shape_vec(ndarray::IxDyn(shape.as_slice()), out)
        .expect("the draw's shape")
        .into_shared();
    Some(to_tensor(NdArrayTensor::from(array)))
}

/// Vmap's `float_random` of the physical `shape` on NdArray for `f32` Bernoulli and default
/// draws ([`random_f32`]); `None` (the inner backend's own draw) otherwise.
pub(crate) fn random_float<B: burn_backend::Backend>(
    shape: &Shape,
    distribution: burn_backend::Distribution,
    device: &crate::VmapDevice<B>,
    dtype: burn_backend::FloatDType,
) -> Option<burn_backend::tensor::FloatTensor<B>> {
    #[cfg(feature = "ndarray")]
    if crate::ops::conv_gemm::is_ndarray::<B>() && dtype == burn_backend::FloatDType::F32 {
        return random_f32(shape, distribution, || {
            let draw = B::int_random(
                Shape::from(vec![2]),
                burn_backend::Distribution::Uniform(0.0, 4_294_967_296.0),
                &device.inner,
                burn_backend::IntDType::I64,
            );
            let data = burn::tensor::try_read_sync(B::int_into_data(draw))
                .expect("NdArray reads synchronously")
                .expect("reading an NdArray tensor cannot fail");
            let v: Vec<i64> = data.convert::<i64>().to_vec().expect("i64 data");
            [v[0] as u64, v[1] as u64]
        });
    }
    #[cfg(not(feature = "ndarray"))]
    let _ = (shape, distribution, device, dtype);
    None
}

/// Kernel, stride, padding and dilation of a 2-d max pool (`ceil_mode` off).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pool2d {
    pub kernel: [usize; 2],
    pub stride: [usize; 2],
    pub padding: [usize; 2],
    pub dilation: [usize; 2],
}

#[cfg(feature = "ndarray")]
fn to_tensor<P: 'static>(t: burn_ndarray::NdArrayTensor) -> P {
    *(Box::new(t) as Box<dyn std::any::Any>)
        .downcast::<P>()
        .expect("the same type")
}

/// The row-major `f32` array of an NdArray float tensor, or the tensor back.
#[cfg(feature = "ndarray")]
fn f32_array<P: 'static>(p: P) -> Result<ndarray::ArcArray<f32, ndarray::IxDyn>, P> {
    use burn_ndarray::NdArrayTensor;
    let any: Box<dyn std::any::Any> = Box::new(p);
    match any.downcast::<NdArrayTensor>() {
        Ok(t) => match *t {
            NdArrayTensor::F32(s) => {
                let a = s.into_shared();
                if a.is_standard_layout() {
                    Ok(a)
                } else {
                    Err(to_tensor(NdArrayTensor::from(a)))
                }
            }
            other => Err(to_tensor(other)),
        },
        Err(any) => Err(*any.downcast::<P>().expect("the same type")),
    }
}

/// burn-ndarray's `max_pool2d_with_indices` (`ceil_mode` off) on an `f32` tensor
/// `[N, C, H, W]`: the maximum of each window and its index `h * W + w` in the unpadded input
/// (0 when no element beats minus infinity), indices as `int_dtype` (i64 or i32).
#[cfg(feature = "ndarray")]
pub(crate) fn max_pool2d_with_indices<F: 'static, I: 'static>(
    x: F,
    pool: Pool2d,
    int_dtype: burn_backend::DType,
) -> Result<(F, I), F> {
    use burn_backend::DType;
    use burn_ndarray::NdArrayTensor;
    use rayon::prelude::*;

    if !matches!(int_dtype, DType::I64 | DType::I32) {
        return Err(x);
    }
    let xa = f32_array(x)?;
    if xa.ndim() != 4 {
        return Err(to_tensor(NdArrayTensor::from(xa)));
    }
    let (n, c, h, w) = (xa.shape()[0], xa.shape()[1], xa.shape()[2], xa.shape()[3]);
    let Pool2d {
        kernel: [kh, kw],
        stride: [sh, sw],
        padding: [ph, pw],
        dilation: [dh, dw],
    } = pool;
    let out_len = |len: usize, k: usize, s: usize, p: usize, d: usize| {
        (len + 2 * p)
            .checked_sub(d * (k - 1) + 1)
            .map(|v| v / s + 1)
    };
    let (Some(oh), Some(ow)) = (out_len(h, kh, sh, ph, dh), out_len(w, kw, sw, pw, dw)) else {
        return Err(to_tensor(NdArrayTensor::from(xa)));
    };
    let xv = xa.as_slice().expect("row-major");
    let plane_out = oh * ow;
    let mut values = vec![f32::NEG_INFINITY; n * c * plane_out];
    let mut index = vec![0i64; n * c * plane_out];
    values
        .par_chunks_mut(plane_out.max(1))
        .zip(index.par_chunks_mut(plane_out.max(1)))
        .enumerate()
        .for_each(|(plane, (vals, idxs))| {
            let xp = &xv[plane * h * w..(plane + 1) * h * w];
            if ph == 0 && pw == 0 && dh == 1 && dw == 1 {
                // Every window inside the plane: rows of `kw` contiguous values. The common
                // kernel sizes get their own instance (the window loops unrolled: 2.7x faster
                // than the loops over a run-time size, measured on 2x2 windows).
                let scan = match (kh, kw) {
                    (2, 2) => max_pool_plane::<2, 2>,
                    (3, 3) => max_pool_plane::<3, 3>,
                    _ => {
                        max_pool_plane_any(xp, w, [kh, kw], [sh, sw], [oh, ow], vals, idxs);
                        return;
                    }
                };
                scan(xp, w, [sh, sw], [oh, ow], vals, idxs);
                return;
            }
            for y in 0..oh {
                for x in 0..ow {
                    let (mut best, mut at) = (f32::NEG_INFINITY, 0i64);
                    for i in 0..kh {
                        let iy = (y * sh + i * dh) as isize - ph as isize;
                        if iy < 0 || iy >= h as isize {
                            continue; // padding: minus infinity never wins
                        }
                        for j in 0..kw {
                            let ix = (x * sw + j * dw) as isize - pw as isize;
                            if ix < 0 || ix >= w as isize {
                                continue;
                            }
                            let v = xp[iy as usize * w + ix as usize];
                            if v > best {
                                best = v;
                                at = iy as i64 * w as i64 + ix as i64;
                            }
                        }
                    }
                    vals[y * ow + x] = best;
                    idxs[y * ow + x] = at;
                }
            }
        });
    let shape = ndarray::IxDyn(&[n, c, oh, ow]);
    let values = ndarray::Array::from_shape_vec(shape.clone(), values)
        .expect("pool output shape")
        .into_shared();
    let indices = if int_dtype == DType::I64 {
        NdArrayTensor::from(
            ndarray::Array::from_shape_vec(shape, index)
                .expect("pool output shape")
                .into_shared(),
        )
    } else {
        let index: Vec<i32> = index.into_iter().map(|i| i as i32).collect();
        NdArrayTensor::from(
            ndarray::Array::from_shape_vec(shape, index)
                .expect("pool output shape")
                .into_shared(),
        )
    };
    Ok((to_tensor(NdArrayTensor::from(values)), to_tensor(indices)))
}

/// Max pool of one plane `xp` (width `w`) with `KH x KW` windows inside the plane: each
/// window's first maximum by strict `>` in row-major order of the window, and its index in the
/// plane (0 when nothing beats minus infinity).
#[cfg(feature = "ndarray")]
fn max_pool_plane<const KH: usize, const KW: usize>(
    xp: &[f32],
    w: usize,
    [sh, sw]: [usize; 2],
    [oh, ow]: [usize; 2],
    vals: &mut [f32],
    idxs: &mut [i64],
) {
    for y in 0..oh {
        let row_vals = &mut vals[y * ow..(y + 1) * ow];
        let row_idxs = &mut idxs[y * ow..(y + 1) * ow];
        for (x, (val, idx)) in row_vals.iter_mut().zip(row_idxs.iter_mut()).enumerate() {
            let corner = y * sh * w + x * sw;
            let (mut best, mut at) = (f32::NEG_INFINITY, 0usize);
            for i in 0..KH {
                let start = corner + i * w;
                let window_row: &[f32; KW] = xp[start..start + KW].try_into().expect("KW values");
                for (j, &v) in window_row.iter().enumerate() {
                    if v > best {
                        best = v;
                        at = start + j;
                    }
                }
            }
            *val = best;
            *idx = at as i64;
        }
    }
}

/// [`max_pool_plane`] for a kernel size known at run time only.
#[cfg(feature = "ndarray")]
fn max_pool_plane_any(
    xp: &[f32],
    w: usize,
    [kh, kw]: [usize; 2],
    [sh, sw]: [usize; 2],
    [oh, ow]: [usize; 2],
    vals: &mut [f32],
    idxs: &mut [i64],
) {
    for y in 0..oh {
        for x in 0..ow {
            let (mut best, mut at) = (f32::NEG_INFINITY, 0usize);
            let corner = y * sh * w + x * sw;
            for i in 0..kh {
                let start = corner + i * w;
                for (j, &v) in xp[start..start + kw].iter().enumerate() {
                    if v > best {
                        best = v;
                        at = start + j;
                    }
                }
            }
            vals[y * ow + x] = best;
            idxs[y * ow + x] = at as i64;
        }
    }
}

/// burn-ndarray's `max_pool2d_with_indices_backward`: each output gradient added at its index
/// in the input plane `[H, W]` of `x_shape` `[N, C, H, W]`, in row-major order of the outputs.
#[cfg(feature = "ndarray")]
pub(crate) fn max_pool2d_backward<F: 'static, I: 'static>(
    x_shape: &[usize],
    output_grad: F,
    indices: I,
) -> Result<F, (F, I)> {
    use burn_ndarray::NdArrayTensor;
    use rayon::prelude::*;

    let ga = match f32_array(output_grad) {
        Ok(a) => a,
        Err(g) => return Err((g, indices)),
    };
    let any: Box<dyn std::any::Any> = Box::new(indices);
    // i64 indices (NdArray's default) are read in place; i32 ones, or a strided array, are
    // collected first.
    let (idx_array, idx_collected): (Option<ndarray::ArcArray<i64, ndarray::IxDyn>>, Vec<i64>) =
        match any.downcast::<NdArrayTensor>() {
            Ok(t) => match *t {
                NdArrayTensor::I64(s) => {
                    let a = s.into_shared();
                    if a.is_standard_layout() {
                        (Some(a), Vec::new())
                    } else {
                        (None, a.iter().copied().collect())
                    }
                }
                NdArrayTensor::I32(s) => {
                    (None, s.into_shared().iter().map(|&i| i as i64).collect())
                }
                other => return Err((to_tensor(NdArrayTensor::from(ga)), to_tensor(other))),
            },
            Err(any) => {
                return Err((
                    to_tensor(NdArrayTensor::from(ga)),
                    *any.downcast::<I>().expect("the same type"),
                ))
            }
        };
    let idx: &[i64] = match &idx_array {
        Some(a) => a.as_slice().expect("row-major (checked)"),
        None => &idx_collected,
    };
    let (n, c, h, w) = (x_shape[0], x_shape[1], x_shape[2], x_shape[3]);
    let gv = ga.as_slice().expect("row-major");
    let plane_out: usize = ga.shape()[2..].iter().product();
    let mut dx = vec![0.0f32; n * c * h * w];
    dx.par_chunks_mut((h * w).max(1))
        .enumerate()
        .for_each(|(plane, out)| {
            let g = &gv[plane * plane_out..(plane + 1) * plane_out];
            let i = &idx[plane * plane_out..(plane + 1) * plane_out];
            for (&g, &i) in g.iter().zip(i) {
                out[i as usize] += g;
            }
        });
    let dx = ndarray::Array::from_shape_vec(ndarray::IxDyn(&[n, c, h, w]), dx)
        .expect("input shape")
        .into_shared();
    Ok(to_tensor(NdArrayTensor::from(dx)))
}

/// Without NdArray compiled in, every backend takes its own max pool.
#[cfg(not(feature = "ndarray"))]
pub(crate) fn max_pool2d_with_indices<F: 'static, I: 'static>(
    x: F,
    _pool: Pool2d,
    _int_dtype: burn_backend::DType,
) -> Result<(F, I), F> {
    Err(x)
}

/// Without NdArray compiled in, every backend takes its own max pool backward.
#[cfg(not(feature = "ndarray"))]
pub(crate) fn max_pool2d_backward<F: 'static, I: 'static>(
    _x_shape: &[usize],
    output_grad: F,
    indices: I,
) -> Result<F, (F, I)> {
    Err((output_grad, indices))
}

/// Without NdArray compiled in, every backend takes its own `relu_backward`.
#[cfg(not(feature = "ndarray"))]
pub(crate) fn relu_backward<P: 'static>(output: P, grad: P) -> Result<P, (P, P)> {
    Err((output, grad))
}

/// Without NdArray compiled in, every backend takes its own `reshape`.
#[cfg(not(feature = "ndarray"))]
pub(crate) fn reshape<P: 'static>(p: P, _shape: &Shape) -> Result<P, P> {
    Err(p)
}

/// Without NdArray compiled in, every backend takes its own `relu`.
#[cfg(not(feature = "ndarray"))]
pub(crate) fn relu<P: 'static>(p: P) -> Result<P, P> {
    Err(p)
}

#[cfg(all(test, feature = "ndarray"))]
mod tests {
    //! The counter-based draws of [`random_f32`] for a fixed seed: the same values whatever the
    //! thread count, different for another seed, only 0 and 1 for Bernoulli.

    use burn::backend::NdArray;
    use burn::tensor::{Tensor, TensorPrimitive};
    use burn_backend::tensor::FloatTensor;
    use burn_backend::{Distribution, Shape};

    use super::random_f32;

    type I = NdArray<f32>;

    fn draw(len: usize, distribution: Distribution, seed: [u64; 2]) -> Vec<f32> {
        let t: FloatTensor<I> = random_f32(&Shape::from(vec![len]), distribution, || seed)
            .expect("a distribution of the fast path");
        Tensor::<I, 1>::from_primitive(TensorPrimitive::Float(t))
            .into_data()
            .to_vec::<f32>()
            .unwrap()
    }

    #[test]
    fn draws_depend_on_the_seed_only() {
        // Several chunks of the parallel fill, then one thread only.
        let len = 5 * super::ELEMENTWISE_CHUNK + 17;
        for distribution in [Distribution::Bernoulli(0.3), Distribution::Default] {
            let a = draw(len, distribution, [1, 2]);
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .unwrap();
            let one_thread = pool.install(|| draw(len, distribution, [1, 2]));
            assert_eq!(
                a, one_thread,
                "{distribution:?}: the thread count changed the draw"
            );
            assert_ne!(
                a,
                draw(len, distribution, [1, 3]),
                "{distribution:?}: seed ignored"
            );
            assert_ne!(
                a,
                draw(len, distribution, [2, 2]),
                "{distribution:?}: seed ignored"
            );
        }
        let bernoulli = draw(len, Distribution::Bernoulli(0.3), [1, 2]);
        assert!(bernoulli.iter().all(|&v| v == 0.0 || v == 1.0));
        let uniform = draw(len, Distribution::Default, [1, 2]);
        assert!(uniform.iter().all(|v| (0.0..1.0).contains(v)));
    }

    #[test]
    fn other_distributions_take_the_backends_own_draw() {
        let t: Option<FloatTensor<I>> = random_f32(
            &Shape::from(vec![4]),
            Distribution::Normal(0.0, 1.0),
            || unreachable!("no seed is drawn for a distribution the fast path leaves alone"),
        );
        assert!(t.is_none());
        let t: Option<FloatTensor<I>> = random_f32(
            &Shape::from(vec![4]),
            Distribution::Uniform(0.0, 2.0),
            || unreachable!("no seed is drawn for a distribution the fast path leaves alone"),
        );
        assert!(t.is_none());
    }
}
