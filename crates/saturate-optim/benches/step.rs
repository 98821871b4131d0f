//! One optimizer step (gradients already computed) for K members of a deep MLP:
//!
//! - `group_*`: saturate's `GroupOptimizer` on `Autodiff<Vmap<NdArray>>`, with one update per
//!   parameter tensor (`per_parameter`, burn's structure, the default) or the whole-module
//!   update (`fused`: parameters concatenated, one pass of the rule); hyperparameters shared
//!   except the learning rate, or all different (`per_member_values`);
//! - `burn_one_by_one`: K separate models on `Autodiff<NdArray>`, each stepped by its own
//!   burn-optim optimizer (what one does without saturate).
//!
//! Both run with the benchmark's main thread as a worker of rayon's pool
//! (`saturate_vmap::join_host_pool`, as `run_trainer` and the training-step benchmark do);
//! `SATURATE_HOST_POOL=off` measures them without it.
//!
//! Run: `cargo bench -p saturate-optim --bench step`. Numbers: book/src/benchmarks/optimizer-step.md.

use burn::backend::{Autodiff, NdArray};
use burn::module::Module;
use burn::nn::{Linear, LinearConfig};
use burn::optim::{GradientsParams, Optimizer};
use burn::tensor::activation::relu;
use burn::tensor::backend::Backend;
use burn::tensor::{Distribution, Tensor};
use saturate_optim::{
    GroupAdamConfig, GroupMomentumConfig, GroupOptimizer, GroupSgdConfig, UpdateRule,
};
use saturate_vmap::{Batched, Vmap};

type GB = Autodiff<Vmap<NdArray>>;
type RB = Autodiff<NdArray>;

const K: usize = 8;
const WIDTH: usize = 64;
const DEPTH: usize = 8;
const BATCH: usize = 32;

#[derive(Module, Debug)]
struct Deep<B: Backend> {
    layers: Vec<Linear<B>>,
}

impl<B: Backend> Deep<B> {
    fn new(device: &B::Device) -> Self {
        Self {
            layers: (0..DEPTH)
                .map(|_| LinearConfig::new(WIDTH, WIDTH).init(device))
                .collect(),
        }
    }

    fn loss(&self, x: Tensor<B, 2>) -> Tensor<B, 1> {
        let mut h = x;
        for layer in &self.layers {
            h = relu(layer.forward(h));
        }
        h.powi_scalar(2).mean()
    }
}

fn main() {
    if std::env::var("SATURATE_HOST_POOL").is_ok_and(|v| v == "off") {
        eprintln!("host pool: main outside rayon's pool");
    } else {
        match saturate_vmap::join_host_pool() {
            Ok(threads) => eprintln!("host pool: main joined rayon's pool ({threads} threads)"),
            Err(e) => eprintln!("host pool: {e}"),
        }
    }
    divan::main();
}

#[derive(Debug, Clone, Copy)]
enum Rule {
    SgdMomentum,
    Adam,
}

const RULES: &[Rule] = &[Rule::SgdMomentum, Rule::Adam];

fn lrs() -> Vec<f64> {
    (0..K).map(|k| 1e-3 * (k + 1) as f64).collect()
}

fn bench_group<R: UpdateRule>(bencher: divan::Bencher, mut optim: GroupOptimizer<R, Deep<GB>, GB>) {
    let group: Batched<Deep<GB>> = Batched::init(K, &Default::default(), Deep::new).unwrap();
    let x = Tensor::<GB, 2>::random([BATCH, WIDTH], Distribution::Default, &group.device());
    let lrs = lrs();
    bencher
        .with_inputs(|| {
            let loss = group.loss(x.clone());
            let grads = GradientsParams::from_grads(loss.backward(), &*group);
            (group.clone(), grads)
        })
        .bench_local_values(|(group, grads)| optim.step(lrs.clone(), group, grads).unwrap());
}

#[divan::bench(args = RULES)]
fn group_fused(bencher: divan::Bencher, rule: Rule) {
    match rule {
        Rule::SgdMomentum => bench_group(
            bencher,
            GroupSgdConfig::new()
                .with_momentum(Some(GroupMomentumConfig::new()))
                .init(K)
                .unwrap()
                .with_fused_update(true),
        ),
        Rule::Adam => bench_group(
            bencher,
            GroupAdamConfig::new()
                .init(K)
                .unwrap()
                .with_fused_update(true),
        ),
    }
}

#[divan::bench(args = RULES)]
fn group_per_parameter(bencher: divan::Bencher, rule: Rule) {
    match rule {
        Rule::SgdMomentum => bench_group(
            bencher,
            GroupSgdConfig::new()
                .with_momentum(Some(GroupMomentumConfig::new()))
                .init(K)
                .unwrap()
                .with_fused_update(false),
        ),
        Rule::Adam => bench_group(
            bencher,
            GroupAdamConfig::new()
                .init(K)
                .unwrap()
                .with_fused_update(false),
        ),
    }
}

/// Every hyperparameter different per member (the per-member tensor path for all of them).
#[divan::bench(args = RULES)]
fn group_per_member_values(bencher: divan::Bencher, rule: Rule) {
    let spread =
        |base: f64, step: f64| -> Vec<f64> { (0..K).map(|k| base + step * k as f64).collect() };
    match rule {
        Rule::SgdMomentum => bench_group(
            bencher,
            GroupSgdConfig::new()
                .with_momentum(Some(
                    GroupMomentumConfig::new()
                        .with_momentum(spread(0.5, 0.05))
                        .with_dampening(spread(0.0, 0.05)),
                ))
                .init(K)
                .unwrap(),
        ),
        Rule::Adam => bench_group(
            bencher,
            GroupAdamConfig::new()
                .with_beta_1(spread(0.8, 0.02))
                .with_beta_2(spread(0.99, 0.001))
                .with_epsilon(spread(1e-8, 1e-7))
                .init(K)
                .unwrap(),
        ),
    }
}

fn bench_burn<O: Optimizer<Deep<RB>, RB>>(bencher: divan::Bencher, make: impl Fn() -> O) {
    let device = Default::default();
    let models: Vec<Deep<RB>> = (0..K).map(|_| Deep::new(&device)).collect();
    let mut optims: Vec<O> = (0..K).map(|_| make()).collect();
    let x = Tensor::<RB, 2>::random([BATCH, WIDTH], Distribution::Default, &device);
    let lrs = lrs();
    bencher
        .with_inputs(|| {
            models
                .iter()
                .map(|m| {
                    let grads = GradientsParams::from_grads(m.loss(x.clone()).backward(), m);
                    (m.clone(), grads)
                })
                .collect::<Vec<_>>()
        })
        .bench_local_values(|inputs| {
            inputs
                .into_iter()
                .zip(optims.iter_mut())
                .zip(&lrs)
                .map(|(((model, grads), optim), &lr)| optim.step(lr, model, grads))
                .collect::<Vec<_>>()
        });
}

#[divan::bench(args = RULES)]
fn burn_one_by_one(bencher: divan::Bencher, rule: Rule) {
    match rule {
        Rule::SgdMomentum => bench_burn(bencher, || {
            burn::optim::SgdConfig::new()
                .with_momentum(Some(burn::optim::momentum::MomentumConfig::new()))
                .init()
        }),
        Rule::Adam => bench_burn(bencher, || burn::optim::AdamConfig::new().init()),
    }
}
