//! Reciprocals that are exact whatever the inner backend's `recip` does.
//!
//! burn-ndarray with its `simd` feature computes `recip` with the hardware estimate
//! (`_mm256_rcp_ps`, about 12 bits, on AVX2; `_mm512_rcp14_ps`, about 14 bits, on AVX-512; an
//! estimate on NEON) for buffers of 32 elements or more, and an exact `1 / x` for shorter
//! buffers and for the scalar head and tail of its vectorised loop. Which elements take which
//! path depends on the buffer's length and, when it works in place, on its address (the loop is
//! aligned to the vector size). A member's elements sit elsewhere in a `[K, ...]` group buffer
//! than in the member's own tensor, so the group and the member alone would disagree by up to
//! the estimate's error (3.7e-4 relative on AVX2), and plain burn-ndarray itself can disagree
//! with itself between runs, since its buffers' addresses vary.
//!
//! So where the inner backend's reciprocal is approximate, `Vmap` does not use it: it divides
//! (`1 / x` by `float_div`, which every backend computes exactly, element by element, in its
//! vector and scalar paths alike). Whether it is approximate is probed once per backend type
//! ([`recip_is_approximate`]); exact backends (burn-ndarray without `simd`, saturate's default;
//! CUDA; flex) keep their own `recip` and pay nothing.
//!
//! The ops routed here are every op whose inner body reaches `float_recip` (burn-backend 0.21,
//! pinned): `float_recip`, `float_powi_scalar` / `float_powf_scalar` with exponent -1 or -2
//! (burn's default body turns them into `recip`) and `log_sigmoid_backward` (burn's default body
//! divides through `recip`). Autodiff's own uses of `recip` (the gradients of `div`, `sqrt`,
//! `log`, the inverse trigonometric functions...) call `Vmap`'s `float_recip`, so they are exact
//! too.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use burn::tensor::{Tensor, TensorData};
use burn_backend::tensor::FloatTensor;
use burn_backend::{get_device_settings, Backend, Scalar, TensorMetadata};

/// Buffer length of the probe: above burn-ndarray's 32-element SIMD threshold, with a scalar
/// tail for every vector width (4, 8 and 16 lanes).
const PROBE_LEN: usize = 67;

/// Whether `B::float_recip` is approximate (differs from the correctly rounded `1 / x` for some
/// element of a buffer long enough to be vectorised). Probed once per backend type.
pub(crate) fn recip_is_approximate<B: Backend>(device: &B::Device) -> bool {
    static KNOWN: OnceLock<Mutex<HashMap<TypeId, bool>>> = OnceLock::new();
    let known = KNOWN.get_or_init(Default::default);
    let key = TypeId::of::<B>();
    if let Some(&approximate) = known.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return approximate;
    }
    let approximate = probe::<B>(device);
    known
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, approximate);
    approximate
}

fn probe<B: Backend>(device: &B::Device) -> bool {
    // Not powers of two: a hardware estimate is exact only there.
    let values: Vec<f32> = (0..PROBE_LEN)
        .map(|i| 1.0 + i as f32 / 7.0 + 1.0 / 3.0)
        .collect();
    let input = Tensor::<B, 1>::from_data(TensorData::new(values.clone(), [PROBE_LEN]), device);
    let Ok(output) = input.recip().into_data().convert::<f32>().to_vec::<f32>() else {
        return true;
    };
    values
        .iter()
        .zip(output)
        .any(|(x, r)| (1.0 / x).to_bits() != r.to_bits())
}

/// `1 / x`, exactly.
pub(crate) fn exact_recip<B: Backend>(x: FloatTensor<B>) -> FloatTensor<B> {
    let ones = B::float_ones(x.shape(), &B::float_device(&x), x.dtype().into());
    B::float_div(ones, x)
}

/// The inner `float_recip`, or the exact division where that is approximate.
pub(crate) fn recip<B: Backend>(x: FloatTensor<B>) -> FloatTensor<B> {
    if recip_is_approximate::<B>(&B::float_device(&x)) {
        exact_recip::<B>(x)
    } else {
        B::float_recip(x)
    }
}

/// The inner `float_powi_scalar`, with burn's reciprocal cases (-1, -2) made exact.
pub(crate) fn powi_scalar<B: Backend>(x: FloatTensor<B>, exponent: Scalar) -> FloatTensor<B> {
    match reciprocal_power(exponent) {
        Some(power) if recip_is_approximate::<B>(&B::float_device(&x)) => {
            exact_power::<B>(x, power)
        }
        _ => B::float_powi_scalar(x, exponent),
    }
}

/// The inner `float_powf_scalar`, with burn's reciprocal cases (-1, -2) made exact.
pub(crate) fn powf_scalar<B: Backend>(x: FloatTensor<B>, exponent: Scalar) -> FloatTensor<B> {
    match reciprocal_power(exponent) {
        Some(power) if recip_is_approximate::<B>(&B::float_device(&x)) => {
            exact_power::<B>(x, power)
        }
        _ => B::float_powf_scalar(x, exponent),
    }
}

/// -1 or -2: the exponents burn's default `float_powi_scalar` computes through `recip`.
fn reciprocal_power(exponent: Scalar) -> Option<i32> {
    let exponent: f64 = exponent.elem();
    if exponent == -1.0 {
        Some(-1)
    } else if exponent == -2.0 {
        Some(-2)
    } else {
        None
    }
}

