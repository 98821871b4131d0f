//! Parity with unmodified burn-optim: K = 4 members with four different values of every
//! hyperparameter, trained 50 steps as one group, against each member trained alone with
//! burn-optim's own `Sgd` / `Adam` / `AdamW` on `Autodiff<NdArray>`. Every parameter must agree
//! within `atol 1e-6` (the golden values are burn-optim's own runs, computed in the test).

mod conv;
mod optimizers;
mod schedulers;

use burn::optim::Optimizer;
use saturate_optim::{GroupOptimizer, UpdateRule};

use crate::common::*;

/// Four learning rates, one per member.
pub const LRS: [f64; K] = [0.002, 0.01, 0.03, 0.05];

/// Trains a fresh group with `optim` and each member alone with `reference(k)`; member k uses
/// `reference_lrs[k][step]` alone and the group gets `group_lr(step)`. The group is trained
/// twice, with the whole-module update and with one update per parameter tensor.
pub fn parity_with<R, O>(
    what: &str,
    optim: GroupOptimizer<R, Mlp<GB>, GB>,
    reference: impl Fn(usize) -> O,
    mut group_lr: impl FnMut(usize) -> Vec<f64>,
    reference_lrs: &[Vec<f64>],
) where
    R: UpdateRule,
    O: Optimizer<Mlp<RB>, RB>,
{
    let group = init_group(K);
    let initial = group_params(&group);
    let models = references(&group);
    let lrs: Vec<Vec<f64>> = (0..STEPS).map(&mut group_lr).collect();
    let mut per_parameter = optim.clone().with_fused_update(false);
    let mut fused = optim.with_fused_update(true);
    let got_fused = group_params(&train_group(group.clone(), &mut fused, 0..STEPS, |s| {
        lrs[s].clone()
    }));
    let got_per_parameter = group_params(&train_group(group, &mut per_parameter, 0..STEPS, |s| {
        lrs[s].clone()
    }));
    for (k, model) in models.into_iter().enumerate() {
        let mut reference_optim = reference(k);
        let model = train_reference(model, &mut reference_optim, 0..STEPS, |s| {
            reference_lrs[k][s]
        });
        let fused_what = format!("{what} (whole-module update)");
        assert_member_matches(&fused_what, k, &got_fused[k], &model, &initial[k]);
        let per_parameter_what = format!("{what} (per-parameter update)");
        assert_member_matches(
            &per_parameter_what,
            k,
            &got_per_parameter[k],
            &model,
            &initial[k],
        );
    }
}

/// [`parity_with`] with the constant learning rates [`LRS`].
pub fn parity<R, O>(
    what: &str,
    optim: GroupOptimizer<R, Mlp<GB>, GB>,
    reference: impl Fn(usize) -> O,
) where
    R: UpdateRule,
    O: Optimizer<Mlp<RB>, RB>,
{
    let reference_lrs: Vec<Vec<f64>> = LRS.iter().map(|&lr| vec![lr; STEPS]).collect();
    parity_with(what, optim, reference, |_| LRS.to_vec(), &reference_lrs);
}
