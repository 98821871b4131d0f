//! [`ConvLowering::HostGemm`](crate::ConvLowering::HostGemm): 1-d and 2-d `f32`
//! convolutions computed on host buffers, one (member, image) pair at a time.
//!
//! The tensor-op lowering of `lowering/conv.rs` unfolds the whole `[K, N, ...]` input at once
//! (on the benchmark CNN at K = 8: 115 MB of columns per convolution) with one strided slice
//! per kernel tap and a `cat`; on NdArray those copies, and the page faults of their fresh
//! buffers, cost more than the matrix products (measured with `perf`). Here every
//! (member, image) pair is unfolded into a small buffer that stays in cache, multiplied at
//! once on the calling thread with the `gemm` crate's kernels (`sgemm.rs`), and the pairs run
//! in parallel on rayon's pool:
//!
//! - forward: `y[k, n] = W[k] @ unfold(x[k, n]) + b[k]`, per group;
//! - input gradient (and the transposed convolution's forward): `cols = W[k]^T @ dy[k, n]`,
//!   added back into `dx[k, n]` (col2im);
//! - weight gradient: `dW[k] = sum_n dy[k, n] @ unfold(x[k, n])^T`, summed over fixed chunks of
//!   images in a fixed order.
//!
//! Every member's result depends only on that member's operands and is summed in an order
//! that depends neither on K nor on the thread count, so a member of a group equals itself
//! trained alone (K = 1) under this lowering bit for bit, run after run. Against an inner
//! backend's own convolution the sums are taken in another order: results agree to rounding.
//!
//! The operands are read with the inner backend's `float_into_data` and the result written
//! with `float_from_data`: one copy each way, free on CPU backends, a device round trip on a
//! GPU (where this lowering is never the default). On NdArray the arrays are read in place, and
//! the result is made as an NdArray array when the caller says `on_ndarray` (the backend's
//! [`plan`](crate::lowering::plan)).

use burn_backend::tensor::FloatTensor;
use burn_backend::{Backend, DType, TensorData, TensorMetadata};
use rayon::prelude::*;

use super::sgemm::Strided;
use crate::kernels::{out_len, Geometry};

type Fp<B> = FloatTensor<B>;

/// Images per partial sum of the weight gradient: fixed, so that the summation order does not
/// depend on the number of threads.
const WEIGHT_GRAD_CHUNK: usize = 8;

/// Whether the host kernels can compute this convolution: `f32` operands and one or two
/// spatial axes. Other convolutions take the tensor-op lowering.
pub(crate) fn applies<B: Backend>(x: &Fp<B>, spatial: usize) -> bool {
    x.dtype() == DType::F32 && (1..=2).contains(&spatial)
}

/// Two-dimensional geometry of a 1-d or 2-d convolution (a 1-d one has height 1).
#[derive(Clone, Copy, Debug)]
struct Geo2 {
    stride: [usize; 2],
    padding: [usize; 2],
    dilation: [usize; 2],
    groups: usize,
}

impl Geo2 {
    fn from(geo: &Geometry) -> Self {
        let two = |v: &[usize], one: usize| -> [usize; 2] {
            if v.len() == 1 {
                [one, v[0]]
            } else {
                [v[0], v[1]]
            }
        };
        Self {
            stride: two(&geo.stride, 1),
            padding: two(&geo.padding, 0),
            dilation: two(&geo.dilation, 1),
            groups: geo.groups,
        }
    }
}

/// One or two spatial sizes as `[H, W]`, with `H = 1` for 1-d.
fn pair(sizes: &[usize]) -> [usize; 2] {
    match *sizes {
        [w] => [1, w],
        [h, w] => [h, w],
        _ => unreachable!("the host convolution takes 1 or 2 spatial axes (`applies`)"),
    }
}

/// `[K', N, C, S...]` (one or two spatial axes) as `[K', N, C, H, W]`, with `H = 1` for 1-d.
fn as_2d(shape: &[usize]) -> [usize; 5] {
    if shape.len() == 4 {
        [shape[0], shape[1], shape[2], 1, shape[3]]
    } else {
        [shape[0], shape[1], shape[2], shape[3], shape[4]]
    }
}

