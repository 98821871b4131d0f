//! [`Batched<M>`]: a module whose every parameter carries the member axis.

use core::ops::Deref;

use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::Autodiff;
use burn::module::{AutodiffModule, HasAutodiffModule, Module, ModuleMapper, ModuleVisitor, Param};
use burn::tensor::backend::{Backend, BackendTypes};
use burn::tensor::{Bool, Int, Tensor, TensorMetadata, TensorPrimitive};

use crate::error::VmapError;
use crate::member::{cat_members, check_indices, select_members, take_member};
use crate::tensor::{materialize_copy, BoolKind, FloatKind, IntKind, VmapTensor};
use crate::vmap_backend::VmapBackend;
use crate::{Vmap, VmapDevice};

/// K members of one module trained as one batched model.
///
/// `Batched<M>` holds a module `M` built on a [`VmapBackend`] (`Vmap<B>` or
/// `Autodiff<Vmap<B>>`) whose every parameter, buffer and running state has a member axis of
/// size K. It dereferences to `M`, so the module's own `forward` runs all K members at once:
///
/// ```
/// use burn::backend::{Autodiff, NdArray};
/// use burn::nn::{Linear, LinearConfig};
/// use burn::tensor::Tensor;
/// use saturate_vmap::{Batched, Vmap, member_data};
///
/// type B = Autodiff<Vmap<NdArray>>;
/// let group: Batched<Linear<B>> =
///     Batched::init(4, &Default::default(), |device| LinearConfig::new(3, 2).init(device)).unwrap();
/// let x = Tensor::<B, 2>::ones([5, 3], &group.device()); // one batch shared by all members
/// let y = group.forward(x);                             // [5, 2] per member
/// assert_eq!(y.dims(), [5, 2]);
/// assert_eq!(member_data(y).len(), 4);
/// ```
///
/// `Clone` is shallow like burn's: a clone shares running-state cells with the original until
/// one of them is passed through `member`, `retain` or `extend`, which work on deep copies.
///
/// Running state (BatchNorm's statistics) follows burn's `RunningState` exactly: a train-mode
/// `forward` leaves its update pending until the next `value_sync`, so `Module::visit` and
/// `RunningState::value()` return the value from one update earlier, while `value_sync()`,
/// `valid()`, records and [`member`](Self::member) return the latest. Compare a member with a
/// module trained alone through the same kind of read: mixing the two shows one momentum
/// update of difference that is not there.
#[derive(Debug, Clone)]
pub struct Batched<M> {
    module: M,
    members: usize,
}

impl<M> Deref for Batched<M> {
    type Target = M;

    fn deref(&self) -> &M {
        &self.module
    }
}

impl<M> Batched<M> {
    /// The number of members, K.
    pub fn members(&self) -> usize {
        self.members
    }

    /// The batched module (every parameter with the member axis).
    pub fn module(&self) -> &M {
        &self.module
    }

    /// Consumes the group and returns the batched module.
    pub fn into_inner(self) -> M {
        self.module
    }

    /// Initialises K members: `init` runs once on a [`VmapDevice`] of `members` members, so
    /// every random initialiser draws K independent values; parameters that came out shared
    /// (constant initialisers such as zeros or ones) are then given one copy per member.
    ///
    /// # Errors
    /// [`VmapError::NoMembers`] if `members` is 0.
    pub fn init<B, F>(
        members: usize,
        device: &<B::Inner as BackendTypes>::Device,
        init: F,
    ) -> Result<Self, VmapError>
    where
        B: VmapBackend,
        M: Module<B>,
        F: FnOnce(&VmapDevice<B::Inner>) -> M,
    {
        if members == 0 {
            return Err(VmapError::NoMembers);
        }
        let device = VmapDevice::new(device.clone(), members);
        Self::from_module(init(&device))
    }

    /// [`init`](Self::init) with a fallible `init` (a module whose constructor returns a
    /// `Result`, such as one with per-member dropout): its error comes back as the `Err`.
    ///
    /// ```
    /// use burn::backend::{Autodiff, NdArray};
    /// use burn::nn::{Linear, LinearConfig};
    /// use saturate_vmap::{Batched, Vmap, VmapError};
    ///
    /// type B = Autodiff<Vmap<NdArray>>;
    /// let group: Batched<Linear<B>> = Batched::try_init(4, &Default::default(), |device| {
    ///     Ok::<_, VmapError>(LinearConfig::new(3, 2).init(device))
    /// })?;
    /// assert_eq!(group.members(), 4);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// `init`'s error; [`VmapError::NoMembers`] (converted with `From`) if `members` is 0.
    pub fn try_init<B, E, F>(
        members: usize,
        device: &<B::Inner as BackendTypes>::Device,
        init: F,
    ) -> Result<Self, E>
    where
        B: VmapBackend,
        M: Module<B>,
        E: From<VmapError>,
        F: FnOnce(&VmapDevice<B::Inner>) -> Result<M, E>,
    {
        if members == 0 {
            return Err(VmapError::NoMembers.into());
        }
        let device = VmapDevice::new(device.clone(), members);
        Ok(Self::from_module(init(&device)?)?)
    }

