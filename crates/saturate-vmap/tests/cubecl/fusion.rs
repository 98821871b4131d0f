//! `Vmap` over burn's fused wgpu backend (`Fusion<CubeBackend<WgpuRuntime>>`, what
//! `burn::backend::Wgpu` is) against `Vmap` over the unfused `CubeBackend`, on the pattern burn
//! 0.21's fusion computes wrongly when it meets it in plain burn: a K-batched matmul whose
//! output gets a reshaped operand added by implicit broadcasting, then an activation
//! (`lowering::broadcast_explicitly` has the measured case). `Linear` followed by `relu` on
//! per-member data and weights is that pattern under `Vmap`, so is a bias added by hand.

use burn::backend::wgpu::{CubeBackend, WgpuRuntime};
use burn::backend::Wgpu;
use burn::tensor::activation::relu;
use burn::tensor::backend::Backend;
use burn::tensor::module::linear;
use burn::tensor::{Tensor, TensorData};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use saturate_vmap::{member_data, stack_members, Vmap, VmapDevice};

use crate::inner_device;

type Unfused = CubeBackend<WgpuRuntime, f32, i32, u32>;

const K: usize = 4;

fn uniform(rng: &mut StdRng, shape: &[usize]) -> TensorData {
    let n = shape.iter().product();
    let v: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    TensorData::new(v, shape.to_vec())
}

fn stack<I, const D: usize>(parts: &[TensorData]) -> Tensor<Vmap<I>, D>
where
    I: Backend<Device = burn::backend::wgpu::WgpuDevice>,
{
    let one = VmapDevice::new(inner_device(), 1);
    let parts = parts
        .iter()
        .map(|d| Tensor::<Vmap<I>, D>::from_data(d.clone(), &one))
        .collect();
    stack_members(parts).expect("stack the members")
}

/// The two layers' outputs of `relu(linear(x, w1, b1))` -> `linear(.., w2, b2)` per member, and
/// of the same with the bias added by hand (`x.matmul(w1) + b1.unsqueeze()`), the first
/// layer's output read after the second was computed (the read that exposed the wrong values).
fn layers<I>(seed: u64) -> Vec<Vec<TensorData>>
where
    I: Backend<Device = burn::backend::wgpu::WgpuDevice>,
{
    let mut rng = StdRng::seed_from_u64(seed);
    let mut draw =
        |shape: &[usize]| -> Vec<TensorData> { (0..K).map(|_| uniform(&mut rng, shape)).collect() };
    let (x, w1, b1, w2, b2) = (
        draw(&[16, 8]),
        draw(&[8, 16]),
        draw(&[16]),
        draw(&[16, 16]),
        draw(&[16]),
    );
    let (x, w1, b1, w2, b2) = (
        stack::<I, 2>(&x),
        stack::<I, 2>(&w1),
        stack::<I, 1>(&b1),
        stack::<I, 2>(&w2),
        stack::<I, 1>(&b2),
    );
    let first = linear(x.clone(), w1.clone(), Some(b1.clone()));
    let second = linear(relu(first.clone()), w2.clone(), Some(b2));
    let by_hand = x.matmul(w1) + b1.unsqueeze();
    let after = relu(by_hand.clone()).matmul(w2);
    vec![
        member_data(second),
        member_data(first),
        member_data(after),
        member_data(by_hand),
    ]
}

#[test]
fn linear_relu_linear_on_fused_wgpu_matches_unfused_cubecl() {
    let fused = layers::<Wgpu>(21);
    let unfused = layers::<Unfused>(21);
    let names = ["second layer", "first layer", "by hand, after", "by hand"];
    for ((name, got), want) in names.iter().zip(&fused).zip(&unfused) {
        for k in 0..K {
            let g = got[k].clone().convert::<f32>().to_vec::<f32>().unwrap();
            let w = want[k].clone().convert::<f32>().to_vec::<f32>().unwrap();
            // The same kernels in the same order, fused or not: equal to rounding.
            let worst = g
                .iter()
                .zip(&w)
                .map(|(a, b)| (a - b).abs() / (1e-5 + 1e-4 * b.abs()))
                .fold(0.0f32, f32::max);
            assert!(
                worst <= 1.0,
                "{name}, member {k}: fused differs from unfused by {worst:.1}x atol 1e-5 + rtol 1e-4"
            );
        }
    }
}
