//! The differential op harness: an op applied by `Vmap<NdArray>` to a group of K members must
//! equal the same op applied member by member on `NdArray`, for every combination of batched
//! and unbatched operands.
//!
//! Cases are written with the [`diff!`] macro, named by the op they exercise. A case that passes
//! (every member, K in {1, 3}, every batched/unbatched combination) records its op in the
//! coverage registry ([`record_covered`]); `coverage.rs` runs the differential cases and checks
//! that every op of burn's backend traits was recorded, so an op counts as covered only when a
//! differential comparison through `Vmap` passed for it.

use burn::backend::NdArray;
use burn::tensor::backend::Backend;
use burn::tensor::ops::{
    BoolTensor, BoolTensorOps, FloatTensor, FloatTensorOps, IntTensor, IntTensorOps,
};
use burn::tensor::{Distribution, TensorData, TensorMetadata};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use saturate_vmap::{Vmap, VmapDevice, VmapTensor};

/// The inner backend of the harness.
pub type I = NdArray<f32, i64>;
/// The decorated backend under test.
pub type V = Vmap<I>;

/// How to generate one operand.
#[derive(Clone, Debug)]
pub enum Spec {
    /// Floats uniform in [-2, 2].
    F(Vec<usize>),
    /// Floats uniform in [0.1, 2] (for log, sqrt, ...).
    Fpos(Vec<usize>),
    /// Floats uniform in `[lo, hi)`.
    Frange(Vec<usize>, f32, f32),
    /// Ints uniform in `[lo, hi)`.
    I(Vec<usize>, i64, i64),
    /// Bools, true with probability 1/2.
    B(Vec<usize>),
    /// A fixed float tensor (same for every member when batched).
    Fdata(TensorData),
    /// A fixed int tensor, e.g. a permutation of indices.
    Idata(TensorData),
}

/// An operand or result on backend `X`.
pub enum Val<X: Backend> {
    /// A float tensor.
    F(FloatTensor<X>),
    /// An int tensor.
    I(IntTensor<X>),
    /// A bool tensor.
    B(BoolTensor<X>),
}

impl<X: Backend> Val<X> {
    /// The float tensor (panics for another kind).
    pub fn f(self) -> FloatTensor<X> {
        match self {
            Val::F(t) => t,
            _ => panic!("harness: expected a float operand"),
        }
    }
    /// The int tensor (panics for another kind).
    pub fn i(self) -> IntTensor<X> {
        match self {
            Val::I(t) => t,
            _ => panic!("harness: expected an int operand"),
        }
    }
    /// The bool tensor (panics for another kind).
    pub fn b(self) -> BoolTensor<X> {
        match self {
            Val::B(t) => t,
            _ => panic!("harness: expected a bool operand"),
        }
    }
}

fn gen(spec: &Spec, rng: &mut StdRng, members: Option<usize>) -> TensorData {
    let (shape, lead) = {
        let s = match spec {
            Spec::F(s) | Spec::Fpos(s) | Spec::Frange(s, _, _) | Spec::I(s, _, _) | Spec::B(s) => {
                s.clone()
            }
            Spec::Fdata(d) | Spec::Idata(d) => d.shape.to_vec(),
        };
        match members {
            Some(k) => {
                let mut full = vec![k];
                full.extend(&s);
                (full, k)
            }
            None => (s, 1),
        }
    };
    let n: usize = shape.iter().product();
    match spec {
        Spec::F(_) => TensorData::new(
            (0..n)
                .map(|_| rng.random_range(-2.0f32..2.0))
                .collect::<Vec<_>>(),
            shape,
        ),
        Spec::Fpos(_) => TensorData::new(
            (0..n)
                .map(|_| rng.random_range(0.1f32..2.0))
                .collect::<Vec<_>>(),
            shape,
        ),
        Spec::Frange(_, lo, hi) => TensorData::new(
            (0..n)
                .map(|_| rng.random_range(*lo..*hi))
                .collect::<Vec<_>>(),
            shape,
        ),
        Spec::I(_, lo, hi) => TensorData::new(
            (0..n)
                .map(|_| rng.random_range(*lo..*hi))
                .collect::<Vec<_>>(),
            shape,
        ),
        Spec::B(_) => TensorData::new(
            (0..n).map(|_| rng.random_bool(0.5)).collect::<Vec<_>>(),
            shape,
        ),
        Spec::Fdata(d) => repeat(d.clone().convert::<f32>(), lead, members.is_some(), shape),
        Spec::Idata(d) => repeat(d.clone().convert::<i64>(), lead, members.is_some(), shape),
    }
}