    /// Wraps a module built on a [`VmapDevice`]: its shared parameters are given one copy per
    /// member.
    ///
    /// # Errors
    /// [`VmapError::MemberCountMismatch`] if parameters belong to groups of different sizes.
    pub fn from_module<B>(module: M) -> Result<Self, VmapError>
    where
        B: VmapBackend,
        M: Module<B>,
    {
        let mut counter = MemberCount::default();
        module.visit(&mut counter);
        let members = counter.members.unwrap_or(1);
        if let Some((path, got)) = counter.mismatch {
            return Err(VmapError::MemberCountMismatch {
                what: format!("parameter `{path}`"),
                expected: members,
                got,
            });
        }
        // Already-batched values are written back unchanged, so running-state cells shared
        // with clones of `module` only ever gain member copies of shared values.
        let module = module.map(&mut Materialize { members });
        Ok(Self { module, members })
    }

    /// Builds a group from K unbatched modules (one per member, e.g. K models trained or
    /// loaded separately on a one-member `VmapDevice`).
    ///
    /// # Errors
    /// [`VmapError::NoMembers`] for an empty list; [`VmapError::ShapeMismatch`] naming the
    /// parameter path and both shapes if members differ in a parameter's shape;
    /// [`VmapError::StructureMismatch`] if they differ in their number of parameters.
    pub fn stack<B>(modules: Vec<M>) -> Result<Self, VmapError>
    where
        B: VmapBackend,
        M: DeepCopy<B>,
    {
        let members = modules.len();
        if members == 0 {
            return Err(VmapError::NoMembers);
        }
        // Deep copies sync running states (pending updates included) into fresh cells.
        let modules: Vec<M> = modules.iter().map(|m| m.deep_copy()).collect();
        let collected: Vec<Collect<B>> = modules
            .iter()
            .map(|m| {
                let mut c = Collect::default();
                m.visit(&mut c);
                c
            })
            .collect();
        let first = &collected[0];
        for (member, c) in collected.iter().enumerate() {
            check_same_params(&first.params, &c.params, member)?;
            // Each module must be one member: unbatched, or batched with a single member.
            if let Some(p) = c
                .params
                .iter()
                .find(|p| p.one_member.is_batched() && p.one_member.members() != 1)
            {
                return Err(VmapError::MemberCountMismatch {
                    what: format!(
                        "parameter `{}` of member {member} given to Batched::stack",
                        p.path
                    ),
                    expected: 1,
                    got: p.one_member.members(),
                });
            }
        }
        let mut columns: Vec<Vec<Stored<B::Inner>>> =
            (0..first.params.len()).map(|_| Vec::new()).collect();
        for c in collected {
            for (j, p) in c.params.into_iter().enumerate() {
                columns[j].push(p.one_member);
            }
        }
        let stacked: Vec<Stored<B::Inner>> = columns.into_iter().map(Stored::cat).collect();
        let mut modules = modules;
        let module = modules.swap_remove(0).map(&mut Replace {
            values: stacked.into_iter(),
        });
        Ok(Self { module, members })
    }

    /// Member `index` as an ordinary unbatched module (on a one-member device): it can be
    /// saved with burn's recorders and loaded into the same module type on the inner backend.
    ///
    /// # Errors
    /// [`VmapError::MemberOutOfRange`] if `index >= members()`.
    pub fn member<B>(&self, index: usize) -> Result<M, VmapError>
    where
        B: VmapBackend,
        M: DeepCopy<B>,
    {
        check_indices(&[index], self.members)?;
        Ok(self.module.deep_copy().map(&mut TakeMember { index }))
    }

