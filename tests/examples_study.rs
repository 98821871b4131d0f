//! The study-layer examples (no Burn), run in their short mode.
