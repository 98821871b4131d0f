//! burn's `Optimizer` trait on a `GroupModel` (what burn-train's `Learner` calls): the same
//! update as `GroupOptimizer::step`, the scheduler's rate times each member's factor or fixed
//! per-member rates, and the record on the autodiff backend.

use burn::optim::{GradientsParams, MultiGradientsParams, Optimizer};
use burn::record::{BinBytesRecorder, FullPrecisionSettings, Recorder};
use burn::tensor::backend::DeviceOps;
use saturate_optim::{GroupOptimizerRecord, MemberLearningRates, OptimError};
use saturate_vmap::GroupModel;

use super::*;

type Model = GroupModel<Mlp<GB>>;

/// Trains through burn's trait, as burn-train's `Learner` does: `lr(step)` is the scheduler's
/// rate.
fn train_burn<O: Optimizer<Model, GB>>(
    mut model: Model,
    optim: &mut O,
    steps: std::ops::Range<usize>,
    lr: impl Fn(usize) -> f64,
) -> Model {
    for step in steps {
        let loss = model.loss(step, &model.device());
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(lr(step), model, grads);
    }
    model
}

fn schedule(step: usize) -> f64 {
    0.02 * 0.9f64.powi(step as i32)
}

#[test]
fn burn_step_equals_group_step_bit_for_bit() {
    let group = init_group(K);
    let mut burn_optim = adamw_config().init(K).unwrap();
    let mut group_optim = adamw_config().init(K).unwrap();
    let by_burn = train_burn(group.clone().into(), &mut burn_optim, 0..20, schedule);
    let by_group = train_group(group, &mut group_optim, 0..20, |s| vec![schedule(s); K]);
    assert_eq!(group_params(&by_burn), group_params(&by_group));
}

#[test]
fn the_scheduler_rate_is_scaled_by_each_members_factor() {
    const FACTORS: [f64; K] = [1.0, 0.5, 0.0, 2.0];
    let group = init_group(K);
    let mut scaled = sgd_config()
        .init(K)
        .unwrap()
        .with_lr_factors(FACTORS)
        .unwrap();
    assert_eq!(
        scaled.rates(),
        &MemberLearningRates::Scaled(FACTORS.to_vec())
    );
    let mut reference = sgd_config().init(K).unwrap();
    let by_burn = train_burn(group.clone().into(), &mut scaled, 0..20, schedule);
    let by_group = train_group(group.clone(), &mut reference, 0..20, |s| {
        FACTORS.iter().map(|f| schedule(s) * f).collect()
    });
    assert_eq!(group_params(&by_burn), group_params(&by_group));
    // Factor 0 froze member 2; the others moved.
    let initial = group_params(&group);
    let after = group_params(&by_burn);
    assert_eq!(after[2], initial[2]);
    assert!(max_abs_diff(&after[1], &initial[1]) > 1e-4);
}

#[test]
fn fixed_rates_ignore_the_scheduler() {
    let group = init_group(K);
    let mut fixed = adam_config().init(K).unwrap().with_fixed_lrs(LR).unwrap();
    let mut reference = adam_config().init(K).unwrap();
    let by_burn = train_burn(group.clone().into(), &mut fixed, 0..10, |_| 123.0);
    let by_group = train_group(group, &mut reference, 0..10, |_| LR.to_vec());
    assert_eq!(group_params(&by_burn), group_params(&by_group));
}

#[test]
fn rates_are_checked_when_the_adaptor_is_built() {
    let err = adam_config()
        .init::<GB, Mlp<GB>>(K)
        .unwrap()
        .with_lr_factors([1.0, 0.5])
        .unwrap_err();
    assert_eq!(
        err,
        OptimError::WrongLength {
            field: "lr_factors".into(),
            expected: K,
            got: 2
        }
    );
    let err = adam_config()
        .init::<GB, Mlp<GB>>(K)
        .unwrap()
        .with_fixed_lrs([0.1, -0.1, 0.1, f64::NAN])
        .unwrap_err();
    assert!(matches!(err, OptimError::OutOfRange { field, member: 1, .. } if field == "lr"));
}

#[test]
fn the_record_on_the_autodiff_backend_resumes_identically() {
    let config = adamw_config();
    let mut optim = config.init(K).unwrap().with_lr_factors(0.5).unwrap();
    let model = train_burn(init_group(K).into(), &mut optim, 0..10, schedule);

    // burn-train's checkpointer records the optimizer on the training backend (GB) and
    // restores it on the default device, which has one member.
    let recorder = BinBytesRecorder::<FullPrecisionSettings>::default();
    let bytes = Recorder::<GB>::record(&recorder, Optimizer::to_record(&optim), ()).unwrap();
    let record: GroupOptimizerRecord<GB> =
        Recorder::<GB>::load(&recorder, bytes, &Default::default()).unwrap();
    let mut restored = Optimizer::load_record(
        config.init(K).unwrap().with_lr_factors(0.5).unwrap(),
        record,
    );

    let continued = train_burn(model.clone(), &mut optim, 10..20, schedule);
    let resumed = train_burn(model.clone(), &mut restored, 10..20, schedule);
    assert_eq!(group_params(&resumed), group_params(&continued));
    let mut fresh = config.init(K).unwrap().with_lr_factors(0.5).unwrap();
    let restarted = train_burn(model, &mut fresh, 10..20, schedule);
    assert_ne!(group_params(&restarted), group_params(&continued));
}

#[test]
fn step_multi_on_one_device_equals_step() {
    let group: Model = init_group(K).into();
    let mut single = adam_config().init(K).unwrap();
    let mut multi = adam_config().init(K).unwrap();
    let grads = || GradientsParams::from_grads(group.loss(0, &group.device()).backward(), &group);
    let device = group.device().id();
    let multi_grads = grads();
    let by_single = Optimizer::step(&mut single, 0.01, group.clone(), grads());
    let by_multi = Optimizer::step_multi(
        &mut multi,
        0.01,
        group,
        MultiGradientsParams {
            grads: vec![(multi_grads, device)],
        },
    );
    assert_eq!(group_params(&by_multi), group_params(&by_single));
}

#[test]
#[should_panic(expected = "burn's Optimizer::step cannot return an error")]
fn a_group_of_another_size_panics_with_the_reason() {
    let mut optim = adam_config().init(K).unwrap();
    let _ = train_burn(init_group(2).into(), &mut optim, 0..1, schedule);
}
