//! Long-run test (issue 35): many calls that cycle through every op family on ONE
//! [`Workspace`] (the generator of [`crate::fuzz`], tensors of at most [`MAX_ELEMS`] elements,
//! so the workspace grows with the larger calls and is reused by every other), and through the
//! burn adapter (`CubeBackend` and `Fusion<CubeBackend>` of the suite's runtime, and `NdArray`)
//! and the candle adapter (CPU device), every result checked against `cubeprim::cpu`.
//!
//! Device memory must stay bounded. After a warm-up (each burn method once at the largest
//! shape the adapter calls use, so the adapter's own workspace reaches its size, then the first
//! fifth of the calls, at least two rounds of every slot) and at the end, after a sync,
//! `memory_usage()` of the client (this thread's stream, where every call of the test runs) is
//! read:
//! * **in use**: every output of every call has been dropped by then, so what stays in use is
//!   the workspace, the small buffers cubeprim keeps (the workspace's layout and spare buffer,
//!   the burn adapter's workspace) and the backends' caches. The workspace may grow after the
//!   warm-up (a larger call than any before; it is bounded by the largest call), so the bound is
//!   on the rest: `in_use - workspace` at the end may exceed its warm-up value by at most
//!   [`IN_USE_SLACK`] (a layout of another rank is a few words more). The smallest buffer a call
//!   allocates is 16 bytes (a count), so a leak of one per call breaks the bound 256 calls after
//!   the warm-up; `a_leak_is_caught` checks that a leak fails the test.
//! * **reserved**: the pool keeps pages for the sizes it has seen; once every size class has
//!   been seen it reuses them. At the end, reserved may exceed its warm-up value by at most
//!   twice the workspace's growth since (a grown workspace is a fresh allocation, and the page
//!   of the old one may stay reserved) plus [`RESERVED_SLACK`].
//!
//! `mixed_calls_stay_correct_and_bounded` runs a CI budget; `hundred_thousand_calls` (ignored;
//! `CUBEPRIM_LONGRUN_CALLS` overrides the count, `CUBEPRIM_LONGRUN_SEED` the seed,
//! `CUBEPRIM_LONGRUN_POOL=p` cycles through `p` cases per slot) is the run for the device:
//! `suite --ignored longrun::hundred_thousand_calls`. On CUDA nearly every fresh case compiles
//! a kernel (NVRTC, about 1 s a call: 2.8 calls/s after 1 400 calls on an H100), so the
//! 100 000-call run there cycles through a pool of cases.

use crate::common::{client, rng, Client, R};
use crate::fuzz::{self, FAMILIES};
use cubeprim::Workspace;
use rand::rngs::StdRng;
use rand::Rng;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

/// The most elements of a tensor of one call: tile edges up to 8 193 and some longer rows
/// (device-wide sorts, look-back scans, multi-tile compaction), small enough for 100 000 calls.
pub const MAX_ELEMS: usize = 20_000;

/// Calls of the CI test.
pub const CI_CALLS: u64 = 600;

/// The workspace's size from the start (see [`mixed_calls`]).
const WORKSPACE_BYTES: usize = 64 << 20;

/// How much `in_use - workspace` may grow after the warm-up (see the module's doc).
pub const IN_USE_SLACK: u64 = 4 << 10;

/// How much `reserved` may grow after the warm-up, besides twice the workspace's growth.
pub const RESERVED_SLACK: u64 = 32 << 20;

/// What the slots of the cycle run: each op family through cubeprim's own API, then the
/// adapters.
fn slots() -> Vec<&'static str> {
    let mut s: Vec<&'static str> = FAMILIES.iter().map(|f| f.0).collect();
    #[cfg(all(feature = "burn-fusion", feature = "burn-ndarray"))]
    s.extend(["burn CubeBackend", "burn Fusion", "burn NdArray"]);
    #[cfg(feature = "candle")]
    s.push("candle");
    s
}

/// Device memory of this thread's stream after a sync, and the workspace's bytes.
#[derive(Clone, Copy)]
pub struct Usage {
    pub in_use: u64,
    pub reserved: u64,
    pub allocs: u64,
    pub workspace: u64,
}

impl std::fmt::Debug for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "in use {} B ({} allocations), reserved {} B, workspace {} B",
            self.in_use, self.allocs, self.reserved, self.workspace
        )
    }
}

