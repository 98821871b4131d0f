//! Batching rules for the convolutions: conv1d/2d/3d, the transposed forms, deformable conv2d and unfold4d, with their gradients.

use super::*;
use crate::lowering::conv::{
    conv_transpose2d_by_conv2d, gemm_conv_transpose, gemm_conv_transpose_x_backward, geometry,
    geometry_transposed, host_bias_grad, loops_over_members, lowers_to_gemm, runs_on_host,
    vmap_conv, vmap_conv_weight_grad, vmap_conv_x_grad,
};

/// `head` followed by the axes `start..start + count`.
fn head_then_axes(head: &[usize], start: usize, count: usize) -> Vec<usize> {
    let mut a = head.to_vec();
    a.extend(start..start + count);
    a
}

/// `[K, N, C, ...] -> [N, K*C, ...]`.
fn merge_members_into_channels<B: Backend>(p: FloatPrim<B>) -> FloatPrim<B> {
    let d = shape_dims(&p);
    let rest = d.len() - 3;
    let p = permute_float::<B>(p, &head_then_axes(&[1, 0, 2], 3, rest));
    reshape_float::<B>(p, concat_dims(&[&[d[1], d[0] * d[2]], &d[3..]]))
}

/// `[N, K*C, ...] -> [K, N, C, ...]`.
fn split_members_from_channels<B: Backend>(p: FloatPrim<B>, k: usize) -> FloatPrim<B> {
    let d = shape_dims(&p);
    let rest = d.len() - 2;
    let p = reshape_float::<B>(p, concat_dims(&[&[d[0], k, d[1] / k], &d[2..]]));
    permute_float::<B>(p, &head_then_axes(&[1, 0, 2], 3, rest))
}

/// An inner convolution (or transposed convolution) with the options captured and the group
/// count given.
type ConvFn<'a, B> =
    &'a dyn Fn(FloatPrim<B>, FloatPrim<B>, Option<FloatPrim<B>>, usize) -> FloatPrim<B>;

/// Adds a batched bias `[K, O]` to a conv output with channels in axis 1 of the logical shape.
/// `out` is batched (`[K, N, O, ...]`) when `out_batched`, else `[N, O, ...]`.
fn add_bias_after<B: Backend>(
    out: FloatPrim<B>,
    out_batched: bool,
    bias: VmapTensor<FloatPrim<B>>,
) -> FloatPrim<B> {
    let k = bias.members;
    let out = if out_batched {
        out
    } else {
        let d = shape_dims(&out);
        reshape_float::<B>(out, concat_dims(&[&[1], &d]))
    };
    let rank = shape_dims(&out).len();
    let o = shape_dims(&bias.inner)[1];
    let mut bd = vec![1usize; rank];
    bd[0] = k;
    bd[2] = o;
    let b = reshape_float::<B>(bias.inner, bd);
    add_broadcast::<B>(out, b)
}

/// `[N, g*K*og, ...] -> [K, N, g*og, ...]`.
fn split_group_members<B: Backend>(out: FloatPrim<B>, k: usize, g: usize) -> FloatPrim<B> {
    if g == 1 {
        return split_members_from_channels::<B>(out, k);
    }
    let d = shape_dims(&out);
    let og = d[1] / (g * k);
    let out = reshape_float::<B>(out, vec![d[0], g, k, og, dims_product(&d[2..])]);
    let out = permute_float::<B>(out, &[2, 0, 1, 3, 4]);
    reshape_float::<B>(out, concat_dims(&[&[k, d[0], g * og], &d[2..]]))
}

/// A bias `[K, g*og]` (materialized) reordered group-major: `[g*K*og]`.
fn bias_per_group_member<B: Backend>(bias: VmapTensor<FloatPrim<B>>, g: usize) -> FloatPrim<B> {
    let k = bias.members;
    let b = materialize::<B, FloatKind>(bias);
    let o = shape_dims(&b)[1];
    if g == 1 {
        return reshape_float::<B>(b, vec![k * o]);
    }
    let b = reshape_float::<B>(b, vec![k, g, o / g]);
    let b = permute_float::<B>(b, &[1, 0, 2]);
    reshape_float::<B>(b, vec![k * o])
}

