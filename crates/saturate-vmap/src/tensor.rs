//! The tensor primitive of [`Vmap`](crate::Vmap) and the helpers every batching rule uses.

use burn_backend::quantization::QuantScheme;
use burn_backend::{Backend, DType, QTensorPrimitive, Shape, TensorMetadata};

/// A tensor of the [`Vmap`](crate::Vmap) backend: an inner tensor plus the member axis.
///
/// A *batched* tensor physically has shape `[K, ...logical]` (one slice per member); an
/// *unbatched* one has the logical shape and is shared by all `K` members. Shape queries
/// answer the logical shape, so module code never sees the member axis.
#[derive(Clone, Debug)]
pub struct VmapTensor<P> {
    pub(crate) inner: P,
    pub(crate) batched: bool,
    pub(crate) members: usize,
}

impl<P> VmapTensor<P> {
    /// Wraps an inner tensor whose first axis is the member axis.
    pub(crate) fn batched(inner: P, members: usize) -> Self {
        Self {
            inner,
            batched: true,
            members,
        }
    }

    /// Wraps an inner tensor shared by all members.
    pub(crate) fn unbatched(inner: P, members: usize) -> Self {
        Self {
            inner,
            batched: false,
            members,
        }
    }

    /// Wraps `inner` with the given batching.
    pub(crate) fn new(inner: P, batched: bool, members: usize) -> Self {
        Self {
            inner,
            batched,
            members,
        }
    }

    /// Whether the tensor carries the member axis.
    pub fn is_batched(&self) -> bool {
        self.batched
    }

    /// The number of members of the group this tensor belongs to.
    pub fn members(&self) -> usize {
        self.members
    }

    /// The inner tensor (with the member axis first when batched).
    pub fn inner(&self) -> &P {
        &self.inner
    }

    /// Consumes the wrapper and returns the inner tensor.
    pub fn into_inner(self) -> P {
        self.inner
    }

    /// Applies `f` to the inner tensor, keeping the batching.
    pub(crate) fn map<Q>(self, f: impl FnOnce(P) -> Q) -> VmapTensor<Q> {
        VmapTensor {
            inner: f(self.inner),
            batched: self.batched,
            members: self.members,
        }
    }

    /// The physical dim of logical dim `dim`.
    pub(crate) fn dim(&self, dim: usize) -> usize {
        dim + self.batched as usize
    }
}

impl<P: TensorMetadata> TensorMetadata for VmapTensor<P> {
    fn dtype(&self) -> DType {
        self.inner.dtype()
    }

    fn shape(&self) -> Shape {
        let shape = self.inner.shape();
        if self.batched {
            shape.iter().skip(1).copied().collect()
        } else {
            shape
        }
    }

    fn rank(&self) -> usize {
        self.inner.rank() - self.batched as usize
    }
}

/// A quantized tensor of the [`Vmap`](crate::Vmap) backend. Quantization is not supported under
/// vmap: every quantized op panics with a message naming it.
#[derive(Clone, Debug)]
pub struct VmapQTensor<Q> {
    pub(crate) inner: Q,
    pub(crate) batched: bool,
}

impl<Q: TensorMetadata> TensorMetadata for VmapQTensor<Q> {
    fn dtype(&self) -> DType {
        self.inner.dtype()
    }

    fn shape(&self) -> Shape {
        let shape = self.inner.shape();
        if self.batched {
            shape.iter().skip(1).copied().collect()
        } else {
            shape
        }
    }
}

impl<Q: QTensorPrimitive> QTensorPrimitive for VmapQTensor<Q> {
    fn scheme(&self) -> &QuantScheme {
        self.inner.scheme()
    }
}

/// The shape operations a batching rule needs, for each tensor kind of the inner backend.
///
/// `Float`, `Int` and `Bool` primitives of `B` each implement it through a marker type, so the
/// alignment helpers below are written once.
pub(crate) trait Kind<B: Backend> {
    type P: TensorMetadata;
    fn reshape(tensor: Self::P, shape: Shape) -> Self::P;
    fn expand(tensor: Self::P, shape: Shape) -> Self::P;
    fn select(tensor: Self::P, dim: usize, indices: B::IntTensorPrimitive) -> Self::P;
    fn cat(tensors: Vec<Self::P>, dim: usize) -> Self::P;
    fn repeat_dim(tensor: Self::P, dim: usize, times: usize) -> Self::P;
    fn device(tensor: &Self::P) -> B::Device;
}

/// Marker for float primitives.
pub(crate) struct FloatKind;
/// Marker for int primitives.
pub(crate) struct IntKind;
/// Marker for bool primitives.
pub(crate) struct BoolKind;