fn usage(c: &Client, ws: &Workspace<R>) -> Result<Usage, String> {
    cubecl::future::block_on(c.sync()).map_err(|e| format!("sync: {e:?}"))?;
    let m = c
        .memory_usage()
        .map_err(|e| format!("memory_usage: {e:?}"))?;
    Ok(Usage {
        in_use: m.bytes_in_use,
        reserved: m.bytes_reserved,
        allocs: m.number_allocs,
        workspace: ws.bytes() as u64,
    })
}

/// The seed of call `i` of a run of `seed`.
fn call_seed(seed: u64, i: u64) -> u64 {
    seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i
}

/// `n_calls` calls cycling through [`slots`], every result checked; then the memory bounds.
/// Returns a summary line.
pub fn mixed_calls(c: &Client, n_calls: u64, seed: u64) -> Result<String, String> {
    mixed_calls_leaking(c, n_calls, seed, 0, None)
}

/// The case of call `i`: its own (`pool == None`), or, with a pool of `p` cases per slot, the
/// `(i / slots) % p`-th case of its slot. A pool bounds how many distinct kernels the run
/// compiles (on CUDA nearly every fresh case compiles one: about 1 s a call), so that the
/// calls repeat the cases a long-lived process repeats; every result is still checked.
fn case_of(i: u64, slots: u64, pool: Option<u64>) -> u64 {
    match pool {
        None => i,
        Some(p) => (i / slots) % p.max(1) * slots + i % slots,
    }
}

