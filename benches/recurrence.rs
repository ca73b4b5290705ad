//! The f32 linear recurrence `h[t] = a[t] * h[t-1] + b[t]` on the best device found against the
//! CPU path: along rows (a contiguous time axis) and along the middle axis of a
//! `[batch, time, channels]` tensor (a state-space model's layout). Each device iteration is
//! one `linear_recurrence_into` (preallocated output; a workspace grown by the first call,
//! which checks the result, and reused, so nothing is allocated) followed by a device sync.
//!
//! A module of the bench binary `primitives` (`benches/primitives.rs`):
//!
//! ```text
//! cargo bench --bench primitives -- recurrence                   # wgpu (lavapipe without a GPU)
//! cargo bench --features cuda --bench primitives -- recurrence   # CUDA first
//! ```

use crate::common::{self, DeviceBench};
use criterion::{measurement::WallTime, BenchmarkGroup, BenchmarkId, Criterion, Throughput};
use cubecl::prelude::*;
use cubeprim::{cpu, DType, DeviceTensor, RecurrenceOptions, Workspace};

/// (label, shape, axis).
fn shapes() -> Vec<(&'static str, Vec<usize>, usize)> {
    common::pick(
        vec![
            ("4096x4096_axis1", vec![4096, 4096], 1),
            ("16x1024x1024_axis1", vec![16, 1024, 1024], 1),
        ],
        vec![("16x1024_axis1", vec![16, 1024], 1)],
    )
}

/// Decays in [0.5, 1) and inputs in [-1, 1).
fn inputs(n: usize) -> (Vec<f32>, Vec<f32>) {
    let a = (0..n)
        .map(|i| 0.5 + (common::hash(i) >> 12) as f32 / (1u32 << 21) as f32)
        .collect();
    (a, common::f32_data(n))
}

struct Device;

impl DeviceBench for Device {
    fn run<R: Runtime>(&self, g: &mut BenchmarkGroup<WallTime>, backend: &str) {
        let client = R::client(&Default::default());
        let opts = RecurrenceOptions::default();
        for (label, shape, axis) in shapes() {
            let n: usize = shape.iter().product();
            let (a, b) = inputs(n);
            let ad = DeviceTensor::<R>::from_slice(&client, &a, &shape).unwrap();
            let bd = DeviceTensor::<R>::from_slice(&client, &b, &shape).unwrap();
            let h = DeviceTensor::<R>::empty(&client, &shape, DType::F32);
            let run = |ws: &mut Workspace<R>| {
                let axis = axis as isize;
                cubeprim::linear_recurrence_into(&client, &ad, &bd, None, &h, axis, opts, ws)?;
                common::sync(&client);
                Ok(())
            };
            let check = |()| {
                let want = cpu::linear_recurrence(&a, &b, None, &shape, axis, false).unwrap();
                common::assert_close(&h.to_vec::<f32>(&client), &want, 1e-4, label);
            };
            g.throughput(Throughput::Elements(n as u64));
            // No size query: the workspace grows in the first call.
            common::bench(g, backend, label, &client, None, run, check);
        }
    }
}

fn bench_cpu(g: &mut BenchmarkGroup<WallTime>) {
    for (label, shape, axis) in shapes() {
        let n: usize = shape.iter().product();
        let (a, b) = inputs(n);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(BenchmarkId::new("cpu", label), |bch| {
            bch.iter(|| cpu::linear_recurrence(&a, &b, None, &shape, axis, false).unwrap())
        });
    }
}

pub fn recurrence_f32(c: &mut Criterion) {
    common::group(c, "recurrence_f32", Device, bench_cpu);
}
