//! What the group runner costs and what refill buys, on MLP 8-16-4 (batch 64, MSE), K = 8, SGD,
//! f32 on NdArray by default, on wgpu with `--features wgpu`, on CUDA with `--features cuda`.
//! Each timed step ends with the device synchronised (a no-op on NdArray), so queued GPU work
//! is counted in the step that queued it.
//!
//! 1. **Overhead per group step.** The same model and data trained (a) by a hand-written loop
//!    (`Batched::init`, `GroupOptimizer`, forward / backward / step and nothing else) and (b)
//!    through `GroupTrainer` + `run_trainer` (one group of 8 trials, in-memory study,
//!    `NopPruner`, refill off, one epoch of many steps). Both arms time every step: (a) around
//!    the loop body, (b) between consecutive `next_batch` calls, which the trainer makes once
//!    per group step, so the per-epoch evaluation and the study's ask / tell fall outside the
//!    per-step numbers; the whole-run times (init, study and evaluation included) are given
//!    too. The arms alternate, round by round, so drifting machine load hits both.
//! 2. **Refill on vs off**, on a study with a `MedianPruner` (48 trials, K = 8, 8 epochs, a
//!    learning rate drawn over three decades so that slow members are pruned): the
//!    members-busy fraction (`Occupancy::busy_fraction`) and completed trials per minute, both
//!    arms in the same run, over several sampler seeds.
//!
//! Run: `cargo bench -p saturate-train --bench runner`. It prints one markdown table (the one
//! in book/src/benchmarks.md, "The runner") and writes the raw numbers to
//! `target/bench-runner.csv`. Not divan: divan times a closure, and the runner's steps happen
//! inside `run_trainer`, so they are timed from inside the task. A benchmark asserts nothing
//! about time; it does check that each run trained what it was meant to.

use std::fmt::Write as _;
use std::process::Command;
use std::time::{Duration, Instant};

use burn::module::Module;
use burn::nn::loss::{MseLoss, Reduction};
use burn::nn::{Linear, LinearConfig, Relu};
use burn::optim::GradientsParams;
use burn::tensor::backend::Backend;
use burn::tensor::{Tensor, TensorData};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use saturate_optim::{GroupOptimizer, GroupSgd, GroupSgdConfig};
use saturate_study::prelude::*;
use saturate_study::study::ObjectiveError;
use saturate_train::{
    run_trainer, GroupBackend, GroupTask, MemberHyper, MemberScope, Members, Occupancy, RunConfig,
    RunSummary, SharedScope, TrainerConfig,
};
use saturate_vmap::{member_values, Batched, VmapDevice};

#[cfg(feature = "cuda")]
type I = burn::backend::Cuda;
#[cfg(all(feature = "wgpu", not(feature = "cuda")))]
type I = burn::backend::Wgpu;
#[cfg(not(any(feature = "cuda", feature = "wgpu")))]
type I = burn::backend::NdArray<f32>;
type B = GroupBackend<I>;

const K: usize = 8;
const ROWS: usize = 64;
const INPUTS: usize = 8;
const HIDDEN: usize = 16;
const OUTPUTS: usize = 4;

/// Part 1: steps per run and alternating rounds of (hand loop, runner).
const OVERHEAD_STEPS: usize = 2000;
const OVERHEAD_ROUNDS: usize = 10;
/// Part 2: the study, run once per seed and arm.
const REFILL_TRIALS: usize = 48;
const REFILL_EPOCHS: usize = 8;
const REFILL_STEPS_PER_EPOCH: usize = 100;
const REFILL_SEEDS: &[u64] = &[0, 1, 2, 3, 4];

#[derive(Module, Debug)]
struct Mlp<B: Backend> {
    hidden: Linear<B>,
    out: Linear<B>,
    relu: Relu,
}

impl<B: Backend> Mlp<B> {
    fn new(device: &B::Device) -> Self {
        Self {
            hidden: LinearConfig::new(INPUTS, HIDDEN).init(device),
            out: LinearConfig::new(HIDDEN, OUTPUTS).init(device),
            relu: Relu::new(),
        }
    }

