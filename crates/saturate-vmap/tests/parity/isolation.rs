//! Gradient isolation: a loss that depends on one member only gives exactly zero gradients to
//! the other members (and per-member loss weights scale each member's gradient alone).

use super::common::isolation;
use super::models::{CnnCase, MlpCase, TextCase};

#[test]
fn mlp_loss_of_member_1_only() {
    isolation(&MlpCase { regression: false }, 300, &[0.0, 1.0, 0.0, 0.0]);
}

#[test]
fn cnn_loss_of_member_1_only() {
    isolation(&CnnCase, 301, &[0.0, 1.0, 0.0, 0.0]);
}

#[test]
fn transformer_loss_of_member_1_only() {
    isolation(&TextCase { masked: true }, 302, &[0.0, 1.0, 0.0, 0.0]);
}

#[test]
fn per_member_loss_weights() {
    isolation(&MlpCase { regression: true }, 303, &[0.5, 0.0, 2.0, 1.0]);
}

/// The gradient of a shared (unbatched) input that requires grad: either one gradient per
/// member (batched, member k = member k's own input gradient) or the gradient of the sum of
/// the member losses (unbatched, the sum of the members' input gradients). Anything else (one
/// member's gradient, a wrong sum) is a bug.
#[test]
fn gradient_of_a_shared_input() {
    use burn::nn::loss::{MseLoss, Reduction};
    use burn::tensor::Tensor;
    use rand::SeedableRng;
    use saturate_vmap::{is_batched, member_data, Batched};

    use super::common::{inner_device, max_diff, reseed, transfer, uniform, G, R};
    use super::models::Mlp;

    let group: Batched<Mlp<G>> =
        Batched::init(4, &inner_device(), |d| reseed(Mlp::new(d), 310)).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(310);
    let x = uniform(&mut rng, &[5, 8], -1.0, 1.0);
    let y = uniform(&mut rng, &[5, 4], -1.0, 1.0);
    let gx = Tensor::<G, 2>::from_data(x.clone(), &group.device()).require_grad();
    let gy = Tensor::<G, 2>::from_data(y.clone(), &group.device());
    let loss = MseLoss::new().forward(group.forward(gx.clone()), gy, Reduction::Mean);
    let grads = loss.backward();
    let grad = gx.grad(&grads).expect("gradient of the shared input");
    let f = |d: burn::tensor::TensorData| d.convert::<f32>().to_vec::<f32>().unwrap();
    let per_member: Vec<Vec<f32>> = (0..4)
        .map(|k| {
            let m: Mlp<R> = transfer::<G, R, _, _>(
                group.member(k).unwrap(),
                Mlp::new(&inner_device()),
                &inner_device(),
            );
            let rx = Tensor::<R, 2>::from_data(x.clone(), &inner_device()).require_grad();
            let ry = Tensor::<R, 2>::from_data(y.clone(), &inner_device());
            let loss = MseLoss::new().forward(m.forward(rx.clone()), ry, Reduction::Mean);
            let g = rx.grad(&loss.backward()).unwrap();
            f(g.into_data())
        })
        .collect();
    if is_batched(&grad) {
        for (k, got) in member_data(grad).into_iter().enumerate() {
            let (d, ok) = max_diff(&f(got), &per_member[k], 1e-6, 1e-4);
            assert!(ok, "batched input gradient, member {k}: differs by {d:e}");
        }
    } else {
        let sum: Vec<f32> = (0..per_member[0].len())
            .map(|i| per_member.iter().map(|g| g[i]).sum())
            .collect();
        let got = f(member_data(grad).remove(0));
        let (d, ok) = max_diff(&got, &sum, 1e-6, 1e-4);
        assert!(
            ok,
            "unbatched input gradient: differs from the sum over members by {d:e}"
        );
    }
}