/// Forward (transposed) convolution for every batching of `x`, `weight` and `bias`.
///
/// Weight layouts: convolution `[O, C/g, k...]`, transposed `[C, O/g, k...]`.
fn conv_forward<B: Backend>(
    op: &str,
    x: VmapTensor<FloatPrim<B>>,
    weight: VmapTensor<FloatPrim<B>>,
    bias: Option<VmapTensor<FloatPrim<B>>>,
    groups: usize,
    transposed: bool,
    f: ConvFn<'_, B>,
) -> VmapTensor<FloatPrim<B>> {
    let mut counts = vec![x.members, weight.members];
    if let Some(b) = &bias {
        counts.push(b.members);
    }
    let k = common_members(op, &counts);
    let g = groups;
    match (x.batched, weight.batched) {
        (xb, false) => {
            let xi = if xb {
                merge_members_into_batch::<B>(x.inner)
            } else {
                x.inner
            };
            let (b_in, b_after) = match bias {
                Some(b) if b.batched => (None, Some(b)),
                Some(b) => (Some(b.inner), None),
                None => (None, None),
            };
            let out = f(xi, weight.inner, b_in, g);
            let out = if xb {
                split_members_from_batch::<B>(out, k)
            } else {
                out
            };
            match b_after {
                Some(b) => VmapTensor::batched(add_bias_after::<B>(out, xb, b), k),
                None => VmapTensor::new(out, xb, k),
            }
        }
        (false, true) => {
            // One convolution against the K weight sets side by side (group-major).
            let wd = shape_dims(&weight.inner); // [K, a, b, ks]
            let sp = wd.len() - 3;
            let ks = &wd[3..];
            let w = if g == 1 {
                if transposed {
                    // [K, C, og, ks] -> [C, K*og, ks]
                    let w = permute_float::<B>(weight.inner, &head_then_axes(&[1, 0, 2], 3, sp));
                    reshape_float::<B>(w, concat_dims(&[&[wd[1], k * wd[2]], ks]))
                } else {
                    reshape_float::<B>(weight.inner, concat_dims(&[&[k * wd[1], wd[2]], ks]))
                }
            } else if transposed {
                // [K, g, cg, og, ks] -> [g, cg, K, og, ks] -> [C, K*og, ks]
                let cg = wd[1] / g;
                let w = reshape_float::<B>(weight.inner, vec![k, g, cg, wd[2], dims_product(ks)]);
                let w = permute_float::<B>(w, &[1, 2, 0, 3, 4]);
                reshape_float::<B>(w, concat_dims(&[&[wd[1], k * wd[2]], ks]))
            } else {
                // [K, g, og, cg, ks] -> [g, K, og, cg, ks] -> [g*K*og, cg, ks]
                let og = wd[1] / g;
                let w = reshape_float::<B>(weight.inner, vec![k, g, og, wd[2], dims_product(ks)]);
                let w = permute_float::<B>(w, &[1, 0, 2, 3, 4]);
                reshape_float::<B>(w, concat_dims(&[&[k * wd[1], wd[2]], ks]))
            };
            let b = bias.map(|b| bias_per_group_member::<B>(b, g));
            let out = f(x.inner, w, b, g);
            VmapTensor::batched(split_group_members::<B>(out, k, g), k)
        }
        (true, true) if loops_over_members::<B>() => {
            let (xi, wi) = (x.inner, weight.inner);
            let bias = bias.map(|b| (b.batched, b.inner));
            let outs = (0..k)
                .map(|m| {
                    let b = bias.as_ref().map(|(batched, b)| {
                        if *batched {
                            member_slice::<B>(b.clone(), m)
                        } else {
                            b.clone()
                        }
                    });
                    let out = f(
                        member_slice::<B>(xi.clone(), m),
                        member_slice::<B>(wi.clone(), m),
                        b,
                        g,
                    );
                    let d = shape_dims(&out);
                    reshape_float::<B>(out, concat_dims(&[&[1], &d]))
                })
                .collect();
            VmapTensor::batched(B::float_cat(outs, 0), k)
        }
        (true, true) => {
            // K folded into the channels, one group set per member.
            let xi = merge_members_into_channels::<B>(x.inner);
            let w = merge_members_into_batch::<B>(weight.inner);
            let b = bias.map(|b| {
                let b = materialize::<B, FloatKind>(b);
                let d = shape_dims(&b);
                reshape_float::<B>(b, vec![d[0] * d[1]])
            });
            let out = f(xi, w, b, g * k);
            VmapTensor::batched(split_members_from_channels::<B>(out, k), k)
        }
    }
}

/// Member `m` of a batched inner tensor `[K, ...]`, as `[...]` (a view where the backend allows).
fn member_slice<B: Backend>(p: FloatPrim<B>, m: usize) -> FloatPrim<B> {
    let d = shape_dims(&p);
    let mut ranges = vec![Slice::from(m..m + 1)];
    ranges.extend(d[1..].iter().map(|&n| Slice::from(0..n)));
    reshape_float::<B>(B::float_slice(p, &ranges), d[1..].to_vec())
}

