//! Batching rules for `ModuleOps`.
//!
//! The rules, by family:
//! - **pooling, interpolation, unfold, attention, ctc**: the member axis is folded into the batch
//!   axis (`[K, N, ...] -> [K*N, ...]`), the inner op runs once, and the result is split again.
//!   Operands of a multi-operand op are materialized (`[K, ...]`) when any of them is batched.
//! - **convolutions** (conv1d/2d/3d, the transposed forms, their input and weight gradients) are
//!   lowered, per inner backend type ([`ConvLowering`]), either to unfold + ONE K-batched matrix
//!   product (`conv_gemm.rs`; every backend but NdArray by default), or to the inner backend's
//!   own convolution (NdArray's default, bit-exact against plain NdArray): on NdArray one call
//!   per member when input and weights are both batched; elsewhere an unbatched input with
//!   batched weights runs against the K weight sets laid side by side in the output-channel axis
//!   (reordered group-major when `groups > 1`); a batched input with batched weights folds K into
//!   the channel axis with `groups * K`; a batched input with shared weights folds K into the
//!   batch axis. The backward ops use the same folds, so every combination gives the exact
//!   per-member gradient (a gradient with respect to a shared operand is batched, one per
//!   member, whenever another operand is batched).
//! - **linear**: an unbatched input times batched weights is ONE matrix product against the
//!   weights laid side by side (`[M, din] @ [din, K*dout]`); a batched input times shared weights
//!   folds K into the rows.
//! - **embedding**: batched tables with batched indices offset the indices by `k * V` into the
//!   flattened `[K*V, D]` table.

use burn_backend::ops::*;
use burn_backend::tensor::*;
use burn_backend::{Backend, BackendTypes, TensorMetadata};
use burn_backend::{Shape, Slice};

use super::conv_gemm::{self, conv_lowering, ConvLowering, Geometry};
use crate::tensor::*;
use crate::Vmap;

type Fp<B> = <B as BackendTypes>::FloatTensorPrimitive;
type Ip<B> = <B as BackendTypes>::IntTensorPrimitive;
type Vt<B> = VmapTensor<Fp<B>>;

// ---------------------------------------------------------------------------------------------
// Shape helpers on inner tensors.
// ---------------------------------------------------------------------------------------------

fn dims<P: TensorMetadata>(p: &P) -> Vec<usize> {
    p.shape().to_vec()
}

fn rs<B: Backend>(p: Fp<B>, dims: Vec<usize>) -> Fp<B> {
    B::float_reshape(p, Shape::from(dims))
}

fn rs_int<B: Backend>(p: Ip<B>, dims: Vec<usize>) -> Ip<B> {
    B::int_reshape(p, Shape::from(dims))
}

fn pm<B: Backend>(p: Fp<B>, axes: &[usize]) -> Fp<B> {
    B::float_permute(p, axes)
}

/// `head` followed by the axes `start..start + count`.
fn axes(head: &[usize], start: usize, count: usize) -> Vec<usize> {
    let mut a = head.to_vec();
    a.extend(start..start + count);
    a
}

/// The number of elements of `dims`.
fn prod(dims: &[usize]) -> usize {
    dims.iter().product()
}

/// Concatenates dimension lists.
fn cat(parts: &[&[usize]]) -> Vec<usize> {
    parts.iter().flat_map(|p| p.iter().copied()).collect()
}

/// `[K, N, ...] -> [K*N, ...]`.
fn merge01<B: Backend>(p: Fp<B>) -> Fp<B> {
    let mut d = dims(&p);
    let k = d.remove(0);
    d[0] *= k;
    rs::<B>(p, d)
}

fn merge01_int<B: Backend>(p: Ip<B>) -> Ip<B> {
    let mut d = dims(&p);
    let k = d.remove(0);
    d[0] *= k;
    rs_int::<B>(p, d)
}

/// `[K*N, ...] -> [K, N, ...]`.
fn split0<B: Backend>(p: Fp<B>, k: usize) -> Fp<B> {
    let mut d = dims(&p);
    d[0] /= k;
    d.insert(0, k);
    rs::<B>(p, d)
}

fn split0_int<B: Backend>(p: Ip<B>, k: usize) -> Ip<B> {
    let mut d = dims(&p);
    d[0] /= k;
    d.insert(0, k);
    rs_int::<B>(p, d)
}

/// `[K, N, C, ...] -> [N, K*C, ...]`.
fn fold_ch<B: Backend>(p: Fp<B>) -> Fp<B> {
    let d = dims(&p);
    let rest = d.len() - 3;
    let p = pm::<B>(p, &axes(&[1, 0, 2], 3, rest));
    rs::<B>(p, cat(&[&[d[1], d[0] * d[2]], &d[3..]]))
}

/// `[N, K*C, ...] -> [K, N, C, ...]`.
fn split_ch<B: Backend>(p: Fp<B>, k: usize) -> Fp<B> {
    let d = dims(&p);
    let rest = d.len() - 2;
    let p = rs::<B>(p, cat(&[&[d[0], k, d[1] / k], &d[2..]]));
    pm::<B>(p, &axes(&[1, 0, 2], 3, rest))
}

/// Slices every axis of `p` to `0..target[i]` when the shapes differ.
fn slice_to<B: Backend>(p: Fp<B>, target: &[usize]) -> Fp<B> {
    if dims(&p) == target {
        return p;
    }
    let slices: Vec<Slice> = target.iter().map(|&t| Slice::from(0..t)).collect();
    B::float_slice(p, &slices)
}

fn mat<B: Backend>(t: Vt<B>) -> Fp<B> {
    materialize::<B, FloatKind>(t)
}

fn mat_int<B: Backend>(t: VmapTensor<Ip<B>>) -> Ip<B> {
    materialize::<B, IntKind>(t)
}

/// The members of all operands (checked equal).
fn members_of(op: &str, counts: &[usize]) -> usize {
    counts
        .iter()
        .copied()
        .reduce(|a, b| check_members(op, a, b))
        .unwrap_or(1)
}

/// Runs a one-operand op with K folded into the batch axis.
fn fold_batch1<B: Backend>(x: Vt<B>, f: impl FnOnce(Fp<B>) -> Fp<B>) -> Vt<B> {
    if x.batched {
        let k = x.members;
        VmapTensor::batched(split0::<B>(f(merge01::<B>(x.inner)), k), k)
    } else {
        x.map(f)
    }
}

/// Runs a two-operand op (e.g. `x` and a gradient) with K folded into the batch axis; both are
/// materialized when either is batched.
fn fold_batch2<B: Backend>(
    op: &str,
    x: Vt<B>,
    y: Vt<B>,
    f: impl FnOnce(Fp<B>, Fp<B>) -> Fp<B>,
) -> Vt<B> {
    let k = check_members(op, x.members, y.members);
    if !x.batched && !y.batched {
        return VmapTensor::unbatched(f(x.inner, y.inner), k);
    }
    let x = merge01::<B>(mat::<B>(x));
    let y = merge01::<B>(mat::<B>(y));
    VmapTensor::batched(split0::<B>(f(x, y), k), k)
}

/// An unbatched inner tensor with the logical shape of `t` (member 0 when batched). For inner
/// ops that only read an operand's shape.
fn any_member<B: Backend>(t: Vt<B>) -> Fp<B> {
    if !t.batched {
        return t.inner;
    }
    let d = dims(&t.inner);
    let mut slices: Vec<Slice> = d.iter().map(|&n| Slice::from(0..n)).collect();
    slices[0] = Slice::from(0..1);
    let p = B::float_slice(t.inner, &slices);
    rs::<B>(p, d[1..].to_vec())
}

// ---------------------------------------------------------------------------------------------
// Convolutions.
// ---------------------------------------------------------------------------------------------

/// An inner convolution (or transposed convolution) with the options captured and the group
/// count given.
type ConvFn<'a, B> = &'a dyn Fn(Fp<B>, Fp<B>, Option<Fp<B>>, usize) -> Fp<B>;

/// Adds a batched bias `[K, O]` to a conv output with channels in axis 1 of the logical shape.
/// `out` is batched (`[K, N, O, ...]`) when `out_batched`, else `[N, O, ...]`.
fn add_bias_after<B: Backend>(out: Fp<B>, out_batched: bool, bias: Vt<B>) -> Fp<B> {
    let k = bias.members;
    let out = if out_batched {
        out
    } else {
        let d = dims(&out);
        rs::<B>(out, cat(&[&[1], &d]))
    };
    let rank = dims(&out).len();
    let o = dims(&bias.inner)[1];
    let mut bd = vec![1usize; rank];
    bd[0] = k;
    bd[2] = o;
    let b = rs::<B>(bias.inner, bd);
    B::float_add(out, b)
}

