//! Differential cases for `ModuleOps` (every op, required and provided, including every
//! backward op that autodiff calls on the inner backend), plus autodiff gradients through
//! `Autodiff<Vmap<NdArray>>` compared member by member with `Autodiff<NdArray>`.
//!
//! Float results are compared with `Tol::Abs(1e-6)` (the batched rules run the same inner
//! kernels per member, so sums are taken in the same order).

use burn::backend::Autodiff;
use burn::tensor::ops::{
    AttentionModuleOptions, ConvOptions, ConvTransposeOptions, DeformConvOptions, FloatTensorOps,
    IntTensorOps, InterpolateMode, InterpolateOptions, ModuleOps, UnfoldOptions,
};
use burn::tensor::{Tensor, TensorData, TensorPrimitive};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::harness::{Tol, Val};

type Inner = crate::harness::I;
type Vm = crate::harness::V;

const T6: Tol = Tol::Abs(1e-6);
/// Convolutions: NdArray's default lowering in Vmap (`ConvLowering::HostGemm`, issue 11;
/// 3-d convolutions `BatchedGemm`) is im2col + matrix products, NdArray alone a direct loop:
/// the same products summed in another order, which differs by an ulp or two of the result
/// (outputs here reach about 20, where an ulp is 2e-6, beyond `T6`). The parity tolerance of
/// the issue, relative. (`ConvLowering::InnerConvolution` is exact; `tests/ops/conv_gemm.rs`
/// and `parity/seeds.rs` say so.)
const TCONV: Tol = Tol::Rel(1e-5, 1e-4);

fn conv_out(len: usize, k: usize, s: usize, p: usize, d: usize) -> usize {
    (len + 2 * p - d * (k - 1) - 1) / s + 1
}

fn conv_t_out(len: usize, k: usize, s: usize, p: usize, po: usize, d: usize) -> usize {
    (len - 1) * s + d * (k - 1) + 1 + po - 2 * p
}

// ---------------------------------------------------------------------------------------------
// Embedding and linear.
// ---------------------------------------------------------------------------------------------

#[test]
fn embedding() {
    diff!(
        "embedding",
        [F(vec![5, 3]), I(vec![2, 4], 0, 5)],
        Tol::Exact,
        |X, w, i| vec![Val::F(X::embedding(w.f(), i.i()))]
    );
}

#[test]
fn embedding_backward() {
    diff!(
        "embedding_backward",
        [F(vec![5, 3]), F(vec![2, 4, 3]), I(vec![2, 4], 0, 5)],
        T6,
        |X, w, g, i| vec![Val::F(X::embedding_backward(w.f(), g.f(), i.i()))]
    );
}

#[test]
fn linear() {
    diff!(
        "linear",
        [F(vec![4, 3]), F(vec![3, 5]), F(vec![5])],
        T6,
        |X, x, w, b| vec![Val::F(X::linear(x.f(), w.f(), Some(b.f())))]
    );
    diff!(
        "linear",
        [F(vec![2, 4, 3]), F(vec![3, 5]), F(vec![5])],
        T6,
        |X, x, w, b| vec![Val::F(X::linear(x.f(), w.f(), Some(b.f())))]
    );
    diff!(
        "linear",
        [F(vec![2, 4, 3]), F(vec![3, 5])],
        T6,
        |X, x, w| vec![Val::F(X::linear(x.f(), w.f(), None))]
    );
}

#[test]
fn linear_backward() {
    diff!(
        "linear_x_backward",
        [F(vec![3, 5]), F(vec![4, 5])],
        T6,
        |X, w, g| vec![Val::F(X::linear_x_backward(w.f(), g.f()))]
    );
    diff!(
        "linear_x_backward",
        [F(vec![3, 5]), F(vec![2, 4, 5])],
        T6,
        |X, w, g| vec![Val::F(X::linear_x_backward(w.f(), g.f()))]
    );
    diff!(
        "linear_weight_backward",
        [F(vec![4, 3]), F(vec![4, 5])],
        T6,
        |X, x, g| vec![Val::F(X::linear_weight_backward(x.f(), g.f()))]
    );
    diff!(
        "linear_weight_backward",
        [F(vec![2, 4, 3]), F(vec![2, 4, 5])],
        T6,
        |X, x, g| vec![Val::F(X::linear_weight_backward(x.f(), g.f()))]
    );
    diff!("linear_bias_backward", [F(vec![4, 5])], T6, |X, g| vec![
        Val::F(X::linear_bias_backward(g.f()))
    ]);
    diff!("linear_bias_backward", [F(vec![2, 4, 5])], T6, |X, g| vec![
        Val::F(X::linear_bias_backward(g.f()))
    ]);
}

// ---------------------------------------------------------------------------------------------
// Convolutions. Each case runs for every batching of x, weight, bias (or output gradient).
// ---------------------------------------------------------------------------------------------

/// (stride, padding, dilation, groups) settings covered for every convolution.
const CONV_SETTINGS: &[(usize, usize, usize, usize)] =
    &[(1, 0, 1, 1), (2, 1, 1, 1), (1, 1, 2, 2), (2, 0, 1, 2)];

