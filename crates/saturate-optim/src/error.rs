//! The error type of saturate-optim.

use saturate_vmap::VmapError;

/// Errors of optimizer construction, stepping and group changes. Every variant names the
/// hyperparameter (`field`) or the operation it is about.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OptimError {
    /// A per-member list does not have one value per member.
    #[error("`{field}`: expected one value per member ({expected}), got {got} values")]
    WrongLength {
        /// The hyperparameter, e.g. `beta_1` or `momentum.dampening`.
        field: String,
        /// The number of members.
        expected: usize,
        /// The number of values given.
        got: usize,
    },
    /// A hyperparameter value is outside its valid range.
    #[error("`{field}`: member {member} has {value}, but it must be {expected}")]
    OutOfRange {
        /// The hyperparameter, e.g. `lr`, `beta_2`, `epsilon`.
        field: String,
        /// The member the value belongs to.
        member: usize,
        /// The rejected value.
        value: f64,
        /// The valid range, in words (e.g. `in [0, 1)`).
        expected: &'static str,
    },
    /// The optimizer and a group (or a record) have different member counts.
    #[error("{what}: the optimizer has {expected} members, got {got} (after pruning, retain the model and the optimizer with the same indices)")]
    MemberCountMismatch {
        /// What was being combined with the optimizer.
        what: String,
        /// The optimizer's member count.
        expected: usize,
        /// The other member count.
        got: usize,
    },
    /// Members added by `extend` use a setting that cannot differ between members of one
    /// group (a boolean option or the kind of gradient clipping).
    #[error("`{field}`: the group uses {existing}, the new members {got}; this setting is shared by all members")]
    Incompatible {
        /// The setting, e.g. `amsgrad`.
        field: String,
        /// The group's setting.
        existing: String,
        /// The new members' setting.
        got: String,
    },
    /// A learning-rate scheduler config was rejected by burn.
    #[error("learning-rate scheduler of member {member}: {reason}")]
    Scheduler {
        /// The member whose config was rejected.
        member: usize,
        /// burn's message.
        reason: String,
    },
    /// A member index or member count was rejected by saturate-vmap's rules.
    #[error(transparent)]
    Vmap(#[from] VmapError),
}
