//! [`Members`]: one value per member of a group.

use core::ops::{Deref, Index};

use burn::tensor::Tensor;
use saturate_optim::HyperParam;
use saturate_vmap::{per_member, VmapBackend, VmapError};

/// One value per member of a group, in member order: what a `member()` suggestion returns,
/// what `report` and the objective take.
///
/// Usable as plain slices (`Deref<Target = [T]>`), as an optimizer hyperparameter
/// (`HyperParam::from(&lrs)`, or `lrs.to_hyper()`), and, for numbers, as a per-member tensor
/// inside `forward` ([`Members::to_tensor`]).
///
/// ```
/// use saturate_train::Members;
///
/// let lrs = Members::from(vec![0.1, 0.01, 0.001]);
/// assert_eq!(lrs.len(), 3);
/// assert_eq!(lrs.retained(&[0, 2]).as_slice(), &[0.1, 0.001]);
/// let optimizer_lr: saturate_optim::HyperParam = (&lrs).into();
/// # let _ = optimizer_lr;
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Members<T>(Vec<T>);

impl<T> Members<T> {
    /// The values as a slice.
    pub fn as_slice(&self) -> &[T] {
        &self.0
    }

    /// The values.
    pub fn into_vec(self) -> Vec<T> {
        self.0
    }

    /// Applies `f` to every member's value.
    pub fn map<U>(&self, f: impl FnMut(&T) -> U) -> Members<U> {
        Members(self.0.iter().map(f).collect())
    }

    /// The values of members `indices`, in that order (what `report` says goes on).
    ///
    /// # Panics
    /// If an index is out of range.
    pub fn retained(&self, indices: &[usize]) -> Members<T>
    where
        T: Clone,
    {
        Members(indices.iter().map(|&i| self.0[i].clone()).collect())
    }

    /// Keeps the members `indices`, in that order.
    ///
    /// # Panics
    /// If an index is out of range.
    pub fn retain(&mut self, indices: &[usize])
    where
        T: Clone,
    {
        *self = self.retained(indices);
    }

    /// Appends the values of new members.
    pub fn extend(&mut self, other: Members<T>) {
        self.0.extend(other.0);
    }
}

impl Members<f64> {
    /// The values as an optimizer hyperparameter (one value per member).
    pub fn to_hyper(&self) -> HyperParam {
        HyperParam::PerMember(self.0.clone())
    }

    /// A batched tensor of logical shape `[1]` holding member k's value: how a per-member
    /// hyperparameter (dropout probability, temperature, loss weight) enters `forward`.
    ///
    /// # Errors
    /// [`VmapError::MemberCountMismatch`] if the device's member count is not `len()`.
    pub fn to_tensor<B: VmapBackend>(&self, device: &B::Device) -> Result<Tensor<B, 1>, VmapError> {
        per_member::<B>(&self.0, device)
    }
}

impl<T> Deref for Members<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<T> Index<usize> for Members<T> {
    type Output = T;

    fn index(&self, index: usize) -> &T {
        &self.0[index]
    }
}

impl<T> From<Vec<T>> for Members<T> {
    fn from(values: Vec<T>) -> Self {
        Members(values)
    }
}

impl<T> FromIterator<T> for Members<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Members(iter.into_iter().collect())
    }
}

impl<T> IntoIterator for Members<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a, T> IntoIterator for &'a Members<T> {
    type Item = &'a T;
    type IntoIter = core::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl From<&Members<f64>> for HyperParam {
    fn from(members: &Members<f64>) -> Self {
        members.to_hyper()
    }
}

impl From<Members<f64>> for HyperParam {
    fn from(members: Members<f64>) -> Self {
        HyperParam::PerMember(members.0)
    }
}

/// What an objective returns for its members: one value each, or one list of objective values
/// each (multi-objective studies).
pub trait MemberValues {
    /// The member count.
    fn member_count(&self) -> usize;
    /// Member `index`'s objective values.
    fn values_of(&self, index: usize) -> Vec<f64>;
}

impl MemberValues for Members<f64> {
    fn member_count(&self) -> usize {
        self.len()
    }
    fn values_of(&self, index: usize) -> Vec<f64> {
        vec![self.0[index]]
    }
}

impl MemberValues for Members<Vec<f64>> {
    fn member_count(&self) -> usize {
        self.len()
    }
    fn values_of(&self, index: usize) -> Vec<f64> {
        self.0[index].clone()
    }
}
