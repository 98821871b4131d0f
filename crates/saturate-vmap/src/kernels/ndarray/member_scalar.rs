//! **add / sub / mul / div by one value per member**: a tensor `[K, d1, ..., dn]` and a
//! per-member scalar `[K, 1, ..., 1]` (what a per-member hyperparameter becomes: the
//! optimizers' learning rates, betas and penalties, dropout's scale). burn-ndarray broadcasts
//! the scalar with a zero stride, which ndarray walks element by element; here each member's
//! contiguous block is one tight loop over a slice (vectorised by the compiler), in place
//! when the full operand's buffer is not shared. The same `f32` operation on the same pair of
//! values, so the results equal the backend's own broadcast op bit for bit.

/// The four arithmetic ops this kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arith {
    Add,
    Sub,
    Mul,
    Div,
}

impl Arith {
    /// The op's name in burn (`float_add`, ...).
    pub(crate) fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "float_add" => Arith::Add,
            "float_sub" => Arith::Sub,
            "float_mul" => Arith::Mul,
            "float_div" => Arith::Div,
            _ => return None,
        })
    }
}

/// `lhs op rhs` when one operand is an `f32` NdArray array `[K, ...]` in row-major layout and
/// the other an `f32` array `[K, 1, ..., 1]` of the same rank (with `K > 1` or more than one
/// element per member); both back unchanged otherwise.
#[cfg(feature = "ndarray")]
pub(crate) fn member_scalar_binary<P: 'static>(op: Arith, lhs: P, rhs: P) -> Result<P, (P, P)> {
    use burn_ndarray::NdArrayTensor;
    use rayon::prelude::*;

    use super::base::{f32_pair, to_tensor, ELEMENTWISE_CHUNK};

    let back = |t: NdArrayTensor| -> P { to_tensor(t) };
    let per_member = |shape: &[usize], other: &[usize]| {
        shape.len() == other.len()
            && shape.len() >= 2
            && shape[0] == other[0]
            && shape[1..].iter().all(|&d| d == 1)
            && other[1..].iter().any(|&d| d != 1)
    };
    let (ls, rs) = f32_pair(lhs, rhs, |l, r| per_member(r, l) || per_member(l, r))?;
    // Which side holds the per-member scalars.
    let scalar_on_right = per_member(rs.array.shape(), ls.array.shape());
    let (full, scalars) = if scalar_on_right { (ls, rs) } else { (rs, ls) };
    let unique = full.unique;
    let mut array = full.array;
    let scalar_array = scalars.array;
    let values: Vec<f32> = scalar_array.iter().copied().collect();
    let restore = |array: ndarray::ArcArray<f32, ndarray::IxDyn>,
                   scalar_array: ndarray::ArcArray<f32, ndarray::IxDyn>| {
        let (full, scalars) = (
            back(NdArrayTensor::from(array)),
            back(NdArrayTensor::from(scalar_array)),
        );
        if scalar_on_right {
            (full, scalars)
        } else {
            (scalars, full)
        }
    };
    if !array.is_standard_layout() || array.is_empty() {
        return Err(restore(array, scalar_array));
    }
    let block = array.len() / values.len();
    let apply = move |x: f32, s: f32| -> f32 {
        match (op, scalar_on_right) {
            (Arith::Add, true) => x + s,
            (Arith::Add, false) => s + x,
            (Arith::Sub, true) => x - s,
            (Arith::Sub, false) => s - x,
            (Arith::Mul, true) => x * s,
            (Arith::Mul, false) => s * x,
            (Arith::Div, true) => x / s,
            (Arith::Div, false) => s / x,
        }
    };
    // Each element with its member's value: the members of `[start, start + x.len())`.
    let range = |start: usize, x: &mut [f32]| {
        let mut i = 0;
        while i < x.len() {
            let member = (start + i) / block;
            let end = ((member + 1) * block - start).min(x.len());
            let s = values[member];
            x[i..end].iter_mut().for_each(|x| *x = apply(*x, s));
            i = end;
        }
    };
    // Small tensors (most parameters of a small model) in one pass on this thread: handing
    // them to the thread pool costs more than the pass.
    let parallel = array.len() > 2 * ELEMENTWISE_CHUNK;
    if unique {
        let data = array.as_slice_mut().expect("row-major");
        if parallel {
            data.par_chunks_mut(ELEMENTWISE_CHUNK)
                .enumerate()
                .for_each(|(c, x)| range(c * ELEMENTWISE_CHUNK, x));
            crate::host_pool::keep_warm();
        } else {
            range(0, data);
        }
        return Ok(back(NdArrayTensor::from(array)));
    }
    let mut out = array.as_slice().expect("row-major").to_vec();
    if parallel {
        out.par_chunks_mut(ELEMENTWISE_CHUNK)
            .enumerate()
            .for_each(|(c, x)| range(c * ELEMENTWISE_CHUNK, x));
        crate::host_pool::keep_warm();
    } else {
        range(0, &mut out);
    }
    let out = ndarray::Array::from_shape_vec(array.raw_dim(), out)
        .expect("the same shape")
        .into_shared();
    Ok(back(NdArrayTensor::from(out)))
}