/// [`mixed_calls`], leaking a device buffer of `leak` bytes per call when `leak > 0` (the check
/// that the bound catches a leak).
fn mixed_calls_leaking(
    c: &Client,
    n_calls: u64,
    seed: u64,
    leak: usize,
    pool: Option<u64>,
) -> Result<String, String> {
    let slots = slots();
    // The workspace starts at its steady size (the largest any call needs is below 40 MiB on
    // an H100's Vulkan driver), so that the checks see the steady state: a workspace that
    // doubles late in the run leaves its old buffer to cubecl's pool, whose pages on a
    // discrete GPU are far larger than its growth (reserved 42 MB at the warm-up, 713 MB after
    // a late growth from 2.9 to 39 MB in 600 calls on the H100's Vulkan driver).
    let mut ws = Workspace::<R>::with_capacity(c, WORKSPACE_BYTES);
    let warm = (n_calls / 5).max(2 * slots.len() as u64).min(n_calls);
    let verbose = n_calls >= 10_000 || std::env::var("CUBEPRIM_LONGRUN_VERBOSE").is_ok();
    let t0 = Instant::now();
    #[cfg(all(feature = "burn-fusion", feature = "burn-ndarray"))]
    {
        via_burn::warm::<via_burn::Cube>(&Default::default())?;
        via_burn::warm::<via_burn::Fused>(&Default::default())?;
    }
    if verbose {
        eprintln!(
            "longrun: adapters warmed up in {:.1} s",
            t0.elapsed().as_secs_f64()
        );
    }
    let mut at_warm = None;
    let mut peak_reserved = 0u64;
    // Seconds spent in each slot, for the progress lines: a run cut short by a time limit
    // still shows its rate and where the time went.
    let mut spent = vec![0f64; slots.len()];
    let mut last_line = Instant::now();
    for i in 0..n_calls {
        let k = (i % slots.len() as u64) as usize;
        let slot = slots[k];
        let s = call_seed(seed, case_of(i, slots.len() as u64, pool));
        if leak > 0 {
            std::mem::forget(c.empty(leak));
        }
        let t_call = Instant::now();
        let r = catch_unwind(AssertUnwindSafe(|| match slot {
            #[cfg(all(feature = "burn-fusion", feature = "burn-ndarray"))]
            "burn CubeBackend" => via_burn::call::<via_burn::Cube>(&Default::default(), s),
            #[cfg(all(feature = "burn-fusion", feature = "burn-ndarray"))]
            "burn Fusion" => via_burn::call::<via_burn::Fused>(&Default::default(), s),
            #[cfg(all(feature = "burn-fusion", feature = "burn-ndarray"))]
            "burn NdArray" => via_burn::call::<via_burn::Cpu>(&Default::default(), s),
            #[cfg(feature = "candle")]
            "candle" => via_candle::call(s),
            fam => fuzz::case_in(c, &mut ws, s, Some(fam), MAX_ELEMS).map(|_| ()),
        }))
        .unwrap_or_else(|p| Err(format!("panic: {}", fuzz::panic_message(&*p))));
        spent[k] += t_call.elapsed().as_secs_f64();
        r.map_err(|e| {
            format!(
                "call {i} of mixed_calls(seed {seed}), {slot} (a family's call replays with \
                 CUBEPRIM_FUZZ_SEED={s} CUBEPRIM_FUZZ_CASES=1 CUBEPRIM_FUZZ_FAMILY=<family> \
                 CUBEPRIM_FUZZ_MAX={MAX_ELEMS} suite --ignored fuzz::soak): {e}"
            )
        })?;
        if i + 1 == warm {
            at_warm = Some(usage(c, &ws)?);
        }
        let checkpoint = (i + 1) % (n_calls / 50).max(1) == 0;
        if checkpoint {
            let u = usage(c, &ws)?;
            peak_reserved = peak_reserved.max(u.reserved);
            if verbose {
                eprintln!(
                    "longrun: {} calls, {:.0} s, {u:?}",
                    i + 1,
                    t0.elapsed().as_secs_f64()
                );
            }
        }
        if verbose && (checkpoint || last_line.elapsed().as_secs() >= 30) {
            last_line = Instant::now();
            let rounds = (i + 1) as f64 / slots.len() as f64;
            let per_slot: Vec<String> = slots
                .iter()
                .zip(&spent)
                .map(|(name, t)| format!("{name} {:.0}", 1e3 * t / rounds))
                .collect();
            eprintln!(
                "longrun: {} calls, {:.1} calls/s; ms per call by slot: {}",
                i + 1,
                (i + 1) as f64 / t0.elapsed().as_secs_f64(),
                per_slot.join(", ")
            );
        }
    }
    let end = usage(c, &ws)?;
    let Some(w) = at_warm else {
        return Ok(format!("longrun: {n_calls} calls (no warm-up), {end:?}"));
    };
    let summary = format!(
        "longrun: {n_calls} calls in {:.1} s; after {warm} (warm-up): {w:?}; end: {end:?}; \
         peak reserved at the checkpoints {peak_reserved}",
        t0.elapsed().as_secs_f64()
    );
    let growth = end.workspace.saturating_sub(w.workspace);
    let rest_w = w.in_use.saturating_sub(w.workspace);
    let rest_e = end.in_use.saturating_sub(end.workspace);
    if rest_e > rest_w + IN_USE_SLACK {
        return Err(format!(
            "{summary}: in use besides the workspace grew from {rest_w} to {rest_e} bytes \
             (bound: + {IN_USE_SLACK})"
        ));
    }
    if end.reserved > w.reserved + 2 * growth + RESERVED_SLACK {
        return Err(format!(
            "{summary}: reserved grew from {} to {} bytes (bound: + 2 x {growth} + \
             {RESERVED_SLACK})",
            w.reserved, end.reserved
        ));
    }
    Ok(summary)
}

#[test]
fn mixed_calls_stay_correct_and_bounded() {
    let Some(c) = client() else { return };
    match mixed_calls(&c, CI_CALLS, 1) {
        Ok(s) => eprintln!("{s}"),
        Err(e) => panic!("{e}"),
    }
}

/// The bound can fail: 4 KiB leaked per call break it within a few calls after the warm-up.
#[test]
fn a_leak_is_caught() {
    let Some(c) = client() else { return };
    let n = 2 * slots().len() as u64 + 8;
    match mixed_calls_leaking(&c, n, 3, 4096, None) {
        Ok(s) => panic!("a leak of 4 KiB per call passed: {s}"),
        Err(e) => assert!(e.contains("in use besides the workspace grew"), "{e}"),
    }
}

#[test]
#[ignore]
fn hundred_thousand_calls() {
    let Some(c) = client() else { return };
    let n = fuzz::env_u64("CUBEPRIM_LONGRUN_CALLS", 100_000);
    let seed = fuzz::env_u64("CUBEPRIM_LONGRUN_SEED", 2);
    let pool = std::env::var("CUBEPRIM_LONGRUN_POOL")
        .ok()
        .map(|_| fuzz::env_u64("CUBEPRIM_LONGRUN_POOL", 0));
    match mixed_calls_leaking(&c, n, seed, 0, pool) {
        Ok(s) => println!("{s}"),
        Err(e) => panic!("{e}"),
    }
}

