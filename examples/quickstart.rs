//! Eight members of an unmodified burn-nn MLP trained as one batched model, each with its own
//! learning rate, on a toy regression task. Prints every member's loss.
//!
//! Run: `cargo run --release --example quickstart`

mod common;

use burn::backend::Autodiff;
use burn::module::Module;
use burn::nn::loss::{MseLoss, Reduction};
use burn::nn::{Linear, LinearConfig, Relu};
use burn::optim::GradientsParams;
use burn::tensor::backend::Backend;
use burn::tensor::{Distribution, Tensor};
use common::backend::Inner;
use saturate::optim::GroupSgdConfig;
use saturate::prelude::*;

// ANCHOR: backend
type B = Autodiff<Vmap<Inner>>;
// ANCHOR_END: backend

// ANCHOR: model
/// An ordinary burn module: nothing in it knows about members.
#[derive(Module, Debug)]
struct Mlp<B: Backend> {
    hidden: Linear<B>,
    out: Linear<B>,
    relu: Relu,
}

impl<B: Backend> Mlp<B> {
    fn new(device: &B::Device) -> Self {
        Self {
            hidden: LinearConfig::new(4, 32).init(device),
            out: LinearConfig::new(32, 1).init(device),
            relu: Relu::new(),
        }
    }

    fn forward(&self, x: Tensor<B, 2>) -> Tensor<B, 2> {
        self.out.forward(self.relu.forward(self.hidden.forward(x)))
    }
}
// ANCHOR_END: model

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Large tensors are freed and allocated every step: keep freed memory in the heap
    // (glibc's defaults return it to the kernel and page-fault it back; book: CPU backends).
    saturate::malloc::tune();
    // On NdArray, `main` becomes a worker of rayon's pool: its parallel loops run in place.
    let _ = saturate::vmap::join_host_pool_for::<Inner>();
    // ANCHOR: group
    let lrs = [0.001, 0.003, 0.01, 0.03, 0.05, 0.1, 0.2, 0.3];
    let mut group: Batched<Mlp<B>> = Batched::init(lrs.len(), &Default::default(), Mlp::new)?;
    let mut optim = GroupSgdConfig::new().init(group.members())?;
    let device = group.device();
    // ANCHOR_END: group

    // ANCHOR: data
    // One data batch shared by every member (tensors built from data are shared; random ones
    // get one draw per member), target y = sum(x).
    let data = Tensor::<Inner, 2>::random([256, 4], Distribution::Normal(0.0, 1.0), &device.inner);
    let x = Tensor::<B, 2>::from_data(data.into_data(), &device);
    let y = x.clone().sum_dim(1);
    // ANCHOR_END: data

    // ANCHOR: train
    for step in 0..=200 {
        let loss = MseLoss::new().forward(group.forward(x.clone()), y.clone(), Reduction::Mean);
        if step % 50 == 0 {
            let losses = member_values(loss.clone())?;
            let shown: Vec<String> = losses.iter().map(|l| format!("{l:.4}")).collect();
            println!("step {step:3}: {}", shown.join("  "));
        }
        let grads = GradientsParams::from_grads(loss.backward(), &*group);
        group = optim.step(lrs, group, grads)?;
    }
    // ANCHOR_END: train
    println!("learning rates: {lrs:?}");
    // ANCHOR: member
    let best = group.member(6)?; // an ordinary Mlp<B>: save it with burn's recorders
    println!("member 6 has {} parameters", best.num_params());
    // ANCHOR_END: member
    Ok(())
}
