//! Training through cubeprim's ops: a small mixture-of-experts sequence model whose gate picks
//! the top-2 of 8 experts per step with `prim_topk_with_indices` and whose read-out pools the
//! sequence with a running mean (`prim_cumsum`), trained with SGD on synthetic data (targets
//! from a teacher model of the same shape) on `Autodiff<B>`.
//!
//! The same model written with burn's built-ins (`topk_with_indices`, `cumsum`) starts from the
//! same parameters; after 10 steps both must hold the same parameters (to f32 tolerance), and
//! the loss must fall over the run.
//!
//! ```text
//! cargo run --release --features burn-fusion,burn-ndarray,burn-autodiff --example burn_train_moe [-- --steps 300]
//! ```
//!
//! It trains on `Autodiff<NdArray>` (the CPU). `train` is generic over the backend: on a GPU,
//! call it with `Autodiff<burn::backend::Wgpu>` or `Autodiff<burn::backend::Cuda>` (the
//! gradient tests run these ops on `Autodiff<Wgpu>`, fused and plain). One backend per build
//! keeps the example's compile time down: each backend type compiles its own copy of every
//! op and its backward pass.

use burn::module::{AutodiffModule, Module};
use burn::nn::{Linear, LinearConfig};
use burn::optim::{GradientsParams, Optimizer, SgdConfig};
use burn::tensor::activation::softmax;
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Distribution, ElementConversion, Int, Tensor};
use cubeprim::burn::prelude::*;
use std::time::Instant;

const FEATURES: usize = 16;
const HIDDEN: usize = 16;
const EXPERTS: usize = 8;
const TOP: usize = 2;

/// The model: a gate, the experts and a read-out.
#[derive(Module, Debug)]
struct Moe<B: Backend> {
    gate: Linear<B>,
    experts: Vec<Linear<B>>,
    head: Linear<B>,
}

/// Which top-k and cumsum the forward pass uses.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Ops {
    Cubeprim,
    Burn,
}

impl<B: PrimBackend> Moe<B> {
    fn new(device: &B::Device) -> Self {
        Self {
            gate: LinearConfig::new(FEATURES, EXPERTS).init(device),
            experts: (0..EXPERTS)
                .map(|_| LinearConfig::new(FEATURES, HIDDEN).init(device))
                .collect(),
            head: LinearConfig::new(HIDDEN, 1).init(device),
        }
    }

    /// `x`: `[batch, steps, FEATURES]` → `[batch, steps, 1]`.
    fn forward(&self, x: Tensor<B, 3>, ops: Ops) -> Tensor<B, 3> {
        let [batch, steps, _] = x.dims();
        let logits = self.gate.forward(x.clone());
        let (top, idx): (Tensor<B, 3>, Tensor<B, 3, Int>) = match ops {
            Ops::Cubeprim => logits.prim_topk_with_indices(TOP, 2),
            Ops::Burn => logits.topk_with_indices(TOP, 2),
        };
        let weights = softmax(top, 2).unsqueeze_dim::<4>(3); // [batch, steps, TOP, 1]
        let all: Vec<Tensor<B, 4>> = self
            .experts
            .iter()
            .map(|e| e.forward(x.clone()).unsqueeze_dim(2))
            .collect();
        let all = Tensor::cat(all, 2); // [batch, steps, EXPERTS, HIDDEN]
        let idx = idx
            .unsqueeze_dim::<4>(3)
            .expand([batch, steps, TOP, HIDDEN]);
        let picked = all.gather(2, idx); // [batch, steps, TOP, HIDDEN]
        let mixed = (picked * weights).sum_dim(2).squeeze_dim::<3>(2); // [batch, steps, HIDDEN]
        let running = match ops {
            Ops::Cubeprim => mixed.prim_cumsum(1),
            Ops::Burn => mixed.cumsum(1),
        };
        let count = Tensor::<B, 1, Int>::arange(1..steps as i64 + 1, &running.device())
            .float()
            .reshape([1, steps, 1]);
        self.head.forward(running / count)
    }
}

