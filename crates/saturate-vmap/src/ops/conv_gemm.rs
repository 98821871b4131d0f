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
//! Which lowering an inner backend gets is [`ConvLowering`], chosen per backend type
//! ([`conv_lowering`], [`set_conv_lowering`]).

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

use burn_backend::tensor::FloatTensor;
use burn_backend::{Backend, Shape, Slice, TensorMetadata};

use super::conv_host;
use crate::tensor::{check_members, front, FloatKind, VmapTensor};

type Fp<B> = FloatTensor<B>;

/// How [`Vmap`](crate::Vmap) computes a convolution (conv1d/2d/3d, the transposed forms, and
/// their input and weight gradients) on an inner backend.
///
/// The default is chosen by the inner backend's type ([`conv_lowering`]): NdArray gets the fast
/// [`HostGemm`](Self::HostGemm) (a member of a group equals itself as a group of one bit for
/// bit, and plain NdArray to rounding); every other backend gets
/// [`BatchedGemm`](Self::BatchedGemm). [`set_conv_lowering`] changes it per backend type, e.g.
/// to [`InnerConvolution`](Self::InnerConvolution) for bit-for-bit parity with plain NdArray.
///
/// On the benchmark CNN (SmallCNN(16), batch 128, one training step of K = 8 members, NdArray,
/// 2 cores; book: CPU backends) `InnerConvolution` took 2.3 s, `BatchedGemm` 1.35 s and
/// `HostGemm` 0.32 s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConvLowering {
    /// Unfold (im2col) + one K-batched matrix product `[K, M, k] @ [K, k, N]`, the groups a
    /// second batch axis. Much faster on NdArray, whose direct convolution (built without
    /// `simd`) is a scalar loop while its matrix product is blocked and vectorised (book:
    /// Benchmarks), but it sums in another order than NdArray's convolution: results agree with
    /// plain NdArray to rounding (1-2 ulp per convolution), not bit for bit. On CubeCL backends
    /// the implicit-GEMM convolution requires `groups == 1`, so a member axis folded into the
    /// groups would fall back to the direct kernel; batched matrix products do not.
    BatchedGemm,
    /// The inner backend's own convolution: on NdArray one call per member when input and
    /// weights are both per member, elsewhere one call with the member axis folded into the
    /// channel groups; a shared input runs against the K weight sets side by side in the output
    /// channels, shared weights fold K into the batch. Per-member results equal the member's
    /// own convolution on the inner backend bit for bit on NdArray: the choice for checking a
    /// group against plain NdArray, at several times the cost of
    /// [`HostGemm`](Self::HostGemm) (NdArray's direct convolution is a scalar loop).
    InnerConvolution,
    /// Unfold (im2col) + matrix products on host memory, one (member, image) pair at a time,
    /// the pairs in parallel (`ops/conv_host.rs`): for `f32` convolutions with one or two
    /// spatial axes on CPU backends, whose tensors live in host memory (elsewhere it costs a
    /// device round trip per operand). Each member's unfolded image stays in cache, where
    /// [`BatchedGemm`](Self::BatchedGemm) materialises the columns of all K members at once.
    /// A member's result does not depend on K or on the thread count, so a group member equals
    /// itself trained alone under this lowering bit for bit; against the inner backend's own
    /// convolution it agrees to rounding. Other convolutions (3-d, other dtypes) take
    /// [`BatchedGemm`](Self::BatchedGemm). The default on NdArray.
    HostGemm,
}

fn registry() -> &'static RwLock<HashMap<TypeId, ConvLowering>> {
    static CHOSEN: OnceLock<RwLock<HashMap<TypeId, ConvLowering>>> = OnceLock::new();
    CHOSEN.get_or_init(Default::default)
}

/// Chooses how `Vmap<B>` computes convolutions, for the inner backend type `B` (process-wide;
/// takes effect at the next convolution). Without a choice, the default of
/// [`conv_lowering`].
///
/// ```
/// use burn::backend::NdArray;
/// use saturate_vmap::{conv_lowering, set_conv_lowering, ConvLowering};
///
/// // NdArray's own convolutions: a group member equals plain NdArray bit for bit, slower.
/// assert_eq!(conv_lowering::<NdArray>(), ConvLowering::HostGemm);
/// set_conv_lowering::<NdArray>(ConvLowering::InnerConvolution);
/// assert_eq!(conv_lowering::<NdArray>(), ConvLowering::InnerConvolution);
/// ```
pub fn set_conv_lowering<B: Backend>(lowering: ConvLowering) {
    registry()
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .insert(TypeId::of::<B>(), lowering);
}