    /// Keeps the members `indices`, in that order (e.g. drop pruned members: the compute
    /// shrinks with the group).
    ///
    /// # Errors
    /// [`VmapError::MemberOutOfRange`] / [`VmapError::DuplicateMember`] for a bad index;
    /// [`VmapError::NoMembers`] for an empty list.
    pub fn retain<B>(self, indices: &[usize]) -> Result<Self, VmapError>
    where
        B: VmapBackend,
        M: DeepCopy<B>,
    {
        if indices.is_empty() {
            return Err(VmapError::NoMembers);
        }
        check_indices(indices, self.members)?;
        let module = self.module.deep_copy().map(&mut SelectMembers { indices });
        Ok(Self {
            module,
            members: indices.len(),
        })
    }

    /// A group whose member `i` is a copy of this group's member `indices[i]`; an index may
    /// repeat (population-based training's *exploit*: a weak member becomes a copy of a
    /// strong one). Every parameter and running state (BatchNorm statistics, per-member
    /// dropout probabilities) is gathered along the member axis on the device: no member
    /// leaves the group's tensors, and a copy continues exactly as its source would (with the
    /// same inputs and hyperparameters). [`retain`](Self::retain) is the special case without
    /// repetition. Pair it with `GroupOptimizer::select` (saturate-optim) for the optimizer
    /// state.
    ///
    /// # Errors
    /// [`VmapError::MemberOutOfRange`] for a bad index; [`VmapError::NoMembers`] for an empty
    /// list.
    pub fn select<B>(self, indices: &[usize]) -> Result<Self, VmapError>
    where
        B: VmapBackend,
        M: DeepCopy<B>,
    {
        if indices.is_empty() {
            return Err(VmapError::NoMembers);
        }
        if let Some(&index) = indices.iter().find(|&&i| i >= self.members) {
            return Err(VmapError::MemberOutOfRange {
                index,
                members: self.members,
            });
        }
        let module = self.module.deep_copy().map(&mut SelectMembers { indices });
        Ok(Self {
            module,
            members: indices.len(),
        })
    }

    /// Appends the members of `other` after this group's (e.g. refill the slots of pruned
    /// members with fresh configurations).
    ///
    /// # Errors
    /// [`VmapError::ShapeMismatch`] / [`VmapError::StructureMismatch`] if the modules differ.
    pub fn extend<B>(self, other: Batched<M>) -> Result<Self, VmapError>
    where
        B: VmapBackend,
        M: DeepCopy<B>,
    {
        // Deep copies sync running states (pending updates included) into fresh cells.
        let module = self.module.deep_copy();
        let mut mine = Collect::<B>::default();
        module.visit(&mut mine);
        let mut theirs = Collect::<B>::default();
        other.module.deep_copy().visit(&mut theirs);
        check_same_params(&mine.params, &theirs.params, self.members)?;
        let members = self.members + other.members;
        let values: Vec<Stored<B::Inner>> = mine
            .params
            .into_iter()
            .zip(theirs.params)
            .map(|(a, b)| Stored::cat(vec![a.one_member, b.one_member]))
            .collect();
        let module = module.map(&mut Replace {
            values: values.into_iter(),
        });
        Ok(Self { module, members })
    }

    /// The group's device: the inner device with the member count.
    pub fn device<B>(&self) -> VmapDevice<B::Inner>
    where
        B: VmapBackend,
        M: DeepCopy<B>,
    {
        let inner = self
            .module
            .devices()
            .first()
            .map(|d| d.inner.clone())
            .unwrap_or_default();
        VmapDevice::new(inner, self.members)
    }
}

/// Modules that can be copied with running-state cells of their own.
///
/// burn's `RunningState` (BatchNorm statistics, per-member dropout probabilities) shares one
/// cell between clones, and mapping a module writes into its cells. [`Batched`] therefore
/// always maps a deep copy, so `member`, `retain` or `extend` never change another clone of the
/// group. Every burn module (anything with `#[derive(Module)]`) implements this trait through
/// burn's autodiff module conversions; copying shares the tensors and costs no data copy.
pub trait DeepCopy<B: burn::tensor::backend::Backend>: Module<B> {
    /// A copy whose running states live in fresh cells.
    fn deep_copy(&self) -> Self;
}

impl<I: Backend, C: CheckpointStrategy, M> DeepCopy<Autodiff<Vmap<I>, C>> for M
where
    M: AutodiffModule<Autodiff<Vmap<I>, C>>,
{
    fn deep_copy(&self) -> Self {
        M::from_inner(self.valid())
    }
}

impl<I: Backend, M> DeepCopy<Vmap<I>> for M
where
    M: Module<Vmap<I>> + HasAutodiffModule<Autodiff<Vmap<I>>>,
{
    fn deep_copy(&self) -> Self {
        <M as HasAutodiffModule<Autodiff<Vmap<I>>>>::TrainModule::from_inner(self.clone()).valid()
    }
}

