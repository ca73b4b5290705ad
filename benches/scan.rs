//! cumsum f32 on the best device found (CUDA with `--features cuda`, else wgpu) against the CPU
//! reference. Each device iteration is one `scan_into` (preallocated output and workspace, so
//! nothing is allocated) followed by a device sync, so it measures the whole scan.
//!
//! A module of the bench binary `primitives` (`benches/primitives.rs`):
//!
//! ```text
//! cargo bench --bench primitives -- cumsum                   # wgpu (lavapipe without a GPU)
//! cargo bench --features cuda --bench primitives -- cumsum   # CUDA first
//! CUBEPRIM_BACKEND=cpu cargo bench --bench primitives -- cumsum
//! ```
//!
//! Without a device only the CPU path is measured.

use criterion::{measurement::WallTime, Throughput};
use criterion::{BenchmarkGroup, BenchmarkId, Criterion};
use cubecl::prelude::*;
use cubeprim::device::{best_backend_or, Backend};
use cubeprim::{cpu, DType, DeviceTensor, ScanOp, ScanOptions, Workspace};
use std::time::Duration;

/// (label, shape, axis): rows that fit one tile, and a 1-D array scanned with look-back.
const SHAPES: [(&str, &[usize], usize); 2] = [
    ("1024x4096_axis1", &[1024, 4096], 1),
    ("4194304", &[1 << 22], 0),
];

fn data(n: usize) -> Vec<f32> {
    // Deterministic values in [-1, 1); their distribution does not change the timing.
    (0..n)
        .map(|i| ((i.wrapping_mul(2_654_435_761) >> 8) % 2001) as f32 / 1000.0 - 1.0)
        .collect()
}

fn bench_device<R: Runtime>(g: &mut BenchmarkGroup<WallTime>, backend: &str) {
    let client = R::client(&Default::default());
    for (label, shape, axis) in SHAPES {
        let n: usize = shape.iter().product();
        let x = DeviceTensor::<R>::from_slice(&client, &data(n), shape).unwrap();
        let opts = ScanOptions::default();
        let bytes =
            cubeprim::scan_workspace_bytes(&client, shape, axis as isize, DType::F32, false, opts)
                .expect("workspace size");
        let mut ws = Workspace::with_capacity(&client, bytes);
        let y = DeviceTensor::<R>::empty(&client, shape, DType::F32);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(BenchmarkId::new(backend, label), |b| {
            b.iter(|| {
                let axis = axis as isize;
                cubeprim::scan_into(&client, &x, &y, None, axis, ScanOp::Sum, opts, &mut ws)
                    .expect("scan");
                cubecl::future::block_on(client.sync()).expect("device sync");
            })
        });
    }
}

fn bench_cpu(g: &mut BenchmarkGroup<WallTime>) {
    for (label, shape, axis) in SHAPES.into_iter().chain([("16777216", &[1 << 24][..], 0)]) {
        let n: usize = shape.iter().product();
        let x = data(n);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(BenchmarkId::new("cpu", label), |b| {
            b.iter(|| cpu::scan(&x, shape, axis, ScanOp::Sum, ScanOptions::default()).unwrap())
        });
        // The same scan into an output reused from call to call (no first touch of its pages).
        let mut reused = vec![0f32; n];
        g.bench_function(BenchmarkId::new("cpu into", label), |b| {
            b.iter(|| {
                cpu::scan_into(
                    &x,
                    shape,
                    axis,
                    ScanOp::Sum,
                    ScanOptions::default(),
                    &mut reused,
                )
                .unwrap()
            })
        });
        if shape.len() == 1 {
            // The floors of the same run: a copy into a new vector, and a plain sequential
            // running sum into a new vector (what `cpu::scan` returns is a new vector too).
            g.bench_function(BenchmarkId::new("copy", label), |b| {
                b.iter(|| std::hint::black_box(&x).to_vec())
            });
            // The memory floor alone: the same copy into a vector already touched.
            let mut dst = vec![0f32; n];
            g.bench_function(BenchmarkId::new("copy into", label), |b| {
                b.iter(|| dst.copy_from_slice(std::hint::black_box(&x)))
            });
            g.bench_function(BenchmarkId::new("plain loop", label), |b| {
                b.iter(|| {
                    let mut out = vec![0f32; n];
                    let mut acc = 0f32;
                    for (o, &v) in out.iter_mut().zip(std::hint::black_box(&x)) {
                        acc += v;
                        *o = acc;
                    }
                    out
                })
            });
        }
    }
}

pub fn cumsum_f32(c: &mut Criterion) {
    // Probing a runtime that is not there panics inside cubecl (and is caught): keep it quiet.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    // `CUBEPRIM_BACKEND=cuda|wgpu|cpu` picks one (the program reads it; the library reads no
    // environment).
    let backend = best_backend_or(std::env::var("CUBEPRIM_BACKEND").ok().as_deref());
    std::panic::set_hook(hook);

    let mut g = c.benchmark_group("cumsum_f32");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
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