/// An operand's values in row-major order, on the host.
enum Host {
    /// Read through the backend's `float_into_data`.
    Data(Vec<f32>),
    /// An NdArray tensor's own array, borrowed without a copy when it is in row-major layout.
    #[cfg(feature = "ndarray")]
    Ndarray(ndarray::ArcArray<f32, ndarray::IxDyn>),
}

impl Host {
    /// Hands the buffer to the spare shelf when this operand held it alone (its last use).
    fn give(self) {
        match self {
            Host::Data(v) => super::spare::give(v),
            #[cfg(feature = "ndarray")]
            Host::Ndarray(a) => super::spare::give_array(a),
        }
    }

    fn values(&self) -> &[f32] {
        match self {
            Host::Data(v) => v,
            #[cfg(feature = "ndarray")]
            Host::Ndarray(a) => a.as_slice().expect("row-major by construction"),
        }
    }
}

/// Reads an operand and its shape. NdArray's `float_into_data` copies element by element
/// whenever the array is shared (autodiff keeps every saved input shared), which cost more than
/// the convolution itself; its arrays are read in place instead.
fn read<B: Backend>(p: Fp<B>) -> (Host, Vec<usize>) {
    let shape = p.shape().to_vec();
    #[cfg(feature = "ndarray")]
    let p = {
        let any: Box<dyn std::any::Any> = Box::new(p);
        match any.downcast::<burn_ndarray::NdArrayTensor>() {
            Ok(tensor) => match *tensor {
                burn_ndarray::NdArrayTensor::F32(storage) => {
                    let array = storage.into_shared();
                    let array = if array.is_standard_layout() {
                        array
                    } else {
                        array.as_standard_layout().into_owned().into_shared()
                    };
                    return (Host::Ndarray(array), shape);
                }
                other => *(Box::new(other) as Box<dyn std::any::Any>)
                    .downcast::<Fp<B>>()
                    .expect("the same type"),
            },
            Err(any) => *any.downcast::<Fp<B>>().expect("the same type"),
        }
    };
    let data = burn::tensor::try_read_sync(B::float_into_data(p))
        .expect("saturate-vmap: this backend cannot read tensors synchronously")
        .expect("saturate-vmap: reading a tensor failed");
    let values = data
        .into_vec::<f32>()
        .expect("saturate-vmap: the host convolution reads f32 tensors only");
    (Host::Data(values), shape)
}

/// Makes a tensor of the inner backend from row-major values (on NdArray, `on_ndarray`, without
/// a copy).
fn write<B: Backend>(
    values: Vec<f32>,
    shape: Vec<usize>,
    device: &B::Device,
    on_ndarray: bool,
) -> Fp<B> {
    #[cfg(feature = "ndarray")]
    if on_ndarray {
        let array = ndarray::Array::from_shape_vec(ndarray::IxDyn(&shape), values)
            .expect("saturate-vmap: host convolution result shape")
            .into_shared();
        let tensor: Box<dyn std::any::Any> = Box::new(burn_ndarray::NdArrayTensor::from(array));
        return *tensor
            .downcast::<Fp<B>>()
            .expect("NdArray's float primitive is NdArrayTensor");
    }
    #[cfg(not(feature = "ndarray"))]
    let _ = on_ndarray;
    B::float_from_data(TensorData::new(values, shape), device)
}

/// The index of member `k` in an operand with `count` members (1 when shared).
fn pick(count: usize, k: usize) -> usize {
    if count == 1 {
        0
    } else {
        k
    }
}

/// The output positions `o < out` whose input index `o * s + offset` lies in `[0, len)`.
fn valid_range(out: usize, s: usize, offset: isize, len: usize) -> (usize, usize) {
    // o * s + offset >= 0  <=>  o >= ceil(-offset / s)
    let lo = if offset >= 0 {
        0
    } else {
        ((-offset) as usize).div_ceil(s)
    };
    // o * s + offset < len  <=>  o < ceil((len - offset) / s)
    let hi = if (len as isize) <= offset {
        0
    } else {
        ((len as isize - offset) as usize).div_ceil(s)
    };
    (lo.min(out), hi.min(out).max(lo.min(out)))
}

/// One image's shape and the convolution's kernel and output sizes.
#[derive(Clone, Copy, Debug)]
struct Plan {
    /// Channels per group of the convolution's input.
    cg: usize,
    h: usize,
    w: usize,
    kh: usize,
    kw: usize,
    oh: usize,
    ow: usize,
    geo: Geo2,
}

