//! Convolutions as unfold (im2col) + ONE K-batched matrix product, for every batching of the
//! operands.
//!
//! Every operand is taken in its *front* form `[K', ...logical]`, with `K' = K` when batched and
//! `K' = 1` when shared, and the matrix product broadcasts `K'` (as in `linear`): a shared input
//! is unfolded once for all members, shared weights are one matrix for all members. The groups
//! of the convolution are a second batch axis of the same product, so a grouped convolution of K
//! members is `[K, g, og, cg*ks] @ [K, g, cg*ks, N*out]`, never a per-group loop.
//!
//! - **forward**: `y = W @ unfold(x)`;
//! - **input gradient** (and the transposed convolution's forward): `cols = W^T @ dy`, then
//!   `col2im` adds each kernel tap's columns into a zero-padded input at its strided positions;
//! - **weight gradient**: `dW = dy @ unfold(x)^T` (the sum over batch and positions is the
//!   product's own).
//!
//! Unfolding is written with the inner backend's own ops: padding by `slice_assign` into zeros,
//! one strided `slice` per kernel tap, one `cat`. The sums are taken in another order than an
//! inner backend's direct convolution, so results agree with it to floating-point tolerance,
//! not bit for bit.
//!
//! Which lowering an inner backend gets is [`ConvLowering`], from the backend's
//! [`plan`] (chosen per backend type: [`conv_lowering`](super::conv_lowering),
//! [`set_conv_lowering`](super::set_conv_lowering)). This file holds the glue of each:
//!
//! - [`ConvLowering::BatchedGemm`] (every backend but NdArray by default): the unfold + GEMM
//!   above, and the transposed forms on it ([`gemm_conv_transpose`],
//!   [`gemm_conv_transpose_x_backward`]).
//! - [`ConvLowering::HostGemm`] (NdArray's default): the same glue, then per-member kernels on
//!   host buffers (`kernels/ndarray/conv.rs`) for the convolutions they take ([`runs_on_host`]).
//! - [`ConvLowering::InnerConvolution`]: the batching rules of `ops/module/conv.rs` around the
//!   inner backend's own convolution, with two choices made here: on NdArray one inner call per
//!   member when input and weights are both batched ([`loops_over_members`]), and the input
//!   gradient of a 2-d convolution as an ordinary convolution ([`conv_transpose2d_by_conv2d`];
//!   NdArray's `conv_transpose2d` is naive).

use burn_backend::ops::{ConvOptions, ConvTransposeOptions};
use burn_backend::tensor::FloatTensor;
use burn_backend::{Backend, Shape, Slice, TensorMetadata};

use super::{plan, ConvLowering, Kernels};
use crate::kernels::ndarray::conv as host;
use crate::kernels::{out_len, Geometry};
use crate::ops::base::{add_broadcast, concat_dims, crop_to, reshape_float, shape_dims, FloatPrim};
use crate::tensor::{check_members, front, FloatKind, VmapTensor};

type Fp<B> = FloatTensor<B>;

fn dims<B: Backend>(p: &Fp<B>) -> Vec<usize> {
    p.shape().to_vec()
}

fn reshape<B: Backend>(p: Fp<B>, dims: Vec<usize>) -> Fp<B> {
    crate::tensor::float_reshape::<B>(p, Shape::from(dims))
}

fn full(n: usize) -> Slice {
    Slice::from(0..n)
}

/// `[head..., start..start + count]`.
fn axes(head: &[usize], start: usize, count: usize) -> Vec<usize> {
    let mut a = head.to_vec();
    a.extend(start..start + count);
    a
}

/// Every kernel tap (multi-index over `kernel`), row-major: the order of the flattened weights.
fn taps(kernel: &[usize]) -> Vec<Vec<usize>> {
    let mut all = vec![vec![]];
    for &k in kernel {
        all = all
            .into_iter()
            .flat_map(|head: Vec<usize>| {
                (0..k).map(move |i| {
                    let mut t = head.clone();
                    t.push(i);
                    t
                })
            })
            .collect();
    }
    all
}

