//! Nucleus (top-p) sampling over a batch of logits `[batch, vocab]`, on the default device:
//! softmax → row-wise sort with indices (descending) → cumsum → cut at `p` → sample.
//!
//! The same pipeline runs with burn's built-ins (`sort_descending_with_indices`, `cumsum`)
//! and with cubeprim's (`prim_sort_descending_with_indices`, `prim_cumsum`); everything else
//! is the same burn code. The two must agree (sorted probabilities bit for bit, the sampled
//! tokens' probabilities exactly; equal probabilities may be ordered differently, so token ids
//! can differ only between tokens of equal probability), and both are timed.
//!
//! ```text
//! cargo run --release --features cuda,burn --example burn_top_p [-- --batch 32 --vocab 32000 --p 0.9]
//! cargo run --release --features burn --example burn_top_p   # wgpu
//! ```
//!
//! The device: with `--features cuda`, burn's `Cuda` backend where a CUDA device is found;
//! without it, burn's `Wgpu` where a wgpu adapter is found; else `NdArray` on the CPU. One GPU
//! backend per build, as an application would pick: each backend type compiles its own copy of
//! burn's and cubeprim's launches.

use burn::tensor::activation::softmax;
use burn::tensor::backend::Backend;
use burn::tensor::{Distribution, Int, Tensor};
use cubeprim::burn::prelude::*;
use std::time::Instant;

/// A descending row-wise sort with indices.
type SortFn<B> = fn(Tensor<B, 2>) -> (Tensor<B, 2>, Tensor<B, 2, Int>);

/// The sort and the cumsum a pipeline uses.
struct Ops<B: Backend> {
    sort_desc: SortFn<B>,
    cumsum: fn(Tensor<B, 2>) -> Tensor<B, 2>,
}

/// What a pipeline returns: sorted probabilities, their token ids, the sampled tokens.
struct Sampled<B: Backend> {
    sorted: Tensor<B, 2>,
    tokens: Tensor<B, 2, Int>,
}

/// Top-p sampling: `u` (`[batch, 1]`, uniform in [0, 1)) picks the token.
fn top_p<B: Backend>(logits: Tensor<B, 2>, u: Tensor<B, 2>, p: f32, ops: &Ops<B>) -> Sampled<B> {
    let [batch, vocab] = logits.dims();
    let probs = softmax(logits, 1);
    let (sorted, ids) = (ops.sort_desc)(probs);
    let cum = (ops.cumsum)(sorted.clone());
    // Keep a token while the mass before it is below p (the first one always).
    let cut = (cum - sorted.clone()).greater_equal_elem(p);
    let kept = sorted.clone().mask_fill(cut, 0.0);
    let kept_cum = (ops.cumsum)(kept);
    let total = kept_cum.clone().slice([0..batch, vocab - 1..vocab]);
    let target = (u * total).expand([batch, vocab]);
    // The first position whose running kept mass exceeds the target.
    let pos = kept_cum
        .lower_equal(target)
        .int()
        .sum_dim(1)
        .clamp_max(vocab as i64 - 1);
    Sampled {
        sorted,
        tokens: ids.gather(1, pos),
    }
}

