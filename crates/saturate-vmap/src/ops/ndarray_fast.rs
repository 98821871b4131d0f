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
//! **relu_backward**: burn's default (`lower_equal_elem` then `mask_fill`) makes a bool mask
//! and walks both arrays twice; at K = 8 it was a tenth of the CNN step. Here one parallel pass.

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
    let mut out = vec![0.0f32; gv.len()];
    const CHUNK: usize = 1 << 16;
    out.par_chunks_mut(CHUNK)
        .zip(ov.par_chunks(CHUNK).zip(gv.par_chunks(CHUNK)))
        .for_each(|(d, (o, g))| {
            for ((d, &o), &g) in d.iter_mut().zip(o).zip(g) {
                *d = if o <= 0.0 { 0.0 } else { g };
            }
        });
    let array = ndarray::Array::from_shape_vec(oa.raw_dim(), out)
        .expect("the same shape")
        .into_shared();
    Ok(back(NdArrayTensor::from(array)))
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
                // Every window inside the plane: rows of `kw` contiguous values.
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
    let idx: Vec<i64> = match any.downcast::<NdArrayTensor>() {
        Ok(t) => match *t {
            NdArrayTensor::I64(s) => {
                let a = s.into_shared();
                match a.as_slice() {
                    Some(v) => v.to_vec(),
                    None => a.iter().copied().collect(),
                }
            }
            NdArrayTensor::I32(s) => s.into_shared().iter().map(|&i| i as i64).collect(),
            other => return Err((to_tensor(NdArrayTensor::from(ga)), to_tensor(other))),
        },
        Err(any) => {
            return Err((
                to_tensor(NdArrayTensor::from(ga)),
                *any.downcast::<I>().expect("the same type"),
            ))
        }
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