/// `[N, g*K*og, ...] -> [K, N, g*og, ...]`.
fn split_gk<B: Backend>(out: Fp<B>, k: usize, g: usize) -> Fp<B> {
    if g == 1 {
        return split_ch::<B>(out, k);
    }
    let d = dims(&out);
    let og = d[1] / (g * k);
    let out = rs::<B>(out, vec![d[0], g, k, og, prod(&d[2..])]);
    let out = pm::<B>(out, &[2, 0, 1, 3, 4]);
    rs::<B>(out, cat(&[&[k, d[0], g * og], &d[2..]]))
}

/// A bias `[K, g*og]` (materialized) reordered group-major: `[g*K*og]`.
fn bias_gk<B: Backend>(bias: Vt<B>, g: usize) -> Fp<B> {
    let k = bias.members;
    let b = mat::<B>(bias);
    let o = dims(&b)[1];
    if g == 1 {
        return rs::<B>(b, vec![k * o]);
    }
    let b = rs::<B>(b, vec![k, g, o / g]);
    let b = pm::<B>(b, &[1, 0, 2]);
    rs::<B>(b, vec![k * o])
}

/// Forward (transposed) convolution for every batching of `x`, `weight` and `bias`.
///
/// Weight layouts: convolution `[O, C/g, k...]`, transposed `[C, O/g, k...]`.
fn conv_forward<B: Backend>(
    op: &str,
    x: Vt<B>,
    weight: Vt<B>,
    bias: Option<Vt<B>>,
    groups: usize,
    transposed: bool,
    f: ConvFn<'_, B>,
) -> Vt<B> {
    let mut counts = vec![x.members, weight.members];
    if let Some(b) = &bias {
        counts.push(b.members);
    }
    let k = members_of(op, &counts);
    let g = groups;
    match (x.batched, weight.batched) {
        (xb, false) => {
            let xi = if xb { merge01::<B>(x.inner) } else { x.inner };
            let (b_in, b_after) = match bias {
                Some(b) if b.batched => (None, Some(b)),
                Some(b) => (Some(b.inner), None),
                None => (None, None),
            };
            let out = f(xi, weight.inner, b_in, g);
            let out = if xb { split0::<B>(out, k) } else { out };
            match b_after {
                Some(b) => VmapTensor::batched(add_bias_after::<B>(out, xb, b), k),
                None => VmapTensor::new(out, xb, k),
            }
        }
        (false, true) => {
            // One convolution against the K weight sets side by side (group-major).
            let wd = dims(&weight.inner); // [K, a, b, ks]
            let sp = wd.len() - 3;
            let ks = &wd[3..];
            let w = if g == 1 {
                if transposed {
                    // [K, C, og, ks] -> [C, K*og, ks]
                    let w = pm::<B>(weight.inner, &axes(&[1, 0, 2], 3, sp));
                    rs::<B>(w, cat(&[&[wd[1], k * wd[2]], ks]))
                } else {
                    rs::<B>(weight.inner, cat(&[&[k * wd[1], wd[2]], ks]))
                }
            } else if transposed {
                // [K, g, cg, og, ks] -> [g, cg, K, og, ks] -> [C, K*og, ks]
                let cg = wd[1] / g;
                let w = rs::<B>(weight.inner, vec![k, g, cg, wd[2], prod(ks)]);
                let w = pm::<B>(w, &[1, 2, 0, 3, 4]);
                rs::<B>(w, cat(&[&[wd[1], k * wd[2]], ks]))
            } else {
                // [K, g, og, cg, ks] -> [g, K, og, cg, ks] -> [g*K*og, cg, ks]
                let og = wd[1] / g;
                let w = rs::<B>(weight.inner, vec![k, g, og, wd[2], prod(ks)]);
                let w = pm::<B>(w, &[1, 0, 2, 3, 4]);
                rs::<B>(w, cat(&[&[k * wd[1], wd[2]], ks]))
            };
            let b = bias.map(|b| bias_gk::<B>(b, g));
            let out = f(x.inner, w, b, g);
            VmapTensor::batched(split_gk::<B>(out, k, g), k)
        }
        (true, true) if member_loop::<B>() => {
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
                    let d = dims(&out);
                    rs::<B>(out, cat(&[&[1], &d]))
                })
                .collect();
            VmapTensor::batched(B::float_cat(outs, 0), k)
        }
        (true, true) => {
            // K folded into the channels, one group set per member.
            let xi = fold_ch::<B>(x.inner);
            let w = merge01::<B>(weight.inner);
            let b = bias.map(|b| {
                let b = mat::<B>(b);
                let d = dims(&b);
                rs::<B>(b, vec![d[0] * d[1]])
            });
            let out = f(xi, w, b, g * k);
            VmapTensor::batched(split_ch::<B>(out, k), k)
        }
    }
}

/// Whether convolutions whose input and weights are both per member run as one inner call per
/// member instead of one grouped call with K times the groups (under
/// [`ConvLowering::InnerConvolution`]).
///
/// NdArray's convolution handles one group set well but many groups poorly, so on NdArray a loop
/// over members is faster (measured on the benchmark CNN with `perf`). On GPU backends one
/// grouped launch is the efficient form.
fn member_loop<B: Backend>() -> bool {
    conv_gemm::is_ndarray::<B>()
}

/// Member `m` of a batched inner tensor `[K, ...]`, as `[...]` (a view where the backend allows).
fn member_slice<B: Backend>(p: Fp<B>, m: usize) -> Fp<B> {
    let d = dims(&p);
    let mut ranges = vec![Slice::from(m..m + 1)];
    ranges.extend(d[1..].iter().map(|&n| Slice::from(0..n)));
    rs::<B>(B::float_slice(p, &ranges), d[1..].to_vec())
}

/// The weight gradient of a (transposed) convolution, per member.
///
/// Computes, with the inner convolution `f` (stride and dilation swapped, no bias), the
/// correlation of `a` (`[N, g*ca, ...]`, the convolution's input side) with `b` (`[N, g*cb, ...]`):
/// the result is `[g*cb, ca, ks]` (`[K, g*cb, ca, ks]` when batched). For a convolution
/// `a = x, b = output_grad`; for a transposed convolution `a = output_grad, b = x`.
fn conv_weight_grad<B: Backend>(
    op: &str,
    a: Vt<B>,
    b: Vt<B>,
    g: usize,
    ks: &[usize],
    f: &dyn Fn(Fp<B>, Fp<B>, usize) -> Fp<B>,
) -> Vt<B> {
    let k = check_members(op, a.members, b.members);
    let ad = a.shape().to_vec();
    let bd = b.shape().to_vec();
    let n = ad[0];
    let (ca, cb) = (ad[1] / g, bd[1] / g);
    let (as_, bs) = (&ad[2..], &bd[2..]);
    let sp = as_.len();
    // The unbatched forms of each side.
    let a_single = |p: Fp<B>| {
        let p = rs::<B>(p, vec![n, g, ca, prod(as_)]);
        let p = pm::<B>(p, &[2, 1, 0, 3]);
        rs::<B>(p, cat(&[&[ca, g * n], as_]))
    };
    let b_single = |p: Fp<B>| {
        let p = rs::<B>(p, vec![n, g, cb, prod(bs)]);
        let p = pm::<B>(p, &[1, 2, 0, 3]);
        rs::<B>(p, cat(&[&[g * cb], &[n], bs]))
    };
    match (a.batched, b.batched) {
        (false, false) => {
            let out = f(a_single(a.inner), b_single(b.inner), g); // [ca, g*cb, k']
            let out = pm::<B>(out, &axes(&[1, 0], 2, sp));
            VmapTensor::unbatched(slice_to::<B>(out, &cat(&[&[g * cb, ca], ks])), k)
        }
        (true, true) if member_loop::<B>() => {
            let (ai, bi) = (a.inner, b.inner);
            let outs = (0..k)
                .map(|m| {
                    let a = a_single(member_slice::<B>(ai.clone(), m));
                    let b = b_single(member_slice::<B>(bi.clone(), m));
                    let out = f(a, b, g); // [ca, g*cb, k']
                    let out = pm::<B>(out, &axes(&[1, 0], 2, sp));
                    let out = slice_to::<B>(out, &cat(&[&[g * cb, ca], ks]));
                    let d = dims(&out);
                    rs::<B>(out, cat(&[&[1], &d]))
                })
                .collect();
            VmapTensor::batched(B::float_cat(outs, 0), k)
        }
        (true, true) => {
            let ai = rs::<B>(a.inner, vec![k, n, g, ca, prod(as_)]);
            let ai = pm::<B>(ai, &[3, 0, 2, 1, 4]);
            let ai = rs::<B>(ai, cat(&[&[ca, k * g * n], as_]));
            let bi = rs::<B>(b.inner, vec![k, n, g, cb, prod(bs)]);
            let bi = pm::<B>(bi, &[0, 2, 3, 1, 4]);
            let bi = rs::<B>(bi, cat(&[&[k * g * cb, n], bs]));
            let out = f(ai, bi, k * g); // [ca, K*g*cb, k']
            let kd = dims(&out)[2..].to_vec();
            let out = rs::<B>(out, cat(&[&[ca, k, g * cb], &kd]));
            let out = pm::<B>(out, &axes(&[1, 2, 0], 3, sp));
            VmapTensor::batched(slice_to::<B>(out, &cat(&[&[k, g * cb, ca], ks])), k)
        }
        (false, true) => {
            let ai = a_single(a.inner);
            let bi = rs::<B>(b.inner, vec![k, n, g, cb, prod(bs)]);
            let bi = pm::<B>(bi, &[2, 0, 3, 1, 4]);
            let bi = rs::<B>(bi, cat(&[&[g * k * cb, n], bs]));
            let out = f(ai, bi, g); // [ca, g*K*cb, k']
            let kd = dims(&out)[2..].to_vec();
            let out = rs::<B>(out, vec![ca, g, k, cb, prod(&kd)]);
            let out = pm::<B>(out, &[2, 1, 3, 0, 4]);
            let out = rs::<B>(out, cat(&[&[k, g * cb, ca], &kd]));
            VmapTensor::batched(slice_to::<B>(out, &cat(&[&[k, g * cb, ca], ks])), k)
        }
        (true, false) => {
            let ai = rs::<B>(a.inner, vec![k, n, g, ca, prod(as_)]);
            let ai = pm::<B>(ai, &[0, 3, 2, 1, 4]);
            let ai = rs::<B>(ai, cat(&[&[k * ca, g * n], as_]));
            let bi = b_single(b.inner);
            let out = f(ai, bi, g); // [K*ca, g*cb, k']
            let kd = dims(&out)[2..].to_vec();
            let out = rs::<B>(out, cat(&[&[k, ca, g * cb], &kd]));
            let out = pm::<B>(out, &axes(&[0, 2, 1], 3, sp));
            VmapTensor::batched(slice_to::<B>(out, &cat(&[&[k, g * cb, ca], ks])), k)
        }
    }
}