/// The strided window of one kernel tap over a padded axis: positions `tap * d + o * s` for
/// `o < out`.
fn tap_slices(tap: &[usize], out: &[usize], geo: &Geometry) -> Vec<Slice> {
    tap.iter()
        .zip(out)
        .enumerate()
        .map(|(i, (&t, &o))| {
            let start = t * geo.dilation[i];
            let end = start + (o - 1) * geo.stride[i] + 1;
            Slice::new(start as isize, Some(end as isize), geo.stride[i] as isize)
        })
        .collect()
}

/// `x` `[K', N, C, S...]` as channels-first `[K'*C, N, S+2p...]`, zero-padded.
fn padded_channels_first<B: Backend>(x: Fp<B>, padding: &[usize]) -> Fp<B> {
    let d = dims::<B>(&x);
    let (kx, n, c, s) = (d[0], d[1], d[2], &d[3..]);
    let sp = s.len();
    let xt = B::float_permute(x, &axes(&[0, 2, 1], 3, sp)); // [K', C, N, S...], a view
    if padding.iter().all(|&p| p == 0) {
        let mut shape = vec![kx * c, n];
        shape.extend_from_slice(s);
        return reshape::<B>(xt, shape);
    }
    let padded: Vec<usize> = s.iter().zip(padding).map(|(&l, &p)| l + 2 * p).collect();
    let device = B::float_device(&xt);
    let dtype = xt.dtype().into();
    let mut shape = vec![kx, c, n];
    shape.extend_from_slice(&padded);
    let zeros = B::float_zeros(Shape::from(shape), &device, dtype);
    let mut window = vec![full(kx), full(c), full(n)];
    window.extend(s.iter().zip(padding).map(|(&l, &p)| Slice::from(p..p + l)));
    let out = B::float_slice_assign(zeros, &window, xt);
    let mut shape = vec![kx * c, n];
    shape.extend_from_slice(&padded);
    reshape::<B>(out, shape)
}

/// im2col: `x` `[K', N, g*cg, S...]` to columns `[K', g, cg*taps, N*out]` (rows ordered like
/// the flattened weights `[cg, kernel...]`), for the output size `out`.
fn unfold<B: Backend>(x: Fp<B>, kernel: &[usize], out: &[usize], geo: &Geometry) -> Fp<B> {
    let d = dims::<B>(&x);
    let (kx, n, c) = (d[0], d[1], d[2]);
    let positions: usize = out.iter().product();
    let xp = padded_channels_first::<B>(x, &geo.padding); // [K'*C, N, S'...]
    let rows = kx * c;
    let parts: Vec<Fp<B>> = taps(kernel)
        .iter()
        .map(|tap| {
            let mut window = vec![full(rows), full(n)];
            window.extend(tap_slices(tap, out, geo));
            let part = B::float_slice(xp.clone(), &window); // [K'*C, N, out...]
            reshape::<B>(part, vec![rows, 1, n * positions])
        })
        .collect();
    let count = parts.len();
    let cols = if count == 1 {
        parts.into_iter().next().expect("one tap")
    } else {
        B::float_cat(parts, 1) // [K'*C, taps, N*out]
    };
    let g = geo.groups;
    reshape::<B>(cols, vec![kx, g, (c / g) * count, n * positions])
}

/// An output gradient `[K', N, g*og, out...]` as `[K', g, og, N*out]`.
fn grad_rows<B: Backend>(dy: Fp<B>, g: usize) -> Fp<B> {
    let d = dims::<B>(&dy);
    let (kd, n, o) = (d[0], d[1], d[2]);
    let positions: usize = d[3..].iter().product();
    let dy = reshape::<B>(dy, vec![kd, n, g, o / g, positions]);
    let dy = B::float_permute(dy, &[0, 2, 3, 1, 4]);
    reshape::<B>(dy, vec![kd, g, o / g, n * positions])
}