/// A parameter value of any kind, in the [`VmapTensor`] form.
enum Stored<I: Backend> {
    Float(VmapTensor<I::FloatTensorPrimitive>),
    Int(VmapTensor<I::IntTensorPrimitive>),
    Bool(VmapTensor<I::BoolTensorPrimitive>),
}

impl<I: Backend> Stored<I> {
    fn is_batched(&self) -> bool {
        match self {
            Stored::Float(t) => t.batched,
            Stored::Int(t) => t.batched,
            Stored::Bool(t) => t.batched,
        }
    }

    fn members(&self) -> usize {
        match self {
            Stored::Float(t) => t.members,
            Stored::Int(t) => t.members,
            Stored::Bool(t) => t.members,
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Stored::Float(_) => "float",
            Stored::Int(_) => "int",
            Stored::Bool(_) => "bool",
        }
    }

    /// Concatenates the members of parameters of one kind (callers check kinds first).
    fn cat(parts: Vec<Self>) -> Self {
        macro_rules! cat_kind {
            ($variant:ident, $kind:ty) => {
                Stored::$variant(cat_members::<I, $kind>(
                    parts
                        .into_iter()
                        .map(|p| match p {
                            Stored::$variant(t) => t,
                            _ => unreachable!("parameter kinds are checked before concatenating"),
                        })
                        .collect(),
                ))
            };
        }
        match &parts[0] {
            Stored::Float(_) => cat_kind!(Float, FloatKind),
            Stored::Int(_) => cat_kind!(Int, IntKind),
            Stored::Bool(_) => cat_kind!(Bool, BoolKind),
        }
    }
}

/// Checks that two modules' parameters agree, position by position, in kind and shape.
fn check_same_params<I: Backend>(
    first: &[CollectedParam<I>],
    other: &[CollectedParam<I>],
    member: usize,
) -> Result<(), VmapError> {
    if first.len() != other.len() {
        return Err(VmapError::StructureMismatch {
            member,
            expected: first.len(),
            got: other.len(),
        });
    }
    for (a, b) in first.iter().zip(other) {
        if a.one_member.kind() != b.one_member.kind() {
            return Err(VmapError::KindMismatch {
                path: b.path.clone(),
                member,
                expected: a.one_member.kind(),
                got: b.one_member.kind(),
            });
        }
        if a.shape != b.shape {
            return Err(VmapError::ShapeMismatch {
                path: b.path.clone(),
                member,
                expected: a.shape.clone(),
                got: b.shape.clone(),
            });
        }
    }
    Ok(())
}

struct CollectedParam<I: Backend> {
    path: String,
    shape: Vec<usize>,
    one_member: Stored<I>,
}

/// Collects every parameter (float, int, bool) in visit order, with its path.
struct Collect<B: VmapBackend> {
    path: Vec<String>,
    params: Vec<CollectedParam<B::Inner>>,
}

impl<B: VmapBackend> Default for Collect<B> {
    fn default() -> Self {
        Self {
            path: Vec::new(),
            params: Vec::new(),
        }
    }
}

impl<B: VmapBackend> Collect<B> {
    fn push(&mut self, shape: Vec<usize>, value: Stored<B::Inner>) {
        self.params.push(CollectedParam {
            path: self.path.join("."),
            shape,
            one_member: value,
        });
    }
}

impl<B: VmapBackend> ModuleVisitor<B> for Collect<B> {
    fn enter_module(&mut self, name: &str, _container_type: &str) {
        self.path.push(name.to_string());
    }

    fn exit_module(&mut self, _name: &str, _container_type: &str) {
        self.path.pop();
    }

    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        let v = B::float_to_vmap(param.val().into_primitive().tensor());
        self.push(v.shape().to_vec(), Stored::Float(v));
    }

    fn visit_int<const D: usize>(&mut self, param: &Param<Tensor<B, D, Int>>) {
        let v = B::int_to_vmap(param.val().into_primitive());
        self.push(v.shape().to_vec(), Stored::Int(v));
    }

    fn visit_bool<const D: usize>(&mut self, param: &Param<Tensor<B, D, Bool>>) {
        let v = B::bool_to_vmap(param.val().into_primitive());
        self.push(v.shape().to_vec(), Stored::Bool(v));
    }
}

