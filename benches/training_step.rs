//! One training step (forward, backward, per-member SGD) of K models: as one `Batched` group
//! on `Autodiff<Vmap<NdArray>>` vs K separate models on `Autodiff<NdArray>` stepped one after
//! another.
//!
//! Run: `cargo bench --bench training_step` (tables in docs/benchmarks.md). The inner backend
//! is NdArray unless a backend feature picks another: `--features flex`, `candle` or `cpu`
//! (`openblas-system` / `blas-netlib` switch NdArray's matrix product to a BLAS).

mod common;

use burn::backend::Autodiff;
use burn::tensor::Tensor;
use common::{Lr, Model, Net, batch, train_step};
use saturate::vmap::{Batched, Vmap, per_member};

#[cfg(feature = "cpu")]
type Inner = burn::backend::Cpu;
#[cfg(all(feature = "candle", not(feature = "cpu")))]
type Inner = burn::backend::Candle;
#[cfg(all(feature = "flex", not(any(feature = "cpu", feature = "candle"))))]
type Inner = burn::backend::Flex;
#[cfg(not(any(feature = "cpu", feature = "candle", feature = "flex")))]
type Inner = burn::backend::NdArray<f32, i64>;
type Seq = Autodiff<Inner>;
type Grouped = Autodiff<Vmap<Inner>>;

const KS: &[usize] = &[1, 2, 4, 8, 16];

fn main() {
    divan::main();
}

fn sequential(bencher: divan::Bencher, model: Model, k: usize) {
    let device = Default::default();
    let (x, y) = batch::<Inner>(model, &device);
    let x = Tensor::from_data(x.into_data(), &device);
    let y = Tensor::from_data(y.into_data(), &device);
    let mut nets: Vec<Net<Seq>> = (0..k).map(|_| Net::new(model, &device)).collect();
    let lrs: Vec<f64> = (0..k).map(|i| 0.01 * (i + 1) as f64).collect();
    bencher.bench_local(|| {
        nets = std::mem::take(&mut nets)
            .into_iter()
            .zip(&lrs)
            .map(|(net, &lr)| train_step(net, x.clone(), y.clone(), Lr::Scalar(lr)))
            .collect();
    });
}

fn grouped(bencher: divan::Bencher, model: Model, k: usize) {
    let inner_device = Default::default();
    let group: Batched<Net<Grouped>> = Batched::init(k, &inner_device, |d| Net::new(model, d)).unwrap();
    let device = group.device();
    // The data batch is shared by all members: built from data, it stays unbatched.
    let (x, y) = batch::<Inner>(model, &inner_device);
    let x = Tensor::from_data(x.into_data(), &device);
    let y = Tensor::from_data(y.into_data(), &device);
    let lrs: Vec<f64> = (0..k).map(|i| 0.01 * (i + 1) as f64).collect();
    let lr = per_member::<Vmap<Inner>>(&lrs, &device).unwrap();
    let mut net = Some(group.into_inner());
    bencher.bench_local(|| {
        let stepped = train_step(net.take().unwrap(), x.clone(), y.clone(), Lr::PerMember(lr.clone()));
        net = Some(stepped);
    });
}

#[divan::bench(args = KS)]
fn mlp_8_16_4_sequential(bencher: divan::Bencher, k: usize) {
    sequential(bencher, Model::Mlp8, k)
}
#[divan::bench(args = KS)]
fn mlp_8_16_4_grouped(bencher: divan::Bencher, k: usize) {
    grouped(bencher, Model::Mlp8, k)
}
#[divan::bench(args = KS)]
fn mlp_784_128_10_sequential(bencher: divan::Bencher, k: usize) {
    sequential(bencher, Model::Mlp784, k)
}
#[divan::bench(args = KS)]
fn mlp_784_128_10_grouped(bencher: divan::Bencher, k: usize) {
    grouped(bencher, Model::Mlp784, k)
}
#[divan::bench(args = KS, sample_count = 20)]
fn cnn_sequential(bencher: divan::Bencher, k: usize) {
    sequential(bencher, Model::Cnn, k)
}
#[divan::bench(args = KS, sample_count = 20)]
fn cnn_grouped(bencher: divan::Bencher, k: usize) {
    grouped(bencher, Model::Cnn, k)
}