/// Whether a convolution whose operand `x` has `spatial` spatial axes runs on the host kernels
/// of [`ConvLowering::HostGemm`].
pub(crate) fn runs_on_host<B: Backend>(x: &Fp<B>, spatial: usize) -> bool {
    plan::<B>().conv == ConvLowering::HostGemm && host::applies::<B>(x, spatial)
}

/// Whether this convolution (operand `x` in front form `[K', N, C, S...]`) runs on the host
/// kernels of [`ConvLowering::HostGemm`].
fn host_lowering<B: Backend>(x: &Fp<B>) -> bool {
    runs_on_host::<B>(x, dims::<B>(x).len() - 3)
}

/// Whether the host kernels write their results as NdArray arrays (no copy): `B` is NdArray.
fn host_on_ndarray<B: Backend>() -> bool {
    plan::<B>().kernels == Kernels::NdArray
}

/// The bias gradient of a convolution on the host kernels ([`runs_on_host`]): `dy`
/// `[K', N, O, out...]` to `[K', O]`.
pub(crate) fn host_bias_grad<B: Backend>(dy: Fp<B>) -> Fp<B> {
    host::bias_grad::<B>(dy, host_on_ndarray::<B>())
}

/// A convolution: `x` `[K', N, C, S...]`, weights `[K', O, C/g, kernel...]`, bias `[K', O]`
/// (each `K'` in `{1, K}`) to `[K', N, O, out...]`.
fn conv<B: Backend>(x: Fp<B>, weight: Fp<B>, bias: Option<Fp<B>>, geo: &Geometry) -> Fp<B> {
    if host_lowering::<B>(&x) {
        return host::conv::<B>(x, weight, bias, geo, host_on_ndarray::<B>());
    }
    let xd = dims::<B>(&x);
    let wd = dims::<B>(&weight);
    let (n, s) = (xd[1], &xd[3..]);
    let (kw, o, cg, kernel) = (wd[0], wd[1], wd[2], &wd[3..]);
    let sp = kernel.len();
    let out: Vec<usize> = (0..sp)
        .map(|i| {
            out_len(
                s[i],
                kernel[i],
                geo.stride[i],
                geo.padding[i],
                geo.dilation[i],
            )
        })
        .collect();
    let g = geo.groups;
    let taps: usize = kernel.iter().product();
    let cols = unfold::<B>(x, kernel, &out, geo);
    let w = reshape::<B>(weight, vec![kw, g, o / g, cg * taps]);
    let y = B::float_matmul(w, cols); // [K', g, og, N*out]
    let k = dims::<B>(&y)[0];
    let mut shape = vec![k, o, n];
    shape.extend_from_slice(&out);
    let y = reshape::<B>(y, shape);
    let y = B::float_permute(y, &axes(&[0, 2, 1], 3, sp)); // [K', N, O, out...], a view
    match bias {
        Some(b) => add_broadcast::<B>(y, bias_column::<B>(b, sp)),
        None => y,
    }
}

/// A bias `[K', O]` shaped to broadcast against `[K', N, O, spatial...]`.
fn bias_column<B: Backend>(bias: Fp<B>, spatial: usize) -> Fp<B> {
    let d = dims::<B>(&bias);
    let mut shape = vec![d[0], 1, d[1]];
    shape.extend(std::iter::repeat_n(1, spatial));
    reshape::<B>(bias, shape)
}

