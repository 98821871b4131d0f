//! **Adam's step in one pass**: the moment updates, the bias-corrected update and the
//! parameter update of burn's Adam (with L2 weight decay) for every member of a parameter
//! tensor, reading each element once and writing the parameter and both moments once,
//! instead of a dozen whole-tensor ops each allocating its result. Each element goes through
//! the same `f32` operations in the same order as the op-by-op form, so the results are the
//! same bit for bit (the optimizer parity tests compare them with burn-optim).

use crate::fused::AdamStepScalars;

/// The inputs handed back when the kernel does not apply.
pub(crate) type Inputs<P> = (P, P, Option<(P, P)>);

/// Elements per task of Adam's parallel pass: a quarter of the elementwise passes' chunk.
/// Adam does about ten operations per element (a square root and a division among them), so
/// smaller tasks still outweigh rayon's scheduling, and the 64 × 64 weights of 8 members
/// (32,768 values) split over the threads: the optimizer benchmark's Adam step took 216 µs
/// with this chunk and 240 to 299 µs with the elementwise one (2-core Xeon, same session).
#[cfg(feature = "ndarray")]
const ADAM_CHUNK: usize = 1 << 13;

/// One Adam step on `f32` NdArray arrays `[K, ...]` of one shape in row-major layout:
/// `(parameter, first moment, second moment)` after the step. Anything else back unchanged.
#[cfg(feature = "ndarray")]
pub(crate) fn adam_step<P: 'static>(
    param: P,
    grad: P,
    moments: Option<(P, P)>,
    s: &AdamStepScalars,
) -> Result<(P, P, P), Inputs<P>> {
    use burn_ndarray::NdArrayTensor;
    use ndarray::{ArcArray, IxDyn};
    use rayon::prelude::*;
    use std::any::Any;

    use super::base::to_tensor;

    type Array = ArcArray<f32, IxDyn>;
    enum Got<P> {
        Array(Array),
        Other(P),
    }
    let take = |p: P| -> Got<P> {
        let any: Box<dyn Any> = Box::new(p);
        match any.downcast::<NdArrayTensor>() {
            Ok(t) => match *t {
                NdArrayTensor::F32(storage) => Got::Array(storage.into_shared()),
                other => Got::Other(to_tensor(other)),
            },
            Err(any) => Got::Other(*any.downcast::<P>().expect("the same type")),
        }
    };
    let give = |g: Got<P>| -> P {
        match g {
            Got::Array(a) => to_tensor(NdArrayTensor::from(a)),
            Got::Other(p) => p,
        }
    };
    let (param, grad) = (take(param), take(grad));
    let moments = moments.map(|(m1, m2)| (take(m1), take(m2)));
    let members = s.lr.len();
    let usable = |g: &Got<P>, shape: &[usize]| match g {
        Got::Array(a) => a.is_standard_layout() && a.shape() == shape,
        Got::Other(_) => false,
    };
    let shape: Vec<usize> = match &param {
        Got::Array(a) => a.shape().to_vec(),
        Got::Other(_) => Vec::new(),
    };
    let fits = !shape.is_empty()
        && shape[0] == members
        && usable(&param, &shape)
        && usable(&grad, &shape)
        && moments
            .as_ref()
            .is_none_or(|(m1, m2)| usable(m1, &shape) && usable(m2, &shape));
    let len: usize = shape.iter().product();
    if !fits || len == 0 {
        return Err((
            give(param),
            give(grad),
            moments.map(|(m1, m2)| (give(m1), give(m2))),
        ));
    }
    let array = |g: Got<P>| match g {
        Got::Array(a) => a,
        Got::Other(_) => unreachable!("checked above"),
    };
    let block = len / members;
    // Every output in place: the parameter and the moments (a buffer another tensor still
    // shares is copied first); zeros for the moments of a first step.
    let mut param = array(param);
    let grad = array(grad);
    let first_step = moments.is_none();
    let (mut m1, mut m2) = match moments {
        Some((a, b)) => (array(a), array(b)),
        None => {
            let zeros = || Array::zeros(IxDyn(&shape));
            (zeros(), zeros())
        }
    };
    {
        let p = param.as_slice_mut().expect("row-major");
        let g = grad.as_slice().expect("row-major");
        let (m1, m2) = (
            m1.as_slice_mut().expect("row-major"),
            m2.as_slice_mut().expect("row-major"),
        );
        // One member's elements: burn's Adam, op by op, with the member's scalars and the
        // step's branches hoisted out of the loop (so that it vectorises).
        let segment = |k: usize, p: &mut [f32], g: &[f32], m1: &mut [f32], m2: &mut [f32]| {
            let (b1, f1, b2, f2) = (s.beta_1[k], s.factor_1[k], s.beta_2[k], s.factor_2[k]);
            let (combined, epsilon, lr) = (s.combined[k], s.epsilon[k], s.lr[k]);
            let penalty = s.penalty.as_ref().map(|v| v[k]);
            let elements = p.iter_mut().zip(g).zip(m1.iter_mut()).zip(m2.iter_mut());
            macro_rules! each {
                ($grad:expr, $m1:expr, $m2:expr) => {
                    for (((p, &g), m1), m2) in elements {
                        let gi = $grad(*p, g);
                        let (new_m1, new_m2) = ($m1(*m1, gi), $m2(*m2, gi));
                        let update = (new_m1 * combined) / (new_m2.sqrt() + epsilon);
                        *p -= update * lr;
                        *m1 = new_m1;
                        *m2 = new_m2;
                    }
                };
            }
            let first_1 = |_: f32, g: f32| g * f1;
            let first_2 = |_: f32, g: f32| (g * g) * f2;
            let next_1 = |m: f32, g: f32| m * b1 + g * f1;
            let next_2 = |m: f32, g: f32| m * b2 + (g * g) * f2;
            match (penalty, first_step) {
                (None, true) => each!(|_, g| g, first_1, first_2),
                (None, false) => each!(|_, g| g, next_1, next_2),
                (Some(w), true) => each!(|p: f32, g: f32| p * w + g, first_1, first_2),
                (Some(w), false) => each!(|p: f32, g: f32| p * w + g, next_1, next_2),
            }
        };
        // The elements `[start, start + p.len())`, split at member boundaries.
        let run = |start: usize, p: &mut [f32], g: &[f32], m1: &mut [f32], m2: &mut [f32]| {
            let mut i = 0;
            while i < p.len() {
                let k = (start + i) / block;
                let end = ((k + 1) * block - start).min(p.len());
                segment(
                    k,
                    &mut p[i..end],
                    &g[i..end],
                    &mut m1[i..end],
                    &mut m2[i..end],
                );
                i = end;
            }
        };
        let chunk = ADAM_CHUNK;
        if len > 2 * chunk {
            p.par_chunks_mut(chunk)
                .zip(g.par_chunks(chunk))
                .zip(m1.par_chunks_mut(chunk))
                .zip(m2.par_chunks_mut(chunk))
                .enumerate()
                .for_each(|(c, (((p, g), m1), m2))| run(c * chunk, p, g, m1, m2));
            crate::host_pool::keep_warm();
        } else {
            run(0, p, g, m1, m2);
        }
    }
    let back = |a: Array| -> P { to_tensor(NdArrayTensor::from(a)) };
    Ok((back(param), back(m1), back(m2)))
}

