//! How a convolution of `Vmap<B>` is lowered for the inner backend `B`: the backend-specific
//! fast paths, kept apart from the batching rules in `conv.rs`.
//!
//! - [`ConvLowering::BatchedGemm`] (every backend but NdArray by default): unfold + ONE
//!   K-batched matrix product (`ops/conv_gemm.rs`); here the glue for the transposed forms.
//! - [`ConvLowering::HostGemm`] (NdArray's default): the same glue, then per-member kernels
//!   on host buffers (`ops/conv_host.rs`).
//! - [`ConvLowering::InnerConvolution`] on NdArray: one inner call per member when input and
//!   weights are both batched, and the input gradient of a 2-d convolution as an ordinary
//!   convolution (NdArray's `conv_transpose2d` is naive).

use super::conv::crop_to;
use super::*;

/// Whether convolutions whose input and weights are both per member run as one inner call per
/// member instead of one grouped call with K times the groups (under
/// [`ConvLowering::InnerConvolution`]).
///
/// NdArray's convolution handles one group set well but many groups poorly, so on NdArray a loop
/// over members is faster (measured on the benchmark CNN with `perf`). On GPU backends one
/// grouped launch is the efficient form.
pub(super) fn loops_over_members<B: Backend>() -> bool {
    conv_gemm::is_ndarray::<B>()
}

/// Whether `Vmap<B>` lowers convolutions to unfold + one batched matrix product.
pub(super) fn lowers_to_gemm<B: Backend>() -> bool {
    matches!(
        conv_lowering::<B>(),
        ConvLowering::BatchedGemm | ConvLowering::HostGemm
    )
}

pub(super) fn geometry<const N: usize>(o: &ConvOptions<N>) -> Geometry {
    Geometry {
        stride: o.stride.to_vec(),
        padding: o.padding.to_vec(),
        dilation: o.dilation.to_vec(),
        groups: o.groups,
    }
}

pub(super) fn geometry_transposed<const N: usize>(o: &ConvTransposeOptions<N>) -> Geometry {
    Geometry {
        stride: o.stride.to_vec(),
        padding: o.padding.to_vec(),
        dilation: o.dilation.to_vec(),
        groups: o.groups,
    }
}

/// The output size of a transposed convolution of input `x_shape` and weights `w_shape`.
pub(super) fn conv_transpose_output_size<const N: usize>(
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
pub(super) fn gemm_conv_transpose<B: Backend, const N: usize>(
    op: &str,
    x: VmapTensor<FloatPrim<B>>,
    weight: VmapTensor<FloatPrim<B>>,
    bias: Option<VmapTensor<FloatPrim<B>>>,
    o: &ConvTransposeOptions<N>,
) -> VmapTensor<FloatPrim<B>> {
    let target = conv_transpose_output_size(&x.shape(), &weight.shape(), o);
    conv_gemm::vmap_conv_x_grad::<B>(op, x, weight, bias, &geometry_transposed(o), &target)
}

/// The input gradient of a transposed convolution with unfold + batched matrix products: a
/// convolution, sliced to the input size.
pub(super) fn gemm_conv_transpose_x_backward<B: Backend, const N: usize>(
    op: &str,
    weight: VmapTensor<FloatPrim<B>>,
    grad: VmapTensor<FloatPrim<B>>,
    o: &ConvTransposeOptions<N>,
) -> VmapTensor<FloatPrim<B>> {
    let w_shape = weight.shape().to_vec();
    let g_shape = grad.shape().to_vec();
    let out = conv_gemm::vmap_conv::<B>(op, grad, weight, None, &geometry_transposed(o));
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
pub(super) fn conv_transpose2d_by_conv2d<B: Backend>(
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
