//! Training through cubeprim's candle ops: a small mixture-of-experts sequence model whose gate
//! picks the top-2 of 8 experts per step with `top_k` and whose read-out pools the sequence
//! with a running mean (`scan_sum`), trained with SGD on synthetic data (targets from a teacher
//! model of the same shape). candle-core only: the parameters are `Var`s, the gradients come
//! from `loss.backward()` (cubeprim's ops record their backward passes) and the SGD step is
//! written out.
//!
//! The same model written with candle's built-ins (`cumsum`, and top-k as
//! `arg_sort_last_dim(false)` + `narrow` + `gather`: candle has no top-k) starts from the same
//! parameters; after 10 steps both must hold the same parameters (to f32 tolerance), and the
//! loss must fall over the run. The mirror of `burn_train_moe` (same model, data and checks).
//!
//! ```text
//! cargo run --release --features candle --example candle_train_moe [-- --steps 300]
//! cargo run --release --features candle-cuda --example candle_train_moe -- --cuda   # on GPU 0
//! ```
//!
//! The CPU by default; `--cuda` (feature `candle-cuda`) trains on `Device::new_cuda(0)`.

use candle_core::{DType, Device, Result, Tensor, Var, D};
use cubeprim::candle::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::time::Instant;

const FEATURES: usize = 16;
const HIDDEN: usize = 16;
const EXPERTS: usize = 8;
const TOP: usize = 2;
const LR: f64 = 0.05;

/// `x · w + b`, `w`: `[in, out]` (burn's layout), `x`: `[n, in]`.
struct Linear {
    w: Var,
    b: Var,
}

impl Linear {
    /// burn's default: weight and bias uniform in ±1/√fan_in.
    fn new(rng: &mut StdRng, d_in: usize, d_out: usize, device: &Device) -> Result<Self> {
        let bound = 1.0 / (d_in as f32).sqrt();
        let mut uniform =
            |n: usize| -> Vec<f32> { (0..n).map(|_| rng.random_range(-bound..bound)).collect() };
        Ok(Self {
            w: Var::from_vec(uniform(d_in * d_out), (d_in, d_out), device)?,
            b: Var::from_vec(uniform(d_out), d_out, device)?,
        })
    }

    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.matmul(self.w.as_tensor())?
            .broadcast_add(self.b.as_tensor())
    }
}

/// The model: a gate, the experts and a read-out.
struct Moe {
    gate: Linear,
    experts: Vec<Linear>,
    head: Linear,
}

/// Which top-k and cumsum the forward pass uses.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Ops {
    Cubeprim,
    Candle,
}

impl Moe {
    fn new(rng: &mut StdRng, device: &Device) -> Result<Self> {
        Ok(Self {
            gate: Linear::new(rng, FEATURES, EXPERTS, device)?,
            experts: (0..EXPERTS)
                .map(|_| Linear::new(rng, FEATURES, HIDDEN, device))
                .collect::<Result<_>>()?,
            head: Linear::new(rng, HIDDEN, 1, device)?,
        })
    }

    /// Every parameter, in order: the gate's, the experts', the head's.
    fn vars(&self) -> Vec<&Var> {
        std::iter::once(&self.gate)
            .chain(&self.experts)
            .chain(std::iter::once(&self.head))
            .flat_map(|l| [&l.w, &l.b])
            .collect()
    }

    /// A copy with parameters of its own.
    fn duplicate(&self) -> Result<Self> {
        let copy = |l: &Linear| -> Result<Linear> {
            Ok(Linear {
                w: Var::from_tensor(&l.w.as_detached_tensor())?,
                b: Var::from_tensor(&l.b.as_detached_tensor())?,
            })
        };
        Ok(Self {
            gate: copy(&self.gate)?,
            experts: self.experts.iter().map(copy).collect::<Result<_>>()?,
            head: copy(&self.head)?,
        })
    }

    /// `x`: `[batch, steps, FEATURES]` → `[batch, steps, 1]`.
    fn forward(&self, x: &Tensor, ops: Ops) -> Result<Tensor> {
        let (batch, steps, _) = x.dims3()?;
        let n = batch * steps;
        let x = x.reshape((n, FEATURES))?;
        let logits = self.gate.forward(&x)?; // [n, EXPERTS]
        let (top, idx) = match ops {
            Ops::Cubeprim => logits.top_k(TOP, D::Minus1)?,
            Ops::Candle => {
                let idx = logits
                    .arg_sort_last_dim(false)?
                    .narrow(D::Minus1, 0, TOP)?
                    .contiguous()?;
                (logits.gather(&idx, D::Minus1)?, idx)
            }
        };
        // Softmax over the picked logits (the shift by the row's max is a constant to it).
        let top = top.broadcast_sub(&top.max_keepdim(D::Minus1)?.detach())?;
        let e = top.exp()?;
        let weights = e.broadcast_div(&e.sum_keepdim(D::Minus1)?)?; // [n, TOP]
        let all = self
            .experts
            .iter()
            .map(|ex| ex.forward(&x))
            .collect::<Result<Vec<_>>>()?;
        let all = Tensor::stack(&all, 1)?; // [n, EXPERTS, HIDDEN]
        let idx = idx
            .unsqueeze(2)?
            .broadcast_as((n, TOP, HIDDEN))?
            .contiguous()?;
        let picked = all.gather(&idx, 1)?; // [n, TOP, HIDDEN]
        let mixed = picked
            .broadcast_mul(&weights.unsqueeze(2)?)?
            .sum(1)?
            .reshape((batch, steps, HIDDEN))?;
        let running = match ops {
            Ops::Cubeprim => mixed.scan_sum(1)?,
            Ops::Candle => mixed.cumsum(1)?,
        };
        let count = Tensor::arange(1u32, steps as u32 + 1, x.device())?
            .to_dtype(DType::F32)?
            .reshape((1, steps, 1))?;
        let mean = running.broadcast_div(&count)?.reshape((n, HIDDEN))?;
        self.head.forward(&mean)?.reshape((batch, steps, 1))
    }
}