/// The input gradient of a convolution, which is also the forward of the transposed
/// convolution: `dy` `[K', N, O, out...]`, weights `[K', O, C/g, kernel...]` to
/// `[K', N, C, input...]` for the input size `input`.
fn conv_x_grad<B: Backend>(dy: Fp<B>, weight: Fp<B>, geo: &Geometry, input: &[usize]) -> Fp<B> {
    if host_lowering::<B>(&dy) {
        return host::conv_x_grad::<B>(dy, weight, geo, input, host_on_ndarray::<B>());
    }
    let dd = dims::<B>(&dy);
    let wd = dims::<B>(&weight);
    let (n, out) = (dd[1], dd[3..].to_vec());
    let (kw, o, cg, kernel) = (wd[0], wd[1], wd[2], wd[3..].to_vec());
    let sp = kernel.len();
    let g = geo.groups;
    let taps_list = taps(&kernel);
    let taps = taps_list.len();
    let w = reshape::<B>(weight, vec![kw, g, o / g, cg * taps]);
    let wt = B::float_swap_dims(w, 2, 3); // [K', g, cg*taps, og]
    let cols = B::float_matmul(wt, grad_rows::<B>(dy, g)); // [K', g, cg*taps, N*out]
    let k = dims::<B>(&cols)[0];
    let rows = k * g * cg;
    let positions: usize = out.iter().product();
    let cols = reshape::<B>(cols, vec![rows, taps, n * positions]);
    // col2im into the padded input; with `padding_out` the last taps may reach past it.
    let padded: Vec<usize> = (0..sp)
        .map(|i| {
            let reach = (out[i] - 1) * geo.stride[i] + (kernel[i] - 1) * geo.dilation[i] + 1;
            (input[i] + 2 * geo.padding[i]).max(reach)
        })
        .collect();
    let device = B::float_device(&cols);
    let dtype = cols.dtype().into();
    let mut shape = vec![rows, n];
    shape.extend_from_slice(&padded);
    let mut acc = B::float_zeros(Shape::from(shape), &device, dtype);
    let mut part_shape = vec![rows, n];
    part_shape.extend_from_slice(&out);
    for (j, tap) in taps_list.iter().enumerate() {
        let part = B::float_slice(
            cols.clone(),
            &[full(rows), Slice::from(j..j + 1), full(n * positions)],
        );
        let part = reshape::<B>(part, part_shape.clone());
        let mut window = vec![full(rows), full(n)];
        window.extend(tap_slices(tap, &out, geo));
        let sum = B::float_add(B::float_slice(acc.clone(), &window), part);
        acc = B::float_slice_assign(acc, &window, sum);
    }
    let mut crop = vec![full(rows), full(n)];
    crop.extend((0..sp).map(|i| Slice::from(geo.padding[i]..geo.padding[i] + input[i])));
    let dx = B::float_slice(acc, &crop); // [K'*C, N, input...]
    let mut shape = vec![k, g * cg, n];
    shape.extend_from_slice(input);
    let dx = reshape::<B>(dx, shape);
    B::float_permute(dx, &axes(&[0, 2, 1], 3, sp)) // [K', N, C, input...], a view
}

/// The weight gradient of a convolution: `x` `[K', N, C, S...]`, `dy` `[K', N, O, out...]` to
/// `[K', O, C/g, kernel...]`.
fn conv_weight_grad<B: Backend>(x: Fp<B>, dy: Fp<B>, geo: &Geometry, kernel: &[usize]) -> Fp<B> {
    if host_lowering::<B>(&x) {
        return host::conv_weight_grad::<B>(x, dy, geo, kernel, host_on_ndarray::<B>());
    }
    let c = dims::<B>(&x)[2];
    let dd = dims::<B>(&dy);
    let (o, out) = (dd[2], dd[3..].to_vec());
    let g = geo.groups;
    let cols = unfold::<B>(x, kernel, &out, geo); // [K', g, cg*taps, N*out]
    let dw = B::float_matmul(grad_rows::<B>(dy, g), B::float_swap_dims(cols, 2, 3));
    let k = dims::<B>(&dw)[0];
    let mut shape = vec![k, o, c / g];
    shape.extend_from_slice(kernel);
    reshape::<B>(dw, shape) // [K', g, og, cg*taps] -> [K', O, cg, kernel...]
}

// ---------------------------------------------------------------------------------------------
// The batching rules on `Vmap` tensors.
// ---------------------------------------------------------------------------------------------