impl Plan {
    /// One image of `cg` channels per group and spatial size `[h, w]`, kernel `[kh, kw]`,
    /// output `[oh, ow]`.
    fn new(
        cg: usize,
        [h, w]: [usize; 2],
        [kh, kw]: [usize; 2],
        [oh, ow]: [usize; 2],
        geo: Geo2,
    ) -> Self {
        Self {
            cg,
            h,
            w,
            kh,
            kw,
            oh,
            ow,
            geo,
        }
    }

    fn taps(&self) -> usize {
        self.kh * self.kw
    }
    /// Rows of one group's columns: `cg * kh * kw`.
    fn rows(&self) -> usize {
        self.cg * self.taps()
    }
    fn positions(&self) -> usize {
        self.oh * self.ow
    }
    /// The input offset of output `(oy, ox)` under tap `(i, j)` along each axis.
    fn offsets(&self, i: usize, j: usize) -> (isize, isize) {
        let g = &self.geo;
        (
            (i * g.dilation[0]) as isize - g.padding[0] as isize,
            (j * g.dilation[1]) as isize - g.padding[1] as isize,
        )
    }

    /// im2col of one group of one image: `x` `[cg, h, w]` to `cols` `[cg*kh*kw, oh*ow]`.
    ///
    /// With a horizontal stride of 1 (every CNN layer here) each channel is first copied into
    /// a zero-padded plane, and every row of `cols` is then one copy from it, with no edge cases:
    /// the row-by-row `memcpy` calls and zero fills of the general loop were a third of the
    /// unfold's time on 14- and 28-wide rows.
    fn unfold(&self, x: &[f32], cols: &mut [f32]) {
        if self.geo.stride[1] == 1 {
            return self.unfold_padded(x, cols);
        }
        self.unfold_general(x, cols)
    }

    /// [`unfold`](Self::unfold) for any geometry, row by row with the edges filled.
    fn unfold_general(&self, x: &[f32], cols: &mut [f32]) {
        let (sh, sw) = (self.geo.stride[0] as isize, self.geo.stride[1] as isize);
        let p = self.positions();
        for c in 0..self.cg {
            let plane = &x[c * self.h * self.w..(c + 1) * self.h * self.w];
            for i in 0..self.kh {
                for j in 0..self.kw {
                    let row = ((c * self.kh + i) * self.kw + j) * p;
                    let (dy, dx) = self.offsets(i, j);
                    let (x_lo, x_hi) = valid_range(self.ow, sw as usize, dx, self.w);
                    for oy in 0..self.oh {
                        let dst = &mut cols[row + oy * self.ow..row + (oy + 1) * self.ow];
                        let iy = oy as isize * sh + dy;
                        if iy < 0 || iy >= self.h as isize {
                            dst.fill(0.0);
                            continue;
                        }
                        let src = &plane[iy as usize * self.w..(iy as usize + 1) * self.w];
                        dst[..x_lo].fill(0.0);
                        dst[x_hi..].fill(0.0);
                        if sw == 1 {
                            let start = (x_lo as isize + dx) as usize;
                            dst[x_lo..x_hi].copy_from_slice(&src[start..start + (x_hi - x_lo)]);
                        } else {
                            for (ox, d) in dst[x_lo..x_hi].iter_mut().enumerate() {
                                *d = src[((ox + x_lo) as isize * sw + dx) as usize];
                            }
                        }
                    }
                }
            }
        }
    }

