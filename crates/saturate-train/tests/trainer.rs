//! The trainer level: a tiny MLP regression on NdArray. Pruned members leave the model, the
//! optimizer and the hyperparameters; refill keeps the group full; and every member that
//! completes ends with exactly the parameters the same configuration gets trained alone with
//! plain Burn (same initialisation, same data): equal floats, not just within the parity
//! tolerance (NdArray as this workspace builds it is exact and deterministic here).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use burn::backend::{Autodiff, NdArray};
use burn::module::{Module, Param};
use burn::nn::loss::{MseLoss, Reduction};
use burn::nn::{Linear, LinearConfig, Relu};
use burn::optim::momentum::MomentumConfig as BurnMomentum;
use burn::optim::{GradientsParams, Optimizer, SgdConfig as BurnSgd};
use burn::tensor::backend::Backend;
use burn::tensor::{Tensor, TensorData};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use saturate_optim::{GroupMomentumConfig, GroupSgd, GroupSgdConfig};
use saturate_study::prelude::*;
use saturate_study::study::ObjectiveError;
use saturate_train::{
    run_trainer, GroupBackend, GroupTask, MemberHyper, MemberScope, Members, Retain, SharedScope,
    TrainError, TrainerConfig, GROUP_ATTR,
};
use saturate_vmap::{member_data, member_values, stack_members, VmapDevice};

use crate::common::{quiet, random_study, trials, PruneNumbers};

type I = NdArray<f32>;
type B = GroupBackend<I>;

const ROWS: usize = 32;
const INPUTS: usize = 6;
const OUTPUTS: usize = 3;

#[derive(Module, Debug)]
struct Mlp<B: Backend> {
    hidden: Linear<B>,
    out: Linear<B>,
    relu: Relu,
}

impl<B: Backend> Mlp<B> {
    fn forward(&self, x: Tensor<B, 2>) -> Tensor<B, 2> {
        self.out.forward(self.relu.forward(self.hidden.forward(x)))
    }
}

/// A member's initial parameters, a function of its seed: [w1, b1, w2, b2].
fn initial(seed: u64, width: usize) -> Vec<(Vec<f32>, Vec<usize>)> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut values =
        |n: usize| -> Vec<f32> { (0..n).map(|_| rng.random_range(-0.5..0.5)).collect() };
    vec![
        (values(INPUTS * width), vec![INPUTS, width]),
        (values(width), vec![width]),
        (values(width * OUTPUTS), vec![width, OUTPUTS]),
        (values(OUTPUTS), vec![OUTPUTS]),
    ]
}

/// An Mlp whose parameters are given, on any backend (`stack` builds each from the members').
fn mlp_from<X: Backend>(
    width: usize,
    device: &X::Device,
    mut tensor2: impl FnMut(usize) -> Tensor<X, 2>,
    mut tensor1: impl FnMut(usize) -> Tensor<X, 1>,
) -> Mlp<X> {
    let mut hidden = LinearConfig::new(INPUTS, width).init(device);
    let mut out = LinearConfig::new(width, OUTPUTS).init(device);
    hidden.weight = Param::from_tensor(tensor2(0));
    hidden.bias = Some(Param::from_tensor(tensor1(1)));
    out.weight = Param::from_tensor(tensor2(2));
    out.bias = Some(Param::from_tensor(tensor1(3)));
    Mlp {
        hidden,
        out,
        relu: Relu::new(),
    }
}

/// The regression data: one full batch, the same every step (so a member that joins later
/// sees the data a member trained alone sees).
fn data() -> (Vec<f32>, Vec<f32>) {
    let mut rng = StdRng::seed_from_u64(99);
    let x: Vec<f32> = (0..ROWS * INPUTS)
        .map(|_| rng.random_range(-1.0..1.0))
        .collect();
    let y: Vec<f32> = (0..ROWS)
        .flat_map(|r| {
            let row = &x[r * INPUTS..(r + 1) * INPUTS];
            (0..OUTPUTS).map(move |o| row.iter().skip(o).step_by(2).sum::<f32>().sin())
        })
        .collect();
    (x, y)
}

/// The member's final parameters, keyed by its seed.
type Finals = Rc<RefCell<BTreeMap<u64, Vec<Vec<f32>>>>>;

/// A member's parameters at its latest evaluation, keyed by its configuration (seed, learning
/// rate and momentum bits): population-based training gives a copy its donor's seed and new
/// values of the other two.
type History = Rc<RefCell<BTreeMap<(u64, u64, u64), Vec<Vec<f32>>>>>;

struct Regression {
    x: Vec<f32>,
    y: Vec<f32>,
    finals: Finals,
    history: History,
    batches: usize,
    /// The member given an absurd learning rate (its loss diverges), in the first group
    /// whose members are suggested after `diverge_after` earlier suggestions.
    diverge: Option<usize>,
    diverge_after: usize,
    /// The batch (counting from 1) whose loading fails, as a lost data file would.
    fail_batch: Option<usize>,
}

// ANCHOR: task
impl GroupTask<I> for Regression {
    type Shared = usize;
    type Model = Mlp<B>;
    type Rule = GroupSgd;
    type Batch = (Tensor<B, 2>, Tensor<B, 2>);

    fn suggest_shared<S: Study>(
        &mut self,
        scope: &mut SharedScope<'_, '_, S>,
    ) -> Result<usize, ObjectiveError> {
        Ok(scope.suggest_int("width", 6, 10)? as usize)
    }

    fn suggest_members<S: Study>(
        &mut self,
        _width: &usize,
        scope: &mut MemberScope<'_, '_, S>,
    ) -> Result<MemberHyper, ObjectiveError> {
        let mut lr = scope.suggest_float_log("lr", 1e-2, 2e-1)?.into_vec();
        if self.diverge_after > 0 {
            self.diverge_after -= 1;
        } else if let Some(member) = self.diverge.take() {
            lr[member] = 1e30;
        }
        Ok(MemberHyper::new()
            .with("lr", Members::from(lr))
            .with("momentum", scope.suggest_float("momentum", 0.0, 0.9)?)
            .with(
                "seed",
                scope.suggest_int("seed", 0, 1 << 30)?.map(|&s| s as f64),
            ))
    }

