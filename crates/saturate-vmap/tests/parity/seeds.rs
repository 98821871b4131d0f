//! Parity for every seed: a CNN classifier (conv, ReLU, max-pool, linear, cross-entropy) of
//! K = 8 members trained with burn-optim's unmodified Adam, for the 30 seeds 0..30 (every seed,
//! none picked), against each member trained alone, within `ATOL` / `RTOL` (1e-5 / 1e-4).
//!
//! Against plain NdArray not bit for bit: the group computes the convolution with NdArray's
//! default lowering, `ConvLowering::HostGemm` (im2col + matrix products per member), NdArray
//! alone as its direct loop, which sum in different orders (the test prints the largest
//! difference over every parameter of the 240 member runs). With
//! `set_conv_lowering::<NdArray>(ConvLowering::InnerConvolution)` (NdArray's own convolution)
//! the same 240 runs are bit for bit (largest difference 0, measured by setting it at the top
//! of this test; not done here because the lowering is process-wide and the other tests of
//! this binary run in parallel). Against itself the host lowering is exact: every member of
//! the group equals the same member trained as a group of one, bit for bit, for all 30 seeds
//! (`cnn_group_member_equals_group_of_one_for_every_seed`). Issue 11
//! saw about 4 of 30 seeds
//! fail and suspected burn-ndarray's approximate SIMD `recip`; with that feature on
//! (`cargo test -p saturate-vmap --features burn-ndarray/simd --test main seeds::`) this test
//! passes as well (largest difference the same 2.9e-6): Vmap's reciprocals are exact whatever the inner
//! one (issue 8), and the remaining failures this session found in the parity suite were the
//! same with and without `simd`, and came from models whose gradient is rounding noise (a bias
//! in front of BatchNorm, a one-channel 1x1 convolution in front of BatchNorm: see
//! `modules::ConvNormCase` and `edge::Conv`).

use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::loss::CrossEntropyLossConfig;
use burn::nn::pool::{MaxPool2d, MaxPool2dConfig};
use burn::nn::{Linear, LinearConfig, PaddingConfig2d, Relu};
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::tensor::backend::Backend;
use burn::tensor::{ElementConversion, Tensor, TensorData};
use rand::rngs::StdRng;
use rand::SeedableRng;
use saturate_vmap::{member_values, Batched};

use super::common::{
    classes, compare, group_params, inner_device, max_diff, params, reseed, step_slots, transfer,
    uniform, Case, DataMode, Feed, GroupFeed, MemberFeed, Slot, ATOL, G, R, RTOL,
};

/// The smallest CNN that still has every op of the classifier: conv 1 -> 3 channels (3x3,
/// padding 1) on 6x6 images, ReLU, 2x2 max-pool, linear 27 -> 4 classes. Batches of 8: the
/// logits (8 x 4 = 32 values) are long enough for burn-ndarray's vectorised `recip` (32 elements
/// or more) in the cross-entropy backward, the op issue 8 found approximate.
#[derive(Module, Debug)]
pub struct TinyCnn<B: Backend> {
    conv: Conv2d<B>,
    pool: MaxPool2d,
    head: Linear<B>,
}

struct TinyCnnCase;

impl Case for TinyCnnCase {
    type Model<B: Backend> = TinyCnn<B>;
    fn init<B: Backend>(&self, device: &B::Device) -> TinyCnn<B> {
        TinyCnn {
            conv: Conv2dConfig::new([1, 3], [3, 3])
                .with_padding(PaddingConfig2d::Explicit(1, 1, 1, 1))
                .init(device),
            pool: MaxPool2dConfig::new([2, 2]).init(),
            head: LinearConfig::new(3 * 3 * 3, 4).init(device),
        }
    }
    fn batch(&self, rng: &mut StdRng) -> Vec<TensorData> {
        vec![uniform(rng, &[8, 1, 6, 6], 0.0, 1.0), classes(rng, &[8], 4)]
    }
    fn loss<B: Backend, F: Feed<B>>(&self, m: &TinyCnn<B>, f: &F) -> Tensor<B, 1> {
        let x = m
            .pool
            .forward(Relu::new().forward(m.conv.forward(f.float(0))));
        let logits = m.head.forward(x.flatten(1, 3));
        CrossEntropyLossConfig::new()
            .init(&f.device())
            .forward(logits, f.int(1))
    }
}

/// The largest parameter difference seen (printed: bit for bit or not).
static WORST: std::sync::Mutex<f64> = std::sync::Mutex::new(0.0);

const MEMBERS: usize = 8;
const STEPS: usize = 5;
const LR: f64 = 0.01;

/// One Adam step of a group on `slots`: the group after it and each member's loss before it.
fn group_step<O: Optimizer<TinyCnn<G>, G>>(
    case: &TinyCnnCase,
    group: Batched<TinyCnn<G>>,
    adam: &mut O,
    slots: &[Slot],
) -> (Batched<TinyCnn<G>>, Vec<f64>) {
    let loss = case.loss(
        &*group,
        &GroupFeed::<G> {
            slots,
            device: group.device(),
        },
    );
    let losses = member_values(loss.clone()).expect("losses");
    let grads = GradientsParams::from_grads(loss.backward(), &*group);
    let group = Batched::from_module(adam.step(LR, group.into_inner(), grads)).expect("step");
    (group, losses)
}