/// Without NdArray compiled in, every backend takes the op-by-op step.
#[cfg(not(feature = "ndarray"))]
pub(crate) fn adam_step<P: 'static>(
    param: P,
    grad: P,
    moments: Option<(P, P)>,
    _s: &AdamStepScalars,
) -> Result<(P, P, P), Inputs<P>> {
    Err((param, grad, moments))
}

#[cfg(all(test, feature = "ndarray"))]
mod tests {
    use burn::backend::NdArray;
    use burn::tensor::{Tensor, TensorData, TensorPrimitive};
    use burn_backend::ops::FloatTensorOps;

    use super::*;

    type I = NdArray<f32>;
    type P = burn_backend::tensor::FloatTensor<I>;

    fn tensor(values: &[f32], shape: &[usize]) -> P {
        I::float_from_data(
            TensorData::new(values.to_vec(), shape.to_vec()),
            &Default::default(),
        )
    }

    fn bits(t: P) -> Vec<u32> {
        Tensor::<I, 1>::from_primitive(TensorPrimitive::Float(t))
            .into_data()
            .to_vec::<f32>()
            .unwrap()
            .into_iter()
            .map(f32::to_bits)
            .collect()
    }

    /// The step as whole-array NdArray ops, in saturate-optim's op-by-op order, with each
    /// per-member scalar a `[K, 1, 1]` array.
    fn reference(p: P, g: P, prev: Option<(P, P)>, s: &AdamStepScalars) -> (P, P, P) {
        let k = s.lr.len();
        let per = |v: &[f32]| tensor(v, &[k, 1, 1]);
        let mut g = g;
        if let Some(penalty) = &s.penalty {
            g = I::float_add(I::float_mul(p.clone(), per(penalty)), g);
        }
        let square = I::float_mul(g.clone(), g.clone());
        let (m1, m2) = match prev {
            None => (
                I::float_mul(g, per(&s.factor_1)),
                I::float_mul(square, per(&s.factor_2)),
            ),
            Some((a, b)) => (
                I::float_add(
                    I::float_mul(a, per(&s.beta_1)),
                    I::float_mul(g, per(&s.factor_1)),
                ),
                I::float_add(
                    I::float_mul(b, per(&s.beta_2)),
                    I::float_mul(square, per(&s.factor_2)),
                ),
            ),
        };
        let update = I::float_div(
            I::float_mul(m1.clone(), per(&s.combined)),
            I::float_add(I::float_sqrt(m2.clone()), per(&s.epsilon)),
        );
        let p = I::float_sub(p, I::float_mul(update, per(&s.lr)));
        (p, m1, m2)
    }

