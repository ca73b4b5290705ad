//! Mixture-of-experts token routing on candle tensors with cubeprim's ops, on the CPU, and on
//! CUDA when built with `candle-cuda` and a GPU is present. Every step is checked against a
//! plain loop.
//!
//! ```text
//! cargo run --release --features candle --example candle_moe_routing
//! cargo run --release --features candle-cuda --example candle_moe_routing   # + CUDA
//! ```
//!
//! 1. top-k experts per token: `top_k` of the router logits (largest first, ties to the lower
//!    expert id);
//! 2. a stable argsort of the `n = tokens × k` expert ids (`arg_sort_stable`): the assignments
//!    grouped by expert, in token order within each expert;
//! 3. per-expert counts: `histogram` of the expert ids;
//! 4. offsets of each expert's segment: `exclusive_scan_sum` of the counts;
//! 5. gather: each expert's tokens, contiguous (`index_select` of token = assignment / k).

use candle_core::{Device, Result, Tensor, D};
use cubeprim::candle::prelude::*;

const TOKENS: usize = 4096;
const EXPERTS: usize = 64;
const TOP_K: usize = 2;
const HIDDEN: usize = 32;

/// What routing produces.
struct Routing {
    /// Expert of each assignment (`n = tokens × k`).
    experts: Vec<u32>,
    counts: Vec<u32>,
    offsets: Vec<u32>,
    /// Assignment ids sorted by expert, stable.
    order: Vec<u32>,
    /// The hidden states of the tokens in `order`, `[n, HIDDEN]`.
    gathered: Vec<f32>,
}

fn route(logits: &Tensor, hidden: &Tensor) -> Result<Routing> {
    // 1. top-k experts of each token.
    let (_, topk) = logits.top_k(TOP_K, D::Minus1)?;
    let experts = topk.flatten_all()?; // [n] u32
                                       // 2. the assignments grouped by expert (stable: token order within an expert).
    let order = experts.arg_sort_stable(0, true)?;
    // 3. tokens per expert.
    let counts = experts.histogram(EXPERTS)?;
    // 4. where each expert's segment starts.
    let offsets = counts.exclusive_scan_sum(0)?;
    // 5. the tokens' hidden states in expert order (u32 division: assignment / k).
    let k = Tensor::full(TOP_K as u32, (), logits.device())?;
    let token = order.broadcast_div(&k)?;
    let gathered = hidden.index_select(&token, 0)?;
    Ok(Routing {
        experts: experts.to_vec1()?,
        counts: counts.to_vec1()?,
        offsets: offsets.to_vec1()?,
        order: order.to_vec1()?,
        gathered: gathered.flatten_all()?.to_vec1()?,
    })
}

/// The same routing as plain loops over host data.
fn check(r: &Routing, logits: &[f32], hidden: &[f32]) {
    let n = TOKENS * TOP_K;
    for t in 0..TOKENS {
        let row = &logits[t * EXPERTS..(t + 1) * EXPERTS];
        let mut idx: Vec<usize> = (0..EXPERTS).collect();
        idx.sort_by(|&a, &b| row[b].total_cmp(&row[a]));
        let got = &r.experts[t * TOP_K..(t + 1) * TOP_K];
        let want: Vec<u32> = idx[..TOP_K].iter().map(|&e| e as u32).collect();
        assert_eq!(got, want, "top-k of token {t}");
    }
    let mut counts = vec![0u32; EXPERTS];
    for &e in &r.experts {
        counts[e as usize] += 1;
    }
    assert_eq!(r.counts, counts, "per-expert counts");
    let offsets: Vec<u32> = counts
        .iter()
        .scan(0, |acc, &c| {
            let o = *acc;
            *acc += c;
            Some(o)
        })
        .collect();
    assert_eq!(r.offsets, offsets, "offsets");
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_by_key(|&i| r.experts[i as usize]); // stable
    assert_eq!(r.order, order, "stable argsort of the expert ids");
    for (slot, &a) in order.iter().enumerate() {
        let t = a as usize / TOP_K;
        assert_eq!(
            &r.gathered[slot * HIDDEN..(slot + 1) * HIDDEN],
            &hidden[t * HIDDEN..(t + 1) * HIDDEN],
            "gathered row {slot}"
        );
    }
}

fn run(dev: &Device, logits: &[f32], hidden: &[f32]) -> Result<()> {
    let l = Tensor::from_slice(logits, (TOKENS, EXPERTS), dev)?;
    let h = Tensor::from_slice(hidden, (TOKENS, HIDDEN), dev)?;
    let start = std::time::Instant::now();
    let r = route(&l, &h)?;
    let took = start.elapsed();
    check(&r, logits, hidden);
    let busiest = r.counts.iter().max().unwrap_or(&0);
    println!(
        "{dev:?}: routed {TOKENS} tokens × top-{TOP_K} to {EXPERTS} experts in {:.2} ms \
         (busiest expert: {busiest} assignments); matches the plain loop",
        took.as_secs_f64() * 1e3
    );
    Ok(())
}

fn main() -> Result<()> {
    // Deterministic pseudo-random router logits and hidden states.
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    };
    let logits: Vec<f32> = (0..TOKENS * EXPERTS).map(|_| next()).collect();
    let hidden: Vec<f32> = (0..TOKENS * HIDDEN).map(|_| next()).collect();
    run(&Device::Cpu, &logits, &hidden)?;
    #[cfg(feature = "candle-cuda")]
    match Device::new_cuda(0) {
        Ok(dev) => run(&dev, &logits, &hidden)?,
        Err(e) => println!("no CUDA device: {e}"),
    }
    Ok(())
}
