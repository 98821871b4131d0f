//! Per-member values: build a batched tensor from K numbers, read a batched tensor as K values
//! or K [`TensorData`], take one member, stack members.
//!
//! The member primitives on inner-backend tensors ([`select_float_members`],
//! [`float_with_member_axis`], [`append_zero_float_members`]) are public for crates that keep
//! per-member state of their own, such as saturate-optim's optimizer state.

use burn::tensor::backend::{Backend, BackendTypes};
use burn::tensor::ops::FloatTensorOps;
use burn::tensor::ops::{FloatTensor, IntTensor};
use burn::tensor::{Tensor, TensorData, TensorMetadata, TensorPrimitive};

use crate::error::VmapError;
use crate::tensor::{materialize_copy, FloatKind, Kind, VmapTensor};
use crate::vmap_backend::VmapBackend;

/// An int tensor of member indices on the inner backend.
pub(crate) fn index_tensor<I: Backend>(indices: &[usize], device: &I::Device) -> IntTensor<I> {
    let data: Vec<i64> = indices.iter().map(|&i| i as i64).collect();
    let data = TensorData::new(data, [indices.len()]).convert::<I::IntElem>();
    I::int_from_data(data, device)
}

/// Checks that every index is below `members` and appears once.
pub(crate) fn check_indices(indices: &[usize], members: usize) -> Result<(), VmapError> {
    for (pos, &index) in indices.iter().enumerate() {
        if index >= members {
            return Err(VmapError::MemberOutOfRange { index, members });
        }
        if indices[..pos].contains(&index) {
            return Err(VmapError::DuplicateMember { index });
        }
    }
    Ok(())
}

/// The members `indices` of a tensor, as a group of `indices.len()` members; a shared
/// (unbatched) tensor stays shared. Indices are not checked (see [`check_indices`]).
pub(crate) fn keep_members<I: Backend, K: Kind<I>>(
    tensor: VmapTensor<K::P>,
    indices: &[usize],
) -> VmapTensor<K::P> {
    if !tensor.batched {
        return VmapTensor::unbatched(tensor.inner, indices.len());
    }
    let device = K::device(&tensor.inner);
    let selected = K::select(tensor.inner, 0, index_tensor::<I>(indices, &device));
    VmapTensor::batched(selected, indices.len())
}

/// The members `indices` of a tensor, as a batched tensor of `indices.len()` members: a shared
/// tensor is copied, so that each kept member has its own storage (parameters are updated
/// member by member).
pub(crate) fn select_members<I: Backend, K: Kind<I>>(
    tensor: VmapTensor<K::P>,
    indices: &[usize],
) -> VmapTensor<K::P> {
    let kept = keep_members::<I, K>(tensor, indices);
    VmapTensor::batched(materialize_copy::<I, K>(kept), indices.len())
}

/// Member `index` as an unbatched tensor of a one-member group.
pub(crate) fn take_member<I: Backend, K: Kind<I>>(
    tensor: VmapTensor<K::P>,
    index: usize,
) -> VmapTensor<K::P> {
    if !tensor.batched {
        return VmapTensor::unbatched(tensor.inner, 1);
    }
    let one = select_members::<I, K>(tensor, &[index]);
    let logical = one.shape();
    VmapTensor::unbatched(K::reshape(one.inner, logical), 1)
}

/// Concatenates groups along the member axis.
pub(crate) fn cat_members<I: Backend, K: Kind<I>>(
    groups: Vec<VmapTensor<K::P>>,
) -> VmapTensor<K::P> {
    let members = groups.iter().map(|t| t.members).sum();
    let parts = groups.into_iter().map(materialize_copy::<I, K>).collect();
    VmapTensor::batched(K::cat(parts, 0), members)
}

/// The members `indices` (in that order) of a float tensor of the inner backend `I`, as a
/// group of `indices.len()` members. A shared (unbatched) tensor stays shared.
///
/// An index may repeat (the member is copied). This is the member selection behind
/// `Batched::retain` and `Batched::select`, for crates that keep per-member state of their
/// own (saturate-optim selects its optimizer state with it).
///
/// # Errors
/// [`VmapError::MemberOutOfRange`] if an index is not below the tensor's member count.
pub fn select_float_members<I: Backend>(
    tensor: VmapTensor<FloatTensor<I>>,
    indices: &[usize],
) -> Result<VmapTensor<FloatTensor<I>>, VmapError> {
    if let Some(&index) = indices.iter().find(|&&i| i >= tensor.members) {
        return Err(VmapError::MemberOutOfRange {
            index,
            members: tensor.members,
        });
    }
    Ok(keep_members::<I, FloatKind>(tensor, indices))
}

/// The inner float tensor with a real member axis in front (`[K, ...logical]`) and storage of
/// its own: a batched tensor as it is, a shared one copied once per member.
pub fn float_with_member_axis<I: Backend>(tensor: VmapTensor<FloatTensor<I>>) -> FloatTensor<I> {
    materialize_copy::<I, FloatKind>(tensor)
}