/// The bias gradient of a (transposed) convolution: the output gradient summed over every axis
/// but the channels, per member.
fn conv_bias_grad<B: Backend>(op: &str, x: &Vt<B>, bias: &Vt<B>, grad: Vt<B>) -> Vt<B> {
    let k = members_of(op, &[x.members, bias.members, grad.members]);
    let batched = grad.batched;
    let p = grad.inner;
    let d = dims(&p);
    let lead = batched as usize;
    let o = d[lead + 1];
    let rest: usize = d[lead..].iter().product::<usize>() / o;
    let p = B::float_swap_dims(p, lead, lead + 1);
    let out = if batched {
        let p = rs::<B>(p, vec![k, o, rest]);
        let p = B::float_sum_dim(p, 2);
        rs::<B>(p, vec![k, o])
    } else {
        let p = rs::<B>(p, vec![o, rest]);
        let p = B::float_sum_dim(p, 1);
        rs::<B>(p, bias.shape().to_vec())
    };
    VmapTensor::new(out, batched, k)
}

/// `ConvOptions` with another group count.
fn conv_opts<const N: usize>(o: &ConvOptions<N>, groups: usize) -> ConvOptions<N> {
    ConvOptions {
        groups,
        ..o.clone()
    }
}

fn conv_t_opts<const N: usize>(
    o: &ConvTransposeOptions<N>,
    groups: usize,
) -> ConvTransposeOptions<N> {
    ConvTransposeOptions {
        groups,
        ..o.clone()
    }
}

/// Whether `Vmap<B>` lowers convolutions to unfold + one batched matrix product.
fn gemm<B: Backend>() -> bool {
    conv_lowering::<B>() == ConvLowering::BatchedGemm
}

fn geometry<const N: usize>(o: &ConvOptions<N>) -> Geometry {
    Geometry {
        stride: o.stride.to_vec(),
        padding: o.padding.to_vec(),
        dilation: o.dilation.to_vec(),
        groups: o.groups,
    }
}

fn geometry_t<const N: usize>(o: &ConvTransposeOptions<N>) -> Geometry {
    Geometry {
        stride: o.stride.to_vec(),
        padding: o.padding.to_vec(),
        dilation: o.dilation.to_vec(),
        groups: o.groups,
    }
}