    fn init_model(
        &mut self,
        width: &usize,
        hyper: &MemberHyper,
        device: &VmapDevice<I>,
    ) -> Result<Mlp<B>, ObjectiveError> {
        let inits: Vec<_> = hyper
            .get("seed")
            .iter()
            .map(|&s| initial(s as u64, *width))
            .collect();
        let stack2 = |p: usize| {
            stack_members(
                inits
                    .iter()
                    .map(|init| {
                        Tensor::<B, 2>::from_data(
                            TensorData::new(init[p].0.clone(), init[p].1.clone()),
                            device,
                        )
                    })
                    .collect(),
            )
            .unwrap()
        };
        let stack1 = |p: usize| {
            stack_members(
                inits
                    .iter()
                    .map(|init| {
                        Tensor::<B, 1>::from_data(
                            TensorData::new(init[p].0.clone(), init[p].1.clone()),
                            device,
                        )
                    })
                    .collect(),
            )
            .unwrap()
        };
        Ok(mlp_from(*width, device, stack2, stack1))
    }

    fn optimizer(&self, _width: &usize, hyper: &MemberHyper) -> GroupSgdConfig {
        GroupSgdConfig::new().with_momentum(Some(
            GroupMomentumConfig::new().with_momentum(hyper.get("momentum")),
        ))
    }

    fn next_batch(&mut self, device: &VmapDevice<I>) -> Result<Self::Batch, ObjectiveError> {
        self.batches += 1;
        if self.fail_batch == Some(self.batches) {
            return Err(format!("could not read batch {}: disk gone", self.batches).into());
        }
        Ok((
            Tensor::from_data(TensorData::new(self.x.clone(), [ROWS, INPUTS]), device),
            Tensor::from_data(TensorData::new(self.y.clone(), [ROWS, OUTPUTS]), device),
        ))
    }

    fn loss(
        &mut self,
        model: &Mlp<B>,
        batch: &Self::Batch,
        _hyper: &MemberHyper,
    ) -> Result<Tensor<B, 1>, ObjectiveError> {
        Ok(MseLoss::new().forward(
            model.forward(batch.0.clone()),
            batch.1.clone(),
            Reduction::Mean,
        ))
    }

    fn evaluate(
        &mut self,
        model: &Mlp<B>,
        device: &VmapDevice<I>,
        hyper: &MemberHyper,
    ) -> Result<Members<f64>, ObjectiveError> {
        let batch = self.next_batch(device)?;
        self.batches -= 1; // evaluation batches are not training steps
        let loss = self.loss(model, &batch, hyper)?;
        let params = [
            member_data(model.hidden.weight.val()),
            member_data(model.hidden.bias.as_ref().unwrap().val().unsqueeze::<2>()),
            member_data(model.out.weight.val()),
            member_data(model.out.bias.as_ref().unwrap().val().unsqueeze::<2>()),
        ];
        let (lr, momentum) = (hyper.get("lr"), hyper.get("momentum"));
        for (k, seed) in hyper.get("seed").iter().enumerate() {
            let member: Vec<Vec<f32>> = params
                .iter()
                .map(|p| p[k].to_vec::<f32>().unwrap())
                .collect();
            let key = (*seed as u64, lr[k].to_bits(), momentum[k].to_bits());
            self.history.borrow_mut().insert(key, member.clone());
            self.finals.borrow_mut().insert(*seed as u64, member);
        }
        Ok(Members::from(member_values(loss)?))
    }
}
// ANCHOR_END: task

/// The same configuration trained alone with plain Burn (NdArray, burn-optim SGD).
fn train_alone(width: usize, seed: u64, lr: f64, momentum: f64, steps: usize) -> Vec<Vec<f32>> {
    train_schedule(width, seed, &[(lr, momentum, steps)])
}

/// A member with seed `seed` trained alone with plain Burn through a schedule of
/// `(learning rate, momentum, steps)` segments: one model, and the optimizer's velocity
/// carried from segment to segment (a new burn-optim SGD with the segment's momentum loads the
/// previous one's record).
fn train_schedule(width: usize, seed: u64, schedule: &[(f64, f64, usize)]) -> Vec<Vec<f32>> {
    type A = Autodiff<NdArray<f32>>;
    let device = Default::default();
    let init = initial(seed, width);
    let mut model: Mlp<A> = mlp_from(
        width,
        &device,
        |p| {
            Tensor::from_data(
                TensorData::new(init[p].0.clone(), init[p].1.clone()),
                &device,
            )
        },
        |p| {
            Tensor::from_data(
                TensorData::new(init[p].0.clone(), init[p].1.clone()),
                &device,
            )
        },
    );
    let sgd = |momentum: f64| {
        BurnSgd::new()
            .with_momentum(Some(BurnMomentum::new().with_momentum(momentum)))
            .init::<A, Mlp<A>>()
    };
    let mut optim = sgd(schedule[0].1);
    let (x, y) = data();
    let x = Tensor::<A, 2>::from_data(TensorData::new(x, [ROWS, INPUTS]), &device);
    let y = Tensor::<A, 2>::from_data(TensorData::new(y, [ROWS, OUTPUTS]), &device);
    for &(lr, momentum, steps) in schedule {
        optim = sgd(momentum).load_record(optim.to_record());
        for _ in 0..steps {
            let loss = MseLoss::new().forward(model.forward(x.clone()), y.clone(), Reduction::Mean);
            let grads = GradientsParams::from_grads::<A, _>(loss.backward(), &model);
            model = optim.step(lr, model, grads);
        }
    }
    let read = |t: TensorData| t.to_vec::<f32>().unwrap();
    vec![
        read(model.hidden.weight.val().into_data()),
        read(model.hidden.bias.as_ref().unwrap().val().into_data()),
        read(model.out.weight.val().into_data()),
        read(model.out.bias.as_ref().unwrap().val().into_data()),
    ]
}

