//! What the NdArray kernels share: taking their operands out of the inner primitives
//! ([`f32_row_major`], [`f32_pair`]), handing NdArray tensors back as the inner primitive, and
//! the task size of their parallel elementwise passes.

/// Elements per task of the parallel elementwise passes: large enough that rayon's scheduling
/// is noise next to the work.
pub(super) const ELEMENTWISE_CHUNK: usize = 1 << 15;

/// An NdArray tensor as the inner primitive `P` (which it is, on NdArray).
pub(super) fn to_tensor<P: 'static>(t: burn_ndarray::NdArrayTensor) -> P {
    *(Box::new(t) as Box<dyn std::any::Any>)
        .downcast::<P>()
        .expect("the same type")
}

/// An `f32` NdArray array taken out of its tensor, and whether its buffer was held by that
/// tensor alone (then the array can be written in place without a copy).
pub(super) struct F32Array {
    pub(super) array: ndarray::ArcArray<f32, ndarray::IxDyn>,
    pub(super) unique: bool,
}

/// An inner primitive as an `f32` NdArray array in row-major layout when it is an `f32`
/// NdArray tensor whose shape `accept` takes; otherwise handed back unchanged (before any copy
/// when `accept` refuses). The opening of every one-operand kernel.
pub(super) fn f32_row_major<P: 'static>(
    p: P,
    accept: impl FnOnce(&[usize]) -> bool,
) -> Result<F32Array, P> {
    use burn_ndarray::NdArrayTensor;

    let any: Box<dyn std::any::Any> = Box::new(p);
    let storage = match any.downcast::<NdArrayTensor>() {
        Ok(t) => match *t {
            NdArrayTensor::F32(storage) => storage,
            other => return Err(to_tensor(other)),
        },
        Err(any) => return Err(*any.downcast::<P>().expect("the same type")),
    };
    if !accept(storage.shape()) {
        return Err(to_tensor(NdArrayTensor::F32(storage)));
    }
    let unique = storage.is_unique();
    let array = storage.into_shared();
    if !array.is_standard_layout() {
        return Err(to_tensor(NdArrayTensor::from(array)));
    }
    Ok(F32Array { array, unique })
}

/// Two inner primitives as `f32` NdArray arrays when both are `f32` NdArray tensors whose
/// shapes `accept` takes; otherwise both handed back unchanged, before any copy (a borrowed
/// buffer is copied when it is taken out). The opening of every two-operand kernel.
pub(super) fn f32_pair<P: 'static>(
    lhs: P,
    rhs: P,
    accept: impl FnOnce(&[usize], &[usize]) -> bool,
) -> Result<(F32Array, F32Array), (P, P)> {
    use burn_ndarray::NdArrayTensor;
    use std::any::Any;

    let (l, r): (Box<dyn Any>, Box<dyn Any>) = (Box::new(lhs), Box::new(rhs));
    let undo = |t: Result<Box<NdArrayTensor>, Box<dyn Any>>| -> P {
        match t {
            Ok(t) => to_tensor(*t),
            Err(a) => *a.downcast::<P>().expect("the same type"),
        }
    };
    match (l.downcast::<NdArrayTensor>(), r.downcast::<NdArrayTensor>()) {
        (Ok(l), Ok(r)) => match (*l, *r) {
            (NdArrayTensor::F32(l), NdArrayTensor::F32(r)) => {
                if !accept(l.shape(), r.shape()) {
                    return Err((
                        to_tensor(NdArrayTensor::F32(l)),
                        to_tensor(NdArrayTensor::F32(r)),
                    ));
                }
                let (l_unique, r_unique) = (l.is_unique(), r.is_unique());
                Ok((
                    F32Array {
                        array: l.into_shared(),
                        unique: l_unique,
                    },
                    F32Array {
                        array: r.into_shared(),
                        unique: r_unique,
                    },
                ))
            }
            (l, r) => Err((to_tensor(l), to_tensor(r))),
        },
        (l, r) => Err((undo(l), undo(r))),
    }
}