/// Finds the member count of a module's batched parameters, and any disagreement.
#[derive(Default)]
struct MemberCount {
    path: Vec<String>,
    members: Option<usize>,
    mismatch: Option<(String, usize)>,
}

impl MemberCount {
    fn see(&mut self, members: usize) {
        match self.members {
            None => self.members = Some(members),
            Some(m) if m != members && self.mismatch.is_none() => {
                self.mismatch = Some((self.path.join("."), members));
            }
            _ => {}
        }
    }
}

impl<B: VmapBackend> ModuleVisitor<B> for MemberCount {
    fn enter_module(&mut self, name: &str, _container_type: &str) {
        self.path.push(name.to_string());
    }

    fn exit_module(&mut self, _name: &str, _container_type: &str) {
        self.path.pop();
    }

    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        let v = B::float_to_vmap(param.val().into_primitive().tensor());
        self.see(v.members);
    }

    fn visit_int<const D: usize>(&mut self, param: &Param<Tensor<B, D, Int>>) {
        self.see(B::int_to_vmap(param.val().into_primitive()).members);
    }

    fn visit_bool<const D: usize>(&mut self, param: &Param<Tensor<B, D, Bool>>) {
        self.see(B::bool_to_vmap(param.val().into_primitive()).members);
    }
}

/// Applies a per-kind transformation to every parameter, keeping ids, mappers and
/// `require_grad`.
trait ParamTransform<I: Backend> {
    fn float(
        &mut self,
        t: VmapTensor<I::FloatTensorPrimitive>,
    ) -> VmapTensor<I::FloatTensorPrimitive>;
    fn int(&mut self, t: VmapTensor<I::IntTensorPrimitive>) -> VmapTensor<I::IntTensorPrimitive>;
    fn bool(&mut self, t: VmapTensor<I::BoolTensorPrimitive>)
        -> VmapTensor<I::BoolTensorPrimitive>;
}

macro_rules! mapper_from_transform {
    ($ty:ident $(<$lt:lifetime>)?) => {
        impl<$($lt,)? B: VmapBackend> ModuleMapper<B> for $ty$(<$lt>)? {
            fn map_float<const D: usize>(&mut self, param: Param<Tensor<B, D>>) -> Param<Tensor<B, D>> {
                let (id, tensor, mapper) = param.consume();
                let require_grad = tensor.is_require_grad();
                let v = ParamTransform::<B::Inner>::float(self, B::float_to_vmap(tensor.into_primitive().tensor()));
                let tensor = Tensor::from_primitive(TensorPrimitive::Float(B::float_from_vmap(v)));
                Param::from_mapped_value(id, tensor.set_require_grad(require_grad), mapper)
            }

            fn map_int<const D: usize>(&mut self, param: Param<Tensor<B, D, Int>>) -> Param<Tensor<B, D, Int>> {
                let (id, tensor, mapper) = param.consume();
                let v = ParamTransform::<B::Inner>::int(self, B::int_to_vmap(tensor.into_primitive()));
                Param::from_mapped_value(id, Tensor::from_primitive(B::int_from_vmap(v)), mapper)
            }

            fn map_bool<const D: usize>(&mut self, param: Param<Tensor<B, D, Bool>>) -> Param<Tensor<B, D, Bool>> {
                let (id, tensor, mapper) = param.consume();
                let v = ParamTransform::<B::Inner>::bool(self, B::bool_to_vmap(tensor.into_primitive()));
                Param::from_mapped_value(id, Tensor::from_primitive(B::bool_from_vmap(v)), mapper)
            }
        }
    };
}

/// Gives shared parameters one copy per member.
struct Materialize {
    members: usize,
}

impl<I: Backend> ParamTransform<I> for Materialize {
    fn float(
        &mut self,
        t: VmapTensor<I::FloatTensorPrimitive>,
    ) -> VmapTensor<I::FloatTensorPrimitive> {
        let t = VmapTensor::new(t.inner, t.batched, self.members);
        VmapTensor::batched(materialize_copy::<I, FloatKind>(t), self.members)
    }
    fn int(&mut self, t: VmapTensor<I::IntTensorPrimitive>) -> VmapTensor<I::IntTensorPrimitive> {
        let t = VmapTensor::new(t.inner, t.batched, self.members);
        VmapTensor::batched(materialize_copy::<I, IntKind>(t), self.members)
    }
    fn bool(
        &mut self,
        t: VmapTensor<I::BoolTensorPrimitive>,
    ) -> VmapTensor<I::BoolTensorPrimitive> {
        let t = VmapTensor::new(t.inner, t.batched, self.members);
        VmapTensor::batched(materialize_copy::<I, BoolKind>(t), self.members)
    }
}
mapper_from_transform!(Materialize);