/// A Linear whose weights are shared by all members (loaded from data, so unbatched: e.g. a
/// frozen pretrained layer) applied to a batched input of rank 2 and 3: outputs and input
/// gradients per member equal each member's own run; the weight gradient is either per member
/// or the sum over members.
#[test]
fn shared_weights_with_batched_input() {
    use burn::nn::{Linear, LinearConfig};
    use burn::tensor::{Tensor, TensorData};
    use rand::SeedableRng;
    use saturate_vmap::{is_batched, member_data, stack_members, VmapDevice};

    use super::common::{group_device, inner_device, max_diff, transfer, uniform, Inner, G, R};

    let f = |d: TensorData| d.convert::<f32>().to_vec::<f32>().unwrap();
    let plain: Linear<Inner> = LinearConfig::new(4, 5).init(&inner_device());
    // burn initialises lazily and a clone of an uninitialised parameter draws its own values.
    let _ = (plain.weight.val(), plain.bias.as_ref().map(|b| b.val()));
    let device = group_device(3);
    let shared: Linear<G> = transfer::<Inner, G, _, _>(
        plain.clone(),
        LinearConfig::new(4, 5).init(&device),
        &device,
    );
    assert!(
        !is_batched(&shared.weight.val()),
        "weights loaded from data are shared"
    );
    let reference: Linear<R> = transfer::<Inner, R, _, _>(
        plain,
        LinearConfig::new(4, 5).init(&inner_device()),
        &inner_device(),
    );

    let mut rng = rand::rngs::StdRng::seed_from_u64(320);
    for shape in [vec![6usize, 4], vec![2, 6, 4]] {
        let data: Vec<TensorData> = (0..3)
            .map(|_| uniform(&mut rng, &shape, -1.0, 1.0))
            .collect();
        let one = VmapDevice::new(inner_device(), 1);
        // Rank 3 covers the batched-matmul path, rank 2 the folded one.
        macro_rules! run {
            ($D:literal) => {{
                let x = stack_members(
                    data.iter()
                        .map(|d| Tensor::<G, $D>::from_data(d.clone(), &one))
                        .collect(),
                )
                .unwrap()
                .require_grad();
                let y = shared.forward(x.clone());
                let out = member_data(y.clone());
                let grads = (y.clone() * y).sum().backward();
                let gx = member_data(x.grad(&grads).expect("input gradient"));
                let gw = shared.weight.val().grad(&grads).expect("weight gradient");
                let mut want_gw: Vec<Vec<f32>> = Vec::new();
                for k in 0..3 {
                    let rx =
                        Tensor::<R, $D>::from_data(data[k].clone(), &inner_device()).require_grad();
                    let ry = reference.forward(rx.clone());
                    let (d, ok) =
                        max_diff(&f(out[k].clone()), &f(ry.clone().into_data()), 1e-6, 1e-5);
                    assert!(ok, "rank {}: member {k}: output differs by {d:e}", $D);
                    let rgrads = (ry.clone() * ry).sum().backward();
                    let rgx = rx.grad(&rgrads).unwrap().into_data();
                    let (d, ok) = max_diff(&f(gx[k].clone()), &f(rgx), 1e-6, 1e-5);
                    assert!(
                        ok,
                        "rank {}: member {k}: input gradient differs by {d:e}",
                        $D
                    );
                    want_gw.push(f(reference.weight.val().grad(&rgrads).unwrap().into_data()));
                }
                if is_batched(&gw) {
                    for (k, g) in member_data(gw).into_iter().enumerate() {
                        let (d, ok) = max_diff(&f(g), &want_gw[k], 1e-6, 1e-4);
                        assert!(
                            ok,
                            "rank {}: member {k}: weight gradient differs by {d:e}",
                            $D
                        );
                    }
                } else {
                    let sum: Vec<f32> = (0..want_gw[0].len())
                        .map(|i| want_gw.iter().map(|g| g[i]).sum())
                        .collect();
                    let got = f(member_data(gw).remove(0));
                    let (d, ok) = max_diff(&got, &sum, 1e-6, 1e-4);
                    assert!(
                        ok,
                        "rank {}: shared weight gradient differs from the sum by {d:e}",
                        $D
                    );
                }
            }};
        }
        if shape.len() == 2 {
            run!(2);
        } else {
            run!(3);
        }
    }
}