    fn forward(&self, x: Tensor<B, 2>) -> Tensor<B, 2> {
        self.out.forward(self.relu.forward(self.hidden.forward(x)))
    }
}

/// A fixed regression batch: 64 rows of 8 inputs, 4 smooth targets.
#[derive(Clone)]
struct Data {
    x: Vec<f32>,
    y: Vec<f32>,
}

impl Data {
    fn new() -> Self {
        let mut rng = StdRng::seed_from_u64(99);
        let x: Vec<f32> = (0..ROWS * INPUTS)
            .map(|_| rng.random_range(-1.0..1.0))
            .collect();
        let y = (0..ROWS)
            .flat_map(|r| {
                let row = &x[r * INPUTS..(r + 1) * INPUTS];
                (0..OUTPUTS).map(move |o| row.iter().skip(o).step_by(2).sum::<f32>().sin())
            })
            .collect();
        Self { x, y }
    }

    /// The batch as tensors on `device`, built anew each step as a task's `next_batch` must
    /// (the group's member count can change between steps).
    fn batch(&self, device: &VmapDevice<I>) -> (Tensor<B, 2>, Tensor<B, 2>) {
        (
            Tensor::from_data(TensorData::new(self.x.clone(), [ROWS, INPUTS]), device),
            Tensor::from_data(TensorData::new(self.y.clone(), [ROWS, OUTPUTS]), device),
        )
    }
}

fn mse(model: &Mlp<B>, batch: &(Tensor<B, 2>, Tensor<B, 2>)) -> Tensor<B, 1> {
    MseLoss::new().forward(
        model.forward(batch.0.clone()),
        batch.1.clone(),
        Reduction::Mean,
    )
}

/// The task both parts train: plain SGD with a per-member learning rate drawn log-uniformly
/// from `lr`; the objective is the training MSE.
struct Regression {
    data: Data,
    lr: (f64, f64),
    /// When each `next_batch` call happened: one per group step.
    batch_times: Vec<Instant>,
}

impl Regression {
    fn new(lr: (f64, f64)) -> Self {
        Self {
            data: Data::new(),
            lr,
            batch_times: Vec::new(),
        }
    }
}

impl GroupTask<I> for Regression {
    type Shared = ();
    type Model = Mlp<B>;
    type Rule = GroupSgd;
    type Batch = (Tensor<B, 2>, Tensor<B, 2>);

    fn suggest_shared<S: Study>(
        &mut self,
        _scope: &mut SharedScope<'_, '_, S>,
    ) -> Result<(), ObjectiveError> {
        Ok(())
    }

    fn suggest_members<S: Study>(
        &mut self,
        _shared: &(),
        scope: &mut MemberScope<'_, '_, S>,
    ) -> Result<MemberHyper, ObjectiveError> {
        Ok(MemberHyper::new().with("lr", scope.suggest_float_log("lr", self.lr.0, self.lr.1)?))
    }

    fn init_model(
        &mut self,
        _shared: &(),
        _hyper: &MemberHyper,
        device: &VmapDevice<I>,
    ) -> Result<Mlp<B>, ObjectiveError> {
        Ok(Mlp::new(device))
    }

    fn optimizer(&self, _shared: &(), _hyper: &MemberHyper) -> GroupSgdConfig {
        GroupSgdConfig::new()
    }

    fn next_batch(&mut self, device: &VmapDevice<I>) -> Result<Self::Batch, ObjectiveError> {
        I::sync(&device.inner)?;
        self.batch_times.push(Instant::now());
        Ok(self.data.batch(device))
    }

    fn loss(
        &mut self,
        model: &Mlp<B>,
        batch: &Self::Batch,
        _hyper: &MemberHyper,
    ) -> Result<Tensor<B, 1>, ObjectiveError> {
        Ok(mse(model, batch))
    }

