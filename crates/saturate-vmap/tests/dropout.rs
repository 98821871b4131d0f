//! saturate's per-member `Dropout` and burn-nn's `Dropout` under `Vmap`: keep rates, scaling,
//! independent masks per member, gradients through each member's mask. Shared by the `main`
//! (NdArray) and `cubecl` (wgpu) binaries.

use burn::tensor::Tensor;
use burn::tensor::TensorData;
use rand::rngs::StdRng;
use rand::SeedableRng;
use saturate_vmap::nn::DropoutConfig;
use saturate_vmap::{
    is_batched, member_data, member_values, per_member, stack_members, Batched, Vmap, VmapDevice,
    VmapError,
};

use crate::parity::common::{group_device, inner_device, uniform, Inner, G};

fn input(seed: u64, shape: &[usize]) -> TensorData {
    uniform(&mut StdRng::seed_from_u64(seed), shape, -1.0, 1.0)
}

fn values(data: &TensorData) -> Vec<f32> {
    data.clone()
        .convert::<f32>()
        .to_vec::<f32>()
        .expect("f32 data")
}

// ---------------------------------------------------------------------------------------------
// saturate_vmap::nn::Dropout: one probability per member
// ---------------------------------------------------------------------------------------------

const N: usize = 100_000;

#[test]
fn dropout_keep_rate_scaling_and_independent_masks_per_member() {
    let probs = [0.5, 0.5, 0.0, 0.2, 0.9];
    let device = group_device(probs.len());
    let dropout = DropoutConfig::new(probs.to_vec())
        .init::<G>(&device)
        .unwrap();
    let got = member_values(dropout.probs()).unwrap();
    for (g, p) in got.iter().zip(probs) {
        assert!((g - p).abs() < 1e-6, "probs {got:?}");
    }
    let x = Tensor::<G, 1>::ones([N], &device);
    let y = dropout.forward(x);
    let per: Vec<Vec<f32>> = member_data(y).iter().map(values).collect();
    for (k, &p) in probs.iter().enumerate() {
        let kept = per[k].iter().filter(|&&v| v != 0.0).count();
        let rate = kept as f64 / N as f64;
        assert!(
            (rate - (1.0 - p)).abs() < 0.01,
            "member {k}: keep rate {rate} for p = {p}"
        );
        let scale = (1.0 / (1.0 - p)) as f32;
        for &v in &per[k] {
            assert!(
                v == 0.0 || (v - scale).abs() <= 1e-5 * scale,
                "member {k}: kept value {v}, expected {scale}"
            );
        }
        if p == 0.0 {
            assert!(per[k].iter().all(|&v| v == 1.0), "p = 0 must keep all");
        }
    }
    // Members 0 and 1 have the same p but independent masks: they agree on about half the
    // elements, both keep about a quarter.
    let both = (0..N)
        .filter(|&i| per[0][i] != 0.0 && per[1][i] != 0.0)
        .count() as f64
        / N as f64;
    assert!((both - 0.25).abs() < 0.01, "P(both kept) = {both}");
    // Two calls draw new masks.
    let again = member_data(dropout.forward(Tensor::<G, 1>::ones([N], &device)));
    assert_ne!(values(&again[0]), per[0]);
}

#[test]
fn dropout_on_batched_input_and_rank_3() {
    let device = group_device(2);
    let dropout = DropoutConfig::new(vec![0.25, 0.0])
        .init::<G>(&device)
        .unwrap();
    let one = VmapDevice::new(inner_device(), 1);
    let x = stack_members(vec![
        Tensor::<G, 3>::full([10, 100, 100], 2.0, &one),
        Tensor::<G, 3>::full([10, 100, 100], 3.0, &one),
    ])
    .unwrap();
    let per: Vec<Vec<f32>> = member_data(dropout.forward(x)).iter().map(values).collect();
    let kept = per[0].iter().filter(|&&v| v != 0.0).count() as f64 / N as f64;
    assert!((kept - 0.75).abs() < 0.01, "keep rate {kept}");
    assert!(per[0]
        .iter()
        .all(|&v| v == 0.0 || (v - 2.0 / 0.75).abs() < 1e-5));
    assert!(per[1].iter().all(|&v| v == 3.0));
}

