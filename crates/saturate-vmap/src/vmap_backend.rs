//! [`VmapBackend`]: the backends whose tensors carry a member axis (`Vmap<B>` and
//! `Autodiff<Vmap<B>>`), with access to their [`VmapTensor`] form.

use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::Autodiff;
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::ops::{BoolTensor, FloatTensor, IntTensor};

use crate::{Vmap, VmapDevice, VmapTensor};

/// A backend whose tensors carry saturate's member axis: [`Vmap<B>`] itself or
/// `Autodiff<Vmap<B>>`.
///
/// Converting to the [`VmapTensor`] form drops the autodiff graph (the result is a leaf);
/// saturate uses it on parameters and for reading per-member values.
pub trait VmapBackend: Backend<Device = VmapDevice<Self::Inner>> {
    /// The backend that does the work (e.g. `NdArray`).
    type Inner: Backend;

    /// The float primitive as a [`VmapTensor`] of the inner backend.
    fn float_to_vmap(tensor: FloatTensor<Self>) -> VmapTensor<FloatTensor<Self::Inner>>;
    /// The float primitive from a [`VmapTensor`] of the inner backend.
    fn float_from_vmap(tensor: VmapTensor<FloatTensor<Self::Inner>>) -> FloatTensor<Self>;
    /// The int primitive as a [`VmapTensor`] of the inner backend.
    fn int_to_vmap(tensor: IntTensor<Self>) -> VmapTensor<IntTensor<Self::Inner>>;
    /// The int primitive from a [`VmapTensor`] of the inner backend.
    fn int_from_vmap(tensor: VmapTensor<IntTensor<Self::Inner>>) -> IntTensor<Self>;
    /// The bool primitive as a [`VmapTensor`] of the inner backend.
    fn bool_to_vmap(tensor: BoolTensor<Self>) -> VmapTensor<BoolTensor<Self::Inner>>;
    /// The bool primitive from a [`VmapTensor`] of the inner backend.
    fn bool_from_vmap(tensor: VmapTensor<BoolTensor<Self::Inner>>) -> BoolTensor<Self>;
}

impl<B: Backend> VmapBackend for Vmap<B> {
    type Inner = B;

    fn float_to_vmap(tensor: FloatTensor<Self>) -> VmapTensor<FloatTensor<B>> {
        tensor
    }
    fn float_from_vmap(tensor: VmapTensor<FloatTensor<B>>) -> FloatTensor<Self> {
        tensor
    }
    fn int_to_vmap(tensor: IntTensor<Self>) -> VmapTensor<IntTensor<B>> {
        tensor
    }
    fn int_from_vmap(tensor: VmapTensor<IntTensor<B>>) -> IntTensor<Self> {
        tensor
    }
    fn bool_to_vmap(tensor: BoolTensor<Self>) -> VmapTensor<BoolTensor<B>> {
        tensor
    }
    fn bool_from_vmap(tensor: VmapTensor<BoolTensor<B>>) -> BoolTensor<Self> {
        tensor
    }
}

impl<B: Backend, C: CheckpointStrategy> VmapBackend for Autodiff<Vmap<B>, C> {
    type Inner = B;

    fn float_to_vmap(tensor: FloatTensor<Self>) -> VmapTensor<FloatTensor<B>> {
        <Self as AutodiffBackend>::inner(tensor)
    }
    fn float_from_vmap(tensor: VmapTensor<FloatTensor<B>>) -> FloatTensor<Self> {
        <Self as AutodiffBackend>::from_inner(tensor)
    }
    fn int_to_vmap(tensor: IntTensor<Self>) -> VmapTensor<IntTensor<B>> {
        <Self as AutodiffBackend>::int_inner(tensor)
    }
    fn int_from_vmap(tensor: VmapTensor<IntTensor<B>>) -> IntTensor<Self> {
        <Self as AutodiffBackend>::int_from_inner(tensor)
    }
    fn bool_to_vmap(tensor: BoolTensor<Self>) -> VmapTensor<BoolTensor<B>> {
        <Self as AutodiffBackend>::bool_inner(tensor)
    }
    fn bool_from_vmap(tensor: VmapTensor<BoolTensor<B>>) -> BoolTensor<Self> {
        <Self as AutodiffBackend>::bool_from_inner(tensor)
    }
}
