//! [`HyperParam`]: one value for all members, or one value per member.

use burn::serde::{Deserialize, Serialize};

use crate::error::OptimError;

/// A scalar hyperparameter of a group of K members: one value shared by all members, or one
/// value per member (in member order).
///
/// Every scalar field of saturate's optimizer configs is a `HyperParam`; the `with_*` builders
/// take anything that converts into one:
///
/// ```
/// use saturate_optim::{GroupAdamConfig, HyperParam};
///
/// let config = GroupAdamConfig::new()
///     .with_beta_1(0.95)                      // shared by all members
///     .with_epsilon([1e-8, 1e-6, 1e-5, 1e-4]); // one per member (K = 4)
/// assert_eq!(config.beta_1, HyperParam::Shared(0.95));
/// assert_eq!(config.epsilon.resolve("epsilon", 4).unwrap()[3], 1e-4);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(crate = "burn::serde")]
pub enum HyperParam {
    /// The same value for every member.
    Shared(f64),
    /// `values[k]` for member k; the length must be the number of members.
    PerMember(Vec<f64>),
}

impl HyperParam {
    /// The K values, one per member.
    ///
    /// # Errors
    /// [`OptimError::WrongLength`] naming `field` if a per-member list does not have
    /// `members` values.
    pub fn resolve(&self, field: &str, members: usize) -> Result<Vec<f64>, OptimError> {
        match self {
            HyperParam::Shared(value) => Ok(vec![*value; members]),
            HyperParam::PerMember(values) if values.len() == members => Ok(values.clone()),
            HyperParam::PerMember(values) => Err(OptimError::WrongLength {
                field: field.to_string(),
                expected: members,
                got: values.len(),
            }),
        }
    }
}

impl From<f64> for HyperParam {
    fn from(value: f64) -> Self {
        HyperParam::Shared(value)
    }
}

impl From<f32> for HyperParam {
    fn from(value: f32) -> Self {
        HyperParam::Shared(value as f64)
    }
}

impl From<Vec<f64>> for HyperParam {
    fn from(values: Vec<f64>) -> Self {
        HyperParam::PerMember(values)
    }
}

impl From<&Vec<f64>> for HyperParam {
    fn from(values: &Vec<f64>) -> Self {
        HyperParam::PerMember(values.clone())
    }
}

impl From<&[f64]> for HyperParam {
    fn from(values: &[f64]) -> Self {
        HyperParam::PerMember(values.to_vec())
    }
}

impl<const N: usize> From<[f64; N]> for HyperParam {
    fn from(values: [f64; N]) -> Self {
        HyperParam::PerMember(values.to_vec())
    }
}

impl<const N: usize> From<&[f64; N]> for HyperParam {
    fn from(values: &[f64; N]) -> Self {
        HyperParam::PerMember(values.to_vec())
    }
}

/// The valid range of a hyperparameter.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Bound {
    /// `0 <= v < 1` (betas).
    UnitOpen,
    /// `0 <= v <= 1` (dampening).
    UnitClosed,
    /// `0 < v`, finite (epsilon).
    Positive,
    /// `0 <= v`, finite (learning rate, weight decay, momentum).
    NonNegative,
    /// `0 < v`, infinity allowed (clipping thresholds: infinity means no clipping).
    PositiveOrInfinite,
}

impl Bound {
    fn contains(self, v: f64) -> bool {
        match self {
            Bound::UnitOpen => (0.0..1.0).contains(&v),
            Bound::UnitClosed => (0.0..=1.0).contains(&v),
            Bound::Positive => v > 0.0 && v.is_finite(),
            Bound::NonNegative => v >= 0.0 && v.is_finite(),
            Bound::PositiveOrInfinite => v > 0.0,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Bound::UnitOpen => "in [0, 1)",
            Bound::UnitClosed => "in [0, 1]",
            Bound::Positive => "finite and > 0",
            Bound::NonNegative => "finite and >= 0",
            Bound::PositiveOrInfinite => "> 0 (infinity disables it)",
        }
    }
}

/// Checks every member's value against `bound`.
pub(crate) fn check(field: &str, values: &[f64], bound: Bound) -> Result<(), OptimError> {
    match values.iter().position(|&v| !bound.contains(v)) {
        None => Ok(()),
        Some(member) => Err(OptimError::OutOfRange {
            field: field.to_string(),
            member,
            value: values[member],
            expected: bound.describe(),
        }),
    }
}

/// Resolves `param` to K values and checks them.
pub(crate) fn resolve(
    param: &HyperParam,
    field: &str,
    members: usize,
    bound: Bound,
) -> Result<Vec<f64>, OptimError> {
    let values = param.resolve(field, members)?;
    check(field, &values, bound)?;
    Ok(values)
}

/// Like [`resolve`], for a hyperparameter burn stores as `f32`: the values are rounded to `f32`
/// (after the range check on the given values) so that the update matches burn bit for bit.
pub(crate) fn resolve_f32(
    param: &HyperParam,
    field: &str,
    members: usize,
    bound: Bound,
) -> Result<Vec<f32>, OptimError> {
    Ok(resolve(param, field, members, bound)?
        .into_iter()
        .map(|v| v as f32)
        .collect())
}

/// The entries `indices` of a per-member list.
pub(crate) fn pick<T: Copy>(values: &[T], indices: &[usize]) -> Vec<T> {
    indices.iter().map(|&i| values[i]).collect()
}

/// Appends the values of new members to an optional per-member list; a side without the
/// option takes `neutral` (the value that makes the option a no-op) for each of its members.
pub(crate) fn append_optional<T: Copy>(
    mine: Option<Vec<T>>,
    my_members: usize,
    theirs: Option<Vec<T>>,
    their_members: usize,
    neutral: T,
) -> Option<Vec<T>> {
    match (mine, theirs) {
        (None, None) => None,
        (mine, theirs) => {
            let mut values = mine.unwrap_or_else(|| vec![neutral; my_members]);
            values.extend(theirs.unwrap_or_else(|| vec![neutral; their_members]));
            Some(values)
        }
    }
}

/// Fails unless a shared setting is the same for the group and its new members.
pub(crate) fn same<T: PartialEq + core::fmt::Debug>(
    field: &str,
    existing: T,
    got: T,
) -> Result<(), OptimError> {
    if existing == got {
        Ok(())
    } else {
        Err(OptimError::Incompatible {
            field: field.to_string(),
            existing: format!("{existing:?}"),
            got: format!("{got:?}"),
        })
    }
}