    #[test]
    fn two_steps_equal_the_op_by_op_form_bit_for_bit() {
        // A small tensor (one pass on this thread) and one for the parallel pass whose
        // tasks straddle members.
        for per_member in [12, 25_001] {
            let k = 3;
            let shape = [k, per_member, 1];
            let n = k * per_member;
            let wave = |seed: f32| -> Vec<f32> {
                (0..n)
                    .map(|i| ((i as f32 * 0.37 + seed).sin()) * 0.5)
                    .collect()
            };
            let s = AdamStepScalars {
                beta_1: vec![0.9, 0.8, 0.95],
                factor_1: vec![1.0 - 0.9, 1.0 - 0.8, 1.0 - 0.95],
                beta_2: vec![0.999, 0.99, 0.9],
                factor_2: vec![1.0 - 0.999, 1.0 - 0.99, 1.0 - 0.9],
                penalty: Some(vec![0.0, 1e-2, 3e-4]),
                combined: vec![0.31, 0.7, 1.9],
                epsilon: vec![1e-5, 3e-6, 1e-8],
                lr: vec![1e-3, 0.1, 0.02],
            };
            let (p0, g0, g1) = (wave(0.0), wave(1.0), wave(2.0));
            let t = |v: &[f32]| tensor(v, &shape);
            // First step (no moments), then a second step from the first one's moments.
            let (rp, rm1, rm2) = reference(t(&p0), t(&g0), None, &s);
            let (fp, fm1, fm2) = adam_step(t(&p0), t(&g0), None, &s).unwrap_or_else(|_| panic!());
            assert_eq!(bits(fp.clone()), bits(rp.clone()), "parameter after step 1");
            assert_eq!(
                bits(fm1.clone()),
                bits(rm1.clone()),
                "first moment after step 1"
            );
            assert_eq!(
                bits(fm2.clone()),
                bits(rm2.clone()),
                "second moment after step 1"
            );
            let (rp, rm1, rm2) = reference(rp, t(&g1), Some((rm1, rm2)), &s);
            let (fp, fm1, fm2) =
                adam_step(fp, t(&g1), Some((fm1, fm2)), &s).unwrap_or_else(|_| panic!());
            assert_eq!(bits(fp), bits(rp), "parameter after step 2");
            assert_eq!(bits(fm1), bits(rm1), "first moment after step 2");
            assert_eq!(bits(fm2), bits(rm2), "second moment after step 2");
        }
    }

    #[test]
    fn a_shared_parameter_is_not_written_and_other_shapes_are_handed_back() {
        let s = AdamStepScalars {
            beta_1: vec![0.9; 2],
            factor_1: vec![0.1; 2],
            beta_2: vec![0.999; 2],
            factor_2: vec![1.0 - 0.999; 2],
            penalty: None,
            combined: vec![1.0; 2],
            epsilon: vec![1e-5; 2],
            lr: vec![0.1; 2],
        };
        let p = tensor(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
        let keep = p.clone();
        let g = tensor(&[0.5; 4], &[2, 2]);
        let (after, _, _) = adam_step(p, g, None, &s).unwrap_or_else(|_| panic!());
        assert_ne!(bits(after), bits(keep.clone()));
        assert_eq!(
            bits(keep),
            [1.0f32, 2.0, 3.0, 4.0].map(f32::to_bits).to_vec()
        );
        // A gradient of another shape, and a member count that is not the first axis.
        let p = tensor(&[1.0; 4], &[2, 2]);
        assert!(adam_step(p.clone(), tensor(&[1.0; 2], &[2, 1]), None, &s).is_err());
        assert!(adam_step(
            tensor(&[1.0; 4], &[4, 1]),
            tensor(&[1.0; 4], &[4, 1]),
            None,
            &s
        )
        .is_err());
    }
}
