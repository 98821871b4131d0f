//! The [`Vmap`] backend decorator.

use core::marker::PhantomData;

use burn_backend::{Backend, BackendTypes, DType, DTypeUsageSet, ExecutionError};

use crate::device::VmapDevice;
use crate::tensor::{VmapQTensor, VmapTensor};

/// A backend decorator that gives every tensor a leading *member* axis of size K.
///
/// `Vmap<B>` wraps the backend `B`. A module built on `Vmap<B>` (or `Autodiff<Vmap<B>>`) with a
/// [`VmapDevice`] of K members holds K independent copies of its parameters, and one forward /
/// backward pass computes all K members at once, with exact per-member gradients. See
/// [`VmapTensor`] for the batching model.
#[derive(Clone, Copy, Default, Debug)]
pub struct Vmap<B: Backend> {
    _inner: PhantomData<B>,
}

impl<B: Backend> BackendTypes for Vmap<B> {
    type Device = VmapDevice<B>;

    type FloatTensorPrimitive = VmapTensor<B::FloatTensorPrimitive>;
    type FloatElem = B::FloatElem;

    type IntTensorPrimitive = VmapTensor<B::IntTensorPrimitive>;
    type IntElem = B::IntElem;

    type BoolTensorPrimitive = VmapTensor<B::BoolTensorPrimitive>;
    type BoolElem = B::BoolElem;

    type QuantizedTensorPrimitive = VmapQTensor<B::QuantizedTensorPrimitive>;
}

impl<B: Backend> Backend for Vmap<B> {
    fn ad_enabled(device: &Self::Device) -> bool {
        B::ad_enabled(&device.inner)
    }

    fn memory_cleanup(device: &Self::Device) {
        B::memory_cleanup(&device.inner)
    }

    fn name(device: &Self::Device) -> String {
        format!("vmap<{}>", B::name(&device.inner))
    }

    fn seed(device: &Self::Device, seed: u64) {
        B::seed(&device.inner, seed)
    }

    fn sync(device: &Self::Device) -> Result<(), ExecutionError> {
        B::sync(&device.inner)
    }

    fn dtype_usage(device: &Self::Device, dtype: DType) -> DTypeUsageSet {
        B::dtype_usage(&device.inner, dtype)
    }

    fn device_count(type_id: u16) -> usize {
        B::device_count(type_id)
    }
}