#[test]
fn conv1d() {
    for &(s, p, d, g) in CONV_SETTINGS {
        let (n, c, o, l, k) = (2, 4, 6, 9, 3);
        let lo = conv_out(l, k, s, p, d);
        CONV1D.with(|cell| *cell.borrow_mut() = Some(ConvOptions::new([s], [p], [d], g)));
        diff!(
            "conv1d",
            [F(vec![n, c, l]), F(vec![o, c / g, k]), F(vec![o])],
            TCONV,
            |X, x, w, b| vec![Val::F(X::conv1d(x.f(), w.f(), Some(b.f()), opts_1()))]
        );
        diff!(
            "conv1d",
            [F(vec![n, c, l]), F(vec![o, c / g, k])],
            TCONV,
            |X, x, w| vec![Val::F(X::conv1d(x.f(), w.f(), None, opts_1()))]
        );
        diff!(
            "conv1d_x_backward",
            [F(vec![n, c, l]), F(vec![o, c / g, k]), F(vec![n, o, lo])],
            TCONV,
            |X, x, w, gr| vec![Val::F(X::conv1d_x_backward(x.f(), w.f(), gr.f(), opts_1()))]
        );
        diff!(
            "conv1d_weight_backward",
            [F(vec![n, c, l]), F(vec![o, c / g, k]), F(vec![n, o, lo])],
            TCONV,
            |X, x, w, gr| vec![Val::F(X::conv1d_weight_backward(
                x.f(),
                w.f(),
                gr.f(),
                opts_1()
            ))]
        );
        diff!(
            "conv1d_bias_backward",
            [F(vec![n, c, l]), F(vec![o]), F(vec![n, o, lo])],
            TCONV,
            |X, x, b, gr| vec![Val::F(X::conv1d_bias_backward(x.f(), b.f(), gr.f()))]
        );
    }
}

#[test]
fn conv2d() {
    for &(s, p, d, g) in CONV_SETTINGS {
        let (n, c, o, h, w_, kh, kw) = (2, 4, 6, 7, 6, 3, 2);
        let (ho, wo) = (conv_out(h, kh, s, p, d), conv_out(w_, kw, s, p, d));
        CONV2D.with(|cell| *cell.borrow_mut() = Some(ConvOptions::new([s, s], [p, p], [d, d], g)));
        diff!(
            "conv2d",
            [F(vec![n, c, h, w_]), F(vec![o, c / g, kh, kw]), F(vec![o])],
            TCONV,
            |X, x, w, b| vec![Val::F(X::conv2d(x.f(), w.f(), Some(b.f()), opts_2()))]
        );
        diff!(
            "conv2d_x_backward",
            [
                F(vec![n, c, h, w_]),
                F(vec![o, c / g, kh, kw]),
                F(vec![n, o, ho, wo])
            ],
            TCONV,
            |X, x, w, gr| vec![Val::F(X::conv2d_x_backward(x.f(), w.f(), gr.f(), opts_2()))]
        );
        diff!(
            "conv2d_weight_backward",
            [
                F(vec![n, c, h, w_]),
                F(vec![o, c / g, kh, kw]),
                F(vec![n, o, ho, wo])
            ],
            TCONV,
            |X, x, w, gr| vec![Val::F(X::conv2d_weight_backward(
                x.f(),
                w.f(),
                gr.f(),
                opts_2()
            ))]
        );
        diff!(
            "conv2d_bias_backward",
            [F(vec![n, c, h, w_]), F(vec![o]), F(vec![n, o, ho, wo])],
            TCONV,
            |X, x, b, gr| vec![Val::F(X::conv2d_bias_backward(x.f(), b.f(), gr.f()))]
        );
    }
    // Asymmetric stride / padding / dilation.
    CONV2D.with(|cell| *cell.borrow_mut() = Some(ConvOptions::new([1, 2], [0, 1], [2, 1], 1)));
    diff!(
        "conv2d",
        [F(vec![2, 3, 7, 6]), F(vec![4, 3, 2, 3])],
        TCONV,
        |X, x, w| vec![Val::F(X::conv2d(x.f(), w.f(), None, opts_2()))]
    );
}

#[test]
fn conv3d() {
    for &(s, p, d, g) in CONV_SETTINGS {
        let (n, c, o, l, k) = (2, 2, 4, 5, 2);
        let lo = conv_out(l, k, s, p, d);
        CONV3D.with(|cell| *cell.borrow_mut() = Some(ConvOptions::new([s; 3], [p; 3], [d; 3], g)));
        diff!(
            "conv3d",
            [
                F(vec![n, c, l, l, l]),
                F(vec![o, c / g, k, k, k]),
                F(vec![o])
            ],
            TCONV,
            |X, x, w, b| vec![Val::F(X::conv3d(x.f(), w.f(), Some(b.f()), opts_3()))]
        );
        diff!(
            "conv3d_x_backward",
            [
                F(vec![n, c, l, l, l]),
                F(vec![o, c / g, k, k, k]),
                F(vec![n, o, lo, lo, lo])
            ],
            TCONV,
            |X, x, w, gr| vec![Val::F(X::conv3d_x_backward(x.f(), w.f(), gr.f(), opts_3()))]
        );
        diff!(
            "conv3d_weight_backward",
            [
                F(vec![n, c, l, l, l]),
                F(vec![o, c / g, k, k, k]),
                F(vec![n, o, lo, lo, lo])
            ],
            TCONV,
            |X, x, w, gr| vec![Val::F(X::conv3d_weight_backward(
                x.f(),
                w.f(),
                gr.f(),
                opts_3()
            ))]
        );
        diff!(
            "conv3d_bias_backward",
            [
                F(vec![n, c, l, l, l]),
                F(vec![o]),
                F(vec![n, o, lo, lo, lo])
            ],
            TCONV,
            |X, x, b, gr| vec![Val::F(X::conv3d_bias_backward(x.f(), b.f(), gr.f()))]
        );
    }
}

/// (stride, padding, padding_out, dilation, groups) settings for transposed convolutions.
const CONV_T_SETTINGS: &[(usize, usize, usize, usize, usize)] = &[
    (1, 0, 0, 1, 1),
    (2, 1, 1, 1, 1),
    (2, 0, 1, 2, 2),
    (1, 1, 0, 1, 2),
];