    /// [`unfold`](Self::unfold) through a zero-padded copy of each channel (horizontal stride 1).
    fn unfold_padded(&self, x: &[f32], cols: &mut [f32]) {
        thread_local! {
            // The padded plane and the `[h, w, padding_h, padding_w]` it was laid out for.
            static PADDED: std::cell::RefCell<(Vec<f32>, [usize; 4])> =
                const { std::cell::RefCell::new((Vec::new(), [0; 4])) };
        }
        let g = &self.geo;
        let (hp, wp) = (self.h + 2 * g.padding[0], self.w + 2 * g.padding[1]);
        let (p, ow) = (self.positions(), self.ow);
        PADDED.with_borrow_mut(|(padded, layout)| {
            // The border stays zero: only the interior is ever written, so a plane laid out for
            // the same sizes and padding is reused as it is.
            let this = [self.h, self.w, g.padding[0], g.padding[1]];
            if *layout != this {
                padded.clear();
                padded.resize(hp * wp, 0.0);
                *layout = this;
            }
            for c in 0..self.cg {
                let plane = &x[c * self.h * self.w..(c + 1) * self.h * self.w];
                for (y, src) in plane.chunks_exact(self.w).enumerate() {
                    let at = (y + g.padding[0]) * wp + g.padding[1];
                    copy_row(&mut padded[at..at + self.w], src);
                }
                for i in 0..self.kh {
                    for j in 0..self.kw {
                        let row = ((c * self.kh + i) * self.kw + j) * p;
                        let dst = &mut cols[row..row + p];
                        for (oy, d) in dst.chunks_exact_mut(ow).enumerate() {
                            let at =
                                (oy * g.stride[0] + i * g.dilation[0]) * wp + j * g.dilation[1];
                            copy_row(d, &padded[at..at + ow]);
                        }
                    }
                }
            }
        });
    }

    /// col2im of one group of one image: adds `cols` `[cg*kh*kw, oh*ow]` into `x` `[cg, h, w]`.
    fn fold_add(&self, cols: &[f32], x: &mut [f32]) {
        let (sh, sw) = (self.geo.stride[0] as isize, self.geo.stride[1] as isize);
        let p = self.positions();
        for c in 0..self.cg {
            let plane = &mut x[c * self.h * self.w..(c + 1) * self.h * self.w];
            for i in 0..self.kh {
                for j in 0..self.kw {
                    let row = ((c * self.kh + i) * self.kw + j) * p;
                    let (dy, dx) = self.offsets(i, j);
                    let (x_lo, x_hi) = valid_range(self.ow, sw as usize, dx, self.w);
                    for oy in 0..self.oh {
                        let iy = oy as isize * sh + dy;
                        if iy < 0 || iy >= self.h as isize {
                            continue;
                        }
                        let src = &cols[row + oy * self.ow..row + (oy + 1) * self.ow];
                        let dst = &mut plane[iy as usize * self.w..(iy as usize + 1) * self.w];
                        if sw == 1 {
                            let start = (x_lo as isize + dx) as usize;
                            let dst = &mut dst[start..start + (x_hi - x_lo)];
                            for (d, s) in dst.iter_mut().zip(&src[x_lo..x_hi]) {
                                *d += s;
                            }
                        } else {
                            for ox in x_lo..x_hi {
                                dst[(ox as isize * sw + dx) as usize] += src[ox];
                            }
                        }
                    }
                }
            }
        }
    }
}

/// `dst.copy_from_slice(src)` for one row of a few dozen values, without a call to `memcpy`:
/// lengths 8 to 32 as two (overlapping) fixed-size copies, straight from `src` to `dst` (two
/// distinct buffers), with no temporary on the stack.
#[inline(always)]
fn copy_row(dst: &mut [f32], src: &[f32]) {
    let n = dst.len();
    if (8..=16).contains(&n) {
        dst[..8].copy_from_slice(&src[..8]);
        dst[n - 8..].copy_from_slice(&src[n - 8..n]);
    } else if (17..=32).contains(&n) {
        dst[..16].copy_from_slice(&src[..16]);
        dst[n - 16..].copy_from_slice(&src[n - 16..n]);
    } else {
        dst.copy_from_slice(src);
    }
}