/// Keeps some members.
struct SelectMembers<'a> {
    indices: &'a [usize],
}

impl<I: Backend> ParamTransform<I> for SelectMembers<'_> {
    fn float(
        &mut self,
        t: VmapTensor<I::FloatTensorPrimitive>,
    ) -> VmapTensor<I::FloatTensorPrimitive> {
        select_members::<I, FloatKind>(t, self.indices)
    }
    fn int(&mut self, t: VmapTensor<I::IntTensorPrimitive>) -> VmapTensor<I::IntTensorPrimitive> {
        select_members::<I, IntKind>(t, self.indices)
    }
    fn bool(
        &mut self,
        t: VmapTensor<I::BoolTensorPrimitive>,
    ) -> VmapTensor<I::BoolTensorPrimitive> {
        select_members::<I, BoolKind>(t, self.indices)
    }
}
mapper_from_transform!(SelectMembers<'a>);

/// Takes one member as an unbatched module.
struct TakeMember {
    index: usize,
}

impl<I: Backend> ParamTransform<I> for TakeMember {
    fn float(
        &mut self,
        t: VmapTensor<I::FloatTensorPrimitive>,
    ) -> VmapTensor<I::FloatTensorPrimitive> {
        take_member::<I, FloatKind>(t, self.index)
    }
    fn int(&mut self, t: VmapTensor<I::IntTensorPrimitive>) -> VmapTensor<I::IntTensorPrimitive> {
        take_member::<I, IntKind>(t, self.index)
    }
    fn bool(
        &mut self,
        t: VmapTensor<I::BoolTensorPrimitive>,
    ) -> VmapTensor<I::BoolTensorPrimitive> {
        take_member::<I, BoolKind>(t, self.index)
    }
}
mapper_from_transform!(TakeMember);

/// Replaces parameters, in visit order, with given values.
struct Replace<It> {
    values: It,
}

impl<B: VmapBackend, It: Iterator<Item = Stored<B::Inner>>> ModuleMapper<B> for Replace<It> {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<B, D>>) -> Param<Tensor<B, D>> {
        let (id, tensor, mapper) = param.consume();
        let require_grad = tensor.is_require_grad();
        let v = self.float(B::float_to_vmap(tensor.into_primitive().tensor()));
        let tensor = Tensor::from_primitive(TensorPrimitive::Float(B::float_from_vmap(v)));
        Param::from_mapped_value(id, tensor.set_require_grad(require_grad), mapper)
    }

    fn map_int<const D: usize>(
        &mut self,
        param: Param<Tensor<B, D, Int>>,
    ) -> Param<Tensor<B, D, Int>> {
        let (id, tensor, mapper) = param.consume();
        let v = self.int(B::int_to_vmap(tensor.into_primitive()));
        Param::from_mapped_value(id, Tensor::from_primitive(B::int_from_vmap(v)), mapper)
    }

    fn map_bool<const D: usize>(
        &mut self,
        param: Param<Tensor<B, D, Bool>>,
    ) -> Param<Tensor<B, D, Bool>> {
        let (id, tensor, mapper) = param.consume();
        let v = self.bool(B::bool_to_vmap(tensor.into_primitive()));
        Param::from_mapped_value(id, Tensor::from_primitive(B::bool_from_vmap(v)), mapper)
    }
}

impl<I: Backend, It: Iterator<Item = Stored<I>>> Replace<It> {
    fn float(
        &mut self,
        _: VmapTensor<I::FloatTensorPrimitive>,
    ) -> VmapTensor<I::FloatTensorPrimitive> {
        match self.values.next() {
            Some(Stored::Float(t)) => t,
            _ => unreachable!("saturate-vmap: parameter order changed between visit and map"),
        }
    }
    fn int(&mut self, _: VmapTensor<I::IntTensorPrimitive>) -> VmapTensor<I::IntTensorPrimitive> {
        match self.values.next() {
            Some(Stored::Int(t)) => t,
            _ => unreachable!("saturate-vmap: parameter order changed between visit and map"),
        }
    }
    fn bool(
        &mut self,
        _: VmapTensor<I::BoolTensorPrimitive>,
    ) -> VmapTensor<I::BoolTensorPrimitive> {
        match self.values.next() {
            Some(Stored::Bool(t)) => t,
            _ => unreachable!("saturate-vmap: parameter order changed between visit and map"),
        }
    }
}
