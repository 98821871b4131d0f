//! Benchmarks of saturate-study (filled in below).
fn main() {}