/// A length of a small adapter call: tile edges up to 2 049, sometimes 0 or 1.
fn small_len(rng: &mut StdRng) -> usize {
    fuzz::draw_len(rng, 2_049)
}

/// Values with ties, ±inf and NaN (sorts, max / min), or for a sum / product.
fn floats(rng: &mut StdRng, n: usize, op: cubeprim::ScanOp, ties: bool) -> Vec<f32> {
    if ties {
        crate::common::tie_values(rng, n, 0.03, 0.02)
    } else {
        crate::common::values_for(rng, n, op)
    }
}

fn ops_pick(rng: &mut StdRng) -> cubeprim::ScanOp {
    use cubeprim::ScanOp;
    fuzz::pick(rng, &[ScanOp::Sum, ScanOp::Prod, ScanOp::Max, ScanOp::Min])
}

/// Sums of |x| and factor counts of the folds of `x` (row-major `shape`) along `axis`.
fn scales(x: &[f32], shape: &[usize], axis: usize) -> (Vec<f64>, Vec<f64>) {
    let abs: Vec<f64> = x.iter().map(|v| (*v as f64).abs()).collect();
    let s = fuzz::reference::reduce(&abs, shape, Some(axis), cubeprim::ScanOp::Sum);
    let k = vec![shape[axis] as f64; s.len()];
    (s, k)
}

#[cfg(all(feature = "burn-fusion", feature = "burn-ndarray"))]
mod via_burn {
    use super::*;
    use crate::common::compare;
    use crate::fuzz::{check_exact, check_fold, reference as cpu_ref};
    use burn::tensor::{Bool, Int, Tensor, TensorData};
    use cubeprim::burn::prelude::*;

    pub type Cube = burn_cubecl::CubeBackend<R, f32, i32, u32>;
    pub type Fused = burn_fusion::Fusion<Cube>;
    pub type Cpu = burn::backend::NdArray<f32, i64>;

    // Decoded from the bytes, not with `TensorData::to_vec`: on CUDA an empty read comes back
    // as a `Vec<u8>` (cubecl-cuda 0.10's `reserve_cpu` for 0 bytes), whose dangling pointer
    // bytemuck refuses to cast to f32 or i64 (`TargetAlignmentGreaterAndInputNotAligned`),
    // for burn's own empty tensors as for cubeprim's.
    fn f32s(d: TensorData) -> Vec<f32> {
        let d = d.convert::<f32>();
        let b = d.as_bytes();
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }
    fn ints(d: TensorData) -> Vec<i64> {
        let d = d.convert::<i64>();
        let b = d.as_bytes();
        b.chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }
    /// A result's data; none read for no elements (cubecl-cuda 0.10 refuses to read a tensor
    /// with a zero stride, and its server then fails every later call).
    trait Data {
        fn data(self) -> TensorData;
    }
    impl<B: burn::tensor::backend::Backend, const D: usize, K: burn::tensor::BasicOps<B>> Data
        for Tensor<B, D, K>
    {
        fn data(self) -> TensorData {
            if self.shape().num_elements() == 0 {
                TensorData::new(Vec::<f32>::new(), [0])
            } else {
                self.into_data()
            }
        }
    }
    fn same_idx(what: &str, got: Vec<i64>, want: Vec<i64>) -> Result<(), String> {
        if got == want {
            Ok(())
        } else {
            let i = (0..got.len().min(want.len()))
                .find(|&i| got[i] != want[i])
                .unwrap_or(got.len().min(want.len()));
            Err(format!(
                "{what}: lengths {} / {}, first difference at {i}",
                got.len(),
                want.len()
            ))
        }
    }

    /// Every method once at the largest shape of [`call`] (`[4, 2 049]`), so that the adapter's
    /// workspace has its largest size before the memory is measured.
    pub fn warm<B: PrimBackend>(dev: &B::Device) -> Result<(), String> {
        for method in 0..11 {
            let mut rng = rng(method as u64);
            catch_unwind(AssertUnwindSafe(|| {
                method_call::<B>(dev, &mut rng, 4, 2_049, method)
            }))
            .unwrap_or_else(|p| Err(format!("panic: {}", fuzz::panic_message(&*p))))
            .map_err(|e| format!("warm-up, method {method} at [4, 2049]: {e}"))?;
        }
        Ok(())
    }

