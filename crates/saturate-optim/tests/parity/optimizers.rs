//! Every optimizer option, one test each.

use burn::grad_clipping::GradientClippingConfig as BurnClipping;
use burn::optim::decay::WeightDecayConfig as BurnWeightDecay;
use burn::optim::momentum::MomentumConfig as BurnMomentum;
use burn::optim::{AdamConfig as BurnAdam, AdamWConfig as BurnAdamW, SgdConfig as BurnSgd};
use saturate_optim::{
    GroupAdamConfig, GroupAdamWConfig, GroupGradientClippingConfig, GroupMomentumConfig,
    GroupSgdConfig, GroupWeightDecayConfig,
};

use super::parity;
use crate::common::*;

const MOMENTUM: [f64; K] = [0.5, 0.8, 0.9, 0.95];
const DAMPENING: [f64; K] = [0.0, 0.1, 0.3, 0.5];
const PENALTY: [f64; K] = [0.0, 1e-3, 1e-2, 0.1];
const BETA_1: [f64; K] = [0.8, 0.85, 0.9, 0.95];
const BETA_2: [f64; K] = [0.99, 0.995, 0.999, 0.9999];
const EPSILON: [f64; K] = [1e-8, 1e-6, 1e-5, 1e-3];
const CLIP_VALUE: [f64; K] = [0.005, 0.02, 0.1, 0.5];
const CLIP_NORM: [f64; K] = [0.01, 0.05, 0.2, 1.0];

fn sgd_momentum(nesterov: bool) -> (GroupSgdConfig, impl Fn(usize) -> BurnSgd) {
    let config = GroupSgdConfig::new().with_momentum(Some(
        GroupMomentumConfig::new()
            .with_momentum(MOMENTUM)
            .with_dampening(DAMPENING)
            .with_nesterov(nesterov),
    ));
    let reference = move |k: usize| {
        BurnSgd::new().with_momentum(Some(
            BurnMomentum::new()
                .with_momentum(MOMENTUM[k])
                .with_dampening(DAMPENING[k])
                .with_nesterov(nesterov),
        ))
    };
    (config, reference)
}

fn adam() -> (GroupAdamConfig, impl Fn(usize) -> BurnAdam) {
    let config = GroupAdamConfig::new()
        .with_beta_1(BETA_1)
        .with_beta_2(BETA_2)
        .with_epsilon(EPSILON);
    let reference = |k: usize| {
        BurnAdam::new()
            .with_beta_1(BETA_1[k] as f32)
            .with_beta_2(BETA_2[k] as f32)
            .with_epsilon(EPSILON[k] as f32)
    };
    (config, reference)
}

fn adamw() -> (GroupAdamWConfig, impl Fn(usize) -> BurnAdamW) {
    let config = GroupAdamWConfig::new()
        .with_beta_1(BETA_1)
        .with_beta_2(BETA_2)
        .with_epsilon(EPSILON)
        .with_weight_decay(PENALTY);
    let reference = |k: usize| {
        BurnAdamW::new()
            .with_beta_1(BETA_1[k] as f32)
            .with_beta_2(BETA_2[k] as f32)
            .with_epsilon(EPSILON[k] as f32)
            .with_weight_decay(PENALTY[k] as f32)
    };
    (config, reference)
}

#[test]
fn sgd_plain() {
    parity("plain SGD", GroupSgdConfig::new().init(K).unwrap(), |_| {
        BurnSgd::new().init()
    });
}

#[test]
fn sgd_momentum_with_dampening() {
    let (config, reference) = sgd_momentum(false);
    parity("SGD momentum + dampening", config.init(K).unwrap(), |k| {
        reference(k).init()
    });
}

#[test]
fn sgd_nesterov() {
    let (config, reference) = sgd_momentum(true);
    parity("SGD Nesterov", config.init(K).unwrap(), |k| {
        reference(k).init()
    });
}

#[test]
fn sgd_weight_decay() {
    let config =
        GroupSgdConfig::new().with_weight_decay(Some(GroupWeightDecayConfig::new(PENALTY)));
    parity("SGD weight decay", config.init(K).unwrap(), |k| {
        BurnSgd::new()
            .with_weight_decay(Some(BurnWeightDecay::new(PENALTY[k] as f32)))
            .init()
    });
}

