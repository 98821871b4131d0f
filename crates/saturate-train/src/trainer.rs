//! [`GroupTrainer`]: the training loop of a group, owning everything that has a member axis.

use std::collections::BTreeMap;

use burn::backend::Autodiff;
use burn::module::AutodiffModule;
use burn::optim::GradientsParams;
use burn::tensor::backend::Backend;
use burn::tensor::Tensor;
use rand::rngs::StdRng;
use saturate_optim::{GroupOptimizer, UpdateRule};
use saturate_study::study::ObjectiveError;
use saturate_study::Study;
use saturate_vmap::{member_values, Batched, Vmap, VmapDevice};

use crate::error::{Result, TrainError};
use crate::group::{GroupTrial, MemberScope, SharedScope};
use crate::members::Members;
use crate::pbt::PbtConfig;
use crate::run::{run, RunConfig, RunSummary};

/// The backend a [`GroupTask`] trains on: autodiff over the member-axis decorator over `I`.
pub type GroupBackend<I> = Autodiff<Vmap<I>>;

/// The per-member hyperparameters of a group, by name: one [`Members`] list each, all of the
/// group's length. The trainer keeps, drops and appends members in it together with the model
/// and the optimizer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemberHyper {
    values: BTreeMap<String, Members<f64>>,
}

impl MemberHyper {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the values of `name`.
    pub fn with(mut self, name: impl Into<String>, values: Members<f64>) -> Self {
        self.values.insert(name.into(), values);
        self
    }

    /// The values of `name`.
    ///
    /// # Panics
    /// If `name` is not in the table (a typo in the task): the message names the known ones.
    pub fn get(&self, name: &str) -> &Members<f64> {
        self.values.get(name).unwrap_or_else(|| {
            panic!(
                "no member hyperparameter `{name}`; the task suggested {:?}",
                self.values.keys().collect::<Vec<_>>()
            )
        })
    }

    /// The values of `name`, if present.
    pub fn try_get(&self, name: &str) -> Option<&Members<f64>> {
        self.values.get(name)
    }

    /// The member count (0 for an empty table).
    pub fn members(&self) -> usize {
        self.values.values().next().map_or(0, |v| v.len())
    }

    fn check(&self, expected: usize) -> Result<()> {
        for (name, values) in &self.values {
            if values.len() != expected {
                return Err(TrainError::WrongMemberCount {
                    what: format!("member hyperparameter `{name}`"),
                    expected,
                    got: values.len(),
                });
            }
        }
        Ok(())
    }

    fn retain(&mut self, indices: &[usize]) {
        for values in self.values.values_mut() {
            values.retain(indices);
        }
    }

    fn extend(&mut self, other: MemberHyper) -> Result<()> {
        if self.values.is_empty() {
            *self = other;
            return Ok(());
        }
        for (name, values) in other.values {
            let mine = self
                .values
                .get_mut(&name)
                .ok_or_else(|| TrainError::InvalidConfig {
                    setting: "suggest_members",
                    reason: format!(
                        "new members suggested `{name}`, which the group does not have"
                    ),
                })?;
            mine.extend(values);
        }
        Ok(())
    }
}

/// What a [`GroupTrainer`] needs to know about a training job: the hyperparameters, the
/// model, the optimizer, the data and the metric. Think of burn-train's `TrainStep` /
/// `ValidStep` with a member axis.
///
/// `I` is the inner backend (e.g. `NdArray`); the model trains on `Autodiff<Vmap<I>>`.
pub trait GroupTask<I: Backend> {
    /// The shared hyperparameters, sampled once per group (they may change shapes).
    type Shared: Clone;
    /// The model (an ordinary burn module).
    type Model: AutodiffModule<GroupBackend<I>>;
    /// The optimizer's update rule: `GroupSgd`, `GroupAdam` or `GroupAdamW` of saturate-optim.
    type Rule: UpdateRule;
    /// One batch of training data, shared by every member.
    type Batch;

    /// Samples the shared hyperparameters.
    fn suggest_shared<S: Study>(
        &mut self,
        scope: &mut SharedScope<'_, '_, S>,
    ) -> Result<Self::Shared, ObjectiveError>;

    /// Samples the member hyperparameters of new members (the group's first members, or the
    /// ones refill adds: `scope` covers only them).
    fn suggest_members<S: Study>(
        &mut self,
        shared: &Self::Shared,
        scope: &mut MemberScope<'_, '_, S>,
    ) -> Result<MemberHyper, ObjectiveError>;

