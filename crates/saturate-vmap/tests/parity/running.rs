//! Running state (BatchNorm's `running_mean` / `running_var`) after N optimizer steps, through
//! every lifecycle path of a group: `from_module` (every step), `stack`, `member`, `retain`,
//! `extend`, and a recorder round trip of the whole group.
//!
//! The group is stepped with burn-optim's unmodified Adam (`into_inner` -> `step` ->
//! `Batched::from_module`), each member alone with its own Adam on plain `Autodiff<NdArray>`.
//!
//! How running state is read matters. burn's `RunningState::update` keeps the latest value
//! pending (per thread) until the next `value_sync`: `RunningState::value()` and
//! `Module::visit` return the value from one update earlier, while `value_sync()`, `valid()` and
//! `into_record()` (hence `Batched::member`, which copies through `valid()`) return the latest
//! one. A group member read one way compared with a member trained alone read the other way
//! differs by exactly one momentum update, which is what issue 11 reported as "drift"
//! (`the_reported_drift_is_a_one_update_read_lag` shows it); read alike, the statistics match.
//! These tests therefore check both reads, the synced state (`value_sync` on both sides) and the
//! visited state (`Module::visit` on both sides, which also covers every trainable parameter),
//! right after each lifecycle step, where a lost or doubly applied pending update would show,
//! and again after more training.
//!
//! Tolerance: `ATOL` / `RTOL` (1e-5 / 1e-4), not bit for bit. The model has no convolution
//! (the linear layers keep each member's summation order), but NdArray's reductions sum in an
//! order that depends on the memory layout (contiguous lanes are summed with unrolled partial
//! sums, strided ones in sequence), and a member's slice of a batched tensor is laid out
//! differently from the same tensor alone: BatchNorm's mean over a transposed `[N, C, L]`
//! input then differs in the last bit (measured: 1 ulp in `bn1.running_mean`). One missed or
//! extra momentum update is orders of magnitude larger
//! (`the_reported_drift_is_a_one_update_read_lag`: more than 1e-3).

use burn::module::{AutodiffModule, Module};
use burn::nn::loss::{MseLoss, Reduction};
use burn::nn::{BatchNorm, BatchNormConfig, Linear, LinearConfig};
use burn::optim::adaptor::OptimizerAdaptor;
use burn::optim::{Adam, AdamConfig, GradientsParams, Optimizer};
use burn::record::{BinBytesRecorder, FullPrecisionSettings, Recorder};
use burn::tensor::backend::Backend;
use burn::tensor::{Tensor, TensorData};
use rand::rngs::StdRng;
use rand::SeedableRng;
use saturate_vmap::{member_data, Batched, Vmap, VmapDevice};

use super::common::{
    compare, group_params, inner_device, max_diff, params, reseed, step_slots, transfer, uniform,
    Case, DataMode, Feed, GroupFeed, Inner, MemberFeed, Snap, ATOL, G, R, RTOL,
};

const LR: f64 = 0.01;

/// BatchNorm on a rank-2 input `[N, C]`, a "1d" input `[N, C, L]` and a "2d" input
/// `[N, C, H, W]`, each fed by a linear layer without bias (a bias in front of a BatchNorm has
/// no gradient).
#[derive(Module, Debug)]
pub struct Norms<B: Backend> {
    lin0: Linear<B>,
    bn0: BatchNorm<B>,
    lin1: Linear<B>,
    bn1: BatchNorm<B>,
    lin2: Linear<B>,
    bn2: BatchNorm<B>,
}

struct NormsCase;

