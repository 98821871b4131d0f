//! Adaptive average pooling on CubeCL: burn's kernel against NdArray's, and under `Vmap` (the
//! member axis folded into the batch, `[K * N, C, H, W]`) against each member alone, forward
//! and backward.

use burn::backend::ndarray::NdArrayDevice;
use burn::backend::{Autodiff, NdArray, Wgpu};
use burn::tensor::module::adaptive_avg_pool2d;
use burn::tensor::{Tensor, TensorData};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use saturate_vmap::{member_data, stack_members, Vmap, VmapDevice};

use crate::inner_device;

const ATOL: f64 = 1e-5;
const RTOL: f64 = 1e-4;

/// (N, C, H, W, output H, output W).
const SHAPES: [(usize, usize, usize, usize, usize, usize); 6] = [
    (2, 4, 6, 6, 1, 1),
    (8, 16, 7, 7, 1, 1),
    (24, 16, 7, 7, 1, 1),
    (6, 3, 5, 7, 3, 2),
    (12, 8, 9, 9, 4, 4),
    (32, 5, 4, 4, 1, 1),
];

fn uniform(rng: &mut StdRng, shape: [usize; 4]) -> TensorData {
    let n = shape.iter().product();
    let v: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    TensorData::new(v, shape.to_vec())
}

fn values(d: TensorData) -> Vec<f32> {
    d.convert::<f32>().to_vec::<f32>().expect("f32")
}

fn assert_close(what: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let (mut worst, mut at) = (0.0f64, 0usize);
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let ratio = (g as f64 - w as f64).abs() / (ATOL + RTOL * (w as f64).abs());
        if ratio > worst || ratio.is_nan() {
            worst = ratio;
            at = i;
        }
    }
    assert!(
        worst <= 1.0,
        "{what}: worst element {at}: {} vs {} ({worst:.1}x the tolerance)",
        got[at],
        want[at]
    );
}

/// Output and input gradient of `sum(adaptive_avg_pool2d(x) * weight)` on one backend.
fn pool_and_grad<B: burn::tensor::backend::AutodiffBackend>(
    x: &TensorData,
    weight: &TensorData,
    out: [usize; 2],
    device: &B::Device,
) -> (Vec<f32>, Vec<f32>) {
    let x = Tensor::<B, 4>::from_data(x.clone(), device).require_grad();
    let y = adaptive_avg_pool2d(x.clone(), out);
    let loss = (y.clone() * Tensor::<B, 4>::from_data(weight.clone(), device)).sum();
    let grads = loss.backward();
    let grad = x.grad(&grads).expect("a gradient for x");
    (values(y.into_data()), values(grad.into_data()))
}

#[test]
fn adaptive_avg_pool2d_kernel_matches_ndarray() {
    let mut rng = StdRng::seed_from_u64(11);
    for (n, c, h, w, oh, ow) in SHAPES {
        let x = uniform(&mut rng, [n, c, h, w]);
        let weight = uniform(&mut rng, [n, c, oh, ow]);
        let (y, g) = pool_and_grad::<Autodiff<Wgpu>>(&x, &weight, [oh, ow], &inner_device());
        let (y_ref, g_ref) =
            pool_and_grad::<Autodiff<NdArray>>(&x, &weight, [oh, ow], &NdArrayDevice::Cpu);
        let case = format!("[{n}, {c}, {h}, {w}] -> [{oh}, {ow}]");
        assert_close(&format!("{case} forward"), &y, &y_ref);
        assert_close(&format!("{case} backward"), &g, &g_ref);
    }
}

#[test]
fn adaptive_avg_pool2d_under_vmap_matches_each_member() {
    type G = Autodiff<Vmap<Wgpu>>;
    const K: usize = 3;
    let mut rng = StdRng::seed_from_u64(12);
    for (n, c, h, w, oh, ow) in SHAPES {
        let xs: Vec<TensorData> = (0..K).map(|_| uniform(&mut rng, [n, c, h, w])).collect();
        let weight = uniform(&mut rng, [n, c, oh, ow]);
        let one = VmapDevice::new(inner_device(), 1);
        let group = VmapDevice::new(inner_device(), K);
        let x = stack_members(
            xs.iter()
                .map(|d| Tensor::<G, 4>::from_data(d.clone(), &one))
                .collect(),
        )
        .expect("stack the members' inputs")
        .require_grad();
        let y = adaptive_avg_pool2d(x.clone(), [oh, ow]);
        let loss = (y.clone() * Tensor::<G, 4>::from_data(weight.clone(), &group)).sum();
        let grads = loss.backward();
        let grad = x.grad(&grads).expect("a gradient for x");
        let ys = member_data(y.inner());
        let gs = member_data(grad);
        for k in 0..K {
            let (y_ref, g_ref) =
                pool_and_grad::<Autodiff<Wgpu>>(&xs[k], &weight, [oh, ow], &inner_device());
            let case = format!("member {k}: [{K} x {n}, {c}, {h}, {w}] -> [{oh}, {ow}]");
            assert_close(&format!("{case} forward"), &values(ys[k].clone()), &y_ref);
            assert_close(&format!("{case} backward"), &values(gs[k].clone()), &g_ref);
        }
    }
}

/// A reshape that adds axes after a 1x1 adaptive pool, in the model's own code: logically
/// `[N, C, 1, 1] -> [N, C, 1, 1, 1]` and `-> [N / 2, 2, C]`-like splits, physically a split of a
/// tensor whose size-1 axes have non-canonical strides on CubeCL (the case burn's own stride
/// analysis gets wrong; `lowering::reshape_through_flat`).
#[test]
fn reshape_after_a_one_by_one_pool_under_vmap_matches_each_member() {
    type V = Vmap<Wgpu>;
    const K: usize = 3;
    let mut rng = StdRng::seed_from_u64(13);
    let xs: Vec<TensorData> = (0..K).map(|_| uniform(&mut rng, [6, 4, 5, 5])).collect();
    let one = VmapDevice::new(inner_device(), 1);
    let x = stack_members(
        xs.iter()
            .map(|d| Tensor::<V, 4>::from_data(d.clone(), &one))
            .collect(),
    )
    .expect("stack the members' inputs");
    let pooled = adaptive_avg_pool2d(x, [1, 1]);
    let split: Tensor<V, 5> = pooled.clone().reshape([3, 2, 4, 1, 1]);
    let unit: Tensor<V, 5> = pooled.reshape([6, 4, 1, 1, 1]);
    let (split, unit) = (member_data(split), member_data(unit));
    for k in 0..K {
        let alone = adaptive_avg_pool2d(
            Tensor::<Wgpu, 4>::from_data(xs[k].clone(), &inner_device()),
            [1, 1],
        );
        let want = values(alone.clone().into_data());
        let case = format!("member {k}");
        assert_eq!(split[k].shape.to_vec(), [3, 2, 4, 1, 1]);
        assert_close(&format!("{case} split"), &values(split[k].clone()), &want);
        assert_close(
            &format!("{case} unit axis"),
            &values(unit[k].clone()),
            &want,
        );
    }
}
