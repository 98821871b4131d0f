//! Save/load of the optimizer state through burn's record system.

use burn::record::{BinBytesRecorder, FullPrecisionSettings, Recorder};
use saturate_optim::{GroupOptimizerRecord, MemberSchedulers, OptimError};

use super::*;

#[test]
fn save_load_round_trip_continues_identically() {
    let config = adamw_config();
    let mut optim = config.init(K).unwrap();
    let group = train_group(init_group(K), &mut optim, 0..20, |_| LR.to_vec());

    let recorder = BinBytesRecorder::<FullPrecisionSettings>::default();
    let record = optim.to_record();
    assert_eq!(record.members(), K);
    assert_eq!(
        record.len(),
        4,
        "one state per parameter (2 weights, 2 biases)"
    );
    let bytes = recorder.record(record, ()).unwrap();
    let loaded: GroupOptimizerRecord<_> = recorder.load(bytes, &group.device()).unwrap();
    let mut restored = config.init(K).unwrap().load_record(loaded).unwrap();

    let continued = train_group(group.clone(), &mut optim, 20..40, |_| LR.to_vec());
    let resumed = train_group(group, &mut restored, 20..40, |_| LR.to_vec());
    assert_eq!(group_params(&resumed), group_params(&continued));
}

#[test]
fn a_fresh_optimizer_is_not_a_restored_one() {
    // The round trip above would pass vacuously if the state did not matter; it does.
    let config = adamw_config();
    let mut optim = config.init(K).unwrap();
    let group = train_group(init_group(K), &mut optim, 0..20, |_| LR.to_vec());
    let mut fresh = config.init(K).unwrap();
    let continued = train_group(group.clone(), &mut optim, 20..25, |_| LR.to_vec());
    let restarted = train_group(group, &mut fresh, 20..25, |_| LR.to_vec());
    assert_ne!(group_params(&restarted), group_params(&continued));
}

#[test]
fn loading_a_record_of_another_group_size_fails() {
    let mut optim = adam_config().init(K).unwrap();
    let _ = train_group(init_group(K), &mut optim, 0..2, |_| LR.to_vec());
    let record = optim.to_record();
    let other = GroupAdamConfig::new().init::<GB, Mlp<GB>>(2).unwrap();
    assert!(matches!(
        other.load_record(record),
        Err(OptimError::MemberCountMismatch {
            expected: 2,
            got: 4,
            ..
        })
    ));
}

#[test]
fn schedulers_follow_the_group_and_round_trip() {
    use burn::optim::lr_scheduler::exponential::ExponentialLrSchedulerConfig;

    let configs = [0.1, 0.2, 0.4].map(|lr| ExponentialLrSchedulerConfig::new(lr, 0.5));
    let mut s = MemberSchedulers::init(&configs).unwrap();
    assert_eq!(s.step(), vec![0.1, 0.2, 0.4]);
    let record = s.to_record::<GB>();
    let mut restored = MemberSchedulers::init(&configs)
        .unwrap()
        .load_record::<GB>(record)
        .unwrap();
    assert_eq!(restored.step(), s.step());

    s.retain(&[2, 0]).unwrap();
    s.extend([ExponentialLrSchedulerConfig::new(1.0, 0.5).init().unwrap()]);
    // Members 2 and 0 are on their third step, the newcomer on its first.
    assert_eq!(s.step(), vec![0.1, 0.025, 1.0]);
}