#[test]
fn sgd_everything() {
    let (config, reference) = sgd_momentum(true);
    let config = config
        .with_weight_decay(Some(GroupWeightDecayConfig::new(PENALTY)))
        .with_gradient_clipping(Some(GroupGradientClippingConfig::norm(CLIP_NORM)));
    parity(
        "SGD Nesterov + weight decay + norm clipping",
        config.init(K).unwrap(),
        |k| {
            reference(k)
                .with_weight_decay(Some(BurnWeightDecay::new(PENALTY[k] as f32)))
                .with_gradient_clipping(Some(BurnClipping::Norm(CLIP_NORM[k] as f32)))
                .init()
        },
    );
}

#[test]
fn sgd_clip_by_value() {
    let config = GroupSgdConfig::new()
        .with_gradient_clipping(Some(GroupGradientClippingConfig::value(CLIP_VALUE)));
    parity("SGD clip by value", config.init(K).unwrap(), |k| {
        BurnSgd::new()
            .with_gradient_clipping(Some(BurnClipping::Value(CLIP_VALUE[k] as f32)))
            .init()
    });
}

#[test]
fn sgd_clip_by_norm() {
    let config = GroupSgdConfig::new()
        .with_gradient_clipping(Some(GroupGradientClippingConfig::norm(CLIP_NORM)));
    parity("SGD clip by norm", config.init(K).unwrap(), |k| {
        BurnSgd::new()
            .with_gradient_clipping(Some(BurnClipping::Norm(CLIP_NORM[k] as f32)))
            .init()
    });
}

#[test]
fn adam_plain() {
    let (config, reference) = adam();
    parity("Adam", config.init(K).unwrap(), |k| reference(k).init());
}

#[test]
fn adam_weight_decay() {
    let (config, reference) = adam();
    let config = config.with_weight_decay(Some(GroupWeightDecayConfig::new(PENALTY)));
    parity("Adam + weight decay", config.init(K).unwrap(), |k| {
        reference(k)
            .with_weight_decay(Some(BurnWeightDecay::new(PENALTY[k] as f32)))
            .init()
    });
}

#[test]
fn adam_amsgrad() {
    let (config, reference) = adam();
    parity(
        "Adam AMSGrad",
        config.with_amsgrad(true).init(K).unwrap(),
        |k| reference(k).with_amsgrad(true).init(),
    );
}

#[test]
fn adam_clip_by_value() {
    let (config, reference) = adam();
    let config = config.with_grad_clipping(Some(GroupGradientClippingConfig::value(CLIP_VALUE)));
    parity("Adam clip by value", config.init(K).unwrap(), |k| {
        reference(k)
            .with_grad_clipping(Some(BurnClipping::Value(CLIP_VALUE[k] as f32)))
            .init()
    });
}

#[test]
fn adam_clip_by_norm() {
    let (config, reference) = adam();
    let config = config.with_grad_clipping(Some(GroupGradientClippingConfig::norm(CLIP_NORM)));
    parity("Adam clip by norm", config.init(K).unwrap(), |k| {
        reference(k)
            .with_grad_clipping(Some(BurnClipping::Norm(CLIP_NORM[k] as f32)))
            .init()
    });
}

#[test]
fn adamw_plain() {
    let (config, reference) = adamw();
    parity("AdamW", config.init(K).unwrap(), |k| reference(k).init());
}

#[test]
fn adamw_amsgrad() {
    let (config, reference) = adamw();
    parity(
        "AdamW AMSGrad",
        config.with_amsgrad(true).init(K).unwrap(),
        |k| reference(k).with_amsgrad(true).init(),
    );
}

#[test]
fn adamw_cautious_weight_decay() {
    let (config, reference) = adamw();
    let config = config.with_cautious_weight_decay(true);
    parity(
        "AdamW cautious weight decay",
        config.init(K).unwrap(),
        |k| reference(k).with_cautious_weight_decay(true).init(),
    );
}

