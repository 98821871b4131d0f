//! `saturate`: Optuna's command-line interface over saturate's storages.

fn main() {}
