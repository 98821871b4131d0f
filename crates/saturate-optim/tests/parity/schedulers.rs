//! Per-member learning-rate schedules: each burn scheduler kind, four different configs, driven
//! through `MemberSchedulers` for the group and through burn's own scheduler for each member
//! alone.

use burn::optim::lr_scheduler::composed::{ComposedLrSchedulerConfig, SchedulerReduction};
use burn::optim::lr_scheduler::cosine::CosineAnnealingLrSchedulerConfig;
use burn::optim::lr_scheduler::exponential::ExponentialLrSchedulerConfig;
use burn::optim::lr_scheduler::linear::LinearLrSchedulerConfig;
use burn::optim::lr_scheduler::noam::NoamLrSchedulerConfig;
use burn::optim::lr_scheduler::step::StepLrSchedulerConfig;
use burn::optim::lr_scheduler::LrScheduler;
use burn::optim::momentum::MomentumConfig as BurnMomentum;
use burn::optim::SgdConfig as BurnSgd;
use saturate_optim::{GroupMomentumConfig, GroupSgdConfig, MemberSchedulers, SchedulerConfig};

use super::parity_with;
use crate::common::*;

const INITIAL: [f64; K] = [0.005, 0.01, 0.03, 0.05];

/// Trains with one schedule per member: SGD with momentum, so that a wrong learning rate at
/// any step shows in the parameters.
fn schedule_parity<C: SchedulerConfig>(what: &str, configs: [C; K]) {
    let reference_lrs: Vec<Vec<f64>> = configs
        .iter()
        .map(|c| {
            let mut s = c.build_scheduler().unwrap();
            (0..STEPS).map(|_| s.step()).collect()
        })
        .collect();
    // The schedules must differ between members, or the test proves less than it says.
    assert!(
        reference_lrs.windows(2).all(|w| w[0] != w[1]),
        "{what}: identical schedules"
    );
    let mut schedulers = MemberSchedulers::init(&configs).unwrap();
    let config = GroupSgdConfig::new().with_momentum(Some(GroupMomentumConfig::new()));
    parity_with(
        what,
        config.init(K).unwrap(),
        |_| {
            BurnSgd::new()
                .with_momentum(Some(BurnMomentum::new()))
                .init()
        },
        |_| schedulers.step(),
        &reference_lrs,
    );
}

#[test]
fn constant() {
    schedule_parity("constant lr", INITIAL);
}

#[test]
fn step() {
    let step_size = [5, 10, 15, 20];
    let gamma = [0.5, 0.7, 0.8, 0.9];
    schedule_parity(
        "step lr",
        core::array::from_fn(|k| {
            StepLrSchedulerConfig::new(INITIAL[k], step_size[k]).with_gamma(gamma[k])
        }),
    );
}

#[test]
fn exponential() {
    let gamma = [0.9, 0.95, 0.97, 0.99];
    schedule_parity(
        "exponential lr",
        core::array::from_fn(|k| ExponentialLrSchedulerConfig::new(INITIAL[k], gamma[k])),
    );
}

#[test]
fn cosine_annealing() {
    let iters = [10, 20, 30, 40];
    let min = [0.0, 1e-4, 1e-3, 5e-3];
    schedule_parity(
        "cosine annealing lr",
        core::array::from_fn(|k| {
            CosineAnnealingLrSchedulerConfig::new(INITIAL[k], iters[k]).with_min_lr(min[k])
        }),
    );
}

#[test]
fn linear() {
    let last = [0.05, 0.001, 0.0, 0.02];
    let iters = [10, 25, 40, 60];
    schedule_parity(
        "linear lr",
        core::array::from_fn(|k| LinearLrSchedulerConfig::new(INITIAL[k], last[k], iters[k])),
    );
}

