//! Interop with Python Optuna.