/// Every COMPLETE trial ends with exactly the parameters its configuration gets trained alone
/// for `steps` steps with plain Burn: equal floats.
fn assert_complete_trials_equal_themselves_trained_alone(
    all: &[std::sync::Arc<FrozenTrial>],
    finals: &Finals,
    steps: usize,
) {
    let width = all[0].param("width").unwrap().as_f64().unwrap() as usize;
    for t in all.iter().filter(|t| t.state == TrialState::Complete) {
        let p = |name: &str| t.param(name).unwrap().as_f64().unwrap();
        let seed = p("seed") as u64;
        let want = train_alone(width, seed, p("lr"), p("momentum"), steps);
        let got = finals.borrow()[&seed].clone();
        assert_params_equal(&got, &want, &format!("trial {}", t.number));
    }
}

/// Equal floats, parameter by parameter: `got` from the group, `want` trained alone.
fn assert_params_equal(got: &[Vec<f32>], want: &[Vec<f32>], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: parameter count");
    for (tensor, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.len(), w.len(), "{what}: parameter {tensor}'s length");
        for (i, (g, w)) in g.iter().zip(w).enumerate() {
            assert!(
                g == w,
                "{what}: parameter {tensor}, element {i}: group {g}, alone {w}"
            );
        }
    }
}

/// The trials in number order, split into runs of consecutive trials with one group id: one
/// run per group where groups run one after another, as in these tests.
fn group_runs(all: &[std::sync::Arc<FrozenTrial>]) -> Vec<Vec<&FrozenTrial>> {
    let mut runs: Vec<Vec<&FrozenTrial>> = Vec::new();
    for (i, t) in all.iter().enumerate() {
        if i == 0 || t.system_attrs[GROUP_ATTR] != all[i - 1].system_attrs[GROUP_ATTR] {
            runs.push(Vec::new());
        }
        runs.last_mut().unwrap().push(t);
    }
    runs
}

fn regression(finals: &Finals) -> Regression {
    let (x, y) = data();
    Regression {
        x,
        y,
        finals: finals.clone(),
        history: History::default(),
        batches: 0,
        diverge: None,
        diverge_after: 0,
        fail_batch: None,
    }
}

/// K = 3, 5 trials, 3 epochs of 3 steps each: trial 1 is pruned at epoch 2 and trial 3 takes
/// its slot; trials 0 and 2 finish after epoch 3 and trial 4 takes one of their slots (the
/// budget has no more); then 3 and 4 train on, each to its own third epoch.
#[test]
fn pruning_and_refill_keep_every_member_equal_to_itself_trained_alone() {
    let study = StudyConfig::new()
        .with_sampler(RandomSamplerConfig::new().with_seed(5).init())
        .with_pruner(PruneNumbers {
            numbers: [1].into(),
            step: 2,
        })
        .init()
        .unwrap();
    let finals = Finals::default();
    // ANCHOR: run_trainer
    let mut trainer = TrainerConfig::new(3, 3).init(regression(&finals)).unwrap();
    let summary =
        run_trainer::<I, _, _>(&study, &quiet(3, 5), &mut trainer, &Default::default()).unwrap();
    // ANCHOR_END: run_trainer
    assert_eq!(
        (summary.complete, summary.pruned, summary.groups),
        (4, 1, 1),
        "{:?}",
        summary.group_errors
    );
    let occupancy = trainer.occupancy().clone();
    assert_eq!(occupancy.refilled, 2);
    // One batch per group step, shared by every member.
    assert_eq!(trainer.task().batches, occupancy.group_steps);
    // Group epochs 1-2: trials 0, 1, 2; epoch 3: 0, 2 and 3 (joined after epoch 2); epochs 4-5:
    // 3 and 4 (joined after epoch 3, the budget's last trial); epoch 6: trial 4 alone.
    assert_eq!(occupancy.group_steps, 6 * 3);
    assert_eq!(occupancy.member_steps, (3 + 3 + 3 + 2 + 2 + 1) * 3);
    assert_eq!(occupancy.slots, 6 * 3 * 3);
    let all = trials(&study);
    let group = &all[0].system_attrs[GROUP_ATTR];
    let states: Vec<TrialState> = all.iter().map(|t| t.state).collect();
    use TrialState::*;
    assert_eq!(states, vec![Complete, Pruned, Complete, Complete, Complete]);
    for t in &all {
        assert_eq!(
            &t.system_attrs[GROUP_ATTR], group,
            "trial {} left the group",
            t.number
        );
        assert_eq!(
            t.param("width"),
            all[0].param("width"),
            "refill changed the shared value"
        );
        if t.state == Complete {
            // Each member reported its own epochs 1, 2, 3.
            assert_eq!(
                t.intermediate_values.keys().copied().collect::<Vec<_>>(),
                vec![1, 2, 3]
            );
        }
    }
    assert_complete_trials_equal_themselves_trained_alone(&all, &finals, 9);
}

#[test]
fn without_refill_a_pruned_slot_stays_empty() {
    let study = StudyConfig::new()
        .with_sampler(RandomSamplerConfig::new().with_seed(6).init())
        .with_pruner(PruneNumbers {
            numbers: [0].into(),
            step: 1,
        })
        .init()
        .unwrap();
    let finals = Finals::default();
    let mut trainer = TrainerConfig::new(2, 3)
        .with_refill(false)
        .init(regression(&finals))
        .unwrap();
    let summary =
        run_trainer::<I, _, _>(&study, &quiet(3, 3), &mut trainer, &Default::default()).unwrap();
    assert_eq!(
        (summary.complete, summary.pruned),
        (2, 1),
        "{:?}",
        summary.group_errors
    );
    let occupancy = trainer.occupancy();
    assert_eq!(occupancy.refilled, 0);
    assert_eq!(occupancy.member_steps, (3 + 2 + 2) * 2);
    assert_eq!(occupancy.slots, 3 * 3 * 2);
    assert!(occupancy.busy_fraction() < 0.8);
}