/// A convolution: `x` `[K', N, C, S...]`, weights `[K', O, C/g, kernel...]`, bias `[K', O]`
/// to `[K', N, O, out...]` (1 or 2 spatial axes, `f32`).
pub(crate) fn conv<B: Backend>(
    x: Fp<B>,
    weight: Fp<B>,
    bias: Option<Fp<B>>,
    geo: &Geometry,
    on_ndarray: bool,
) -> Fp<B> {
    let device = B::float_device(&x);
    let spatial = x.shape().num_dims() - 3;
    let (xh, xs) = read::<B>(x);
    let (wh, ws) = read::<B>(weight);
    let bias = bias.map(read::<B>);
    let (xv, wv) = (xh.values(), wh.values());
    let [kx, n, c, h, w] = as_2d(&xs);
    let [kwt, o, cg, kh, kw] = as_2d(&ws);
    let geo2 = Geo2::from(geo);
    let out = [
        out_len(h, kh, geo2.stride[0], geo2.padding[0], geo2.dilation[0]),
        out_len(w, kw, geo2.stride[1], geo2.padding[1], geo2.dilation[1]),
    ];
    let plan = Plan::new(cg, [h, w], [kh, kw], out, geo2);
    let g = geo2.groups;
    let og = o / g;
    let kb = bias.as_ref().map_or(1, |b| b.1[0]);
    let bias = bias.as_ref().map(|b| b.0.values());
    let k = kx.max(kwt).max(kb);
    let (rows, p) = (plan.rows(), plan.positions());
    let image_out = o * p;
    if kx == 1 && k > 1 && g == 1 && kwt == k && (bias.is_none() || kb == k) {
        let y = conv_shared_input(xv, wv, bias, &plan, [k, n, o]);
        xh.give();
        return write::<B>(y, out_shape(k, n, o, &plan, spatial), &device, on_ndarray);
    }
    // Every element is written below (the bias, then the product added; or the product with
    // beta 0, which overwrites), so a spare buffer's old values never show.
    let mut y = super::spare::take(k * n * image_out, 0.0f32);
    y.par_chunks_mut(image_out).enumerate().for_each_init(
        || vec![0.0f32; rows * p],
        |cols, (item, out)| {
            let (m, img) = (item / n, item % n);
            let xi = &xv[(pick(kx, m) * n + img) * c * h * w..][..c * h * w];
            let wm = &wv[pick(kwt, m) * o * rows..][..o * rows];
            for gi in 0..g {
                plan.unfold(&xi[gi * cg * h * w..(gi + 1) * cg * h * w], cols);
                let block = &mut out[gi * og * p..(gi + 1) * og * p];
                let beta = match bias {
                    Some(bv) => {
                        let bm = &bv[pick(kb, m) * o..][..o];
                        for (r, row) in block.chunks_mut(p).enumerate() {
                            row.fill(bm[gi * og + r]);
                        }
                        true
                    }
                    None => false,
                };
                let a = &wm[gi * og * rows..(gi + 1) * og * rows];
                forward_product((og, rows, p), a, cols, block, beta);
            }
        },
    );
    crate::host_pool::keep_warm();
    xh.give();
    write::<B>(y, out_shape(k, n, o, &plan, spatial), &device, on_ndarray)
}

/// `buffer` as a `[rows, columns]` grid of chunks of `len` values, in row-major order, taken
/// apart by column: column `j` holds the chunks `j`, `columns + j`, ... in row order (for a
/// `[K, N, ...]` buffer, image `j`'s part of every member), so that one task can write them.
fn by_column(buffer: &mut [f32], len: usize, columns: usize) -> Vec<Vec<&mut [f32]>> {
    let rows = buffer.len() / (len * columns).max(1);
    let mut by_column: Vec<Vec<&mut [f32]>> =
        (0..columns).map(|_| Vec::with_capacity(rows)).collect();
    for (item, chunk) in buffer.chunks_mut(len).enumerate() {
        by_column[item % columns].push(chunk);
    }
    by_column
}

/// The output shape `[K, N, O, out...]` of a convolution with `spatial` axes.
fn out_shape(k: usize, n: usize, o: usize, plan: &Plan, spatial: usize) -> Vec<usize> {
    let mut shape = vec![k, n, o];
    if spatial == 2 {
        shape.push(plan.oh);
    }
    shape.push(plan.ow);
    shape
}

