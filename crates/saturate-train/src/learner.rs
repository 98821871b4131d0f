//! burn-train's training loop for a group (feature `burn-train`): per-member metrics, a
//! checkpointing strategy that keeps each member's best epoch, and early stopping once every
//! member has stopped improving.
//!
//! A group enters burn-train as a [`GroupModel`](saturate_vmap::GroupModel) trained by a
//! [`GroupOptimizer`](saturate_optim::GroupOptimizer) (burn's `Optimizer` for it, or
//! [`GroupOptimizerAdaptor`](saturate_optim::GroupOptimizerAdaptor) for per-member rates). The
//! module's own burn `TrainStep` / `InferenceStep` run all K members at once; their output
//! (burn-train's `ClassificationOutput` or `RegressionOutput`) reaches the metrics as
//! [`MemberItems`]: one synced output per member. [`PerMember`] runs any burn-train metric on
//! one member, under the name `"{name} member {k}"`:
//!
//! ```ignore
//! use burn::train::metric::{AccuracyMetric, LossMetric};
//! use saturate::train::learner::{MemberMetrics, MetricBackend};
//!
//! let training = SupervisedTraining::new(dir, train_loader, valid_loader)
//!     .metric_per_member_numeric(members, LossMetric::<MetricBackend>::new())
//!     .metric_per_member_numeric(members, AccuracyMetric::<MetricBackend>::new());
//! ```
//!
//! examples/burn_train.rs trains the CNN group this way, keeps each member's best checkpoint
//! and loads one member as a plain module for inference.
//!
//! What burn-train 0.21 cannot host, and where:
//! - a metric gives one value per update (burn-train `metric/base.rs`, `Metric::update`), so a
//!   group's metric is K metrics; the TUI draws one plot per metric name
//!   (`renderer/tui/metric_numeric.rs`) and switches between them, it does not overlay the K
//!   members;
//! - a checkpoint is the whole learner of one epoch (`learner/base.rs`,
//!   `LearningCheckpointer::checkpoint`): keeping "each member's best" keeps every epoch that is
//!   some member's best, each file holding all K members ([`MemberBestCheckpoints`]);
//! - one learning-rate scheduler gives one rate per step (`Learner::lr_step`): per-member rates
//!   are fixed factors or fixed rates in the optimizer;
//! - the `Learner`'s model and optimizer are private and strategies only see the metric store,
//!   so members cannot be pruned, replaced or refilled during `launch` (saturate's
//!   [`GroupTrainer`](crate::GroupTrainer) does that).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use burn::train::checkpoint::{CheckpointingAction, CheckpointingStrategy};
use burn::train::metric::store::{Aggregate, Direction, EventStoreClient, Split};
use burn::train::metric::{
    Adaptor, ItemLazy, Metric, MetricAttributes, MetricMetadata, MetricName, Numeric, NumericEntry,
    SerializedEntry,
};
use burn::train::{
    EarlyStoppingStrategy, InferenceStep, LearningComponentsTypes, StoppingCondition,
    SupervisedTraining, TrainStep,
};
pub use saturate_vmap::group_model::{MemberItems, MemberOutputs, SplitMembers};

/// The backend burn-train's metrics compute on: burn-train syncs every step output to it, so
/// the metrics given to [`PerMember`] are built on it (`LossMetric::<MetricBackend>::new()`).
pub type MetricBackend = burn::backend::Flex;

/// The name of metric `name` for member `member`: `"{name} member {member}"`.
///
/// burn-train identifies a metric by its name, and its file logger uses the name as a file
/// name (spaces become underscores), so the name has no `/`.
pub fn member_metric_name(name: &str, member: usize) -> String {
    format!("{name} member {member}")
}

/// The input of a [`PerMember`] metric: every member's input to the wrapped metric, member k's
/// at index k.
pub struct MemberInputs<I>(pub Vec<I>);

impl<T: Adaptor<I>, I> Adaptor<MemberInputs<I>> for MemberItems<T> {
    fn adapt(&self) -> MemberInputs<I> {
        MemberInputs(self.0.iter().map(Adaptor::adapt).collect())
    }
}

/// A burn-train metric of one member of a group: the wrapped metric on member `member`'s
/// output, named [`member_metric_name`]`(name, member)`. Numeric metrics stay numeric (the
/// renderers plot them, the checkpointing and early-stopping strategies read them).
///
/// burn-train adapts the synced output once per metric, so each of the K instances of a
/// metric adapts all K members' outputs: K² cheap clones of small CPU tensors per step, which
/// stays negligible next to the step for groups of tens of members.
#[derive(Clone)]
pub struct PerMember<Me> {
    member: usize,
    inner: Me,
    name: MetricName,
}

impl<Me: Metric> PerMember<Me> {
    /// `metric` on member `member`.
    pub fn new(member: usize, metric: Me) -> Self {
        let name = Arc::new(member_metric_name(&metric.name(), member));
        Self {
            member,
            inner: metric,
            name,
        }
    }

