//! The optimizer follows the group: learning rate 0, identical members, `retain`, `extend`,
//! save/load of the state.

mod burn_optimizer;
mod membership;
mod record;

use burn::optim::{AdamConfig as BurnAdam, AdamWConfig as BurnAdamW, SgdConfig as BurnSgd};
use saturate_optim::{
    GroupAdamConfig, GroupAdamWConfig, GroupMomentumConfig, GroupOptimizer, GroupSgdConfig,
    GroupWeightDecayConfig, UpdateRule,
};
use saturate_vmap::Batched;

use crate::common::*;

fn sgd_config() -> GroupSgdConfig {
    GroupSgdConfig::new()
        .with_momentum(Some(
            GroupMomentumConfig::new().with_momentum([0.9, 0.8, 0.7, 0.95]),
        ))
        .with_weight_decay(Some(GroupWeightDecayConfig::new(1e-2)))
}

fn assert_lr_zero_keeps_member<R: UpdateRule>(
    what: &str,
    mut optim: GroupOptimizer<R, Mlp<GB>, GB>,
) {
    let group = init_group(K);
    let initial = group_params(&group);
    let group = train_group(group, &mut optim, 0..10, |_| vec![0.0, 0.01, 0.02, 0.03]);
    let after = group_params(&group);
    assert_eq!(after[0], initial[0], "{what}: the member with lr 0 changed");
    for k in 1..K {
        assert!(
            max_abs_diff(&after[k], &initial[k]) > 1e-4,
            "{what}: member {k} did not move"
        );
    }
}

#[test]
fn a_member_with_lr_zero_is_unchanged() {
    assert_lr_zero_keeps_member("SGD", sgd_config().init(K).unwrap());
    assert_lr_zero_keeps_member(
        "Adam",
        GroupAdamConfig::new()
            .with_weight_decay(Some(GroupWeightDecayConfig::new(0.1)))
            .init(K)
            .unwrap(),
    );
    assert_lr_zero_keeps_member(
        "AdamW",
        GroupAdamWConfig::new()
            .with_weight_decay(0.1)
            .init(K)
            .unwrap(),
    );
}

#[test]
fn identical_members_stay_identical() {
    let one = init_group(1).member(0).unwrap();
    let group = Batched::stack(vec![one; K]).unwrap();
    let mut optim = GroupAdamWConfig::new().with_amsgrad(true).init(K).unwrap();
    let group = train_group(group, &mut optim, 0..20, |_| vec![0.01; K]);
    let params = group_params(&group);
    for k in 1..K {
        assert_eq!(params[k], params[0], "member {k} drifted from member 0");
    }
}

#[test]
fn no_nan_with_a_large_learning_rate() {
    let mut optim = GroupAdamConfig::new()
        .with_epsilon([1e-8, 1e-8, 1e-3, 1e-5])
        .init(K)
        .unwrap();
    let group = train_group(init_group(K), &mut optim, 0..STEPS, |_| {
        vec![1.0, 0.5, 2.0, 10.0]
    });
    for (k, member) in group_params(&group).iter().enumerate() {
        assert!(
            member.iter().flatten().all(|v| v.is_finite()),
            "member {k} has a non-finite parameter"
        );
    }
}

/// burn-optim references for the membership and record tests.
fn burn_sgd(k: usize) -> BurnSgd {
    use burn::optim::decay::WeightDecayConfig as Wd;
    use burn::optim::momentum::MomentumConfig as Mc;
    BurnSgd::new()
        .with_momentum(Some(Mc::new().with_momentum([0.9, 0.8, 0.7, 0.95][k])))
        .with_weight_decay(Some(Wd::new(1e-2)))
}

fn burn_adam(k: usize) -> BurnAdam {
    BurnAdam::new().with_beta_1([0.8, 0.85, 0.9, 0.95][k] as f32)
}

fn burn_adamw(k: usize) -> BurnAdamW {
    BurnAdamW::new()
        .with_weight_decay([0.0, 1e-3, 1e-2, 1e-1][k] as f32)
        .with_amsgrad(true)
}

fn adam_config() -> GroupAdamConfig {
    GroupAdamConfig::new().with_beta_1([0.8, 0.85, 0.9, 0.95])
}

fn adamw_config() -> GroupAdamWConfig {
    GroupAdamWConfig::new()
        .with_weight_decay([0.0, 1e-3, 1e-2, 1e-1])
        .with_amsgrad(true)
}

const LR: [f64; K] = [0.01, 0.02, 0.005, 0.03];

#[test]
fn the_optimizer_and_its_record_can_move_between_threads() {
    fn assert_send<T: Send>() {}
    assert_send::<GroupOptimizer<saturate_optim::GroupAdam, Mlp<GB>, GB>>();
    assert_send::<saturate_optim::GroupOptimizerRecord<saturate_vmap::Vmap<burn::backend::NdArray>>>(
    );
    assert_send::<saturate_optim::MemberSchedulers<saturate_optim::AnyLrScheduler>>();
}