/// The weight gradient of a (transposed) convolution, per member.
///
/// Computes, with the inner convolution `f` (stride and dilation swapped, no bias), the
/// correlation of `a` (`[N, g*ca, ...]`, the convolution's input side) with `b` (`[N, g*cb, ...]`):
/// the result is `[g*cb, ca, ks]` (`[K, g*cb, ca, ks]` when batched). For a convolution
/// `a = x, b = output_grad`; for a transposed convolution `a = output_grad, b = x`.
fn conv_weight_grad<B: Backend>(
    op: &str,
    a: VmapTensor<FloatPrim<B>>,
    b: VmapTensor<FloatPrim<B>>,
    g: usize,
    ks: &[usize],
    f: &dyn Fn(FloatPrim<B>, FloatPrim<B>, usize) -> FloatPrim<B>,
) -> VmapTensor<FloatPrim<B>> {
    let k = check_members(op, a.members, b.members);
    let ad = a.shape().to_vec();
    let bd = b.shape().to_vec();
    let n = ad[0];
    let (ca, cb) = (ad[1] / g, bd[1] / g);
    let (as_, bs) = (&ad[2..], &bd[2..]);
    let sp = as_.len();
    // The unbatched forms of each side.
    let a_single = |p: FloatPrim<B>| {
        let p = reshape_float::<B>(p, vec![n, g, ca, dims_product(as_)]);
        let p = permute_float::<B>(p, &[2, 1, 0, 3]);
        reshape_float::<B>(p, concat_dims(&[&[ca, g * n], as_]))
    };
    let b_single = |p: FloatPrim<B>| {
        let p = reshape_float::<B>(p, vec![n, g, cb, dims_product(bs)]);
        let p = permute_float::<B>(p, &[1, 2, 0, 3]);
        reshape_float::<B>(p, concat_dims(&[&[g * cb], &[n], bs]))
    };
    match (a.batched, b.batched) {
        (false, false) => {
            let out = f(a_single(a.inner), b_single(b.inner), g); // [ca, g*cb, k']
            let out = permute_float::<B>(out, &head_then_axes(&[1, 0], 2, sp));
            VmapTensor::unbatched(crop_to::<B>(out, &concat_dims(&[&[g * cb, ca], ks])), k)
        }
        (true, true) if loops_over_members::<B>() => {
            let (ai, bi) = (a.inner, b.inner);
            let outs = (0..k)
                .map(|m| {
                    let a = a_single(member_slice::<B>(ai.clone(), m));
                    let b = b_single(member_slice::<B>(bi.clone(), m));
                    let out = f(a, b, g); // [ca, g*cb, k']
                    let out = permute_float::<B>(out, &head_then_axes(&[1, 0], 2, sp));
                    let out = crop_to::<B>(out, &concat_dims(&[&[g * cb, ca], ks]));
                    let d = shape_dims(&out);
                    reshape_float::<B>(out, concat_dims(&[&[1], &d]))
                })
                .collect();
            VmapTensor::batched(B::float_cat(outs, 0), k)
        }
        (true, true) => {
            let ai = reshape_float::<B>(a.inner, vec![k, n, g, ca, dims_product(as_)]);
            let ai = permute_float::<B>(ai, &[3, 0, 2, 1, 4]);
            let ai = reshape_float::<B>(ai, concat_dims(&[&[ca, k * g * n], as_]));
            let bi = reshape_float::<B>(b.inner, vec![k, n, g, cb, dims_product(bs)]);
            let bi = permute_float::<B>(bi, &[0, 2, 3, 1, 4]);
            let bi = reshape_float::<B>(bi, concat_dims(&[&[k * g * cb, n], bs]));
            let out = f(ai, bi, k * g); // [ca, K*g*cb, k']
            let kd = shape_dims(&out)[2..].to_vec();
            let out = reshape_float::<B>(out, concat_dims(&[&[ca, k, g * cb], &kd]));
            let out = permute_float::<B>(out, &head_then_axes(&[1, 2, 0], 3, sp));
            VmapTensor::batched(crop_to::<B>(out, &concat_dims(&[&[k, g * cb, ca], ks])), k)
        }
        (false, true) => {
            let ai = a_single(a.inner);
            let bi = reshape_float::<B>(b.inner, vec![k, n, g, cb, dims_product(bs)]);
            let bi = permute_float::<B>(bi, &[2, 0, 3, 1, 4]);
            let bi = reshape_float::<B>(bi, concat_dims(&[&[g * k * cb, n], bs]));
            let out = f(ai, bi, g); // [ca, g*K*cb, k']
            let kd = shape_dims(&out)[2..].to_vec();
            let out = reshape_float::<B>(out, vec![ca, g, k, cb, dims_product(&kd)]);
            let out = permute_float::<B>(out, &[2, 1, 3, 0, 4]);
            let out = reshape_float::<B>(out, concat_dims(&[&[k, g * cb, ca], &kd]));
            VmapTensor::batched(crop_to::<B>(out, &concat_dims(&[&[k, g * cb, ca], ks])), k)
        }
        (true, false) => {
            let ai = reshape_float::<B>(a.inner, vec![k, n, g, ca, dims_product(as_)]);
            let ai = permute_float::<B>(ai, &[0, 3, 2, 1, 4]);
            let ai = reshape_float::<B>(ai, concat_dims(&[&[k * ca, g * n], as_]));
            let bi = b_single(b.inner);
            let out = f(ai, bi, g); // [K*ca, g*cb, k']
            let kd = shape_dims(&out)[2..].to_vec();
            let out = reshape_float::<B>(out, concat_dims(&[&[k, ca, g * cb], &kd]));
            let out = permute_float::<B>(out, &head_then_axes(&[0, 2, 1], 3, sp));
            VmapTensor::batched(crop_to::<B>(out, &concat_dims(&[&[k, g * cb, ca], ks])), k)
        }
    }
}