/// Every member finishes at the same report while the budget has trials left: the group goes
/// on with new trials only (they suggest after the group's reports, as refill members do).
#[test]
fn a_group_whose_members_all_finish_together_refills_from_new_trials() {
    let study = StudyConfig::new()
        .with_sampler(RandomSamplerConfig::new().with_seed(7).init())
        .with_pruner(NopPruner)
        .init()
        .unwrap();
    let finals = Finals::default();
    let mut trainer = TrainerConfig::new(2, 1)
        .with_max_trials_per_group(usize::MAX)
        .init(regression(&finals))
        .unwrap();
    let summary =
        run_trainer::<I, _, _>(&study, &quiet(2, 5), &mut trainer, &Default::default()).unwrap();
    assert_eq!(
        (summary.complete, summary.failed, summary.groups),
        (5, 0, 1),
        "{:?}",
        summary.group_errors
    );
    assert_eq!(trainer.occupancy().refilled, 3);
    let all = trials(&study);
    assert!(all
        .iter()
        .all(|t| t.system_attrs[GROUP_ATTR] == all[0].system_attrs[GROUP_ATTR]));
}

/// K = 2, 7 trials, every member finishes after one epoch, the default limit of 2K = 4 trials
/// per group: the first group takes trials 0-3 (two refilled) and ends although the budget has
/// trials left; the second group is asked anew (its own shared value, sampled for it) and
/// takes the other 3. With no limit, one group takes all 7.
#[test]
fn a_group_takes_at_most_twice_its_size_in_trials_by_default() {
    for (config, groups) in [
        (TrainerConfig::new(2, 1), vec![4, 3]),
        (
            TrainerConfig::new(2, 1).with_max_trials_per_group(3),
            vec![3, 3, 1],
        ),
        (
            TrainerConfig::new(2, 1).with_max_trials_per_group(usize::MAX),
            vec![7],
        ),
    ] {
        let study = random_study(8);
        let finals = Finals::default();
        let mut trainer = config.clone().init(regression(&finals)).unwrap();
        let summary =
            run_trainer::<I, _, _>(&study, &quiet(2, 7), &mut trainer, &Default::default())
                .unwrap();
        assert_eq!(
            (summary.complete, summary.failed, summary.groups),
            (7, 0, groups.len()),
            "{config:?}: {:?}",
            summary.group_errors
        );
        let all = trials(&study);
        let sizes: Vec<usize> = group_runs(&all).iter().map(Vec::len).collect();
        assert_eq!(sizes, groups, "{config:?}");
        assert_eq!(
            trainer.occupancy().refilled,
            groups.iter().map(|&n| n.saturating_sub(2)).sum::<usize>(),
            "{config:?}"
        );
    }
    // The limit counts trials: none is an error when the trainer is built, not an empty group.
    let finals = Finals::default();
    let err = TrainerConfig::new(2, 1)
        .with_max_trials_per_group(0)
        .init(regression(&finals))
        .err()
        .expect("a limit of 0 trials is rejected");
    assert!(
        matches!(
            err,
            TrainError::InvalidConfig {
                setting: "max_trials_per_group",
                ..
            }
        ),
        "{err}"
    );
}

/// A random sampler with a fixed opinion on the shared values, recording what it is asked.
struct Opinion {
    inner: RandomSampler,
    answer: Option<bool>,
    asked: std::sync::Arc<std::sync::Mutex<Vec<BTreeMap<String, f64>>>>,
}

impl Sampler for Opinion {
    fn sample_independent(
        &mut self,
        study: &saturate_study::study::StudyView<'_>,
        trial: &FrozenTrial,
        name: &str,
        distribution: &Distribution,
    ) -> saturate_study::Result<f64> {
        self.inner
            .sample_independent(study, trial, name, distribution)
    }

    fn still_promising(
        &mut self,
        _study: &saturate_study::study::StudyView<'_>,
        values: &BTreeMap<String, (Distribution, f64)>,
    ) -> saturate_study::Result<Option<bool>> {
        self.asked
            .lock()
            .unwrap()
            .push(values.iter().map(|(k, (_, v))| (k.clone(), *v)).collect());
        Ok(self.answer)
    }
}

/// K = 2, 7 trials, every member finishes after one epoch, refill while the sampler still
/// chooses the group's shared values: a sampler that says no closes each group at its first
/// refill (groups of 2, 2, 2, 1; nothing refilled), one that says yes or has no opinion
/// refills up to the default limit of 4 as without the setting (4, 3). The sampler is asked
/// about the group's own width.
#[test]
fn refill_while_promising_closes_a_group_the_sampler_no_longer_chooses() {
    for (answer, groups) in [
        (Some(false), vec![2, 2, 2, 1]),
        (Some(true), vec![4, 3]),
        (None, vec![4, 3]),
    ] {
        let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let study = StudyConfig::new()
            .with_sampler(Opinion {
                inner: RandomSamplerConfig::new().with_seed(8).init(),
                answer,
                asked: asked.clone(),
            })
            .with_pruner(NopPruner)
            .init()
            .unwrap();
        let finals = Finals::default();
        let mut trainer = TrainerConfig::new(2, 1)
            .with_refill_while_promising(true)
            .init(regression(&finals))
            .unwrap();
        let summary =
            run_trainer::<I, _, _>(&study, &quiet(2, 7), &mut trainer, &Default::default())
                .unwrap();
        assert_eq!(
            (summary.complete, summary.groups),
            (7, groups.len()),
            "{answer:?}: {:?}",
            summary.group_errors
        );
        let all = trials(&study);
        let sizes: Vec<usize> = group_runs(&all).iter().map(Vec::len).collect();
        assert_eq!(sizes, groups, "{answer:?}");
        let refilled = groups.iter().map(|&n| n.saturating_sub(2)).sum::<usize>();
        assert_eq!(trainer.occupancy().refilled, refilled, "{answer:?}");
        let asked = asked.lock().unwrap();
        assert!(!asked.is_empty(), "{answer:?}: the sampler was never asked");
        assert_eq!(
            trainer.occupancy().closed_unpromising,
            if answer == Some(false) {
                asked.len()
            } else {
                0
            },
            "{answer:?}"
        );
        // Each question names the width of a group that was training then.
        let widths: Vec<f64> = all
            .iter()
            .map(|t| t.param("width").and_then(|w| w.as_f64()).unwrap())
            .collect();
        for question in asked.iter() {
            assert_eq!(question.keys().collect::<Vec<_>>(), ["width"], "{answer:?}");
            assert!(widths.contains(&question["width"]), "{question:?}");
        }
    }
}

