//! The error type of saturate-vmap.

/// Errors of group construction and per-member access.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VmapError {
    /// A group was asked for with zero members.
    #[error("a group needs at least one member, got 0")]
    NoMembers,
    /// Two things that must belong to the same group have different member counts.
    #[error("{what}: expected {expected} members, got {got}")]
    MemberCountMismatch {
        /// What was being combined or checked.
        what: String,
        /// The member count of the group.
        expected: usize,
        /// The member count that was given.
        got: usize,
    },
    /// A member index is not below the member count.
    #[error("member index {index} is out of range for a group of {members} members")]
    MemberOutOfRange {
        /// The index that was asked for.
        index: usize,
        /// The number of members.
        members: usize,
    },
    /// A member index appears twice where each member may be kept once.
    #[error("member index {index} is listed twice")]
    DuplicateMember {
        /// The repeated index.
        index: usize,
    },
    /// Members given to [`Batched::stack`](crate::Batched::stack) differ in a parameter's shape.
    #[error(
        "parameter `{path}`: member {member} has shape {got:?} but member 0 has shape {expected:?}; \
         members of one group must share every parameter shape (shape-changing hyperparameters \
         belong in different groups)"
    )]
    ShapeMismatch {
        /// The parameter's path in the module (e.g. `layers.0.weight`).
        path: String,
        /// The member whose shape differs.
        member: usize,
        /// The shape of member 0.
        expected: Vec<usize>,
        /// The shape of `member`.
        got: Vec<usize>,
    },
    /// Members of a module hold parameters of different kinds at the same position.
    #[error("parameter `{path}`: member {member} holds a {got} tensor where member 0 holds a {expected} tensor")]
    KindMismatch {
        /// The parameter's path in the module.
        path: String,
        /// The member whose parameter differs.
        member: usize,
        /// The kind in member 0 (`float`, `int` or `bool`).
        expected: &'static str,
        /// The kind in `member`.
        got: &'static str,
    },
    /// Members of a module differ in their structure (number of parameters).
    #[error("member {member} has {got} parameters but member 0 has {expected}")]
    StructureMismatch {
        /// The member whose structure differs.
        member: usize,
        /// The parameter count of member 0.
        expected: usize,
        /// The parameter count of `member`.
        got: usize,
    },
    /// A per-member value is not valid.
    #[error("{what}: member {member} has invalid value {value}: {reason}")]
    InvalidValue {
        /// What the value is (e.g. `dropout probability`).
        what: String,
        /// The member it belongs to.
        member: usize,
        /// The value.
        value: f64,
        /// Why it is invalid.
        reason: String,
    },
    /// A tensor that must hold one value per member holds more (or fewer) elements.
    #[error("{what}: expected logical shape [1] (one value per member), got {shape:?}")]
    NotPerMemberScalar {
        /// What was being read.
        what: String,
        /// The logical shape that was found.
        shape: Vec<usize>,
    },
}
