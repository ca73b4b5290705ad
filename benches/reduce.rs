//! f32 sums (of small integers, so exact in any order) on the best device found against the CPU path: the whole buffer (`axis: None`, a
//! device-wide reduction) and each row of a matrix (`axis: 1`). Each device iteration is one
//! `reduce_into` (preallocated output, workspace of `reduce_workspace_bytes`, so nothing is
//! allocated) followed by a device sync.
//!
//! A module of the bench binary `primitives` (`benches/primitives.rs`):
//!
//! ```text
//! cargo bench --bench primitives -- reduce_f32                   # wgpu (lavapipe without a GPU)
//! cargo bench --features cuda --bench primitives -- reduce_f32   # CUDA first
//! ```

use crate::common::{self, DeviceBench};
use criterion::{measurement::WallTime, BenchmarkGroup, BenchmarkId, Criterion, Throughput};
use cubecl::prelude::*;
use cubeprim::{cpu, DType, DeviceTensor, ScanOp, Workspace};

/// (label, shape, axis): the whole buffer, and rows.
fn shapes() -> Vec<(String, Vec<usize>, Option<usize>)> {
    let (n, rows, cols) = common::pick((1 << 24, 4096, 4096), (1 << 14, 16, 1024));
    vec![
        (format!("sum_{n}"), vec![n], None),
        (
            format!("rows_{rows}x{cols}_axis1"),
            vec![rows, cols],
            Some(1),
        ),
    ]
}

struct Device;

impl DeviceBench for Device {
    fn run<R: Runtime>(&self, g: &mut BenchmarkGroup<WallTime>, backend: &str) {
        let client = R::client(&Default::default());
        for (label, shape, axis) in shapes() {
            let n: usize = shape.iter().product();
            // Small integers: the sums are exact whatever their order.
            let data = common::int_f32_data(n);
            let x = DeviceTensor::<R>::from_slice(&client, &data, &shape).unwrap();
            let out_shape: Vec<usize> = match axis {
                Some(a) => shape
                    .iter()
                    .enumerate()
                    .filter(|&(d, _)| d != a)
                    .map(|(_, &s)| s)
                    .collect(),
                None => vec![],
            };
            let out = DeviceTensor::<R>::empty(&client, &out_shape, DType::F32);
            let axis = axis.map(|a| a as isize);
            let bytes = cubeprim::reduce_workspace_bytes(&client, &shape, axis, DType::F32)
                .expect("workspace size");
            let run = |ws: &mut Workspace<R>| {
                cubeprim::reduce_into(&client, &x, axis, ScanOp::Sum, &out, ws)?;
                common::sync(&client);
                Ok(())
            };
            let check = |()| {
                let axis = axis.map(|a| a as usize);
                let want = cpu::reduce(&data, &shape, axis, ScanOp::Sum).unwrap();
                assert_eq!(out.to_vec::<f32>(&client), want, "{label}");
            };
            g.throughput(Throughput::Elements(n as u64));
            common::bench(g, backend, &label, &client, Some(bytes), run, check);
        }
    }
}

fn bench_cpu(g: &mut BenchmarkGroup<WallTime>) {
    for (label, shape, axis) in shapes() {
        let n: usize = shape.iter().product();
        let x = common::int_f32_data(n);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(BenchmarkId::new("cpu", &label), |b| {
            b.iter(|| cpu::reduce(&x, &shape, axis, ScanOp::Sum).unwrap())
        });
    }
}

pub fn reduce_f32(c: &mut Criterion) {
    common::group(c, "reduce_f32", Device, bench_cpu);
}
