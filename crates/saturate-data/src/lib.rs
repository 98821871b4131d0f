//! Dataset readers for saturate.
