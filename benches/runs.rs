//! The run-length family on the best device found against the CPU path: `reduce_by_key_into`
//! (i32 keys in runs of 8 on average, f32 values summed), `unique_consecutive` of the same
//! keys with the run lengths, the sorted `unique` of keys with 1024 distinct values (a sort
//! with indices, then runs) with their counts, and `histogram_into` of u32 keys into 256 bins.
//!
//! Each device iteration is one call followed by a device sync, with a workspace sized once:
//! `reduce_by_key_into` and `histogram_into` write into preallocated outputs and allocate
//! nothing; `unique_consecutive` allocates its outputs (from cubecl's memory pool) and leaves
//! the run count on the device; `unique` also allocates its outputs and reads the count back
//! (the one host sync it does), as its callers do.
//!
//! A module of the bench binary `primitives` (`benches/primitives.rs`):
//!
//! ```text
//! cargo bench --bench primitives -- runs                   # wgpu (lavapipe without a GPU)
//! cargo bench --features cuda --bench primitives -- runs   # CUDA first
//! ```

use crate::common::{self, DeviceBench};
use criterion::{measurement::WallTime, BenchmarkGroup, BenchmarkId, Criterion, Throughput};
use cubecl::prelude::*;
use cubeprim::{cpu, DType, DeviceTensor, IndexType, Payload, ScanOp, SortOptions, Workspace};

const BINS: usize = 256;

/// Elements of the linear passes, and of `unique` (a sort).
fn sizes() -> (usize, usize) {
    common::pick((1 << 24, 1 << 22), (1 << 14, 1 << 14))
}

/// Sorted runs: a new key where the hash of the position is a multiple of 8.
fn run_keys(n: usize) -> Vec<i32> {
    let mut key = 0i32;
    (0..n)
        .map(|i| {
            key += (i > 0 && common::hash(i).is_multiple_of(8)) as i32;
            key
        })
        .collect()
}

/// 1024 distinct keys in no order.
fn unsorted_keys(n: usize) -> Vec<i32> {
    (0..n).map(|i| (common::hash(i) % 1024) as i32).collect()
}

fn bin_keys(n: usize) -> Vec<u32> {
    (0..n).map(|i| common::hash(i) % BINS as u32).collect()
}

struct Device;

