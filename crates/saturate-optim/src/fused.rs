//! The whole-module update: every parameter of a group updated by one pass of the rule.
//!
//! Instead of one update per parameter tensor (about 15 small kernels each for Adam), the
//! parameters, gradients and state tensors are concatenated into one flat `[K, P]` buffer each,
//! the rule runs once on the buffers, and the results are sliced back. The values are the same
//! bit for bit: every op of the update is elementwise (per-parameter norm clipping runs before
//! the concatenation).
//!
//! Opt-in ([`GroupOptimizer::with_fused_update`](crate::GroupOptimizer::with_fused_update)):
//! on NdArray, concatenating along the parameter axis is slow and this path loses to the
//! per-parameter one; it is for backends where each kernel launch costs more than the copy.

use std::collections::HashMap;

use burn::module::{AutodiffModule, ModuleMapper, ModuleVisitor, Param, ParamId};
use burn::optim::GradientsParams;
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::Tensor;
use saturate_vmap::VmapBackend;

use crate::base::{MemberState, UpdateRule};
use crate::grad_clipping::GradientClipping;

type Inner<B> = <B as AutodiffBackend>::InnerBackend;

/// A parameter's state, flattened to rank 1.
struct FlatState<B: AutodiffBackend> {
    steps: Vec<usize>,
    tensors: Vec<Tensor<Inner<B>, 1>>,
}

/// What parameters must share to be updated together: no state yet, or the same per-member
/// step counts and number of state tensors.
type BatchKey = Option<(Vec<usize>, usize)>;

/// A parameter with a gradient, flattened to rank 1.
struct Entry<B: AutodiffBackend> {
    id: ParamId,
    len: usize,
    tensor: Tensor<Inner<B>, 1>,
    grad: Tensor<Inner<B>, 1>,
    state: Option<FlatState<B>>,
}

/// A parameter's update, flattened: the new value and state tensors.
struct Updated<B: AutodiffBackend> {
    tensor: Tensor<Inner<B>, 1>,
    state: Option<FlatState<B>>,
}

/// Updates every parameter of `module` that has a gradient in `grads` with one pass of `rule`
/// per group of parameters that share their step counts (normally all of them).
pub(crate) fn fused_step<R, M, B>(
    rule: &R,
    clipping: Option<&GradientClipping>,
    states: &mut HashMap<ParamId, MemberState<Inner<B>>>,
    grads: &mut GradientsParams,
    lr: &[f64],
    module: M,
) -> M
where
    R: UpdateRule,
    B: AutodiffBackend,
    Inner<B>: VmapBackend,
    M: AutodiffModule<B>,
{
    let mut collect = Collect::<B> {
        grads,
        states,
        clipping,
        entries: Vec::new(),
    };
    module.visit(&mut collect);
    let entries = collect.entries;

    // Parameters are updated together when their state is alike: all fresh, or all with the
    // same per-member step counts and the same number of state tensors.
    let mut batches: Vec<(BatchKey, Vec<Entry<B>>)> = Vec::new();
    for entry in entries {
        let key = entry
            .state
            .as_ref()
            .map(|s| (s.steps.clone(), s.tensors.len()));
        match batches.iter_mut().find(|(k, _)| *k == key) {
            Some((_, batch)) => batch.push(entry),
            None => batches.push((key, vec![entry])),
        }
    }

    let mut updated: HashMap<ParamId, Updated<B>> = HashMap::new();
    for (key, batch) in batches {
        let lens: Vec<usize> = batch.iter().map(|e| e.len).collect();
        let ids: Vec<ParamId> = batch.iter().map(|e| e.id).collect();
        let mut tensors = Vec::with_capacity(batch.len());
        let mut grads = Vec::with_capacity(batch.len());
        let mut state_columns: Vec<Vec<Tensor<Inner<B>, 1>>> = match &key {
            Some((_, n)) => (0..*n).map(|_| Vec::with_capacity(batch.len())).collect(),
            None => Vec::new(),
        };
        for entry in batch {
            tensors.push(entry.tensor);
            grads.push(entry.grad);
            if let Some(state) = entry.state {
                for (column, t) in state_columns.iter_mut().zip(state.tensors) {
                    column.push(t);
                }
            }
        }
        let tensor = Tensor::cat(tensors, 0);
        let mut grad = Tensor::cat(grads, 0);
        if let Some(GradientClipping::Value(_)) = clipping {
            grad = clipping.expect("matched").clip(grad);
        }
        let state = key.map(|(steps, _)| {
            MemberState::new(
                steps,
                state_columns
                    .into_iter()
                    .map(|column| Tensor::cat(column, 0))
                    .collect(),
            )
        });
        let (tensor, state) = rule.step(lr, tensor, grad, state);
        let state: Option<FlatState<B>> = state.map(|s| {
            let (steps, tensors) = s.into_parts::<1>();
            FlatState { steps, tensors }
        });
        let mut offset = 0;
        for (id, len) in ids.into_iter().zip(lens) {
            let range = offset..offset + len;
            offset += len;
            updated.insert(
                id,
                Updated {
                    tensor: tensor.clone().slice([range.clone()]),
                    state: state.as_ref().map(|s| FlatState {
                        steps: s.steps.clone(),
                        tensors: s
                            .tensors
                            .iter()
                            .map(|t| t.clone().slice([range.clone()]))
                            .collect(),
                    }),
                },
            );
        }
    }

    module.map(&mut Scatter::<B> { updated, states })
}