/// Trains one seed; returns one line per parameter or loss outside `ATOL` / `RTOL`.
fn one_seed(seed: u64) -> Vec<String> {
    let case = TinyCnnCase;
    let mut group: Batched<TinyCnn<G>> = Batched::init(MEMBERS, &inner_device(), |d| {
        reseed(case.init::<G>(d), seed)
    })
    .expect("init");
    let mut alone: Vec<TinyCnn<R>> = (0..MEMBERS)
        .map(|k| {
            transfer::<G, R, _, _>(
                group.member(k).expect("member"),
                case.init::<R>(&inner_device()),
                &inner_device(),
            )
        })
        .collect();
    let mut group_adam = AdamConfig::new().init::<G, TinyCnn<G>>();
    let mut adams: Vec<_> = (0..MEMBERS)
        .map(|_| AdamConfig::new().init::<R, TinyCnn<R>>())
        .collect();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut bad = Vec::new();
    for step in 0..STEPS {
        let slots = step_slots(&case, &mut rng, DataMode::PerMember, MEMBERS);
        let (next, losses) = group_step(&case, group, &mut group_adam, &slots);
        group = next;
        for (k, model) in alone.iter_mut().enumerate() {
            let loss = case.loss(
                &*model,
                &MemberFeed::<R> {
                    slots: &slots,
                    member: k,
                    device: inner_device(),
                },
            );
            let value: f64 = loss.clone().into_scalar().elem();
            let grads = GradientsParams::from_grads(loss.backward(), &*model);
            *model = adams[k].step(LR, model.clone(), grads);
            if (losses[k] - value).abs() > ATOL + RTOL * value.abs() {
                bad.push(format!(
                    "seed {seed}, step {step}, member {k}: loss {} vs alone {value}",
                    losses[k]
                ));
            }
        }
    }
    let got = group_params(&*group);
    for (k, model) in alone.iter().enumerate() {
        for (g, w) in got[k].iter().zip(params(model)) {
            let (d, _) = max_diff(&g.values, &w.values, 0.0, 0.0);
            let mut worst = WORST.lock().unwrap();
            *worst = worst.max(d);
        }
        bad.extend(compare(
            &format!("seed {seed}, {STEPS} Adam steps"),
            k,
            &got[k],
            &params(model),
        ));
    }
    bad
}

#[test]
fn cnn_classifier_with_adam_for_every_seed() {
    let mut bad = Vec::new();
    let mut failed_seeds = Vec::new();
    for seed in 0..30 {
        let b = one_seed(seed);
        if !b.is_empty() {
            failed_seeds.push(seed);
        }
        bad.extend(b);
    }
    eprintln!(
        "30 seeds x {MEMBERS} members: largest |group - alone| over every parameter: {:e}",
        *WORST.lock().unwrap()
    );
    assert!(
        bad.is_empty(),
        "{} of 30 seeds outside atol {ATOL:e} / rtol {RTOL:e}: {failed_seeds:?}\n{}",
        failed_seeds.len(),
        bad.join("\n")
    );
}

/// Trains one seed as a group of `MEMBERS` and as `MEMBERS` groups of one (the same lowering,
/// the same Adam); returns the parameters and losses that are not equal bit for bit.
fn one_seed_group_of_one(seed: u64) -> Vec<String> {
    let case = TinyCnnCase;
    let mut group: Batched<TinyCnn<G>> = Batched::init(MEMBERS, &inner_device(), |d| {
        reseed(case.init::<G>(d), seed)
    })
    .expect("init");
    let mut singles: Vec<Batched<TinyCnn<G>>> = (0..MEMBERS)
        .map(|k| group.clone().retain(&[k]).expect("retain"))
        .collect();
    let mut group_adam = AdamConfig::new().init::<G, TinyCnn<G>>();
    let mut adams: Vec<_> = (0..MEMBERS)
        .map(|_| AdamConfig::new().init::<G, TinyCnn<G>>())
        .collect();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut bad = Vec::new();
    for step in 0..STEPS {
        let slots = step_slots(&case, &mut rng, DataMode::PerMember, MEMBERS);
        let (next, losses) = group_step(&case, group, &mut group_adam, &slots);
        group = next;
        for (k, single) in singles.iter_mut().enumerate() {
            let own: Vec<Slot> = slots
                .iter()
                .map(|s| match s {
                    Slot::PerMember(v) => Slot::PerMember(vec![v[k].clone()]),
                    Slot::Shared(d) => Slot::Shared(d.clone()),
                })
                .collect();
            let (next, own_losses) = group_step(&case, single.clone(), &mut adams[k], &own);
            *single = next;
            let value = own_losses[0];
            if losses[k].to_bits() != value.to_bits() {
                bad.push(format!(
                    "seed {seed}, step {step}, member {k}: loss {} vs group of one {value}",
                    losses[k]
                ));
            }
        }
    }
    let got = group_params(&*group);
    for (k, single) in singles.iter().enumerate() {
        let want = group_params(&**single);
        for (g, w) in got[k].iter().zip(&want[0]) {
            let (d, _) = max_diff(&g.values, &w.values, 0.0, 0.0);
            if d != 0.0 {
                bad.push(format!(
                    "seed {seed}, member {k}: {} differs from the group of one by {d:e}",
                    g.path
                ));
            }
        }
    }
    bad
}

/// Under NdArray's default lowering a member's convolutions depend on nothing but its own
/// operands, so a group of 8 trained with Adam equals its members trained as groups of one, bit
/// for bit, for every seed.
#[test]
fn cnn_group_member_equals_group_of_one_for_every_seed() {
    let bad: Vec<String> = (0..30).flat_map(one_seed_group_of_one).collect();
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