    /// The member this metric reads.
    pub fn member(&self) -> usize {
        self.member
    }
}

impl<Me: Metric> Metric for PerMember<Me> {
    type Input = MemberInputs<Me::Input>;

    fn name(&self) -> MetricName {
        self.name.clone()
    }

    fn description(&self) -> Option<String> {
        self.inner.description()
    }

    fn attributes(&self) -> MetricAttributes {
        self.inner.attributes()
    }

    /// # Panics
    /// If the group has no member `member` (`Metric::update` cannot return an error): register
    /// per-member metrics for the group's member count.
    fn update(&mut self, item: &Self::Input, metadata: &MetricMetadata) -> SerializedEntry {
        let members = item.0.len();
        let input = item.0.get(self.member).unwrap_or_else(|| {
            panic!(
                "saturate-train: metric `{}` reads member {}, but the group has {members} \
                 members",
                self.name, self.member
            )
        });
        self.inner.update(input, metadata)
    }

    fn clear(&mut self) {
        self.inner.clear()
    }
}

impl<Me: Numeric> Numeric for PerMember<Me> {
    fn value(&self) -> NumericEntry {
        self.inner.value()
    }

    fn running_value(&self) -> NumericEntry {
        self.inner.running_value()
    }
}

/// Registers a metric once per member on burn-train's [`SupervisedTraining`]: implemented
/// when the synced outputs of the model's training and validation steps adapt to
/// [`MemberInputs`] of the metric's input (a [`GroupModel`](saturate_vmap::GroupModel) of a
/// module whose step output is [`SplitMembers`]).
pub trait MemberMetrics<Me: Metric>: Sized {
    /// Registers [`PerMember`]`::new(k, metric)` for every member k < `members`, as a
    /// numeric metric of the training and of the validation split.
    fn metric_per_member_numeric(self, members: usize, metric: Me) -> Self;
}

impl<LC, Me> MemberMetrics<Me> for SupervisedTraining<LC>
where
    LC: LearningComponentsTypes,
    Me: Metric + Numeric + 'static,
    <<LC::TrainingModel as TrainStep>::Output as ItemLazy>::ItemSync:
        Adaptor<MemberInputs<Me::Input>>,
    <<LC::InferenceModel as InferenceStep>::Output as ItemLazy>::ItemSync:
        Adaptor<MemberInputs<Me::Input>>,
{
    fn metric_per_member_numeric(mut self, members: usize, metric: Me) -> Self {
        for k in 0..members {
            let metric = PerMember::new(k, metric.clone());
            self = self
                .metric_train_numeric(metric.clone())
                .metric_valid_numeric(metric);
        }
        self
    }
}

/// Each member's best epoch as a [`MemberBestCheckpoints`] strategy last saw it: member k's
/// at index k (`None` before its first value). A clone reads the same values, so keep one
/// before the strategy goes to burn-train (which keeps the strategy).
#[derive(Clone, Debug, Default)]
pub struct BestEpochs(Arc<Mutex<Vec<Option<usize>>>>);

impl BestEpochs {
    /// Member k's best epoch at index k.
    pub fn get(&self) -> Vec<Option<usize>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn set(&self, epochs: Vec<Option<usize>>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = epochs;
    }
}

/// How long a strategy waits for the metric thread to deliver an epoch's values (see
/// [`wait_for_epoch`]).
const METRIC_WAIT: Duration = Duration::from_secs(10);