/// A random sampler whose widths come from a list, in turn (one per group), and whose
/// learning rates are `slow_lr` for the first `slow_trials` trials and `fast_lr` after.
struct ScriptedWidths {
    inner: RandomSampler,
    widths: Vec<f64>,
    next: usize,
    slow_trials: usize,
    lrs: usize,
}

impl Sampler for ScriptedWidths {
    fn sample_independent(
        &mut self,
        study: &saturate_study::study::StudyView<'_>,
        trial: &FrozenTrial,
        name: &str,
        distribution: &Distribution,
    ) -> saturate_study::Result<f64> {
        if name == "width" {
            let width = self.widths[self.next % self.widths.len()];
            self.next += 1;
            return Ok(width);
        }
        if name == "lr" {
            self.lrs += 1;
            return Ok(if self.lrs <= self.slow_trials {
                1e-2
            } else {
                2e-1
            });
        }
        self.inner
            .sample_independent(study, trial, name, distribution)
    }
}

/// K = 2, 7 trials of 2 epochs, no trial limit, successive halving with η = 2, each group a
/// new width (6, 8, 10). Width 6's two trials learn slowly (lr 0.01), later ones fast (lr
/// 0.2), and the first member of width 8 diverges in its first epoch. Width 6, alone at its
/// rung, is never refilled (without halving it would take all 7 trials). At width 8's first
/// refill (after epoch 1) none of its trials has completed, so it ranks below width 6 and
/// its free slot stays empty; once its second trial completes ahead of width 6 it is
/// refilled (2 more trials), and then, alone at rung 2, not again: groups of 2, 4 and 1.
#[test]
fn refill_halving_refills_a_group_once_its_width_ranks_in_the_better_half() {
    let study = StudyConfig::new()
        .with_sampler(ScriptedWidths {
            inner: RandomSamplerConfig::new().with_seed(8).init(),
            widths: vec![6.0, 8.0, 10.0],
            next: 0,
            slow_trials: 2,
            lrs: 0,
        })
        .with_pruner(NopPruner)
        .init()
        .unwrap();
    let finals = Finals::default();
    let mut task = regression(&finals);
    task.diverge = Some(0);
    task.diverge_after = 1;
    let mut trainer = TrainerConfig::new(2, 2)
        .with_max_trials_per_group(usize::MAX)
        .with_refill_halving(2)
        .init(task)
        .unwrap();
    let summary =
        run_trainer::<I, _, _>(&study, &quiet(2, 7), &mut trainer, &Default::default()).unwrap();
    assert_eq!(
        (summary.complete, summary.failed),
        (6, 1),
        "{:?}",
        summary.group_errors
    );
    let all = trials(&study);
    let groups = group_runs(&all);
    let width = |g: &[&FrozenTrial]| g[0].param("width").and_then(|w| w.as_f64()).unwrap();
    let best = |g: &[&FrozenTrial]| {
        g.iter()
            .filter_map(|t| t.value())
            .fold(f64::INFINITY, f64::min)
    };
    // The scenario's premise: width 8's surviving first trial beats both of width 6's.
    assert!(
        best(&groups[1][..2]) < best(&groups[0]),
        "width 6: {}, width 8's first two: {}",
        best(&groups[0]),
        best(&groups[1][..2])
    );
    assert_eq!(
        groups
            .iter()
            .map(|g| (width(g), g.len()))
            .collect::<Vec<_>>(),
        vec![(6.0, 2), (8.0, 4), (10.0, 1)]
    );
    assert_eq!(all[2].state, TrialState::Fail);
    assert_eq!(trainer.occupancy().refilled, 2);
    // Width 6 at its end and width 8 after its first epoch; the group of 1 is below its
    // first rung.
    assert_eq!(trainer.occupancy().held_by_halving, 2);
    let err = TrainerConfig::new(2, 1)
        .with_refill_halving(1)
        .init(regression(&finals))
        .err()
        .expect("a reduction factor of 1 is rejected");
    assert!(
        matches!(
            err,
            TrainError::InvalidConfig {
                setting: "refill_halving",
                ..
            }
        ),
        "{err}"
    );
}

/// K = 3, no refill (3 trials): member 1 trains with a learning rate of 1e30, its loss turns
/// non-finite within a few steps and it fails right there, with the step and the value; the
/// compute shrinks from that step on, and members 0 and 2 end with exactly the parameters
/// they get trained alone.
#[test]
fn a_member_whose_training_loss_diverges_fails_at_that_step_and_the_others_are_untouched() {
    let study = StudyConfig::new()
        .with_sampler(RandomSamplerConfig::new().with_seed(8).init())
        .with_pruner(NopPruner)
        .init()
        .unwrap();
    let finals = Finals::default();
    let mut task = regression(&finals);
    task.diverge = Some(1);
    let mut trainer = TrainerConfig::new(3, 3).init(task).unwrap();
    let summary =
        run_trainer::<I, _, _>(&study, &quiet(3, 3), &mut trainer, &Default::default()).unwrap();
    assert_eq!(
        (summary.complete, summary.failed),
        (2, 1),
        "{:?}",
        summary.group_errors
    );
    let all = trials(&study);
    use TrialState::*;
    assert_eq!(
        all.iter().map(|t| t.state).collect::<Vec<_>>(),
        vec![Complete, Fail, Complete]
    );
    let reason = all[1].system_attrs["fail_reason"]
        .as_str()
        .unwrap()
        .to_string();
    let rest = reason
        .strip_prefix("the training loss at step ")
        .unwrap_or_else(|| panic!("fail reason: {reason}"));
    let (step, value) = rest.split_once(" is ").unwrap();
    let step: usize = step.parse().unwrap();
    assert!((1..=9).contains(&step), "{reason}");
    assert!(
        value == "NaN" || value == "inf" || value == "-inf",
        "{reason}"
    );
    // It left before the first report: no intermediate value, no evaluation of its NaN weights.
    assert!(all[1].intermediate_values.is_empty());
    let occupancy = trainer.occupancy();
    assert_eq!(occupancy.group_steps, 9);
    assert_eq!(occupancy.member_steps, 2 * 9 + step);
    assert!(!finals.borrow().is_empty());
    assert_complete_trials_equal_themselves_trained_alone(&all, &finals, 9);
}

