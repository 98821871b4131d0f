//! End-to-end tests of the `saturate` binary.