fn repeat(d: TensorData, lead: usize, batched: bool, shape: Vec<usize>) -> TensorData {
    if !batched {
        return d;
    }
    let bytes = d.as_bytes().to_vec();
    let mut all = Vec::with_capacity(bytes.len() * lead);
    for _ in 0..lead {
        all.extend_from_slice(&bytes);
    }
    TensorData::from_bytes_vec(all, shape, d.dtype)
}

/// Slice `m` of a `[K, ...]` TensorData.
pub fn member_slice(data: &TensorData, m: usize) -> TensorData {
    let k = data.shape[0];
    let rest: Vec<usize> = data.shape[1..].to_vec();
    let bytes = data.as_bytes();
    let per = bytes.len() / k;
    TensorData::from_bytes_vec(bytes[m * per..(m + 1) * per].to_vec(), rest, data.dtype)
}

fn to_val<X: Backend>(spec: &Spec, data: TensorData, device: &X::Device) -> Val<X> {
    match spec {
        Spec::F(_) | Spec::Fpos(_) | Spec::Frange(..) | Spec::Fdata(_) => {
            Val::F(X::float_from_data(data, device))
        }
        Spec::I(..) | Spec::Idata(_) => Val::I(X::int_from_data(data, device)),
        Spec::B(_) => Val::B(X::bool_from_data(data, device)),
    }
}

fn wrap(val: Val<I>, batched: bool, members: usize) -> Val<V> {
    let wrap_p = |batched| {
        move |t| {
            if batched {
                vt_batched(t, members)
            } else {
                vt_unbatched(t, members)
            }
        }
    };
    match val {
        Val::F(t) => Val::F(wrap_p(batched)(t)),
        Val::I(t) => Val::I(wrap_p(batched)(t)),
        Val::B(t) => Val::B(wrap_p(batched)(t)),
    }
}

fn vt_batched<P>(inner: P, members: usize) -> VmapTensor<P> {
    saturate_vmap::tensor::from_inner(inner, true, members)
}
fn vt_unbatched<P>(inner: P, members: usize) -> VmapTensor<P> {
    saturate_vmap::tensor::from_inner(inner, false, members)
}

/// Reads a result into (logical shape, per-member data).
fn read_vmap(val: Val<V>, members: usize) -> (Vec<usize>, Vec<TensorData>, bool) {
    fn split(data: TensorData, batched: bool, members: usize) -> Vec<TensorData> {
        if batched {
            (0..members).map(|m| member_slice(&data, m)).collect()
        } else {
            vec![data; members]
        }
    }
    let read = |shape: Vec<usize>, batched: bool, data: TensorData| {
        (shape, split(data, batched, members), batched)
    };
    match val {
        Val::F(t) => {
            assert_eq!(
                t.members(),
                members,
                "result carries the wrong member count"
            );
            let shape = t.shape().to_vec();
            let b = t.is_batched();
            read(shape, b, block(I::float_into_data(t.into_inner())))
        }
        Val::I(t) => {
            assert_eq!(
                t.members(),
                members,
                "result carries the wrong member count"
            );
            let shape = t.shape().to_vec();
            let b = t.is_batched();
            read(shape, b, block(I::int_into_data(t.into_inner())))
        }
        Val::B(t) => {
            assert_eq!(
                t.members(),
                members,
                "result carries the wrong member count"
            );
            let shape = t.shape().to_vec();
            let b = t.is_batched();
            read(shape, b, block(I::bool_into_data(t.into_inner())))
        }
    }
}

fn read_inner(val: Val<I>) -> TensorData {
    match val {
        Val::F(t) => block(I::float_into_data(t)),
        Val::I(t) => block(I::int_into_data(t)),
        Val::B(t) => block(I::bool_into_data(t)),
    }
}