impl Case for NormsCase {
    type Model<B: Backend> = Norms<B>;
    fn init<B: Backend>(&self, device: &B::Device) -> Norms<B> {
        let lin = |o| LinearConfig::new(3, o).with_bias(false).init(device);
        Norms {
            lin0: lin(4),
            bn0: BatchNormConfig::new(4).init(device),
            lin1: lin(3),
            // A larger momentum than the default 0.1: each update moves the statistics more.
            bn1: BatchNormConfig::new(3).with_momentum(0.3).init(device),
            lin2: lin(2),
            bn2: BatchNormConfig::new(2).init(device),
        }
    }
    fn batch(&self, rng: &mut StdRng) -> Vec<TensorData> {
        vec![
            uniform(rng, &[6, 3], -1.0, 2.0),
            uniform(rng, &[4, 5, 3], -2.0, 1.0),
            uniform(rng, &[3, 3, 2, 3], -1.0, 3.0),
            // Random targets: a constant target lies in the span of BatchNorm's output
            // {1, x_hat}, where the gradient into the layer in front is exactly zero (rounding
            // noise, which Adam would blow up to the learning rate).
            uniform(rng, &[6, 4], -1.0, 1.0),
            uniform(rng, &[4, 3, 5], -1.0, 1.0),
            uniform(rng, &[3, 2, 3, 2], -1.0, 1.0),
        ]
    }
    fn loss<B: Backend, F: Feed<B>>(&self, m: &Norms<B>, f: &F) -> Tensor<B, 1> {
        let y0 = m.bn0.forward(m.lin0.forward(f.float::<2>(0)));
        // [N, L, Cin] -> [N, L, C] -> [N, C, L]
        let y1 = m
            .bn1
            .forward(m.lin1.forward(f.float::<3>(1)).swap_dims(1, 2));
        // [N, H, W, Cin] -> [N, H, W, C] -> [N, C, H, W]
        let y2 = m
            .bn2
            .forward(m.lin2.forward(f.float::<4>(2)).permute([0, 3, 1, 2]));
        let mse = MseLoss::new();
        mse.forward(y0, f.float(3), Reduction::Mean)
            + mse.forward(y1, f.float(4), Reduction::Mean)
            + mse.forward(y2, f.float(5), Reduction::Mean)
    }
}

type Model<B> = Norms<B>;
type GroupAdam = OptimizerAdaptor<Adam, Model<G>, G>;
type MemberAdam = OptimizerAdaptor<Adam, Model<R>, R>;

/// One member trained alone.
struct Alone {
    model: Model<R>,
    optim: MemberAdam,
}

impl Alone {
    fn new(model: Model<R>) -> Self {
        Self {
            model,
            optim: AdamConfig::new().init(),
        }
    }
}

/// A group and its members trained alone, on per-member data.
struct Run {
    group: Batched<Model<G>>,
    optim: GroupAdam,
    alone: Vec<Alone>,
    rng: StdRng,
}

/// Member `k` of a group as a module on plain `Autodiff<NdArray>` (through burn's recorder).
fn to_plain(group: &Batched<Model<G>>, k: usize) -> Model<R> {
    transfer::<G, R, _, _>(
        group.member(k).expect("member"),
        NormsCase.init::<R>(&inner_device()),
        &inner_device(),
    )
}

fn values(data: TensorData) -> Vec<f32> {
    data.convert::<f32>().to_vec().expect("f32 data")
}

/// The synced running statistics of a group, per member: `out[k]` = (path, values).
fn group_stats(group: &Model<G>) -> Vec<Vec<(String, Vec<f32>)>> {
    let norms = [
        ("bn0", &group.bn0),
        ("bn1", &group.bn1),
        ("bn2", &group.bn2),
    ];
    let mut out: Vec<Vec<(String, Vec<f32>)>> = Vec::new();
    for (name, bn) in norms {
        for (what, state) in [
            ("running_mean", &bn.running_mean),
            ("running_var", &bn.running_var),
        ] {
            for (k, data) in member_data(state.value_sync()).into_iter().enumerate() {
                if out.len() <= k {
                    out.push(Vec::new());
                }
                out[k].push((format!("{name}.{what}"), values(data)));
            }
        }
    }
    out
}

