//! saturate