/// One SGD step on `(x, y)`; returns the model and the loss.
fn step<B: AutodiffBackend + PrimBackend, O: Optimizer<Moe<B>, B>>(
    model: Moe<B>,
    opt: &mut O,
    x: Tensor<B, 3>,
    y: Tensor<B, 3>,
    ops: Ops,
) -> (Moe<B>, f32) {
    let loss = (model.forward(x, ops) - y).powi_scalar(2).mean();
    let value = loss.clone().into_scalar().elem::<f32>();
    let grads = GradientsParams::from_grads(loss.backward(), &model);
    (opt.step(0.05, model, grads), value)
}

/// Every parameter of the model, flattened in order.
fn params<B: Backend>(m: &Moe<B>) -> Vec<f32> {
    let mut out = Vec::new();
    let mut push = |l: &Linear<B>| {
        out.extend(
            l.weight
                .val()
                .into_data()
                .convert::<f32>()
                .to_vec::<f32>()
                .unwrap(),
        );
        if let Some(b) = &l.bias {
            out.extend(
                b.val()
                    .into_data()
                    .convert::<f32>()
                    .to_vec::<f32>()
                    .unwrap(),
            );
        }
    };
    push(&m.gate);
    m.experts.iter().for_each(&mut push);
    push(&m.head);
    out
}

fn train<B: AutodiffBackend + PrimBackend>(device: &B::Device, steps: usize)
where
    B::InnerBackend: PrimBackend,
{
    B::seed(device, 7);
    let (batch, len) = (32, 24);
    let x = Tensor::<B, 3>::random(
        [batch, len, FEATURES],
        Distribution::Normal(0.0, 1.0),
        device,
    );
    let teacher = Moe::<B::InnerBackend>::new(device);
    let y = Tensor::<B, 3>::from_inner(teacher.forward(x.clone().inner(), Ops::Burn));
    let start = Moe::<B>::new(device);
    // burn initialises parameters lazily, on first read, and a clone of an uninitialised
    // parameter initialises on its own: read them once so that both copies start equal.
    let _ = params(&start);

    // The same start, the same 10 steps, through cubeprim's ops and through burn's.
    let mut models = [start.clone(), start.clone()];
    let mut losses = [Vec::new(), Vec::new()];
    for (k, ops) in [Ops::Cubeprim, Ops::Burn].into_iter().enumerate() {
        let mut opt = SgdConfig::new().init::<B, Moe<B>>();
        for _ in 0..10 {
            let (m, l) = step(models[k].clone(), &mut opt, x.clone(), y.clone(), ops);
            models[k] = m;
            losses[k].push(l);
        }
    }
    let (a, b) = (params(&models[0]), params(&models[1]));
    let worst = a
        .iter()
        .zip(&b)
        .map(|(p, q)| (p - q).abs() / (1.0 + q.abs()))
        .fold(0.0f32, f32::max);
    println!(
        "after 10 steps: losses {:?} (cubeprim) and {:?} (burn)",
        losses[0], losses[1]
    );
    println!(
        "{} parameters, largest relative difference {worst:.2e}",
        a.len()
    );
    assert!(
        worst < 1e-4,
        "cubeprim's and burn's models differ after 10 steps: {worst}"
    );

    // Then the whole run through cubeprim's ops.
    let mut model = models[0].clone();
    let mut opt = SgdConfig::new().init::<B, Moe<B>>();
    let t0 = Instant::now();
    let first = losses[0][0];
    let mut last = first;
    for s in 10..steps {
        let (m, l) = step(model, &mut opt, x.clone(), y.clone(), Ops::Cubeprim);
        model = m;
        last = l;
        if (s + 1) % 50 == 0 {
            println!("step {:4}: loss {l:.5}", s + 1);
        }
    }
    println!(
        "loss {first:.5} -> {last:.5} over {steps} steps ({:.1} ms a step)",
        1e3 * t0.elapsed().as_secs_f64() / (steps - 10).max(1) as f64
    );
    assert!(
        last < 0.5 * first,
        "the loss did not fall: {first} -> {last}"
    );
    let _ = model.valid();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let steps = args
        .iter()
        .position(|a| a == "--steps")
        .and_then(|i| args.get(i + 1))
        .map(|s| s.parse().expect("--steps N"))
        .unwrap_or(300usize)
        .max(11);
    println!("backend: Autodiff<NdArray>");
    train::<burn::backend::Autodiff<burn::backend::NdArray>>(&Default::default(), steps);
}
