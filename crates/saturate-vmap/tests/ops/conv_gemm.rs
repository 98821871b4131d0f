//! Convolutions under every lowering, `ConvLowering::BatchedGemm` (one K-batched product,
//! `ops/conv_gemm.rs`), `ConvLowering::HostGemm` (per member and image on host buffers,
//! `ops/conv_host.rs`, NdArray's default) and `ConvLowering::InnerConvolution` (NdArray's own,
//! bit for bit), chosen here for an NdArray type of this file's own, through autodiff: forward, input gradient, weight gradient and bias gradient of a group of K members
//! against each member run alone on `Autodiff<NdArray>` (NdArray's own direct convolution), for
//! the four batchings of input and weights, and stride, padding, dilation, groups, 1d/2d/3d and
//! the transposed forms.
//!
//! Tolerance `atol 1e-5, rtol 1e-4`: the lowerings sum the products in another order than
//! NdArray's direct convolution, so results agree to rounding, not bit for bit (measured: 1-2
//! ulp on these shapes). Under `HostGemm` a member's results are also compared with the same
//! member run as a group of one (K = 1) on the same lowering: those must be equal bit for bit.

use burn::backend::{Autodiff, NdArray};
use burn::tensor::backend::Backend;
use burn::tensor::module::{conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d};
use burn::tensor::ops::{ConvOptions, ConvTransposeOptions};
use burn::tensor::{Tensor, TensorData};
use std::sync::Mutex;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use saturate_vmap::{
    conv_lowering, member_data, set_conv_lowering, stack_members, ConvLowering, Vmap,
};

/// Its own inner backend type, so that choosing the lowering for it (below) leaves the other
/// tests, which check NdArray's exact default, alone.
type I = NdArray<f32, i32>;
type V = Vmap<I>;

/// The lowering is process-wide per backend type: the checks of this file take turns.
static LOWERING: Mutex<()> = Mutex::new(());

/// Every lowering: the two unfold ones within tolerance, NdArray's own bit for bit.
const LOWERINGS: [ConvLowering; 3] = [
    ConvLowering::BatchedGemm,
    ConvLowering::HostGemm,
    ConvLowering::InnerConvolution,
];

const ATOL: f32 = 1e-5;
const RTOL: f32 = 1e-4;

fn random(shape: &[usize], rng: &mut StdRng) -> TensorData {
    let n: usize = shape.iter().product();
    TensorData::new(
        (0..n)
            .map(|_| rng.random_range(-2.0f32..2.0))
            .collect::<Vec<_>>(),
        shape.to_vec(),
    )
}

fn assert_close(got: &TensorData, want: &TensorData, what: &str) {
    assert_eq!(got.shape, want.shape, "{what}: shape");
    let g = got.as_slice::<f32>().unwrap();
    let w = want.as_slice::<f32>().unwrap();
    for (i, (a, b)) in g.iter().zip(w).enumerate() {
        assert!(
            (a - b).abs() <= ATOL + RTOL * b.abs(),
            "{what}: element {i}: group {a}, alone {b} (atol {ATOL}, rtol {RTOL})"
        );
    }
}

/// One operand: K member values, or one value shared by all members.
struct Operand {
    members: Vec<TensorData>,
    batched: bool,
}

impl Operand {
    fn new(shape: &[usize], batched: bool, k: usize, rng: &mut StdRng) -> Self {
        let count = if batched { k } else { 1 };
        Self {
            members: (0..count).map(|_| random(shape, rng)).collect(),
            batched,
        }
    }

    fn member(&self, m: usize) -> TensorData {
        self.members[if self.batched { m } else { 0 }].clone()
    }

    fn group<const D: usize>(&self) -> Tensor<Autodiff<V>, D> {
        let device = saturate_vmap::VmapDevice::<I>::new(Default::default(), self.k());
        let inner: Tensor<V, D> = if self.batched {
            let parts = self
                .members
                .iter()
                .map(|d| Tensor::<V, D>::from_data(d.clone(), &device))
                .collect();
            stack_members(parts).expect("same shapes")
        } else {
            Tensor::from_data(self.members[0].clone(), &device)
        };
        Tensor::from_inner(inner).require_grad()
    }

    fn k(&self) -> usize {
        self.members.len()
    }
}