/// `x^power` for power -1 or -2, as burn's default body computes it but with an exact `recip`.
fn exact_power<B: Backend>(x: FloatTensor<B>, power: i32) -> FloatTensor<B> {
    if power == -1 {
        exact_recip::<B>(x)
    } else {
        exact_recip::<B>(B::float_mul(x.clone(), x))
    }
}

/// The inner `log_sigmoid_backward`, or, where the inner `recip` is approximate, burn's default
/// body (burn-backend 0.21 `ActivationOps::log_sigmoid_backward`) with an exact `recip`.
pub(crate) fn log_sigmoid_backward<B: Backend>(
    x: FloatTensor<B>,
    grad: FloatTensor<B>,
) -> FloatTensor<B> {
    if recip_is_approximate::<B>(&B::float_device(&x)) {
        exact_log_sigmoid_backward::<B>(x, grad)
    } else {
        B::log_sigmoid_backward(x, grad)
    }
}

/// burn's default `log_sigmoid_backward` body with an exact `recip`.
fn exact_log_sigmoid_backward<B: Backend>(
    x: FloatTensor<B>,
    grad: FloatTensor<B>,
) -> FloatTensor<B> {
    let device = B::float_device(&x);
    let shape = x.shape();
    let dtype = x.dtype();
    let bool_dtype = get_device_settings::<B>(&device).bool_dtype;
    // max(-x, 0)
    let x_neg = B::float_neg(x);
    let mask = B::float_lower_elem(x_neg.clone(), 0f32.into(), bool_dtype);
    let max_elem = B::float_mask_fill(x_neg.clone(), mask.clone(), 0f32.into());
    // z = exp(-max(-x, 0)) + exp(-x - max(-x, 0))
    let z = B::float_add(
        B::float_exp(B::float_neg(max_elem.clone())),
        B::float_exp(B::float_sub(x_neg, max_elem)),
    );
    let ones = B::float_ones(shape, &device, dtype.into());
    let max_derive = B::float_mask_fill(ones.clone(), mask.clone(), 0f32.into());
    let sign = B::float_mask_fill(ones.clone(), mask, (-1f32).into());
    // grad * (max_derive - sign * (1 - (1 / z)))
    B::float_mul(
        grad,
        B::float_sub(
            max_derive,
            B::float_mul(sign, B::float_sub(ones, exact_recip::<B>(z))),
        ),
    )
}

#[cfg(test)]
mod tests {
    //! The exact formulations, checked bit for bit on NdArray as this workspace builds it
    //! (without `simd`: its own `recip` is the correctly rounded `1 / x`), so that they are
    //! right on a machine whose NdArray is approximate.

    use burn::backend::NdArray;
    use burn::tensor::ops::{ActivationOps, FloatTensorOps};

    use super::*;

    type I = NdArray<f32>;

    fn tensor(values: &[f32]) -> FloatTensor<I> {
        I::float_from_data(
            TensorData::new(values.to_vec(), [values.len()]),
            &Default::default(),
        )
    }

    fn read(t: FloatTensor<I>) -> Vec<u32> {
        Tensor::<I, 1>::from_primitive(burn::tensor::TensorPrimitive::Float(t))
            .into_data()
            .to_vec::<f32>()
            .unwrap()
            .into_iter()
            .map(f32::to_bits)
            .collect()
    }

    fn values() -> Vec<f32> {
        (0..PROBE_LEN)
            .map(|i| (i as f32 - 33.0) / 4.7 + 0.01)
            .collect()
    }

    #[test]
    fn this_workspace_builds_an_exact_ndarray() {
        assert!(
            !recip_is_approximate::<I>(&Default::default()),
            "NdArray's recip is approximate in this build: was burn-ndarray's `simd` feature \
             turned on? (see the workspace Cargo.toml)"
        );
    }

    #[test]
    fn exact_recip_is_the_correctly_rounded_reciprocal() {
        let want: Vec<u32> = values().iter().map(|x| (1.0 / x).to_bits()).collect();
        assert_eq!(read(exact_recip::<I>(tensor(&values()))), want);
    }

    #[test]
    fn exact_powers_equal_burns_default_bodies() {
        for power in [-1, -2] {
            let want = read(I::float_powi_scalar(
                tensor(&values()),
                (power as i64).into(),
            ));
            assert_eq!(
                read(exact_power::<I>(tensor(&values()), power)),
                want,
                "power {power}"
            );
        }
        assert_eq!(reciprocal_power((-1i64).into()), Some(-1));
        assert_eq!(reciprocal_power((-2.0f64).into()), Some(-2));
        assert_eq!(reciprocal_power((-3i64).into()), None);
        assert_eq!(reciprocal_power(0.5f64.into()), None);
    }

    #[test]
    fn exact_log_sigmoid_backward_equals_burns_default_body() {
        let grad: Vec<f32> = values().iter().map(|v| v.sin()).collect();
        let want = read(I::log_sigmoid_backward(tensor(&values()), tensor(&grad)));
        let got = read(exact_log_sigmoid_backward::<I>(
            tensor(&values()),
            tensor(&grad),
        ));
        assert_eq!(got, want);
    }
}