impl DeviceBench for Device {
    fn run<R: Runtime>(&self, g: &mut BenchmarkGroup<WallTime>, backend: &str) {
        let client = R::client(&Default::default());
        let (n, n_unique) = sizes();
        let count = cubeprim::new_count(&client);

        // reduce_by_key_into: runs of keys, summed values.
        let keys = run_keys(n);
        // Small integers: the sums are exact whatever their order.
        let values = common::int_f32_data(n);
        let k = DeviceTensor::<R>::from_slice(&client, &keys, &[n]).unwrap();
        let v = DeviceTensor::<R>::from_slice(&client, &values, &[n]).unwrap();
        let out_k = DeviceTensor::<R>::empty(&client, &[n], DType::I32);
        let out_v = DeviceTensor::<R>::empty(&client, &[n], DType::F32);
        let bytes = cubeprim::runs_workspace_bytes(&client, n, DType::I32, Some(DType::F32))
            .expect("workspace size");
        let label = format!("reduce_by_key_{n}");
        let by_key = |ws: &mut Workspace<R>| {
            let (n, op) = (n, ScanOp::Sum);
            cubeprim::reduce_by_key_into(&client, &k, &v, n, op, &out_k, &out_v, &count, ws)?;
            common::sync(&client);
            Ok(())
        };
        let check = |()| {
            let (want_k, want_v) = cpu::reduce_by_key(&keys, &values, ScanOp::Sum);
            let r = cubeprim::read_count(&client, &count);
            assert_eq!(r, want_k.len(), "{label}: count");
            assert_eq!(
                &out_k.to_vec::<i32>(&client)[..r],
                &want_k[..],
                "{label}: keys"
            );
            assert_eq!(
                &out_v.to_vec::<f32>(&client)[..r],
                &want_v[..],
                "{label}: values"
            );
        };
        g.throughput(Throughput::Elements(n as u64));
        common::bench(g, backend, &label, &client, Some(bytes), by_key, check);

        // unique_consecutive of the same keys, with the run lengths.
        let bytes =
            cubeprim::runs_workspace_bytes(&client, n, DType::I32, None).expect("workspace size");
        let label = format!("unique_consecutive_{n}");
        let consecutive = |ws: &mut Workspace<R>| {
            let u = cubeprim::unique_consecutive(&client, &k, n, false, true, ws)?;
            common::sync(&client);
            Ok(u)
        };
        let check = |u: cubeprim::UniqueConsecutive<R>| {
            let (want_u, want_c, _) = cpu::unique_consecutive(&keys);
            let r = cubeprim::read_count(&client, &u.count);
            assert_eq!(r, want_u.len(), "{label}: count");
            assert_eq!(
                &u.values.to_vec::<i32>(&client)[..r],
                &want_u[..],
                "{label}"
            );
            let counts = common::indices(&client, u.counts.as_ref().expect("counts"));
            assert_eq!(&counts[..r], &want_c[..], "{label}: counts");
        };
        common::bench(g, backend, &label, &client, Some(bytes), consecutive, check);

        // histogram_into: 256 bins.
        let keys = bin_keys(n);
        let k = DeviceTensor::<R>::from_slice(&client, &keys, &[n]).unwrap();
        let hist = DeviceTensor::<R>::empty(&client, &[BINS], DType::U32);
        let bytes = cubeprim::histogram_workspace_bytes(BINS);
        let label = format!("histogram_{BINS}_bins_{n}");
        let histogram = |ws: &mut Workspace<R>| {
            cubeprim::histogram_into(&client, &k, BINS, n, &hist, ws)?;
            common::sync(&client);
            Ok(())
        };
        let check = |()| {
            let want = cpu::histogram(&keys, BINS);
            assert_eq!(hist.to_vec::<u32>(&client), want, "{label}");
        };
        common::bench(g, backend, &label, &client, Some(bytes), histogram, check);

        // unique: sort with indices, then runs; the count read back.
        let n = n_unique;
        let keys = unsorted_keys(n);
        let k = DeviceTensor::<R>::from_slice(&client, &keys, &[n]).unwrap();
        let sort = SortOptions::default();
        let payload = Payload::Indices(IndexType::U32);
        let bytes = cubeprim::sort_workspace_bytes(&client, &[n], DType::I32, payload, false, sort)
            .expect("workspace size")
            .max(cubeprim::runs_workspace_bytes(&client, n, DType::I32, None).expect("ws"));
        let label = format!("unique_1024_values_{n}");
        let unique = |ws: &mut Workspace<R>| {
            let u = cubeprim::unique(&client, &k, false, true, ws)?;
            common::sync(&client);
            Ok(u)
        };
        let check = |u: cubeprim::UniqueConsecutive<R>| {
            let (want_u, want_c, _) = cpu::unique(&keys);
            assert_eq!(u.values.to_vec::<i32>(&client), want_u, "{label}");
            let counts = common::indices(&client, u.counts.as_ref().expect("counts"));
            assert_eq!(counts, want_c, "{label}: counts");
        };
        g.throughput(Throughput::Elements(n as u64));
        common::bench(g, backend, &label, &client, Some(bytes), unique, check);
    }
}

fn bench_cpu(g: &mut BenchmarkGroup<WallTime>) {
    let (n, n_unique) = sizes();
    let keys = run_keys(n);
    let values = common::int_f32_data(n);
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function(BenchmarkId::new("cpu", format!("reduce_by_key_{n}")), |b| {
        b.iter(|| cpu::reduce_by_key(&keys, &values, ScanOp::Sum))
    });
    g.bench_function(
        BenchmarkId::new("cpu", format!("unique_consecutive_{n}")),
        |b| b.iter(|| cpu::unique_consecutive(&keys)),
    );
    let keys = bin_keys(n);
    let label = format!("histogram_{BINS}_bins_{n}");
    g.bench_function(BenchmarkId::new("cpu", label), |b| {
        b.iter(|| cpu::histogram(&keys, BINS))
    });
    let keys = unsorted_keys(n_unique);
    g.throughput(Throughput::Elements(n_unique as u64));
    let label = format!("unique_1024_values_{n_unique}");
    g.bench_function(BenchmarkId::new("cpu", label), |b| {
        b.iter(|| cpu::unique(&keys))
    });
}

pub fn runs(c: &mut Criterion) {
    common::group(c, "runs", Device, bench_cpu);
}