/// Takes every parameter with a gradient, flattened, with its state.
struct Collect<'a, B: AutodiffBackend>
where
    Inner<B>: VmapBackend,
{
    grads: &'a mut GradientsParams,
    states: &'a mut HashMap<ParamId, MemberState<Inner<B>>>,
    clipping: Option<&'a GradientClipping>,
    entries: Vec<Entry<B>>,
}

impl<B: AutodiffBackend> ModuleVisitor<B> for Collect<'_, B>
where
    Inner<B>: VmapBackend,
{
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        let id = param.id;
        let Some(grad) = self.grads.remove::<Inner<B>, D>(id) else {
            return;
        };
        // Clipping by norm uses each parameter's own norm, so it runs before flattening.
        let grad = match self.clipping {
            Some(c @ GradientClipping::Norm(_)) => c.clip(grad),
            _ => grad,
        };
        let tensor = param.val().inner();
        let len = tensor.shape().num_elements();
        let state = self.states.remove(&id).map(|s| {
            let (steps, tensors) = s.into_parts::<D>();
            FlatState {
                steps,
                tensors: tensors.into_iter().map(|t| t.reshape([len])).collect(),
            }
        });
        self.entries.push(Entry {
            id,
            len,
            tensor: tensor.reshape([len]),
            grad: grad.reshape([len]),
            state,
        });
    }
}

/// Puts the updated values back into the module and the state back into the map, each with
/// its parameter's shape.
struct Scatter<'a, B: AutodiffBackend>
where
    Inner<B>: VmapBackend,
{
    updated: HashMap<ParamId, Updated<B>>,
    states: &'a mut HashMap<ParamId, MemberState<Inner<B>>>,
}

impl<B: AutodiffBackend> ModuleMapper<B> for Scatter<'_, B>
where
    Inner<B>: VmapBackend,
{
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<B, D>>) -> Param<Tensor<B, D>> {
        let (id, tensor, mapper) = param.consume();
        let Some(update) = self.updated.remove(&id) else {
            return Param::from_mapped_value(id, tensor, mapper);
        };
        let shape = tensor.shape();
        let require_grad = tensor.is_require_grad();
        if let Some(FlatState { steps, tensors }) = update.state {
            let tensors = tensors
                .into_iter()
                .map(|t| t.reshape(shape.clone()))
                .collect::<Vec<Tensor<Inner<B>, D>>>();
            self.states.insert(id, MemberState::new(steps, tensors));
        }
        let mut updated = Tensor::from_inner(update.tensor.reshape(shape));
        if require_grad {
            updated = updated.require_grad();
        }
        Param::from_mapped_value(id, updated, mapper)
    }
}
