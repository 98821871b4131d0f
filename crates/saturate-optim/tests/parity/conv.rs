//! Parameters of rank 4 (a convolution kernel) and rank 1 (its bias): AdamW with per-member
//! values and norm clipping on a small CNN, group vs burn-optim, in both update modes.
//!
//! Members clipped by norm differ from burn by about 1e-8 here (without clipping: 0): the
//! group's per-member sum of squares of the convolution gradient adds the same numbers in a
//! different order than burn's whole-tensor sum. The tolerance, `atol 1e-6`, applies.

use burn::grad_clipping::GradientClippingConfig as BurnClipping;
use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::optim::{AdamWConfig as BurnAdamW, GradientsParams, Optimizer};
use burn::tensor::backend::Backend;
use burn::tensor::{Tensor, TensorData};
use saturate_optim::{GroupAdamWConfig, GroupGradientClippingConfig};
use saturate_vmap::Batched;

use crate::common::*;

#[derive(Module, Debug)]
struct Cnn<B: Backend> {
    conv: Conv2d<B>,
}

impl<B: Backend> Cnn<B> {
    fn new(device: &B::Device) -> Self {
        Self {
            conv: Conv2dConfig::new([2, 3], [3, 3]).init(device),
        }
    }

    fn loss(&self, step: usize, device: &B::Device) -> Tensor<B, 1> {
        let values: Vec<f32> = (0..2 * 2 * 6 * 6)
            .map(|i| (((i * 7 + step * 13) % 17) as f32 - 8.0) / 4.0)
            .collect();
        let x = Tensor::from_data(TensorData::new(values, [2, 2, 6, 6]), device);
        (self.conv.forward(x) - 0.5).powi_scalar(2).mean()
    }
}

const WEIGHT_DECAY: [f64; K] = [0.0, 1e-3, 1e-2, 1e-1];
const CLIP_NORM: [f64; K] = [0.05, 0.2, 1.0, f64::INFINITY];

#[test]
fn adamw_on_a_convolution() {
    let group: Batched<Cnn<GB>> = Batched::init(K, &Default::default(), Cnn::new).unwrap();
    let initial = group_params(&group);
    let config = GroupAdamWConfig::new()
        .with_weight_decay(WEIGHT_DECAY)
        .with_grad_clipping(Some(GroupGradientClippingConfig::norm(CLIP_NORM)));
    for fused in [false, true] {
        let mut optim = config.init(K).unwrap().with_fused_update(fused);
        let mut trained = group.clone();
        for step in 0..20 {
            let loss = trained.loss(step, &trained.device());
            let grads = GradientsParams::from_grads(loss.backward(), &*trained);
            trained = optim.step(super::LRS.to_vec(), trained, grads).unwrap();
        }
        let got = group_params(&trained);
        for k in 0..K {
            let mut model = load_params(Cnn::<RB>::new(&Default::default()), &initial[k]);
            let clipping = (k < 3).then(|| BurnClipping::Norm(CLIP_NORM[k] as f32));
            let mut reference = BurnAdamW::new()
                .with_weight_decay(WEIGHT_DECAY[k] as f32)
                .with_grad_clipping(clipping)
                .init();
            for step in 0..20 {
                let loss = model.loss(step, &Default::default());
                let grads = GradientsParams::from_grads(loss.backward(), &model);
                model = reference.step(super::LRS[k], model, grads);
            }
            let what = format!("AdamW on Conv2d (fused: {fused})");
            assert_member_matches(&what, k, &got[k], &model, &initial[k]);
        }
    }
}
