//! Sorting on the best device found (CUDA with `--features cuda`, else wgpu) against the CPU
//! reference: a u32 sort and a stable f32 argsort of 2^20 keys. Each device iteration is one
//! `sort_into` (preallocated outputs and workspace) followed by a device sync.
//!
//! A module of the bench binary `primitives` (`benches/primitives.rs`):
//!
//! ```text
//! cargo bench --bench primitives -- '^sort'                 # wgpu (lavapipe without a GPU)
//! cargo bench --features cuda --bench primitives -- '^sort' # CUDA first
//! ```
//!
//! Without a device only the CPU path is measured.

use criterion::{measurement::WallTime, Throughput};
use criterion::{BenchmarkGroup, BenchmarkId, Criterion};
use cubecl::prelude::*;
use cubeprim::device::{best_backend_or, Backend};
use cubeprim::{cpu, DType, DeviceTensor, Len, Payload, SortOptions, Workspace};
use std::time::Duration;

const N: usize = 1 << 20;

/// Deterministic, well-mixed keys (a multiplicative hash of the position).
fn keys_u32() -> Vec<u32> {
    (0..N as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) ^ (i >> 7))
        .collect()
}

fn keys_f32() -> Vec<f32> {
    keys_u32()
        .into_iter()
        .map(|k| (k >> 8) as f32 / (1u32 << 23) as f32 - 1.0)
        .collect()
}

fn bench_device<R: Runtime>(g: &mut BenchmarkGroup<WallTime>, backend: &str) {
    let client = R::client(&Default::default());
    let opts = SortOptions::default();
    let sync = || cubecl::future::block_on(client.sync()).expect("device sync");

    let x = DeviceTensor::<R>::from_slice(&client, &keys_u32(), &[N]).unwrap();
    let out = DeviceTensor::<R>::empty(&client, &[N], DType::U32);
    let bytes =
        cubeprim::sort_workspace_bytes(&client, &[N], DType::U32, Payload::None, false, opts)
            .expect("workspace size");
    let mut ws = Workspace::with_capacity(&client, bytes);
    g.bench_function(BenchmarkId::new(backend, "sort_u32"), |b| {
        b.iter(|| {
            cubeprim::sort_into(&client, &x, Some(&out), None, Len::Host(N), opts, &mut ws)
                .expect("sort");
            sync();
        })
    });

    let x = DeviceTensor::<R>::from_slice(&client, &keys_f32(), &[N]).unwrap();
    let idx = DeviceTensor::<R>::empty(&client, &[N], DType::U32);
    let payload = Payload::Indices(cubeprim::IndexType::U32);
    let bytes = cubeprim::sort_workspace_bytes(&client, &[N], DType::F32, payload, false, opts)
        .expect("workspace size");
    let mut ws = Workspace::with_capacity(&client, bytes);
    g.bench_function(BenchmarkId::new(backend, "argsort_f32"), |b| {
        b.iter(|| {
            cubeprim::sort_into(&client, &x, None, Some(&idx), Len::Host(N), opts, &mut ws)
                .expect("argsort");
            sync();
        })
    });
}

fn bench_cpu(g: &mut BenchmarkGroup<WallTime>) {
    let ku = keys_u32();
    g.bench_function(BenchmarkId::new("cpu", "sort_u32"), |b| {
        b.iter(|| cpu::sort_rows(&ku, N, false))
    });
    let kf = keys_f32();
    g.bench_function(BenchmarkId::new("cpu", "argsort_f32"), |b| {
        b.iter(|| cpu::argsort_rows(&kf, N, false))
    });
}

pub fn sort_1m(c: &mut Criterion) {
    // Probing a runtime that is not there panics inside cubecl (and is caught): keep it quiet.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    // `CUBEPRIM_BACKEND=cuda|wgpu|cpu` picks one (the program reads it; the library reads no
    // environment).
    let backend = best_backend_or(std::env::var("CUBEPRIM_BACKEND").ok().as_deref());
    std::panic::set_hook(hook);

    let mut g = c.benchmark_group("sort_2^20");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Elements(N as u64));
    match backend {
        #[cfg(feature = "cuda")]
        Backend::Cuda => bench_device::<cubecl::cuda::CudaRuntime>(&mut g, "cuda"),
        #[cfg(feature = "wgpu")]
        Backend::Wgpu => bench_device::<cubecl::wgpu::WgpuRuntime>(&mut g, "wgpu"),
        _ => eprintln!("no device found: benchmarking the CPU path only"),
    }
    bench_cpu(&mut g);
    g.finish();
}