    /// Builds the model on a device of `hyper.members()` members (call your module's
    /// ordinary `init` with `device`; per-member values enter through
    /// [`Members::to_tensor`]). An error (a checkpoint that cannot be read) fails the group's
    /// running trials; so does an error of the methods below.
    fn init_model(
        &mut self,
        shared: &Self::Shared,
        hyper: &MemberHyper,
        device: &VmapDevice<I>,
    ) -> Result<Self::Model, ObjectiveError>;

    /// The optimizer config of new members (one value per member where it varies).
    fn optimizer(
        &self,
        shared: &Self::Shared,
        hyper: &MemberHyper,
    ) -> <Self::Rule as UpdateRule>::Config;

    /// The learning rate of each member for its next step; `member_steps[k]` is how many
    /// steps member k has trained (its own count: a schedule follows it). Default: the
    /// member hyperparameter `lr`.
    fn learning_rates(&self, hyper: &MemberHyper, member_steps: &[usize]) -> Members<f64> {
        let _ = member_steps;
        hyper.get("lr").clone()
    }

    /// Called after an explore step of population-based training
    /// ([`TrainerConfig::with_pbt`]) with every member's hyperparameters (the copies' explored
    /// values, the others' unchanged): update the ones that live in the model, such as
    /// per-member dropout probabilities (`saturate_vmap::nn::Dropout::set_probs`). The
    /// optimizer's hyperparameters and [`learning_rates`](Self::learning_rates) need nothing
    /// here. Default: nothing.
    fn update_model_hyper(
        &mut self,
        model: &Self::Model,
        hyper: &MemberHyper,
    ) -> Result<(), ObjectiveError> {
        let _ = (model, hyper);
        Ok(())
    }

    /// The next training batch, built on `device` (the group's current device: its member
    /// count changes when members leave or join, so build tensors here, every step). Called
    /// once per group step: one input pipeline for the whole group.
    fn next_batch(&mut self, device: &VmapDevice<I>) -> Result<Self::Batch, ObjectiveError>;

    /// The loss of every member on `batch`: a tensor of logical shape `[1]` (one value per
    /// member, e.g. burn's `CrossEntropyLoss` with mean reduction). A member whose loss is
    /// NaN or infinite fails its trial at that step and leaves the group.
    fn loss(
        &mut self,
        model: &Self::Model,
        batch: &Self::Batch,
        hyper: &MemberHyper,
    ) -> Result<Tensor<GroupBackend<I>, 1>, ObjectiveError>;

    /// The objective value of every member (e.g. validation accuracy), reported to the
    /// study's pruner after each epoch and told to the trial at the end.
    fn evaluate(
        &mut self,
        model: &Self::Model,
        device: &VmapDevice<I>,
        hyper: &MemberHyper,
    ) -> Result<Members<f64>, ObjectiveError>;
}

/// How a [`GroupTrainer`] trains each group.
#[derive(Debug, Clone)]
pub struct TrainerConfig {
    /// Training steps between two evaluations (one "epoch").
    pub steps_per_epoch: usize,
    /// Epochs each member trains (its own count: a member that joined later trains as long).
    pub epochs: usize,
    /// Give the slots freed by pruned, failed or finished members to new trials with the
    /// group's shared values (default on).
    pub refill: bool,
    /// The most trials one group takes over its life, its first members and the ones refill
    /// adds together. Once a group has taken this many, its freed slots stay empty and the
    /// next group is asked with freshly sampled shared values, so shared values (widths,
    /// depths) other than the first group's get explored. Default:
    /// [`DEFAULT_TRIALS_PER_GROUP_FACTOR`] × the group size; `usize::MAX` lets refill keep
    /// a group alive until the run's budget is spent (most busy slots, but one set of shared
    /// values for the whole study when the budget is small).
    pub max_trials_per_group: Option<usize>,
    /// Before each refill, ask the study's sampler whether it would still choose the group's
    /// shared values ([`Study::shared_values_promising`]); when it would not, the group takes
    /// no more trials and the next group samples its own (default off: refill up to
    /// `max_trials_per_group`). See [`TrainerConfig::with_refill_while_promising`].
    pub refill_while_promising: bool,
    /// Successive halving across shared values with this reduction factor η (`None`, the
    /// default: off): a group is refilled only while its shared values are among the best
    /// `1/η` of the shared values that have taken as many trials. See
    /// [`TrainerConfig::with_refill_halving`].
    pub refill_halving: Option<usize>,
    /// Population-based training instead of refill and pruning (`None`, the default: off).
    /// See [`TrainerConfig::with_pbt`].
    pub pbt: Option<PbtConfig>,
}