/// A result in front form `[K', ...]`: batched when any operand was, else `K' = 1` dropped.
fn from_front<B: Backend>(p: Fp<B>, batched: bool, members: usize) -> Vt<B> {
    if batched {
        return VmapTensor::batched(p, members);
    }
    let d = dims::<B>(&p);
    VmapTensor::unbatched(reshape::<B>(p, d[1..].to_vec()), members)
}

type Vt<B> = VmapTensor<Fp<B>>;

fn front_of<B: Backend>(t: Vt<B>) -> Fp<B> {
    front::<B, FloatKind>(t)
}

/// `Vmap`'s convolution (`x` `[N, C, S...]`, weights `[O, C/g, kernel...]`, bias `[O]`).
pub(crate) fn vmap_conv<B: Backend>(
    op: &str,
    x: Vt<B>,
    weight: Vt<B>,
    bias: Option<Vt<B>>,
    geo: &Geometry,
) -> Vt<B> {
    let mut k = check_members(op, x.members, weight.members);
    let mut batched = x.batched || weight.batched;
    if let Some(b) = &bias {
        k = check_members(op, k, b.members);
        batched |= b.batched;
    }
    let y = conv::<B>(
        front_of::<B>(x),
        front_of::<B>(weight),
        bias.map(front_of::<B>),
        geo,
    );
    from_front::<B>(y, batched, k)
}

/// `Vmap`'s convolution input gradient, or transposed convolution (weights
/// `[C_in, O/g, kernel...]` then read as a convolution's `[O', C'/g, kernel...]`), to the
/// spatial size `input`, plus an optional bias `[C]`.
pub(crate) fn vmap_conv_x_grad<B: Backend>(
    op: &str,
    dy: Vt<B>,
    weight: Vt<B>,
    bias: Option<Vt<B>>,
    geo: &Geometry,
    input: &[usize],
) -> Vt<B> {
    let mut k = check_members(op, dy.members, weight.members);
    let mut batched = dy.batched || weight.batched;
    if let Some(b) = &bias {
        k = check_members(op, k, b.members);
        batched |= b.batched;
    }
    let dx = conv_x_grad::<B>(front_of::<B>(dy), front_of::<B>(weight), geo, input);
    let dx = match bias {
        Some(b) => add_broadcast::<B>(dx, bias_column::<B>(front_of::<B>(b), input.len())),
        None => dx,
    };
    from_front::<B>(dx, batched, k)
}

/// `Vmap`'s convolution weight gradient (`x` the convolution's input side, `dy` its output
/// side) for the kernel size `kernel`.
pub(crate) fn vmap_conv_weight_grad<B: Backend>(
    op: &str,
    x: Vt<B>,
    dy: Vt<B>,
    geo: &Geometry,
    kernel: &[usize],
) -> Vt<B> {
    let k = check_members(op, x.members, dy.members);
    let batched = x.batched || dy.batched;
    let dw = conv_weight_grad::<B>(front_of::<B>(x), front_of::<B>(dy), geo, kernel);
    from_front::<B>(dw, batched, k)
}

// ---------------------------------------------------------------------------------------------
// The other lowerings: the choice between them, the transposed forms on unfold + GEMM, and the
// 2-d input gradient as a convolution.
// ---------------------------------------------------------------------------------------------

/// Whether convolutions whose input and weights are both per member run as one inner call per
/// member instead of one grouped call with K times the groups (under
/// [`ConvLowering::InnerConvolution`]).
///
/// NdArray's convolution handles one group set well but many groups poorly, so on NdArray a loop
/// over members is faster (measured on the benchmark CNN with `perf`). On GPU backends one
/// grouped launch is the efficient form.
pub(crate) fn loops_over_members<B: Backend>() -> bool {
    plan::<B>().conv_per_member
}

