//! A small MLP, deterministic data, and the two training loops every test compares: K members
//! as one saturate group, and each member alone with unmodified burn-optim.

use burn::backend::{Autodiff, NdArray};
use burn::module::{Module, ModuleMapper, ModuleVisitor, Param};
use burn::nn::{Linear, LinearConfig};
use burn::optim::{GradientsParams, Optimizer};
use burn::tensor::activation::relu;
use burn::tensor::backend::Backend;
use burn::tensor::{Tensor, TensorData};
use saturate_optim::{GroupOptimizer, UpdateRule};
use saturate_vmap::{member_data, Batched, Vmap};

/// The group backend: K members as one model.
pub type GB = Autodiff<Vmap<NdArray>>;
/// The reference backend: one member, unmodified burn.
pub type RB = Autodiff<NdArray>;

/// Members in the parity tests.
pub const K: usize = 4;
/// Steps in the parity tests.
pub const STEPS: usize = 50;
/// The tolerance: every parameter within `atol 1e-6` of the member trained alone.
pub const ATOL: f32 = 1e-6;

const INPUTS: usize = 5;
const HIDDEN: usize = 7;
const OUTPUTS: usize = 3;
const BATCH: usize = 6;

#[derive(Module, Debug)]
pub struct Mlp<B: Backend> {
    pub hidden: Linear<B>,
    pub output: Linear<B>,
}

impl<B: Backend> Mlp<B> {
    pub fn new(device: &B::Device) -> Self {
        Self {
            hidden: LinearConfig::new(INPUTS, HIDDEN).init(device),
            output: LinearConfig::new(HIDDEN, OUTPUTS).init(device),
        }
    }

    /// Mean squared error on step `step`'s batch (one loss per member under a group).
    pub fn loss(&self, step: usize, device: &B::Device) -> Tensor<B, 1> {
        let (x, y) = batch::<B>(step, device);
        let out = self.output.forward(relu(self.hidden.forward(x)));
        (out - y).powi_scalar(2).mean()
    }
}

/// A deterministic pseudo-random batch for `step`, the same for every member and backend.
/// The scale makes gradients large enough for clipping to bite.
pub fn batch<B: Backend>(step: usize, device: &B::Device) -> (Tensor<B, 2>, Tensor<B, 2>) {
    let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ (step as u64).wrapping_mul(0x2545_f491_4f6c_dd1d);
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        ((state >> 40) as f32 / (1u64 << 24) as f32) * 4.0 - 2.0
    };
    let x: Vec<f32> = (0..BATCH * INPUTS).map(|_| next()).collect();
    let y: Vec<f32> = (0..BATCH * OUTPUTS).map(|_| next()).collect();
    (
        Tensor::from_data(TensorData::new(x, [BATCH, INPUTS]), device),
        Tensor::from_data(TensorData::new(y, [BATCH, OUTPUTS]), device),
    )
}

/// A group of `members` freshly initialised members (independent random inits).
pub fn init_group(members: usize) -> Batched<Mlp<GB>> {
    Batched::init(members, &Default::default(), Mlp::new).unwrap()
}

/// Every float parameter of every member, in visit order: `[member][param]`.
pub fn group_params<M: Module<GB>>(group: &Batched<M>) -> Vec<Vec<Vec<f32>>> {
    struct Collect(Vec<Vec<TensorData>>);
    impl ModuleVisitor<GB> for Collect {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<GB, D>>) {
            self.0.push(member_data(param.val()));
        }
    }
    let mut c = Collect(Vec::new());
    group.visit(&mut c);
    (0..group.members())
        .map(|k| c.0.iter().map(|p| p[k].to_vec::<f32>().unwrap()).collect())
        .collect()
}

/// Every float parameter of a reference module, in visit order.
pub fn reference_params<M: Module<RB>>(model: &M) -> Vec<Vec<f32>> {
    struct Collect(Vec<Vec<f32>>);
    impl ModuleVisitor<RB> for Collect {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<RB, D>>) {
            self.0
                .push(param.val().into_data().to_vec::<f32>().unwrap());
        }
    }
    let mut c = Collect(Vec::new());
    model.visit(&mut c);
    c.0
}

/// A reference module (unmodified burn) holding the given parameters.
pub fn reference_from(params: &[Vec<f32>]) -> Mlp<RB> {
    load_params(Mlp::<RB>::new(&Default::default()), params)
}

