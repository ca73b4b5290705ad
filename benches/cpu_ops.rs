//! The CPU path (`cubeprim::cpu`, what candle CPU, burn NdArray and the demo without a GPU
//! run) against plain sequential baselines: sorts (std's sorts), top-k (a full sort per row),
//! compaction (an iterator filter), run-length (the sequential loop) and the copy of the same
//! bytes (the memory floor). Peers: `benches/peers/cpu_peers.py` (NumPy, PyTorch CPU);
//! results: `benches/results/cpu/ops.json`.
//!
//! A module of the bench binary `primitives` (`benches/primitives.rs`), group `cpu_ops`:
//!
//! ```text
//! RAYON_NUM_THREADS=2 cargo bench --bench primitives -- cpu_ops
//! RAYON_NUM_THREADS=1 cargo bench --bench primitives -- 'cpu_ops/.*/cubeprim'
//! ```
//!
//! Under `cargo test --benches` (no `--bench` argument) each case runs once at 2^14 elements.

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};
use cubeprim::{cpu, ScanOp};
use std::hint::black_box;
use std::time::Duration;

/// Full sizes under `cargo bench`, small ones under `cargo test --benches`.
fn full() -> bool {
    std::env::args().any(|a| a == "--bench")
}

/// Deterministic, well-mixed keys (a multiplicative hash of the position).
fn keys_u32(n: usize) -> Vec<u32> {
    (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) ^ (i >> 7))
        .collect()
}

fn keys_f32(n: usize) -> Vec<f32> {
    keys_u32(n)
        .into_iter()
        .map(|k| (k >> 8) as f32 / (1u32 << 23) as f32 - 1.0)
        .collect()
}

/// The stable sequential order of `x` by the total order (NaN last): std's stable sort of the
/// positions.
fn std_argsort(x: &[f32]) -> Vec<u32> {
    let mut idx: Vec<u32> = (0..x.len() as u32).collect();
    idx.sort_by(|&a, &b| x[a as usize].total_cmp(&x[b as usize]));
    idx
}

