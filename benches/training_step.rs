//! One training step (forward, backward, per-member SGD) of K models: as one `Batched` group
//! on `Autodiff<Vmap<NdArray>>` vs K separate models on `Autodiff<NdArray>` stepped one after
//! another.
//!
//! Run: `cargo bench --bench training_step` (tables in book/src/benchmarks.md). The inner backend
//! is NdArray unless a backend feature picks another: `--features flex`, `candle` or `cpu`
//! (`openblas-system` / `blas-netlib` switch NdArray's matrix product to a BLAS); `--features cuda`
//! puts every other backend aside and runs on CUDA (scripts/gpu-check.sh, book/src/gpu.md), then
//! `wgpu` (any Vulkan, Metal or DX12 GPU, or lavapipe), then `tch` (LibTorch).

mod common;

use burn::backend::Autodiff;
use burn::tensor::backend::Backend;
use burn::tensor::Tensor;
use common::{batch, train_step, Lr, Model, Net};
use saturate::vmap::{per_member, set_conv_lowering, Batched, ConvLowering, Vmap};

#[cfg(feature = "cuda")]
type Inner = burn::backend::Cuda;
#[cfg(all(feature = "wgpu", not(feature = "cuda")))]
type Inner = burn::backend::Wgpu;
#[cfg(all(feature = "tch", not(any(feature = "cuda", feature = "wgpu"))))]
type Inner = burn::backend::LibTorch;
#[cfg(all(
    feature = "cpu",
    not(any(feature = "cuda", feature = "wgpu", feature = "tch"))
))]
type Inner = burn::backend::Cpu;
#[cfg(all(
    feature = "candle",
    not(any(feature = "cuda", feature = "wgpu", feature = "tch", feature = "cpu"))
))]
type Inner = burn::backend::Candle;
#[cfg(all(
    feature = "flex",
    not(any(
        feature = "cuda",
        feature = "wgpu",
        feature = "tch",
        feature = "cpu",
        feature = "candle"
    ))
))]
type Inner = burn::backend::Flex;
#[cfg(not(any(
    feature = "cuda",
    feature = "wgpu",
    feature = "tch",
    feature = "cpu",
    feature = "candle",
    feature = "flex"
)))]
type Inner = burn::backend::NdArray<f32, i64>;
type Seq = Autodiff<Inner>;
type Grouped = Autodiff<Vmap<Inner>>;

const KS: &[usize] = &[1, 2, 4, 8, 16];

/// `SATURATE_CONV_LOWERING=<gemm|inner|host>` chooses how the grouped arms compute convolutions
/// (`saturate::vmap::ConvLowering`; unset, the inner backend's default: the host kernels on
/// NdArray, the backend's own grouped convolution elsewhere). The bench applies `saturate::malloc::tune` first, like
/// the examples; `SATURATE_MALLOC=system` measures glibc's defaults. On NdArray `main` then
/// joins rayon's pool (`saturate::vmap::join_host_pool`) for both arms, as `run_trainer` does;
/// `SATURATE_HOST_POOL=off` measures without.
///
/// `SATURATE_PROFILE=<grouped|sequential>,<mlp8|mlp784|cnn|transformer>,<K>,<steps>` runs that many steps
/// of one arm without divan, for `perf record` / `perf stat` and scripts/gpu-check.sh. One
/// untimed first step goes before them (on CUDA it compiles and autotunes the kernels), and the
/// device is synchronised before the clock stops, so queued GPU work is counted.
fn main() {
    // saturate's allocator settings, as in the examples (`SATURATE_MALLOC=system` skips them).
    let tuned = saturate::malloc::tune();
    eprintln!("malloc: {}", if tuned { "tuned" } else { "system" });
    if let Ok(name) = std::env::var("SATURATE_CONV_LOWERING") {
        let lowering: ConvLowering = name
            .parse()
            .unwrap_or_else(|e| panic!("SATURATE_CONV_LOWERING: {e}"));
        set_conv_lowering::<Inner>(lowering);
    }
    // Both arms run with `main` as a worker of rayon's pool, as `run_trainer` and the
    // examples do (plain Burn programs can do the same); SATURATE_HOST_POOL=off measures
    // NdArray's loops handing their work to the pool from outside.
    if std::env::var("SATURATE_HOST_POOL").is_ok_and(|v| v == "off") {
        eprintln!("host pool: main outside rayon's pool");
    } else {
        match saturate::vmap::join_host_pool_for::<Inner>() {
            Some(Ok(threads)) => {
                eprintln!("host pool: main joined rayon's pool ({threads} threads)")
            }
            Some(Err(e)) => eprintln!("host pool: {e}"),
            None => {}
        }
    }
    if let Ok(spec) = std::env::var("SATURATE_PROFILE") {
        return profile(&spec);
    }
    divan::main();
}