#[test]
fn conv_transpose1d() {
    for &(s, p, po, d, g) in CONV_T_SETTINGS {
        let (n, c, og, l, k) = (2, 4, 3, 5, 3);
        let o = og * g;
        let lo = conv_t_out(l, k, s, p, po, d);
        CONVT1D.with(|cell| {
            *cell.borrow_mut() = Some(ConvTransposeOptions::new([s], [p], [po], [d], g))
        });
        diff!(
            "conv_transpose1d",
            [F(vec![n, c, l]), F(vec![c, og, k]), F(vec![o])],
            TCONV,
            |X, x, w, b| vec![Val::F(X::conv_transpose1d(
                x.f(),
                w.f(),
                Some(b.f()),
                opts_t1()
            ))]
        );
        diff!(
            "conv_transpose1d_x_backward",
            [F(vec![c, og, k]), F(vec![n, o, lo])],
            TCONV,
            |X, w, gr| vec![Val::F(X::conv_transpose1d_x_backward(
                w.f(),
                gr.f(),
                opts_t1()
            ))]
        );
        diff!(
            "conv_transpose1d_weight_backward",
            [F(vec![n, c, l]), F(vec![c, og, k]), F(vec![n, o, lo])],
            TCONV,
            |X, x, w, gr| vec![Val::F(X::conv_transpose1d_weight_backward(
                x.f(),
                w.f(),
                gr.f(),
                opts_t1()
            ))]
        );
        diff!(
            "conv_transpose1d_bias_backward",
            [F(vec![n, c, l]), F(vec![o]), F(vec![n, o, lo])],
            TCONV,
            |X, x, b, gr| vec![Val::F(X::conv_transpose1d_bias_backward(
                x.f(),
                b.f(),
                gr.f()
            ))]
        );
    }
}

#[test]
fn conv_transpose2d() {
    for &(s, p, po, d, g) in CONV_T_SETTINGS {
        let (n, c, og, h, w_, kh, kw) = (2, 4, 3, 4, 5, 3, 2);
        let o = og * g;
        let (ho, wo) = (
            conv_t_out(h, kh, s, p, po, d),
            conv_t_out(w_, kw, s, p, po, d),
        );
        CONVT2D.with(|cell| {
            *cell.borrow_mut() = Some(ConvTransposeOptions::new(
                [s, s],
                [p, p],
                [po, po],
                [d, d],
                g,
            ))
        });
        diff!(
            "conv_transpose2d",
            [F(vec![n, c, h, w_]), F(vec![c, og, kh, kw]), F(vec![o])],
            TCONV,
            |X, x, w, b| vec![Val::F(X::conv_transpose2d(
                x.f(),
                w.f(),
                Some(b.f()),
                opts_t2()
            ))]
        );
        diff!(
            "conv_transpose2d",
            [F(vec![n, c, h, w_]), F(vec![c, og, kh, kw])],
            TCONV,
            |X, x, w| vec![Val::F(X::conv_transpose2d(x.f(), w.f(), None, opts_t2()))]
        );
        diff!(
            "conv_transpose2d_x_backward",
            [F(vec![c, og, kh, kw]), F(vec![n, o, ho, wo])],
            TCONV,
            |X, w, gr| vec![Val::F(X::conv_transpose2d_x_backward(
                w.f(),
                gr.f(),
                opts_t2()
            ))]
        );
        diff!(
            "conv_transpose2d_weight_backward",
            [
                F(vec![n, c, h, w_]),
                F(vec![c, og, kh, kw]),
                F(vec![n, o, ho, wo])
            ],
            TCONV,
            |X, x, w, gr| vec![Val::F(X::conv_transpose2d_weight_backward(
                x.f(),
                w.f(),
                gr.f(),
                opts_t2()
            ))]
        );
        diff!(
            "conv_transpose2d_bias_backward",
            [F(vec![n, c, h, w_]), F(vec![o]), F(vec![n, o, ho, wo])],
            TCONV,
            |X, x, b, gr| vec![Val::F(X::conv_transpose2d_bias_backward(
                x.f(),
                b.f(),
                gr.f()
            ))]
        );
    }
}

#[test]
fn conv_transpose3d() {
    for &(s, p, po, d, g) in CONV_T_SETTINGS {
        let (n, c, og, l, k) = (2, 2, 2, 3, 2);
        let o = og * g;
        let lo = conv_t_out(l, k, s, p, po, d);
        CONVT3D.with(|cell| {
            *cell.borrow_mut() = Some(ConvTransposeOptions::new(
                [s; 3], [p; 3], [po; 3], [d; 3], g,
            ))
        });
        diff!(
            "conv_transpose3d",
            [F(vec![n, c, l, l, l]), F(vec![c, og, k, k, k]), F(vec![o])],
            TCONV,
            |X, x, w, b| vec![Val::F(X::conv_transpose3d(
                x.f(),
                w.f(),
                Some(b.f()),
                opts_t3()
            ))]
        );
        diff!(
            "conv_transpose3d_x_backward",
            [F(vec![c, og, k, k, k]), F(vec![n, o, lo, lo, lo])],
            TCONV,
            |X, w, gr| vec![Val::F(X::conv_transpose3d_x_backward(
                w.f(),
                gr.f(),
                opts_t3()
            ))]
        );
        diff!(
            "conv_transpose3d_weight_backward",
            [
                F(vec![n, c, l, l, l]),
                F(vec![c, og, k, k, k]),
                F(vec![n, o, lo, lo, lo])
            ],
            TCONV,
            |X, x, w, gr| vec![Val::F(X::conv_transpose3d_weight_backward(
                x.f(),
                w.f(),
                gr.f(),
                opts_t3()
            ))]
        );
        diff!(
            "conv_transpose3d_bias_backward",
            [
                F(vec![n, c, l, l, l]),
                F(vec![o]),
                F(vec![n, o, lo, lo, lo])
            ],
            TCONV,
            |X, x, b, gr| vec![Val::F(X::conv_transpose3d_bias_backward(
                x.f(),
                b.f(),
                gr.f()
            ))]
        );
    }
}

fn deform_opts() -> DeformConvOptions<2> {
    // 4 input channels, 2 weight groups, 2 offset groups.
    DeformConvOptions::new([1, 1], [1, 1], [1, 1], 2, 2)
}