/// A float tensor of the inner backend `I` with `new` members of zeros appended (of the
/// tensor's dtype): the result is batched, with `members + new` members.
pub fn append_zero_float_members<I: Backend>(
    tensor: VmapTensor<FloatTensor<I>>,
    new: usize,
) -> VmapTensor<FloatTensor<I>> {
    let members = tensor.members;
    let inner = materialize_copy::<I, FloatKind>(tensor);
    let mut shape = inner.shape();
    shape[0] = new;
    let device = I::float_device(&inner);
    let zeros = I::float_zeros(shape, &device, inner.dtype().into());
    VmapTensor::batched(I::float_cat(vec![inner, zeros], 0), members + new)
}

/// Reads an inner float primitive synchronously.
fn read_float<I: Backend>(tensor: I::FloatTensorPrimitive) -> TensorData {
    burn::tensor::try_read_sync(I::float_into_data(tensor))
        .expect("saturate-vmap: this backend cannot read tensors synchronously")
        .expect("saturate-vmap: reading a tensor failed")
}

/// Splits `[K, ...]` data into K pieces.
pub(crate) fn split_members(data: TensorData) -> Vec<TensorData> {
    let members = data.shape[0];
    let rest: Vec<usize> = data.shape[1..].to_vec();
    let bytes = data.as_bytes();
    let per = bytes.len() / members.max(1);
    (0..members)
        .map(|m| {
            TensorData::from_bytes_vec(
                bytes[m * per..(m + 1) * per].to_vec(),
                rest.clone(),
                data.dtype,
            )
        })
        .collect()
}

/// Whether a tensor carries the member axis (one value per member) or is shared by all.
pub fn is_batched<B: VmapBackend, const D: usize>(tensor: &Tensor<B, D>) -> bool {
    B::float_to_vmap(tensor.clone().into_primitive().tensor()).batched
}

/// The data of every member of a float tensor, in member order (K entries, each with the
/// tensor's logical shape). An unbatched tensor gives K copies of its data.
///
/// This is how to read a batched tensor: burn's `into_data` refuses it.
pub fn member_data<B: VmapBackend, const D: usize>(tensor: Tensor<B, D>) -> Vec<TensorData> {
    let tensor = B::float_to_vmap(tensor.into_primitive().tensor());
    let members = tensor.members;
    if tensor.batched {
        split_members(read_float::<B::Inner>(tensor.inner))
    } else {
        vec![read_float::<B::Inner>(tensor.inner); members]
    }
}

/// One number per member, read from a tensor of logical shape `[1]` (a per-member loss,
/// accuracy, ...).
///
/// # Errors
/// [`VmapError::NotPerMemberScalar`] if the tensor has more than one element per member.
pub fn member_values<B: VmapBackend>(tensor: Tensor<B, 1>) -> Result<Vec<f64>, VmapError> {
    let shape = tensor.shape().to_vec();
    if shape != [1] {
        return Err(VmapError::NotPerMemberScalar {
            what: "member_values".into(),
            shape,
        });
    }
    Ok(member_data(tensor)
        .into_iter()
        .map(|data| data.iter::<f64>().next().unwrap_or(f64::NAN))
        .collect())
}

/// A batched tensor of logical shape `[1]` holding `values[k]` for member k: how a per-member
/// hyperparameter (a dropout probability, a temperature, a loss weight) enters a forward pass.
///
/// # Errors
/// [`VmapError::MemberCountMismatch`] if `values.len()` is not the device's member count.
pub fn per_member<B: VmapBackend>(
    values: &[f64],
    device: &B::Device,
) -> Result<Tensor<B, 1>, VmapError> {
    if values.len() != device.members {
        return Err(VmapError::MemberCountMismatch {
            what: "per_member values".into(),
            expected: device.members,
            got: values.len(),
        });
    }
    let data = TensorData::new(values.to_vec(), [values.len(), 1])
        .convert::<<B::Inner as BackendTypes>::FloatElem>();
    let inner = <B::Inner as FloatTensorOps<B::Inner>>::float_from_data(data, &device.inner);
    let tensor = VmapTensor::batched(inner, device.members);
    Ok(Tensor::from_primitive(TensorPrimitive::Float(
        B::float_from_vmap(tensor),
    )))
}

/// Member `index` of a float tensor as an unbatched tensor (its logical shape, no member axis)
/// of a one-member group. The result is detached from the autodiff graph.
///
/// # Errors
/// [`VmapError::MemberOutOfRange`] if `index` is not below the member count.
pub fn member_tensor<B: VmapBackend, const D: usize>(
    tensor: Tensor<B, D>,
    index: usize,
) -> Result<Tensor<B, D>, VmapError> {
    let tensor = B::float_to_vmap(tensor.into_primitive().tensor());
    check_indices(&[index], tensor.members)?;
    let one = take_member::<B::Inner, FloatKind>(tensor, index);
    Ok(Tensor::from_primitive(TensorPrimitive::Float(
        B::float_from_vmap(one),
    )))
}

