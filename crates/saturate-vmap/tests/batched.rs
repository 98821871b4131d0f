//! Batched<M> and member helpers.
