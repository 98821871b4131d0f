//! Integration tests of saturate-data (one binary).