/// Gradients with burn's balanced checkpointing (memory-bound ops recomputed by retro-forward
/// during backward) equal those without it (up to summation order: atol 1e-6, rtol 1e-4), and
/// each member's independent gradient.
#[test]
fn balanced_checkpointing_gives_the_same_gradients() {
    use burn::backend::autodiff::checkpoint::strategy::BalancedCheckpointing;
    use burn::backend::Autodiff;
    use burn::module::{AutodiffModule, Module, ModuleVisitor, Param};
    use burn::tensor::backend::AutodiffBackend;
    use burn::tensor::{Tensor, TensorData};
    use rand::SeedableRng;
    use saturate_vmap::{member_data, Batched, Vmap, VmapBackend, VmapDevice};

    use super::common::{
        inner_device, max_diff, transfer, Case, GroupFeed, Inner, MemberFeed, Slot, ATOL, R, RTOL,
    };
    use super::models::{CnnCase, MlpCase};

    type GC = Autodiff<Vmap<Inner>, BalancedCheckpointing>;
    type GD = super::common::G;

    struct Grads<'a, B: AutodiffBackend> {
        grads: &'a B::Gradients,
        out: Vec<Vec<Vec<f32>>>,
    }
    impl<B: AutodiffBackend> ModuleVisitor<B> for Grads<'_, B>
    where
        B::InnerBackend: VmapBackend,
    {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
            let g = param.val().grad(self.grads).expect("gradient");
            self.out.push(
                member_data(g)
                    .into_iter()
                    .map(|d| d.convert::<f32>().to_vec::<f32>().unwrap())
                    .collect(),
            );
        }
    }
    fn grads_of<B, M>(module: &M, grads: &B::Gradients) -> Vec<Vec<Vec<f32>>>
    where
        B: AutodiffBackend,
        B::InnerBackend: VmapBackend,
        M: Module<B>,
    {
        let mut v = Grads::<B> {
            grads,
            out: Vec::new(),
        };
        module.visit(&mut v);
        v.out
    }

    fn check<C: Case>(case: &C, seed: u64)
    where
        C::Model<GD>: AutodiffModule<GD>,
        C::Model<GC>: AutodiffModule<GC>,
        C::Model<R>: AutodiffModule<R>,
    {
        let plain: Vec<C::Model<Inner>> = (0..4)
            .map(|_| case.init::<Inner>(&inner_device()))
            .collect();
        for p in &plain {
            let _ = super::common::params(p); // initialise (lazy) before cloning
        }
        let one = VmapDevice::new(inner_device(), 1);
        let gd: Batched<C::Model<GD>> = Batched::stack(
            plain
                .iter()
                .map(|p| transfer::<Inner, GD, _, _>(p.clone(), case.init::<GD>(&one), &one))
                .collect(),
        )
        .unwrap();
        let gc: Batched<C::Model<GC>> = Batched::stack(
            plain
                .iter()
                .map(|p| transfer::<Inner, GC, _, _>(p.clone(), case.init::<GC>(&one), &one))
                .collect(),
        )
        .unwrap();
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let slots: Vec<Slot> = case.batch(&mut rng).into_iter().map(Slot::Shared).collect();
        let ld = case.loss(
            &*gd,
            &GroupFeed::<GD> {
                slots: &slots,
                device: gd.device(),
            },
        );
        let lc = case.loss(
            &*gc,
            &GroupFeed::<GC> {
                slots: &slots,
                device: gc.device(),
            },
        );
        let d = grads_of::<GD, _>(&*gd, &ld.backward());
        let c = grads_of::<GC, _>(&*gc, &lc.backward());
        assert_eq!(d.len(), c.len());
        for (j, (dj, cj)) in d.iter().zip(&c).enumerate() {
            for k in 0..4 {
                let (diff, ok) = max_diff(&cj[k], &dj[k], 1e-6, 1e-4);
                assert!(
                    ok,
                    "parameter {j}, member {k}: checkpointed gradient differs by {diff:e}"
                );
            }
        }
        // And member 2 against its independent run.
        let r: C::Model<R> = transfer::<Inner, R, _, _>(
            plain[2].clone(),
            case.init::<R>(&inner_device()),
            &inner_device(),
        );
        let lr = case.loss(
            &r,
            &MemberFeed::<R> {
                slots: &slots,
                member: 2,
                device: inner_device(),
            },
        );
        let rg = lr.backward();
        let mut want: Vec<Vec<f32>> = Vec::new();
        struct RG<'a>(&'a <R as AutodiffBackend>::Gradients, &'a mut Vec<Vec<f32>>);
        impl ModuleVisitor<R> for RG<'_> {
            fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<R, D>>) {
                let g: TensorData = param.val().grad(self.0).expect("gradient").into_data();
                self.1.push(g.convert::<f32>().to_vec::<f32>().unwrap());
            }
        }
        r.visit(&mut RG(&rg, &mut want));
        for (j, w) in want.iter().enumerate() {
            let (diff, ok) = max_diff(&c[j][2], w, ATOL, RTOL);
            assert!(
                ok,
                "parameter {j}, member 2: differs from its own run by {diff:e}"
            );
        }
    }

    check(&MlpCase { regression: false }, 330);
    check(&CnnCase, 331);
}