/// `model` with its float parameters replaced, in visit order, by `params`.
pub fn load_params<M: Module<RB>>(model: M, params: &[Vec<f32>]) -> M {
    struct Load<'a>(std::slice::Iter<'a, Vec<f32>>);
    impl ModuleMapper<RB> for Load<'_> {
        fn map_float<const D: usize>(
            &mut self,
            param: Param<Tensor<RB, D>>,
        ) -> Param<Tensor<RB, D>> {
            let (id, tensor, mapper) = param.consume();
            let shape = tensor.shape();
            let values = self.0.next().expect("same parameter count").clone();
            let tensor =
                Tensor::from_data(TensorData::new(values, shape), &tensor.device()).require_grad();
            Param::from_mapped_value(id, tensor, mapper)
        }
    }
    model.map(&mut Load(params.iter()))
}

/// Reference copies of every member of a group (same parameters, on `Autodiff<NdArray>`).
pub fn references(group: &Batched<Mlp<GB>>) -> Vec<Mlp<RB>> {
    group_params(group)
        .iter()
        .map(|p| reference_from(p))
        .collect()
}

/// Trains the group on steps `steps` with `lr(step)` giving the K learning rates.
pub fn train_group<R: UpdateRule>(
    mut group: Batched<Mlp<GB>>,
    optim: &mut GroupOptimizer<R, Mlp<GB>, GB>,
    steps: std::ops::Range<usize>,
    mut lr: impl FnMut(usize) -> Vec<f64>,
) -> Batched<Mlp<GB>> {
    for step in steps {
        let loss = group.loss(step, &group.device());
        let grads = GradientsParams::from_grads(loss.backward(), &*group);
        group = optim.step(lr(step), group, grads).unwrap();
    }
    group
}

/// Trains one member alone with burn-optim on steps `steps` with `lr(step)`.
pub fn train_reference<O: Optimizer<Mlp<RB>, RB>>(
    mut model: Mlp<RB>,
    optim: &mut O,
    steps: std::ops::Range<usize>,
    mut lr: impl FnMut(usize) -> f64,
) -> Mlp<RB> {
    for step in steps {
        let loss = model.loss(step, &Default::default());
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(lr(step), model, grads);
    }
    model
}

/// The largest absolute difference between two parameter lists; a non-finite value on either
/// side counts as an infinite difference (NaN must never compare as close).
pub fn max_abs_diff(a: &[Vec<f32>], b: &[Vec<f32>]) -> f32 {
    assert_eq!(a.len(), b.len(), "parameter count");
    a.iter()
        .zip(b)
        .flat_map(|(x, y)| {
            assert_eq!(x.len(), y.len(), "parameter size");
            x.iter().zip(y).map(|(p, q)| {
                if p.is_finite() && q.is_finite() {
                    (p - q).abs()
                } else {
                    f32::INFINITY
                }
            })
        })
        .fold(0.0, f32::max)
}

/// Asserts that member `member` of the group matches its reference within [`ATOL`], and that
/// training moved it (so the comparison is not vacuous).
pub fn assert_member_matches<M: Module<RB>>(
    what: &str,
    member: usize,
    got: &[Vec<f32>],
    reference: &M,
    initial: &[Vec<f32>],
) {
    let want = reference_params(reference);
    let diff = max_abs_diff(got, &want);
    if std::env::var_os("SATURATE_OPTIM_PRINT_DIFF").is_some() {
        eprintln!("{what}: member {member}: max |group - burn-optim| = {diff:e}");
    }
    assert!(
        diff <= ATOL,
        "{what}: member {member} differs from burn-optim by {diff:e} (atol {ATOL:e})"
    );
    assert!(
        max_abs_diff(initial, &want) > 1e-4,
        "{what}: member {member} did not move; the comparison would prove nothing"
    );
}

/// A one-member group module holding a reference module's parameters (for `Batched::stack`).
pub fn to_group_member(model: &Mlp<RB>) -> Mlp<GB> {
    let params = reference_params(model);
    struct Load<'a>(std::slice::Iter<'a, Vec<f32>>);
    impl ModuleMapper<GB> for Load<'_> {
        fn map_float<const D: usize>(
            &mut self,
            param: Param<Tensor<GB, D>>,
        ) -> Param<Tensor<GB, D>> {
            let (id, tensor, mapper) = param.consume();
            let shape = tensor.shape();
            let values = self.0.next().expect("same parameter count").clone();
            let tensor =
                Tensor::from_data(TensorData::new(values, shape), &tensor.device()).require_grad();
            Param::from_mapped_value(id, tensor, mapper)
        }
    }
    Mlp::<GB>::new(&saturate_vmap::VmapDevice::new(Default::default(), 1))
        .map(&mut Load(params.iter()))
}