#[test]
fn deform_conv2d() {
    // x [1, 4, 4, 4], weight [2, 2, 2, 2], out 5x5 (padding 1), offsets for 2 groups * 2x2.
    diff!(
        "deform_conv2d",
        [
            F(vec![1, 4, 4, 4]),
            Frange(vec![1, 16, 5, 5], -1.0, 1.0),
            F(vec![2, 2, 2, 2]),
            Frange(vec![1, 8, 5, 5], 0.0, 1.0),
            F(vec![2])
        ],
        T6,
        |X, x, off, w, m, b| vec![Val::F(X::deform_conv2d(
            x.f(),
            off.f(),
            w.f(),
            Some(m.f()),
            Some(b.f()),
            deform_opts()
        ))]
    );
    diff!(
        "deform_conv2d",
        [
            F(vec![2, 4, 4, 4]),
            Frange(vec![2, 16, 5, 5], -1.0, 1.0),
            F(vec![2, 2, 2, 2])
        ],
        T6,
        |X, x, off, w| vec![Val::F(X::deform_conv2d(
            x.f(),
            off.f(),
            w.f(),
            None,
            None,
            deform_opts()
        ))]
    );
}

#[test]
fn deform_conv2d_backward() {
    diff!(
        "deform_conv2d_backward",
        [
            F(vec![1, 4, 4, 4]),
            Frange(vec![1, 16, 5, 5], -1.0, 1.0),
            F(vec![2, 2, 2, 2]),
            Frange(vec![1, 8, 5, 5], 0.0, 1.0),
            F(vec![2]),
            F(vec![1, 2, 5, 5])
        ],
        T6,
        |X, x, off, w, m, b, gr| {
            let r = X::deform_conv2d_backward(
                x.f(),
                off.f(),
                w.f(),
                Some(m.f()),
                Some(b.f()),
                gr.f(),
                deform_opts(),
            );
            vec![
                Val::F(r.x_grad),
                Val::F(r.offset_grad),
                Val::F(r.weight_grad),
                Val::F(r.mask_grad.expect("mask grad")),
                Val::F(r.bias_grad.expect("bias grad")),
            ]
        }
    );
}

// ---------------------------------------------------------------------------------------------
// Pooling, unfold, interpolation.
// ---------------------------------------------------------------------------------------------

#[test]
fn unfold4d() {
    diff!("unfold4d", [F(vec![2, 3, 5, 6])], Tol::Exact, |X, x| {
        vec![Val::F(X::unfold4d(
            x.f(),
            [2, 3],
            UnfoldOptions::new([1, 2], [0, 0], [1, 1]),
        ))]
    });
    diff!("unfold4d", [F(vec![2, 3, 5, 6])], T6, |X, x| {
        vec![Val::F(X::unfold4d(
            x.f(),
            [2, 2],
            UnfoldOptions::new([2, 1], [1, 1], [2, 1]),
        ))]
    });
}

#[test]
fn avg_pool() {
    diff!("avg_pool1d", [F(vec![2, 3, 9])], T6, |X, x| {
        vec![Val::F(X::avg_pool1d(x.f(), 3, 2, 1, true, false))]
    });
    diff!("avg_pool1d", [F(vec![2, 3, 9])], T6, |X, x| {
        vec![Val::F(X::avg_pool1d(x.f(), 2, 2, 1, false, true))]
    });
    diff!(
        "avg_pool1d_backward",
        [F(vec![2, 3, 9]), F(vec![2, 3, 5])],
        T6,
        |X, x, g| vec![Val::F(X::avg_pool1d_backward(
            x.f(),
            g.f(),
            3,
            2,
            1,
            true,
            false
        ))]
    );
    diff!("avg_pool2d", [F(vec![2, 3, 6, 7])], T6, |X, x| {
        vec![Val::F(X::avg_pool2d(
            x.f(),
            [2, 3],
            [2, 1],
            [1, 1],
            false,
            false,
        ))]
    });
    diff!(
        "avg_pool2d_backward",
        [F(vec![2, 3, 6, 7]), F(vec![2, 3, 4, 7])],
        T6,
        |X, x, g| vec![Val::F(X::avg_pool2d_backward(
            x.f(),
            g.f(),
            [2, 3],
            [2, 1],
            [1, 1],
            false,
            false
        ))]
    );
}

#[test]
fn adaptive_avg_pool() {
    diff!("adaptive_avg_pool1d", [F(vec![2, 3, 9])], T6, |X, x| {
        vec![Val::F(X::adaptive_avg_pool1d(x.f(), 4))]
    });
    diff!(
        "adaptive_avg_pool1d_backward",
        [F(vec![2, 3, 9]), F(vec![2, 3, 4])],
        T6,
        |X, x, g| vec![Val::F(X::adaptive_avg_pool1d_backward(x.f(), g.f()))]
    );
    diff!("adaptive_avg_pool2d", [F(vec![2, 3, 7, 5])], T6, |X, x| {
        vec![Val::F(X::adaptive_avg_pool2d(x.f(), [3, 2]))]
    });
    diff!(
        "adaptive_avg_pool2d_backward",
        [F(vec![2, 3, 7, 5]), F(vec![2, 3, 3, 2])],
        T6,
        |X, x, g| vec![Val::F(X::adaptive_avg_pool2d_backward(x.f(), g.f()))]
    );
}