/// A group takes at most this many times its size in trials by default
/// ([`TrainerConfig::with_max_trials_per_group`]).
pub const DEFAULT_TRIALS_PER_GROUP_FACTOR: usize = 2;

impl TrainerConfig {
    /// `epochs` epochs of `steps_per_epoch` steps, refill on, at most
    /// [`DEFAULT_TRIALS_PER_GROUP_FACTOR`] × the group size trials per group.
    pub fn new(steps_per_epoch: usize, epochs: usize) -> Self {
        Self {
            steps_per_epoch,
            epochs,
            refill: true,
            max_trials_per_group: None,
            refill_while_promising: false,
            refill_halving: None,
            pbt: None,
        }
    }

    /// Trains each group with population-based training: the group's members train for the
    /// whole budget (`epochs`), reporting every epoch without pruning, and every
    /// `perturbation_interval` epochs the bottom quantile copies the top quantile's weights
    /// and optimizer state (a gather on the device) and explores its hyperparameters. Refill
    /// and the pruner are not used; a member that fails (a NaN loss or value) is replaced by a
    /// copy of a top member at the end of the epoch. Each constant-hyperparameter segment of
    /// a member is a trial (see [`crate::pbt`]); these trials do not count toward the run's
    /// `n_trials`, which counts the group's first members.
    pub fn with_pbt(mut self, config: PbtConfig) -> Self {
        self.pbt = Some(config);
        self
    }

    /// Turns refill on or off.
    pub fn with_refill(mut self, on: bool) -> Self {
        self.refill = on;
        self
    }

    /// The most trials one group takes, refilled ones included (at least 1; `usize::MAX`
    /// for no limit; default: [`DEFAULT_TRIALS_PER_GROUP_FACTOR`] × the group size).
    pub fn with_max_trials_per_group(mut self, trials: usize) -> Self {
        self.max_trials_per_group = Some(trials);
        self
    }

    /// Refill a group only while its sampler would still choose its shared values: before
    /// each refill the trainer asks [`Study::shared_values_promising`] (TPE: are the shared
    /// values' l(x)/g(x) over the finished trials at least that of the best of its candidates,
    /// i.e. would it sample them now) and closes the group when the answer is no. The limit
    /// of [`with_max_trials_per_group`](Self::with_max_trials_per_group) still applies. A
    /// sampler with no opinion (random, GP, CMA-ES) refills as without it. Meant for
    /// discrete shared values (widths, depths); see the book's "Choose the group size K".
    pub fn with_refill_while_promising(mut self, on: bool) -> Self {
        self.refill_while_promising = on;
        self
    }

    /// Refill by successive halving across shared values, with reduction factor `eta` (at
    /// least 2; Optuna's and Ray Tune's successive halving default to 4). The shared values
    /// of a group (its width, its depth) reach rung `r` once they have taken `r` × K trials;
    /// before each refill the trainer
    /// ranks the shared values at the group's rung by the best value of their first
    /// `r` × K trials, and refills the group only while its own are among the best
    /// `⌊m / eta⌋` of the `m` ranked; a refill it declines is asked again at the group's next
    /// refill, once more of its trials have completed. So the first group takes no more than
    /// its first K trials (alone at its rung, it cannot be among the best half of one), each
    /// new set of shared values gets its K trials, and only those that beat the ones before
    /// take more: exploration at the cost of slots left empty while a group waits. The limit of
    /// [`with_max_trials_per_group`](Self::with_max_trials_per_group) still applies; set it
    /// to `usize::MAX` to let halving alone decide. Single-objective studies only.
    pub fn with_refill_halving(mut self, eta: usize) -> Self {
        self.refill_halving = Some(eta);
        self
    }

    /// The most trials a group of `group_size` takes.
    pub fn trials_per_group(&self, group_size: usize) -> usize {
        self.max_trials_per_group
            .unwrap_or(group_size.saturating_mul(DEFAULT_TRIALS_PER_GROUP_FACTOR))
    }

