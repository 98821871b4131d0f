//! Code the examples share: the backend they train on.

pub mod backend;
