//! Module parity: K members trained as one Batched group vs K independent runs.