/// Without NdArray compiled in, every backend takes its own broadcast op.
#[cfg(not(feature = "ndarray"))]
pub(crate) fn member_scalar_binary<P: 'static>(_op: Arith, lhs: P, rhs: P) -> Result<P, (P, P)> {
    Err((lhs, rhs))
}

#[cfg(all(test, feature = "ndarray"))]
mod tests {
    use burn::backend::NdArray;
    use burn::tensor::{Tensor, TensorData, TensorPrimitive};
    use burn_backend::ops::FloatTensorOps;
    use burn_backend::TensorMetadata;

    use super::*;

    type I = NdArray<f32>;
    type P = burn_backend::tensor::FloatTensor<I>;

    fn tensor(values: &[f32], shape: &[usize]) -> P {
        I::float_from_data(
            TensorData::new(values.to_vec(), shape.to_vec()),
            &Default::default(),
        )
    }

    fn values(t: P) -> Vec<f32> {
        Tensor::<I, 1>::from_primitive(TensorPrimitive::Float(t))
            .into_data()
            .to_vec::<f32>()
            .unwrap()
    }

    #[test]
    fn equals_the_backends_broadcast_op_bit_for_bit_in_both_orders_and_when_shared() {
        // A small tensor (one pass on the calling thread), and one large enough for the
        // parallel pass, whose tasks straddle members (25,001 elements per member).
        for (shape, len) in [([3, 4, 5], 60), ([3, 25_001, 1], 75_003)] {
            check_all_ops(shape, len);
        }
    }

    fn check_all_ops(shape: [usize; 3], len: usize) {
        // Values that round differently per op, signed zeros, an infinity and a NaN.
        let full: Vec<f32> = (0..len)
            .map(|i| match i {
                7 => f32::INFINITY,
                11 => f32::NAN,
                13 => -0.0,
                _ => ((i % 97) as f32 - 29.5) * 0.1731,
            })
            .collect();
        let scalars = [0.3f32, -1.7, 0.0];
        for op in [Arith::Add, Arith::Sub, Arith::Mul, Arith::Div] {
            let name = format!("{op:?}");
            let reference = |l: P, r: P| match op {
                Arith::Add => I::float_add(l, r),
                Arith::Sub => I::float_sub(l, r),
                Arith::Mul => I::float_mul(l, r),
                Arith::Div => I::float_div(l, r),
            };
            let f = || tensor(&full, &shape);
            let s = || tensor(&scalars, &[3, 1, 1]);
            // Scalars on the right, then on the left.
            let ours = member_scalar_binary(op, f(), s()).unwrap_or_else(|_| panic!("{name}"));
            let bits = |v: Vec<f32>| v.into_iter().map(f32::to_bits).collect::<Vec<_>>();
            assert_eq!(
                bits(values(ours)),
                bits(values(reference(f(), s()))),
                "{name}"
            );
            let ours = member_scalar_binary(op, s(), f()).unwrap_or_else(|_| panic!("{name}"));
            assert_eq!(
                bits(values(ours)),
                bits(values(reference(s(), f()))),
                "{name}"
            );
            // A shared full operand is not written to.
            let shared = f();
            let keep = shared.clone();
            let ours = member_scalar_binary(op, shared, s()).unwrap_or_else(|_| panic!("{name}"));
            assert_eq!(
                bits(values(ours)),
                bits(values(reference(f(), s()))),
                "{name}"
            );
            assert_eq!(bits(values(keep)), bits(full.clone()), "{name}");
        }
    }

    #[test]
    fn other_shapes_are_handed_back() {
        let cases: [(&[usize], &[usize]); 4] = [
            (&[3, 4], &[3, 4]),       // same shape: the backend's own op
            (&[3, 4], &[1, 4]),       // broadcast over the member axis
            (&[3, 4, 5], &[3, 4, 1]), // a partial broadcast
            (&[3, 1], &[3, 1]),       // nothing to broadcast
        ];
        for (a, b) in cases {
            let n = |s: &[usize]| s.iter().product::<usize>();
            let l = tensor(&vec![1.0; n(a)], a);
            let r = tensor(&vec![2.0; n(b)], b);
            let (l, r) = member_scalar_binary(Arith::Mul, l, r).expect_err("handed back");
            assert_eq!(
                (l.shape().to_vec(), r.shape().to_vec()),
                (a.to_vec(), b.to_vec())
            );
        }
    }
}