#[test]
fn max_pool() {
    diff!("max_pool1d", [F(vec![2, 3, 9])], Tol::Exact, |X, x| {
        vec![Val::F(X::max_pool1d(x.f(), 3, 2, 1, 1, false))]
    });
    diff!(
        "max_pool1d_with_indices",
        [F(vec![2, 3, 9])],
        Tol::Exact,
        |X, x| {
            let r = X::max_pool1d_with_indices(x.f(), 2, 2, 0, 2, true);
            vec![Val::F(r.output), Val::I(r.indices)]
        }
    );
    // Indices: any positions of the input rows (the backward scatters there).
    diff!(
        "max_pool1d_with_indices_backward",
        [F(vec![2, 3, 9]), F(vec![2, 3, 5]), I(vec![2, 3, 5], 0, 9)],
        T6,
        |X, x, g, i| vec![Val::F(
            X::max_pool1d_with_indices_backward(x.f(), 3, 2, 1, 1, false, g.f(), i.i()).x_grad
        )]
    );
    diff!("max_pool2d", [F(vec![2, 3, 6, 7])], Tol::Exact, |X, x| {
        vec![Val::F(X::max_pool2d(
            x.f(),
            [2, 3],
            [2, 1],
            [1, 1],
            [1, 2],
            false,
        ))]
    });
    diff!(
        "max_pool2d_with_indices",
        [F(vec![2, 3, 6, 7])],
        Tol::Exact,
        |X, x| {
            let r = X::max_pool2d_with_indices(x.f(), [2, 2], [2, 2], [0, 1], [1, 1], true);
            vec![Val::F(r.output), Val::I(r.indices)]
        }
    );
    diff!(
        "max_pool2d_with_indices_backward",
        [
            F(vec![2, 3, 6, 7]),
            F(vec![2, 3, 3, 4]),
            I(vec![2, 3, 3, 4], 0, 42)
        ],
        T6,
        |X, x, g, i| vec![Val::F(
            X::max_pool2d_with_indices_backward(
                x.f(),
                [2, 2],
                [2, 2],
                [0, 1],
                [1, 1],
                false,
                g.f(),
                i.i()
            )
            .x_grad
        )]
    );
}

#[test]
fn interpolate() {
    diff!("interpolate", [F(vec![2, 3, 4, 5])], T6, |X, x| {
        vec![Val::F(X::interpolate(
            x.f(),
            [7, 3],
            InterpolateOptions::new(InterpolateMode::Nearest),
        ))]
    });
    diff!("interpolate", [F(vec![2, 3, 4, 5])], T6, |X, x| {
        vec![Val::F(X::interpolate(
            x.f(),
            [7, 3],
            InterpolateOptions::new(InterpolateMode::Bilinear).with_align_corners(false),
        ))]
    });
    diff!("interpolate", [F(vec![2, 3, 4, 5])], T6, |X, x| {
        vec![Val::F(X::interpolate(
            x.f(),
            [6, 8],
            InterpolateOptions::new(InterpolateMode::Bicubic),
        ))]
    });
    // NdArray implements the backward of nearest interpolation only.
    diff!(
        "interpolate_backward",
        [F(vec![2, 3, 4, 5]), F(vec![2, 3, 7, 3])],
        T6,
        |X, x, g| vec![Val::F(X::interpolate_backward(
            x.f(),
            g.f(),
            [7, 3],
            InterpolateOptions::new(InterpolateMode::Nearest)
        ))]
    );
}

// ---------------------------------------------------------------------------------------------
// Attention, layer norm, ctc, fft.
// ---------------------------------------------------------------------------------------------

#[test]
fn attention() {
    diff!(
        "attention",
        [
            F(vec![2, 2, 3, 4]),
            F(vec![2, 2, 5, 4]),
            F(vec![2, 2, 5, 3]),
            B(vec![2, 2, 3, 5]),
            F(vec![2, 2, 3, 5])
        ],
        T6,
        |X, q, k, v, m, b| vec![Val::F(X::attention(
            q.f(),
            k.f(),
            v.f(),
            Some(m.b()),
            Some(b.f()),
            AttentionModuleOptions::default()
        ))]
    );
    diff!(
        "attention",
        [
            F(vec![2, 2, 3, 4]),
            F(vec![2, 2, 5, 4]),
            F(vec![2, 2, 5, 3])
        ],
        T6,
        |X, q, k, v| vec![Val::F(X::attention(
            q.f(),
            k.f(),
            v.f(),
            None,
            None,
            AttentionModuleOptions {
                scale: Some(0.3),
                softcap: Some(2.0),
                is_causal: true,
            }
        ))]
    );
}

#[test]
fn layer_norm() {
    diff!(
        "layer_norm",
        [F(vec![2, 3, 4]), F(vec![4]), F(vec![4])],
        T6,
        |X, x, g, b| vec![Val::F(X::layer_norm(x.f(), g.f(), Some(b.f()), 1e-5))]
    );
    diff!(
        "layer_norm",
        [F(vec![3, 4]), F(vec![4])],
        T6,
        |X, x, g| vec![Val::F(X::layer_norm(x.f(), g.f(), None, 1e-5))]
    );
}

#[test]
fn ctc_loss() {
    // log_probs [T=6, N=2, C=4], targets [2, 3] (labels 1..4), lengths per sample.
    diff!(
        "ctc_loss",
        [
            Frange(vec![6, 2, 4], -3.0, -0.1),
            I(vec![2, 3], 1, 4),
            Idata(TensorData::from([6i64, 5])),
            Idata(TensorData::from([3i64, 2]))
        ],
        T6,
        |X, lp, t, il, tl| vec![Val::F(X::ctc_loss(lp.f(), t.i(), il.i(), tl.i(), 0))]
    );
    // Batched lengths: member-dependent (random) lengths.
    diff!(
        "ctc_loss",
        [
            Frange(vec![6, 2, 4], -3.0, -0.1),
            I(vec![2, 2], 1, 4),
            I(vec![2], 4, 7),
            I(vec![2], 1, 3)
        ],
        T6,
        |X, lp, t, il, tl| vec![Val::F(X::ctc_loss(lp.f(), t.i(), il.i(), tl.i(), 0))]
    );
}

#[test]
fn has_ctc_loss_backward() {
    // "has_ctc_loss_backward": Vmap has a fused ctc backward exactly when its inner backend has.
    assert_eq!(
        <Vm as ModuleOps<Vm>>::has_ctc_loss_backward(),
        <Inner as ModuleOps<Inner>>::has_ctc_loss_backward()
    );
    crate::harness::record_covered("has_ctc_loss_backward");
}

