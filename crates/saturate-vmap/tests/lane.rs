//! Ops with a vector/scalar split in the inner backend: a member of a group must get, bit for
//! bit, what the same op gives the member's own tensor, wherever its elements fall in the
//! group's buffer (burn-ndarray's SIMD layer vectorises buffers of 32+ elements, with a scalar
//! head and tail; its `recip` is a hardware estimate in the vector lanes, which is why Vmap
//! never relies on an approximate inner `recip`: `ops::reciprocal`).
//!
//! The shapes are chosen so that members straddle the vector/tail boundary differently in the
//! `[K, ...]` group buffer than in their own: members shorter than the 32-element SIMD threshold
//! in groups longer than it, and lengths that are not multiples of any vector width.

use burn::backend::NdArray;
use burn::tensor::ops::{ActivationOps, FloatTensor, FloatTensorOps};
use burn::tensor::{Tensor, TensorData, TensorPrimitive};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use saturate_vmap::tensor::from_inner;
use saturate_vmap::{member_data, Vmap};

type I = NdArray<f32, i64>;
type V = Vmap<I>;

/// The SIMD level burn-ndarray's vector paths use on this machine.
fn simd_level() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return "AVX-512";
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return "AVX2";
        }
        "SSE"
    }
    #[cfg(target_arch = "aarch64")]
    {
        "NEON"
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        "none"
    }
}

/// Names the SIMD level in the test log (scripts/test.sh runs this test with `--nocapture`)
/// and pins what the tests below rely on: the workspace builds burn-ndarray without `simd`, so
/// its reciprocal is the correctly rounded `1 / x` for every element of a buffer long enough to
/// be vectorised (with `simd` it is a hardware estimate there: the premise of issue 8).
#[test]
fn simd_level_and_exact_ndarray_reciprocal() {
    let values: Vec<f32> = (0..67).map(|i| 1.0 + i as f32 / 7.0 + 1.0 / 3.0).collect();
    let device = Default::default();
    let whole = Tensor::<I, 1>::from_data(TensorData::new(values.clone(), [values.len()]), &device)
        .recip()
        .into_data()
        .to_vec::<f32>()
        .unwrap();
    let inexact = values
        .iter()
        .zip(&whole)
        .filter(|(x, r)| (1.0 / **x).to_bits() != r.to_bits())
        .count();
    eprintln!(
        "SIMD level of this CPU: {}; NdArray recip of a 67-element buffer: {inexact} of 67 \
         elements differ from 1 / x",
        simd_level()
    );
    assert_eq!(
        inexact, 0,
        "NdArray's recip is approximate in this build: was burn-ndarray's `simd` feature turned \
         on? (workspace Cargo.toml)"
    );
}

/// Random positive values (safe for reciprocals and negative powers).
fn data(rng: &mut StdRng, shape: &[usize]) -> Vec<f32> {
    (0..shape.iter().product::<usize>())
        .map(|_| rng.random_range(0.3f32..2.0))
        .collect()
}

fn inner_tensor(values: Vec<f32>, shape: &[usize]) -> FloatTensor<I> {
    I::float_from_data(TensorData::new(values, shape.to_vec()), &Default::default())
}

fn read_inner(t: FloatTensor<I>) -> Vec<f32> {
    Tensor::<I, 2>::from_primitive(TensorPrimitive::Float(t))
        .into_data()
        .to_vec::<f32>()
        .unwrap()
}

/// One op, on primitives of either backend.
type Op<X> = fn(FloatTensor<X>, FloatTensor<X>) -> FloatTensor<X>;

macro_rules! ops {
    ($($name:literal => |$x:ident, $y:ident| $body:expr),* $(,)?) => {
        fn ops_vmap() -> Vec<(&'static str, Op<V>)> {
            vec![$(($name, |$x: FloatTensor<V>, $y: FloatTensor<V>| { let _ = &$y; type X = V; $body })),*]
        }
        fn ops_inner() -> Vec<(&'static str, Op<I>)> {
            vec![$(($name, |$x: FloatTensor<I>, $y: FloatTensor<I>| { let _ = &$y; type X = I; $body })),*]
        }
    };
}

// Every float op with a vector/scalar split in burn-ndarray 0.21's SIMD layer, and the composite
// ops whose inner body reaches `float_recip`.
ops! {
    "recip" => |x, y| X::float_recip(x),
    "powi_scalar(-1)" => |x, y| X::float_powi_scalar(x, (-1i64).into()),
    "powi_scalar(-2)" => |x, y| X::float_powi_scalar(x, (-2i64).into()),
    "powf_scalar(-1.0)" => |x, y| X::float_powf_scalar(x, (-1.0f64).into()),
    "powf_scalar(-2.0)" => |x, y| X::float_powf_scalar(x, (-2.0f64).into()),
    "powf_scalar(0.5)" => |x, y| X::float_powf_scalar(x, 0.5f64.into()),
    "log_sigmoid_backward" => |x, y| X::log_sigmoid_backward(x, y),
    "abs" => |x, y| X::float_abs(x),
    "neg" => |x, y| X::float_neg(x),
    "add" => |x, y| X::float_add(x, y),
    "sub" => |x, y| X::float_sub(x, y),
    "mul" => |x, y| X::float_mul(x, y),
    "div" => |x, y| X::float_div(x, y),
    "clamp_min" => |x, y| X::float_clamp_min(x, 0.9f64.into()),
    "clamp_max" => |x, y| X::float_clamp_max(x, 0.9f64.into()),
    "add_scalar" => |x, y| X::float_add_scalar(x, 0.7f64.into()),
    "mul_scalar" => |x, y| X::float_mul_scalar(x, 1.3f64.into()),
    "div_scalar" => |x, y| X::float_div_scalar(x, 3.0f64.into()),
    "clamp" => |x, y| X::float_clamp(x, 0.5f64.into(), 1.5f64.into()),
}

