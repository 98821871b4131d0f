//! Per-member values on any backend: a module written for `B: Backend` (not only
//! [`VmapBackend`]) can hold one value per member and still build on a plain backend, where
//! it is a single member.
//!
//! Rust cannot ask at compile time whether a generic `B` is a `Vmap` backend, so every
//! [`VmapDevice`] registers a builder for its backends (`Vmap<I>` and `Autodiff<Vmap<I>>`)
//! when its id is first taken, and [`values_per_member`] looks the backend up by its type.

use std::any::{Any, TypeId};
use std::sync::Mutex;

use burn::backend::autodiff::checkpoint::strategy::{BalancedCheckpointing, NoCheckpointing};
use burn::backend::Autodiff;
use burn::tensor::backend::Backend;
use burn::tensor::Tensor;

use crate::backend::Vmap;
use crate::error::VmapError;
use crate::member::per_member;
use crate::vmap_backend::VmapBackend;

type Builder = fn(&[f64], &dyn Any) -> Result<Box<dyn Any>, VmapError>;

static BUILDERS: Mutex<Vec<(TypeId, Builder)>> = Mutex::new(Vec::new());

fn build<B: VmapBackend>(values: &[f64], device: &dyn Any) -> Result<Box<dyn Any>, VmapError> {
    let device = device
        .downcast_ref::<B::Device>()
        .expect("saturate-vmap: a backend's builder is called with its own device type");
    Ok(Box::new(per_member::<B>(values, device)?))
}

/// Registers the builders of the backends whose device is `VmapDevice<I>`.
pub(crate) fn register<I: Backend>() {
    let mut builders = BUILDERS.lock().unwrap_or_else(|e| e.into_inner());
    let id = TypeId::of::<Vmap<I>>();
    if builders.iter().any(|(t, _)| *t == id) {
        return;
    }
    builders.push((id, build::<Vmap<I>>));
    builders.push((
        TypeId::of::<Autodiff<Vmap<I>, NoCheckpointing>>(),
        build::<Autodiff<Vmap<I>, NoCheckpointing>>,
    ));
    builders.push((
        TypeId::of::<Autodiff<Vmap<I>, BalancedCheckpointing>>(),
        build::<Autodiff<Vmap<I>, BalancedCheckpointing>>,
    ));
}

fn builder_of<B: Backend>() -> Option<Builder> {
    let builders = BUILDERS.lock().unwrap_or_else(|e| e.into_inner());
    let id = TypeId::of::<B>();
    builders.iter().find(|(t, _)| *t == id).map(|(_, b)| *b)
}

/// One value per member on any backend, as a tensor of logical shape `[1]`: on a group
/// device (a `Vmap` backend) the batched tensor of [`per_member`], member k holding
/// `values[k]`; on a plain backend, which is one member, the single value.
///
/// This is what lets a module with per-member hyperparameters (such as
/// [`nn::Dropout`](crate::nn::Dropout)) stay an ordinary `B: Backend` module: build it on a
/// group device for training and on a plain device (one value) for inference.
///
/// ```
/// use burn::backend::NdArray;
/// use saturate_vmap::{member_values, values_per_member, Vmap, VmapDevice};
///
/// let group = VmapDevice::<NdArray>::new(Default::default(), 3);
/// let t = values_per_member::<Vmap<NdArray>>(&[0.1, 0.2, 0.3], &group)?;
/// assert_eq!(member_values(t)?, vec![0.1f32 as f64, 0.2f32 as f64, 0.3f32 as f64]);
///
/// let plain = values_per_member::<NdArray>(&[0.1], &Default::default())?;
/// assert_eq!(plain.dims(), [1]);
/// # Ok::<(), saturate_vmap::VmapError>(())
/// ```
///
/// # Errors
/// [`VmapError::MemberCountMismatch`] if `values` does not have one value per member (one
/// on a plain backend).
pub fn values_per_member<B: Backend>(
    values: &[f64],
    device: &B::Device,
) -> Result<Tensor<B, 1>, VmapError> {
    // A group device registers its backends' builders when its id is taken.
    let _ = burn::tensor::backend::DeviceOps::id(device);
    match builder_of::<B>() {
        Some(builder) => {
            let tensor = builder(values, device as &dyn Any)?;
            Ok(*tensor
                .downcast::<Tensor<B, 1>>()
                .expect("saturate-vmap: a builder returns its backend's tensor"))
        }
        None if values.len() == 1 => Ok(Tensor::from_floats([values[0] as f32], device)),
        None => Err(VmapError::MemberCountMismatch {
            what: "per-member values on a backend without members (one member)".into(),
            expected: 1,
            got: values.len(),
        }),
    }
}