/// An error of the task (here its data loading) fails the group's running trials with the
/// error as their reason and the run goes on to the next group; nothing panics.
#[test]
fn a_task_error_fails_its_group_and_the_run_goes_on() {
    let study = StudyConfig::new()
        .with_sampler(RandomSamplerConfig::new().with_seed(9).init())
        .with_pruner(NopPruner)
        .init()
        .unwrap();
    let finals = Finals::default();
    let mut task = regression(&finals);
    task.fail_batch = Some(2);
    let mut trainer = TrainerConfig::new(2, 1)
        .with_refill(false)
        .init(task)
        .unwrap();
    let summary =
        run_trainer::<I, _, _>(&study, &quiet(2, 4), &mut trainer, &Default::default()).unwrap();
    assert_eq!(
        (summary.failed, summary.complete, summary.groups),
        (2, 2, 2),
        "{:?}",
        summary.group_errors
    );
    assert_eq!(
        summary.group_errors,
        vec!["could not read batch 2: disk gone".to_string()]
    );
    let all = trials(&study);
    for t in &all[..2] {
        assert_eq!(t.state, TrialState::Fail);
        assert_eq!(
            t.system_attrs["fail_reason"],
            "could not read batch 2: disk gone"
        );
    }
    assert!(all[2..].iter().all(|t| t.state == TrialState::Complete));
}

/// Population-based training settings of the PBT tests: `lr` explores within the task's
/// distribution, an exploit step every 2 epochs.
fn pbt_config(seed: u64) -> saturate_train::PbtConfig {
    use saturate_study::distributions::{Distribution, FloatDistribution};
    saturate_train::PbtConfig::new(2)
        .with_mutation(
            "lr",
            Distribution::Float(FloatDistribution::new(1e-2, 2e-1, true, None).unwrap()),
        )
        .with_seed(seed)
}

fn system_i64(t: &FrozenTrial, key: &str) -> Option<i64> {
    t.system_attrs.get(key).and_then(|v| v.as_i64())
}

/// Trains one PBT group of 4 (the run's 4 first trials) for `epochs` epochs of `steps` steps
/// on `task`; the group must not fail.
fn run_pbt(
    study: &DefaultStudy,
    task: Regression,
    config: saturate_train::PbtConfig,
    steps: usize,
    epochs: usize,
) -> saturate_train::GroupTrainer<Regression> {
    let mut trainer = TrainerConfig::new(steps, epochs)
        .with_pbt(config)
        .init(task)
        .unwrap();
    let summary =
        run_trainer::<I, _, _>(study, &quiet(4, 4), &mut trainer, &Default::default()).unwrap();
    assert!(
        summary.group_errors.is_empty(),
        "{:?}",
        summary.group_errors
    );
    trainer
}

/// K = 4, 6 epochs of 2 steps, an exploit step after epochs 2 and 4 with a quantile of 1/4:
/// each time the worst member's trial ends COMPLETE with its last value and a new trial
/// continues from a copy of a best member, with that member's parameters and an explored
/// learning rate; it reports from the next epoch on. The pruner (the default median pruner)
/// is not asked, so nothing is pruned, and the population stays 4 to the end.
#[test]
fn pbt_replaces_the_worst_member_by_an_explored_copy_of_a_best_one() {
    use saturate_train::pbt::{lineage, GENERATION_ATTR, PARENT_ATTR, START_STEP_ATTR};
    let study = StudyConfig::new()
        .with_sampler(RandomSamplerConfig::new().with_seed(21).init())
        .init()
        .unwrap();
    let finals = Finals::default();
    let trainer = run_pbt(&study, regression(&finals), pbt_config(0), 2, 6);
    assert_eq!(trainer.occupancy().exploits, 2);
    let all = trials(&study);
    assert_eq!(all.len(), 6, "4 first members and 2 copies");
    assert!(all.iter().all(|t| t.state == TrialState::Complete));
    let by_number = |n: u64| all.iter().find(|t| t.number == n).unwrap();
    let last_step = |t: &FrozenTrial| t.last_step().unwrap().0;
    let first_step = |t: &FrozenTrial| *t.intermediate_values.keys().next().unwrap();
    let children: Vec<&FrozenTrial> = all
        .iter()
        .map(|t| &**t)
        .filter(|t| t.system_attrs.contains_key(PARENT_ATTR))
        .collect();
    assert_eq!(children.len(), 2);
    let mut starts = Vec::new();
    for child in &children {
        let parent = by_number(system_i64(child, PARENT_ATTR).unwrap() as u64);
        let start = system_i64(child, START_STEP_ATTR).unwrap();
        starts.push(start);
        assert_eq!(
            system_i64(child, GENERATION_ATTR).unwrap(),
            system_i64(parent, GENERATION_ATTR).unwrap_or(0) + 1
        );
        assert_eq!(
            first_step(child),
            start + 1,
            "it reports from the next epoch on"
        );
        // The donor's parameters, the learning rate explored inside its distribution.
        for name in ["width", "momentum", "seed"] {
            assert_eq!(child.param(name), parent.param(name), "{name}");
        }
        let (lr, parent_lr) = (
            child.param("lr").unwrap().as_f64().unwrap(),
            parent.param("lr").unwrap().as_f64().unwrap(),
        );
        assert!((1e-2..=2e-1).contains(&lr), "{lr}");
        assert_ne!(lr, parent_lr, "explored");
        // The donor was among the best at that epoch: one worse member ended there.
        let ended: Vec<&FrozenTrial> = all
            .iter()
            .map(|t| &**t)
            .filter(|t| !t.system_attrs.contains_key(PARENT_ATTR) || t.number != child.number)
            .filter(|t| last_step(t) == start && t.number != parent.number)
            .collect();
        assert_eq!(ended.len(), 1, "one member ends where the copy starts");
        let weak = ended[0];
        let value_at = |t: &FrozenTrial| t.intermediate_values[&start];
        assert!(
            value_at(weak) > value_at(parent),
            "the worse one exploits (MSE: lower is better)"
        );
        assert_eq!(weak.values, Some(vec![value_at(weak)]));
    }
    starts.sort_unstable();
    assert_eq!(starts, vec![2, 4]);
    // Four members train to the end, each with a lineage that covers epochs 0 to 6.
    let finishers: Vec<&FrozenTrial> = all
        .iter()
        .map(|t| &**t)
        .filter(|t| last_step(t) == 6)
        .collect();
    assert_eq!(finishers.len(), 4);
    assert!(all.iter().all(|t| t.state != TrialState::Pruned));
    for t in finishers {
        let segments = lineage(&study, t.number).unwrap();
        assert_eq!(segments[0].start_step, 0);
        assert_eq!(segments.last().unwrap().trial_number, t.number);
        assert_eq!(segments.last().unwrap().end_step, Some(6));
        for pair in segments.windows(2) {
            assert_eq!(pair[0].end_step, Some(pair[1].start_step));
        }
    }
}

