//! Runs the scans on the best device found — CUDA, else wgpu, else the CPU path — and prints
//! results with timings.
//!
//! ```text
//! cargo run --release --example demo                  # wgpu (Vulkan / Metal / DX12), else CPU
//! cargo run --release --features cuda --example demo  # CUDA first
//! CUBEPRIM_BACKEND=cpu cargo run --release --example demo
//! ```
//!
//! Exits with status 1 when a device result disagrees with the CPU reference.

use cubecl::prelude::*;
use cubeprim::device::{best_backend_or, Backend};
use cubeprim::{cpu, DType, DeviceTensor, ScanAlgorithm, ScanOp, ScanOptions, Workspace};
use half::{bf16, f16};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::process::ExitCode;
use std::time::{Duration, Instant};

fn main() -> ExitCode {
    // Probing a runtime that is not there panics inside cubecl (and is caught): keep it quiet.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    // `CUBEPRIM_BACKEND=cuda|wgpu|cpu` picks one (the program reads it; the library reads no
    // environment).
    let backend = best_backend_or(std::env::var("CUBEPRIM_BACKEND").ok().as_deref());
    std::panic::set_hook(hook);

    let result = match backend {
        #[cfg(feature = "cuda")]
        Backend::Cuda => on_device::<cubecl::cuda::CudaRuntime>(),
        #[cfg(feature = "wgpu")]
        Backend::Wgpu => on_device::<cubecl::wgpu::WgpuRuntime>(),
        Backend::Cpu => Ok(cpu_only()),
        #[allow(unreachable_patterns)]
        other => {
            println!("{other:?} was asked for, but this build lacks its feature: CPU path");
            Ok(cpu_only())
        }
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            println!("\nSome device results disagree with the CPU reference.");
            ExitCode::FAILURE
        }
        Err(e) => {
            println!("\nerror: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A small 2-D example, small enough to print.
const SMALL: [f32; 10] = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0];
const SMALL_SHAPE: [usize; 2] = [2, 5];

/// One timed case.
struct Case {
    name: &'static str,
    shape: &'static [usize],
    axis: usize,
    op: ScanOp,
    indices: bool,
    algorithm: ScanAlgorithm,
}

const CASES: [Case; 4] = [
    Case {
        name: "cumsum f32, one tile per row",
        shape: &[1024, 4096],
        axis: 1,
        op: ScanOp::Sum,
        indices: false,
        algorithm: ScanAlgorithm::Auto,
    },
    Case {
        name: "cumsum f32, 1-D, decoupled look-back",
        shape: &[1 << 24],
        axis: 0,
        op: ScanOp::Sum,
        indices: false,
        algorithm: ScanAlgorithm::Auto,
    },
    Case {
        name: "cumsum f32, 1-D, reduce-then-scan",
        shape: &[1 << 24],
        axis: 0,
        op: ScanOp::Sum,
        indices: false,
        algorithm: ScanAlgorithm::ReduceThenScan,
    },
    Case {
        name: "cummax f32 + indices, strided axis",
        shape: &[4096, 1024],
        axis: 0,
        op: ScanOp::Max,
        indices: true,
        algorithm: ScanAlgorithm::Auto,
    },
];

fn on_device<R: Runtime>() -> cubeprim::Result<bool> {
    let client = R::client(&Default::default());
    let hw = &client.properties().hardware;
    println!(
        "Device: {} (plane width {}..{}, plane ops reported: {})",
        R::name(&client),
        hw.plane_size_min,
        hw.plane_size_max,
        client
            .features()
            .plane
            .contains(cubecl::ir::features::Plane::Ops)
    );

    let dtypes: Vec<String> = [
        dtype_check::<R, f32>(&client),
        dtype_check::<R, f16>(&client),
        dtype_check::<R, bf16>(&client),
        dtype_check::<R, f64>(&client),
        dtype_check::<R, i32>(&client),
        dtype_check::<R, u32>(&client),
        dtype_check::<R, i64>(&client),
        dtype_check::<R, u64>(&client),
    ]
    .into_iter()
    .collect::<cubeprim::Result<_>>()?;
    println!("dtypes: {}", dtypes.join(", "));

    println!("\n== Small examples ==");
    let x = DeviceTensor::<R>::from_slice(&client, &SMALL, &SMALL_SHAPE).unwrap();
    show("x", &SMALL, &SMALL_SHAPE);
    let mut ok = true;
    let mut ws = Workspace::new();
    let examples: [(&str, isize, ScanOp, ScanOptions); 5] = [
        ("cumsum(x, axis=1)", 1, ScanOp::Sum, ScanOptions::default()),
        (
            "cumprod(x, axis=1)",
            1,
            ScanOp::Prod,
            ScanOptions::default(),
        ),
        ("cummin(x, axis=0)", 0, ScanOp::Min, ScanOptions::default()),
        (
            "cumsum(x, axis=1), exclusive, reverse",
            1,
            ScanOp::Sum,
            ScanOptions::default().exclusive().reverse(),
        ),
        (
            "cummax(x, axis=1), exclusive",
            1,
            ScanOp::Max,
            ScanOptions::default().exclusive(),
        ),
    ];
    for (label, axis, op, opts) in examples {
        let y = cubeprim::scan(&client, &x, axis, op, opts, &mut ws)?.to_vec::<f32>(&client);
        show(label, &y, &SMALL_SHAPE);
        ok &= y == cpu::scan(&SMALL, &SMALL_SHAPE, axis as usize, op, opts).unwrap();
    }
    let (v, i) = cubeprim::cummax_with_indices(&client, &x, 1)?;
    show(
        "cummax(x, axis=1).values",
        &v.to_vec::<f32>(&client),
        &SMALL_SHAPE,
    );
    let i = indices_to_i64(&client, &i);
    show("cummax(x, axis=1).indices", &i, &SMALL_SHAPE);
    let (_, want) =
        cpu::scan_with_indices(&SMALL, &SMALL_SHAPE, 1, ScanOp::Max, Default::default()).unwrap();
    ok &= i == want;
    println!(
        "small examples match the CPU reference: {}",
        if ok { "yes" } else { "NO" }
    );

    println!("\n== Timings: mean of the calls after the first (which compiles), device synced ==");
    println!(
        "{:<38} {:>14} {:>10} {:>8} {:>10} {:>10} {:>9} {:>8}  check",
        "case", "shape", "device ms", "Gelem/s", "1st call", "cpu ms", "max err", "tol"
    );
    for case in &CASES {
        ok &= time_case(&client, case)?;
    }
    ok &= beyond_scans(&client)?;
    Ok(ok)
}

/// Sort, top-k, select and reduce on the device against the CPU reference (one call each
/// after a warm-up call that compiles the kernels).
fn beyond_scans<R: Runtime>(client: &ComputeClient<R>) -> cubeprim::Result<bool> {
    println!("\n== Sort, top-k, select, reduce (2^20 f32, device synced) ==");
    let n = 1 << 20;
    let data = random_data(n, ScanOp::Sum, 99);
    let x = DeviceTensor::<R>::from_slice(client, &data, &[n]).unwrap();
    let mut ws = Workspace::new();
    let mut ok = true;
    let mut report = |name: &str, t: Duration, good: bool| {
        println!(
            "{name:<38} {:>10.3} ms  {}",
            ms(t),
            if good { "ok" } else { "WRONG" }
        );
        ok &= good;
    };

    let opts = cubeprim::SortOptions::default();
    cubeprim::sort(client, &x, opts, &mut ws)?;
    let t = Instant::now();
    let y = cubeprim::sort(client, &x, opts, &mut ws)?;
    let got: Vec<f32> = y.to_vec(client);
    report(
        "sort (stable radix)",
        t.elapsed(),
        got == cpu::sort_rows(&data, n, false),
    );

    let rows = DeviceTensor::<R>::from_slice(client, &data, &[256, 4096]).unwrap();
    let idx = cubeprim::IndexType::U32;
    cubeprim::top_k(client, &rows, 8, true, idx, &mut ws)?;
    let t = Instant::now();
    let (v, _) = cubeprim::top_k(client, &rows, 8, true, idx, &mut ws)?;
    let got: Vec<f32> = v.to_vec(client);
    let want = cpu::top_k_rows(&data, 4096, 8, true).0;
    report("top_k k=8 of [256, 4096]", t.elapsed(), got == want);

    let mask: Vec<u32> = data.iter().map(|&v| (v > 0.0) as u32).collect();
    let m = DeviceTensor::<R>::from_slice(client, &mask, &[n]).unwrap();
    cubeprim::masked_select(client, &x, &m, &mut ws)?;
    let t = Instant::now();
    let sel = cubeprim::masked_select(client, &x, &m, &mut ws)?;
    let got: Vec<f32> = sel.to_vec(client);
    report(
        "masked_select (x > 0)",
        t.elapsed(),
        got == cpu::select(&data, &mask),
    );

    let t = Instant::now();
    let total = cubeprim::reduce(client, &x, None, ScanOp::Max, &mut ws)?;
    let got = total.to_vec::<f32>(client)[0];
    let want = data.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
    report("reduce max", t.elapsed(), got == want);
    Ok(ok)
}

/// Whether this runtime scans `E`: a cumsum of 1..=8 must match the CPU, or be refused with
/// [`cubeprim::Error::UnsupportedDType`].
fn dtype_check<R: Runtime, E: cpu::ScanElement>(
    client: &ComputeClient<R>,
) -> cubeprim::Result<String> {
    let v: Vec<E> = (1..=8).map(|i| E::from_f64(i as f64)).collect();
    let x = DeviceTensor::<R>::from_slice(client, &v, &[8]).unwrap();
    let name = E::DTYPE;
    match cubeprim::cumsum(client, &x, 0) {
        Ok(y) => {
            let want = cpu::scan(&v, &[8], 0, ScanOp::Sum, ScanOptions::default()).unwrap();
            let ok = y.to_vec::<E>(client) == want;
            Ok(format!("{name} {}", if ok { "ok" } else { "WRONG" }))
        }
        Err(cubeprim::Error::UnsupportedDType { .. }) => Ok(format!("{name} unsupported")),
        Err(e) => Err(e),
    }
}

/// Times one case on the device and on the CPU, and checks the device against the CPU
/// reference (computed in f64 for sums, exact for max with indices).
fn time_case<R: Runtime>(client: &ComputeClient<R>, case: &Case) -> cubeprim::Result<bool> {
    let n: usize = case.shape.iter().product();
    let data = random_data(n, case.op, 1);
    let x = DeviceTensor::<R>::from_slice(client, &data, case.shape).unwrap();
    let opts = ScanOptions::default().algorithm(case.algorithm);
    let axis = case.axis as isize;
    // Scratch sized once up front (the two-phase call) and reused by every call.
    let bytes =
        cubeprim::scan_workspace_bytes(client, case.shape, axis, DType::F32, case.indices, opts)?;
    let mut ws = Workspace::with_capacity(client, bytes);
    let run = |ws: &mut Workspace<R>| {
        if case.indices {
            cubeprim::scan_with_indices(client, &x, axis, case.op, opts, ws)
                .map(|(v, i)| (v, Some(i)))
        } else {
            cubeprim::scan(client, &x, axis, case.op, opts, ws).map(|v| (v, None))
        }
    };
    let sync = || cubecl::future::block_on(client.sync()).expect("device sync");

    let t = Instant::now();
    let (y, idx) = run(&mut ws)?;
    sync();
    let first = t.elapsed();
    // About a second of work, 2..=20 calls.
    let iters =
        (Duration::from_secs(1).as_secs_f64() / first.as_secs_f64()).clamp(2.0, 20.0) as u32;
    let t = Instant::now();
    for _ in 0..iters {
        run(&mut ws)?;
        sync();
    }
    let device = t.elapsed() / iters;

    let (host, cpu_f32) = time_cpu(&data, case);

    let got = y.to_vec::<f32>(client);
    let (err, tol, pass) = if case.indices {
        let idx_ok = indices_to_i64(client, &idx.expect("indices")) == cpu_f32.1;
        let err = max_abs_diff(&got, &cpu_f32.0);
        (err, 0.0, err == 0.0 && idx_ok)
    } else {
        let data64: Vec<f64> = data.iter().map(|&v| v as f64).collect();
        let want = cpu::scan(
            &data64,
            case.shape,
            case.axis,
            case.op,
            ScanOptions::default(),
        )
        .unwrap();
        let scale = want.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        let err = got
            .iter()
            .zip(&want)
            .fold(0.0f64, |m, (&g, &w)| m.max((g as f64 - w).abs()));
        (err as f32, (1e-4 * scale) as f32, err <= 1e-4 * scale)
    };
    println!(
        "{:<38} {:>14} {:>10.3} {:>8.3} {:>10.1} {:>10.3} {:>9.2e} {:>8.1e}  {}",
        case.name,
        format!("{:?}", case.shape),
        ms(device),
        n as f64 / device.as_secs_f64() / 1e9,
        ms(first),
        ms(host),
        err,
        tol,
        if pass { "PASS" } else { "FAIL" }
    );
    Ok(pass)
}

/// Without a device: the same small examples and sizes through the CPU reference.
fn cpu_only() -> bool {
    println!("Device: none found (CPU path: cubeprim::cpu)");
    println!("\n== Small examples ==");
    show("x", &SMALL, &SMALL_SHAPE);
    let sum = cpu::scan(&SMALL, &SMALL_SHAPE, 1, ScanOp::Sum, ScanOptions::default()).unwrap();
    show("cumsum(x, axis=1)", &sum, &SMALL_SHAPE);
    let prod = cpu::scan(
        &SMALL,
        &SMALL_SHAPE,
        1,
        ScanOp::Prod,
        ScanOptions::default(),
    )
    .unwrap();
    show("cumprod(x, axis=1)", &prod, &SMALL_SHAPE);
    let min = cpu::scan(&SMALL, &SMALL_SHAPE, 0, ScanOp::Min, ScanOptions::default()).unwrap();
    show("cummin(x, axis=0)", &min, &SMALL_SHAPE);
    let opts = ScanOptions::default().exclusive().reverse();
    let rev = cpu::scan(&SMALL, &SMALL_SHAPE, 1, ScanOp::Sum, opts).unwrap();
    show("cumsum(x, axis=1), exclusive, reverse", &rev, &SMALL_SHAPE);
    let (v, i) =
        cpu::scan_with_indices(&SMALL, &SMALL_SHAPE, 1, ScanOp::Max, Default::default()).unwrap();
    show("cummax(x, axis=1).values", &v, &SMALL_SHAPE);
    show("cummax(x, axis=1).indices", &i, &SMALL_SHAPE);

    println!("\n== Timings ==");
    for case in CASES.iter().filter(|c| c.algorithm == ScanAlgorithm::Auto) {
        let n: usize = case.shape.iter().product();
        let data = random_data(n, case.op, 1);
        let (host, _) = time_cpu(&data, case);
        let op = match case.op {
            ScanOp::Sum => "cumsum",
            ScanOp::Prod => "cumprod",
            ScanOp::Max => "cummax",
            ScanOp::Min => "cummin",
            ScanOp::LogSumExp => "logcumsumexp",
            _ => "scan",
        };
        let what = if case.indices { " + indices" } else { "" };
        println!(
            "{:<38} {:>12}  cpu {:>8.3} ms ({:.2} Gelem/s)",
            format!("{op} f32{what}, axis {}", case.axis),
            format!("{:?}", case.shape),
            ms(host),
            n as f64 / host.as_secs_f64() / 1e9
        );
    }
    true
}

/// One CPU reference run of a case (f32, as the device computes): its time and result.
fn time_cpu(data: &[f32], case: &Case) -> (Duration, (Vec<f32>, Vec<i64>)) {
    let opts = ScanOptions::default();
    let t = Instant::now();
    let out = if case.indices {
        cpu::scan_with_indices(data, case.shape, case.axis, case.op, opts).unwrap()
    } else {
        (
            cpu::scan(data, case.shape, case.axis, case.op, opts).unwrap(),
            Vec::new(),
        )
    };
    (t.elapsed(), out)
}

/// Uniform in [-1, 1) for sums; small integers (many ties) for max / min.
fn random_data(n: usize, op: ScanOp, seed: u64) -> Vec<f32> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n)
        .map(|_| match op {
            ScanOp::Max | ScanOp::Min => rng.random_range(0..1000) as f32,
            _ => rng.random_range(-1.0..1.0),
        })
        .collect()
}

/// Reads indices back whatever their dtype (i64 where the runtime has it, else i32).
fn indices_to_i64<R: Runtime>(client: &ComputeClient<R>, t: &DeviceTensor<R>) -> Vec<i64> {
    match t.dtype {
        DType::I64 => t.to_vec::<i64>(client),
        _ => t.to_vec::<i32>(client).into_iter().map(i64::from).collect(),
    }
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).fold(0.0, |m, (x, y)| m.max((x - y).abs()))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn show<E: std::fmt::Debug>(label: &str, v: &[E], shape: &[usize]) {
    println!("{label}:");
    for row in v.chunks(shape[shape.len() - 1]) {
        println!("  {row:?}");
    }
}