    fn evaluate(
        &mut self,
        model: &Mlp<B>,
        device: &VmapDevice<I>,
        _hyper: &MemberHyper,
    ) -> Result<Members<f64>, ObjectiveError> {
        let loss = mse(model, &self.data.batch(device));
        Ok(Members::from(member_values(loss)?))
    }
}

fn quiet(n_trials: usize) -> RunConfig {
    RunConfig::new()
        .with_group_size(K)
        .with_n_trials(n_trials)
        .with_progress(false)
        .with_handle_interrupt(false)
}

/// Arm (a): the durations of `steps` steps and the loop's wall time.
fn hand_loop(data: &Data, steps: usize) -> (Vec<Duration>, Duration) {
    let device = Default::default();
    let mut model: Batched<Mlp<B>> = Batched::init::<B, _>(K, &device, Mlp::new).unwrap();
    let mut optim: GroupOptimizer<GroupSgd, Mlp<B>, B> =
        GroupOptimizer::new(&GroupSgdConfig::new(), K).unwrap();
    let lr: Members<f64> = (0..K).map(|k| 0.01 * (k + 1) as f64).collect();
    let vdevice = VmapDevice::new(device, K);
    let mut times = Vec::with_capacity(steps);
    let start = Instant::now();
    let mut last = start;
    for _ in 0..steps {
        let batch = data.batch(&vdevice);
        let loss = mse(&model, &batch);
        let grads = GradientsParams::from_grads(loss.backward(), &*model);
        model = optim.step(&lr, model, grads).unwrap();
        I::sync(&vdevice.inner).expect("the device finishes the step");
        let now = Instant::now();
        times.push(now - last);
        last = now;
    }
    (times, start.elapsed())
}

/// Arm (b): the durations of `steps` group steps (between consecutive batches; the last step
/// has no successor) and the wall time of the whole `run_trainer`.
fn runner(steps: usize, seed: u64) -> (Vec<Duration>, Duration) {
    let study = StudyConfig::new()
        .with_sampler(RandomSamplerConfig::new().with_seed(seed).init())
        .with_pruner(NopPruner)
        .init()
        .unwrap();
    let mut trainer = TrainerConfig::new(steps, 1)
        .with_refill(false)
        .init(Regression::new((1e-2, 1e-1)))
        .unwrap();
    let start = Instant::now();
    let summary = run_trainer::<I, _, _>(&study, &quiet(K), &mut trainer, &Default::default())
        .expect("the run");
    let wall = start.elapsed();
    assert_eq!(
        (summary.complete, trainer.occupancy().group_steps),
        (K, steps),
        "one group of {K} trained {steps} steps: {:?}",
        summary.group_errors
    );
    let times = trainer
        .task()
        .batch_times
        .windows(2)
        .map(|w| w[1] - w[0])
        .collect();
    (times, wall)
}

/// Part 2: one study of one arm.
fn refill_run(refill: bool, seed: u64) -> (RunSummary, Occupancy) {
    let study = StudyConfig::new()
        .with_sampler(RandomSamplerConfig::new().with_seed(seed).init())
        .with_pruner(MedianPruner::default())
        .init()
        .unwrap();
    // Refill without the per-group trial limit: this measures what refill itself buys (one
    // group kept full for the whole run); the limit's trade-off is scripts/bench-refill-limit.sh.
    let config = TrainerConfig::new(REFILL_STEPS_PER_EPOCH, REFILL_EPOCHS)
        .with_max_trials_per_group(usize::MAX);
    // A first group of K trials completes before the measured run, the same in both arms, so
    // that the pruner has COMPLETE trials to compare with from the measured run's first epoch.
    // Without it, the first group's K members all complete at the same report and refill
    // restarts the group from new members only, which fails them (see the book).
    let mut warm_up = config.clone().init(Regression::new((1e-3, 1.0))).unwrap();
    let summary = run_trainer::<I, _, _>(&study, &quiet(K), &mut warm_up, &Default::default())
        .expect("the warm-up");
    assert_eq!(summary.complete, K, "{:?}", summary.group_errors);
    let mut trainer = config
        .with_refill(refill)
        .init(Regression::new((1e-3, 1.0)))
        .unwrap();
    let summary = run_trainer::<I, _, _>(
        &study,
        &quiet(REFILL_TRIALS),
        &mut trainer,
        &Default::default(),
    )
    .expect("the run");
    assert_eq!(
        summary.trials(),
        REFILL_TRIALS,
        "every trial finished: {:?}",
        summary.group_errors
    );
    for error in &summary.group_errors {
        eprintln!("refill {refill}, seed {seed}: a group failed: {error}");
    }
    (summary, trainer.occupancy().clone())
}

