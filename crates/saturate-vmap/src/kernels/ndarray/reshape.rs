//! **reshape**:
//! burn-ndarray 0.21's `reshape` goes through ndarray's `to_shape(..).into_shared()`, which
//! copies the whole array even when it is contiguous and the reshape could be a view. Vmap
//! reshapes at every batching rule that folds the member axis into the batch (pooling,
//! interpolation, matmul, the convolution lowerings): on the benchmark CNN at K = 8 those
//! copies were about a sixth of a training step (`perf`). A contiguous array is reshaped here
//! in place of the copy; anything else takes the backend's own `reshape`.

use burn_backend::Shape;

/// `p` reshaped to `shape` without a copy when `p` is an NdArray tensor in row-major layout;
/// otherwise `Err(p)` unchanged.
#[cfg(feature = "ndarray")]
pub(crate) fn reshape<P: 'static>(p: P, shape: &Shape) -> Result<P, P> {
    use burn_ndarray::NdArrayTensor;
    use std::any::Any;

    let any: Box<dyn Any> = Box::new(p);
    let tensor = match any.downcast::<NdArrayTensor>() {
        Ok(tensor) => *tensor,
        Err(any) => return Err(*any.downcast::<P>().expect("the same type")),
    };
    let back = |t: NdArrayTensor| -> P {
        *(Box::new(t) as Box<dyn Any>)
            .downcast::<P>()
            .expect("the same type")
    };
    let dims = ndarray::IxDyn(shape.as_slice());
    // The storage type is private to burn-ndarray; its methods are public.
    macro_rules! each {
        ($($variant:ident),*) => {
            match tensor {
                $(NdArrayTensor::$variant(storage) => {
                    if !storage.is_owned() {
                        return Err(back(NdArrayTensor::$variant(storage)));
                    }
                    let array = storage.into_shared(); // owned: the same array, no copy
                    if !array.is_standard_layout() || array.len() != shape.num_elements() {
                        return Err(back(NdArrayTensor::from(array)));
                    }
                    match array.into_shape_with_order(dims) {
                        Ok(array) => Ok(back(NdArrayTensor::from(array))),
                        Err(_) => unreachable!("a contiguous array takes any shape of its size (checked)"),
                    }
                })*
            }
        };
    }
    each!(F64, F32, I64, I32, I16, I8, U64, U32, U16, U8, Bool)
}

/// Without NdArray compiled in, every backend takes its own `reshape`.
#[cfg(not(feature = "ndarray"))]
pub(crate) fn reshape<P: 'static>(p: P, _shape: &Shape) -> Result<P, P> {
    Err(p)
}