fn block<
    F: core::future::Future<Output = Result<TensorData, burn::tensor::backend::ExecutionError>>,
>(
    f: F,
) -> TensorData {
    burn::tensor::try_read_sync(f)
        .expect("harness: sync read")
        .expect("harness: read")
}

/// Tolerance of a comparison.
#[derive(Clone, Copy, Debug)]
pub enum Tol {
    /// Bit-for-bit equality (ints, bools, exact float ops).
    Exact,
    /// `|a - b| <= atol` elementwise.
    Abs(f32),
    /// `|a - b| <= atol + rtol * |b|` elementwise (`b` the inner backend's value).
    Rel(f32, f32),
}

/// Runs one op for every batched/unbatched combination of `specs` and K in {1, 3}.
///
/// `vm` and `inner` are the same op instantiated on `Vmap<NdArray>` and `NdArray`.
pub fn check(
    name: &str,
    specs: &[Spec],
    tol: Tol,
    vm: &dyn Fn(Vec<Val<V>>) -> Vec<Val<V>>,
    inner: &dyn Fn(Vec<Val<I>>) -> Vec<Val<I>>,
) {
    check_with(name, specs, tol, None, vm, inner)
}

/// Like [`check`], with the batched/unbatched combinations limited to `only` (a list of
/// per-operand flags), for ops whose contract restricts them.
pub fn check_with(
    name: &str,
    specs: &[Spec],
    tol: Tol,
    only: Option<&[&[bool]]>,
    vm: &dyn Fn(Vec<Val<V>>) -> Vec<Val<V>>,
    inner: &dyn Fn(Vec<Val<I>>) -> Vec<Val<I>>,
) {
    let device = Default::default();
    let n = specs.len();
    for members in [1usize, 3] {
        for mask in 0..(1u32 << n) {
            let flags: Vec<bool> = (0..n).map(|j| mask & (1 << j) != 0).collect();
            if let Some(only) = only {
                if !only.contains(&flags.as_slice()) {
                    continue;
                }
            }
            let mut rng = StdRng::seed_from_u64(0x5eed ^ mask as u64 ^ ((members as u64) << 8));
            let datas: Vec<TensorData> = specs
                .iter()
                .zip(&flags)
                .map(|(s, &b)| gen(s, &mut rng, b.then_some(members)))
                .collect();
            let vdev = VmapDevice::<I>::new(device, members);
            let vargs: Vec<Val<V>> = specs
                .iter()
                .zip(&datas)
                .zip(&flags)
                .map(|((s, d), &b)| wrap(to_val::<I>(s, d.clone(), &device), b, members))
                .collect();
            let _ = &vdev;
            let outs = vm(vargs);
            let outs: Vec<_> = outs.into_iter().map(|o| read_vmap(o, members)).collect();
            for m in 0..members {
                let args: Vec<Val<I>> = specs
                    .iter()
                    .zip(&datas)
                    .zip(&flags)
                    .map(|((s, d), &b)| {
                        let d = if b { member_slice(d, m) } else { d.clone() };
                        to_val::<I>(s, d, &device)
                    })
                    .collect();
                let refs = inner(args);
                assert_eq!(refs.len(), outs.len(), "{name}: number of outputs");
                for (o, (r, (shape, got, _))) in refs.into_iter().zip(&outs).enumerate() {
                    let want = read_inner(r);
                    let ctx = format!(
                        "{name} output {o}, K={members}, batched operands {flags:?}, member {m}"
                    );
                    assert_eq!(shape.as_slice(), &want.shape[..], "{ctx}: logical shape");
                    compare(&got[m], &want, tol, &ctx);
                }
            }
        }
    }
    record_covered(name);
}

/// The environment variable naming the coverage registry: a file to which every passing
/// differential case appends its op name, one per line (set by `coverage.rs` for the run of the
/// differential cases it starts; unset, nothing is recorded).
pub const COVERAGE_OUT: &str = "SATURATE_VMAP_COVERAGE_OUT";

