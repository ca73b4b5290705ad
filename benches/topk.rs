//! Top-k and searchsorted on the best device found against the CPU path.
//!
//! - `top_k_f32`: the 32 largest f32 of each row of 1024 (rows that fit one cube: radix
//!   selection) and the 50 largest of each row of 32768 (a vocabulary's logits: longer rows),
//!   by `top_k_into` into preallocated values and u32 indices, with a workspace of
//!   `top_k_workspace_bytes`;
//! - `searchsorted_f32`: the left insertion points of f32 queries in 65536 sorted boundaries
//!   (`searchsorted_into`, u32 positions; it needs no workspace).
//!
//! Each device iteration is one call followed by a device sync; nothing is allocated.
//!
//! A module of the bench binary `primitives` (`benches/primitives.rs`):
//!
//! ```text
//! cargo bench --bench primitives -- top_k          # wgpu (lavapipe without a GPU)
//! cargo bench --bench primitives -- searchsorted
//! cargo bench --features cuda --bench primitives -- 'top_k|searchsorted'   # CUDA first
//! ```

use crate::common::{self, DeviceBench};
use criterion::{measurement::WallTime, BenchmarkGroup, BenchmarkId, Criterion, Throughput};
use cubecl::prelude::*;
use cubeprim::{cpu, DType, DeviceTensor, IndexType, Side, Workspace};

/// (rows, row length, k).
fn topk_shapes() -> Vec<(usize, usize, usize)> {
    common::pick(
        vec![(4096, 1024, 32), (64, 32768, 50)],
        vec![(16, 1024, 32)],
    )
}

/// (sorted boundaries, queries).
fn search_sizes() -> (usize, usize) {
    common::pick((1 << 16, 1 << 22), (1 << 10, 1 << 14))
}

/// Well-mixed f32 keys in [-1, 1) with few ties.
fn keys(n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| (common::hash(i) >> 8) as f32 / (1u32 << 23) as f32 - 1.0)
        .collect()
}

/// `m` evenly spaced, ascending boundaries in [-1, 1).
fn boundaries(m: usize) -> Vec<f32> {
    (0..m).map(|i| 2.0 * i as f32 / m as f32 - 1.0).collect()
}

fn topk_label(rows: usize, n: usize, k: usize) -> String {
    format!("{rows}x{n}_k{k}")
}

struct TopK;

impl DeviceBench for TopK {
    fn run<R: Runtime>(&self, g: &mut BenchmarkGroup<WallTime>, backend: &str) {
        let client = R::client(&Default::default());
        for (rows, n, k) in topk_shapes() {
            let label = topk_label(rows, n, k);
            let data = keys(rows * n);
            let x = DeviceTensor::<R>::from_slice(&client, &data, &[rows, n]).unwrap();
            let values = DeviceTensor::<R>::empty(&client, &[rows, k], DType::F32);
            let indices = DeviceTensor::<R>::empty(&client, &[rows, k], DType::U32);
            let bytes =
                cubeprim::top_k_workspace_bytes(&client, &[rows, n], DType::F32, IndexType::U32)
                    .expect("workspace size");
            let top_k = |ws: &mut Workspace<R>| {
                cubeprim::top_k_into(&client, &x, k, true, &values, &indices, ws)?;
                common::sync(&client);
                Ok(())
            };
            let check = |()| {
                let (want_v, want_i) = cpu::top_k_rows(&data, n, k, true);
                assert_eq!(values.to_vec::<f32>(&client), want_v, "{label}: values");
                assert_eq!(indices.to_vec::<u32>(&client), want_i, "{label}: indices");
            };
            g.throughput(Throughput::Elements((rows * n) as u64));
            common::bench(g, backend, &label, &client, Some(bytes), top_k, check);
        }
    }
}

fn topk_cpu(g: &mut BenchmarkGroup<WallTime>) {
    for (rows, n, k) in topk_shapes() {
        let data = keys(rows * n);
        g.throughput(Throughput::Elements((rows * n) as u64));
        g.bench_function(BenchmarkId::new("cpu", topk_label(rows, n, k)), |b| {
            b.iter(|| cpu::top_k_rows(&data, n, k, true))
        });
    }
}

pub fn top_k(c: &mut Criterion) {
    common::group(c, "top_k_f32", TopK, topk_cpu);
}

struct Search;

impl DeviceBench for Search {
    fn run<R: Runtime>(&self, g: &mut BenchmarkGroup<WallTime>, backend: &str) {
        let client = R::client(&Default::default());
        let (m, n) = search_sizes();
        let label = format!("{n}_in_{m}");
        let (bounds, queries) = (boundaries(m), common::f32_data(n));
        let s = DeviceTensor::<R>::from_slice(&client, &bounds, &[m]).unwrap();
        let q = DeviceTensor::<R>::from_slice(&client, &queries, &[n]).unwrap();
        let out = DeviceTensor::<R>::empty(&client, &[n], DType::U32);
        // searchsorted takes no workspace: the one of 0 bytes is never used.
        let search = |_: &mut Workspace<R>| {
            cubeprim::searchsorted_into(&client, &s, &q, Side::Left, &out)?;
            common::sync(&client);
            Ok(())
        };
        let check = |()| {
            let want = cpu::searchsorted(&bounds, m, &queries, n, false).unwrap();
            assert_eq!(out.to_vec::<u32>(&client), want, "{label}");
        };
        g.throughput(Throughput::Elements(n as u64));
        common::bench(g, backend, &label, &client, Some(0), search, check);
    }
}

fn search_cpu(g: &mut BenchmarkGroup<WallTime>) {
    let (m, n) = search_sizes();
    let (bounds, queries) = (boundaries(m), common::f32_data(n));
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function(BenchmarkId::new("cpu", format!("{n}_in_{m}")), |b| {
        b.iter(|| cpu::searchsorted(&bounds, m, &queries, n, false).unwrap())
    });
}

pub fn searchsorted(c: &mut Criterion) {
    common::group(c, "searchsorted_f32", Search, search_cpu);
}