#[test]
fn dropout_is_the_identity_without_autodiff() {
    let device = group_device(3);
    let dropout = DropoutConfig::new(vec![0.5, 0.3, 0.9])
        .init::<Vmap<Inner>>(&device)
        .unwrap();
    let data = input(30, &[50, 20]);
    let x = Tensor::<Vmap<Inner>, 2>::from_data(data.clone(), &device);
    let y = dropout.forward(x);
    for d in member_data(y) {
        assert_eq!(values(&d), values(&data));
    }
}

#[test]
fn dropout_invalid_probability_is_an_error() {
    let device = group_device(3);
    for (bad, member) in [(1.0, 1usize), (-0.1, 2), (f64::NAN, 0)] {
        let mut probs = vec![0.1, 0.2, 0.3];
        probs[member] = bad;
        match DropoutConfig::new(probs).init::<G>(&device).unwrap_err() {
            VmapError::InvalidValue {
                member: m, value, ..
            } => {
                assert_eq!(m, member);
                assert!(value == bad || (value.is_nan() && bad.is_nan()));
            }
            other => panic!("expected InvalidValue, got {other:?}"),
        }
    }
    assert!(matches!(
        DropoutConfig::new(vec![0.1, 0.2])
            .init::<G>(&device)
            .unwrap_err(),
        VmapError::MemberCountMismatch { .. }
    ));
}

#[test]
fn dropout_probabilities_follow_retain_and_member() {
    let init = || {
        Batched::init(4, &inner_device(), |d| {
            DropoutConfig::new(vec![0.1, 0.2, 0.3, 0.4])
                .init::<G>(d)
                .unwrap()
        })
        .unwrap()
    };
    let kept = init().retain(&[3, 0]).unwrap();
    let p = member_values(kept.probs()).unwrap();
    assert!(
        (p[0] - 0.4).abs() < 1e-6 && (p[1] - 0.1).abs() < 1e-6,
        "{p:?}"
    );
    let m = init().member(2).unwrap();
    let p = member_values(m.probs()).unwrap();
    assert_eq!(p.len(), 1);
    assert!((p[0] - 0.3).abs() < 1e-6, "{p:?}");
}

/// `set_probs` changes every member's probability of a selected group (not the group it was
/// selected from) and checks its input as `init` does.
#[test]
fn dropout_probabilities_can_be_set_after_init() {
    let group = Batched::init(3, &inner_device(), |d| {
        DropoutConfig::new(vec![0.1, 0.2, 0.3])
            .init::<G>(d)
            .unwrap()
    })
    .unwrap();
    let copied = group.clone().select(&[2, 2, 0]).unwrap();
    copied.set_probs(&[0.5, 0.0, 0.25]).unwrap();
    let p = member_values(copied.probs()).unwrap();
    assert!(
        (p[0] - 0.5).abs() < 1e-6 && p[1].abs() < 1e-6 && (p[2] - 0.25).abs() < 1e-6,
        "{p:?}"
    );
    // The group it was selected from keeps its own.
    let p = member_values(group.probs()).unwrap();
    assert!((p[2] - 0.3).abs() < 1e-6, "{p:?}");
    assert!(copied.set_probs(&[0.5, 0.1]).is_err(), "one per member");
    assert!(copied.set_probs(&[0.5, 1.0, 0.1]).is_err(), "in [0, 1)");
}

/// Gradients through per-member dropout follow each member's own mask: with
/// `y_k = dropout_k(x * w_k)` and `loss_k = sum(y_k)`, `d loss_k / d w_k = sum(y_k) / w_k`.
#[test]
fn dropout_gradients_follow_each_members_mask() {
    let device = group_device(3);
    let dropout = DropoutConfig::new(vec![0.5, 0.2, 0.0])
        .init::<G>(&device)
        .unwrap();
    let ws = [1.0, 2.0, -3.0];
    let w = per_member::<G>(&ws, &device).unwrap().require_grad();
    let x = Tensor::<G, 1>::from_data(input(60, &[2000]), &device);
    let y = dropout.forward(x * w.clone());
    let grads = y.clone().sum().backward();
    let gw = member_values(w.grad(&grads).expect("gradient of w")).unwrap();
    for (k, yk) in member_data(y).iter().enumerate() {
        let sum: f64 = values(yk).iter().map(|&v| v as f64).sum();
        let want = sum / ws[k];
        assert!(
            (gw[k] - want).abs() <= 1e-4 * want.abs().max(1.0),
            "member {k}: dloss/dw = {}, expected {want}",
            gw[k]
        );
    }
}

