//! What the NdArray kernels share: handing an NdArray tensor back as the inner primitive, and
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
