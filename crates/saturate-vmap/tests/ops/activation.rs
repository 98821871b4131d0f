use crate::harness::{Tol, Val};