/// burn-nn's own `Dropout` (one probability for all) draws an independent mask per member.
#[test]
fn burn_dropout_draws_independent_masks_per_member() {
    let device = group_device(4);
    let dropout = burn::nn::DropoutConfig::new(0.3).init();
    let y = dropout.forward(Tensor::<G, 1>::ones([N], &device));
    assert!(is_batched(&y));
    let per: Vec<Vec<f32>> = member_data(y).iter().map(values).collect();
    for (k, m) in per.iter().enumerate() {
        let kept = m.iter().filter(|&&v| v != 0.0).count() as f64 / N as f64;
        assert!((kept - 0.7).abs() < 0.01, "member {k}: keep rate {kept}");
        assert!(m.iter().all(|&v| v == 0.0 || (v - 1.0 / 0.7).abs() < 1e-5));
    }
    for a in 0..4 {
        for b in a + 1..4 {
            let both = (0..N)
                .filter(|&i| per[a][i] != 0.0 && per[b][i] != 0.0)
                .count() as f64
                / N as f64;
            assert!(
                (both - 0.49).abs() < 0.01,
                "members {a}, {b}: P(both kept) = {both}"
            );
        }
    }
}

/// A user's module with a per-member dropout: an ordinary `B: Backend` module.
#[derive(burn::module::Module, Debug)]
struct Regularised<B: burn::tensor::backend::Backend> {
    linear: burn::nn::Linear<B>,
    dropout: saturate_vmap::nn::Dropout<B>,
}

impl<B: burn::tensor::backend::Backend> Regularised<B> {
    fn new(probs: Vec<f64>, device: &B::Device) -> Result<Self, VmapError> {
        Ok(Self {
            linear: burn::nn::LinearConfig::new(3, 2).init(device),
            dropout: DropoutConfig::new(probs).init(device)?,
        })
    }
}

#[test]
fn per_member_dropout_builds_on_a_plain_backend_and_a_member_loads_into_it() {
    use burn::module::Module;
    use burn::record::{BinBytesRecorder, FullPrecisionSettings, Recorder};

    // Plain backend: one member, one probability.
    let plain = Regularised::<crate::parity::common::R>::new(vec![0.3], &inner_device()).unwrap();
    let p: Vec<f32> = values(&plain.dropout.probs().into_data());
    assert_eq!(p, vec![0.3]);
    let err = Regularised::<crate::parity::common::R>::new(vec![0.3, 0.4], &inner_device());
    assert!(
        matches!(
            err,
            Err(VmapError::MemberCountMismatch {
                expected: 1,
                got: 2,
                ..
            })
        ),
        "{err:?}"
    );
    // In training it drops about 30 % on the plain backend as well.
    let y = plain
        .dropout
        .forward(Tensor::<crate::parity::common::R, 1>::ones(
            [N],
            &inner_device(),
        ));
    let kept = values(&y.into_data()).iter().filter(|&&v| v != 0.0).count() as f64 / N as f64;
    assert!((kept - 0.7).abs() < 0.01, "keep rate {kept}");

    // A group of three, then member 2 saved and loaded into the plain module.
    let group: Batched<Regularised<G>> = Batched::try_init(3, &inner_device(), |d| {
        Regularised::new(vec![0.1, 0.2, 0.5], d)
    })
    .unwrap();
    let recorder = BinBytesRecorder::<FullPrecisionSettings>::default();
    let member = group.member(2).unwrap();
    let bytes = Recorder::<G>::record(&recorder, member.clone().into_record(), ()).unwrap();
    let record =
        Recorder::<crate::parity::common::R>::load(&recorder, bytes, &inner_device()).unwrap();
    let loaded = plain.load_record(record);
    assert_eq!(values(&loaded.dropout.probs().into_data()), vec![0.5]);
    assert_eq!(
        values(&loaded.linear.weight.val().into_data()),
        values(&member_data(member.linear.weight.val())[0])
    );
}
