//! `retain`, `select` and `extend`: survivors and copies continue exactly; a member added at
//! step 20 trains as a fresh independent run started there.

use burn::optim::Optimizer;
use saturate_optim::{GroupOptimizer, HyperParam, UpdateRule};

use super::*;

const SPLIT: usize = 20;

fn retain_case<R: UpdateRule, O: Optimizer<Mlp<RB>, RB>>(
    what: &str,
    mut optim: GroupOptimizer<R, Mlp<GB>, GB>,
    reference: impl Fn(usize) -> O,
) {
    let kept = [3, 1];
    let group = init_group(K);
    let initial = group_params(&group);
    let models = references(&group);
    let group = train_group(group, &mut optim, 0..SPLIT, |_| LR.to_vec());
    let group = group.retain(&kept).unwrap();
    optim.retain(&kept).unwrap();
    assert_eq!(optim.members(), kept.len());
    let group = train_group(group, &mut optim, SPLIT..STEPS, |_| {
        kept.iter().map(|&k| LR[k]).collect()
    });
    let got = group_params(&group);
    for (slot, &k) in kept.iter().enumerate() {
        let model = models[k].clone();
        let model = train_reference(model, &mut reference(k), 0..STEPS, |_| LR[k]);
        assert_member_matches(what, k, &got[slot], &model, &initial[k]);
    }
}

#[test]
fn after_retain_survivors_continue_exactly() {
    retain_case("SGD", sgd_config().init(K).unwrap(), |k| burn_sgd(k).init());
    retain_case("Adam", adam_config().init(K).unwrap(), |k| {
        burn_adam(k).init()
    });
    retain_case("AdamW", adamw_config().init(K).unwrap(), |k| {
        burn_adamw(k).init()
    });
}

/// Population-based training's exploit: after 20 steps member 0 becomes a copy of member 3
/// and member 2 of member 1 (`Batched::select` + `GroupOptimizer::select`, indices
/// repeated); with their donors' learning rates from then on, every copy continues bit for
/// bit as its donor's own 50-step run.
fn select_case<R: UpdateRule, O: Optimizer<Mlp<RB>, RB>>(
    what: &str,
    mut optim: GroupOptimizer<R, Mlp<GB>, GB>,
    reference: impl Fn(usize) -> O,
) {
    let donors = [3, 1, 1, 3];
    let group = init_group(K);
    let initial = group_params(&group);
    let models = references(&group);
    let group = train_group(group, &mut optim, 0..SPLIT, |_| LR.to_vec());
    let group = group.select(&donors).unwrap();
    optim.select(&donors).unwrap();
    assert_eq!(optim.members(), donors.len());
    let group = train_group(group, &mut optim, SPLIT..STEPS, |_| {
        donors.iter().map(|&k| LR[k]).collect()
    });
    let got = group_params(&group);
    for (slot, &k) in donors.iter().enumerate() {
        let model = models[k].clone();
        let model = train_reference(model, &mut reference(k), 0..STEPS, |_| LR[k]);
        assert_member_matches(what, k, &got[slot], &model, &initial[k]);
    }
}

#[test]
fn after_select_a_copied_member_continues_exactly_as_its_donor() {
    select_case("SGD", sgd_config().init(K).unwrap(), |k| burn_sgd(k).init());
    select_case("Adam", adam_config().init(K).unwrap(), |k| {
        burn_adam(k).init()
    });
    select_case("AdamW", adamw_config().init(K).unwrap(), |k| {
        burn_adamw(k).init()
    });
}

/// Trains members 0..3 for 20 steps, adds member 3 (fresh init, its own hyperparameters given
/// by `new_config`), trains all four for 30 more. Members 0..3 must match their 50-step
/// references; member 3 must match a fresh burn-optim run over steps 20..50.
fn extend_case<R: UpdateRule, O: Optimizer<Mlp<RB>, RB>>(
    what: &str,
    old_config: &R::Config,
    new_config: &R::Config,
    reference: impl Fn(usize) -> O,
) {
    for fused in [false, true] {
        extend_case_with::<R, O>(what, old_config, new_config, &reference, fused);
    }
}

fn extend_case_with<R: UpdateRule, O: Optimizer<Mlp<RB>, RB>>(
    what: &str,
    old_config: &R::Config,
    new_config: &R::Config,
    reference: &impl Fn(usize) -> O,
    fused: bool,
) {
    let old = K - 1;
    let mut optim = GroupOptimizer::<R, Mlp<GB>, GB>::new(old_config, old)
        .unwrap()
        .with_fused_update(fused);
    let group = init_group(old);
    let initial = group_params(&group);
    let models = references(&group);
    let group = train_group(group, &mut optim, 0..SPLIT, |_| LR[..old].to_vec());

    let newcomer = init_group(1);
    let newcomer_initial = group_params(&newcomer).remove(0);
    let group = group.extend(newcomer).unwrap();
    optim.extend(1, new_config).unwrap();
    assert_eq!(optim.members(), K);
    let group = train_group(group, &mut optim, SPLIT..STEPS, |_| LR.to_vec());
    let got = group_params(&group);

    for (k, model) in models.into_iter().enumerate() {
        let model = train_reference(model, &mut reference(k), 0..STEPS, |_| LR[k]);
        assert_member_matches(what, k, &got[k], &model, &initial[k]);
    }
    let fresh = reference_from(&newcomer_initial);
    let fresh = train_reference(fresh, &mut reference(old), SPLIT..STEPS, |_| LR[old]);
    assert_member_matches(what, old, &got[old], &fresh, &newcomer_initial);
}

