//! A Mamba-style selective state-space block on candle, its sequence loop replaced by
//! cubeprim's `linear_recurrence`.
//!
//! For an input `x: [batch, len, d]`, with `n` state channels per feature:
//!
//! ```text
//! delta = softplus(x · W_delta)           [batch, len, d]    the input-dependent step
//! A     = -exp(A_log)                     [d, n]
//! Bt    = x · W_B,  Ct = x · W_C           [batch, len, n]    the input-dependent projections
//! h[t]  = exp(delta[t] A) ⊙ h[t-1] + delta[t] Bt[t] x[t]    [batch, len, d, n]   (the scan)
//! y[t]  = Σ_n h[t] Ct[t] + D ⊙ x[t]        [batch, len, d]
//! ```
//!
//! The recurrence is what Mamba's CUDA kernel computes ("selective scan"); a candle author
//! without it writes a loop over `len` (one small op per step). This example runs both on the
//! same parameters: the outputs must agree to f32 tolerance, so must the gradients of the
//! loss `Σ y²` by every parameter (through candle's backprop, which records cubeprim's backward
//! pass: another linear recurrence), and it prints the time of each.
//!
//! ```text
//! cargo run --release --features candle --example candle_mamba [-- --len 1024]
//! cargo run --release --features candle-cuda --example candle_mamba -- --cuda   # on GPU 0
//! ```

use candle_core::{DType, Device, Result, Tensor, Var, D};
use cubeprim::candle::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::time::Instant;

const BATCH: usize = 2;
const FEATURES: usize = 16;
const STATE: usize = 8;

/// The block's parameters.
struct Mamba {
    w_delta: Var,
    w_b: Var,
    w_c: Var,
    a_log: Var,
    d_skip: Var,
}

impl Mamba {
    fn new(rng: &mut StdRng, device: &Device) -> Result<Self> {
        let mut uniform = |n: usize, lo: f32, hi: f32| -> Vec<f32> {
            (0..n).map(|_| rng.random_range(lo..hi)).collect()
        };
        let (d, n) = (FEATURES, STATE);
        let s = 1.0 / (d as f32).sqrt();
        Ok(Self {
            w_delta: Var::from_vec(uniform(d * d, -s, s), (d, d), device)?,
            w_b: Var::from_vec(uniform(d * n, -s, s), (d, n), device)?,
            w_c: Var::from_vec(uniform(d * n, -s, s), (d, n), device)?,
            // S4D-real's initialisation: A = -(1, 2, .., n) per feature.
            a_log: Var::from_vec(
                (0..d * n).map(|i| ((i % n) as f32 + 1.0).ln()).collect(),
                (d, n),
                device,
            )?,
            d_skip: Var::from_vec(uniform(d, 0.5, 1.5), d, device)?,
        })
    }

    fn vars(&self) -> [&Var; 5] {
        [
            &self.w_delta,
            &self.w_b,
            &self.w_c,
            &self.a_log,
            &self.d_skip,
        ]
    }

    /// The block on `x: [batch, len, d]`, the recurrence by `scan`.
    fn forward(&self, x: &Tensor, scan: Scan) -> Result<Tensor> {
        let (b, l, d) = x.dims3()?;
        let n = STATE;
        let flat = x.reshape((b * l, d))?;
        let delta = softplus(&flat.matmul(self.w_delta.as_tensor())?)?.reshape((b, l, d, 1))?;
        let bt = flat.matmul(self.w_b.as_tensor())?.reshape((b, l, 1, n))?;
        let ct = flat.matmul(self.w_c.as_tensor())?.reshape((b, l, 1, n))?;
        let a = self.a_log.as_tensor().exp()?.neg()?.reshape((1, 1, d, n))?;
        // The multipliers and the inputs of h[t] = da[t] h[t-1] + dbx[t], [b, l, d, n].
        let da = delta.broadcast_mul(&a)?.exp()?;
        let dbx = delta
            .broadcast_mul(&bt)?
            .broadcast_mul(&x.reshape((b, l, d, 1))?)?;
        let h = match scan {
            Scan::Cubeprim => da.linear_recurrence(&dbx, None, 1, false)?,
            Scan::Loop => {
                let mut h = Tensor::zeros((b, d, n), DType::F32, x.device())?;
                let mut steps = Vec::with_capacity(l);
                for t in 0..l {
                    h = (da.narrow(1, t, 1)?.squeeze(1)? * h)?
                        .add(&dbx.narrow(1, t, 1)?.squeeze(1)?)?;
                    steps.push(h.clone());
                }
                Tensor::stack(&steps, 1)?
            }
        };
        let y = h.broadcast_mul(&ct)?.sum(D::Minus1)?;
        y.add(&x.broadcast_mul(self.d_skip.as_tensor())?)
    }
}