/// Waits until every metric of `names` has a value for `epoch`, or [`METRIC_WAIT`] passed.
///
/// burn-train 0.21 calls the checkpointing and early-stopping strategies right after the last
/// validation step (learner/supervised/strategies/single/strategy.rs), while its metric thread
/// may still be processing that epoch's last items: a strategy could then miss the epoch.
fn wait_for_epoch(
    store: &EventStoreClient,
    names: &[String],
    epoch: usize,
    aggregate: Aggregate,
    split: &Split,
) {
    let start = Instant::now();
    while names
        .iter()
        .any(|name| store.find_metric(name, epoch, aggregate, split).is_none())
    {
        if start.elapsed() > METRIC_WAIT {
            log::warn!("saturate-train: no value of every member's metric for epoch {epoch}");
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// One metric watched per member: its per-member names (see [`PerMember`]), how an epoch's
/// values are aggregated, which direction is better, and the split it is read from.
#[derive(Clone)]
struct MemberMetricWatch {
    names: Vec<String>,
    aggregate: Aggregate,
    direction: Direction,
    split: Split,
}

impl MemberMetricWatch {
    fn new<Me: Metric>(
        metric: &Me,
        members: usize,
        aggregate: Aggregate,
        direction: Direction,
        split: Split,
    ) -> Self {
        let name = metric.name();
        Self {
            names: (0..members).map(|k| member_metric_name(&name, k)).collect(),
            aggregate,
            direction,
            split,
        }
    }

    fn wait_for_epoch(&self, store: &EventStoreClient, epoch: usize) {
        wait_for_epoch(store, &self.names, epoch, self.aggregate, &self.split);
    }
}

/// A burn-train [`CheckpointingStrategy`] that keeps, for every member, the checkpoint of the
/// epoch where the member's metric was best: the union of the members' best epochs. Each kept
/// checkpoint holds the whole group (burn-train saves the learner of an epoch); member k's best
/// weights are member k of the checkpoint of epoch [`BestEpochs`]`[k]`.
///
/// Compose it with burn-train's `KeepLastNCheckpoints` to also keep the latest epoch for
/// resuming (`ComposedCheckpointingStrategy`).
pub struct MemberBestCheckpoints {
    watch: MemberMetricWatch,
    saved: BTreeSet<usize>,
    best: BestEpochs,
}

impl MemberBestCheckpoints {
    /// Keeps each of `members` members' best epoch of `metric` (registered per member, see
    /// [`PerMember`]), e.g. `(&LossMetric::<MetricBackend>::new(), k, Aggregate::Mean,
    /// Direction::Lowest, Split::Valid)`.
    pub fn new<Me: Metric>(
        metric: &Me,
        members: usize,
        aggregate: Aggregate,
        direction: Direction,
        split: Split,
    ) -> Self {
        Self {
            watch: MemberMetricWatch::new(metric, members, aggregate, direction, split),
            saved: BTreeSet::new(),
            best: BestEpochs::default(),
        }
    }

    /// A handle on the members' best epochs (read it after training).
    pub fn best_epochs(&self) -> BestEpochs {
        self.best.clone()
    }
}

impl CheckpointingStrategy for MemberBestCheckpoints {
    fn checkpointing(
        &mut self,
        epoch: usize,
        store: &EventStoreClient,
    ) -> Vec<CheckpointingAction> {
        let w = &self.watch;
        w.wait_for_epoch(store, epoch);
        let best: Vec<Option<usize>> = w
            .names
            .iter()
            .map(|name| {
                store
                    .find_epoch(name, w.aggregate, w.direction, &w.split)
                    // Without a value yet, the current epoch is the best there is (burn's
                    // MetricCheckpointingStrategy does the same).
                    .or(Some(epoch))
            })
            .collect();
        // An epoch that was not saved when it ran cannot be saved later.
        let keep: BTreeSet<usize> = best
            .iter()
            .flatten()
            .copied()
            .filter(|e| *e == epoch || self.saved.contains(e))
            .collect();
        let mut actions: Vec<CheckpointingAction> = self
            .saved
            .difference(&keep)
            .map(|&e| CheckpointingAction::Delete(e))
            .collect();
        if keep.contains(&epoch) {
            actions.push(CheckpointingAction::Save);
        } else {
            // Says "not this epoch" to a ComposedCheckpointingStrategy, which deletes an epoch
            // only when every strategy dropped it (a missing file is not an error).
            actions.push(CheckpointingAction::Delete(epoch));
        }
        self.saved = keep;
        self.best.set(best);
        actions
    }
}

/// A burn-train [`EarlyStoppingStrategy`] that stops the group once no member has improved
/// its metric for the condition's number of epochs (burn's `MetricEarlyStoppingStrategy` per
/// member: training stops when the last member stalls).
#[derive(Clone)]
pub struct MemberEarlyStopping {
    watch: MemberMetricWatch,
    condition: StoppingCondition,
    best: Vec<Option<(usize, f64)>>,
}

impl MemberEarlyStopping {
    /// Stops when every one of `members` members meets `condition` on `metric` (registered per
    /// member, see [`PerMember`]).
    pub fn new<Me: Metric>(
        metric: &Me,
        members: usize,
        aggregate: Aggregate,
        direction: Direction,
        split: Split,
        condition: StoppingCondition,
    ) -> Self {
        Self {
            watch: MemberMetricWatch::new(metric, members, aggregate, direction, split),
            condition,
            best: vec![None; members],
        }
    }
}

impl EarlyStoppingStrategy for MemberEarlyStopping {
    fn should_stop(&mut self, epoch: usize, store: &EventStoreClient) -> bool {
        let w = &self.watch;
        w.wait_for_epoch(store, epoch);
        let mut stalled = true;
        for (name, best) in w.names.iter().zip(&mut self.best) {
            let Some(value) = store.find_metric(name, epoch, w.aggregate, &w.split) else {
                stalled = false;
                continue;
            };
            let better = match (*best, w.direction) {
                (None, _) => true,
                (Some((_, b)), Direction::Lowest) => value < b,
                (Some((_, b)), Direction::Highest) => value > b,
            };
            if better {
                *best = Some((epoch, value));
            }
            let best_epoch = best.map_or(epoch, |(e, _)| e);
            match self.condition {
                StoppingCondition::NoImprovementSince { n_epochs } => {
                    stalled &= epoch - best_epoch >= n_epochs;
                }
            }
        }
        if stalled {
            log::info!("saturate-train: every member stalled at epoch {epoch}; stopping");
        }
        stalled
    }
}