#[test]
#[should_panic(expected = "has_ctc_loss_backward() returns false")]
fn ctc_loss_backward() {
    // "ctc_loss_backward" folds K into the batch axis and forwards to the inner backend; NdArray
    // has none (autodiff then differentiates the default ctc_loss), so the inner panic surfaces.
    let device = Default::default();
    let members = 2;
    let lp = Inner::float_from_data(
        TensorData::new(vec![-1.0f32; 2 * 6 * 2 * 4], [2, 6, 2, 4]),
        &device,
    );
    let t = Inner::int_from_data(TensorData::from([[1i64, 2], [2, 3]]), &device);
    let il = Inner::int_from_data(TensorData::from([6i64, 5]), &device);
    let tl = Inner::int_from_data(TensorData::from([2i64, 1]), &device);
    let gl = Inner::float_from_data(TensorData::from([1.0f32, 1.0]), &device);
    let b = |p| saturate_vmap::tensor::from_inner(p, true, members);
    let u = |p| saturate_vmap::tensor::from_inner(p, false, members);
    let _ = Vm::ctc_loss_backward(b(lp), u(t), u(il), u(tl), u(gl), 0);
}

#[test]
#[should_panic(expected = "rfft is not supported for ndarray")]
fn rfft() {
    // "rfft" forwards with the dim shifted past the member axis; NdArray has no fft.
    let device = Default::default();
    let x = Inner::float_from_data(TensorData::new(vec![1.0f32; 3 * 8], [3, 8]), &device);
    let _ = Vm::rfft(saturate_vmap::tensor::from_inner(x, true, 3), 0, None);
}

#[test]
#[should_panic(expected = "irfft is not supported for ndarray")]
fn irfft() {
    // "irfft" forwards with the dim shifted past the member axis; NdArray has no fft.
    let device = Default::default();
    let re = Inner::float_from_data(TensorData::new(vec![1.0f32; 3 * 5], [3, 5]), &device);
    let im = Inner::float_from_data(TensorData::new(vec![0.0f32; 5], [5]), &device);
    let _ = Vm::irfft(
        saturate_vmap::tensor::from_inner(re, true, 3),
        saturate_vmap::tensor::from_inner(im, false, 3),
        0,
        Some(8),
    );
}

// The `diff!` body is a plain generic fn and cannot capture locals: the options of the current
// setting travel through thread-locals.
thread_local! {
    static CONV1D: std::cell::RefCell<Option<ConvOptions<1>>> = const { std::cell::RefCell::new(None) };
    static CONV2D: std::cell::RefCell<Option<ConvOptions<2>>> = const { std::cell::RefCell::new(None) };
    static CONV3D: std::cell::RefCell<Option<ConvOptions<3>>> = const { std::cell::RefCell::new(None) };
    static CONVT1D: std::cell::RefCell<Option<ConvTransposeOptions<1>>> = const { std::cell::RefCell::new(None) };
    static CONVT2D: std::cell::RefCell<Option<ConvTransposeOptions<2>>> = const { std::cell::RefCell::new(None) };
    static CONVT3D: std::cell::RefCell<Option<ConvTransposeOptions<3>>> = const { std::cell::RefCell::new(None) };
}

fn opts_1() -> ConvOptions<1> {
    CONV1D.with(|c| c.borrow().clone().expect("conv1d options"))
}
fn opts_2() -> ConvOptions<2> {
    CONV2D.with(|c| c.borrow().clone().expect("conv2d options"))
}
fn opts_3() -> ConvOptions<3> {
    CONV3D.with(|c| c.borrow().clone().expect("conv3d options"))
}
fn opts_t1() -> ConvTransposeOptions<1> {
    CONVT1D.with(|c| c.borrow().clone().expect("conv_transpose1d options"))
}
fn opts_t2() -> ConvTransposeOptions<2> {
    CONVT2D.with(|c| c.borrow().clone().expect("conv_transpose2d options"))
}
fn opts_t3() -> ConvTransposeOptions<3> {
    CONVT3D.with(|c| c.borrow().clone().expect("conv_transpose3d options"))
}
// ---------------------------------------------------------------------------------------------
// Autodiff: `Autodiff<Vmap<NdArray>>` gradients per member vs `Autodiff<NdArray>` run member by
// member. Autodiff calls the backward ops above on the inner (vmap) backend directly.
// ---------------------------------------------------------------------------------------------

type Av = Autodiff<Vm>;
type Ai = Autodiff<Inner>;

/// A leaf of an autodiff case: its logical shape and whether it is batched (one value per
/// member) or shared by all members. Leaves enter the loss flattened (rank 1).
type Leaf = (Vec<usize>, bool);

