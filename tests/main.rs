//! The facade's one integration-test binary: every example runs here in its short mode and is
//! checked for something real (trials written, values finite, the journal loads in Python
//! Optuna).

mod examples_gpu;
mod examples_study;
mod examples_train;
// The GPU check's dry run builds and runs the wgpu binaries (scripts/test.sh runs it with
// `--features wgpu` after the NdArray tests: its build would re-link examples they run).
#[cfg(feature = "wgpu")]
mod gpu_check;
mod support;