/// Records that op `name` passed a differential comparison through `Vmap` (called by
/// [`check_with`] after its last comparison; tests that compare `Vmap` with the inner backend
/// by other means call it after their assertions).
pub fn record_covered(name: &str) {
    use std::io::Write;
    let Ok(path) = std::env::var(COVERAGE_OUT) else {
        return;
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("harness: open the coverage registry {path}: {e}"));
    // One short line per write: appends from parallel tests do not interleave.
    file.write_all(format!("{name}\n").as_bytes())
        .unwrap_or_else(|e| panic!("harness: write the coverage registry {path}: {e}"));
}

/// Records that op `name`, which has no member-by-member reference (random draws, `empty`),
/// passed its property checks (logical shape, member count, independent members).
pub fn record_property_checked(name: &str) {
    record_covered(&format!("property {name}"));
}

fn compare(got: &TensorData, want: &TensorData, tol: Tol, ctx: &str) {
    assert_eq!(got.shape, want.shape, "{ctx}: shape");
    assert_eq!(got.dtype, want.dtype, "{ctx}: dtype");
    match (tol, want.dtype) {
        (Tol::Rel(atol, rtol), burn::tensor::DType::F32) => {
            let g = got.as_slice::<f32>().unwrap();
            let w = want.as_slice::<f32>().unwrap();
            for (i, (a, b)) in g.iter().zip(w).enumerate() {
                let ok = (a - b).abs() <= atol + rtol * b.abs() || (a.is_nan() && b.is_nan());
                assert!(
                    ok,
                    "{ctx}: element {i}: got {a}, want {b} (atol {atol}, rtol {rtol})"
                );
            }
        }
        (Tol::Abs(atol), burn::tensor::DType::F32) => {
            let g = got.as_slice::<f32>().unwrap();
            let w = want.as_slice::<f32>().unwrap();
            for (i, (a, b)) in g.iter().zip(w).enumerate() {
                let ok = (a - b).abs() <= atol || (a.is_nan() && b.is_nan()) || a == b;
                assert!(ok, "{ctx}: element {i}: got {a}, want {b} (atol {atol})");
            }
        }
        _ => assert_eq!(
            got.as_bytes(),
            want.as_bytes(),
            "{ctx}: values differ\n got {got:?}\nwant {want:?}"
        ),
    }
}

/// Random values through a distribution on the group device: used by random-op tests.
pub fn random_on_group(
    members: usize,
    shape: Vec<usize>,
) -> VmapTensor<<I as burn::tensor::backend::BackendTypes>::FloatTensorPrimitive> {
    let device = VmapDevice::<I>::new(Default::default(), members);
    V::float_random(
        shape.into(),
        Distribution::Default,
        &device,
        burn::tensor::FloatDType::F32,
    )
}

/// Declares a differential case. The body is written once and instantiated on both backends:
///
/// ```ignore
/// diff!("float_add", [F(vec![2, 3]), F(vec![2, 3])], Tol::Exact, |X, a, b| {
///     vec![Val::F(X::float_add(a.f(), b.f()))]
/// });
/// ```
#[macro_export]
macro_rules! diff {
    ($name:expr, [$($spec:expr),* $(,)?], $tol:expr, |$x:ident $(, $arg:ident)*| $body:expr) => {
        $crate::diff!(@only $name, [$($spec),*], $tol, None, |$x $(, $arg)*| $body)
    };
    (@only $name:expr, [$($spec:expr),* $(,)?], $tol:expr, $only:expr, |$x:ident $(, $arg:ident)*| $body:expr) => {{
        #[allow(unused_mut, unused_variables, non_snake_case)]
        fn op<$x: burn::tensor::backend::Backend>(args: Vec<$crate::harness::Val<$x>>) -> Vec<$crate::harness::Val<$x>> {
            let mut it = args.into_iter();
            $(let $arg = it.next().expect("harness: too few operands");)*
            $body
        }
        #[allow(unused_imports)]
        use $crate::harness::Spec::*;
        $crate::harness::check_with($name, &[$($spec),*], $tol, $only, &op::<$crate::harness::V>, &op::<$crate::harness::I>);
    }};
}