    /// The trainer of `task` with these settings.
    ///
    /// # Errors
    /// [`TrainError::InvalidConfig`] for 0 steps, epochs or trials per group, or invalid
    /// [`PbtConfig`] settings.
    pub fn init<T>(self, task: T) -> Result<GroupTrainer<T>> {
        self.check()?;
        Ok(GroupTrainer {
            task,
            config: self,
            group_size: 0,
            occupancy: Occupancy::default(),
            pbt_rng: None,
        })
    }

    fn check(&self) -> Result<()> {
        for (setting, value) in [
            ("steps_per_epoch", self.steps_per_epoch),
            ("epochs", self.epochs),
            (
                "max_trials_per_group",
                self.max_trials_per_group.unwrap_or(1),
            ),
        ] {
            if value == 0 {
                return Err(TrainError::InvalidConfig {
                    setting,
                    reason: "must be at least 1".into(),
                });
            }
        }
        if let Some(eta) = self.refill_halving {
            if eta < 2 {
                return Err(TrainError::InvalidConfig {
                    setting: "refill_halving",
                    reason: format!(
                        "the reduction factor must be at least 2 (got {eta}); 2 keeps the \
                         better half of the shared values at each rung, 3 the best third"
                    ),
                });
            }
        }
        if let Some(pbt) = &self.pbt {
            pbt.check()?;
        }
        Ok(())
    }
}

/// Statistics of a trainer over a run: how full its groups were.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Occupancy {
    /// Group steps trained.
    pub group_steps: usize,
    /// Member steps trained (sum over group steps of the members trained).
    pub member_steps: usize,
    /// Member slots available (sum over group steps of the group size K).
    pub slots: usize,
    /// Batches built (`next_batch` calls): one per group step.
    pub batches: usize,
    /// Members that joined running groups through refill.
    pub refilled: usize,
    /// Groups closed to refill because the sampler no longer chose their shared values
    /// ([`TrainerConfig::with_refill_while_promising`]).
    pub closed_unpromising: usize,
    /// Groups whose refill successive halving across shared values declined at least once
    /// ([`TrainerConfig::with_refill_halving`]).
    pub held_by_halving: usize,
    /// Members that became copies of others (population-based training's exploit).
    pub exploits: usize,
    /// Wall time of the exploit steps: the gathers of the model and the optimizer state
    /// ([`Batched::select`], `GroupOptimizer::select`) and the explored hyperparameters. On an
    /// asynchronous backend (wgpu, CUDA) this is the time to enqueue the gathers.
    pub exploit_copy_time: std::time::Duration,
    /// Wall time of the exploit steps' study writes (ending the weak members' trials,
    /// starting the copies' trials and recording their parameters).
    pub exploit_study_time: std::time::Duration,
}

impl Occupancy {
    /// The members-busy fraction: member steps / slots.
    pub fn busy_fraction(&self) -> f64 {
        if self.slots == 0 {
            0.0
        } else {
            self.member_steps as f64 / self.slots as f64
        }
    }
}

/// Trains groups of a [`GroupTask`]: owns the [`Batched`] model, the [`GroupOptimizer`], the
/// per-member hyperparameters and step counts, and the data loop, so that every membership
/// change happens in one place: pruned or failed members leave all of them (the compute
/// shrinks), finished members are told COMPLETE, and with refill new trials join with a fresh
/// initialisation and optimizer step 0.
#[derive(Debug)]
pub struct GroupTrainer<T> {
    task: T,
    config: TrainerConfig,
    group_size: usize,
    occupancy: Occupancy,
    /// Population-based training's draws (made from the config's seed on first use).
    pbt_rng: Option<StdRng>,
}

impl<T> GroupTrainer<T> {
    /// The task.
    pub fn task(&self) -> &T {
        &self.task
    }

    /// The task, mutably.
    pub fn task_mut(&mut self) -> &mut T {
        &mut self.task
    }

    /// How full the groups were so far.
    pub fn occupancy(&self) -> &Occupancy {
        &self.occupancy
    }