/// The synced running statistics of one module trained alone.
fn stats(model: &Model<R>) -> Vec<(String, Vec<f32>)> {
    let norms = [
        ("bn0", &model.bn0),
        ("bn1", &model.bn1),
        ("bn2", &model.bn2),
    ];
    let mut out = Vec::new();
    for (name, bn) in norms {
        for (what, state) in [
            ("running_mean", &bn.running_mean),
            ("running_var", &bn.running_var),
        ] {
            out.push((
                format!("{name}.{what}"),
                values(state.value_sync().into_data()),
            ));
        }
    }
    out
}

/// `|group - alone| <= ATOL + RTOL * |alone|` for every statistic.
fn close(what: &str, k: usize, got: &[(String, Vec<f32>)], want: &[(String, Vec<f32>)]) {
    assert_eq!(got.len(), want.len());
    for ((path, g), (_, w)) in got.iter().zip(want) {
        let (d, ok) = max_diff(g, w, ATOL, RTOL);
        assert!(
            ok,
            "{what}: member {k} `{path}` (synced): max |group - alone| = {d:e}\n group {g:?}\n alone {w:?}"
        );
    }
}

/// Every visited parameter and statistic within `ATOL` / `RTOL`.
fn close_snaps(what: &str, k: usize, got: &[Snap], want: &[Snap]) {
    let bad = compare(what, k, got, want);
    assert!(bad.is_empty(), "(visited)\n{}", bad.join("\n"));
}

impl Run {
    fn new(members: usize, seed: u64) -> Self {
        let group = Batched::init(members, &inner_device(), |d| {
            reseed(NormsCase.init::<G>(d), seed)
        })
        .expect("init");
        let alone = (0..members)
            .map(|k| Alone::new(to_plain(&group, k)))
            .collect();
        Self {
            group,
            optim: AdamConfig::new().init(),
            alone,
            rng: StdRng::seed_from_u64(seed),
        }
    }

    fn train(&mut self, steps: usize) {
        for _ in 0..steps {
            let slots = step_slots(
                &NormsCase,
                &mut self.rng,
                DataMode::PerMember,
                self.alone.len(),
            );
            let group = self.group.clone();
            let loss = NormsCase.loss(
                &*group,
                &GroupFeed::<G> {
                    slots: &slots,
                    device: group.device(),
                },
            );
            let grads = GradientsParams::from_grads(loss.backward(), &*group);
            let stepped = self.optim.step(LR, group.into_inner(), grads);
            self.group = Batched::from_module(stepped).expect("group after the step");
            for (k, alone) in self.alone.iter_mut().enumerate() {
                let loss = NormsCase.loss(
                    &alone.model,
                    &MemberFeed::<R> {
                        slots: &slots,
                        member: k,
                        device: inner_device(),
                    },
                );
                let grads = GradientsParams::from_grads(loss.backward(), &alone.model);
                alone.model = alone.optim.step(LR, alone.model.clone(), grads);
            }
        }
    }

    /// Visited state (every parameter and running statistic as `Module::visit` reads it) on
    /// both sides, within `ATOL` / `RTOL`.
    fn check_visited(&self, what: &str) {
        let got = group_params(&*self.group);
        assert_eq!(got.len(), self.alone.len());
        for (k, alone) in self.alone.iter().enumerate() {
            close_snaps(what, k, &got[k], &params(&alone.model));
        }
    }

    /// Synced running statistics on both sides, within `ATOL` / `RTOL`, and not all at their initial
    /// values.
    fn check_synced(&self, what: &str) {
        let got = group_stats(&self.group);
        assert_eq!(got.len(), self.alone.len());
        for (k, alone) in self.alone.iter().enumerate() {
            close(what, k, &got[k], &stats(&alone.model));
            assert!(
                got[k][0].1.iter().any(|&v| v != 0.0),
                "{what}: member {k}: running mean never updated"
            );
        }
    }

    /// Both checks, visited first (reading synced state changes what `visit` sees).
    fn check(&self, what: &str) {
        self.check_visited(what);
        self.check_synced(what);
    }