#[test]
fn adamw_clip_by_norm() {
    let (config, reference) = adamw();
    let config = config.with_grad_clipping(Some(GroupGradientClippingConfig::norm(CLIP_NORM)));
    parity("AdamW clip by norm", config.init(K).unwrap(), |k| {
        reference(k)
            .with_grad_clipping(Some(BurnClipping::Norm(CLIP_NORM[k] as f32)))
            .init()
    });
}

#[test]
fn adamw_clip_by_value() {
    let (config, reference) = adamw();
    let config = config.with_grad_clipping(Some(GroupGradientClippingConfig::value(CLIP_VALUE)));
    parity("AdamW clip by value", config.init(K).unwrap(), |k| {
        reference(k)
            .with_grad_clipping(Some(BurnClipping::Value(CLIP_VALUE[k] as f32)))
            .init()
    });
}

/// The clipping parity tests above would prove nothing if no gradient were ever clipped: here
/// clipping changes the members with small thresholds, and an infinite threshold is no
/// clipping at all.
#[test]
fn clipping_bites_and_infinity_disables_it() {
    let thresholds = [0.005, 0.01, f64::INFINITY, f64::INFINITY];
    let run = |clipping: Option<GroupGradientClippingConfig>| {
        let mut optim = GroupSgdConfig::new()
            .with_gradient_clipping(clipping)
            .init(K)
            .unwrap();
        let group = init_group(K);
        let initial = group_params(&group);
        let group = train_group(group, &mut optim, 0..10, |_| vec![0.05; K]);
        (initial, group_params(&group))
    };
    for clipping in [
        GroupGradientClippingConfig::value(thresholds),
        GroupGradientClippingConfig::norm(thresholds),
    ] {
        let (initial, clipped) = run(Some(clipping.clone()));
        // Same members, no clipping: replay from the same initial parameters.
        let mut optim = GroupSgdConfig::new().init(K).unwrap();
        let group = saturate_vmap::Batched::stack(
            (0..K)
                .map(|k| {
                    let reference = reference_from(&initial[k]);
                    to_group_member(&reference)
                })
                .collect(),
        )
        .unwrap();
        let group = train_group(group, &mut optim, 0..10, |_| vec![0.05; K]);
        let unclipped = group_params(&group);
        for k in 0..2 {
            assert!(
                max_abs_diff(&clipped[k], &unclipped[k]) > 1e-4,
                "{clipping:?}: member {k} was never clipped"
            );
        }
        for k in 2..K {
            assert_eq!(
                clipped[k], unclipped[k],
                "{clipping:?}: infinite threshold clipped"
            );
        }
    }
}

/// Values shared by all members take burn's scalar ops instead of per-member tensors; they must
/// match burn just the same.
#[test]
fn shared_values() {
    let lr = vec![vec![0.02; STEPS]; K];
    let config = GroupSgdConfig::new()
        .with_momentum(Some(GroupMomentumConfig::new().with_nesterov(true)))
        .with_weight_decay(Some(GroupWeightDecayConfig::new(1e-2)))
        .with_gradient_clipping(Some(GroupGradientClippingConfig::value(0.05)));
    super::parity_with(
        "SGD, shared values",
        config.init(K).unwrap(),
        |_| {
            BurnSgd::new()
                .with_momentum(Some(BurnMomentum::new().with_nesterov(true)))
                .with_weight_decay(Some(BurnWeightDecay::new(1e-2)))
                .with_gradient_clipping(Some(BurnClipping::Value(0.05)))
                .init()
        },
        |_| vec![0.02; K],
        &lr,
    );
    let config = GroupAdamWConfig::new()
        .with_amsgrad(true)
        .with_grad_clipping(Some(GroupGradientClippingConfig::norm(0.1)));
    super::parity_with(
        "AdamW, shared values",
        config.init(K).unwrap(),
        |_| {
            BurnAdamW::new()
                .with_amsgrad(true)
                .with_grad_clipping(Some(BurnClipping::Norm(0.1)))
                .init()
        },
        |_| vec![0.02; K],
        &lr,
    );
}