fn median<B: Backend>(dev: &B::Device, reps: usize, mut f: impl FnMut() -> Sampled<B>) -> f64 {
    drop(f());
    B::sync(dev).expect("sync");
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            let out = f();
            B::sync(dev).expect("sync");
            let e = s.elapsed().as_secs_f64();
            drop(out);
            e
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

fn run<B: PrimBackend>(dev: &B::Device, name: &str, batch: usize, vocab: usize, p: f32) {
    println!("# top-p sampling on {name}: batch {batch}, vocab {vocab}, p {p}");
    let logits = Tensor::<B, 2>::random([batch, vocab], Distribution::Normal(0.0, 3.0), dev);
    let u = Tensor::<B, 2>::random([batch, 1], Distribution::Uniform(0.0, 1.0), dev);
    let burn_ops = Ops::<B> {
        sort_desc: |x| x.sort_descending_with_indices(1),
        cumsum: |x| x.cumsum(1),
    };
    let prim_ops = Ops::<B> {
        sort_desc: |x| x.prim_sort_descending_with_indices(1),
        cumsum: |x| x.prim_cumsum(1),
    };
    let a = top_p(logits.clone(), u.clone(), p, &burn_ops);
    let b = top_p(logits.clone(), u.clone(), p, &prim_ops);

    // Agreement.
    let sorted_a: Vec<f32> = a.sorted.into_data().convert::<f32>().to_vec().unwrap();
    let sorted_b: Vec<f32> = b.sorted.into_data().convert::<f32>().to_vec().unwrap();
    let sorted_same = sorted_a
        .iter()
        .zip(&sorted_b)
        .filter(|(x, y)| x.to_bits() == y.to_bits())
        .count();
    let probs = softmax(logits.clone(), 1);
    let pa: Vec<f32> = probs
        .clone()
        .gather(1, a.tokens.clone())
        .into_data()
        .convert::<f32>()
        .to_vec()
        .unwrap();
    let pb: Vec<f32> = probs
        .gather(1, b.tokens.clone())
        .into_data()
        .convert::<f32>()
        .to_vec()
        .unwrap();
    let ta: Vec<i64> = a.tokens.into_data().convert::<i64>().to_vec().unwrap();
    let tb: Vec<i64> = b.tokens.into_data().convert::<i64>().to_vec().unwrap();
    let same_tokens = ta.iter().zip(&tb).filter(|(x, y)| x == y).count();
    let same_probs = pa
        .iter()
        .zip(&pb)
        .filter(|(x, y)| x.to_bits() == y.to_bits())
        .count();
    println!(
        "sorted probabilities identical: {sorted_same}/{}; sampled tokens identical: \
         {same_tokens}/{batch}; sampled tokens of identical probability: {same_probs}/{batch}",
        sorted_a.len()
    );
    println!("first tokens (burn):     {:?}", &ta[..ta.len().min(8)]);
    println!("first tokens (cubeprim): {:?}", &tb[..tb.len().min(8)]);
    let agree = sorted_same == sorted_a.len() && same_probs == batch;

    // Timing: the whole pipeline, median of 10 after a warm-up, synced.
    let reps = 10;
    let t_burn = median::<B>(dev, reps, || top_p(logits.clone(), u.clone(), p, &burn_ops));
    let t_prim = median::<B>(dev, reps, || top_p(logits.clone(), u.clone(), p, &prim_ops));
    println!(
        "pipeline time (median of {reps}): burn built-ins {:.3} ms, cubeprim {:.3} ms, {:.1}x",
        t_burn * 1e3,
        t_prim * 1e3,
        t_burn / t_prim
    );
    if !agree {
        eprintln!("the two pipelines disagree");
        std::process::exit(1);
    }
    println!("the two pipelines agree");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str, default: f64| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    };
    let batch = arg("--batch", 32.0) as usize;
    let vocab = arg("--vocab", 32000.0) as usize;
    let p = arg("--p", 0.9) as f32;
    match cubeprim::device::best_backend() {
        #[cfg(feature = "cuda")]
        cubeprim::device::Backend::Cuda => run::<burn::backend::Cuda>(
            &Default::default(),
            "burn::backend::Cuda (fusion)",
            batch,
            vocab,
            p,
        ),
        #[cfg(all(feature = "wgpu", not(feature = "cuda")))]
        cubeprim::device::Backend::Wgpu => run::<burn::backend::Wgpu>(
            &Default::default(),
            "burn::backend::Wgpu (fusion)",
            batch,
            vocab,
            p,
        ),
        _ => run::<burn::backend::NdArray>(
            &Default::default(),
            "burn::backend::NdArray",
            batch,
            vocab,
            p,
        ),
    }
}