/// Declares a check of one convolution: `$op(x, w, b)` on rank-`$d` operands and a rank-1 bias.
macro_rules! conv_check {
    ($name:ident, $d:literal, |$x:ident, $w:ident, $b:ident| $body:expr) => {
        fn $name(x_shape: &[usize], w_shape: &[usize], bias: usize, k: usize, seed: u64, scale: f32) {
            fn op<X: Backend>(
                $x: Tensor<X, $d>,
                $w: Tensor<X, $d>,
                $b: Tensor<X, 1>,
            ) -> Tensor<X, $d> {
                $body
            }
            /// Output and the x, weight and bias gradients of the group, per member.
            fn group(
                x: &Operand,
                w: &Operand,
                b: &Operand,
                r: &TensorData,
                k: usize,
            ) -> [Vec<TensorData>; 4] {
                let device = saturate_vmap::VmapDevice::<I>::new(Default::default(), k);
                let vx = with_members::<$d>(x, k);
                let vw = with_members::<$d>(w, k);
                let vb = with_members::<1>(b, k);
                let y = op(vx.clone(), vw.clone(), vb.clone());
                let loss = (y.clone() * Tensor::from_data(r.clone(), &device)).sum();
                let grads = loss.backward();
                [
                    member_data(y.inner()),
                    member_data(vx.grad(&grads).expect("x gradient")),
                    member_data(vw.grad(&grads).expect("weight gradient")),
                    member_data(vb.grad(&grads).expect("bias gradient")),
                ]
            }
            let _turn = LOWERING.lock().unwrap_or_else(|p| p.into_inner());
            for lowering in LOWERINGS {
            set_conv_lowering::<I>(lowering);
            for (bx, bw) in [(false, false), (true, false), (false, true), (true, true)] {
                let mut rng = StdRng::seed_from_u64(seed);
                let x = Operand::new(x_shape, bx, k, &mut rng);
                let w = Operand::new(w_shape, bw, k, &mut rng);
                let b = Operand::new(&[bias], bw, k, &mut rng);
                // The output's logical shape, from one member run alone.
                let device = Default::default();
                let y_shape = op(
                    Tensor::<I, $d>::from_data(x.member(0), &device),
                    Tensor::<I, $d>::from_data(w.member(0), &device),
                    Tensor::<I, 1>::from_data(b.member(0), &device),
                )
                .dims();
                // A fixed upstream gradient, the same for every member, times `scale`.
                let r = random(&y_shape, &mut rng);
                let r = TensorData::new(
                    r.iter::<f32>().map(|v| v * scale).collect::<Vec<_>>(),
                    r.shape.clone(),
                );
                let got = group(&x, &w, &b, &r, k);
                for m in 0..k {
                    if lowering == ConvLowering::HostGemm {
                        let one = |o: &Operand| Operand {
                            members: vec![o.member(m)],
                            batched: o.batched,
                        };
                        let alone = group(&one(&x), &one(&w), &one(&b), &r, 1);
                        for i in 0..4 {
                            assert_eq!(
                                got[i][m], alone[i][0],
                                "{} {lowering:?}: result {i} of member {m} in a group of {k} \
                                 differs from the member as a group of one",
                                stringify!($name)
                            );
                        }
                    }
                    let device = Default::default();
                    let ax = Tensor::<Autodiff<I>, $d>::from_data(x.member(m), &device)
                        .require_grad();
                    let aw = Tensor::<Autodiff<I>, $d>::from_data(w.member(m), &device)
                        .require_grad();
                    let ab = Tensor::<Autodiff<I>, 1>::from_data(b.member(m), &device)
                        .require_grad();
                    let y = op(ax.clone(), aw.clone(), ab.clone());
                    let loss = (y.clone() * Tensor::from_data(r.clone(), &device)).sum();
                    let grads = loss.backward();
                    let want = [
                        y.into_data(),
                        ax.grad(&grads).expect("x gradient").into_data(),
                        aw.grad(&grads).expect("weight gradient").into_data(),
                        ab.grad(&grads).expect("bias gradient").into_data(),
                    ];
                    for (i, what) in ["output", "x gradient", "weight gradient", "bias gradient"]
                        .iter()
                        .enumerate()
                    {
                        if lowering == ConvLowering::InnerConvolution {
                            assert_eq!(
                                got[i][m], want[i],
                                "{} {lowering:?} {what}, K={k}, x batched {bx}, weights batched \
                                 {bw}, member {m}: not bit for bit",
                                stringify!($name)
                            );
                        }
                        assert_close(
                            &got[i][m],
                            &want[i],
                            &format!(
                                "{} {lowering:?} {what}, K={k}, x batched {bx}, weights batched {bw}, member {m}",
                                stringify!($name)
                            ),
                        );
                    }
                }
            }
            }
        }
    };
}

