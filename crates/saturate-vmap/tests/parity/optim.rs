//! Unmodified burn-optim optimizers stepping a whole group (one learning rate for all members):
//! AdamW (with weight decay, AMSGrad, gradient clipping by norm or value), Adam, and SGD with
//! momentum and weight decay, vs the same optimizer on each member alone. The optimizer state
//! (moments) carries the member axis like the parameters.

// The device is `Copy` on NdArray and only `Clone` on wgpu: these files serve both binaries.
#![allow(clippy::clone_on_copy)]

use burn::grad_clipping::GradientClippingConfig;
use burn::module::AutodiffModule;
use burn::optim::decay::WeightDecayConfig;
use burn::optim::momentum::MomentumConfig;
use burn::optim::{AdamConfig, AdamWConfig, GradientsParams, Optimizer, SgdConfig};
use burn::tensor::ElementConversion;
use rand::rngs::StdRng;
use rand::SeedableRng;
use saturate_vmap::{member_values, Batched, Vmap};

use super::common::{
    compare, group_params, inner_device, params, reseed, step_slots, transfer, Case, DataMode,
    GroupFeed, Inner, MemberFeed, ATOL, G, K, R, RTOL, STEPS,
};
use super::models::{CnnCase, MlpCase};
use super::modules::batch_norm_case;

/// Steps a group with `group_optim` and each member alone with `member_optim()`, all at `lr`.
fn optimizer_parity<C, OG, OR>(
    case: &C,
    seed: u64,
    lr: f64,
    mut group_optim: OG,
    member_optim: impl Fn() -> OR,
) where
    C: Case,
    C::Model<G>: AutodiffModule<G, InnerModule = C::Model<Vmap<Inner>>>,
    C::Model<R>: AutodiffModule<R, InnerModule = C::Model<Inner>>,
    OG: Optimizer<C::Model<G>, G>,
    OR: Optimizer<C::Model<R>, R>,
{
    let device = inner_device();
    let mut group: Batched<C::Model<G>> =
        Batched::init(K, &device, |d| reseed(case.init::<G>(d), seed)).unwrap();
    let mut refs: Vec<(C::Model<R>, OR)> = (0..K)
        .map(|k| {
            let m =
                transfer::<G, R, _, _>(group.member(k).unwrap(), case.init::<R>(&device), &device);
            (m, member_optim())
        })
        .collect();
    let mut rng = StdRng::seed_from_u64(seed);
    for step in 0..STEPS {
        let slots = step_slots(case, &mut rng, DataMode::PerMember, K);
        let loss = case.loss(
            &*group,
            &GroupFeed::<G> {
                slots: &slots,
                device: group.device(),
            },
        );
        let losses = member_values(loss.clone()).unwrap();
        let grads = GradientsParams::from_grads(loss.backward(), &*group);
        group = Batched::from_module(group_optim.step(lr, group.into_inner(), grads)).unwrap();
        for (k, (model, optim)) in refs.iter_mut().enumerate() {
            let loss = case.loss(
                &*model,
                &MemberFeed::<R> {
                    slots: &slots,
                    member: k,
                    device: device.clone(),
                },
            );
            let value: f64 = loss.clone().into_scalar().elem();
            let grads = GradientsParams::from_grads(loss.backward(), &*model);
            *model = optim.step(lr, model.clone(), grads);
            assert!(
                (losses[k] - value).abs() <= ATOL + RTOL * value.abs(),
                "step {step}: member {k}: group loss {} vs reference {value}",
                losses[k]
            );
        }
    }
    let got = group_params(&*group);
    let mut bad = Vec::new();
    for (k, (model, _)) in refs.iter().enumerate() {
        bad.extend(compare(
            "after the optimizer steps",
            k,
            &got[k],
            &params(model),
        ));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

fn adamw() -> AdamWConfig {
    AdamWConfig::new().with_weight_decay(0.05)
}

// The Adam-type tests use the MLP classifier (cross-entropy). They used MSE for a while: Adam
// divides by each gradient element's running RMS, which blew up the ~1e-7 differences that
// burn-ndarray's approximate SIMD reciprocal left in a cross-entropy backward (issue 8). With
// exact reciprocals (burn-ndarray built without `simd`, and Vmap dividing exactly where the
// inner `recip` is approximate) cross-entropy is back, at the common tolerance.

#[test]
fn adamw_with_norm_clipping() {
    let config = || adamw().with_grad_clipping(Some(GradientClippingConfig::Norm(0.5)));
    optimizer_parity(
        &MlpCase { regression: false },
        900,
        0.01,
        config().init::<G, _>(),
        || config().init::<R, _>(),
    );
    optimizer_parity(
        &batch_norm_case(),
        901,
        0.01,
        config().init::<G, _>(),
        || config().init::<R, _>(),
    );
}

#[test]
fn adamw_amsgrad_with_value_clipping() {
    let config = || {
        adamw()
            .with_amsgrad(true)
            .with_grad_clipping(Some(GradientClippingConfig::Value(0.05)))
    };
    optimizer_parity(
        &MlpCase { regression: false },
        902,
        0.01,
        config().init::<G, _>(),
        || config().init::<R, _>(),
    );
}

#[test]
fn adam_and_sgd_with_momentum_and_clipping() {
    optimizer_parity(
        &MlpCase { regression: false },
        903,
        0.01,
        AdamConfig::new().init::<G, _>(),
        || AdamConfig::new().init::<R, _>(),
    );
    let sgd = || {
        SgdConfig::new()
            .with_momentum(Some(MomentumConfig::new().with_nesterov(true)))
            .with_weight_decay(Some(WeightDecayConfig::new(0.01)))
            .with_gradient_clipping(Some(GradientClippingConfig::Norm(0.5)))
    };
    optimizer_parity(&CnnCase, 904, 0.05, sgd().init::<G, _>(), || {
        sgd().init::<R, _>()
    });
}
