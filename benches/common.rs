//! What the family modules ([`crate::reduce`], [`crate::select`], [`crate::runs`],
//! [`crate::topk`], [`crate::recurrence`]) share: the device found (probed once), the group
//! settings, the sizes of a run as a test, deterministic data and a device sync.
//!
//! `cargo test --benches` runs every bench function once, as a test (criterion's test mode:
//! the binary is run without `--bench`); there the modules take small shapes (at most 2^14
//! elements, one shape per bench) so that CI, where wgpu runs on lavapipe, stays fast. Under
//! `cargo bench` they take the real ones (2^20 to 2^24 elements).

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion};
use cubecl::prelude::*;
use cubeprim::device::{best_backend_or, Backend};
use cubeprim::{DType, DeviceTensor, Error, Workspace};
use std::sync::OnceLock;
use std::time::Duration;

/// Whether this run is criterion's test mode (`cargo test --benches`: no `--bench` argument),
/// where each bench runs once and the shapes are small.
pub fn test_mode() -> bool {
    static TEST: OnceLock<bool> = OnceLock::new();
    *TEST.get_or_init(|| !std::env::args().any(|a| a == "--bench"))
}

/// The real shapes under `cargo bench`, the small ones in test mode.
pub fn pick<T>(real: T, test: T) -> T {
    if test_mode() {
        test
    } else {
        real
    }
}

/// The best backend, probed once (probing a runtime that is not there panics inside cubecl and
/// is caught: keep it quiet).
pub fn backend() -> Backend {
    static BACKEND: OnceLock<Backend> = OnceLock::new();
    *BACKEND.get_or_init(|| {
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        // `CUBEPRIM_BACKEND=cuda|wgpu|cpu` picks one (the bench reads it, not the library).
        let backend = best_backend_or(std::env::var("CUBEPRIM_BACKEND").ok().as_deref());
        std::panic::set_hook(hook);
        backend
    })
}

/// The device half of a group: benches over one runtime, labelled `backend` ("cuda", "wgpu").
pub trait DeviceBench {
    fn run<R: Runtime>(&self, g: &mut BenchmarkGroup<WallTime>, backend: &str);
}

/// A group `name` (10 samples, 1 s warm-up, 3 s measurement): `device` on the best device
/// found, then `cpu` (the CPU path, the comparison).
pub fn group(
    c: &mut Criterion,
    name: &str,
    device: impl DeviceBench,
    cpu: impl FnOnce(&mut BenchmarkGroup<WallTime>),
) {
    let mut g = c.benchmark_group(name);
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    match backend() {
        #[cfg(feature = "cuda")]
        Backend::Cuda => device.run::<cubecl::cuda::CudaRuntime>(&mut g, "cuda"),
        #[cfg(feature = "wgpu")]
        Backend::Wgpu => device.run::<cubecl::wgpu::WgpuRuntime>(&mut g, "wgpu"),
        _ => eprintln!("{name}: no device found, benchmarking the CPU path only"),
    }
    cpu(&mut g);
    g.finish();
}

/// Waits for every launch of `client` to finish.
pub fn sync<R: Runtime>(client: &ComputeClient<R>) {
    cubecl::future::block_on(client.sync()).expect("device sync");
}

/// Benches `call` (one op and a device sync) as `backend/label`. The first time criterion runs it (never,
/// where a filter leaves it out), `call` runs once with a workspace of `bytes` (the op's size
/// query; `None`: the op has none, the workspace grows in that call) and `check` asserts its
/// result against the CPU path; the timed calls then reuse that workspace, so they allocate no
/// scratch. Where the query answers less than the call needs (`ScratchTooSmall`: a bug of the
/// query), this says so on stderr and goes on with a workspace grown by the call instead.
pub fn bench<R: Runtime, T>(
    g: &mut BenchmarkGroup<WallTime>,
    backend: &str,
    label: &str,
    client: &ComputeClient<R>,
    bytes: Option<usize>,
    call: impl Fn(&mut Workspace<R>) -> cubeprim::Result<T>,
    check: impl FnOnce(T),
) {
    let what = format!("{backend}/{label}");
    let mut ws: Option<Workspace<R>> = None;
    let mut check = Some(check);
    g.bench_function(BenchmarkId::new(backend, label), |b| {
        let ws = ws.get_or_insert_with(|| {
            let (ws, t) = first_call(client, bytes, &what, &call);
            check.take().expect("checked once")(t);
            ws
        });
        b.iter(|| call(ws).unwrap_or_else(|e| panic!("{what}: {e:?}")))
    });
}

fn first_call<R: Runtime, T>(
    client: &ComputeClient<R>,
    bytes: Option<usize>,
    what: &str,
    call: impl Fn(&mut Workspace<R>) -> cubeprim::Result<T>,
) -> (Workspace<R>, T) {
    let mut ws = match bytes {
        Some(bytes) => Workspace::with_capacity(client, bytes),
        None => Workspace::new(),
    };
    match call(&mut ws) {
        Ok(t) => (ws, t),
        Err(Error::ScratchTooSmall { needed, available }) => {
            eprintln!(
                "WARNING {what}: its workspace size query answers {available} bytes, \
                 the call needs {needed}; timing it with a grown workspace"
            );
            let mut ws = Workspace::new();
            let t = call(&mut ws).unwrap_or_else(|e| panic!("{what}: {e:?}"));
            (ws, t)
        }
        Err(e) => panic!("{what}: {e:?}"),
    }
}

/// A well-mixed 32-bit hash of a position.
pub fn hash(i: usize) -> u32 {
    let x = (i as u32).wrapping_mul(2_654_435_761) ^ (i as u32 >> 7);
    x ^ (x >> 15)
}

/// Deterministic f32 values in [-1, 1); their distribution does not change the timing.
pub fn f32_data(n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| (hash(i) % 2001) as f32 / 1000.0 - 1.0)
        .collect()
}

/// Deterministic small integers (-8 to 8) as f32: every partial sum of up to 2^24 of them is
/// exact, so a device sum, whatever its order, equals the CPU path's.
pub fn int_f32_data(n: usize) -> Vec<f32> {
    (0..n).map(|i| (hash(i) % 17) as f32 - 8.0).collect()
}

/// An index tensor (u32, i32 or i64: the index dtype of the runtime) read back as i64.
pub fn indices<R: Runtime>(client: &ComputeClient<R>, t: &DeviceTensor<R>) -> Vec<i64> {
    match t.dtype {
        DType::I64 => t.to_vec::<i64>(client),
        DType::I32 => t.to_vec::<i32>(client).into_iter().map(i64::from).collect(),
        DType::U32 => t.to_vec::<u32>(client).into_iter().map(i64::from).collect(),
        d => panic!("indices of dtype {d}"),
    }
}

/// Asserts that `got` is `want` up to `tol` times (1 + |want|) per element (float results
/// whose rounding differs from the CPU path's).
pub fn assert_close(got: &[f32], want: &[f32], tol: f32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "{what}: element {i} is {g}, the CPU path gives {w}"
        );
    }
}