/// [`conv`] of an input that every member shares (a first layer reading the same images), one
/// group, per-member weights (and bias): each image is unfolded once and multiplied by each
/// member's weights, instead of unfolded K times. Every member's product has the shapes of its
/// own convolution alone (`forward_product`), so a member's values do not depend on K. (One
/// product of all the members' weights stacked as a `[K * O, rows]` matrix was faster on
/// `matrixmultiply`, but `gemm` may block a taller product differently along `rows`.)
fn conv_shared_input(
    xv: &[f32],
    wv: &[f32],
    bias: Option<&[f32]>,
    plan: &Plan,
    [k, n, o]: [usize; 3],
) -> Vec<f32> {
    let (rows, p) = (plan.rows(), plan.positions());
    let (image_in, image_out) = (plan.cg * plan.h * plan.w, o * p);
    // Every element is written below (copied from a product that covers it).
    let mut y = super::spare::take(k * n * image_out, 0.0f32);
    // Image `img`'s outputs: member m's is chunk m * n + img.
    by_column(&mut y, image_out, n)
        .into_par_iter()
        .enumerate()
        .for_each_init(
            || vec![0.0f32; rows * p],
            |cols, (img, outs)| {
                plan.unfold(&xv[img * image_in..][..image_in], cols);
                for (m, out) in outs.into_iter().enumerate() {
                    if let Some(bv) = bias {
                        for (row, &b) in out.chunks_mut(p).zip(&bv[m * o..][..o]) {
                            row.fill(b);
                        }
                    }
                    let a = &wv[m * o * rows..][..o * rows];
                    forward_product((o, rows, p), a, cols, out, bias.is_some());
                }
            },
        );
    crate::host_pool::keep_warm();
    y
}

/// The input gradient of a convolution, which is also the forward of the transposed
/// convolution: `dy` `[K', N, O, out...]`, weights `[K', O, C/g, kernel...]` to
/// `[K', N, C, input...]` for the input size `input`.
pub(crate) fn conv_x_grad<B: Backend>(
    dy: Fp<B>,
    weight: Fp<B>,
    geo: &Geometry,
    input: &[usize],
    on_ndarray: bool,
) -> Fp<B> {
    let device = B::float_device(&dy);
    let (dh, ds) = read::<B>(dy);
    let (wh, ws) = read::<B>(weight);
    let (dv, wv) = (dh.values(), wh.values());
    let [kd, n, o, oh, ow] = as_2d(&ds);
    let [kwt, _, cg, kh, kw] = as_2d(&ws);
    let [h, w] = pair(input);
    let geo2 = Geo2::from(geo);
    let plan = Plan::new(cg, [h, w], [kh, kw], [oh, ow], geo2);
    let g = geo2.groups;
    let (og, c) = (o / g, cg * g);
    let k = kd.max(kwt);
    let (rows, p) = (plan.rows(), plan.positions());
    let image_in = c * h * w;
    // Each image's part is zeroed by its task, in the cache, just before it is summed into.
    let mut dx = super::spare::take(k * n * image_in, 0.0f32);
    dx.par_chunks_mut(image_in).enumerate().for_each_init(
        || vec![0.0f32; rows * p],
        |cols, (item, out)| {
            out.fill(0.0);
            let (m, img) = (item / n, item % n);
            let di = &dv[(pick(kd, m) * n + img) * o * p..][..o * p];
            let wm = &wv[pick(kwt, m) * o * rows..][..o * rows];
            for gi in 0..g {
                // cols [rows, p] = W_g^T [rows, og] @ dy_g [og, p]
                let a = &wm[gi * og * rows..(gi + 1) * og * rows];
                let b = &di[gi * og * p..(gi + 1) * og * p];
                let w_t = Strided {
                    data: a,
                    row_stride: 1,
                    col_stride: rows,
                };
                let dy = Strided {
                    data: b,
                    row_stride: p,
                    col_stride: 1,
                };
                super::sgemm::gemm((rows, og, p), w_t, dy, cols, p, false);
                plan.fold_add(cols, &mut out[gi * cg * h * w..(gi + 1) * cg * h * w]);
            }
        },
    );
    crate::host_pool::keep_warm();
    dh.give();
    let mut shape = vec![k, n, c];
    shape.extend_from_slice(input);
    write::<B>(dx, shape, &device, on_ndarray)
}