impl<B: Backend> Kind<B> for FloatKind {
    type P = B::FloatTensorPrimitive;
    fn reshape(tensor: Self::P, shape: Shape) -> Self::P {
        float_reshape::<B>(tensor, shape)
    }
    fn expand(tensor: Self::P, shape: Shape) -> Self::P {
        B::float_expand(tensor, shape)
    }
    fn select(tensor: Self::P, dim: usize, indices: B::IntTensorPrimitive) -> Self::P {
        B::float_select(tensor, dim, indices)
    }
    fn cat(tensors: Vec<Self::P>, dim: usize) -> Self::P {
        B::float_cat(tensors, dim)
    }
    fn repeat_dim(tensor: Self::P, dim: usize, times: usize) -> Self::P {
        B::float_repeat_dim(tensor, dim, times)
    }
    fn device(tensor: &Self::P) -> B::Device {
        B::float_device(tensor)
    }
}

impl<B: Backend> Kind<B> for IntKind {
    type P = B::IntTensorPrimitive;
    fn reshape(tensor: Self::P, shape: Shape) -> Self::P {
        int_reshape::<B>(tensor, shape)
    }
    fn expand(tensor: Self::P, shape: Shape) -> Self::P {
        B::int_expand(tensor, shape)
    }
    fn select(tensor: Self::P, dim: usize, indices: B::IntTensorPrimitive) -> Self::P {
        B::int_select(tensor, dim, indices)
    }
    fn cat(tensors: Vec<Self::P>, dim: usize) -> Self::P {
        B::int_cat(tensors, dim)
    }
    fn repeat_dim(tensor: Self::P, dim: usize, times: usize) -> Self::P {
        B::int_repeat_dim(tensor, dim, times)
    }
    fn device(tensor: &Self::P) -> B::Device {
        B::int_device(tensor)
    }
}

impl<B: Backend> Kind<B> for BoolKind {
    type P = B::BoolTensorPrimitive;
    fn reshape(tensor: Self::P, shape: Shape) -> Self::P {
        bool_reshape::<B>(tensor, shape)
    }
    fn expand(tensor: Self::P, shape: Shape) -> Self::P {
        B::bool_expand(tensor, shape)
    }
    fn select(tensor: Self::P, dim: usize, indices: B::IntTensorPrimitive) -> Self::P {
        B::bool_select(tensor, dim, indices)
    }
    fn cat(tensors: Vec<Self::P>, dim: usize) -> Self::P {
        B::bool_cat(tensors, dim)
    }
    fn repeat_dim(tensor: Self::P, dim: usize, times: usize) -> Self::P {
        B::bool_repeat_dim(tensor, dim, times)
    }
    fn device(tensor: &Self::P) -> B::Device {
        B::bool_device(tensor)
    }
}

/// `B::float_reshape`, without a copy on NdArray when the array is contiguous
/// (`kernels/ndarray/reshape.rs`), and through the flat shape where burn's own analysis would
/// give wrong strides ([`reshape_through_flat`](crate::lowering::reshape_through_flat)).
pub(crate) fn float_reshape<B: Backend>(
    p: B::FloatTensorPrimitive,
    shape: Shape,
) -> B::FloatTensorPrimitive {
    crate::kernels::ndarray::reshape(p, &shape).unwrap_or_else(|p| {
        if crate::lowering::reshape_through_flat::<B>(&p.shape(), &shape) {
            let flat = Shape::new([shape.num_elements()]);
            B::float_reshape(B::float_reshape(p, flat), shape)
        } else {
            B::float_reshape(p, shape)
        }
    })
}

/// `B::int_reshape`, as [`float_reshape`].
pub(crate) fn int_reshape<B: Backend>(
    p: B::IntTensorPrimitive,
    shape: Shape,
) -> B::IntTensorPrimitive {
    crate::kernels::ndarray::reshape(p, &shape).unwrap_or_else(|p| {
        if crate::lowering::reshape_through_flat::<B>(&p.shape(), &shape) {
            let flat = Shape::new([shape.num_elements()]);
            B::int_reshape(B::int_reshape(p, flat), shape)
        } else {
            B::int_reshape(p, shape)
        }
    })
}

/// `B::bool_reshape`, as [`float_reshape`].
pub(crate) fn bool_reshape<B: Backend>(
    p: burn_backend::tensor::BoolTensor<B>,
    shape: Shape,
) -> burn_backend::tensor::BoolTensor<B> {
    crate::kernels::ndarray::reshape(p, &shape).unwrap_or_else(|p| {
        if crate::lowering::reshape_through_flat::<B>(&p.shape(), &shape) {
            let flat = Shape::new([shape.num_elements()]);
            B::bool_reshape(B::bool_reshape(p, flat), shape)
        } else {
            B::bool_reshape(p, shape)
        }
    })
}