/// The per-member lists of a config split into the first K-1 members and the last one.
fn split(values: &[f64]) -> (HyperParam, HyperParam) {
    (values[..K - 1].into(), values[K - 1..].into())
}

#[test]
fn a_member_added_at_step_20_matches_a_fresh_run() {
    use saturate_optim::{
        GroupAdamConfig, GroupAdamWConfig, GroupMomentumConfig, GroupSgdConfig,
        GroupWeightDecayConfig,
    };

    let (old_m, new_m) = split(&[0.9, 0.8, 0.7, 0.95]);
    let sgd = |m: HyperParam| {
        GroupSgdConfig::new()
            .with_momentum(Some(GroupMomentumConfig::new().with_momentum(m)))
            .with_weight_decay(Some(GroupWeightDecayConfig::new(1e-2)))
    };
    extend_case::<saturate_optim::GroupSgd, _>("SGD", &sgd(old_m), &sgd(new_m), |k| {
        burn_sgd(k).init()
    });

    let (old_b, new_b) = split(&[0.8, 0.85, 0.9, 0.95]);
    extend_case::<saturate_optim::GroupAdam, _>(
        "Adam",
        &GroupAdamConfig::new().with_beta_1(old_b),
        &GroupAdamConfig::new().with_beta_1(new_b),
        |k| burn_adam(k).init(),
    );

    let (old_w, new_w) = split(&[0.0, 1e-3, 1e-2, 1e-1]);
    let adamw = |w: HyperParam| {
        GroupAdamWConfig::new()
            .with_weight_decay(w)
            .with_amsgrad(true)
    };
    extend_case::<saturate_optim::GroupAdamW, _>("AdamW", &adamw(old_w), &adamw(new_w), |k| {
        burn_adamw(k).init()
    });
}

#[test]
fn extend_gives_members_without_an_option_its_neutral_value() {
    use burn::optim::SgdConfig as BurnSgd;
    use saturate_optim::{GroupGradientClippingConfig, GroupSgdConfig};

    // The group clips by norm, the newcomer does not: it trains as plain SGD alone.
    let old =
        GroupSgdConfig::new().with_gradient_clipping(Some(GroupGradientClippingConfig::norm(0.05)));
    let new = GroupSgdConfig::new();
    extend_case::<saturate_optim::GroupSgd, _>("SGD clipping", &old, &new, |k| {
        if k < K - 1 {
            BurnSgd::new()
                .with_gradient_clipping(Some(burn::grad_clipping::GradientClippingConfig::Norm(
                    0.05,
                )))
                .init()
        } else {
            BurnSgd::new().init()
        }
    });
}

/// A parameter without a gradient in some steps keeps its state and step counts, as in burn
/// (its Adam bias correction then lags the other parameters'); with the whole-module update
/// it is updated in a separate batch.
#[test]
fn a_parameter_skipped_in_some_steps() {
    use burn::module::Param;
    use burn::optim::GradientsParams;
    use burn::tensor::Tensor;

    fn skip<B: burn::tensor::backend::AutodiffBackend>(
        step: usize,
        grads: &mut GradientsParams,
        weight: &Param<Tensor<B, 2>>,
    ) {
        if step % 3 == 1 {
            grads.remove::<B::InnerBackend, 2>(weight.id);
        }
    }

    for fused in [false, true] {
        let mut optim = adam_config().init(K).unwrap().with_fused_update(fused);
        let mut group = init_group(K);
        let initial = group_params(&group);
        let mut models = references(&group);
        for step in 0..30 {
            let loss = group.loss(step, &group.device());
            let mut grads = GradientsParams::from_grads(loss.backward(), &*group);
            skip(step, &mut grads, &group.hidden.weight);
            group = optim.step(LR.to_vec(), group, grads).unwrap();
        }
        let got = group_params(&group);
        for (k, model) in models.drain(..).enumerate() {
            let mut reference = burn_adam(k).init();
            let mut model = model;
            for step in 0..30 {
                let loss = model.loss(step, &Default::default());
                let mut grads = GradientsParams::from_grads(loss.backward(), &model);
                skip(step, &mut grads, &model.hidden.weight);
                model = reference.step(LR[k], model, grads);
            }
            assert_member_matches(
                &format!("skipped parameter (fused: {fused})"),
                k,
                &got[k],
                &model,
                &initial[k],
            );
        }
    }
}