    /// The group's optimizer state has the member axis: a group with other members starts a
    /// fresh Adam, and so do its members alone.
    fn restart_optimizers(&mut self) {
        self.optim = AdamConfig::new().init();
        for alone in &mut self.alone {
            alone.optim = AdamConfig::new().init();
        }
    }
}

#[test]
fn batch_norm_statistics_after_adam_steps_for_k_1_2_3() {
    for members in 1..=3 {
        let mut run = Run::new(members, 1100 + members as u64);
        run.train(6);
        run.check(&format!("K={members}, 6 Adam steps"));
    }
}

#[test]
fn member_carries_the_latest_statistics() {
    let mut run = Run::new(3, 1110);
    run.train(4);
    // `member` reads through `valid()`: the latest (synced) statistics, like `value_sync`.
    for (k, alone) in run.alone.iter().enumerate() {
        let member = run.group.member(k).expect("member");
        let got: Vec<(String, Vec<f32>)> = group_stats(&member).remove(0);
        close("member(k)", k, &got, &stats(&alone.model));
    }
    // Taking members left the group itself as it was.
    run.check("after member(k)");
    // A member recorded and loaded on plain NdArray keeps training exactly like the member
    // that was trained alone all along (no pending update lost or applied twice).
    let mut twins: Vec<Alone> = (0..3)
        .map(|k| Alone::new(to_plain(&run.group, k)))
        .collect();
    for (twin, alone) in twins.iter_mut().zip(&run.alone) {
        // Same optimizer state as the member alone.
        twin.optim = alone.optim.clone();
    }
    let mut rng = StdRng::seed_from_u64(1111);
    for _ in 0..3 {
        let slots = step_slots(&NormsCase, &mut rng, DataMode::PerMember, 3);
        for (k, (twin, alone)) in twins.iter_mut().zip(run.alone.iter_mut()).enumerate() {
            let feed = MemberFeed::<R> {
                slots: &slots,
                member: k,
                device: inner_device(),
            };
            let loss = NormsCase.loss(&twin.model, &feed);
            let grads = GradientsParams::from_grads(loss.backward(), &twin.model);
            twin.model = twin.optim.step(LR, twin.model.clone(), grads);
            let loss = NormsCase.loss(&alone.model, &feed);
            let grads = GradientsParams::from_grads(loss.backward(), &alone.model);
            alone.model = alone.optim.step(LR, alone.model.clone(), grads);
        }
    }
    for (k, (twin, alone)) in twins.iter().zip(&run.alone).enumerate() {
        close_snaps(
            "member(k) recorded, loaded, trained 3 steps",
            k,
            &params(&twin.model),
            &params(&alone.model),
        );
        close(
            "member(k) recorded, loaded, trained 3 steps",
            k,
            &stats(&twin.model),
            &stats(&alone.model),
        );
    }
}

#[test]
fn retain_and_extend_keep_the_latest_statistics() {
    let mut run = Run::new(4, 1120);
    run.train(3);
    // Prune with pending updates: keep members 3 and 1, in that order.
    run.group = run.group.clone().retain(&[3, 1]).expect("retain");
    let mut alone: Vec<Option<Alone>> = std::mem::take(&mut run.alone)
        .into_iter()
        .map(Some)
        .collect();
    run.alone = vec![alone[3].take().unwrap(), alone[1].take().unwrap()];
    run.check_synced("right after retain([3, 1])");
    run.restart_optimizers();
    run.train(3);
    run.check("retain([3, 1]), 3 more steps");

    // Refill with a group trained on its own (its updates pending too).
    let mut fresh = Run::new(2, 1121);
    fresh.train(2);
    run.group = run.group.clone().extend(fresh.group).expect("extend");
    run.alone.extend(fresh.alone);
    run.check_synced("right after extend");
    run.restart_optimizers();
    run.train(3);
    run.check("extend, 3 more steps");
}

