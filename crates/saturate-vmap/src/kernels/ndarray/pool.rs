//! **max_pool2d_with_indices** and its backward: burn-ndarray pads the input into a copy and
//! indexes every element through a 4-d view; at K = 8 the two were a quarter of the CNN step.
//! Here each (image, channel) plane is read as a slice, with the same scan order, the same
//! strict `>` (the first maximum wins, NaN never does) and the same index convention.
//!
//! The backward reads the indices in place instead of copying them.

#[cfg(feature = "ndarray")]
use super::base::{f32_row_major, to_tensor};

/// Kernel, stride, padding and dilation of a 2-d max pool (`ceil_mode` off).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pool2d {
    pub kernel: [usize; 2],
    pub stride: [usize; 2],
    pub padding: [usize; 2],
    pub dilation: [usize; 2],
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

    if !matches!(int_dtype, DType::I64 | DType::I32) {
        return Err(x);
    }
    let (values, index, shape) = pool_f32::<F, true>(x, pool)?;
    let shape = ndarray::IxDyn(&shape);
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

/// burn-ndarray's `max_pool2d` (`ceil_mode` off; inference) on an `f32` tensor `[N, C, H, W]`:
/// the values of [`max_pool2d_with_indices`], without writing the indices.
#[cfg(feature = "ndarray")]
pub(crate) fn max_pool2d<F: 'static>(x: F, pool: Pool2d) -> Result<F, F> {
    use burn_ndarray::NdArrayTensor;

    let (values, _, shape) = pool_f32::<F, false>(x, pool)?;
    let values = ndarray::Array::from_shape_vec(ndarray::IxDyn(&shape), values)
        .expect("pool output shape")
        .into_shared();
    Ok(to_tensor(NdArrayTensor::from(values)))
}

/// A max pool's values, its indices (empty unless asked for) and the output shape
/// `[N, C, OH, OW]`.
#[cfg(feature = "ndarray")]
type Pooled = (Vec<f32>, Vec<i64>, [usize; 4]);

/// The max pool's values, and with `INDEX` its indices; `x` back when it is not an `f32`
/// NdArray tensor of rank 4 in row-major layout.
#[cfg(feature = "ndarray")]
fn pool_f32<F: 'static, const INDEX: bool>(x: F, pool: Pool2d) -> Result<Pooled, F> {
    use burn_ndarray::NdArrayTensor;
    use rayon::prelude::*;

    let xa = f32_row_major(x, |_| true)?.array;
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
    // Every output is written below: spare buffers' old values never show.
    let mut values = super::spare::take(n * c * plane_out, f32::NEG_INFINITY);
    let mut index = if INDEX {
        super::spare::take(n * c * plane_out, 0i64)
    } else {
        Vec::new()
    };
    let one_plane = |plane: usize, vals: &mut [f32], idxs: &mut [i64]| {
        let xp = &xv[plane * h * w..(plane + 1) * h * w];
        if ph == 0 && pw == 0 && dh == 1 && dw == 1 {
            // Every window inside the plane: rows of `kw` contiguous values. The common
            // kernel sizes get their own instance (the window loops unrolled: 2.7x faster
            // than the loops over a run-time size, measured on 2x2 windows).
            let scan = match (kh, kw) {
                (2, 2) => max_pool_plane::<2, 2, INDEX>,
                (3, 3) => max_pool_plane::<3, 3, INDEX>,
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
    };
    if INDEX {
        values
            .par_chunks_mut(plane_out.max(1))
            .zip(index.par_chunks_mut(plane_out.max(1)))
            .enumerate()
            .for_each(|(plane, (vals, idxs))| one_plane(plane, vals, idxs));
    } else {
        // The general loops write indices anyway: into a plane's worth of scratch.
        values
            .par_chunks_mut(plane_out.max(1))
            .enumerate()
            .for_each_init(
                || vec![0i64; plane_out],
                |idxs, (plane, vals)| one_plane(plane, vals, idxs),
            );
    }
    super::warm_after(values.len());
    // Under inference the input is this op's alone: its buffer serves the next output.
    super::spare::give_array(xa);
    Ok((values, index, [n, c, oh, ow]))
}

/// Max pool of one plane `xp` (width `w`) with `KH x KW` windows inside the plane: each
/// window's first maximum by strict `>` in row-major order of the window, and with `INDEX` its
/// index in the plane (0 when nothing beats minus infinity; `idxs` untouched without).
#[cfg(feature = "ndarray")]
fn max_pool_plane<const KH: usize, const KW: usize, const INDEX: bool>(
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
            if INDEX {
                *idx = at as i64;
            }
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

    let ga = match f32_row_major(output_grad, |_| true) {
        Ok(a) => a.array,
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
    // Each plane is zeroed by its task, in the cache, just before its maxima are added.
    let mut dx = super::spare::take(n * c * h * w, 0.0f32);
    dx.par_chunks_mut((h * w).max(1))
        .enumerate()
        .for_each(|(plane, out)| {
            out.fill(0.0);
            let g = &gv[plane * plane_out..(plane + 1) * plane_out];
            let i = &idx[plane * plane_out..(plane + 1) * plane_out];
            for (&g, &i) in g.iter().zip(i) {
                out[i as usize] += g;
            }
        });
    super::warm_after(dx.len());
    super::spare::give_array(ga);
    if let Some(a) = idx_array {
        super::spare::give_array(a);
    }
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

/// Without NdArray compiled in, every backend takes its own max pool.
#[cfg(not(feature = "ndarray"))]
pub(crate) fn max_pool2d<F: 'static>(x: F, _pool: Pool2d) -> Result<F, F> {
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