/// Whether `Vmap<B>` lowers convolutions to unfold + one batched matrix product.
pub(crate) fn lowers_to_gemm<B: Backend>() -> bool {
    matches!(
        plan::<B>().conv,
        ConvLowering::BatchedGemm | ConvLowering::HostGemm
    )
}

pub(crate) fn geometry<const N: usize>(o: &ConvOptions<N>) -> Geometry {
    Geometry {
        stride: o.stride.to_vec(),
        padding: o.padding.to_vec(),
        dilation: o.dilation.to_vec(),
        groups: o.groups,
    }
}

pub(crate) fn geometry_transposed<const N: usize>(o: &ConvTransposeOptions<N>) -> Geometry {
    Geometry {
        stride: o.stride.to_vec(),
        padding: o.padding.to_vec(),
        dilation: o.dilation.to_vec(),
        groups: o.groups,
    }
}

/// The output size of a transposed convolution of input `x_shape` and weights `w_shape`.
fn conv_transpose_output_size<const N: usize>(
    x_shape: &[usize],
    w_shape: &[usize],
    o: &ConvTransposeOptions<N>,
) -> Vec<usize> {
    (0..N)
        .map(|i| {
            (x_shape[2 + i] - 1) * o.stride[i]
                + o.dilation[i] * (w_shape[2 + i] - 1)
                + 1
                + o.padding_out[i]
                - 2 * o.padding[i]
        })
        .collect()
}

/// The transposed convolution with unfold + batched matrix products.
pub(crate) fn gemm_conv_transpose<B: Backend, const N: usize>(
    op: &str,
    x: VmapTensor<FloatPrim<B>>,
    weight: VmapTensor<FloatPrim<B>>,
    bias: Option<VmapTensor<FloatPrim<B>>>,
    o: &ConvTransposeOptions<N>,
) -> VmapTensor<FloatPrim<B>> {
    let target = conv_transpose_output_size(&x.shape(), &weight.shape(), o);
    vmap_conv_x_grad::<B>(op, x, weight, bias, &geometry_transposed(o), &target)
}

/// The input gradient of a transposed convolution with unfold + batched matrix products: a
/// convolution, sliced to the input size.
pub(crate) fn gemm_conv_transpose_x_backward<B: Backend, const N: usize>(
    op: &str,
    weight: VmapTensor<FloatPrim<B>>,
    grad: VmapTensor<FloatPrim<B>>,
    o: &ConvTransposeOptions<N>,
) -> VmapTensor<FloatPrim<B>> {
    let w_shape = weight.shape().to_vec();
    let g_shape = grad.shape().to_vec();
    let out = vmap_conv::<B>(op, grad, weight, None, &geometry_transposed(o));
    let mut target = out.shape().to_vec();
    for i in 0..N {
        let (k, s, p, po, d) = (
            w_shape[2 + i],
            o.stride[i],
            o.padding[i],
            o.padding_out[i],
            o.dilation[i],
        );
        target[2 + i] = (g_shape[2 + i] + 2 * p - d * (k - 1) - po - 1) / s + 1;
    }
    let (batched, k) = (out.batched, out.members);
    let target = if batched {
        concat_dims(&[&[k], &target])
    } else {
        target
    };
    VmapTensor::new(crop_to::<B>(out.inner, &target), batched, k)
}