pub fn cpu_ops(c: &mut Criterion) {
    let (n, rows, cols, tk_rows, tk_cols) = if full() {
        (1usize << 24, 4096, 4096, 64, 1 << 16)
    } else {
        (1 << 14, 16, 1024, 4, 1 << 12)
    };
    let sz = |n: usize| format!("2^{}", n.trailing_zeros());
    let mut g = c.benchmark_group("cpu_ops");
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));

    let f = keys_f32(n);
    let u = keys_u32(n);
    g.throughput(Throughput::Bytes((n * 4) as u64));
    let id = format!("copy_f32_{}", sz(n));
    g.bench_function(BenchmarkId::new(&id, "to_vec"), |b| {
        b.iter(|| black_box(&f).to_vec())
    });
    let mut dst = vec![0f32; n];
    g.bench_function(BenchmarkId::new(&id, "copy_from_slice"), |b| {
        b.iter(|| dst.copy_from_slice(black_box(&f)))
    });

    g.throughput(Throughput::Elements(n as u64));
    let id = format!("sort_f32_{}", sz(n));
    g.bench_function(BenchmarkId::new(&id, "cubeprim"), |b| {
        b.iter(|| cpu::sort_rows(black_box(&f), n, false))
    });
    g.bench_function(BenchmarkId::new(&id, "std_sort_unstable_by"), |b| {
        b.iter(|| {
            let mut v = black_box(&f).to_vec();
            v.sort_unstable_by(f32::total_cmp);
            v
        })
    });
    g.bench_function(BenchmarkId::new(&id, "std_sort_by"), |b| {
        b.iter(|| {
            let mut v = black_box(&f).to_vec();
            v.sort_by(f32::total_cmp);
            v
        })
    });
    let id = format!("sort_u32_{}", sz(n));
    g.bench_function(BenchmarkId::new(&id, "cubeprim"), |b| {
        b.iter(|| cpu::sort_rows(black_box(&u), n, false))
    });
    g.bench_function(BenchmarkId::new(&id, "std_sort_unstable"), |b| {
        b.iter(|| {
            let mut v = black_box(&u).to_vec();
            v.sort_unstable();
            v
        })
    });
    let id = format!("argsort_f32_{}", sz(n));
    g.bench_function(BenchmarkId::new(&id, "cubeprim"), |b| {
        b.iter(|| cpu::argsort_rows(black_box(&f), n, false))
    });
    g.bench_function(BenchmarkId::new(&id, "std_sort_by"), |b| {
        b.iter(|| std_argsort(black_box(&f)))
    });

    let m = keys_f32(rows * cols);
    g.throughput(Throughput::Elements((rows * cols) as u64));
    let id = format!("sort_rows_f32_{rows}x{cols}");
    g.bench_function(BenchmarkId::new(&id, "cubeprim"), |b| {
        b.iter(|| cpu::sort_rows(black_box(&m), cols, false))
    });
    g.bench_function(BenchmarkId::new(&id, "std_sort_unstable_by"), |b| {
        b.iter(|| {
            let mut v = black_box(&m).to_vec();
            v.chunks_mut(cols)
                .for_each(|r| r.sort_unstable_by(f32::total_cmp));
            v
        })
    });

    let t = keys_f32(tk_rows * tk_cols);
    g.throughput(Throughput::Elements((tk_rows * tk_cols) as u64));
    let id = format!("top64_f32_{tk_rows}x{tk_cols}");
    g.bench_function(BenchmarkId::new(&id, "cubeprim"), |b| {
        b.iter(|| cpu::top_k_rows(black_box(&t), tk_cols, 64, true))
    });
    g.bench_function(BenchmarkId::new(&id, "std_sort_by_per_row"), |b| {
        b.iter(|| {
            t.chunks(tk_cols)
                .map(|r| {
                    let mut o = std_argsort(r);
                    o.reverse();
                    o.truncate(64);
                    o
                })
                .collect::<Vec<_>>()
        })
    });

    // A mask of one byte per element, half set (a hash bit).
    let mask: Vec<u8> = u.iter().map(|k| (k >> 13 & 1) as u8).collect();
    g.throughput(Throughput::Elements(n as u64));
    let id = format!("select_f32_{}_half", sz(n));
    g.bench_function(BenchmarkId::new(&id, "cubeprim"), |b| {
        b.iter(|| cpu::select(black_box(&f), &mask))
    });
    g.bench_function(BenchmarkId::new(&id, "iter_filter"), |b| {
        b.iter(|| {
            black_box(&f)
                .iter()
                .zip(&mask)
                .filter(|(_, m)| **m != 0)
                .map(|(x, _)| *x)
                .collect::<Vec<f32>>()
        })
    });
    let id = format!("nonzero_u8_{}_half", sz(n));
    g.bench_function(BenchmarkId::new(&id, "cubeprim"), |b| {
        b.iter(|| cpu::nonzero(black_box(&mask), &[n]).unwrap())
    });
    g.bench_function(BenchmarkId::new(&id, "iter_filter"), |b| {
        b.iter(|| {
            black_box(&mask)
                .iter()
                .enumerate()
                .filter(|(_, m)| **m != 0)
                .map(|(i, _)| i as i64)
                .collect::<Vec<i64>>()
        })
    });

    // Sorted keys in runs of 16: 2^20 runs of 2^24 keys.
    let runs: Vec<u32> = (0..n as u32).map(|i| i >> 4).collect();
    let id = format!("unique_consecutive_u32_{}_runs16", sz(n));
    g.bench_function(BenchmarkId::new(&id, "cubeprim"), |b| {
        b.iter(|| cpu::unique_consecutive(black_box(&runs)))
    });
    g.bench_function(BenchmarkId::new(&id, "sequential_loop"), |b| {
        b.iter(|| {
            let keys = black_box(&runs);
            let (mut u, mut c, mut inv) = (vec![], vec![], Vec::with_capacity(keys.len()));
            for (i, k) in keys.iter().enumerate() {
                if i == 0 || keys[i - 1] != *k {
                    u.push(*k);
                    c.push(0i64);
                }
                *c.last_mut().unwrap() += 1;
                inv.push(u.len() as i64 - 1);
            }
            (u, c, inv)
        })
    });
    let id = format!("reduce_by_key_sum_f32_{}_runs16", sz(n));
    g.bench_function(BenchmarkId::new(&id, "cubeprim"), |b| {
        b.iter(|| cpu::reduce_by_key(black_box(&runs), &f, ScanOp::Sum))
    });
    g.bench_function(BenchmarkId::new(&id, "sequential_loop"), |b| {
        b.iter(|| {
            let (keys, vals) = (black_box(&runs), &f);
            let (mut u, mut s) = (vec![], vec![]);
            for (i, (k, v)) in keys.iter().zip(vals).enumerate() {
                if i == 0 || keys[i - 1] != *k {
                    u.push(*k);
                    s.push(*v);
                } else {
                    *s.last_mut().unwrap() += *v;
                }
            }
            (u, s)
        })
    });
    g.finish();
}