/// The output size of a transposed convolution of input `x_shape` and weights `w_shape`.
fn conv_t_out<const N: usize>(
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
fn gemm_conv_t<B: Backend, const N: usize>(
    op: &str,
    x: Vt<B>,
    weight: Vt<B>,
    bias: Option<Vt<B>>,
    o: &ConvTransposeOptions<N>,
) -> Vt<B> {
    let target = conv_t_out(&x.shape(), &weight.shape(), o);
    conv_gemm::vmap_conv_x_grad::<B>(op, x, weight, bias, &geometry_t(o), &target)
}

/// The input gradient of a transposed convolution with unfold + batched matrix products: a
/// convolution, sliced to the input size.
fn gemm_conv_t_x_backward<B: Backend, const N: usize>(
    op: &str,
    weight: Vt<B>,
    grad: Vt<B>,
    o: &ConvTransposeOptions<N>,
) -> Vt<B> {
    let w_shape = weight.shape().to_vec();
    let g_shape = grad.shape().to_vec();
    let out = conv_gemm::vmap_conv::<B>(op, grad, weight, None, &geometry_t(o));
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
        cat(&[&[k], &target])
    } else {
        target
    };
    VmapTensor::new(slice_to::<B>(out.inner, &target), batched, k)
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
        padding_out[i] = conv::calculate_padding_out(
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

/// A 2-d transposed convolution computed as an ordinary convolution: the input is dilated by
/// the stride and padded, the weights are flipped with their channel roles swapped per group.
///
/// Used for `conv2d_x_backward`: some inner backends (NdArray) have a fast `conv2d` but a
/// naive `conv_transpose2d`, which made the input gradient of a convolution dominate a CNN's
/// training step (86% of it, measured with `perf`).
fn conv_transpose2d_by_conv2d<B: Backend>(
    x: Fp<B>,
    weight: Fp<B>,
    bias: Option<Fp<B>>,
    o: ConvTransposeOptions<2>,
) -> Fp<B> {
    let xd = dims(&x); // [N, Cin, H, W]
    let wd = dims(&weight); // [Cin, Cout/g, kh, kw]
    let g = o.groups;
    let (n, c_in, h, w) = (xd[0], xd[1], xd[2], xd[3]);
    let (c_out_g, kh, kw) = (wd[1], wd[2], wd[3]);
    let device = B::float_device(&x);
    let dtype: burn_backend::FloatDType = x.dtype().into();
    // Dilate by the stride: [N, C, H, 1, W, 1] -> zeros appended -> [N, C, H*s, W*s], cropped.
    let (sh, sw) = (o.stride[0], o.stride[1]);
    let mut xs = x;
    if sh > 1 || sw > 1 {
        let x6 = rs::<B>(xs, vec![n, c_in, h, 1, w, 1]);
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
        let full = rs::<B>(x6, vec![n, c_in, h * sh, w * sw]);
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
    let dh = dims(&xs)[2];
    let dw = dims(&xs)[3];
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
    let wt = rs::<B>(weight, vec![g, cin_g, c_out_g, kh, kw]);
    let wt = B::float_swap_dims(wt, 1, 2);
    let wt = rs::<B>(wt, vec![g * c_out_g, cin_g, kh, kw]);
    let wt = B::float_flip(wt, &[2, 3]);
    B::conv2d(
        padded,
        wt,
        bias,
        ConvOptions::new([1, 1], [0, 0], o.dilation, g),
    )
}

/// The input gradient of a transposed convolution: a convolution, sliced to the input size.
fn conv_t_x_backward<B: Backend, const N: usize>(
    op: &str,
    weight: Vt<B>,
    grad: Vt<B>,
    o: &ConvTransposeOptions<N>,
    f: ConvFn<'_, B>,
) -> Vt<B> {
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
        cat(&[&[k], &target])
    } else {
        target
    };
    VmapTensor::new(slice_to::<B>(out.inner, &target), batched, k)
}

// ---------------------------------------------------------------------------------------------
// Linear and embedding.
// ---------------------------------------------------------------------------------------------

/// A linear operand as `[K', M, d]` (K' = K when batched, 1 when shared; M the product of the
/// logical leading dims), with those leading dims. Free when the tensor is contiguous.
fn member_rows<B: Backend>(t: Vt<B>) -> (Fp<B>, Vec<usize>) {
    let batched = t.batched;
    let d = dims(&t.inner);
    let logical = &d[batched as usize..];
    let last = *logical.last().unwrap_or(&1);
    let lead = logical[..logical.len().saturating_sub(1)].to_vec();
    let rows: usize = lead.iter().product();
    let kk = if batched { d[0] } else { 1 };
    (rs::<B>(t.inner, vec![kk, rows, last]), lead)
}

/// A batched `[K, d]` vector shaped to broadcast against `[K, ..., d]` of physical rank `rank`.
fn row_vector<B: Backend>(v: Vt<B>, rank: usize) -> Fp<B> {
    let k = v.members;
    let batched = v.batched;
    let p = v.inner;
    let d = *dims(&p).last().unwrap_or(&1);
    let mut shape = vec![1usize; rank];
    shape[0] = if batched { k } else { 1 };
    shape[rank - 1] = d;
    rs::<B>(p, shape)
}

// ---------------------------------------------------------------------------------------------
// Attention.
// ---------------------------------------------------------------------------------------------

/// Expands a 4-d operand to `[bsz, heads, a, b]` per member and folds K into the batch axis.
fn attn_fold<B: Backend, K: Kind<B>>(
    t: VmapTensor<K::P>,
    bsz: usize,
    heads: usize,
    k: usize,
    any_batched: bool,
) -> K::P {
    if !any_batched {
        return t.inner;
    }
    let p = materialize::<B, K>(t);
    let d = dims(&p);
    let full = vec![k, bsz, heads, d[3], d[4]];
    let p = if d != full {
        K::expand(p, Shape::from(full))
    } else {
        p
    };
    K::reshape(p, Shape::from(vec![k * bsz, heads, d[3], d[4]]))
}

impl<B: Backend> ModuleOps<Self> for Vmap<B> {
    fn embedding(weights: FloatTensor<Self>, indices: IntTensor<Self>) -> FloatTensor<Self> {
        let k = check_members("embedding", weights.members, indices.members);
        match (weights.batched, indices.batched) {
            (false, false) => VmapTensor::unbatched(B::embedding(weights.inner, indices.inner), k),
            (false, true) => {
                let out = B::embedding(weights.inner, merge01_int::<B>(indices.inner));
                VmapTensor::batched(split0::<B>(out, k), k)
            }
            (true, false) => {
                // [K, V, D] selected along V.
                let id = dims(&indices.inner);
                let wd = dims(&weights.inner);
                let flat = rs_int::<B>(indices.inner, vec![id.iter().product()]);
                let out = B::float_select(weights.inner, 1, flat);
                VmapTensor::batched(rs::<B>(out, cat(&[&[k], &id, &[wd[2]]])), k)
            }
            (true, true) => {
                // Offsets k*V into the [K*V, D] table.
                let wd = dims(&weights.inner);
                let id = dims(&indices.inner);
                let idx = offset_indices::<B>(indices.inner, k, wd[1]);
                let idx = rs_int::<B>(idx, cat(&[&[k * id[1]], &id[2..]]));
                let out = B::embedding(merge01::<B>(weights.inner), idx);
                VmapTensor::batched(split0::<B>(out, k), k)
            }
        }
    }

    fn embedding_backward(
        weights: FloatTensor<Self>,
        output_grad: FloatTensor<Self>,
        indices: IntTensor<Self>,
    ) -> FloatTensor<Self> {
        let k = members_of(
            "embedding_backward",
            &[weights.members, output_grad.members, indices.members],
        );
        let [v, d] = weights.shape().dims::<2>();
        match (output_grad.batched, indices.batched) {
            (false, false) => VmapTensor::unbatched(
                B::embedding_backward(any_member::<B>(weights), output_grad.inner, indices.inner),
                k,
            ),
            (true, false) => {
                // select_add along V of a [K, V, D] zero table.
                let id = dims(&indices.inner);
                let n: usize = id.iter().product();
                let idx = rs_int::<B>(indices.inner, vec![n]);
                let device = B::float_device(&output_grad.inner);
                let dtype = output_grad.inner.dtype();
                let grad = rs::<B>(output_grad.inner, vec![k, n, d]);
                let zeros = B::float_zeros(Shape::from(vec![k, v, d]), &device, dtype.into());
                VmapTensor::batched(B::float_select_add(zeros, 1, idx, grad), k)
            }
            (_, true) => {
                let id = dims(&indices.inner);
                let n: usize = id[1..].iter().product();
                let idx = offset_indices::<B>(indices.inner, k, v);
                let idx = rs_int::<B>(idx, vec![k * n]);
                let grad = mat::<B>(output_grad);
                let device = B::float_device(&grad);
                let dtype = grad.dtype();
                let grad = rs::<B>(grad, vec![k * n, d]);
                let zeros = B::float_zeros(Shape::from(vec![k * v, d]), &device, dtype.into());
                let out = B::float_select_add(zeros, 0, idx, grad);
                VmapTensor::batched(rs::<B>(out, vec![k, v, d]), k)
            }
        }
    }

    fn linear(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: Option<FloatTensor<Self>>,
    ) -> FloatTensor<Self> {
        let mut counts = vec![x.members, weight.members];
        if let Some(b) = &bias {
            counts.push(b.members);
        }
        let k = members_of("linear", &counts);
        let any_batched = x.batched || weight.batched || bias.as_ref().is_some_and(|b| b.batched);
        if !any_batched {
            let out = B::linear(x.inner, weight.inner, bias.map(|b| b.inner));
            return VmapTensor::unbatched(out, k);
        }
        if !weight.batched && !bias.as_ref().is_some_and(|b| b.batched) {
            // Shared weights: the members are just more rows, [K*M, in] @ [in, out].
            let physical = dims(&x.inner);
            let rows = rs::<B>(
                x.inner,
                vec![
                    prod(&physical[..physical.len() - 1]),
                    physical[physical.len() - 1],
                ],
            );
            let out = B::linear(rows, weight.inner, bias.map(|b| b.inner));
            let out_dim = dims(&out)[1];
            let shape = cat(&[&physical[..physical.len() - 1], &[out_dim]]);
            return VmapTensor::batched(rs::<B>(out, shape), k);
        }
        // Every member's product in one broadcasting batched matmul: [Kx, M, in] @ [Kw, in, out]
        // with Kx, Kw in {1, K}. A shared operand is broadcast without a copy, and the result
        // is contiguous.
        let (xr, lead) = member_rows::<B>(x);
        let out = B::float_matmul(xr, front::<B, FloatKind>(weight));
        let out = match bias {
            Some(b) => {
                let b = front::<B, FloatKind>(b); // [Kb, out]
                let d = dims(&b);
                B::float_add(out, rs::<B>(b, vec![d[0], 1, d[1]]))
            }
            None => out,
        };
        let d = dims(&out);
        VmapTensor::batched(rs::<B>(out, cat(&[&[d[0]], &lead, &[d[2]]])), k)
    }

    fn linear_x_backward(
        weight: FloatTensor<Self>,
        output_grad: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        let k = check_members("linear_x_backward", weight.members, output_grad.members);
        if !weight.batched && !output_grad.batched {
            let out = B::linear_x_backward(weight.inner, output_grad.inner);
            return VmapTensor::unbatched(out, k);
        }
        if !weight.batched {
            // Shared weights: the members are just more rows.
            let physical = dims(&output_grad.inner);
            let last = physical.len() - 1;
            let rows = rs::<B>(
                output_grad.inner,
                vec![prod(&physical[..last]), physical[last]],
            );
            let out = B::linear_x_backward(weight.inner, rows);
            let shape = cat(&[&physical[..last], &[dims(&out)[1]]]);
            return VmapTensor::batched(rs::<B>(out, shape), k);
        }
        // grad [Kg, M, out] @ weight^T [Kw, out, in].
        let (gr, lead) = member_rows::<B>(output_grad);
        let wt = B::float_swap_dims(front::<B, FloatKind>(weight), 1, 2);
        let out = B::float_matmul(gr, wt);
        let d = dims(&out);
        VmapTensor::batched(rs::<B>(out, cat(&[&[d[0]], &lead, &[d[2]]])), k)
    }

    fn linear_weight_backward(
        x: FloatTensor<Self>,
        output_grad: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        let k = check_members("linear_weight_backward", x.members, output_grad.members);
        if !x.batched && !output_grad.batched {
            let out = B::linear_weight_backward(x.inner, output_grad.inner);
            return VmapTensor::unbatched(out, k);
        }
        // x^T [Kx, in, M] @ grad [Kg, M, out]: the sum over the rows M is the matmul's own.
        let (xr, _) = member_rows::<B>(x);
        let (gr, _) = member_rows::<B>(output_grad);
        let out = B::float_matmul(B::float_swap_dims(xr, 1, 2), gr);
        VmapTensor::batched(out, k)
    }

    fn linear_bias_backward(output_grad: FloatTensor<Self>) -> FloatTensor<Self> {
        if !output_grad.batched {
            return output_grad.map(B::linear_bias_backward);
        }
        let k = output_grad.members;
        let (gr, _) = member_rows::<B>(output_grad); // [K, M, out]
        let d = dims(&gr);
        VmapTensor::batched(rs::<B>(B::float_sum_dim(gr, 1), vec![k, d[2]]), k)
    }

    fn conv1d(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: Option<FloatTensor<Self>>,
        options: ConvOptions<1>,
    ) -> FloatTensor<Self> {
        if gemm::<B>() {
            return conv_gemm::vmap_conv::<B>("conv1d", x, weight, bias, &geometry(&options));
        }
        let f = |x, w, b, g| B::conv1d(x, w, b, conv_opts(&options, g));
        conv_forward::<B>("conv1d", x, weight, bias, options.groups, false, &f)
    }

    fn conv1d_x_backward(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        output_grad: FloatTensor<Self>,
        options: ConvOptions<1>,
    ) -> FloatTensor<Self> {
        if gemm::<B>() {
            check_members("conv1d_x_backward", x.members, weight.members);
            let input = x.shape().to_vec()[2..].to_vec();
            return conv_gemm::vmap_conv_x_grad::<B>(
                "conv1d_x_backward",
                output_grad,
                weight,
                None,
                &geometry(&options),
                &input,
            );
        }
        let o = x_backward_opts(&x.shape(), &weight.shape(), &output_grad.shape(), &options);
        let f = |x, w, b, g| B::conv_transpose1d(x, w, b, conv_t_opts(&o, g));
        check_members("conv1d_x_backward", x.members, weight.members);
        conv_forward::<B>(
            "conv1d_x_backward",
            output_grad,
            weight,
            None,
            o.groups,
            true,
            &f,
        )
    }

    fn conv1d_weight_backward(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        output_grad: FloatTensor<Self>,
        options: ConvOptions<1>,
    ) -> FloatTensor<Self> {
        check_members("conv1d_weight_backward", x.members, weight.members);
        let ks = weight.shape().to_vec()[2..].to_vec();
        if gemm::<B>() {
            return conv_gemm::vmap_conv_weight_grad::<B>(
                "conv1d_weight_backward",
                x,
                output_grad,
                &geometry(&options),
                &ks,
            );
        }
        let f = |a, b, g| {
            B::conv1d(
                a,
                b,
                None,
                swapped_opts(options.stride, options.padding, options.dilation, g),
            )
        };
        conv_weight_grad::<B>(
            "conv1d_weight_backward",
            x,
            output_grad,
            options.groups,
            &ks,
            &f,
        )
    }

    fn conv1d_bias_backward(
        x: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        output_grad: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        conv_bias_grad::<B>("conv1d_bias_backward", &x, &bias, output_grad)
    }

    fn conv2d(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: Option<FloatTensor<Self>>,
        options: ConvOptions<2>,
    ) -> FloatTensor<Self> {
        if gemm::<B>() {
            return conv_gemm::vmap_conv::<B>("conv2d", x, weight, bias, &geometry(&options));
        }
        let f = |x, w, b, g| B::conv2d(x, w, b, conv_opts(&options, g));
        conv_forward::<B>("conv2d", x, weight, bias, options.groups, false, &f)
    }

    fn conv2d_x_backward(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        output_grad: FloatTensor<Self>,
        options: ConvOptions<2>,
    ) -> FloatTensor<Self> {
        if gemm::<B>() {
            check_members("conv2d_x_backward", x.members, weight.members);
            let input = x.shape().to_vec()[2..].to_vec();
            return conv_gemm::vmap_conv_x_grad::<B>(
                "conv2d_x_backward",
                output_grad,
                weight,
                None,
                &geometry(&options),
                &input,
            );
        }
        let o = x_backward_opts(&x.shape(), &weight.shape(), &output_grad.shape(), &options);
        let f = |x, w, b, g| conv_transpose2d_by_conv2d::<B>(x, w, b, conv_t_opts(&o, g));
        check_members("conv2d_x_backward", x.members, weight.members);
        conv_forward::<B>(
            "conv2d_x_backward",
            output_grad,
            weight,
            None,
            o.groups,
            true,
            &f,
        )
    }

    fn conv2d_weight_backward(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        output_grad: FloatTensor<Self>,
        options: ConvOptions<2>,
    ) -> FloatTensor<Self> {
        check_members("conv2d_weight_backward", x.members, weight.members);
        let ks = weight.shape().to_vec()[2..].to_vec();
        if gemm::<B>() {
            return conv_gemm::vmap_conv_weight_grad::<B>(
                "conv2d_weight_backward",
                x,
                output_grad,
                &geometry(&options),
                &ks,
            );
        }
        let f = |a, b, g| {
            B::conv2d(
                a,
                b,
                None,
                swapped_opts(options.stride, options.padding, options.dilation, g),
            )
        };
        conv_weight_grad::<B>(
            "conv2d_weight_backward",
            x,
            output_grad,
            options.groups,
            &ks,
            &f,
        )
    }

    fn conv2d_bias_backward(
        x: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        output_grad: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        conv_bias_grad::<B>("conv2d_bias_backward", &x, &bias, output_grad)
    }

    fn deform_conv2d(
        x: FloatTensor<Self>,
        offset: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        mask: Option<FloatTensor<Self>>,
        bias: Option<FloatTensor<Self>>,
        options: DeformConvOptions<2>,
    ) -> FloatTensor<Self> {
        let mut counts = vec![x.members, offset.members, weight.members];
        counts.extend(mask.iter().map(|m| m.members));
        counts.extend(bias.iter().map(|b| b.members));
        let k = members_of("deform_conv2d", &counts);
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
            fold_ch::<B>(mat::<B>(x)),
            fold_ch::<B>(mat::<B>(offset)),
            merge01::<B>(mat::<B>(weight)),
            mask.map(|m| fold_ch::<B>(mat::<B>(m))),
            bias.map(|b| merge01::<B>(mat::<B>(b))),
            deform_opts_k(&options, k),
        );
        VmapTensor::batched(split_ch::<B>(out, k), k)
    }

    fn deform_conv2d_backward(
        x: FloatTensor<Self>,
        offset: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        mask: Option<FloatTensor<Self>>,
        bias: Option<FloatTensor<Self>>,
        output_grad: FloatTensor<Self>,
        options: DeformConvOptions<2>,
    ) -> DeformConv2dBackward<Self> {
        let mut counts = vec![
            x.members,
            offset.members,
            weight.members,
            output_grad.members,
        ];
        counts.extend(mask.iter().map(|m| m.members));
        counts.extend(bias.iter().map(|b| b.members));
        let k = members_of("deform_conv2d_backward", &counts);
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
                    member_of::<B>(&x, m),
                    member_of::<B>(&offset, m),
                    member_of::<B>(&weight, m),
                    mask.as_ref().map(|t| member_of::<B>(t, m)),
                    bias.as_ref().map(|t| member_of::<B>(t, m)),
                    member_of::<B>(&output_grad, m),
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
        let st = |v: Vec<Fp<B>>| VmapTensor::batched(stack::<B>(v), k);
        DeformConv2dBackward::new(
            st(xs),
            st(offs),
            st(ws),
            (!masks.is_empty()).then(|| st(masks)),
            (!biases.is_empty()).then(|| st(biases)),
        )
    }

    fn conv3d(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: Option<FloatTensor<Self>>,
        options: ConvOptions<3>,
    ) -> FloatTensor<Self> {
        if gemm::<B>() {
            return conv_gemm::vmap_conv::<B>("conv3d", x, weight, bias, &geometry(&options));
        }
        let f = |x, w, b, g| B::conv3d(x, w, b, conv_opts(&options, g));
        conv_forward::<B>("conv3d", x, weight, bias, options.groups, false, &f)
    }

    fn conv3d_x_backward(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        output_grad: FloatTensor<Self>,
        options: ConvOptions<3>,
    ) -> FloatTensor<Self> {
        if gemm::<B>() {
            check_members("conv3d_x_backward", x.members, weight.members);
            let input = x.shape().to_vec()[2..].to_vec();
            return conv_gemm::vmap_conv_x_grad::<B>(
                "conv3d_x_backward",
                output_grad,
                weight,
                None,
                &geometry(&options),
                &input,
            );
        }
        let o = x_backward_opts(&x.shape(), &weight.shape(), &output_grad.shape(), &options);
        let f = |x, w, b, g| B::conv_transpose3d(x, w, b, conv_t_opts(&o, g));
        check_members("conv3d_x_backward", x.members, weight.members);
        conv_forward::<B>(
            "conv3d_x_backward",
            output_grad,
            weight,
            None,
            o.groups,
            true,
            &f,
        )
    }

    fn conv3d_weight_backward(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        output_grad: FloatTensor<Self>,
        options: ConvOptions<3>,
    ) -> FloatTensor<Self> {
        check_members("conv3d_weight_backward", x.members, weight.members);
        let ks = weight.shape().to_vec()[2..].to_vec();
        if gemm::<B>() {
            return conv_gemm::vmap_conv_weight_grad::<B>(
                "conv3d_weight_backward",
                x,
                output_grad,
                &geometry(&options),
                &ks,
            );
        }
        let f = |a, b, g| {
            B::conv3d(
                a,
                b,
                None,
                swapped_opts(options.stride, options.padding, options.dilation, g),
            )
        };
        conv_weight_grad::<B>(
            "conv3d_weight_backward",
            x,
            output_grad,
            options.groups,
            &ks,
            &f,
        )
    }

    fn conv3d_bias_backward(
        x: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        output_grad: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        conv_bias_grad::<B>("conv3d_bias_backward", &x, &bias, output_grad)
    }

    fn conv_transpose1d(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: Option<FloatTensor<Self>>,
        options: ConvTransposeOptions<1>,
    ) -> FloatTensor<Self> {
        if gemm::<B>() {
            return gemm_conv_t::<B, 1>("conv_transpose1d", x, weight, bias, &options);
        }
        let f = |x, w, b, g| B::conv_transpose1d(x, w, b, conv_t_opts(&options, g));
        conv_forward::<B>(
            "conv_transpose1d",
            x,
            weight,
            bias,
            options.groups,
            true,
            &f,
        )
    }

    fn conv_transpose1d_x_backward(
        weight: FloatTensor<Self>,
        output_grad: FloatTensor<Self>,
        options: ConvTransposeOptions<1>,
    ) -> FloatTensor<Self> {
        if gemm::<B>() {
            return gemm_conv_t_x_backward::<B, 1>(
                "conv_transpose1d_x_backward",
                weight,
                output_grad,
                &options,
            );
        }
        let o = options.clone();
        let f = |x, w, b, g| {
            B::conv1d(
                x,
                w,
                b,
                ConvOptions::new(o.stride, o.padding, o.dilation, g),
            )
        };
        conv_t_x_backward::<B, 1>(
            "conv_transpose1d_x_backward",
            weight,
            output_grad,
            &options,
            &f,
        )
    }

    fn conv_transpose1d_weight_backward(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        output_grad: FloatTensor<Self>,
        options: ConvTransposeOptions<1>,
    ) -> FloatTensor<Self> {
        check_members(
            "conv_transpose1d_weight_backward",
            x.members,
            weight.members,
        );
        let ks = weight.shape().to_vec()[2..].to_vec();
        if gemm::<B>() {
            return conv_gemm::vmap_conv_weight_grad::<B>(
                "conv_transpose1d_weight_backward",
                output_grad,
                x,
                &geometry_t(&options),
                &ks,
            );
        }
        let f = |a, b, g| {
            B::conv1d(
                a,
                b,
                None,
                swapped_opts(options.stride, options.padding, options.dilation, g),
            )
        };
        conv_weight_grad::<B>(
            "conv_transpose1d_weight_backward",
            output_grad,
            x,
            options.groups,
            &ks,
            &f,
        )
    }

    fn conv_transpose1d_bias_backward(
        x: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        output_grad: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        conv_bias_grad::<B>("conv_transpose1d_bias_backward", &x, &bias, output_grad)
    }

    fn conv_transpose2d(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: Option<FloatTensor<Self>>,
        options: ConvTransposeOptions<2>,
    ) -> FloatTensor<Self> {
        if gemm::<B>() {
            return gemm_conv_t::<B, 2>("conv_transpose2d", x, weight, bias, &options);
        }
        let f = |x, w, b, g| B::conv_transpose2d(x, w, b, conv_t_opts(&options, g));
        conv_forward::<B>(
            "conv_transpose2d",
            x,
            weight,
            bias,
            options.groups,
            true,
            &f,
        )
    }

    fn conv_transpose2d_x_backward(
        weight: FloatTensor<Self>,
        output_grad: FloatTensor<Self>,
        options: ConvTransposeOptions<2>,
    ) -> FloatTensor<Self> {
        if gemm::<B>() {
            return gemm_conv_t_x_backward::<B, 2>(
                "conv_transpose2d_x_backward",
                weight,
                output_grad,
                &options,
            );
        }
        let o = options.clone();
        let f = |x, w, b, g| {
            B::conv2d(
                x,
                w,
                b,
                ConvOptions::new(o.stride, o.padding, o.dilation, g),
            )
        };
        conv_t_x_backward::<B, 2>(
            "conv_transpose2d_x_backward",
            weight,
            output_grad,
            &options,
            &f,
        )
    }

    fn conv_transpose2d_weight_backward(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        output_grad: FloatTensor<Self>,
        options: ConvTransposeOptions<2>,
    ) -> FloatTensor<Self> {
        check_members(
            "conv_transpose2d_weight_backward",
            x.members,
            weight.members,
        );
        let ks = weight.shape().to_vec()[2..].to_vec();
        if gemm::<B>() {
            return conv_gemm::vmap_conv_weight_grad::<B>(
                "conv_transpose2d_weight_backward",
                output_grad,
                x,
                &geometry_t(&options),
                &ks,
            );
        }
        let f = |a, b, g| {
            B::conv2d(
                a,
                b,
                None,
                swapped_opts(options.stride, options.padding, options.dilation, g),
            )
        };
        conv_weight_grad::<B>(
            "conv_transpose2d_weight_backward",
            output_grad,
            x,
            options.groups,
            &ks,
            &f,
        )
    }

    fn conv_transpose2d_bias_backward(
        x: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        output_grad: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        conv_bias_grad::<B>("conv_transpose2d_bias_backward", &x, &bias, output_grad)
    }

    fn conv_transpose3d(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: Option<FloatTensor<Self>>,
        options: ConvTransposeOptions<3>,
    ) -> FloatTensor<Self> {
        if gemm::<B>() {
            return gemm_conv_t::<B, 3>("conv_transpose3d", x, weight, bias, &options);
        }
        let f = |x, w, b, g| B::conv_transpose3d(x, w, b, conv_t_opts(&options, g));
        conv_forward::<B>(
            "conv_transpose3d",
            x,
            weight,
            bias,
            options.groups,
            true,
            &f,
        )
    }

    fn conv_transpose3d_x_backward(
        weight: FloatTensor<Self>,
        output_grad: FloatTensor<Self>,
        options: ConvTransposeOptions<3>,
    ) -> FloatTensor<Self> {
        if gemm::<B>() {
            return gemm_conv_t_x_backward::<B, 3>(
                "conv_transpose3d_x_backward",
                weight,
                output_grad,
                &options,
            );
        }
        let o = options.clone();
        let f = |x, w, b, g| {
            B::conv3d(
                x,
                w,
                b,
                ConvOptions::new(o.stride, o.padding, o.dilation, g),
            )
        };
        conv_t_x_backward::<B, 3>(
            "conv_transpose3d_x_backward",
            weight,
            output_grad,
            &options,
            &f,
        )
    }

    fn conv_transpose3d_weight_backward(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        output_grad: FloatTensor<Self>,
        options: ConvTransposeOptions<3>,
    ) -> FloatTensor<Self> {
        check_members(
            "conv_transpose3d_weight_backward",
            x.members,
            weight.members,
        );
        let ks = weight.shape().to_vec()[2..].to_vec();
        if gemm::<B>() {
            return conv_gemm::vmap_conv_weight_grad::<B>(
                "conv_transpose3d_weight_backward",
                output_grad,
                x,
                &geometry_t(&options),
                &ks,
            );
        }
        let f = |a, b, g| {
            B::conv3d(
                a,
                b,
                None,
                swapped_opts(options.stride, options.padding, options.dilation, g),
            )
        };
        conv_weight_grad::<B>(
            "conv_transpose3d_weight_backward",
            output_grad,
            x,
            options.groups,
            &ks,
            &f,
        )
    }

    fn conv_transpose3d_bias_backward(
        x: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        output_grad: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        conv_bias_grad::<B>("conv_transpose3d_bias_backward", &x, &bias, output_grad)
    }

    fn unfold4d(
        x: FloatTensor<Self>,
        kernel_size: [usize; 2],
        options: UnfoldOptions,
    ) -> FloatTensor<Self> {
        fold_batch1::<B>(x, |x| B::unfold4d(x, kernel_size, options))
    }

    fn avg_pool1d(
        x: FloatTensor<Self>,
        kernel_size: usize,
        stride: usize,
        padding: usize,
        count_include_pad: bool,
        ceil_mode: bool,
    ) -> FloatTensor<Self> {
        fold_batch1::<B>(x, |x| {
            B::avg_pool1d(
                x,
                kernel_size,
                stride,
                padding,
                count_include_pad,
                ceil_mode,
            )
        })
    }

    fn avg_pool1d_backward(
        x: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        kernel_size: usize,
        stride: usize,
        padding: usize,
        count_include_pad: bool,
        ceil_mode: bool,
    ) -> FloatTensor<Self> {
        fold_batch2::<B>("avg_pool1d_backward", x, grad, |x, g| {
            B::avg_pool1d_backward(
                x,
                g,
                kernel_size,
                stride,
                padding,
                count_include_pad,
                ceil_mode,
            )
        })
    }

    fn avg_pool2d(
        x: FloatTensor<Self>,
        kernel_size: [usize; 2],
        stride: [usize; 2],
        padding: [usize; 2],
        count_include_pad: bool,
        ceil_mode: bool,
    ) -> FloatTensor<Self> {
        fold_batch1::<B>(x, |x| {
            B::avg_pool2d(
                x,
                kernel_size,
                stride,
                padding,
                count_include_pad,
                ceil_mode,
            )
        })
    }

    fn avg_pool2d_backward(
        x: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        kernel_size: [usize; 2],
        stride: [usize; 2],
        padding: [usize; 2],
        count_include_pad: bool,
        ceil_mode: bool,
    ) -> FloatTensor<Self> {
        fold_batch2::<B>("avg_pool2d_backward", x, grad, |x, g| {
            B::avg_pool2d_backward(
                x,
                g,
                kernel_size,
                stride,
                padding,
                count_include_pad,
                ceil_mode,
            )
        })
    }

    fn adaptive_avg_pool2d(x: FloatTensor<Self>, output_size: [usize; 2]) -> FloatTensor<Self> {
        fold_batch1::<B>(x, |x| B::adaptive_avg_pool2d(x, output_size))
    }

    fn adaptive_avg_pool2d_backward(
        x: FloatTensor<Self>,
        grad: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        fold_batch2::<B>("adaptive_avg_pool2d_backward", x, grad, |x, g| {
            B::adaptive_avg_pool2d_backward(x, g)
        })
    }

    fn adaptive_avg_pool1d(x: FloatTensor<Self>, output_size: usize) -> FloatTensor<Self> {
        fold_batch1::<B>(x, |x| B::adaptive_avg_pool1d(x, output_size))
    }

    fn adaptive_avg_pool1d_backward(
        x: FloatTensor<Self>,
        grad: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        fold_batch2::<B>("adaptive_avg_pool1d_backward", x, grad, |x, g| {
            B::adaptive_avg_pool1d_backward(x, g)
        })
    }

    fn max_pool1d(
        x: FloatTensor<Self>,
        kernel_size: usize,
        stride: usize,
        padding: usize,
        dilation: usize,
        ceil_mode: bool,
    ) -> FloatTensor<Self> {
        fold_batch1::<B>(x, |x| {
            B::max_pool1d(x, kernel_size, stride, padding, dilation, ceil_mode)
        })
    }

    fn max_pool1d_with_indices(
        x: FloatTensor<Self>,
        kernel_size: usize,
        stride: usize,
        padding: usize,
        dilation: usize,
        ceil_mode: bool,
    ) -> MaxPool1dWithIndices<Self> {
        let (k, batched) = (x.members, x.batched);
        let xi = if batched {
            merge01::<B>(x.inner)
        } else {
            x.inner
        };
        let r = B::max_pool1d_with_indices(xi, kernel_size, stride, padding, dilation, ceil_mode);
        if batched {
            MaxPool1dWithIndices::new(
                VmapTensor::batched(split0::<B>(r.output, k), k),
                VmapTensor::batched(split0_int::<B>(r.indices, k), k),
            )
        } else {
            MaxPool1dWithIndices::new(
                VmapTensor::unbatched(r.output, k),
                VmapTensor::unbatched(r.indices, k),
            )
        }
    }

    fn max_pool1d_with_indices_backward(
        x: FloatTensor<Self>,
        kernel_size: usize,
        stride: usize,
        padding: usize,
        dilation: usize,
        ceil_mode: bool,
        output_grad: FloatTensor<Self>,
        indices: IntTensor<Self>,
    ) -> MaxPool1dBackward<Self> {
        let op = "max_pool1d_with_indices_backward";
        let k = members_of(op, &[x.members, output_grad.members, indices.members]);
        if !x.batched && !output_grad.batched && !indices.batched {
            let r = B::max_pool1d_with_indices_backward(
                x.inner,
                kernel_size,
                stride,
                padding,
                dilation,
                ceil_mode,
                output_grad.inner,
                indices.inner,
            );
            return MaxPool1dBackward::new(VmapTensor::unbatched(r.x_grad, k));
        }
        let r = B::max_pool1d_with_indices_backward(
            merge01::<B>(mat::<B>(x)),
            kernel_size,
            stride,
            padding,
            dilation,
            ceil_mode,
            merge01::<B>(mat::<B>(output_grad)),
            merge01_int::<B>(mat_int::<B>(indices)),
        );
        MaxPool1dBackward::new(VmapTensor::batched(split0::<B>(r.x_grad, k), k))
    }

    fn max_pool2d(
        x: FloatTensor<Self>,
        kernel_size: [usize; 2],
        stride: [usize; 2],
        padding: [usize; 2],
        dilation: [usize; 2],
        ceil_mode: bool,
    ) -> FloatTensor<Self> {
        fold_batch1::<B>(x, |x| {
            B::max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode)
        })
    }

    fn max_pool2d_with_indices(
        x: FloatTensor<Self>,
        kernel_size: [usize; 2],
        stride: [usize; 2],
        padding: [usize; 2],
        dilation: [usize; 2],
        ceil_mode: bool,
    ) -> MaxPool2dWithIndices<Self> {
        let (k, batched) = (x.members, x.batched);
        let xi = if batched {
            merge01::<B>(x.inner)
        } else {
            x.inner
        };
        let r = B::max_pool2d_with_indices(xi, kernel_size, stride, padding, dilation, ceil_mode);
        if batched {
            MaxPool2dWithIndices::new(
                VmapTensor::batched(split0::<B>(r.output, k), k),
                VmapTensor::batched(split0_int::<B>(r.indices, k), k),
            )
        } else {
            MaxPool2dWithIndices::new(
                VmapTensor::unbatched(r.output, k),
                VmapTensor::unbatched(r.indices, k),
            )
        }
    }

    fn max_pool2d_with_indices_backward(
        x: FloatTensor<Self>,
        kernel_size: [usize; 2],
        stride: [usize; 2],
        padding: [usize; 2],
        dilation: [usize; 2],
        ceil_mode: bool,
        output_grad: FloatTensor<Self>,
        indices: IntTensor<Self>,
    ) -> MaxPool2dBackward<Self> {
        let op = "max_pool2d_with_indices_backward";
        let k = members_of(op, &[x.members, output_grad.members, indices.members]);
        if !x.batched && !output_grad.batched && !indices.batched {
            let r = B::max_pool2d_with_indices_backward(
                x.inner,
                kernel_size,
                stride,
                padding,
                dilation,
                ceil_mode,
                output_grad.inner,
                indices.inner,
            );
            return MaxPool2dBackward::new(VmapTensor::unbatched(r.x_grad, k));
        }
        let r = B::max_pool2d_with_indices_backward(
            merge01::<B>(mat::<B>(x)),
            kernel_size,
            stride,
            padding,
            dilation,
            ceil_mode,
            merge01::<B>(mat::<B>(output_grad)),
            merge01_int::<B>(mat_int::<B>(indices)),
        );
        MaxPool2dBackward::new(VmapTensor::batched(split0::<B>(r.x_grad, k), k))
    }

    fn interpolate(
        x: FloatTensor<Self>,
        output_size: [usize; 2],
        options: InterpolateOptions,
    ) -> FloatTensor<Self> {
        fold_batch1::<B>(x, |x| B::interpolate(x, output_size, options))
    }

    fn interpolate_backward(
        x: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        output_size: [usize; 2],
        options: InterpolateOptions,
    ) -> FloatTensor<Self> {
        fold_batch2::<B>("interpolate_backward", x, grad, |x, g| {
            B::interpolate_backward(x, g, output_size, options)
        })
    }

    fn attention(
        query: FloatTensor<Self>,
        key: FloatTensor<Self>,
        value: FloatTensor<Self>,
        mask: Option<BoolTensor<Self>>,
        attn_bias: Option<FloatTensor<Self>>,
        options: AttentionModuleOptions,
    ) -> FloatTensor<Self> {
        let mut counts = vec![query.members, key.members, value.members];
        counts.extend(mask.iter().map(|m| m.members));
        counts.extend(attn_bias.iter().map(|b| b.members));
        let k = members_of("attention", &counts);
        let any = query.batched
            || key.batched
            || value.batched
            || mask.as_ref().is_some_and(|m| m.batched)
            || attn_bias.as_ref().is_some_and(|b| b.batched);
        if !any {
            return VmapTensor::unbatched(
                B::attention(
                    query.inner,
                    key.inner,
                    value.inner,
                    mask.map(|m| m.inner),
                    attn_bias.map(|b| b.inner),
                    options,
                ),
                k,
            );
        }
        // Every operand expanded to the full [batch, heads, ...] per member, K folded into batch.
        let mut bsz = 1;
        let mut heads = 1;
        let mut visit = |s: Shape| {
            bsz = bsz.max(s[0]);
            heads = heads.max(s[1]);
        };
        visit(query.shape());
        visit(key.shape());
        visit(value.shape());
        if let Some(m) = &mask {
            visit(m.shape());
        }
        if let Some(b) = &attn_bias {
            visit(b.shape());
        }
        let ff = |t: Vt<B>| attn_fold::<B, FloatKind>(t, bsz, heads, k, true);
        let out = B::attention(
            ff(query),
            ff(key),
            ff(value),
            mask.map(|m| attn_fold::<B, BoolKind>(m, bsz, heads, k, true)),
            attn_bias.map(ff),
            options,
        );
        VmapTensor::batched(split0::<B>(out, k), k)
    }

    fn layer_norm(
        tensor: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        beta: Option<FloatTensor<Self>>,
        epsilon: f64,
    ) -> FloatTensor<Self> {
        let mut counts = vec![tensor.members, gamma.members];
        counts.extend(beta.iter().map(|b| b.members));
        let k = members_of("layer_norm", &counts);
        let affine_batched = gamma.batched || beta.as_ref().is_some_and(|b| b.batched);
        if !affine_batched {
            let batched = tensor.batched;
            let out = B::layer_norm(tensor.inner, gamma.inner, beta.map(|b| b.inner), epsilon);
            return VmapTensor::new(out, batched, k);
        }
        // Normalize with a unit scale (exact), then the per-member affine transform.
        let d = *gamma.shape().to_vec().last().unwrap_or(&1);
        let device = B::float_device(&tensor.inner);
        let dtype = tensor.inner.dtype();
        let ones = B::float_ones(Shape::from(vec![d]), &device, dtype.into());
        let normalized = tensor.map(|t| B::layer_norm(t, ones, None, epsilon));
        let normalized = front::<B, FloatKind>(normalized);
        let rank = dims(&normalized).len();
        let scaled = B::float_mul(normalized, row_vector::<B>(gamma, rank));
        let out = match beta {
            Some(b) => B::float_add(scaled, row_vector::<B>(b, rank)),
            None => scaled,
        };
        VmapTensor::batched(out, k)
    }

    fn ctc_loss(
        log_probs: FloatTensor<Self>,
        targets: IntTensor<Self>,
        input_lengths: IntTensor<Self>,
        target_lengths: IntTensor<Self>,
        blank: usize,
    ) -> FloatTensor<Self> {
        let k = members_of(
            "ctc_loss",
            &[
                log_probs.members,
                targets.members,
                input_lengths.members,
                target_lengths.members,
            ],
        );
        let any =
            log_probs.batched || targets.batched || input_lengths.batched || target_lengths.batched;
        if !any {
            return VmapTensor::unbatched(
                B::ctc_loss(
                    log_probs.inner,
                    targets.inner,
                    input_lengths.inner,
                    target_lengths.inner,
                    blank,
                ),
                k,
            );
        }
        let out = B::ctc_loss(
            ctc_fold_log_probs::<B>(log_probs),
            merge01_int::<B>(mat_int::<B>(targets)),
            merge01_int::<B>(mat_int::<B>(input_lengths)),
            merge01_int::<B>(mat_int::<B>(target_lengths)),
            blank,
        );
        VmapTensor::batched(split0::<B>(out, k), k)
    }

    fn has_ctc_loss_backward() -> bool {
        B::has_ctc_loss_backward()
    }

    fn ctc_loss_backward(
        log_probs: FloatTensor<Self>,
        targets: IntTensor<Self>,
        input_lengths: IntTensor<Self>,
        target_lengths: IntTensor<Self>,
        grad_loss: FloatTensor<Self>,
        blank: usize,
    ) -> FloatTensor<Self> {
        let k = members_of(
            "ctc_loss_backward",
            &[
                log_probs.members,
                targets.members,
                input_lengths.members,
                target_lengths.members,
                grad_loss.members,
            ],
        );
        let any = log_probs.batched
            || targets.batched
            || input_lengths.batched
            || target_lengths.batched
            || grad_loss.batched;
        if !any {
            return VmapTensor::unbatched(
                B::ctc_loss_backward(
                    log_probs.inner,
                    targets.inner,
                    input_lengths.inner,
                    target_lengths.inner,
                    grad_loss.inner,
                    blank,
                ),
                k,
            );
        }
        let out = B::ctc_loss_backward(
            ctc_fold_log_probs::<B>(log_probs),
            merge01_int::<B>(mat_int::<B>(targets)),
            merge01_int::<B>(mat_int::<B>(input_lengths)),
            merge01_int::<B>(mat_int::<B>(target_lengths)),
            merge01::<B>(mat::<B>(grad_loss)),
            blank,
        );
        // [T, K*N, C] -> [K, T, N, C]
        let d = dims(&out);
        let out = rs::<B>(out, vec![d[0], k, d[1] / k, d[2]]);
        VmapTensor::batched(pm::<B>(out, &[1, 0, 2, 3]), k)
    }

    fn rfft(
        signal: FloatTensor<Self>,
        dim: usize,
        n: Option<usize>,
    ) -> (FloatTensor<Self>, FloatTensor<Self>) {
        let (k, batched) = (signal.members, signal.batched);
        let d = signal.dim(dim);
        let (re, im) = B::rfft(signal.inner, d, n);
        (
            VmapTensor::new(re, batched, k),
            VmapTensor::new(im, batched, k),
        )
    }

    fn irfft(
        spectrum_re: FloatTensor<Self>,
        spectrum_im: FloatTensor<Self>,
        dim: usize,
        n: Option<usize>,
    ) -> FloatTensor<Self> {
        let k = check_members("irfft", spectrum_re.members, spectrum_im.members);
        if !spectrum_re.batched && !spectrum_im.batched {
            return VmapTensor::unbatched(
                B::irfft(spectrum_re.inner, spectrum_im.inner, dim, n),
                k,
            );
        }
        let re = mat::<B>(spectrum_re);
        let im = mat::<B>(spectrum_im);
        VmapTensor::batched(B::irfft(re, im, dim + 1, n), k)
    }
}