/// Every trial of a PBT run, copies included, ends with exactly the parameters its lineage
/// gets trained alone with plain Burn: the first generation's initialisation, then each
/// segment's learning rate and momentum for its epochs, with the optimizer's velocity carried
/// across segments. So an exploit copies the donor's weights and momentum buffers, and the
/// explored values (both mutated here) drive the copy's very next step. K = 4, a quantile of
/// 1/2: two copies after epochs 2 and 4 of 6.
#[test]
fn every_pbt_trial_equals_its_lineage_replayed_alone() {
    use saturate_study::distributions::{Distribution, FloatDistribution};
    use saturate_train::pbt::{lineage, PARENT_ATTR};
    let study = random_study(25);
    let finals = Finals::default();
    let task = regression(&finals);
    let history = task.history.clone();
    let config = pbt_config(4).with_quantile_fraction(0.5).with_mutation(
        "momentum",
        Distribution::Float(FloatDistribution::new(0.0, 0.9, false, None).unwrap()),
    );
    let steps_per_epoch = 2;
    let trainer = run_pbt(&study, task, config, steps_per_epoch, 6);
    assert_eq!(trainer.occupancy().exploits, 4);
    let all = trials(&study);
    assert_eq!(all.len(), 8, "4 first members and 4 copies");
    let width = all[0].param("width").unwrap().as_f64().unwrap() as usize;
    let f = |t: &FrozenTrial, name: &str| t.param(name).unwrap().as_f64().unwrap();
    let mut momentum_changed = 0;
    for t in &all {
        assert_eq!(t.state, TrialState::Complete, "trial {}", t.number);
        if let Some(parent) = system_i64(t, PARENT_ATTR) {
            let parent = all.iter().find(|p| p.number == parent as u64).unwrap();
            momentum_changed += usize::from(f(t, "momentum") != f(parent, "momentum"));
        }
        let segments = lineage(&study, t.number).unwrap();
        let schedule: Vec<(f64, f64, usize)> = segments
            .iter()
            .map(|s| {
                let p = |name: &str| s.params[name].as_f64().unwrap();
                let epochs = s.end_step.unwrap() - s.start_step;
                (p("lr"), p("momentum"), epochs as usize * steps_per_epoch)
            })
            .collect();
        let seed = segments[0].params["seed"].as_f64().unwrap() as u64;
        let want = train_schedule(width, seed, &schedule);
        let key = (seed, f(t, "lr").to_bits(), f(t, "momentum").to_bits());
        let got = history.borrow()[&key].clone();
        let what = format!("trial {} ({} segments)", t.number, segments.len());
        assert_params_equal(&got, &want, &what);
    }
    assert_eq!(
        momentum_changed, 4,
        "every copy trains with an explored momentum"
    );
}

/// A member whose loss diverges fails its trial and leaves at that step, as without PBT; at
/// the end of the epoch its slot is taken by a copy of a best member instead of staying
/// empty, so four members still train to the last epoch.
#[test]
fn pbt_fills_a_failed_members_slot_with_a_copy() {
    use saturate_train::pbt::PARENT_ATTR;
    let study = StudyConfig::new()
        .with_sampler(RandomSamplerConfig::new().with_seed(22).init())
        .init()
        .unwrap();
    let finals = Finals::default();
    let mut task = regression(&finals);
    task.diverge = Some(1);
    run_pbt(&study, task, pbt_config(1), 2, 3);
    let all = trials(&study);
    assert_eq!(
        all.iter().filter(|t| t.state == TrialState::Fail).count(),
        1
    );
    let copy = all
        .iter()
        .find(|t| t.system_attrs.contains_key(PARENT_ATTR))
        .expect("the failed slot is filled by a copy");
    assert_eq!(
        system_i64(copy, saturate_train::pbt::START_STEP_ATTR),
        Some(1)
    );
    let at_the_end = all
        .iter()
        .filter(|t| t.last_step().is_some_and(|(step, _)| step == 3))
        .count();
    assert_eq!(at_the_end, 4);
}