    /// Trains one group to the end: every member trains `epochs` epochs of its own, reports
    /// after each, and is told COMPLETE with its last evaluation; pruned and non-finite
    /// members leave; with refill, freed slots take new trials while the run's budget lasts.
    ///
    /// Every member's training loss is read every step: a member whose loss is NaN or
    /// infinite fails its trial at once (the reason names the step and the value) and leaves
    /// the model, the optimizer and the hyperparameters before the next step, so the others
    /// train exactly as they would without it; its slot is refilled at the epoch's end. (This
    /// is one read of K numbers per step: on a GPU, one synchronisation per step.)
    ///
    /// # Errors
    /// [`TrainError::Interrupted`]; errors of the task, the module, the optimizer or the
    /// study (they fail the group's running trials).
    pub fn train_group<I, S>(
        &mut self,
        group: &mut GroupTrial<'_, S>,
        device: &I::Device,
    ) -> core::result::Result<Members<f64>, ObjectiveError>
    where
        I: Backend,
        S: Study,
        T: GroupTask<I>,
    {
        self.config.check()?;
        let target = group.members();
        self.group_size = self.group_size.max(target);
        let shared = self.task.suggest_shared(&mut group.shared())?;
        if let Some(pbt) = &self.config.pbt {
            check_pbt(pbt, group)?;
        }
        let mut hyper = self.task.suggest_members(&shared, &mut group.member())?;
        hyper.check(group.members())?;
        if let Some(pbt) = &self.config.pbt {
            check_mutations(pbt, group)?;
        }
        let first = VmapDevice::new(device.clone(), group.members());
        let mut model: Batched<T::Model> = Batched::from_module::<GroupBackend<I>>(
            self.task.init_model(&shared, &hyper, &first)?,
        )?;
        let mut optim: GroupOptimizer<T::Rule, T::Model, GroupBackend<I>> =
            GroupOptimizer::new(&self.task.optimizer(&shared, &hyper), group.members())?;
        let mut steps = vec![0usize; group.members()];
        let mut epochs = vec![0i64; group.members()];
        // Whether successive halving has declined a refill of this group.
        let mut held_by_halving = false;
        // Trials this group may still take through refill.
        let mut trials_left = self
            .config
            .trials_per_group(target)
            .saturating_sub(group.members());
        loop {
            let mut vdevice = VmapDevice::new(device.clone(), group.members());
            for _ in 0..self.config.steps_per_epoch {
                let members = group.members();
                let batch = self.task.next_batch(&vdevice)?;
                self.occupancy.batches += 1;
                let loss = self.task.loss(&model, &batch, &hyper)?;
                // Every member's loss, every step: a diverged member leaves before its NaN
                // reaches a report (an accuracy stays finite when the weights are NaN).
                let losses = member_values(loss.clone())?;
                let grads = GradientsParams::from_grads(loss.backward(), &*model);
                let lr = self.task.learning_rates(&hyper, &steps);
                model = optim.step(&lr, model, grads)?;
                steps.iter_mut().for_each(|s| *s += 1);
                self.occupancy.group_steps += 1;
                self.occupancy.member_steps += members;
                self.occupancy.slots += target;
                let diverged: Vec<(usize, String)> = losses
                    .iter()
                    .enumerate()
                    .filter(|(_, loss)| !loss.is_finite())
                    .map(|(i, loss)| {
                        (
                            i,
                            format!("the training loss at step {} is {loss}", steps[i]),
                        )
                    })
                    .collect();
                if diverged.is_empty() {
                    continue;
                }
                let keep = group.fail_members(&diverged)?;
                log::debug!(
                    "group {}: {} member(s) diverged",
                    group.group_id(),
                    diverged.len()
                );
                if keep.is_empty() {
                    // Nobody left to train: the epoch ends here (refill below).
                    break;
                }
                model = model.retain::<GroupBackend<I>>(&keep)?;
                optim.retain(&keep)?;
                hyper.retain(&keep);
                steps = keep.iter().map(|&i| steps[i]).collect();
                epochs = keep.iter().map(|&i| epochs[i]).collect();
                vdevice = VmapDevice::new(device.clone(), keep.len());
            }
            let mut last_metric = Members::default();
            let reported = if group.members() == 0 {
                Vec::new()
            } else {
                let metric = self.task.evaluate(&model, &vdevice, &hyper)?;
                epochs.iter_mut().for_each(|e| *e += 1);
                let prune = self.config.pbt.is_none();
                let reported = match group.report_steps_pruning(&epochs, &metric, prune) {
                    Ok(keep) => keep,
                    Err(TrainError::GroupFinished { .. }) => Vec::new(),
                    Err(e) => return Err(e.into()),
                };
                // Members that reached their budget finish now.
                let done: Vec<usize> = (0..reported.len())
                    .filter(|&i| epochs[reported[i]] as usize >= self.config.epochs)
                    .collect();
                let done_values: Members<f64> = done.iter().map(|&i| metric[reported[i]]).collect();
                let after_done: Vec<usize> = if done.is_empty() {
                    (0..reported.len()).collect()
                } else {
                    group.complete_members(&done, &done_values)?
                };
                let kept: Vec<usize> = after_done.iter().map(|&i| reported[i]).collect();
                last_metric = kept.iter().map(|&i| metric[i]).collect();
                kept
            };
            let keep = reported;
            let mut free = (target - keep.len()).min(trials_left);
            if free > 0
                && self.config.refill
                && self.config.refill_while_promising
                && self.config.pbt.is_none()
                && group
                    .study()
                    .shared_values_promising(group.shared_values())?
                    == Some(false)
            {
                log::debug!(
                    "group {}: the sampler no longer chooses its shared values; no more refill",
                    group.group_id()
                );
                self.occupancy.closed_unpromising += 1;
                trials_left = 0;
                free = 0;
            }
            if free > 0 && self.config.refill && self.config.pbt.is_none() {
                if let Some(eta) = self.config.refill_halving {
                    // Not a final no: the ranking is asked again at the group's next
                    // refill, when more of its trials may have completed.
                    if !halving_promotes(group, target, eta)? {
                        log::debug!(
                            "group {}: its shared values are not among the best 1/{eta} at \
                             their rung; its free slots stay empty for now",
                            group.group_id()
                        );
                        if !held_by_halving {
                            held_by_halving = true;
                            self.occupancy.held_by_halving += 1;
                        }
                        free = 0;
                    }
                }
            }
            let refill = if self.config.refill && self.config.pbt.is_none() && free > 0 {
                group.state.claim(free)
            } else {
                0
            };
            trials_left -= refill;
            if keep.is_empty() && refill == 0 {
                return Ok(Members::default());
            }
            if keep.len() < model.members() {
                if keep.is_empty() {
                    // Everyone left: the group restarts from the refilled members alone.
                    steps.clear();
                    epochs.clear();
                    hyper = MemberHyper::new();
                } else {
                    model = model.retain::<GroupBackend<I>>(&keep)?;
                    optim.retain(&keep)?;
                    hyper.retain(&keep);
                    steps = keep.iter().map(|&i| steps[i]).collect();
                    epochs = keep.iter().map(|&i| epochs[i]).collect();
                }
            }
            if let Some(pbt) = &self.config.pbt {
                let due = epochs
                    .first()
                    .is_some_and(|&e| (e as usize).is_multiple_of(pbt.perturbation_interval));
                if due || group.members() < target {
                    let rng = self.pbt_rng.get_or_insert_with(|| pbt.rng());
                    let plan = plan_exploit(pbt, group, &last_metric, target, due, rng);
                    if !plan.is_empty() {
                        let started = std::time::Instant::now();
                        let order =
                            exploit::<I, S, T>(&mut self.task, pbt, group, &shared, &plan, rng)?;
                        self.occupancy.exploit_study_time += started.elapsed();
                        let started = std::time::Instant::now();
                        model = model.select::<GroupBackend<I>>(&order.indices)?;
                        optim.select(&order.indices)?;
                        hyper.retain(&order.survivors);
                        hyper.extend(order.hyper)?;
                        optim.set_config(&self.task.optimizer(&shared, &hyper))?;
                        self.task.update_model_hyper(&model, &hyper)?;
                        steps = order.indices.iter().map(|&i| steps[i]).collect();
                        epochs = order.indices.iter().map(|&i| epochs[i]).collect();
                        self.occupancy.exploit_copy_time += started.elapsed();
                        self.occupancy.exploits += plan.len();
                        log::debug!("group {}: {} exploit(s)", group.group_id(), plan.len());
                    }
                }
                continue;
            }
            if refill > 0 {
                let first = group.members();
                crate::enqueued::record_shared_names(group.study(), group.shared_names())?;
                let trials =
                    crate::enqueued::ask_refill(group.study(), &group.shared_params(), refill)?;
                group.add_trials(trials)?;
                let new_hyper = self
                    .task
                    .suggest_members(&shared, &mut group.member_from(first))?;
                new_hyper.check(refill)?;
                let joining = VmapDevice::new(device.clone(), refill);
                let fresh: Batched<T::Model> = Batched::from_module::<GroupBackend<I>>(
                    self.task.init_model(&shared, &new_hyper, &joining)?,
                )?;
                let config = self.task.optimizer(&shared, &new_hyper);
                if keep.is_empty() {
                    model = fresh;
                    optim = GroupOptimizer::new(&config, refill)?;
                } else {
                    model = model.extend::<GroupBackend<I>>(fresh)?;
                    optim.extend(refill, &config)?;
                }
                hyper.extend(new_hyper)?;
                steps.extend(std::iter::repeat_n(0, refill));
                epochs.extend(std::iter::repeat_n(0, refill));
                self.occupancy.refilled += refill;
                log::debug!("group {}: {refill} member(s) joined", group.group_id());
            }
        }
    }
}