/// `[rows, n]` per member: shorter and longer than the SIMD threshold, odd lengths.
const MEMBER_SHAPES: [[usize; 2]; 7] =
    [[1, 5], [1, 13], [2, 7], [1, 31], [1, 37], [3, 11], [1, 67]];

#[test]
fn members_match_their_own_tensor_bit_for_bit() {
    let mut rng = StdRng::seed_from_u64(0x1a4e);
    let mut failures = Vec::new();
    for ((name, op_vmap), (_, op_inner)) in ops_vmap().into_iter().zip(ops_inner()) {
        for shape in MEMBER_SHAPES {
            for members in [2usize, 3, 8] {
                let mut group_shape = vec![members];
                group_shape.extend(shape);
                // Both operands batched, and the second one shared (unbatched).
                for second_batched in [true, false] {
                    let x = data(&mut rng, &group_shape);
                    let y = if second_batched {
                        data(&mut rng, &group_shape)
                    } else {
                        data(&mut rng, &shape)
                    };
                    let vx = from_inner(inner_tensor(x.clone(), &group_shape), true, members);
                    let vy = if second_batched {
                        from_inner(inner_tensor(y.clone(), &group_shape), true, members)
                    } else {
                        from_inner(inner_tensor(y.clone(), &shape), false, members)
                    };
                    let group = member_data(Tensor::<V, 2>::from_primitive(
                        TensorPrimitive::Float(op_vmap(vx, vy)),
                    ));
                    let size = shape[0] * shape[1];
                    for (m, got) in group.iter().enumerate() {
                        let xm = x[m * size..(m + 1) * size].to_vec();
                        let ym = if second_batched {
                            y[m * size..(m + 1) * size].to_vec()
                        } else {
                            y.clone()
                        };
                        let want = read_inner(op_inner(
                            inner_tensor(xm, &shape),
                            inner_tensor(ym, &shape),
                        ));
                        let got = got.to_vec::<f32>().unwrap();
                        if let Some(i) = (0..size).find(|&i| got[i].to_bits() != want[i].to_bits())
                        {
                            failures.push(format!(
                                "{name}: K={members}, member shape {shape:?}, second operand \
                                 batched {second_batched}, member {m}: element {i}: got {}, \
                                 alone {}",
                                got[i], want[i]
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} member results differ from the member alone ({}):\n{}",
        failures.len(),
        simd_level(),
        failures.join("\n")
    );
}

/// The gradient of a division reaches `recip` through autodiff (d(x / y)/dy = -x / y^2 with
/// `1 / y` from `float_recip`): a group's gradient equals each member's own, bit for bit.
#[test]
fn division_gradient_matches_member_alone_bit_for_bit() {
    use burn::backend::Autodiff;
    type A = Autodiff<V>;
    type AI = Autodiff<I>;
    let members = 3;
    let shape = [2usize, 9];
    let mut rng = StdRng::seed_from_u64(7);
    let x = data(&mut rng, &[members, shape[0], shape[1]]);
    let y = data(&mut rng, &[members, shape[0], shape[1]]);
    let batched = |v: &Vec<f32>| -> Tensor<A, 2> {
        let inner = inner_tensor(v.clone(), &[members, shape[0], shape[1]]);
        Tensor::from_inner(Tensor::<V, 2>::from_primitive(TensorPrimitive::Float(
            from_inner(inner, true, members),
        )))
    };
    let (gx, gy) = (batched(&x), batched(&y).require_grad());
    let grads = (gx / gy.clone()).sum().backward();
    let group = member_data(gy.grad(&grads).unwrap());
    let size = shape[0] * shape[1];
    for (m, got) in group.iter().enumerate() {
        let d = Default::default();
        let xm = Tensor::<AI, 2>::from_data(
            TensorData::new(x[m * size..(m + 1) * size].to_vec(), shape),
            &d,
        );
        let ym = Tensor::<AI, 2>::from_data(
            TensorData::new(y[m * size..(m + 1) * size].to_vec(), shape),
            &d,
        )
        .require_grad();
        let grads = (xm / ym.clone()).sum().backward();
        let want = ym
            .grad(&grads)
            .unwrap()
            .into_data()
            .to_vec::<f32>()
            .unwrap();
        let got = got.to_vec::<f32>().unwrap();
        for i in 0..size {
            assert_eq!(
                got[i].to_bits(),
                want[i].to_bits(),
                "member {m}, element {i}: got {}, alone {} ({})",
                got[i],
                want[i],
                simd_level()
            );
        }
    }
}
