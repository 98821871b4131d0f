//! Eight members of an unmodified burn-nn MLP trained as one batched model, each with its own
//! learning rate, on a toy regression task. Prints every member's loss.
//!
//! Run: `cargo run --release --example quickstart`

use burn::backend::{Autodiff, NdArray};
use burn::module::{Module, ModuleMapper, Param};
use burn::nn::loss::{MseLoss, Reduction};
use burn::nn::{Linear, LinearConfig, Relu};
use burn::optim::GradientsParams;
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::{Distribution, Tensor};
use saturate::prelude::*;

type B = Autodiff<Vmap<NdArray>>;

#[derive(Module, Debug)]
struct Mlp<B: burn::tensor::backend::Backend> {
    hidden: Linear<B>,
    out: Linear<B>,
    relu: Relu,
}

impl<B: burn::tensor::backend::Backend> Mlp<B> {
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

/// `p <- p - lr_k * g` with one learning rate per member (saturate-optim has the full
/// SGD / Adam / AdamW).
struct Sgd<'a> {
    grads: &'a mut GradientsParams,
    lr: Tensor<<B as AutodiffBackend>::InnerBackend, 1>,
}

impl ModuleMapper<B> for Sgd<'_> {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<B, D>>) -> Param<Tensor<B, D>> {
        let (id, tensor, mapper) = param.consume();
        let Some(grad) = self
            .grads
            .remove::<<B as AutodiffBackend>::InnerBackend, D>(id)
        else {
            return Param::from_mapped_value(id, tensor, mapper);
        };
        let updated = tensor.inner() - grad * self.lr.clone().reshape([1; D]);
        Param::from_mapped_value(id, Tensor::from_inner(updated).require_grad(), mapper)
    }
}

fn main() -> Result<(), VmapError> {
    let lrs = [0.001, 0.003, 0.01, 0.03, 0.05, 0.1, 0.2, 0.3];
    let mut group: Batched<Mlp<B>> = Batched::init(lrs.len(), &Default::default(), Mlp::new)?;
    let device = group.device();
    let lr = per_member::<Vmap<NdArray>>(&lrs, &device)?;

    // One data batch shared by every member (tensors built from data are shared; random ones
    // get one draw per member), target y = sum(x).
    let data =
        Tensor::<NdArray, 2>::random([256, 4], Distribution::Normal(0.0, 1.0), &device.inner);
    let x = Tensor::<B, 2>::from_data(data.into_data(), &device);
    let y = x.clone().sum_dim(1);

    for step in 0..=200 {
        let prediction = group.forward(x.clone());
        let loss = MseLoss::new().forward(prediction, y.clone(), Reduction::Mean);
        if step % 50 == 0 {
            let losses = member_values(loss.clone())?;
            let shown: Vec<String> = losses.iter().map(|l| format!("{l:.4}")).collect();
            println!("step {step:3}: {}", shown.join("  "));
        }
        let mut grads = GradientsParams::from_grads(loss.backward(), &*group);
        let module = group.into_inner().map(&mut Sgd {
            grads: &mut grads,
            lr: lr.clone(),
        });
        group = Batched::from_module(module)?;
    }
    println!("learning rates: {lrs:?}");
    Ok(())
}