/// `log(1 + exp(x))`, stable for large `x`.
fn softplus(x: &Tensor) -> Result<Tensor> {
    let big = x.gt(20.0)?;
    let soft = (x.clamp(f32::MIN, 20.0)?.exp()? + 1.0)?.log()?;
    big.where_cond(x, &soft)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scan {
    Cubeprim,
    Loop,
}

/// The output and the gradients of `Σ y²` by every parameter, and the time both took.
fn run(model: &Mamba, x: &Tensor, scan: Scan) -> Result<(Tensor, Vec<Tensor>, f64)> {
    let start = Instant::now();
    let y = model.forward(x, scan)?;
    let grads = y.sqr()?.sum_all()?.backward()?;
    let g: Vec<Tensor> = model
        .vars()
        .iter()
        .map(|v| grads.get(v.as_tensor()).expect("a gradient").clone())
        .collect();
    // Wait for the device (a GPU runs the ops asynchronously).
    y.sum_all()?.to_scalar::<f32>()?;
    Ok((y, g, start.elapsed().as_secs_f64() * 1e3))
}

/// The largest `|p - q| / (1 + |q|)`.
fn max_diff(p: &Tensor, q: &Tensor) -> Result<f32> {
    let rel = (p - q)?.abs()?.div(&(q.abs()? + 1.0)?)?;
    rel.flatten_all()?.max(0)?.to_scalar::<f32>()
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let len = args
        .iter()
        .position(|a| a == "--len")
        .and_then(|i| args.get(i + 1))
        .map_or(512, |v| v.parse().expect("--len N"));
    let device = if args.iter().any(|a| a == "--cuda") {
        Device::new_cuda(0)?
    } else {
        Device::Cpu
    };
    let mut rng = StdRng::seed_from_u64(3);
    let model = Mamba::new(&mut rng, &device)?;
    let xs: Vec<f32> = (0..BATCH * len * FEATURES)
        .map(|_| rng.random_range(-1.0..1.0))
        .collect();
    let x = Tensor::from_vec(xs, (BATCH, len, FEATURES), &device)?;

    // A first call of each compiles or warms up what it uses; the second is timed.
    run(&model, &x, Scan::Cubeprim)?;
    run(&model, &x, Scan::Loop)?;
    let (y, g, ms) = run(&model, &x, Scan::Cubeprim)?;
    let (y_loop, g_loop, ms_loop) = run(&model, &x, Scan::Loop)?;

    let names = ["W_delta", "W_B", "W_C", "A_log", "D"];
    let mut worst = max_diff(&y, &y_loop)?;
    println!(
        "selective scan, x [{BATCH}, {len}, {FEATURES}], state {STATE}, on {device:?}: output \
         differs by {worst:.1e} (relative)"
    );
    for ((name, p), q) in names.iter().zip(&g).zip(&g_loop) {
        let d = max_diff(p, q)?;
        println!("  gradient by {name:<7} differs by {d:.1e}");
        worst = worst.max(d);
    }
    println!(
        "forward + backward: linear_recurrence {ms:.1} ms, the loop over {len} steps \
         {ms_loop:.1} ms ({:.1}x)",
        ms_loop / ms
    );
    assert!(worst <= 1e-4, "the two blocks differ by {worst}");
    Ok(())
}