/// The bias gradient of a (transposed) convolution: the output gradient summed over every axis
/// but the channels, per member.
fn conv_bias_grad<B: Backend>(
    op: &str,
    x: &VmapTensor<FloatPrim<B>>,
    bias: &VmapTensor<FloatPrim<B>>,
    grad: VmapTensor<FloatPrim<B>>,
) -> VmapTensor<FloatPrim<B>> {
    let k = common_members(op, &[x.members, bias.members, grad.members]);
    let batched = grad.batched;
    let spatial = shape_dims(&grad.inner).len() - 2 - batched as usize;
    if runs_on_host::<B>(&grad.inner, spatial) {
        let out = host_bias_grad::<B>(front::<B, FloatKind>(grad)); // [K', O]
        return if batched {
            VmapTensor::batched(out, k)
        } else {
            VmapTensor::unbatched(reshape_float::<B>(out, bias.shape().to_vec()), k)
        };
    }
    let p = grad.inner;
    let d = shape_dims(&p);
    let lead = batched as usize;
    let o = d[lead + 1];
    let rest: usize = d[lead..].iter().product::<usize>() / o;
    let p = B::float_swap_dims(p, lead, lead + 1);
    let out = if batched {
        let p = reshape_float::<B>(p, vec![k, o, rest]);
        let p = B::float_sum_dim(p, 2);
        reshape_float::<B>(p, vec![k, o])
    } else {
        let p = reshape_float::<B>(p, vec![o, rest]);
        let p = B::float_sum_dim(p, 1);
        reshape_float::<B>(p, bias.shape().to_vec())
    };
    VmapTensor::new(out, batched, k)
}

/// `ConvOptions` with another group count.
fn conv_options_with_groups<const N: usize>(o: &ConvOptions<N>, groups: usize) -> ConvOptions<N> {
    ConvOptions {
        groups,
        ..o.clone()
    }
}

fn conv_transpose_options_with_groups<const N: usize>(
    o: &ConvTransposeOptions<N>,
    groups: usize,
) -> ConvTransposeOptions<N> {
    ConvTransposeOptions {
        groups,
        ..o.clone()
    }
}

/// The options of the weight-gradient correlation: stride and dilation swapped.
fn swapped_opts<const N: usize>(
    stride: [usize; N],
    padding: [usize; N],
    dilation: [usize; N],
    groups: usize,
) -> ConvOptions<N> {
    ConvOptions {
        stride: dilation,
        padding,
        dilation: stride,
        groups,
    }
}

/// The transposed-conv options that map a conv's output gradient back to its input size.
fn x_backward_opts<const N: usize>(
    x_shape: &[usize],
    w_shape: &[usize],
    grad_shape: &[usize],
    o: &ConvOptions<N>,
) -> ConvTransposeOptions<N> {
    let mut padding_out = [0usize; N];
    for i in 0..N {
        padding_out[i] = burn_backend::ops::conv::calculate_padding_out(
            w_shape[2 + i],
            o.stride[i],
            o.padding[i],
            o.dilation[i],
            x_shape[2 + i],
            grad_shape[2 + i],
        );
    }
    ConvTransposeOptions {
        stride: o.stride,
        padding: o.padding,
        padding_out,
        dilation: o.dilation,
        groups: o.groups,
    }
}