/// The operand on the group backend with K members (a shared operand is unbatched).
fn with_members<const D: usize>(o: &Operand, k: usize) -> Tensor<Autodiff<V>, D> {
    if o.batched {
        assert_eq!(o.k(), k);
    }
    let device = saturate_vmap::VmapDevice::<I>::new(Default::default(), k);
    if o.batched {
        o.group::<D>()
    } else {
        Tensor::from_inner(Tensor::<V, D>::from_data(o.members[0].clone(), &device)).require_grad()
    }
}

conv_check!(check_conv1d_s2_p1_g2, 3, |x, w, b| conv1d(
    x,
    w,
    Some(b),
    ConvOptions::new([2], [1], [1], 2)
));
conv_check!(check_conv1d_d2_p2, 3, |x, w, b| conv1d(
    x,
    w,
    Some(b),
    ConvOptions::new([1], [2], [2], 1)
));
conv_check!(check_conv2d_same, 4, |x, w, b| conv2d(
    x,
    w,
    Some(b),
    ConvOptions::new([1, 1], [1, 1], [1, 1], 1)
));
conv_check!(check_conv2d_mixed_g2, 4, |x, w, b| conv2d(
    x,
    w,
    Some(b),
    ConvOptions::new([2, 1], [1, 0], [1, 2], 2)
));
conv_check!(check_conv3d_s2_g2, 5, |x, w, b| conv3d(
    x,
    w,
    Some(b),
    ConvOptions::new([2, 1, 2], [1, 0, 1], [1, 1, 2], 2)
));
conv_check!(check_conv_transpose1d, 3, |x, w, b| conv_transpose1d(
    x,
    w,
    Some(b),
    ConvTransposeOptions::new([2], [1], [1], [1], 2)
));
conv_check!(check_conv_transpose2d, 4, |x, w, b| conv_transpose2d(
    x,
    w,
    Some(b),
    ConvTransposeOptions::new([2, 1], [1, 0], [1, 0], [1, 2], 1)
));

#[test]
fn conv1d_group_matches_members_alone() {
    check_conv1d_s2_p1_g2(&[3, 4, 11], &[6, 2, 3], 6, 3, 1, 1.0);
    check_conv1d_d2_p2(&[2, 3, 9], &[5, 3, 3], 5, 2, 2, 1.0);
}

#[test]
fn conv2d_group_matches_members_alone() {
    check_conv2d_same(&[3, 2, 7, 6], &[4, 2, 3, 3], 4, 3, 3, 1.0);
    check_conv2d_mixed_g2(&[2, 4, 8, 7], &[6, 2, 3, 2], 6, 2, 4, 1.0);
}

/// The benchmark CNN's second layer (16 -> 32 channels, 3x3, padding 1) on 14x14 inputs with
/// K = 8. The weight gradient sums N*14*14 = 784 products: with an upstream gradient of
/// magnitude 1 (a summed loss) the f32 rounding of that sum alone is about 784 * 6e-8 ~ 5e-5
/// in either summation order (measured: 3.9e-5 apart), so the upstream gradient is that of a
/// mean-reduced loss, `1 / (N*14*14)` per output, as in a training step.
#[test]
fn conv2d_benchmark_layer_matches_members_alone() {
    check_conv2d_same(&[4, 16, 14, 14], &[32, 16, 3, 3], 32, 8, 5, 1.0 / 784.0);
}

#[test]
fn conv3d_group_matches_members_alone() {
    check_conv3d_s2_g2(&[2, 4, 5, 4, 6], &[4, 2, 2, 3, 2], 4, 2, 6, 1.0);
}

#[test]
fn conv_transpose_group_matches_members_alone() {
    check_conv_transpose1d(&[2, 4, 6], &[4, 3, 3], 6, 3, 7, 1.0);
    check_conv_transpose2d(&[2, 3, 5, 4], &[3, 2, 3, 2], 2, 2, 8, 1.0);
}

/// The lowering is chosen per inner backend type: NdArray gets the host kernels unless told
/// otherwise, every other backend the inner convolution (here `Autodiff<NdArray>` stands for
/// one: CUDA and wgpu are not built in this test); a choice for one backend type leaves the
/// others alone.
#[test]
fn lowering_is_chosen_per_backend_type() {
    assert_eq!(
        conv_lowering::<Autodiff<NdArray<f32, i64>>>(),
        ConvLowering::InnerConvolution
    );
    type Other = NdArray<f64, i32>;
    assert_eq!(conv_lowering::<Other>(), ConvLowering::HostGemm);
    set_conv_lowering::<Other>(ConvLowering::BatchedGemm);
    assert_eq!(conv_lowering::<Other>(), ConvLowering::BatchedGemm);
    assert_eq!(conv_lowering::<NdArray<f64, i64>>(), ConvLowering::HostGemm);
    set_conv_lowering::<Other>(ConvLowering::HostGemm);
}