fn ad_check(
    name: &str,
    leaves: &[Leaf],
    vm: &dyn Fn(Vec<Tensor<Av, 1>>) -> Tensor<Av, 1>,
    reference: &dyn Fn(Vec<Tensor<Ai, 1>>) -> Tensor<Ai, 1>,
) {
    let device = Default::default();
    for k in [1usize, 3] {
        let mut rng = StdRng::seed_from_u64(0xad ^ k as u64);
        let datas: Vec<Vec<f32>> = leaves
            .iter()
            .map(|(s, b)| {
                let n = s.iter().product::<usize>() * if *b { k } else { 1 };
                (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect()
            })
            .collect();
        let vleaves: Vec<Tensor<Av, 1>> = leaves
            .iter()
            .zip(&datas)
            .map(|((s, b), d)| {
                let n: usize = s.iter().product();
                let shape = if *b { vec![k, n] } else { vec![n] };
                let p = Inner::float_from_data(TensorData::new(d.clone(), shape), &device);
                let vt = saturate_vmap::tensor::from_inner(p, *b, k);
                let t = Tensor::<Vm, 1>::from_primitive(TensorPrimitive::Float(vt));
                Tensor::<Av, 1>::from_inner(t).require_grad()
            })
            .collect();
        let loss = vm(vleaves.clone());
        let vloss = saturate_vmap::member_data(loss.clone().inner());
        let grads = loss.backward();
        let vgrads: Vec<Vec<TensorData>> = vleaves
            .iter()
            .map(|l| saturate_vmap::member_data(l.grad(&grads).expect("vmap grad")))
            .collect();
        for m in 0..k {
            let rleaves: Vec<Tensor<Ai, 1>> = leaves
                .iter()
                .zip(&datas)
                .map(|((s, b), d)| {
                    let n: usize = s.iter().product();
                    let d = if *b {
                        d[m * n..(m + 1) * n].to_vec()
                    } else {
                        d.clone()
                    };
                    Tensor::<Ai, 1>::from_data(TensorData::new(d, [n]), &device).require_grad()
                })
                .collect();
            let loss = reference(rleaves.clone());
            let want_loss = loss.clone().into_data();
            let ctx = format!("{name}, K={k}, member {m}");
            close(&vloss[m], &want_loss, &format!("{ctx}: loss"));
            let grads = loss.backward();
            for (j, l) in rleaves.iter().enumerate() {
                let want = l.grad(&grads).expect("reference grad").into_data();
                close(
                    &vgrads[j][m],
                    &want,
                    &format!("{ctx}: gradient of leaf {j}"),
                );
            }
        }
    }
}

fn close(got: &TensorData, want: &TensorData, ctx: &str) {
    assert_eq!(got.shape, want.shape, "{ctx}: shape");
    let g = got.as_slice::<f32>().expect("f32");
    let w = want.as_slice::<f32>().expect("f32");
    for (i, (a, b)) in g.iter().zip(w).enumerate() {
        assert!(
            (a - b).abs() <= 1e-5 + 1e-5 * b.abs(),
            "{ctx}: element {i}: got {a}, want {b}"
        );
    }
}

/// Declares an autodiff case: `|X, xs| loss` is instantiated on both backends; `xs` are the
/// flattened leaves.
macro_rules! ad {
    ($name:expr, [$($leaf:expr),* $(,)?], |$x:ident, $xs:ident| $body:expr) => {{
        #[allow(non_snake_case)]
        fn f<$x: burn::tensor::backend::AutodiffBackend>($xs: Vec<Tensor<$x, 1>>) -> Tensor<$x, 1> {
            $body
        }
        ad_check($name, &[$($leaf),*], &f::<Av>, &f::<Ai>);
    }};
}

/// Every batching of a weight-like leaf set: shared input with batched parameters (the common
/// case), batched input with batched parameters, batched input with shared parameters.
fn batchings(n: usize) -> Vec<Vec<bool>> {
    vec![
        std::iter::once(false)
            .chain(std::iter::repeat_n(true, n - 1))
            .collect(),
        vec![true; n],
        std::iter::once(true)
            .chain(std::iter::repeat_n(false, n - 1))
            .collect(),
    ]
}

fn leaves(shapes: &[&[usize]], batched: &[bool]) -> Vec<Leaf> {
    shapes
        .iter()
        .zip(batched)
        .map(|(s, &b)| (s.to_vec(), b))
        .collect()
}

#[test]
fn autodiff_conv2d_pool() {
    for b in batchings(3) {
        let l = leaves(&[&[2, 3, 6, 6], &[4, 3, 3, 3], &[4]], &b);
        ad!(
            "autodiff conv2d + max_pool2d",
            [l[0].clone(), l[1].clone(), l[2].clone()],
            |X, xs| {
                let x = xs[0].clone().reshape([2, 3, 6, 6]);
                let w = xs[1].clone().reshape([4, 3, 3, 3]);
                let y = burn::tensor::module::conv2d(
                    x,
                    w,
                    Some(xs[2].clone()),
                    ConvOptions::new([1, 1], [1, 1], [1, 1], 1),
                );
                let y = burn::tensor::activation::relu(y);
                let y = burn::tensor::module::max_pool2d(y, [2, 2], [2, 2], [0, 0], [1, 1], false);
                (y.clone() * y).sum()
            }
        );
        // Groups, stride, dilation; then average and adaptive pooling.
        let l = leaves(&[&[2, 4, 7, 7], &[6, 2, 2, 2], &[6]], &b);
        ad!(
            "autodiff grouped conv2d + avg pools",
            [l[0].clone(), l[1].clone(), l[2].clone()],
            |X, xs| {
                let x = xs[0].clone().reshape([2, 4, 7, 7]);
                let w = xs[1].clone().reshape([6, 2, 2, 2]);
                let y = burn::tensor::module::conv2d(
                    x,
                    w,
                    Some(xs[2].clone()),
                    ConvOptions::new([2, 1], [1, 0], [1, 2], 2),
                );
                let a = burn::tensor::module::avg_pool2d(
                    y.clone(),
                    [2, 2],
                    [1, 1],
                    [1, 1],
                    true,
                    false,
                );
                let c = burn::tensor::module::adaptive_avg_pool2d(y, [2, 3]);
                (a.clone() * a).sum() + (c.clone() * c).sum()
            }
        );
    }
}

#[test]
fn autodiff_conv1d_conv_transpose() {
    for b in batchings(3) {
        let l = leaves(&[&[2, 4, 9], &[6, 2, 3], &[6]], &b);
        ad!(
            "autodiff conv1d + pools",
            [l[0].clone(), l[1].clone(), l[2].clone()],
            |X, xs| {
                let x = xs[0].clone().reshape([2, 4, 9]);
                let w = xs[1].clone().reshape([6, 2, 3]);
                let y = burn::tensor::module::conv1d(
                    x,
                    w,
                    Some(xs[2].clone()),
                    ConvOptions::new([2], [1], [1], 2),
                );
                let m = burn::tensor::module::max_pool1d(y.clone(), 2, 1, 0, 1, false);
                let a = burn::tensor::module::avg_pool1d(y.clone(), 2, 1, 1, true, false);
                let c = burn::tensor::module::adaptive_avg_pool1d(y, 2);
                (m.clone() * m).sum() + (a.clone() * a).sum() + (c.clone() * c).sum()
            }
        );
        let l = leaves(&[&[2, 4, 3, 4], &[4, 3, 2, 3], &[6]], &b);
        ad!(
            "autodiff conv_transpose2d",
            [l[0].clone(), l[1].clone(), l[2].clone()],
            |X, xs| {
                let x = xs[0].clone().reshape([2, 4, 3, 4]);
                let w = xs[1].clone().reshape([4, 3, 2, 3]);
                let y = burn::tensor::module::conv_transpose2d(
                    x,
                    w,
                    Some(xs[2].clone()),
                    ConvTransposeOptions::new([2, 1], [1, 0], [1, 0], [1, 1], 2),
                );
                let y = burn::tensor::module::interpolate(
                    y,
                    [5, 9],
                    InterpolateOptions::new(InterpolateMode::Nearest),
                );
                (y.clone() * y).sum()
            }
        );
        let l = leaves(&[&[1, 2, 3, 3, 3], &[2, 2, 2, 2, 2], &[2]], &b);
        ad!(
            "autodiff conv3d",
            [l[0].clone(), l[1].clone(), l[2].clone()],
            |X, xs| {
                let x = xs[0].clone().reshape([1, 2, 3, 3, 3]);
                let w = xs[1].clone().reshape([2, 2, 2, 2, 2]);
                let y = burn::tensor::module::conv3d(
                    x,
                    w,
                    Some(xs[2].clone()),
                    ConvOptions::new([1, 1, 1], [1, 1, 1], [1, 1, 1], 1),
                );
                (y.clone() * y).sum()
            }
        );
    }
}

#[test]
fn autodiff_linear() {
    for b in batchings(3) {
        let l = leaves(&[&[5, 4], &[4, 3], &[3]], &b);
        ad!(
            "autodiff linear",
            [l[0].clone(), l[1].clone(), l[2].clone()],
            |X, xs| {
                let x = xs[0].clone().reshape([5, 4]);
                let w = xs[1].clone().reshape([4, 3]);
                let y = burn::tensor::module::linear(x, w, Some(xs[2].clone()));
                let y = burn::tensor::activation::tanh(y);
                (y.clone() * y).sum()
            }
        );
        let l = leaves(&[&[2, 5, 4], &[4, 3], &[3]], &b);
        ad!(
            "autodiff linear rank 3",
            [l[0].clone(), l[1].clone(), l[2].clone()],
            |X, xs| {
                let x = xs[0].clone().reshape([2, 5, 4]);
                let w = xs[1].clone().reshape([4, 3]);
                let y = burn::tensor::module::linear(x, w, Some(xs[2].clone()));
                (y.clone() * y).sum()
            }
        );
    }
}

#[test]
fn autodiff_embedding() {
    for b in [true, false] {
        ad!("autodiff embedding", [(vec![6, 3], b)], |X, xs| {
            let w = xs[0].clone().reshape([6, 3]);
            let device = w.device();
            let idx = Tensor::<X, 2, burn::tensor::Int>::from_data(
                TensorData::from([[0i64, 2, 2], [5, 1, 0]]),
                &device,
            );
            let y = burn::tensor::module::embedding(w, idx);
            (y.clone() * y).sum()
        });
    }
}

/// The gradient of a shared input under batched weights is batched: one exact gradient per
/// member (member losses are independent), not a sum over members.
#[test]
fn shared_input_gets_per_member_gradients() {
    let device = Default::default();
    let k = 3;
    let x = Inner::float_from_data(TensorData::new(vec![1.0f32, 2.0], [1, 2]), &device);
    let w = Inner::float_from_data(
        TensorData::new(
            vec![
                1.0f32, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 2.0, 3.0, 0.0, 0.0, 3.0,
            ],
            [k, 2, 2],
        ),
        &device,
    );
    let to_ad = |p, batched| {
        let vt = saturate_vmap::tensor::from_inner(p, batched, k);
        Tensor::<Av, 2>::from_inner(Tensor::<Vm, 2>::from_primitive(TensorPrimitive::Float(vt)))
            .require_grad()
    };
    let x = to_ad(x, false);
    let w = to_ad(w, true);
    let loss = burn::tensor::module::linear(x.clone(), w, None).sum();
    let grads = loss.backward();
    let gx = saturate_vmap::member_data(x.grad(&grads).expect("x grad"));
    for (m, g) in gx.iter().enumerate() {
        let s = (m + 1) as f32;
        assert_eq!(g.as_slice::<f32>().unwrap(), &[s, s], "member {m}");
    }
}

/// `conv2d_x_backward` is computed as a convolution of the dilated, padded gradient: cover a
/// padding larger than the kernel's reach (the padded gradient is cropped), strides that leave
/// `padding_out` rows, dilation and groups together.
#[test]
fn conv2d_x_backward_by_convolution_edge_cases() {
    for &(kh, kw, s, p, d, g) in &[
        (1, 1, 1, 1, 1, 1),
        (1, 3, 2, 2, 1, 2),
        (3, 3, 3, 1, 2, 2),
        (2, 2, 2, 0, 1, 1),
    ] {
        let (n, c, o, h, w_) = (2, 4, 4, 9, 8);
        let (ho, wo) = (conv_out(h, kh, s, p, d), conv_out(w_, kw, s, p, d));
        CONV2D.with(|cell| *cell.borrow_mut() = Some(ConvOptions::new([s, s], [p, p], [d, d], g)));
        diff!(
            "conv2d_x_backward",
            [
                F(vec![n, c, h, w_]),
                F(vec![o, c / g, kh, kw]),
                F(vec![n, o, ho, wo])
            ],
            T6,
            |X, x, w, gr| vec![Val::F(X::conv2d_x_backward(x.f(), w.f(), gr.f(), opts_2()))]
        );
    }
}