#[test]
fn noam() {
    let factor = [0.05, 0.1, 0.2, 0.4];
    let warmup = [5, 10, 20, 40];
    let model_size = [64, 128, 256, 512];
    schedule_parity(
        "noam lr",
        core::array::from_fn(|k| {
            NoamLrSchedulerConfig::new(factor[k])
                .with_warmup_steps(warmup[k])
                .with_model_size(model_size[k])
        }),
    );
}

#[test]
fn composed() {
    let reduction = [
        SchedulerReduction::Prod,
        SchedulerReduction::Avg,
        SchedulerReduction::Sum,
        SchedulerReduction::Prod,
    ];
    schedule_parity(
        "composed lr",
        core::array::from_fn(|k| {
            ComposedLrSchedulerConfig::new()
                .linear(LinearLrSchedulerConfig::new(
                    INITIAL[k],
                    INITIAL[k] / 10.0,
                    30,
                ))
                // A product scales the linear schedule; a sum or mean adds a small cosine one.
                .cosine(CosineAnnealingLrSchedulerConfig::new(
                    if k == 1 || k == 2 { INITIAL[k] } else { 1.0 },
                    10 + 10 * k,
                ))
                .with_reduction(reduction[k])
        }),
    );
}

/// Members following schedules of different kinds, through `AnyLrSchedulerConfig`; the
/// references drive burn's schedulers directly.
#[test]
fn a_different_kind_per_member() {
    use saturate_optim::AnyLrSchedulerConfig;

    let step = StepLrSchedulerConfig::new(0.02, 10);
    let cosine = CosineAnnealingLrSchedulerConfig::new(0.05, 30);
    let noam = NoamLrSchedulerConfig::new(0.2)
        .with_warmup_steps(10)
        .with_model_size(128);
    let mut burn_step = step.init().unwrap();
    let mut burn_cosine = cosine.init().unwrap();
    let mut burn_noam = noam.init().unwrap();
    let reference_lrs: Vec<Vec<f64>> = vec![
        vec![0.01; STEPS],
        (0..STEPS).map(|_| burn_step.step()).collect(),
        (0..STEPS).map(|_| burn_cosine.step()).collect(),
        (0..STEPS).map(|_| burn_noam.step()).collect(),
    ];
    let configs: [AnyLrSchedulerConfig; K] = [0.01.into(), step.into(), cosine.into(), noam.into()];
    let mut schedulers = MemberSchedulers::init(&configs).unwrap();
    let config = GroupSgdConfig::new().with_momentum(Some(GroupMomentumConfig::new()));
    parity_with(
        "a schedule kind per member",
        config.init(K).unwrap(),
        |_| {
            BurnSgd::new()
                .with_momentum(Some(BurnMomentum::new()))
                .init()
        },
        |_| schedulers.step(),
        &reference_lrs,
    );
}

#[test]
fn schedules_of_different_kinds_round_trip() {
    use burn::record::{BinBytesRecorder, FullPrecisionSettings, Recorder};
    use saturate_optim::AnyLrSchedulerConfig;

    let configs: [AnyLrSchedulerConfig; 3] = [
        ExponentialLrSchedulerConfig::new(0.1, 0.9).into(),
        LinearLrSchedulerConfig::new(0.1, 0.01, 20).into(),
        ComposedLrSchedulerConfig::new()
            .cosine(CosineAnnealingLrSchedulerConfig::new(0.1, 10))
            .into(),
    ];
    let mut schedulers = MemberSchedulers::init(&configs).unwrap();
    for _ in 0..7 {
        schedulers.step();
    }
    let recorder = BinBytesRecorder::<FullPrecisionSettings>::default();
    let bytes = recorder.record(schedulers.to_record::<GB>(), ()).unwrap();
    let record = recorder.load(bytes, &Default::default()).unwrap();
    let mut restored = MemberSchedulers::init(&configs)
        .unwrap()
        .load_record::<GB>(record)
        .unwrap();
    for _ in 0..5 {
        assert_eq!(restored.step(), schedulers.step());
    }
}
