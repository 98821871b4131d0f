//! Group lifecycle parity: a group trained a few steps, then pruned with `retain` and refilled
//! with `extend`, keeps training each member exactly as its independent run.

use burn::module::AutodiffModule;
use burn::optim::{GradientsParams, Optimizer, SgdConfig};
use burn::tensor::ElementConversion;
use rand::rngs::StdRng;
use rand::SeedableRng;
use saturate_vmap::{member_values, Batched, Vmap};

use super::common::{
    compare, group_params, inner_device, params, reseed, sgd_group, step_slots, transfer, Case,
    DataMode, GroupFeed, Inner, MemberFeed, ATOL, G, R, RTOL,
};
use super::models::{CnnCase, MlpCase};
use super::modules::batch_norm_case;

/// One independent member: its model, its optimizer and its learning rate.
struct Alone<C: Case>
where
    C::Model<R>: AutodiffModule<R>,
{
    model: Option<C::Model<R>>,
    optim: burn::optim::adaptor::OptimizerAdaptor<burn::optim::Sgd<Inner>, C::Model<R>, R>,
    lr: f64,
}

fn references<C: Case>(case: &C, group: &Batched<C::Model<G>>, lrs: &[f64]) -> Vec<Alone<C>>
where
    C::Model<G>: AutodiffModule<G, InnerModule = C::Model<Vmap<Inner>>>,
    C::Model<R>: AutodiffModule<R, InnerModule = C::Model<Inner>>,
{
    (0..group.members())
        .map(|k| Alone {
            model: Some(transfer::<G, R, _, _>(
                group.member(k).expect("member"),
                case.init::<R>(&inner_device()),
                &inner_device(),
            )),
            optim: SgdConfig::new().init(),
            lr: lrs[k],
        })
        .collect()
}

/// `steps` training steps of the group and of every reference, on shared data.
fn train<C: Case>(
    case: &C,
    rng: &mut StdRng,
    mut group: Batched<C::Model<G>>,
    refs: &mut [Alone<C>],
    steps: usize,
    what: &str,
    mode: DataMode,
) -> Batched<C::Model<G>>
where
    C::Model<G>: AutodiffModule<G, InnerModule = C::Model<Vmap<Inner>>>,
    C::Model<R>: AutodiffModule<R, InnerModule = C::Model<Inner>>,
{
    assert_eq!(group.members(), refs.len());
    let lrs: Vec<f64> = refs.iter().map(|r| r.lr).collect();
    for step in 0..steps {
        let slots = step_slots(case, rng, mode, refs.len());
        let feed = GroupFeed::<G> {
            slots: &slots,
            device: group.device(),
        };
        let loss = case.loss(&*group, &feed);
        let losses = member_values(loss.clone()).expect("losses");
        let grads = GradientsParams::from_grads(loss.backward(), &*group);
        group = sgd_group(group, grads, &lrs);
        for (k, r) in refs.iter_mut().enumerate() {
            let model = r.model.take().expect("model");
            let loss = case.loss(
                &model,
                &MemberFeed::<R> {
                    slots: &slots,
                    member: k,
                    device: inner_device(),
                },
            );
            let value: f64 = loss.clone().into_scalar().elem();
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            r.model = Some(r.optim.step(r.lr, model, grads));
            assert!(
                (losses[k] - value).abs() <= ATOL + RTOL * value.abs(),
                "{what}, step {step}: member {k}: group loss {} vs reference {value}",
                losses[k]
            );
        }
    }
    let got = group_params(&*group);
    let mut bad = Vec::new();
    for (k, r) in refs.iter().enumerate() {
        bad.extend(compare(
            what,
            k,
            &got[k],
            &params(r.model.as_ref().expect("model")),
        ));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    group
}

fn lifecycle<C: Case>(case: &C, seed: u64, mode: DataMode)
where
    C::Model<G>: AutodiffModule<G, InnerModule = C::Model<Vmap<Inner>>>,
    C::Model<R>: AutodiffModule<R, InnerModule = C::Model<Inner>>,
{
    let mut rng = StdRng::seed_from_u64(seed);
    let lrs = [0.1, 0.03, 0.2, 0.05];
    let group = Batched::init(4, &inner_device(), |d| reseed(case.init::<G>(d), seed)).unwrap();
    let mut refs = references(case, &group, &lrs);
    let group = train(
        case,
        &mut rng,
        group,
        &mut refs,
        4,
        "4 steps of 4 members",
        mode,
    );

    // Prune: keep members 3 and 1, in that order.
    let group = group.retain(&[3, 1]).unwrap();
    let mut refs: Vec<Alone<C>> = {
        let mut all: Vec<Option<Alone<C>>> = refs.into_iter().map(Some).collect();
        vec![all[3].take().unwrap(), all[1].take().unwrap()]
    };
    let group = train(
        case,
        &mut rng,
        group,
        &mut refs,
        3,
        "after retain([3, 1])",
        mode,
    );

    // Refill: two fresh members with their own learning rates.
    let fresh = Batched::init(2, &inner_device(), |d| reseed(case.init::<G>(d), seed + 1)).unwrap();
    refs.extend(references(case, &fresh, &[0.08, 0.15]));
    let group = group.extend(fresh).unwrap();
    assert_eq!(group.members(), 4);
    train(
        case,
        &mut rng,
        group,
        &mut refs,
        4,
        "after extend(2 fresh)",
        mode,
    );
}

#[test]
fn retain_and_extend_keep_training_each_member_exactly() {
    lifecycle(&MlpCase { regression: false }, 500, DataMode::Shared);
    lifecycle(&MlpCase { regression: true }, 503, DataMode::PerMember);
}

#[test]
fn retain_and_extend_with_batch_norm_running_state() {
    lifecycle(&batch_norm_case(), 501, DataMode::Shared);
    lifecycle(&batch_norm_case(), 504, DataMode::PerMember);
}

#[test]
fn retain_and_extend_cnn() {
    lifecycle(&CnnCase, 502, DataMode::Shared);
    lifecycle(&CnnCase, 505, DataMode::PerMember);
}