/// Shared parameters cannot be explored (they may change shapes): the group fails with an
/// error that says so, and nothing trains.
#[test]
fn pbt_refuses_to_explore_a_shared_parameter() {
    use saturate_study::distributions::{Distribution, IntDistribution};
    let study = random_study(23);
    let finals = Finals::default();
    let config = pbt_config(2).with_mutation(
        "width",
        Distribution::Int(IntDistribution::new(6, 10, false, 1).unwrap()),
    );
    let mut trainer = TrainerConfig::new(2, 2)
        .with_pbt(config)
        .init(regression(&finals))
        .unwrap();
    let summary =
        run_trainer::<I, _, _>(&study, &quiet(2, 2), &mut trainer, &Default::default()).unwrap();
    assert_eq!(summary.failed, 2);
    let reason = trials(&study)[0].system_attrs["fail_reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(reason.contains("`width` is a shared parameter"), "{reason}");
    assert_eq!(trainer.occupancy().group_steps, 0);
}

/// A PBT run on a journal file reads in Python Optuna 4.9 and 5.0 as ordinary trials, every
/// parent resolvable to a trial of the study and of an earlier generation.
#[test]
fn a_pbt_journal_reads_in_python_optuna_with_every_parent_resolvable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pbt.log");
    let storage: std::sync::Arc<dyn saturate_study::storage::Storage> =
        std::sync::Arc::new(saturate_study::storage::JournalStorage::open(&path).unwrap());
    let study = StudyConfig::new()
        .with_name("pbt")
        .with_storage(storage)
        .with_sampler(RandomSamplerConfig::new().with_seed(24).init())
        .init()
        .unwrap();
    let finals = Finals::default();
    let mut trainer = TrainerConfig::new(1, 4)
        .with_pbt(pbt_config(3).with_quantile_fraction(0.5))
        .init(regression(&finals))
        .unwrap();
    run_trainer::<I, _, _>(&study, &quiet(4, 4), &mut trainer, &Default::default()).unwrap();
    let written = trials(&study).len();
    assert!(written > 4, "exploits wrote new trials");
    let script = r#"
import json, sys, optuna
from optuna.storages.journal import JournalFileBackend, JournalStorage
study = optuna.load_study(study_name="pbt", storage=JournalStorage(JournalFileBackend(sys.argv[1])))
by_number = {t.number: t for t in study.trials}
checked = 0
for t in study.trials:
    assert t.state == optuna.trial.TrialState.COMPLETE, t
    parent = t.system_attrs.get("saturate:pbt_parent")
    if parent is None:
        continue
    p = by_number[parent]
    assert t.system_attrs["saturate:pbt_generation"] == p.system_attrs.get("saturate:pbt_generation", 0) + 1
    assert min(t.intermediate_values) == t.system_attrs["saturate:pbt_start_step"] + 1
    checked += 1
print(json.dumps({"trials": len(study.trials), "children": checked}))
"#;
    for python in crate::processes::pythons() {
        let out = std::process::Command::new(&python)
            .args(["-c", script, path.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            python.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let seen: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(seen["trials"], written);
        assert_eq!(seen["children"], written - 4);
    }
}

/// A mutation must name a member hyperparameter the task suggests, from the same distribution:
/// otherwise the group fails before training, saying which and why.
#[test]
fn pbt_mutations_must_match_what_the_task_suggests() {
    use saturate_study::distributions::{Distribution, FloatDistribution};
    let wider = Distribution::Float(FloatDistribution::new(1e-3, 1.0, true, None).unwrap());
    let unknown = Distribution::Float(FloatDistribution::new(0.0, 1.0, false, None).unwrap());
    for (name, distribution, says) in [
        ("lr", wider, "differs from the one the task suggests"),
        (
            "beta",
            unknown,
            "`beta` is not a hyperparameter the task suggests",
        ),
    ] {
        let study = random_study(25);
        let finals = Finals::default();
        let config = pbt_config(4).with_mutation(name, distribution);
        let mut trainer = TrainerConfig::new(2, 2)
            .with_pbt(config)
            .init(regression(&finals))
            .unwrap();
        let summary =
            run_trainer::<I, _, _>(&study, &quiet(2, 2), &mut trainer, &Default::default())
                .unwrap();
        assert_eq!(summary.failed, 2);
        let reason = trials(&study)[0].system_attrs["fail_reason"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(reason.contains(says), "{reason}");
        assert_eq!(trainer.occupancy().group_steps, 0);
    }
}

#[test]
fn retain_members_keeps_model_optimizer_and_values_together() {
    let mut model: saturate_vmap::Batched<Mlp<B>> =
        saturate_vmap::Batched::init(4, &Default::default(), |d| Mlp {
            hidden: LinearConfig::new(INPUTS, 5).init(d),
            out: LinearConfig::new(5, OUTPUTS).init(d),
            relu: Relu::new(),
        })
        .unwrap();
    let mut optim = GroupSgdConfig::new()
        .with_momentum(Some(GroupMomentumConfig::new().with_momentum(0.9)))
        .init(4)
        .unwrap();
    let mut lr = Members::from(vec![0.1, 0.2, 0.3, 0.4]);
    let step = |model: saturate_vmap::Batched<Mlp<B>>,
                optim: &mut saturate_optim::GroupOptimizer<GroupSgd, Mlp<B>, B>,
                lr: &Members<f64>| {
        // Built on the group's current device: its member count follows `retain`.
        let x = Tensor::<B, 2>::ones([ROWS, INPUTS], &model.device());
        let loss = model.forward(x).powi_scalar(2).mean();
        let grads = GradientsParams::from_grads(loss.backward(), &*model);
        optim.step(lr, model, grads).unwrap()
    };
    model = step(model, &mut optim, &lr);
    // Reference: every member trained one more step, then members 3 and 1 read.
    let reference = step(model.clone(), &mut optim.clone(), &lr);
    let x = Tensor::<B, 2>::ones([ROWS, INPUTS], &reference.device());
    let expected = member_values(reference.forward(x).mean()).unwrap();

    (&mut model, &mut optim, &mut lr)
        .retain_members(&[3, 1])
        .unwrap();
    assert_eq!(model.members(), 2);
    assert_eq!(lr.as_slice(), &[0.4, 0.2]);
    // The optimizer followed the model: its momentum buffers are the kept members'.
    model = step(model, &mut optim, &lr);
    let x = Tensor::<B, 2>::ones([ROWS, INPUTS], &model.device());
    let got = member_values(model.forward(x).mean()).unwrap();
    assert_eq!(got, vec![expected[3], expected[1]]);

    // A bad index changes nothing and says so.
    let err = (&mut model, &mut optim, &mut lr).retain_members(&[0, 2]);
    assert!(matches!(err, Err(TrainError::Vmap(_))), "{err:?}");
    assert_eq!((model.members(), lr.len()), (2, 2));
}