/// The weight gradient of a convolution: `x` `[K', N, C, S...]`, `dy` `[K', N, O, out...]` to
/// `[K', O, C/g, kernel...]`.
pub(crate) fn conv_weight_grad<B: Backend>(
    x: Fp<B>,
    dy: Fp<B>,
    geo: &Geometry,
    kernel: &[usize],
    on_ndarray: bool,
) -> Fp<B> {
    let device = B::float_device(&x);
    let (xh, xs) = read::<B>(x);
    let (dh, ds) = read::<B>(dy);
    let (xv, dv) = (xh.values(), dh.values());
    let [kx, n, c, h, w] = as_2d(&xs);
    let [kd, _, o, oh, ow] = as_2d(&ds);
    let [kh, kw] = pair(kernel);
    let geo2 = Geo2::from(geo);
    let g = geo2.groups;
    let (cg, og) = (c / g, o / g);
    let plan = Plan::new(cg, [h, w], [kh, kw], [oh, ow], geo2);
    let k = kx.max(kd);
    let (rows, p) = (plan.rows(), plan.positions());
    let member_out = o * rows;
    let chunks = n.div_ceil(WEIGHT_GRAD_CHUNK).max(1);
    // One partial sum per (member, chunk of images), then each member's partials in order.
    let mut partials = super::spare::take(k * chunks * member_out, 0.0f32);
    if kx == 1 && k > 1 && g == 1 && kd == k {
        // An input that every member shares: each image unfolded once for all the members
        // (their partial sums, and so their values, as below).
        by_column(&mut partials, member_out, chunks)
            .into_par_iter()
            .enumerate()
            .for_each_init(
                || vec![0.0f32; rows * p],
                |cols, (chunk, mut accs)| {
                    accs.iter_mut().for_each(|acc| acc.fill(0.0));
                    let images =
                        chunk * WEIGHT_GRAD_CHUNK..((chunk + 1) * WEIGHT_GRAD_CHUNK).min(n);
                    for img in images {
                        plan.unfold(&xv[img * c * h * w..][..c * h * w], cols);
                        for (m, acc) in accs.iter_mut().enumerate() {
                            let a = &dv[(m * n + img) * o * p..][..o * p];
                            weight_grad_product((o, p, rows), a, cols, acc);
                        }
                    }
                },
            );
    } else {
        partials
            .par_chunks_mut(member_out)
            .enumerate()
            .for_each_init(
                || vec![0.0f32; rows * p],
                |cols, (item, acc)| {
                    acc.fill(0.0);
                    let (m, chunk) = (item / chunks, item % chunks);
                    let images =
                        chunk * WEIGHT_GRAD_CHUNK..((chunk + 1) * WEIGHT_GRAD_CHUNK).min(n);
                    for img in images {
                        let xi = &xv[(pick(kx, m) * n + img) * c * h * w..][..c * h * w];
                        let di = &dv[(pick(kd, m) * n + img) * o * p..][..o * p];
                        for gi in 0..g {
                            plan.unfold(&xi[gi * cg * h * w..(gi + 1) * cg * h * w], cols);
                            // dW_g [og, rows] += dy_g [og, p] @ cols^T [p, rows]
                            let a = &di[gi * og * p..(gi + 1) * og * p];
                            let block = &mut acc[gi * og * rows..(gi + 1) * og * rows];
                            weight_grad_product((og, p, rows), a, cols, block);
                        }
                    }
                },
            );
    }
    crate::host_pool::keep_warm();
    let mut dw = super::spare::take(k * member_out, 0.0f32);
    dw.par_chunks_mut(member_out)
        .enumerate()
        .for_each(|(m, out)| {
            out.fill(0.0);
            for chunk in 0..chunks {
                let part = &partials[(m * chunks + chunk) * member_out..][..member_out];
                for (d, s) in out.iter_mut().zip(part) {
                    *d += s;
                }
            }
        });
    crate::host_pool::keep_warm();
    super::spare::give(partials);
    xh.give();
    dh.give();
    let mut shape = vec![k, o, cg];
    shape.extend_from_slice(kernel);
    write::<B>(dw, shape, &device, on_ndarray)
}

/// `out [o, p] = w [o, rows] @ cols [rows, p]` (or `+=` when `accumulate`), all row-major: the
/// forward product of one group of one (member, image) pair, on `gemm`'s kernels (see
/// `sgemm.rs`). A member's product has these shapes in a group (shared input or not) and alone,
/// so its sums are the same.
fn forward_product(
    (o, rows, p): (usize, usize, usize),
    w: &[f32],
    cols: &[f32],
    out: &mut [f32],
    accumulate: bool,
) {
    let w = Strided {
        data: w,
        row_stride: rows,
        col_stride: 1,
    };
    let cols = Strided {
        data: cols,
        row_stride: p,
        col_stride: 1,
    };
    super::sgemm::gemm((o, rows, p), w, cols, out, p, accumulate);
}