/// Panics when two operands belong to groups of different sizes.
pub(crate) fn check_members(op: &str, a: usize, b: usize) -> usize {
    assert!(
        a == b,
        "saturate-vmap: `{op}` got operands from groups of {a} and {b} members; \
         tensors of different groups (or different `VmapDevice`s) cannot be mixed"
    );
    a
}

/// The inner tensor with a size-1 member axis in front (`[1, ...logical]`) when unbatched,
/// or as is when batched. Broadcasting ops then apply it to every member.
pub(crate) fn front<B: Backend, K: Kind<B>>(tensor: VmapTensor<K::P>) -> K::P {
    if tensor.batched {
        tensor.inner
    } else {
        let mut shape = tensor.inner.shape();
        shape.insert(0, 1);
        K::reshape(tensor.inner, shape)
    }
}

/// The inner tensor with a real member axis of size `K` (`[K, ...logical]`); an unbatched
/// tensor is expanded (a view where the inner backend supports it).
pub(crate) fn materialize<B: Backend, K: Kind<B>>(tensor: VmapTensor<K::P>) -> K::P {
    if tensor.batched {
        tensor.inner
    } else {
        let mut shape = tensor.inner.shape();
        shape.insert(0, tensor.members);
        K::expand(front::<B, K>(tensor), shape)
    }
}

/// Like [`materialize`], but always a copy with its own storage (for parameters, which are
/// updated member by member).
pub(crate) fn materialize_copy<B: Backend, K: Kind<B>>(tensor: VmapTensor<K::P>) -> K::P {
    if tensor.batched {
        tensor.inner
    } else {
        let members = tensor.members;
        K::repeat_dim(front::<B, K>(tensor), 0, members)
    }
}

/// Aligns two operands of a broadcasting op. Returns the inner operands, whether the result is
/// batched, and the member count. If only one operand is batched, the other gets a size-1
/// member axis in front.
pub(crate) fn align2<B: Backend, K1: Kind<B>, K2: Kind<B>>(
    op: &str,
    a: VmapTensor<K1::P>,
    b: VmapTensor<K2::P>,
) -> (K1::P, K2::P, bool, usize) {
    let members = check_members(op, a.members, b.members);
    match (a.batched, b.batched) {
        (false, false) => (a.inner, b.inner, false, members),
        (true, true) => (a.inner, b.inner, true, members),
        _ => (front::<B, K1>(a), front::<B, K2>(b), true, members),
    }
}

/// Aligns many operands of the same kind (e.g. `cat`): all unbatched stay as they are;
/// otherwise every operand is materialized with a real member axis.
pub(crate) fn align_many<B: Backend, K: Kind<B>>(
    op: &str,
    tensors: Vec<VmapTensor<K::P>>,
) -> (Vec<K::P>, bool, usize) {
    let members = tensors
        .iter()
        .map(|t| t.members)
        .reduce(|a, b| check_members(op, a, b))
        .unwrap_or(1);
    let batched = tensors.iter().any(|t| t.batched);
    let inner = if batched {
        tensors
            .into_iter()
            .map(|t| materialize::<B, K>(t))
            .collect()
    } else {
        tensors.into_iter().map(|t| t.inner).collect()
    };
    (inner, batched, members)
}

/// The physical shape for a logical `shape` of a batched tensor with `members` members.
pub(crate) fn batched_shape(members: usize, shape: &Shape) -> Shape {
    let mut dims = shape.clone();
    dims.insert(0, members);
    dims
}

/// Panics for ops that cannot be batched, with a message that names the op.
#[track_caller]
pub(crate) fn unsupported(op: &str, why: &str) -> ! {
    panic!("saturate-vmap: `{op}` is not supported under vmap: {why}")
}

/// The data of a one-member batched tensor without its member axis (`[1, ...]` -> `[...]`): a
/// group of one member is unambiguous, so it reads like an unbatched tensor.
pub(crate) fn strip_single_member(
    mut data: burn_backend::TensorData,
    batched: bool,
) -> burn_backend::TensorData {
    if batched {
        data.shape.remove(0);
    }
    data
}

/// The error `into_data` returns for a batched tensor of several members.
pub(crate) fn batched_read_error(op: &str) -> burn_backend::ExecutionError {
    burn_backend::ExecutionError::WithContext {
        reason: format!(
            "saturate-vmap: `{op}` cannot read a batched tensor: it holds one value per member. \
             Read it with `saturate_vmap::member_data` / `member_values` (one TensorData or \
             value per member), or take one member with `Batched::member`"
        ),
    }
}

/// Wraps an inner-backend tensor as a [`VmapTensor`]: with `batched`, its first axis must be
/// the member axis of size `members`. Meant for tests and for crates that build batched
/// tensors from raw parts; [`crate::member`] has the typed helpers.
pub fn from_inner<P>(inner: P, batched: bool, members: usize) -> VmapTensor<P> {
    VmapTensor::new(inner, batched, members)
}
