//! saturate-optim