fn profile(spec: &str) {
    let parts: Vec<&str> = spec.split(',').collect();
    let [arm, model, k, steps] = parts[..] else {
        panic!("SATURATE_PROFILE=<grouped|sequential>,<mlp8|mlp784|cnn|transformer>,<K>,<steps>");
    };
    let model = match model {
        "mlp8" => Model::Mlp8,
        "mlp784" => Model::Mlp784,
        "cnn" => Model::Cnn,
        "transformer" => Model::Transformer,
        other => panic!("unknown model {other}"),
    };
    let (k, steps): (usize, usize) = (k.parse().unwrap(), steps.parse().unwrap());
    let sync = || Inner::sync(&Default::default()).expect("the device finishes its work");
    let bencher_steps = |f: &mut dyn FnMut()| {
        let start = std::time::Instant::now();
        f();
        sync();
        println!("{arm} {model:?} K={k}: first step {:?}", start.elapsed());
        let start = std::time::Instant::now();
        for _ in 0..steps {
            f();
        }
        sync();
        let per = start.elapsed() / steps as u32;
        println!("{arm} {model:?} K={k}: {per:?} per step (mean of {steps})");
        if let Some(bytes) = device_memory() {
            println!(
                "{arm} {model:?} K={k}: device memory {:.1} MiB",
                bytes as f64 / (1024.0 * 1024.0)
            );
        }
    };
    match arm {
        "grouped" => {
            let (mut net, x, y, lr) = grouped_setup(model, k);
            bencher_steps(&mut || {
                net = Some(train_step(
                    net.take().unwrap(),
                    x.clone(),
                    y.clone(),
                    Lr::PerMember(lr.clone()),
                ));
            });
        }
        _ => {
            let (mut nets, x, y, lrs) = sequential_setup(model, k);
            bencher_steps(&mut || {
                nets = std::mem::take(&mut nets)
                    .into_iter()
                    .zip(&lrs)
                    .map(|(net, &lr)| train_step(net, x.clone(), y.clone(), Lr::Scalar(lr)))
                    .collect();
            });
        }
    }
}

/// With wgpu: the device memory CubeCL's pools hold (they keep the pages the steps' peak
/// needed); on lavapipe the process's resident memory is mostly the driver's shader compiler.
#[cfg(all(feature = "wgpu", not(feature = "cuda")))]
fn device_memory() -> Option<u64> {
    use cubecl::Runtime;
    burn::backend::wgpu::WgpuRuntime::client(&Default::default())
        .memory_usage()
        .ok()
        .map(|usage| usage.bytes_reserved)
}

/// Other backends: none here (NVML and resident memory are measured outside the bench).
#[cfg(not(all(feature = "wgpu", not(feature = "cuda"))))]
fn device_memory() -> Option<u64> {
    None
}

type SequentialSetup = (
    Vec<Net<Seq>>,
    Tensor<Seq, 2>,
    Tensor<Seq, 1, burn::tensor::Int>,
    Vec<f64>,
);

fn sequential_setup(model: Model, k: usize) -> SequentialSetup {
    let device = Default::default();
    let (x, y) = batch::<Inner>(model, &device);
    let x = Tensor::from_data(x.into_data(), &device);
    let y = Tensor::from_data(y.into_data(), &device);
    let nets: Vec<Net<Seq>> = (0..k).map(|_| Net::new(model, &device)).collect();
    let lrs: Vec<f64> = (0..k).map(|i| 0.01 * (i + 1) as f64).collect();
    (nets, x, y, lrs)
}

fn sequential(bencher: divan::Bencher, model: Model, k: usize) {
    let (mut nets, x, y, lrs) = sequential_setup(model, k);
    bencher.bench_local(|| {
        nets = std::mem::take(&mut nets)
            .into_iter()
            .zip(&lrs)
            .map(|(net, &lr)| train_step(net, x.clone(), y.clone(), Lr::Scalar(lr)))
            .collect();
    });
}

type GroupedSetup = (
    Option<Net<Grouped>>,
    Tensor<Grouped, 2>,
    Tensor<Grouped, 1, burn::tensor::Int>,
    Tensor<Vmap<Inner>, 1>,
);

fn grouped_setup(model: Model, k: usize) -> GroupedSetup {
    let inner_device = Default::default();
    let group: Batched<Net<Grouped>> =
        Batched::init(k, &inner_device, |d| Net::new(model, d)).unwrap();
    let device = group.device();
    // The data batch is shared by all members: built from data, it stays unbatched.
    let (x, y) = batch::<Inner>(model, &inner_device);
    let x = Tensor::from_data(x.into_data(), &device);
    let y = Tensor::from_data(y.into_data(), &device);
    let lrs: Vec<f64> = (0..k).map(|i| 0.01 * (i + 1) as f64).collect();
    let lr = per_member::<Vmap<Inner>>(&lrs, &device).unwrap();
    (Some(group.into_inner()), x, y, lr)
}

fn grouped(bencher: divan::Bencher, model: Model, k: usize) {
    let (mut net, x, y, lr) = grouped_setup(model, k);
    bencher.bench_local(|| {
        let stepped = train_step(
            net.take().unwrap(),
            x.clone(),
            y.clone(),
            Lr::PerMember(lr.clone()),
        );
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
#[divan::bench(args = KS, sample_count = 3, sample_size = 1)]
fn cnn_sequential(bencher: divan::Bencher, k: usize) {
    sequential(bencher, Model::Cnn, k)
}
// 10 samples: the grouped step is short enough for a steadier median than the sequential
// arm's 3 (a plain-Burn CNN step of K = 16 takes about 12 s).
#[divan::bench(args = KS, sample_count = 10, sample_size = 1)]
fn cnn_grouped(bencher: divan::Bencher, k: usize) {
    grouped(bencher, Model::Cnn, k)
}
#[divan::bench(args = KS, sample_count = 3, sample_size = 1)]
fn transformer_sequential(bencher: divan::Bencher, k: usize) {
    sequential(bencher, Model::Transformer, k)
}
#[divan::bench(args = KS, sample_count = 10, sample_size = 1)]
fn transformer_grouped(bencher: divan::Bencher, k: usize) {
    grouped(bencher, Model::Transformer, k)
}