/// The input gradient of a transposed convolution: a convolution, sliced to the input size.
fn transpose_x_backward<B: Backend, const N: usize>(
    op: &str,
    weight: VmapTensor<FloatPrim<B>>,
    grad: VmapTensor<FloatPrim<B>>,
    o: &ConvTransposeOptions<N>,
    f: ConvFn<'_, B>,
) -> VmapTensor<FloatPrim<B>> {
    let w_shape = weight.shape().to_vec();
    let g_shape = grad.shape().to_vec();
    let out = conv_forward::<B>(op, grad, weight, None, o.groups, false, f);
    if o.padding_out.iter().all(|&p| p == 0) {
        return out;
    }
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

/// Member `m` of `t` as an unbatched inner tensor of the logical shape.
fn member_inner<B: Backend>(t: &VmapTensor<FloatPrim<B>>, m: usize) -> FloatPrim<B> {
    if !t.batched {
        return t.inner.clone();
    }
    let d = shape_dims(&t.inner);
    let mut slices: Vec<Slice> = d.iter().map(|&n| Slice::from(0..n)).collect();
    slices[0] = Slice::from(m..m + 1);
    let p = B::float_slice(t.inner.clone(), &slices);
    reshape_float::<B>(p, d[1..].to_vec())
}

/// Stacks equally shaped inner tensors along a new leading member axis.
fn stack_members_axis<B: Backend>(parts: Vec<FloatPrim<B>>) -> FloatPrim<B> {
    let parts = parts
        .into_iter()
        .map(|p| {
            let d = shape_dims(&p);
            reshape_float::<B>(p, concat_dims(&[&[1], &d]))
        })
        .collect();
    B::float_cat(parts, 0)
}

/// Deformable-conv options for K members folded into the channels.
fn deform_options_for_members(o: &DeformConvOptions<2>, k: usize) -> DeformConvOptions<2> {
    DeformConvOptions {
        weight_groups: o.weight_groups * k,
        offset_groups: o.offset_groups * k,
        ..o.clone()
    }
}

/// The op names of one dimension count, for panic messages: `conv{N}d`, its three gradients,
/// `conv_transpose{N}d` and its three.
pub(super) struct ConvNames {
    conv: &'static str,
    x_backward: &'static str,
    weight_backward: &'static str,
    bias_backward: &'static str,
    transpose: &'static str,
    transpose_x_backward: &'static str,
    transpose_weight_backward: &'static str,
    transpose_bias_backward: &'static str,
}

/// What differs between the 1-, 2- and 3-d convolutions: the inner backend's ops and the op
/// names. The batching rules below are written once, for every `Dims<N>` that implements it.
pub(super) trait ConvDims<const N: usize> {
    /// The op names.
    const NAMES: ConvNames;

    /// The inner backend's N-d convolution.
    fn conv<B: Backend>(
        x: FloatPrim<B>,
        weight: FloatPrim<B>,
        bias: Option<FloatPrim<B>>,
        options: ConvOptions<N>,
    ) -> FloatPrim<B>;

    /// The inner backend's N-d transposed convolution.
    fn conv_transpose<B: Backend>(
        x: FloatPrim<B>,
        weight: FloatPrim<B>,
        bias: Option<FloatPrim<B>>,
        options: ConvTransposeOptions<N>,
    ) -> FloatPrim<B>;

    /// The transposed convolution the input gradient of [`ConvDims::conv`] uses on the
    /// per-member path: the inner backend's own, except in 2-d (see
    /// `conv_transpose2d_by_conv2d`).
    fn conv_transpose_for_x_grad<B: Backend>(
        x: FloatPrim<B>,
        weight: FloatPrim<B>,
        bias: Option<FloatPrim<B>>,
        options: ConvTransposeOptions<N>,
    ) -> FloatPrim<B> {
        Self::conv_transpose::<B>(x, weight, bias, options)
    }
}

/// The dimension count of a convolution, as a type ([`ConvDims`] for N = 1, 2, 3).
pub(super) struct Dims<const N: usize>;

/// One [`ConvDims`] impl: the dimension count and the inner ops.
macro_rules! conv_dims {
    ($n:literal, $conv:ident, $transpose:ident $(, x_grad: $x_grad:ident)?) => {
        impl ConvDims<$n> for Dims<$n> {
            const NAMES: ConvNames = ConvNames {
                conv: concat!("conv", $n, "d"),
                x_backward: concat!("conv", $n, "d_x_backward"),
                weight_backward: concat!("conv", $n, "d_weight_backward"),
                bias_backward: concat!("conv", $n, "d_bias_backward"),
                transpose: concat!("conv_transpose", $n, "d"),
                transpose_x_backward: concat!("conv_transpose", $n, "d_x_backward"),
                transpose_weight_backward: concat!("conv_transpose", $n, "d_weight_backward"),
                transpose_bias_backward: concat!("conv_transpose", $n, "d_bias_backward"),
            };

            fn conv<B: Backend>(
                x: FloatPrim<B>,
                weight: FloatPrim<B>,
                bias: Option<FloatPrim<B>>,
                options: ConvOptions<$n>,
            ) -> FloatPrim<B> {
                B::$conv(x, weight, bias, options)
            }

            fn conv_transpose<B: Backend>(
                x: FloatPrim<B>,
                weight: FloatPrim<B>,
                bias: Option<FloatPrim<B>>,
                options: ConvTransposeOptions<$n>,
            ) -> FloatPrim<B> {
                B::$transpose(x, weight, bias, options)
            }

            $(
                fn conv_transpose_for_x_grad<B: Backend>(
                    x: FloatPrim<B>,
                    weight: FloatPrim<B>,
                    bias: Option<FloatPrim<B>>,
                    options: ConvTransposeOptions<$n>,
                ) -> FloatPrim<B> {
                    $x_grad::<B>(x, weight, bias, options)
                }
            )?
        }
    };
}

conv_dims!(1, conv1d, conv_transpose1d);
conv_dims!(2, conv2d, conv_transpose2d, x_grad: conv_transpose2d_by_conv2d);
conv_dims!(3, conv3d, conv_transpose3d);

pub(super) fn conv<B: Backend, const N: usize>(
    x: FloatTensor<Vmap<B>>,
    weight: FloatTensor<Vmap<B>>,
    bias: Option<FloatTensor<Vmap<B>>>,
    options: ConvOptions<N>,
) -> FloatTensor<Vmap<B>>
where
    Dims<N>: ConvDims<N>,
{
    let op = Dims::<N>::NAMES.conv;
    if lowers_to_gemm::<B>() {
        return vmap_conv::<B>(op, x, weight, bias, &geometry(&options));
    }
    let f = |x, w, b, g| Dims::<N>::conv::<B>(x, w, b, conv_options_with_groups(&options, g));
    conv_forward::<B>(op, x, weight, bias, options.groups, false, &f)
}

pub(super) fn conv_x_backward<B: Backend, const N: usize>(
    x: FloatTensor<Vmap<B>>,
    weight: FloatTensor<Vmap<B>>,
    output_grad: FloatTensor<Vmap<B>>,
    options: ConvOptions<N>,
) -> FloatTensor<Vmap<B>>
where
    Dims<N>: ConvDims<N>,
{
    let op = Dims::<N>::NAMES.x_backward;
    check_members(op, x.members, weight.members);
    if lowers_to_gemm::<B>() {
        let input = x.shape().to_vec()[2..].to_vec();
        return vmap_conv_x_grad::<B>(op, output_grad, weight, None, &geometry(&options), &input);
    }
    let o = x_backward_opts(&x.shape(), &weight.shape(), &output_grad.shape(), &options);
    let f = |x, w, b, g| {
        Dims::<N>::conv_transpose_for_x_grad::<B>(
            x,
            w,
            b,
            conv_transpose_options_with_groups(&o, g),
        )
    };
    conv_forward::<B>(op, output_grad, weight, None, o.groups, true, &f)
}

pub(super) fn conv_weight_backward<B: Backend, const N: usize>(
    x: FloatTensor<Vmap<B>>,
    weight: FloatTensor<Vmap<B>>,
    output_grad: FloatTensor<Vmap<B>>,
    options: ConvOptions<N>,
) -> FloatTensor<Vmap<B>>
where
    Dims<N>: ConvDims<N>,
{
    let op = Dims::<N>::NAMES.weight_backward;
    check_members(op, x.members, weight.members);
    let ks = weight.shape().to_vec()[2..].to_vec();
    if lowers_to_gemm::<B>() {
        return vmap_conv_weight_grad::<B>(op, x, output_grad, &geometry(&options), &ks);
    }
    let f = |a, b, g| {
        let o = swapped_opts(options.stride, options.padding, options.dilation, g);
        Dims::<N>::conv::<B>(a, b, None, o)
    };
    conv_weight_grad::<B>(op, x, output_grad, options.groups, &ks, &f)
}

pub(super) fn conv_bias_backward<B: Backend, const N: usize>(
    x: FloatTensor<Vmap<B>>,
    bias: FloatTensor<Vmap<B>>,
    output_grad: FloatTensor<Vmap<B>>,
) -> FloatTensor<Vmap<B>>
where
    Dims<N>: ConvDims<N>,
{
    conv_bias_grad::<B>(Dims::<N>::NAMES.bias_backward, &x, &bias, output_grad)
}

pub(super) fn conv_transpose<B: Backend, const N: usize>(
    x: FloatTensor<Vmap<B>>,
    weight: FloatTensor<Vmap<B>>,
    bias: Option<FloatTensor<Vmap<B>>>,
    options: ConvTransposeOptions<N>,
) -> FloatTensor<Vmap<B>>
where
    Dims<N>: ConvDims<N>,
{
    let op = Dims::<N>::NAMES.transpose;
    if lowers_to_gemm::<B>() {
        return gemm_conv_transpose::<B, N>(op, x, weight, bias, &options);
    }
    let f = |x, w, b, g| {
        Dims::<N>::conv_transpose::<B>(x, w, b, conv_transpose_options_with_groups(&options, g))
    };
    conv_forward::<B>(op, x, weight, bias, options.groups, true, &f)
}

pub(super) fn conv_transpose_x_backward<B: Backend, const N: usize>(
    weight: FloatTensor<Vmap<B>>,
    output_grad: FloatTensor<Vmap<B>>,
    options: ConvTransposeOptions<N>,
) -> FloatTensor<Vmap<B>>
where
    Dims<N>: ConvDims<N>,
{
    let op = Dims::<N>::NAMES.transpose_x_backward;
    if lowers_to_gemm::<B>() {
        return gemm_conv_transpose_x_backward::<B, N>(op, weight, output_grad, &options);
    }
    let f = |x, w, b, g| {
        let o = ConvOptions::new(options.stride, options.padding, options.dilation, g);
        Dims::<N>::conv::<B>(x, w, b, o)
    };
    transpose_x_backward::<B, N>(op, weight, output_grad, &options, &f)
}

pub(super) fn conv_transpose_weight_backward<B: Backend, const N: usize>(
    x: FloatTensor<Vmap<B>>,
    weight: FloatTensor<Vmap<B>>,
    output_grad: FloatTensor<Vmap<B>>,
    options: ConvTransposeOptions<N>,
) -> FloatTensor<Vmap<B>>
where
    Dims<N>: ConvDims<N>,
{
    let op = Dims::<N>::NAMES.transpose_weight_backward;
    check_members(op, x.members, weight.members);
    let ks = weight.shape().to_vec()[2..].to_vec();
    if lowers_to_gemm::<B>() {
        return vmap_conv_weight_grad::<B>(op, output_grad, x, &geometry_transposed(&options), &ks);
    }
    let f = |a, b, g| {
        let o = swapped_opts(options.stride, options.padding, options.dilation, g);
        Dims::<N>::conv::<B>(a, b, None, o)
    };
    conv_weight_grad::<B>(op, output_grad, x, options.groups, &ks, &f)
}

pub(super) fn conv_transpose_bias_backward<B: Backend, const N: usize>(
    x: FloatTensor<Vmap<B>>,
    bias: FloatTensor<Vmap<B>>,
    output_grad: FloatTensor<Vmap<B>>,
) -> FloatTensor<Vmap<B>>
where
    Dims<N>: ConvDims<N>,
{
    conv_bias_grad::<B>(
        Dims::<N>::NAMES.transpose_bias_backward,
        &x,
        &bias,
        output_grad,
    )
}

pub(super) fn deform_conv2d<B: Backend>(
    x: FloatTensor<Vmap<B>>,
    offset: FloatTensor<Vmap<B>>,
    weight: FloatTensor<Vmap<B>>,
    mask: Option<FloatTensor<Vmap<B>>>,
    bias: Option<FloatTensor<Vmap<B>>>,
    options: DeformConvOptions<2>,
) -> FloatTensor<Vmap<B>> {
    let mut counts = vec![x.members, offset.members, weight.members];
    counts.extend(mask.iter().map(|m| m.members));
    counts.extend(bias.iter().map(|b| b.members));
    let k = common_members("deform_conv2d", &counts);
    let any = x.batched
        || offset.batched
        || weight.batched
        || mask.as_ref().is_some_and(|m| m.batched)
        || bias.as_ref().is_some_and(|b| b.batched);
    if !any {
        return VmapTensor::unbatched(
            B::deform_conv2d(
                x.inner,
                offset.inner,
                weight.inner,
                mask.map(|m| m.inner),
                bias.map(|b| b.inner),
                options,
            ),
            k,
        );
    }
    // K folded into the channels: K times the weight and offset groups.
    let out = B::deform_conv2d(
        merge_members_into_channels::<B>(materialize::<B, FloatKind>(x)),
        merge_members_into_channels::<B>(materialize::<B, FloatKind>(offset)),
        merge_members_into_batch::<B>(materialize::<B, FloatKind>(weight)),
        mask.map(|m| merge_members_into_channels::<B>(materialize::<B, FloatKind>(m))),
        bias.map(|b| merge_members_into_batch::<B>(materialize::<B, FloatKind>(b))),
        deform_options_for_members(&options, k),
    );
    VmapTensor::batched(split_members_from_channels::<B>(out, k), k)
}

pub(super) fn deform_conv2d_backward<B: Backend>(
    x: FloatTensor<Vmap<B>>,
    offset: FloatTensor<Vmap<B>>,
    weight: FloatTensor<Vmap<B>>,
    mask: Option<FloatTensor<Vmap<B>>>,
    bias: Option<FloatTensor<Vmap<B>>>,
    output_grad: FloatTensor<Vmap<B>>,
    options: DeformConvOptions<2>,
) -> DeformConv2dBackward<Vmap<B>> {
    let mut counts = vec![
        x.members,
        offset.members,
        weight.members,
        output_grad.members,
    ];
    counts.extend(mask.iter().map(|m| m.members));
    counts.extend(bias.iter().map(|b| b.members));
    let k = common_members("deform_conv2d_backward", &counts);
    let any = x.batched
        || offset.batched
        || weight.batched
        || output_grad.batched
        || mask.as_ref().is_some_and(|m| m.batched)
        || bias.as_ref().is_some_and(|b| b.batched);
    if !any {
        let g = B::deform_conv2d_backward(
            x.inner,
            offset.inner,
            weight.inner,
            mask.map(|m| m.inner),
            bias.map(|b| b.inner),
            output_grad.inner,
            options,
        );
        let u = |p| VmapTensor::unbatched(p, k);
        return DeformConv2dBackward::new(
            u(g.x_grad),
            u(g.offset_grad),
            u(g.weight_grad),
            g.mask_grad.map(u),
            g.bias_grad.map(u),
        );
    }
    // One inner call per member: the inner backward's offset and mask gradients need not
    // support the K-fold offset groups a channel fold would use (NdArray's read the columns
    // of the first offset group only), so the members are computed apart and stacked.
    let parts: Vec<_> = (0..k)
        .map(|m| {
            B::deform_conv2d_backward(
                member_inner::<B>(&x, m),
                member_inner::<B>(&offset, m),
                member_inner::<B>(&weight, m),
                mask.as_ref().map(|t| member_inner::<B>(t, m)),
                bias.as_ref().map(|t| member_inner::<B>(t, m)),
                member_inner::<B>(&output_grad, m),
                options.clone(),
            )
        })
        .collect();
    let mut xs = Vec::with_capacity(k);
    let mut offs = Vec::with_capacity(k);
    let mut ws = Vec::with_capacity(k);
    let mut masks = Vec::with_capacity(k);
    let mut biases = Vec::with_capacity(k);
    for p in parts {
        xs.push(p.x_grad);
        offs.push(p.offset_grad);
        ws.push(p.weight_grad);
        masks.extend(p.mask_grad);
        biases.extend(p.bias_grad);
    }
    let st = |v: Vec<FloatPrim<B>>| VmapTensor::batched(stack_members_axis::<B>(v), k);
    DeformConv2dBackward::new(
        st(xs),
        st(offs),
        st(ws),
        (!masks.is_empty()).then(|| st(masks)),
        (!biases.is_empty()).then(|| st(biases)),
    )
}

pub(super) fn unfold4d<B: Backend>(
    x: FloatTensor<Vmap<B>>,
    kernel_size: [usize; 2],
    options: UnfoldOptions,
) -> FloatTensor<Vmap<B>> {
    with_members_in_batch::<B>(x, |x| B::unfold4d(x, kernel_size, options))
}