#[test]
fn stack_keeps_each_members_latest_statistics() {
    // Three one-member groups, each trained on its own (pending updates), then stacked.
    let runs: Vec<Run> = (0..3)
        .map(|k| {
            let mut run = Run::new(1, 1130 + k);
            run.train(2 + k as usize);
            run
        })
        .collect();
    let mut alone = Vec::new();
    let mut modules = Vec::new();
    for run in runs {
        modules.push(run.group.into_inner());
        alone.extend(run.alone);
    }
    let mut run = Run {
        group: Batched::stack(modules).expect("stack"),
        optim: AdamConfig::new().init(),
        alone,
        rng: StdRng::seed_from_u64(1131),
    };
    run.restart_optimizers();
    run.check_synced("right after stack");
    run.train(3);
    run.check("stack, 3 more steps");
}

#[test]
fn recorder_round_trip_of_every_member_keeps_the_latest_statistics() {
    let mut run = Run::new(3, 1140);
    run.train(4);
    // Every member saved with burn's recorder (as a checkpoint of the group would be: a batched
    // tensor has no single `TensorData`), loaded into a fresh one-member module, and the group
    // rebuilt with `stack`.
    let recorder = BinBytesRecorder::<FullPrecisionSettings>::default();
    let one = VmapDevice::<Inner>::new(inner_device(), 1);
    let modules: Vec<Model<G>> = (0..3)
        .map(|k| {
            let member = run.group.member(k).expect("member");
            let bytes = Recorder::<G>::record(&recorder, member.into_record(), ())
                .expect("record a member");
            let record = Recorder::<G>::load(&recorder, bytes, &one).expect("load a member");
            NormsCase.init::<G>(&one).load_record(record)
        })
        .collect();
    run.group = Batched::stack(modules).expect("stack the loaded members");
    run.check_synced("right after the recorder round trip");
    run.restart_optimizers();
    run.train(3);
    run.check("recorder round trip, 3 more steps");
    // Inference with the trained statistics: the group's `valid()` vs each member's.
    let mut rng = StdRng::seed_from_u64(1141);
    let slots = step_slots(&NormsCase, &mut rng, DataMode::PerMember, 3);
    let eval = NormsCase.loss(
        &run.group.valid(),
        &GroupFeed::<Vmap<Inner>> {
            slots: &slots,
            device: VmapDevice::new(inner_device(), 3),
        },
    );
    let eval: Vec<Vec<f32>> = member_data(eval).into_iter().map(values).collect();
    for (k, alone) in run.alone.iter().enumerate() {
        let want = NormsCase.loss(
            &alone.model.valid(),
            &MemberFeed::<Inner> {
                slots: &slots,
                member: k,
                device: inner_device(),
            },
        );
        let (d, ok) = max_diff(&eval[k], &values(want.into_data()), ATOL, RTOL);
        assert!(ok, "inference: member {k}: group vs alone differ by {d:e}");
    }
}

/// The reported drift, reproduced and explained: after 6 Adam steps the group's statistics
/// read with `visit` (one update behind, as burn reads them) differ from the member alone read
/// with `value_sync` (latest) by one momentum update, far beyond the tolerance, for K = 1, 2, 3;
/// read alike they agree (the other tests).
#[test]
fn the_reported_drift_is_a_one_update_read_lag() {
    for members in 1..=3 {
        let mut run = Run::new(members, 1150 + members as u64);
        run.train(6);
        run.check_visited("read alike, before syncing");
        let visited = group_params(&*run.group);
        for (k, alone) in run.alone.iter().enumerate() {
            let lagging = visited[k]
                .iter()
                .find(|p| p.path == "bn1.running_mean")
                .expect("bn1.running_mean");
            let latest = &stats(&alone.model)[2];
            assert_eq!(latest.0, "bn1.running_mean");
            let (d, ok) = max_diff(&lagging.values, &latest.1, ATOL, RTOL);
            assert!(
                !ok && d > 1e-3,
                "K={members} member {k}: a one-update lag should show (max diff {d:e})"
            );
        }
        run.check_synced("read alike, synced");
    }
}