/// `acc [o, rows] += dy [o, p] @ cols^T` for one image's `dy` and columns `cols [rows, p]`,
/// both row-major: the weight gradient's product, on `gemm`'s kernels (see `sgemm.rs`). Every
/// member's product has these shapes whether it trains in a group or alone, so the sums are the
/// same.
fn weight_grad_product(
    (o, p, rows): (usize, usize, usize),
    dy: &[f32],
    cols: &[f32],
    acc: &mut [f32],
) {
    let dy = Strided {
        data: dy,
        row_stride: p,
        col_stride: 1,
    };
    let cols_t = Strided {
        data: cols,
        row_stride: 1,
        col_stride: p,
    };
    super::sgemm::gemm((o, p, rows), dy, cols_t, acc, rows, true);
}

/// The bias gradient of a convolution: `dy` `[K', N, O, out...]` summed over the images and
/// positions to `[K', O]`, per (member, channel) in a fixed order (each image's positions, then
/// the images).
pub(crate) fn bias_grad<B: Backend>(dy: Fp<B>, on_ndarray: bool) -> Fp<B> {
    let device = B::float_device(&dy);
    let (dh, ds) = read::<B>(dy);
    let dv = dh.values();
    let (k, n, o) = (ds[0], ds[1], ds[2]);
    let p: usize = ds[3..].iter().product();
    let mut db = vec![0.0f32; k * o];
    db.par_iter_mut().enumerate().for_each(|(item, out)| {
        let (m, ch) = (item / o, item % o);
        *out = (0..n)
            .map(|img| lanes_sum(&dv[((m * n + img) * o + ch) * p..][..p]))
            .sum();
    });
    crate::host_pool::keep_warm();
    write::<B>(db, vec![k, o], &device, on_ndarray)
}

/// The sum of `v` in eight interleaved partial sums (vectorised), then the remainder: a fixed
/// order for a given length.
fn lanes_sum(v: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let chunks = v.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for (a, x) in acc.iter_mut().zip(c) {
            *a += x;
        }
    }
    let head = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    rest.iter().fold(head, |s, x| s + x)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The padded unfold gives the general loop's columns, also when one thread unfolds
    /// planes of different layouts one after another (its padded plane is reused only for the
    /// same sizes and padding: 10 x 12 and 12 x 10 padded by 1 have the same padded size).
    #[test]
    fn padded_unfold_matches_the_general_loop() {
        let cases = [
            // (channels, [h, w], [kh, kw], stride, padding, dilation)
            (2, [10, 12], [3, 3], [1, 1], [1, 1], [1, 1]),
            (2, [12, 10], [3, 3], [1, 1], [1, 1], [1, 1]),
            (1, [12, 10], [3, 3], [1, 1], [0, 0], [1, 1]),
            (3, [9, 7], [2, 3], [2, 1], [1, 2], [2, 1]),
            (1, [28, 28], [3, 3], [1, 1], [1, 1], [1, 1]),
            (2, [10, 12], [3, 3], [1, 1], [1, 1], [1, 1]),
            (2, [6, 40], [1, 5], [1, 1], [0, 2], [1, 2]),
        ];
        for (seed, &(cg, [h, w], [kh, kw], stride, padding, dilation)) in cases.iter().enumerate() {
            let geo = Geo2 {
                stride,
                padding,
                dilation,
                groups: 1,
            };
            let out = [
                out_len(h, kh, stride[0], padding[0], dilation[0]),
                out_len(w, kw, stride[1], padding[1], dilation[1]),
            ];
            let plan = Plan::new(cg, [h, w], [kh, kw], out, geo);
            let x: Vec<f32> = (0..cg * h * w)
                .map(|i| ((i * 13 + seed) % 29) as f32 + 1.0)
                .collect();
            let mut general = vec![f32::NAN; plan.rows() * plan.positions()];
            let mut padded = vec![f32::NAN; plan.rows() * plan.positions()];
            plan.unfold_general(&x, &mut general);
            plan.unfold_padded(&x, &mut padded);
            let first = general.iter().zip(&padded).position(|(a, b)| a != b);
            assert_eq!(first, None, "case {seed}: first differing column value");
        }
    }
}
