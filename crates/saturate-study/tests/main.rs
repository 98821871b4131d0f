//! The one integration-test binary of saturate-study.

mod common;
mod concurrency;
mod errors;
mod gp;
mod interop;
mod pruners;
mod rdb;
mod samplers;
mod storage;
mod study;