/// The convolution lowering `Vmap<B>` uses for the inner backend type `B`: the one set with
/// [`set_conv_lowering`], else [`ConvLowering::HostGemm`] for NdArray and
/// [`ConvLowering::BatchedGemm`] for every other backend.
pub fn conv_lowering<B: Backend>() -> ConvLowering {
    let chosen = registry()
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .get(&TypeId::of::<B>())
        .copied();
    chosen.unwrap_or(if is_ndarray::<B>() {
        ConvLowering::HostGemm
    } else {
        ConvLowering::BatchedGemm
    })
}

/// Whether `B` is burn-ndarray's backend (f32 or f64 floats, i32 or i64 ints, the default
/// quantized element).
pub(crate) fn is_ndarray<B: Backend>() -> bool {
    #[cfg(feature = "ndarray")]
    {
        use burn_ndarray::NdArray;
        let id = TypeId::of::<B>();
        [
            TypeId::of::<NdArray<f32, i64>>(),
            TypeId::of::<NdArray<f32, i32>>(),
            TypeId::of::<NdArray<f64, i64>>(),
            TypeId::of::<NdArray<f64, i32>>(),
        ]
        .contains(&id)
    }
    #[cfg(not(feature = "ndarray"))]
    {
        false
    }
}

/// Stride, padding, dilation (one per spatial axis) and group count of a convolution. For a
/// transposed convolution: those of the convolution it transposes.
#[derive(Clone, Debug)]
pub(crate) struct Geometry {
    pub stride: Vec<usize>,
    pub padding: Vec<usize>,
    pub dilation: Vec<usize>,
    pub groups: usize,
}

fn dims<B: Backend>(p: &Fp<B>) -> Vec<usize> {
    p.shape().to_vec()
}

fn reshape<B: Backend>(p: Fp<B>, dims: Vec<usize>) -> Fp<B> {
    crate::ops::base::float_reshape::<B>(p, Shape::from(dims))
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

/// The output length of a convolution along one axis.
pub(crate) fn out_len(
    len: usize,
    kernel: usize,
    stride: usize,
    padding: usize,
    dilation: usize,
) -> usize {
    (len + 2 * padding - dilation * (kernel - 1) - 1) / stride + 1
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

/// Whether this convolution (operand `x` in front form `[K', N, C, S...]`) runs on the host
/// kernels of [`ConvLowering::HostGemm`].
fn host_lowering<B: Backend>(x: &Fp<B>) -> bool {
    conv_lowering::<B>() == ConvLowering::HostGemm
        && conv_host::applies::<B>(x, dims::<B>(x).len() - 3)
}

/// A convolution: `x` `[K', N, C, S...]`, weights `[K', O, C/g, kernel...]`, bias `[K', O]`
/// (each `K'` in `{1, K}`) to `[K', N, O, out...]`.
pub(crate) fn conv<B: Backend>(
    x: Fp<B>,
    weight: Fp<B>,
    bias: Option<Fp<B>>,
    geo: &Geometry,
) -> Fp<B> {
    if host_lowering::<B>(&x) {
        return conv_host::conv::<B>(x, weight, bias, geo);
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
        Some(b) => B::float_add(y, bias_column::<B>(b, sp)),
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
pub(crate) fn conv_x_grad<B: Backend>(
    dy: Fp<B>,
    weight: Fp<B>,
    geo: &Geometry,
    input: &[usize],
) -> Fp<B> {
    if host_lowering::<B>(&dy) {
        return conv_host::conv_x_grad::<B>(dy, weight, geo, input);
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
pub(crate) fn conv_weight_grad<B: Backend>(
    x: Fp<B>,
    dy: Fp<B>,
    geo: &Geometry,
    kernel: &[usize],
) -> Fp<B> {
    if host_lowering::<B>(&x) {
        return conv_host::conv_weight_grad::<B>(x, dy, geo, kernel);
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
        Some(b) => B::float_add(dx, bias_column::<B>(front_of::<B>(b), input.len())),
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