    /// One random call of a burn method on backend `B`, checked (a panic is an `Err`).
    pub fn call<B: PrimBackend>(dev: &B::Device, seed: u64) -> Result<(), String> {
        let mut rng = rng(seed);
        let rows = rng.random_range(1..=4);
        let n = small_len(&mut rng);
        let method = rng.random_range(0..11);
        let what = format!("seed {seed} method {method} shape {:?}", [rows, n]);
        catch_unwind(AssertUnwindSafe(|| {
            method_call::<B>(dev, &mut rng, rows, n, method)
        }))
        .unwrap_or_else(|p| Err(format!("panic: {}", fuzz::panic_message(&*p))))
        .map_err(|e| format!("{what}: {e}"))
    }

    fn method_call<B: PrimBackend>(
        dev: &B::Device,
        rng: &mut StdRng,
        rows: usize,
        n: usize,
        method: u32,
    ) -> Result<(), String> {
        let shape = [rows, n];
        let total = rows * n;
        // No upload of no elements: cubecl-cuda 0.10 refuses a tensor with a zero stride
        // (burn's strides of `[4, 0]` are `[0, 1]`) and its server then fails every later call.
        let ft = |v: &[f32]| {
            if v.is_empty() {
                Tensor::<B, 2>::empty(shape, dev)
            } else {
                Tensor::<B, 2>::from_data(TensorData::new(v.to_vec(), shape), dev)
            }
        };
        let it = |v: &[i32]| {
            if v.is_empty() {
                Tensor::<B, 2, Int>::empty(shape, dev)
            } else {
                Tensor::<B, 2, Int>::from_data(TensorData::new(v.to_vec(), shape), dev)
            }
        };
        match method {
            0 => {
                let op = ops_pick(rng);
                let opts = ScanOptions {
                    exclusive: rng.random_bool(0.5),
                    reverse: rng.random_bool(0.5),
                    ..ScanOptions::default()
                };
                let axis = rng.random_range(0..2);
                let x = floats(rng, total, op, false);
                let got = f32s(ft(&x).prim_scan(axis, op, opts).data());
                let want = cpu_ref::scan(&x, &shape, axis, op, opts);
                compare(&got, &want, &x, &shape, axis, op, opts)
                    .map_err(|e| format!("prim_scan {op:?} {opts:?} axis {axis}: {e}"))
            }
            1 => {
                let x = floats(rng, total, ScanOp::Max, true);
                let (v, i) = ft(&x).prim_cummax_with_indices(1);
                let (wv, wi) =
                    cpu_ref::scan_with_indices(&x, &shape, 1, ScanOp::Max, ScanOptions::default());
                check_exact("prim_cummax values", &f32s(v.data()), &wv, false)?;
                same_idx("prim_cummax indices", ints(i.data()), wi)
            }
            2 => {
                let x = floats(rng, total, ScanOp::Max, true);
                let desc = rng.random_bool(0.5);
                let (v, i) = if desc {
                    ft(&x).prim_sort_descending_with_indices(1)
                } else {
                    ft(&x).prim_sort_with_indices(1)
                };
                let order = cpu_ref::argsort(&x, n, desc, None);
                check_exact(
                    "prim_sort values",
                    &f32s(v.data()),
                    &cpu_ref::permute(&x, n, &order),
                    true,
                )?;
                same_idx(
                    "prim_sort indices",
                    ints(i.data()),
                    order.iter().map(|&o| o as i64).collect(),
                )
            }
            3 => {
                let x = floats(rng, total, ScanOp::Max, true);
                let k = if n == 0 {
                    0
                } else {
                    rng.random_range(1..=n.min(64))
                };
                let largest = rng.random_bool(0.5);
                let (v, i) = if largest {
                    ft(&x).prim_topk_with_indices(k, 1)
                } else {
                    ft(&x).prim_bottomk_with_indices(k, 1)
                };
                let (wv, wi) = cpu_ref::top_k(&x, n, k, largest);
                check_exact("prim_topk values", &f32s(v.data()), &wv, true)?;
                same_idx(
                    "prim_topk indices",
                    ints(i.data()),
                    wi.iter().map(|&o| o as i64).collect(),
                )
            }
            4 => {
                let axis = rng.random_range(0..2);
                let mut op = ops_pick(rng);
                if shape[axis] == 0 {
                    op = ScanOp::Sum;
                }
                let x = floats(rng, total, op, false);
                let got = f32s(ft(&x).prim_reduce_dim(axis, op).data());
                let want = cpu_ref::reduce(&x, &shape, Some(axis), op);
                let (s, k) = scales(&x, &shape, axis);
                check_fold(
                    &format!("prim_reduce_dim {op:?} axis {axis}"),
                    &got,
                    &want,
                    op,
                    &s,
                    &k,
                )
            }
            5 => {
                let x = floats(rng, total, ScanOp::Max, true);
                let p = rng.random_range(0.0..1.0);
                let m: Vec<bool> = (0..total).map(|_| rng.random_bool(p)).collect();
                let mask = if total == 0 {
                    Tensor::<B, 2, Bool>::empty(shape, dev)
                } else {
                    Tensor::<B, 2, Bool>::from_data(TensorData::new(m.clone(), shape), dev)
                };
                let got = f32s(ft(&x).prim_masked_select(mask).data());
                let set: Vec<u8> = m.iter().map(|&b| b as u8).collect();
                check_exact("prim_masked_select", &got, &cpu_ref::select(&x, &set), true)
            }
            6 => {
                let k: Vec<i32> = (0..total).map(|_| rng.random_range(-20..20)).collect();
                let out = it(&k).prim_unique_with(true, true);
                let (wv, wc, wi) = cpu_ref::unique(&k);
                same_idx(
                    "prim_unique values",
                    ints(out.values.data()),
                    wv.iter().map(|&v| v as i64).collect(),
                )?;
                same_idx("prim_unique counts", ints(out.counts.unwrap().data()), wc)?;
                same_idx("prim_unique inverse", ints(out.inverse.unwrap().data()), wi)
            }
            7 => {
                let bins = fuzz::pick(rng, &[1usize, 7, 64, 300]);
                let k: Vec<i32> = (0..total)
                    .map(|_| rng.random_range(-3..bins as i32 + 3))
                    .collect();
                let got = ints(it(&k).prim_histogram(bins).data());
                let wide: Vec<i64> = k.iter().map(|&v| v as i64).collect();
                same_idx(
                    "prim_histogram",
                    got,
                    cpu_ref::histogram(&wide, bins)
                        .iter()
                        .map(|&v| v as i64)
                        .collect(),
                )
            }
            8 => {
                let m = rng.random_range(0..=n.max(1));
                let raw = floats(rng, m, ScanOp::Max, true);
                let sorted = cpu_ref::permute(&raw, m, &cpu_ref::argsort(&raw, m, false, None));
                let q = floats(rng, total, ScanOp::Max, true);
                let right = rng.random_bool(0.5);
                let st = Tensor::<B, 1>::from_data(TensorData::new(sorted.clone(), [m]), dev);
                let side = if right { Side::Right } else { Side::Left };
                let got = ints(st.prim_searchsorted(ft(&q), side).data());
                let want = cpu_ref::searchsorted(&sorted, m, &q, n.max(1), right);
                same_idx(
                    "prim_searchsorted",
                    got,
                    want.iter().map(|&v| v as i64).collect(),
                )
            }
            9 => {
                let x: Vec<f32> = (0..total)
                    .map(|_| if rng.random_bool(0.7) { 0.0 } else { 1.5 })
                    .collect();
                let set: Vec<u8> = x.iter().map(|&v| (v != 0.0) as u8).collect();
                let got = ints(ft(&x).prim_nonzero().data());
                same_idx("prim_nonzero", got, cpu_ref::nonzero(&set, &shape))
            }
            _ => {
                let op = ops_pick(rng);
                let mut cur = 0i32;
                let k: Vec<i32> = (0..total)
                    .map(|_| {
                        if rng.random_bool(0.2) {
                            cur = rng.random_range(0..5);
                        }
                        cur
                    })
                    .collect();
                let v = floats(rng, total, op, false);
                let kt = Tensor::<B, 1, Int>::from_data(TensorData::new(k.clone(), [total]), dev);
                let vt = Tensor::<B, 1>::from_data(TensorData::new(v.clone(), [total]), dev);
                let (gk, gv) = kt.prim_reduce_by_key(vt, op);
                let (wk, wv) = cpu_ref::reduce_by_key(&k, &v, op);
                same_idx(
                    "prim_reduce_by_key keys",
                    ints(gk.data()),
                    wk.iter().map(|&x| x as i64).collect(),
                )?;
                let (_, counts, _) = cpu_ref::unique_consecutive(&k);
                let mut at = 0;
                let (s, f): (Vec<f64>, Vec<f64>) = counts
                    .iter()
                    .map(|&c| {
                        let c = c as usize;
                        let s: f64 = v[at..at + c].iter().map(|x| (*x as f64).abs()).sum();
                        at += c;
                        (s, c as f64)
                    })
                    .unzip();
                check_fold(
                    &format!("prim_reduce_by_key {op:?}"),
                    &f32s(gv.data()),
                    &wv,
                    op,
                    &s,
                    &f,
                )
            }
        }
    }
}

