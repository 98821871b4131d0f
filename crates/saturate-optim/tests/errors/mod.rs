//! Bad input gives typed errors that name the field.

use burn::optim::lr_scheduler::linear::LinearLrSchedulerConfig;
use burn::optim::GradientsParams;
use saturate_optim::{
    GroupAdamConfig, GroupAdamWConfig, GroupGradientClippingConfig, GroupMomentumConfig,
    GroupSgdConfig, MemberSchedulers, OptimError,
};
use saturate_vmap::VmapError;

use crate::common::*;

fn field_of(e: OptimError) -> String {
    let message = e.to_string();
    match e {
        OptimError::WrongLength { field, .. }
        | OptimError::OutOfRange { field, .. }
        | OptimError::Incompatible { field, .. } => {
            assert!(
                message.contains(&field),
                "message `{message}` does not name `{field}`"
            );
            field
        }
        other => panic!("expected an error naming a field, got {other:?}"),
    }
}

#[test]
fn a_per_member_list_of_the_wrong_length() {
    let e = GroupAdamConfig::new()
        .with_beta_1(vec![0.9; 3])
        .init::<GB, Mlp<GB>>(K)
        .unwrap_err();
    assert_eq!(
        e,
        OptimError::WrongLength {
            field: "beta_1".into(),
            expected: K,
            got: 3
        }
    );
    let e = GroupSgdConfig::new()
        .with_momentum(Some(GroupMomentumConfig::new().with_dampening([0.1; 5])))
        .init::<GB, Mlp<GB>>(K)
        .unwrap_err();
    assert_eq!(field_of(e), "momentum.dampening");
}

#[test]
fn betas_outside_zero_one() {
    for (beta_1, beta_2, field) in [
        (1.0, 0.999, "beta_1"),
        (-0.1, 0.999, "beta_1"),
        (0.9, 1.0, "beta_2"),
    ] {
        let e = GroupAdamConfig::new()
            .with_beta_1(beta_1)
            .with_beta_2([0.99, 0.99, 0.99, beta_2])
            .init::<GB, Mlp<GB>>(K)
            .unwrap_err();
        assert_eq!(field_of(e), field);
    }
    let e = GroupAdamWConfig::new()
        .with_beta_2([0.99, f64::NAN, 0.9, 0.9])
        .init::<GB, Mlp<GB>>(K)
        .unwrap_err();
    assert!(matches!(e, OptimError::OutOfRange { ref field, member: 1, .. } if field == "beta_2"));
}

#[test]
fn epsilon_not_positive() {
    for eps in [0.0, -1e-8] {
        let e = GroupAdamWConfig::new()
            .with_epsilon([1e-8, 1e-8, eps, 1e-8])
            .init::<GB, Mlp<GB>>(K)
            .unwrap_err();
        assert!(
            matches!(e, OptimError::OutOfRange { ref field, member: 2, .. } if field == "epsilon"),
            "{e:?}"
        );
    }
}

#[test]
fn other_ranges() {
    let e = GroupAdamWConfig::new()
        .with_weight_decay(-1.0)
        .init::<GB, Mlp<GB>>(K)
        .unwrap_err();
    assert_eq!(field_of(e), "weight_decay");
    let e = GroupSgdConfig::new()
        .with_gradient_clipping(Some(GroupGradientClippingConfig::norm(0.0)))
        .init::<GB, Mlp<GB>>(K)
        .unwrap_err();
    assert_eq!(field_of(e), "gradient_clipping.norm");
}

#[test]
fn negative_or_misshapen_learning_rates() {
    let mut optim = GroupSgdConfig::new().init(K).unwrap();
    let group = init_group(K);
    let grads = || {
        let loss = group.loss(0, &group.device());
        GradientsParams::from_grads(loss.backward(), &*group)
    };
    let e = optim
        .step([0.1, 0.1, -0.1, 0.1], group.clone(), grads())
        .unwrap_err();
    assert!(
        matches!(e, OptimError::OutOfRange { ref field, member: 2, value, .. } if field == "lr" && value == -0.1),
        "{e:?}"
    );
    let e = optim
        .step(vec![0.1; 3], group.clone(), grads())
        .unwrap_err();
    assert_eq!(field_of(e), "lr");
    let grads_shared = grads();
    assert!(
        optim.step(0.1, group, grads_shared).is_ok(),
        "a shared lr is fine"
    );
}

#[test]
fn a_group_of_another_size() {
    let mut optim = GroupSgdConfig::new().init(K).unwrap();
    let group = init_group(2);
    let loss = group.loss(0, &group.device());
    let grads = GradientsParams::from_grads(loss.backward(), &*group);
    assert!(matches!(
        optim.step(0.1, group, grads),
        Err(OptimError::MemberCountMismatch {
            expected: K,
            got: 2,
            ..
        })
    ));
}

#[test]
fn bad_membership_changes() {
    let mut optim = GroupAdamConfig::new().init::<GB, Mlp<GB>>(K).unwrap();
    assert_eq!(
        optim.retain(&[0, 4]),
        Err(OptimError::Vmap(VmapError::MemberOutOfRange {
            index: 4,
            members: K
        }))
    );
    assert_eq!(
        optim.retain(&[1, 1]),
        Err(OptimError::Vmap(VmapError::DuplicateMember { index: 1 }))
    );
    let e = optim
        .extend(1, &GroupAdamConfig::new().with_amsgrad(true))
        .unwrap_err();
    assert_eq!(field_of(e), "amsgrad");
    let e = optim
        .extend(2, &GroupAdamConfig::new().with_epsilon([1e-8]))
        .unwrap_err();
    assert_eq!(field_of(e), "epsilon");
    assert_eq!(optim.members(), K, "a failed extend changes nothing");
}

#[test]
fn a_scheduler_config_burn_rejects() {
    let configs = [
        LinearLrSchedulerConfig::new(0.1, 0.0, 10),
        LinearLrSchedulerConfig::new(0.1, 0.0, 0),
    ];
    let e = MemberSchedulers::init(&configs).unwrap_err();
    assert!(
        matches!(e, OptimError::Scheduler { member: 1, .. }),
        "{e:?}"
    );
}
