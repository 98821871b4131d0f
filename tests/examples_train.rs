//! The training examples, run in their short mode.