/// `[K, T, N, C]` (materialized) -> `[T, K*N, C]`.
fn ctc_fold_log_probs<B: Backend>(log_probs: Vt<B>) -> Fp<B> {
    let p = mat::<B>(log_probs);
    let d = dims(&p);
    let p = pm::<B>(p, &[1, 0, 2, 3]);
    rs::<B>(p, vec![d[1], d[0] * d[2], d[3]])
}

/// Indices `[K, ...]` into K tables of `rows` rows each, offset by `k * rows` so that they index
/// the flattened `[K*rows, ...]` table.
fn offset_indices<B: Backend>(indices: Ip<B>, k: usize, rows: usize) -> Ip<B> {
    let d = dims(&indices);
    let device = B::int_device(&indices);
    let dtype = indices.dtype();
    let offsets = B::int_arange(0..k as i64, &device, dtype.into());
    let offsets = B::int_mul_scalar(offsets, (rows as i64).into());
    let mut od = vec![1usize; d.len()];
    od[0] = k;
    let offsets = rs_int::<B>(offsets, od);
    B::int_add(indices, offsets)
}

/// Member `m` of `t` as an unbatched inner tensor of the logical shape.
fn member_of<B: Backend>(t: &Vt<B>, m: usize) -> Fp<B> {
    if !t.batched {
        return t.inner.clone();
    }
    let d = dims(&t.inner);
    let mut slices: Vec<Slice> = d.iter().map(|&n| Slice::from(0..n)).collect();
    slices[0] = Slice::from(m..m + 1);
    let p = B::float_slice(t.inner.clone(), &slices);
    rs::<B>(p, d[1..].to_vec())
}

/// Stacks equally shaped inner tensors along a new leading member axis.
fn stack<B: Backend>(parts: Vec<Fp<B>>) -> Fp<B> {
    let parts = parts
        .into_iter()
        .map(|p| {
            let d = dims(&p);
            rs::<B>(p, cat(&[&[1], &d]))
        })
        .collect();
    B::float_cat(parts, 0)
}

/// Deformable-conv options for K members folded into the channels.
fn deform_opts_k(o: &DeformConvOptions<2>, k: usize) -> DeformConvOptions<2> {
    DeformConvOptions {
        weight_groups: o.weight_groups * k,
        offset_groups: o.offset_groups * k,
        ..o.clone()
    }
}