/// PBT needs one objective (to rank members) and explores member hyperparameters only.
/// [`crate::halving::promotes`] for `group`'s shared values, over the study's trials.
fn halving_promotes<S: Study>(
    group: &GroupTrial<'_, S>,
    group_size: usize,
    eta: usize,
) -> Result<bool> {
    let study = group.study();
    let direction = match study.directions() {
        [direction] => *direction,
        _ => {
            return Err(TrainError::InvalidConfig {
                setting: "refill_halving",
                reason: "successive halving ranks shared values by one objective; this \
                         study has several (use the trial limit or refill while promising)"
                    .into(),
            })
        }
    };
    let shared = group
        .shared_values()
        .iter()
        .map(|(name, (distribution, value))| Ok((name.clone(), distribution.to_internal(value)?)))
        .collect::<Result<BTreeMap<String, f64>>>()?;
    let trials = study.trials(None)?;
    Ok(crate::halving::promotes(
        &trials, &shared, group_size, eta, direction,
    ))
}

fn check_pbt<S: Study>(pbt: &PbtConfig, group: &GroupTrial<'_, S>) -> Result<()> {
    if group.study().directions().len() != 1 {
        return Err(TrainError::InvalidConfig {
            setting: "pbt",
            reason: "population-based training ranks members by one objective; the study \
                     has several"
                .into(),
        });
    }
    if let Some(name) = group
        .shared_names()
        .find(|name| pbt.hyperparam_mutations.contains_key(*name))
    {
        return Err(TrainError::InvalidConfig {
            setting: "pbt.hyperparam_mutations",
            reason: format!(
                "`{name}` is a shared parameter (one value for the whole group, it may change \
                 shapes): only member hyperparameters can be explored"
            ),
        });
    }
    Ok(())
}