/// Stacks K tensors of the same shape (one per member) into one batched tensor of a K-member
/// group. Batched one-member inputs are accepted too. The result is detached.
///
/// # Errors
/// [`VmapError::NoMembers`] for an empty list, [`VmapError::ShapeMismatch`] if shapes differ.
pub fn stack_members<B: VmapBackend, const D: usize>(
    tensors: Vec<Tensor<B, D>>,
) -> Result<Tensor<B, D>, VmapError> {
    let first = tensors
        .first()
        .ok_or(VmapError::NoMembers)?
        .shape()
        .to_vec();
    for (member, t) in tensors.iter().enumerate() {
        let got = t.shape().to_vec();
        if got != first {
            return Err(VmapError::ShapeMismatch {
                path: "stack_members".into(),
                member,
                expected: first,
                got,
            });
        }
    }
    let parts = tensors
        .into_iter()
        .map(|t| {
            let v = B::float_to_vmap(t.into_primitive().tensor());
            let v = if v.batched {
                v
            } else {
                VmapTensor::unbatched(v.inner, 1)
            };
            take_member_or_self::<B::Inner>(v)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Tensor::from_primitive(TensorPrimitive::Float(
        B::float_from_vmap(cat_members::<B::Inner, FloatKind>(parts)),
    )))
}

fn take_member_or_self<I: Backend>(
    v: VmapTensor<I::FloatTensorPrimitive>,
) -> Result<VmapTensor<I::FloatTensorPrimitive>, VmapError> {
    if v.batched && v.members != 1 {
        return Err(VmapError::MemberCountMismatch {
            what: "stack_members input".into(),
            expected: 1,
            got: v.members,
        });
    }
    Ok(VmapTensor::new(v.inner, v.batched, 1))
}

#[cfg(test)]
mod tests {
    //! The public member primitives on inner tensors (what saturate-optim builds on).

    use burn::backend::NdArray;

    use super::*;

    type I = NdArray<f32>;

    /// A batched `[K, 2]` tensor whose member k holds `[k, 10 + k]`.
    fn batched(members: usize) -> VmapTensor<FloatTensor<I>> {
        let values: Vec<f32> = (0..members)
            .flat_map(|k| [k as f32, 10.0 + k as f32])
            .collect();
        let inner = I::float_from_data(TensorData::new(values, [members, 2]), &Default::default());
        VmapTensor::batched(inner, members)
    }

    fn values(t: FloatTensor<I>) -> (Vec<usize>, Vec<f32>) {
        let data = read_float::<I>(t);
        (data.shape.to_vec(), data.to_vec::<f32>().unwrap())
    }

    #[test]
    fn select_keeps_the_chosen_members_in_order() {
        let kept = select_float_members::<I>(batched(4), &[3, 1]).unwrap();
        assert!(kept.batched);
        assert_eq!(kept.members, 2);
        assert_eq!(values(kept.inner), (vec![2, 2], vec![3.0, 13.0, 1.0, 11.0]));
    }

    #[test]
    fn select_keeps_a_shared_tensor_shared() {
        let shared = VmapTensor::unbatched(batched(1).inner, 4);
        let kept = select_float_members::<I>(shared, &[0, 2]).unwrap();
        assert!(!kept.batched);
        assert_eq!(kept.members, 2);
    }

    #[test]
    fn select_rejects_an_index_out_of_range_and_copies_a_repeated_one() {
        assert!(matches!(
            select_float_members::<I>(batched(3), &[3]),
            Err(VmapError::MemberOutOfRange {
                index: 3,
                members: 3
            })
        ));
        let copied = select_float_members::<I>(batched(3), &[1, 1]).unwrap();
        assert_eq!(copied.members, 2);
        assert_eq!(
            values(copied.inner),
            (vec![2, 2], vec![1.0, 11.0, 1.0, 11.0]),
            "member 1 twice"
        );
    }

    #[test]
    fn member_axis_copies_a_shared_tensor_per_member() {
        let shared = VmapTensor::unbatched(batched(1).inner, 3);
        let (shape, data) = values(float_with_member_axis::<I>(shared));
        assert_eq!(shape, vec![3, 1, 2]);
        assert_eq!(data, vec![0.0, 10.0, 0.0, 10.0, 0.0, 10.0]);
    }

    #[test]
    fn append_adds_zero_members_after_the_old_ones() {
        let grown = append_zero_float_members::<I>(batched(2), 2);
        assert!(grown.batched);
        assert_eq!(grown.members, 4);
        let (shape, data) = values(grown.inner);
        assert_eq!(shape, vec![4, 2]);
        assert_eq!(data, vec![0.0, 10.0, 1.0, 11.0, 0.0, 0.0, 0.0, 0.0]);
    }
}