/// One SGD step on `(x, y)`; returns the loss.
fn step(model: &Moe, x: &Tensor, y: &Tensor, ops: Ops) -> Result<f32> {
    let loss = model.forward(x, ops)?.sub(y)?.sqr()?.mean_all()?;
    let grads = loss.backward()?;
    for v in model.vars() {
        let g = grads
            .get(v.as_tensor())
            .expect("every parameter has a gradient");
        v.set(&v.as_tensor().sub(&(g * LR)?)?)?;
    }
    loss.to_scalar::<f32>()
}

/// Every parameter of the model, flattened in order.
fn params(m: &Moe) -> Result<Vec<f32>> {
    let mut out = Vec::new();
    for v in m.vars() {
        out.extend(v.as_tensor().flatten_all()?.to_vec1::<f32>()?);
    }
    Ok(out)
}

/// Standard normal samples (Box–Muller).
fn normal(rng: &mut StdRng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| {
            let u: f32 = 1.0 - rng.random::<f32>(); // (0, 1]
            let v: f32 = rng.random();
            (-2.0 * u.ln()).sqrt() * (std::f32::consts::TAU * v).cos()
        })
        .collect()
}

fn train(device: &Device, steps: usize) -> Result<()> {
    let mut rng = StdRng::seed_from_u64(7);
    let (batch, len) = (32, 24);
    let x = Tensor::from_vec(
        normal(&mut rng, batch * len * FEATURES),
        (batch, len, FEATURES),
        device,
    )?;
    let teacher = Moe::new(&mut rng, device)?;
    let y = teacher.forward(&x, Ops::Candle)?.detach();
    let start = Moe::new(&mut rng, device)?;

    // The same start, the same 10 steps, through cubeprim's ops and through candle's.
    let models = [start.duplicate()?, start];
    let mut losses = [Vec::new(), Vec::new()];
    for (k, ops) in [Ops::Cubeprim, Ops::Candle].into_iter().enumerate() {
        for _ in 0..10 {
            losses[k].push(step(&models[k], &x, &y, ops)?);
        }
    }
    let (a, b) = (params(&models[0])?, params(&models[1])?);
    let (abs, rel) = a.iter().zip(&b).fold((0.0f32, 0.0f32), |(m, r), (p, q)| {
        let d = (p - q).abs();
        (m.max(d), r.max(d / (1.0 + q.abs())))
    });
    println!(
        "after 10 steps: losses {:?} (cubeprim) and {:?} (candle)",
        losses[0], losses[1]
    );
    println!(
        "{} parameters, largest difference {abs:.2e} (relative {rel:.2e})",
        a.len()
    );
    // Observed ~1e-8 on the CPU (the scans sum in another order); a 0.1% error in one
    // parameter's gradient gives ~8e-5.
    assert!(
        rel < 1e-5,
        "cubeprim's and candle's models differ after 10 steps: {abs} ({rel} relative)"
    );

    // Then the whole run through cubeprim's ops.
    let model = &models[0];
    let t0 = Instant::now();
    let first = losses[0][0];
    let mut last = first;
    for s in 10..steps {
        last = step(model, &x, &y, Ops::Cubeprim)?;
        if (s + 1) % 50 == 0 {
            println!("step {:4}: loss {last:.5}", s + 1);
        }
    }
    println!(
        "loss {first:.5} -> {last:.5} over {steps} steps ({:.1} ms a step)",
        1e3 * t0.elapsed().as_secs_f64() / (steps - 10).max(1) as f64
    );
    assert!(
        last < 0.25 * first,
        "the loss did not fall: {first} -> {last}"
    );
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let steps = args
        .iter()
        .position(|a| a == "--steps")
        .and_then(|i| args.get(i + 1))
        .map(|s| s.parse().expect("--steps N"))
        .unwrap_or(300usize)
        .max(11);
    let device = if args.iter().any(|a| a == "--cuda") {
        #[cfg(feature = "candle-cuda")]
        {
            Device::new_cuda(0)?
        }
        #[cfg(not(feature = "candle-cuda"))]
        panic!("--cuda needs the feature `candle-cuda`")
    } else {
        Device::Cpu
    };
    println!("device: {device:?}");
    train(&device, steps)
}