#[cfg(feature = "candle")]
mod via_candle {
    use super::*;
    use crate::common::compare;
    use crate::fuzz::{check_exact, check_fold, reference as cpu_ref};
    use candle_core::{Device, Tensor, D};
    use cubeprim::candle::prelude::*;

    fn ce(e: candle_core::Error) -> String {
        format!("candle error: {e}")
    }
    fn same<T: PartialEq + std::fmt::Debug>(
        what: &str,
        got: Vec<T>,
        want: Vec<T>,
    ) -> Result<(), String> {
        if got == want {
            Ok(())
        } else {
            Err(format!("{what}: got {got:?}, want {want:?}"))
        }
    }

    /// One random call of a candle method on the CPU device, checked.
    pub fn call(seed: u64) -> Result<(), String> {
        let mut rng = rng(seed);
        let rows = rng.random_range(1..=4);
        let n = small_len(&mut rng);
        let shape = [rows, n];
        let total = rows * n;
        let method = rng.random_range(0..9);
        let what = format!("seed {seed} method {method} shape {shape:?}");
        let cpu = Device::Cpu;
        let ft = |v: &[f32]| Tensor::from_vec(v.to_vec(), (rows, n), &cpu).map_err(ce);
        let r = (|| -> Result<(), String> {
            match method {
                0 => {
                    let op = ops_pick(&mut rng);
                    let opts = ScanOptions {
                        exclusive: rng.random_bool(0.5),
                        reverse: rng.random_bool(0.5),
                        ..ScanOptions::default()
                    };
                    let x = floats(&mut rng, total, op, false);
                    let y = ft(&x)?.scan(D::Minus1, op, opts).map_err(ce)?;
                    let got = y.flatten_all().map_err(ce)?.to_vec1::<f32>().map_err(ce)?;
                    let want = cpu_ref::scan(&x, &shape, 1, op, opts);
                    compare(&got, &want, &x, &shape, 1, op, opts)
                }
                1 => {
                    let x = floats(&mut rng, total, ScanOp::Max, true);
                    let (v, i) = ft(&x)?.scan_min_with_indices(D::Minus1).map_err(ce)?;
                    let (wv, wi) = cpu_ref::scan_with_indices(
                        &x,
                        &shape,
                        1,
                        ScanOp::Min,
                        ScanOptions::default(),
                    );
                    let gv = v.flatten_all().map_err(ce)?.to_vec1::<f32>().map_err(ce)?;
                    check_exact("scan_min values", &gv, &wv, false)?;
                    let gi = i.flatten_all().map_err(ce)?.to_vec1::<u32>().map_err(ce)?;
                    // The reference's indices (no exclusive scan here: none is `-1`) as u32.
                    same(
                        "scan_min indices",
                        gi,
                        wi.iter().map(|&w| w as u32).collect(),
                    )
                }
                2 => {
                    let x = floats(&mut rng, total, ScanOp::Max, true);
                    let asc = rng.random_bool(0.5);
                    let (v, i) = ft(&x)?.sort_stable(D::Minus1, asc).map_err(ce)?;
                    let order = cpu_ref::argsort(&x, n, !asc, None);
                    let gv = v.flatten_all().map_err(ce)?.to_vec1::<f32>().map_err(ce)?;
                    check_exact(
                        "sort_stable values",
                        &gv,
                        &cpu_ref::permute(&x, n, &order),
                        true,
                    )?;
                    same(
                        "sort_stable indices",
                        i.flatten_all().map_err(ce)?.to_vec1::<u32>().map_err(ce)?,
                        order,
                    )
                }
                3 => {
                    let x = floats(&mut rng, total, ScanOp::Max, true);
                    let k = if n == 0 {
                        0
                    } else {
                        rng.random_range(1..=n.min(64))
                    };
                    let (v, i) = ft(&x)?.top_k(k, D::Minus1).map_err(ce)?;
                    let (wv, wi) = cpu_ref::top_k(&x, n, k, true);
                    let gv = v.flatten_all().map_err(ce)?.to_vec1::<f32>().map_err(ce)?;
                    check_exact("top_k values", &gv, &wv, true)?;
                    same(
                        "top_k indices",
                        i.flatten_all().map_err(ce)?.to_vec1::<u32>().map_err(ce)?,
                        wi,
                    )
                }
                4 => {
                    let mut op = ops_pick(&mut rng);
                    if n == 0 {
                        op = ScanOp::Sum;
                    }
                    let x = floats(&mut rng, total, op, false);
                    let y = ft(&x)?.reduce(D::Minus1, op).map_err(ce)?;
                    let got = y.flatten_all().map_err(ce)?.to_vec1::<f32>().map_err(ce)?;
                    let want = cpu_ref::reduce(&x, &shape, Some(1), op);
                    let (s, k) = scales(&x, &shape, 1);
                    check_fold(&format!("reduce {op:?}"), &got, &want, op, &s, &k)
                }
                5 => {
                    let x = floats(&mut rng, total, ScanOp::Max, true);
                    let m: Vec<u8> = (0..total).map(|_| rng.random_bool(0.4) as u8).collect();
                    let mask = Tensor::from_vec(m.clone(), (rows, n), &cpu).map_err(ce)?;
                    let got = ft(&x)?.masked_select(&mask).map_err(ce)?;
                    let got = got.to_vec1::<f32>().map_err(ce)?;
                    check_exact("masked_select", &got, &cpu_ref::select(&x, &m), true)
                }
                6 => {
                    let k: Vec<i64> = (0..total).map(|_| rng.random_range(-9..9)).collect();
                    let t = Tensor::from_vec(k.clone(), (rows, n), &cpu).map_err(ce)?;
                    let (v, c, i) = t.unique_with_inverse().map_err(ce)?;
                    let (wv, wc, wi) = cpu_ref::unique(&k);
                    same("unique values", v.to_vec1::<i64>().map_err(ce)?, wv)?;
                    let u32s = |v: Vec<i64>| v.into_iter().map(|x| x as u32).collect();
                    same("unique counts", c.to_vec1::<u32>().map_err(ce)?, u32s(wc))?;
                    same(
                        "unique inverse",
                        i.flatten_all().map_err(ce)?.to_vec1::<u32>().map_err(ce)?,
                        u32s(wi),
                    )
                }
                7 => {
                    let bins = fuzz::pick(&mut rng, &[1usize, 7, 64, 300]);
                    let k: Vec<u32> = (0..total)
                        .map(|_| rng.random_range(0..bins as u32 + 3))
                        .collect();
                    let t = Tensor::from_vec(k.clone(), (rows, n), &cpu).map_err(ce)?;
                    let got = t.flatten_all().map_err(ce)?.histogram(bins).map_err(ce)?;
                    let wide: Vec<i64> = k.iter().map(|&v| v as i64).collect();
                    same(
                        "histogram",
                        got.to_vec1::<u32>().map_err(ce)?,
                        cpu_ref::histogram(&wide, bins),
                    )
                }
                _ => {
                    let m = rng.random_range(0..=n.max(1));
                    let raw = floats(&mut rng, m, ScanOp::Max, true);
                    let sorted = cpu_ref::permute(&raw, m, &cpu_ref::argsort(&raw, m, false, None));
                    let q = floats(&mut rng, total, ScanOp::Max, true);
                    let right = rng.random_bool(0.5);
                    let st = Tensor::from_vec(sorted.clone(), m, &cpu).map_err(ce)?;
                    let side = if right { Side::Right } else { Side::Left };
                    let got = st.search_sorted(&ft(&q)?, 0, side).map_err(ce)?;
                    let got = got
                        .flatten_all()
                        .map_err(ce)?
                        .to_vec1::<u32>()
                        .map_err(ce)?;
                    same(
                        "search_sorted",
                        got,
                        cpu_ref::searchsorted(&sorted, m, &q, n.max(1), right),
                    )
                }
            }
        })();
        r.map_err(|e| format!("{what}: {e}"))
    }
}
