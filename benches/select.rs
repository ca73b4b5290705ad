//! Compaction on the best device found against the CPU path: f32 data under a u8 mask with
//! half of its flags set (`masked_select`'s `select_into`), the stable `partition_into` of the
//! same data, and `nonzero_into` of the mask as a matrix (its 2-d indices). Each device
//! iteration is one call into preallocated outputs and count, with a workspace of
//! `select_workspace_bytes` (nothing is allocated), followed by a device sync; the count stays
//! on the device.
//!
//! A module of the bench binary `primitives` (`benches/primitives.rs`):
//!
//! ```text
//! cargo bench --bench primitives -- select_f32                   # wgpu (lavapipe without a GPU)
//! cargo bench --features cuda --bench primitives -- select_f32   # CUDA first
//! ```

use crate::common::{self, DeviceBench};
use criterion::{measurement::WallTime, BenchmarkGroup, BenchmarkId, Criterion, Throughput};
use cubecl::prelude::*;
use cubeprim::{cpu, DType, DeviceTensor, Workspace};

/// The element count, and the mask's shape for `nonzero` (as many elements).
fn sizes() -> (usize, [usize; 2]) {
    common::pick((1 << 24, [4096, 4096]), (1 << 14, [16, 1024]))
}

/// Half of the flags set, at well-mixed positions.
fn mask(n: usize) -> Vec<u8> {
    (0..n).map(|i| (common::hash(i) >> 9) as u8 & 1).collect()
}

struct Device;

impl DeviceBench for Device {
    fn run<R: Runtime>(&self, g: &mut BenchmarkGroup<WallTime>, backend: &str) {
        let client = R::client(&Default::default());
        let (n, shape2) = sizes();
        let data = common::f32_data(n);
        let flags = mask(n);
        let x = DeviceTensor::<R>::from_slice(&client, &data, &[n]).unwrap();
        let f = DeviceTensor::<R>::from_slice(&client, &flags, &[n]).unwrap();
        let f2 = DeviceTensor::<R>::from_slice(&client, &flags, &shape2).unwrap();
        let out = DeviceTensor::<R>::empty(&client, &[n], DType::F32);
        let idx_dtype = cubeprim::nonzero_index_dtype(&client);
        let idx = DeviceTensor::<R>::empty(&client, &[n, 2], idx_dtype);
        let count = cubeprim::new_count(&client);
        let bytes = [DType::F32, idx_dtype]
            .map(|d| cubeprim::select_workspace_bytes(&client, n, DType::U8, d).expect("ws"))
            .into_iter()
            .max()
            .unwrap();
        let bytes = Some(bytes);
        g.throughput(Throughput::Elements(n as u64));

        let label = format!("select_half_{n}");
        let select = |ws: &mut Workspace<R>| {
            cubeprim::select_into(&client, &x, &f, n, &out, &count, ws)?;
            common::sync(&client);
            Ok(())
        };
        let check = |()| {
            let want = cpu::select(&data, &flags);
            let k = cubeprim::read_count(&client, &count);
            assert_eq!(k, want.len(), "{label}: count");
            assert_eq!(&out.to_vec::<f32>(&client)[..k], &want[..], "{label}");
        };
        common::bench(g, backend, &label, &client, bytes, select, check);

        let label = format!("partition_half_{n}");
        let partition = |ws: &mut Workspace<R>| {
            cubeprim::partition_into(&client, &x, &f, n, &out, &count, ws)?;
            common::sync(&client);
            Ok(())
        };
        let check = |()| {
            let (want, k) = cpu::partition(&data, &flags);
            assert_eq!(cubeprim::read_count(&client, &count), k, "{label}: count");
            assert_eq!(out.to_vec::<f32>(&client), want, "{label}");
        };
        common::bench(g, backend, &label, &client, bytes, partition, check);

        let label = format!("nonzero_half_{}x{}", shape2[0], shape2[1]);
        let nonzero = |ws: &mut Workspace<R>| {
            cubeprim::nonzero_into(&client, &f2, &idx, &count, ws)?;
            common::sync(&client);
            Ok(())
        };
        let check = |()| {
            let want = cpu::nonzero(&flags, &shape2).unwrap();
            let k = cubeprim::read_count(&client, &count);
            assert_eq!(2 * k, want.len(), "{label}: count");
            assert_eq!(
                &common::indices(&client, &idx)[..2 * k],
                &want[..],
                "{label}"
            );
        };
        common::bench(g, backend, &label, &client, bytes, nonzero, check);
    }
}

fn bench_cpu(g: &mut BenchmarkGroup<WallTime>) {
    let (n, shape2) = sizes();
    let data = common::f32_data(n);
    let flags = mask(n);
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function(BenchmarkId::new("cpu", format!("select_half_{n}")), |b| {
        b.iter(|| cpu::select(&data, &flags))
    });
    g.bench_function(
        BenchmarkId::new("cpu", format!("partition_half_{n}")),
        |b| b.iter(|| cpu::partition(&data, &flags)),
    );
    let label = format!("nonzero_half_{}x{}", shape2[0], shape2[1]);
    g.bench_function(BenchmarkId::new("cpu", label), |b| {
        b.iter(|| cpu::nonzero(&flags, &shape2).unwrap())
    });
}

pub fn select_f32(c: &mut Criterion) {
    common::group(c, "select_f32", Device, bench_cpu);
}