/// Each mutation names a member hyperparameter the task suggests, with the distribution it
/// suggests it from: an explored value must be one the study could have sampled.
fn check_mutations<S: Study>(pbt: &PbtConfig, group: &GroupTrial<'_, S>) -> Result<()> {
    if group.members() == 0 {
        return Ok(());
    }
    let suggested = &group.trial(0).frozen().params;
    for (name, distribution) in &pbt.hyperparam_mutations {
        let reason = match suggested.get(name) {
            None => format!(
                "`{name}` is not a hyperparameter the task suggests (it suggests {})",
                suggested
                    .keys()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Some(param) if param.distribution != *distribution => format!(
                "`{name}`: the mutation's distribution {} differs from the one the task \
                 suggests it from, {}; give the same bounds, log scale and step",
                distribution.to_json_string(),
                param.distribution.to_json_string()
            ),
            Some(_) => continue,
        };
        return Err(TrainError::InvalidConfig {
            setting: "pbt.hyperparam_mutations",
            reason,
        });
    }
    Ok(())
}

/// `(member, donor)` pairs of one exploit step over the group's current members, whose
/// values of this epoch are `values`: the bottom quantile when `due`, and a donor for every
/// empty slot up to `target` (a member that failed), marked by `member == usize::MAX`.
fn plan_exploit<S: Study>(
    pbt: &PbtConfig,
    group: &GroupTrial<'_, S>,
    values: &Members<f64>,
    target: usize,
    due: bool,
    rng: &mut StdRng,
) -> Vec<(usize, usize)> {
    if values.is_empty() {
        return Vec::new();
    }
    let direction = group.study().directions()[0];
    let mut plan = if due {
        crate::pbt::exploit_plan(values, direction, pbt.quantile_fraction, rng)
    } else {
        Vec::new()
    };
    for _ in group.members()..target {
        let donor = crate::pbt::top_donor(values, direction, pbt.quantile_fraction, rng);
        plan.push((usize::MAX, donor));
    }
    plan
}

/// The group after an exploit step: member `i` is a copy of old member `indices[i]`; the
/// first `survivors.len()` are the members that went on, the others new trials whose member
/// hyperparameters are `hyper`.
struct ExploitOrder {
    indices: Vec<usize>,
    survivors: Vec<usize>,
    hyper: MemberHyper,
}

/// Ends the weak members' trials (COMPLETE with their last value), starts one trial per copy
/// with the donor's parameters explored, and returns the new member order.
fn exploit<I, S, T>(
    task: &mut T,
    pbt: &PbtConfig,
    group: &mut GroupTrial<'_, S>,
    shared: &T::Shared,
    plan: &[(usize, usize)],
    rng: &mut StdRng,
) -> core::result::Result<ExploitOrder, ObjectiveError>
where
    I: Backend,
    S: Study,
    T: GroupTask<I>,
{
    use crate::pbt::{GENERATION_ATTR, PARENT_ATTR, START_STEP_ATTR};
    // The donors' parameters and lineage, read before any member leaves.
    let mut fixed = Vec::with_capacity(plan.len());
    let mut attrs = Vec::with_capacity(plan.len());
    for &(_, donor) in plan {
        let trial = group.trial(donor);
        let mut params = trial.params();
        for (name, distribution) in &pbt.hyperparam_mutations {
            if let Some(value) = params.get(name) {
                let explored = crate::pbt::explore(value, distribution, pbt, rng)?;
                params.insert(name.clone(), explored);
            }
        }
        let generation = trial
            .frozen()
            .system_attrs
            .get(GENERATION_ATTR)
            .and_then(serde_json::Value::as_i64)
            .unwrap_or(0);
        let start = trial.frozen().last_step().map_or(0, |(step, _)| step);
        attrs.push((trial.number(), generation + 1, start));
        fixed.push(params);
    }
    let weak: Vec<usize> = plan
        .iter()
        .map(|&(member, _)| member)
        .filter(|&m| m != usize::MAX)
        .collect();
    let survivors: Vec<usize> = if weak.is_empty() {
        (0..group.members()).collect()
    } else {
        let values: Members<f64> = weak
            .iter()
            .map(|&m| {
                group
                    .trial(m)
                    .frozen()
                    .last_step()
                    .map_or(f64::NAN, |(_, v)| v)
            })
            .collect();
        group.complete_members(&weak, &values)?
    };
    let mut trials = group.study().ask_new(&fixed)?;
    for (trial, &(parent, generation, start)) in trials.iter_mut().zip(&attrs) {
        trial.set_system_attr(PARENT_ATTR, parent)?;
        trial.set_system_attr(GENERATION_ATTR, generation)?;
        trial.set_system_attr(START_STEP_ATTR, start)?;
    }
    let first = group.members();
    group.add_trials(trials)?;
    let hyper = task.suggest_members(shared, &mut group.member_from(first))?;
    hyper.check(plan.len())?;
    let indices = survivors
        .iter()
        .copied()
        .chain(plan.iter().map(|&(_, donor)| donor))
        .collect();
    Ok(ExploitOrder {
        indices,
        survivors,
        hyper,
    })
}

/// Runs a study whose groups are trained by `trainer` (see [`run`] for budgets, failures and
/// progress).
///
/// On NdArray the calling thread first joins rayon's global pool
/// ([`saturate_vmap::join_host_pool`]), unless the pool was built before: the steps' parallel
/// loops then split their work in place instead of handing it to the pool's threads and
/// waiting (on small models most of a step's time). Results are the same either way.
///
/// # Errors
/// As [`run`].
pub fn run_trainer<I, S, T>(
    study: &S,
    config: &RunConfig,
    trainer: &mut GroupTrainer<T>,
    device: &I::Device,
) -> Result<RunSummary>
where
    I: Backend,
    S: Study,
    T: GroupTask<I>,
{
    trainer.config.check()?;
    // An optimisation only: when the pool exists already, the loops hand their work over.
    let _ = saturate_vmap::join_host_pool_for::<I>();
    run(study, config, |group| {
        trainer.train_group::<I, S>(group, device)
    })
}
