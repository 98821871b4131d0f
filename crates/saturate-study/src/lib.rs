//! saturate-study