/// A 2-d transposed convolution computed as an ordinary convolution: the input is dilated by
/// the stride and padded, the weights are flipped with their channel roles swapped per group.
///
/// Used for `conv2d_x_backward`: some inner backends (NdArray) have a fast `conv2d` but a
/// naive `conv_transpose2d`, which made the input gradient of a convolution dominate a CNN's
/// training step (86% of it, measured with `perf`).
pub(crate) fn conv_transpose2d_by_conv2d<B: Backend>(
    x: FloatPrim<B>,
    weight: FloatPrim<B>,
    bias: Option<FloatPrim<B>>,
    o: ConvTransposeOptions<2>,
) -> FloatPrim<B> {
    let xd = shape_dims(&x); // [N, Cin, H, W]
    let wd = shape_dims(&weight); // [Cin, Cout/g, kh, kw]
    let g = o.groups;
    let (n, c_in, h, w) = (xd[0], xd[1], xd[2], xd[3]);
    let (c_out_g, kh, kw) = (wd[1], wd[2], wd[3]);
    let device = B::float_device(&x);
    let dtype: burn_backend::FloatDType = x.dtype().into();
    // Dilate by the stride: [N, C, H, 1, W, 1] -> zeros appended -> [N, C, H*s, W*s], cropped.
    let (sh, sw) = (o.stride[0], o.stride[1]);
    let mut xs = x;
    if sh > 1 || sw > 1 {
        let x6 = reshape_float::<B>(xs, vec![n, c_in, h, 1, w, 1]);
        let x6 = if sh > 1 {
            let z = B::float_zeros(Shape::from(vec![n, c_in, h, sh - 1, w, 1]), &device, dtype);
            B::float_cat(vec![x6, z], 3)
        } else {
            x6
        };
        let x6 = if sw > 1 {
            let z = B::float_zeros(Shape::from(vec![n, c_in, h, sh, w, sw - 1]), &device, dtype);
            B::float_cat(vec![x6, z], 5)
        } else {
            x6
        };
        let full = reshape_float::<B>(x6, vec![n, c_in, h * sh, w * sw]);
        xs = B::float_slice(
            full,
            &[
                Slice::from(0..n),
                Slice::from(0..c_in),
                Slice::from(0..(h - 1) * sh + 1),
                Slice::from(0..(w - 1) * sw + 1),
            ],
        );
    }
    // Pad (or crop) so that a stride-1 convolution gives the transposed convolution's output.
    let dh = shape_dims(&xs)[2];
    let dw = shape_dims(&xs)[3];
    let lo = [
        (o.dilation[0] * (kh - 1)) as isize - o.padding[0] as isize,
        (o.dilation[1] * (kw - 1)) as isize - o.padding[1] as isize,
    ];
    let hi = [
        lo[0] + o.padding_out[0] as isize,
        lo[1] + o.padding_out[1] as isize,
    ];
    let ph = (dh as isize + lo[0] + hi[0]).max(0) as usize;
    let pw = (dw as isize + lo[1] + hi[1]).max(0) as usize;
    // Source row i lands at row i + lo; rows outside [0, ph) are cropped.
    let range = |lo: isize, len: usize, padded: usize| {
        let from = (-lo).max(0) as usize;
        let to = (len as isize).min(padded as isize - lo).max(from as isize) as usize;
        (from, to, (from as isize + lo) as usize)
    };
    let (fh, th, oh) = range(lo[0], dh, ph);
    let (fw, tw, ow) = range(lo[1], dw, pw);
    let src = B::float_slice(
        xs,
        &[
            Slice::from(0..n),
            Slice::from(0..c_in),
            Slice::from(fh..th),
            Slice::from(fw..tw),
        ],
    );
    let padded = B::float_slice_assign(
        B::float_zeros(Shape::from(vec![n, c_in, ph, pw]), &device, dtype),
        &[
            Slice::from(0..n),
            Slice::from(0..c_in),
            Slice::from(oh..oh + (th - fh)),
            Slice::from(ow..ow + (tw - fw)),
        ],
        src,
    );
    // Weights [g*cin_g, cout_g, kh, kw] -> [g*cout_g, cin_g, kh, kw], spatially flipped.
    let cin_g = c_in / g;
    let wt = reshape_float::<B>(weight, vec![g, cin_g, c_out_g, kh, kw]);
    let wt = B::float_swap_dims(wt, 1, 2);
    let wt = reshape_float::<B>(wt, vec![g * c_out_g, cin_g, kh, kw]);
    let wt = B::float_flip(wt, &[2, 3]);
    B::conv2d(
        padded,
        wt,
        bias,
        ConvOptions::new([1, 1], [0, 0], o.dilation, g),
    )
}
