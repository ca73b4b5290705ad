//! Mixture-of-experts token routing on candle tensors, with cubeprim's scans doing the
//! counting and the offsets; on the CPU, and on CUDA when built with `candle-cuda` and a GPU
//! is present. Every step is checked against a plain loop.
//!
//! ```text
//! cargo run --release --features candle --example candle_moe_routing
//! ```
//!
//! 1. top-k experts per token (candle's `arg_sort_last_dim` over the few experts of a token);
//! 2. one-hot of the `n = tokens × k` expert ids, `[n, experts]`, and its exclusive running
//!    sum down the assignments (`exclusive_scan_sum(0)`, a cubeprim scan along a strided
//!    axis): row `i` holds, for every expert, how many of the assignments before `i` chose it;
//! 3. per-expert counts (the histogram): the last row of that running sum plus the last one-hot;
//! 4. offsets: `exclusive_scan_sum` of the counts;
//! 5. a stable argsort of the expert ids (a counting sort): assignment `i` goes to slot
//!    `offsets[e_i] + running[i, e_i]`, scattered into the permutation;
//! 6. gather: each expert's tokens, contiguous, in token order.

use candle_core::{DType, Device, Result, Tensor, D};
use cubeprim::candle::ScanExt;

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
    let dev = logits.device();
    // 1. top-k experts of each token.
    let topk = logits
        .arg_sort_last_dim(false)?
        .narrow(D::Minus1, 0, TOP_K)?
        .contiguous()?;
    let experts = topk.flatten_all()?; // [n] u32
    let n = experts.dim(0)?;
    // 2. one-hot [n, E] and its running sum down the assignments.
    let ids = Tensor::arange(0u32, EXPERTS as u32, dev)?;
    let one_hot = experts
        .unsqueeze(1)?
        .broadcast_eq(&ids.unsqueeze(0)?)?
        .to_dtype(DType::U32)?;
    let running = one_hot.exclusive_scan_sum(0)?;
    // 3. histogram: the last running row plus the last assignment.
    let counts = (running.get(n - 1)? + one_hot.get(n - 1)?)?;
    // 4. offsets of each expert's segment.
    let offsets = counts.exclusive_scan_sum(0)?;
    // 5. stable counting sort: slot of each assignment, scattered into the permutation.
    let rank = running.gather(&experts.unsqueeze(1)?, 1)?.squeeze(1)?;
    let slot = (offsets.index_select(&experts, 0)? + rank)?;
    let order = Tensor::zeros(n, DType::U32, dev)?.scatter(
        &slot,
        &Tensor::arange(0u32, n as u32, dev)?,
        0,
    )?;
    // 6. gather the tokens (assignment / k) in expert order.
    let token = (order.to_dtype(DType::F32)? / TOP_K as f64)?
        .floor()?
        .to_dtype(DType::U32)?;
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
