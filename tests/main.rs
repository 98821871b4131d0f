//! The facade's one integration-test binary: every example runs here in its short mode and is
//! checked for something real (trials written, values finite, the journal loads in Python
//! Optuna).

mod examples_gpu;
mod examples_study;
mod examples_train;
mod gpu_check;
mod support;