/// Part 2's sums over the seeds of one arm.
#[derive(Default)]
struct Totals {
    complete: usize,
    pruned: usize,
    failed: usize,
    occupancy: Occupancy,
    wall: Duration,
}

impl Totals {
    fn add(&mut self, summary: &RunSummary, occupancy: &Occupancy) {
        self.complete += summary.complete;
        self.pruned += summary.pruned;
        self.failed += summary.failed;
        self.occupancy.member_steps += occupancy.member_steps;
        self.occupancy.slots += occupancy.slots;
        self.wall += summary.elapsed;
    }

    fn per_minute(&self, trials: usize) -> f64 {
        trials as f64 / (self.wall.as_secs_f64() / 60.0)
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

fn ms(d: &Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn shell(command: &str, args: &[&str]) -> String {
    Command::new(command)
        .args(args)
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .unwrap_or_default()
}

fn main() {
    let load = std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into());
    let cpu = shell("lscpu", &[])
        .lines()
        .find_map(|l| l.strip_prefix("Model name:").map(|m| m.trim().to_string()))
        .unwrap_or_else(|| "unknown".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let date = shell("date", &["-u", "+%Y-%m-%d %H:%M UTC"]);
    let profile = if cfg!(debug_assertions) {
        "dev (dependencies at opt-level 3, saturate unoptimised)"
    } else {
        "release (cargo bench)"
    };
    let mut csv = String::from("part,arm,run,quantity,value\n");

    // Part 1: alternate the arms, flipping the order each round.
    let data = Data::new();
    let (mut hand_steps, mut runner_steps) = (Vec::new(), Vec::new());
    let (mut hand_walls, mut runner_walls) = (Vec::new(), Vec::new());
    for round in 0..OVERHEAD_ROUNDS {
        for arm in if round % 2 == 0 { [0, 1] } else { [1, 0] } {
            let (times, wall) = if arm == 0 {
                hand_loop(&data, OVERHEAD_STEPS)
            } else {
                runner(OVERHEAD_STEPS, round as u64)
            };
            let name = ["hand_loop", "runner"][arm];
            let mut step_ms: Vec<f64> = times.iter().map(ms).collect();
            let wall_per_step = ms(&wall) / OVERHEAD_STEPS as f64;
            let round_median = median(&mut step_ms.clone());
            for (quantity, value) in [
                ("median_step_ms", round_median),
                ("wall_ms_per_step", wall_per_step),
            ] {
                writeln!(csv, "overhead,{name},{round},{quantity},{value}").unwrap();
            }
            let (steps, walls) = if arm == 0 {
                (&mut hand_steps, &mut hand_walls)
            } else {
                (&mut runner_steps, &mut runner_walls)
            };
            steps.append(&mut step_ms);
            walls.push(wall_per_step);
        }
    }
    let step_count = (hand_steps.len(), runner_steps.len());
    let hand_step = median(&mut hand_steps);
    let runner_step = median(&mut runner_steps);
    let hand_wall = median(&mut hand_walls);
    let runner_wall = median(&mut runner_walls);
    let percent = |base: f64, other: f64| 100.0 * (other / base - 1.0);

    // Part 2: both arms per seed, alternating.
    let mut arms = [Totals::default(), Totals::default()];
    for &seed in REFILL_SEEDS {
        for refill in [false, true] {
            let (summary, occupancy) = refill_run(refill, seed);
            let name = if refill { "refill_on" } else { "refill_off" };
            for (quantity, value) in [
                ("complete", summary.complete as f64),
                ("pruned", summary.pruned as f64),
                ("failed", summary.failed as f64),
                ("groups", summary.groups as f64),
                ("group_steps", occupancy.group_steps as f64),
                ("member_steps", occupancy.member_steps as f64),
                ("slots", occupancy.slots as f64),
                ("refilled", occupancy.refilled as f64),
                ("busy_fraction", occupancy.busy_fraction()),
                ("wall_s", summary.elapsed.as_secs_f64()),
            ] {
                writeln!(csv, "refill,{name},{seed},{quantity},{value}").unwrap();
            }
            eprintln!(
                "{name} seed {seed}: {} complete, {} pruned, {} failed, busy {:.3}, {:.2} s",
                summary.complete,
                summary.pruned,
                summary.failed,
                occupancy.busy_fraction(),
                summary.elapsed.as_secs_f64()
            );
            arms[refill as usize].add(&summary, &occupancy);
        }
    }
    let [off, on] = &arms;

    let mut table = String::new();
    let t = &mut table;
    writeln!(t, "Command: `cargo bench -p saturate-train --bench runner` ({profile}). Machine: {cpu}, {cores} cores. Load average at start: {load}. {}", date.trim()).unwrap();
    writeln!(t).unwrap();
    writeln!(
        t,
        "| measurement | baseline | runner | runner vs baseline |"
    )
    .unwrap();
    writeln!(t, "|---|---|---|---|").unwrap();
    writeln!(
        t,
        "| group step, median of {} / {} steps | hand loop: {hand_step:.4} ms | run_trainer: {runner_step:.4} ms | **{:+.2} %** |",
        step_count.0,
        step_count.1,
        percent(hand_step, runner_step)
    )
    .unwrap();
    writeln!(
        t,
        "| wall time / {OVERHEAD_STEPS} steps, median of {OVERHEAD_ROUNDS} runs (runner: + init, ask / tell, 1 evaluation) | hand loop: {hand_wall:.4} ms | run_trainer: {runner_wall:.4} ms | {:+.2} % |",
        percent(hand_wall, runner_wall)
    )
    .unwrap();
    let runs = REFILL_SEEDS.len();
    writeln!(
        t,
        "| members busy, MedianPruner, {runs} x {REFILL_TRIALS} trials | refill off: {:.3} | refill on: {:.3} | {:+.1} points |",
        off.occupancy.busy_fraction(),
        on.occupancy.busy_fraction(),
        100.0 * (on.occupancy.busy_fraction() - off.occupancy.busy_fraction())
    )
    .unwrap();
    writeln!(
        t,
        "| completed trials / min (complete / pruned / failed) | refill off: {:.0} ({} / {} / {}) | refill on: {:.0} ({} / {} / {}) | x{:.2} |",
        off.per_minute(off.complete),
        off.complete,
        off.pruned,
        off.failed,
        on.per_minute(on.complete),
        on.complete,
        on.pruned,
        on.failed,
        on.per_minute(on.complete) / off.per_minute(off.complete)
    )
    .unwrap();
    let finished = |arm: &Totals| arm.per_minute(arm.complete + arm.pruned + arm.failed);
    writeln!(
        t,
        "| finished trials / min (complete, pruned or failed) | refill off: {:.0} | refill on: {:.0} | x{:.2} |",
        finished(off),
        finished(on),
        finished(on) / finished(off)
    )
    .unwrap();
    writeln!(
        t,
        "| wall time of the {runs} studies | refill off: {:.2} s | refill on: {:.2} s | {:+.1} % |",
        off.wall.as_secs_f64(),
        on.wall.as_secs_f64(),
        percent(off.wall.as_secs_f64(), on.wall.as_secs_f64())
    )
    .unwrap();
    println!("{table}");

    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/bench-runner.csv");
    match std::fs::write(path, &csv) {
        Ok(()) => eprintln!("raw numbers: {path}"),
        Err(e) => eprintln!("could not write {path}: {e}"),
    }
}
