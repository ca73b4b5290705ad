//! The scan family.
//!
//! `bench_gpu scan [cuda|wgpu] [OUT.json] [--quick] [--only TEXT] [--diag [--tiles LIST]]
//! [--sanitize]` (`OUT.json` is `--out`'s path; `--only TEXT`: the cases whose name contains
//! TEXT).
//!
//! Every case is first checked against the CPU reference on fresh random data, then timed:
//! 3 warm-up calls, then `reps` calls back to back and one sync (`host_ms`: the mean time per
//! call by the host's wall clock, so launch overhead counts). Then the same calls again timed by
//! the device clock between two stamp kernels (`ours_ms` on CUDA, see [`super::Stamps`]), as
//! the peers' CUDA events time them. The device copy of 2^28 f32 (a vectorised CubeCL copy
//! kernel) is measured in the same run and is the floor each scan is compared with.

use super::{Common, Report, Times};
use cubecl::prelude::*;
use cubeprim::{DType, DeviceTensor, ScanAlgorithm, ScanOp, ScanOptions, Workspace};
use rand::{Rng, SeedableRng};
use std::time::Instant;

/// Host-clocked mean of `reps` calls back to back, then their device time (the same calls
/// again, timed by the runtime's timestamps where it has them).
pub fn time_ms<R: Runtime>(client: &ComputeClient<R>, reps: usize, mut f: impl FnMut()) -> Times {
    super::warm_up(client, &mut f);
    let t = Instant::now();
    for _ in 0..reps {
        f();
    }
    cubecl::future::block_on(client.sync()).unwrap();
    let host = t.elapsed().as_secs_f64() * 1e3 / reps as f64;
    Times {
        host,
        device: super::device_ms(client, reps, f),
    }
}

pub fn random_f32(n: usize, seed: u64, lo: f32, hi: f32) -> Vec<f32> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..n).map(|_| rng.random_range(lo..hi)).collect()
}

/// Max error of `got` against `want`, relative to the running sum of |x| (the scale of a
/// prefix sum's rounding) or to |want| for the other ops.
fn check(got: &[f64], want: &[f64], scale: &[f64]) -> (f64, bool) {
    let mut worst = 0.0f64;
    let mut ok = got.len() == want.len();
    for i in 0..got.len().min(want.len()) {
        let (g, w) = (got[i], want[i]);
        if g.is_nan() && w.is_nan() {
            continue;
        }
        let e = (g - w).abs() / scale[i].max(1.0);
        // NaN errors fail too.
        if e.is_nan() || e > 1e-4 {
            ok = false;
        }
        worst = worst.max(if e.is_nan() { f64::INFINITY } else { e });
    }
    (worst, ok)
}

#[allow(clippy::too_many_arguments)]
fn scan_case<R: Runtime>(
    client: &ComputeClient<R>,
    report: &mut Report,
    name: &str,
    shape: &[usize],
    op: ScanOp,
    dtype: DType,
    opts: ScanOptions,
    indices: bool,
    reps: usize,
) {
    let n: usize = shape.iter().product();
    let done = report
        .cases
        .iter()
        .filter(|c| !c.op.starts_with("copy"))
        .count();
    let seed = done as u64 * 7919 + 1;
    let (lo, hi) = if op == ScanOp::Prod {
        (0.999, 1.001)
    } else {
        (-1.0, 1.0)
    };
    let host = random_f32(n, seed, lo, hi);
    let axis = shape.len() - 1;
    let x = match dtype {
        DType::F32 => DeviceTensor::<R>::from_slice(client, &host, shape).unwrap(),
        DType::BF16 => {
            let v: Vec<half::bf16> = host.iter().map(|&f| half::bf16::from_f32(f)).collect();
            DeviceTensor::<R>::from_slice(client, &v, shape).unwrap()
        }
        DType::I32 => {
            let v: Vec<i32> = host.iter().map(|&f| (f * 100.0) as i32).collect();
            DeviceTensor::<R>::from_slice(client, &v, shape).unwrap()
        }
        _ => unimplemented!("bench dtype"),
    };
    // Outputs and scratch allocated once, as a performance-minded caller does (CUB style).
    let mut ws = Workspace::<R>::new();
    let out = DeviceTensor::<R>::empty(client, shape, dtype);
    let idx =
        indices.then(|| DeviceTensor::<R>::empty(client, shape, cubeprim::index_dtype(client)));
    let run = |ws: &mut Workspace<R>| {
        cubeprim::scan_into(client, &x, &out, idx.as_ref(), -1, op, opts, ws).unwrap();
    };
    // Correctness on this data (poison the output first: every element must be written).
    {
        let poison = vec![0xAAu8; n * dtype.size()];
        let p = DeviceTensor::<R>::from_parts(
            client.create_from_slice(&poison),
            shape.to_vec(),
            out.strides.clone(),
            0,
            dtype,
        );
        cubeprim::scan_into(client, &x, &p, idx.as_ref(), -1, op, opts, &mut ws).unwrap();
        let same: Vec<u8> =
            bytemuck::pod_collect_to_vec(&client.read_one_unchecked(p.handle.clone()));
        run(&mut ws);
        let again: Vec<u8> =
            bytemuck::pod_collect_to_vec(&client.read_one_unchecked(out.handle.clone()));
        assert!(same[..] == again[..n * dtype.size()], "{name}: poisoned and fresh outputs differ (unwritten elements or a non-deterministic result)");
    }
    let (got, want, scale): (Vec<f64>, Vec<f64>, Vec<f64>) = match dtype {
        DType::F32 => {
            let g: Vec<f64> = out
                .to_vec::<f32>(client)
                .iter()
                .map(|&v| v as f64)
                .collect();
            let w = cubeprim::cpu::scan(&host, shape, axis, op, opts).unwrap();
            (
                g,
                w.iter().map(|&v| v as f64).collect(),
                running_abs(&host, shape, opts),
            )
        }
        DType::BF16 => {
            let hv: Vec<half::bf16> = host.iter().map(|&f| half::bf16::from_f32(f)).collect();
            let g: Vec<f64> = out
                .to_vec::<half::bf16>(client)
                .iter()
                .map(|v| v.to_f64())
                .collect();
            let w = cubeprim::cpu::scan(&hv, shape, axis, op, opts).unwrap();
            // bf16 outputs carry 8 bits: scale the tolerance by 2^8 relative to f32's check.
            let s = running_abs(&host, shape, opts)
                .iter()
                .map(|v| v * 1e2)
                .collect();
            (g, w.iter().map(|v| v.to_f64()).collect(), s)
        }
        DType::I32 => {
            let hv: Vec<i32> = host.iter().map(|&f| (f * 100.0) as i32).collect();
            let g: Vec<f64> = out
                .to_vec::<i32>(client)
                .iter()
                .map(|&v| v as f64)
                .collect();
            let w = cubeprim::cpu::scan(&hv, shape, axis, op, opts).unwrap();
            (g, w.iter().map(|&v| v as f64).collect(), vec![0.0; n])
        }
        _ => unreachable!(),
    };
    let (worst, mut ok) = check(&got, &want, &scale);
    if let Some(idx) = &idx {
        let (_, wi) = cubeprim::cpu::scan_with_indices(&host, shape, axis, op, opts).unwrap();
        let gi: Vec<i64> = match idx.dtype {
            DType::I64 => idx.to_vec::<i64>(client),
            _ => idx
                .to_vec::<i32>(client)
                .iter()
                .map(|&v| v as i64)
                .collect(),
        };
        ok &= gi == wi;
    }
    let t = time_ms(client, reps, || run(&mut ws));
    let elem = dtype.size() as f64;
    let bytes = n as f64
        * (2.0 * elem
            + if indices {
                cubeprim::index_dtype(client).size() as f64
            } else {
                0.0
            });
    let check = format!("max err {worst:.1e}");
    let dt = match dtype {
        DType::F32 => "f32",
        DType::BF16 => "bf16",
        _ => "i32",
    };
    report.push(
        name,
        dt,
        shape,
        bytes,
        t,
        if ok { Ok(check) } else { Err(check) },
    );
}

/// Running sum of |x| along the last axis, in scan order.
fn running_abs(x: &[f32], shape: &[usize], opts: ScanOptions) -> Vec<f64> {
    let abs: Vec<f32> = x.iter().map(|v| v.abs()).collect();
    let o = ScanOptions {
        exclusive: false,
        ..opts
    };
    cubeprim::cpu::scan(&abs, shape, shape.len() - 1, ScanOp::Sum, o)
        .unwrap()
        .iter()
        .map(|&v| v as f64)
        .collect()
}

fn lb_default() -> ScanOptions {
    ScanOptions::default().algorithm(ScanAlgorithm::DecoupledLookback)
}

fn run<R: Runtime>(device: &R::Device, args: &Args) -> Report {
    let Args {
        quick,
        diag,
        sanitize,
        ..
    } = *args;
    let only = args.only.as_deref();
    let client = R::client(device);
    println!(
        "runtime {} | {:?}",
        R::name(&client),
        client.properties().hardware
    );
    let mut report = Report::new("scan");

    if sanitize {
        // Small cases of every kernel path, checked once (for compute-sanitizer's memcheck and
        // racecheck, under which kernels run orders of magnitude slower).
        let d = ScanOptions::default();
        let lb = lb_default();
        for (name, shape, op, o, idx) in [
            ("single tile", vec![64, 1000], ScanOp::Sum, d, false),
            (
                "single tile excl rev",
                vec![64, 1001],
                ScanOp::Sum,
                d.exclusive().reverse(),
                false,
            ),
            ("look-back 1-D", vec![(1 << 20) + 3], ScanOp::Sum, lb, false),
            ("look-back 1-D vec4", vec![1 << 20], ScanOp::Sum, lb, false),
            (
                "look-back rows excl rev",
                vec![8, 70_001],
                ScanOp::Sum,
                lb.exclusive().reverse(),
                false,
            ),
            (
                "look-back cummax + indices",
                vec![4, 100_000],
                ScanOp::Max,
                lb,
                true,
            ),
            (
                "single-tile cummin + indices",
                vec![64, 4096],
                ScanOp::Min,
                d,
                true,
            ),
            (
                "reduce-then-scan",
                vec![1 << 20],
                ScanOp::Sum,
                d.algorithm(ScanAlgorithm::ReduceThenScan),
                false,
            ),
        ] {
            scan_case(
                &client,
                &mut report,
                name,
                &shape,
                op,
                DType::F32,
                o,
                idx,
                1,
            );
        }
        println!(
            "sanitize cases: {} run, {} wrong",
            report.cases.len(),
            report.wrong()
        );
        return report;
    }

    super::print_stamp_interval(&client);
    // The floor: a vectorised device copy of 2^28 f32 (read + write).
    let n = 1usize << 28;
    let src = client.create_from_slice(bytemuck::cast_slice(&random_f32(n, 1, 0.0, 1.0)));
    let dst = client.empty(n * 4);
    let copy = time_ms(&client, 20, || super::launch_copy(&client, &src, &dst, n));
    let back: Vec<f32> = bytemuck::pod_collect_to_vec(&client.read_one_unchecked(dst.clone()));
    let want = random_f32(n, 1, 0.0, 1.0);
    assert!(back == want, "the device copy is wrong");
    report.copy("f32", n, copy);
    drop((src, dst));

    let d = ScanOptions::default();
    if diag {
        use cubeprim::ScanTuning;
        let t = |threads, vpt, windows, spins, stage| {
            lb_default().tuning(ScanTuning {
                threads,
                vectors_per_thread: vpt,
                windows,
                spins,
                stage,
                async_copy: true,
            })
        };
        let big = vec![1usize << 28];
        let wide = vec![256usize, 1 << 20];
        let mut cases: Vec<(String, Vec<usize>, ScanOptions)> = Vec::new();
        // `--tiles 384x8,512x8s16,...`: staged tiles (units x vectors per unit, optional
        // `s<spins>`) to sweep over the 1-D case; the default list otherwise.
        let tiles: Vec<(u32, u32, bool, u32)> = match &args.tiles {
            Some(list) => list
                .split(',')
                .map(|t| {
                    let (tv, spins) = t.split_once('s').unwrap_or((t, "256"));
                    let (th, v) = tv.split_once('x').expect("--tiles UxV[sSPINS],...");
                    (
                        th.parse().expect("units"),
                        v.parse().expect("vectors per unit"),
                        true,
                        spins.parse().expect("spins"),
                    )
                })
                .collect(),
            None => vec![
                (512, 8, true, 16),
                (512, 8, true, 256),
                (512, 8, true, 4096),
                (256, 16, true, 256),
                (512, 8, false, 256),
            ],
        };
        let tiles_given = args.tiles.is_some();
        for &(th, v, stage, spins) in &tiles {
            cases.push((
                format!("diag 1-D {th}x{v} staged {stage} spins {spins}"),
                big.clone(),
                t(th, v, 8, spins, stage),
            ));
        }
        let row_tiles: Vec<(u32, u32, bool)> = if tiles_given {
            tiles
                .iter()
                .map(|&(th, v, stage, _)| (th, v, stage))
                .collect()
        } else {
            vec![(512, 8, true), (128, 16, true)]
        };
        for (th, v, stage) in row_tiles {
            cases.push((
                format!("diag rows [256, 2^20] {th}x{v} staged {stage} spins 256"),
                wide.clone(),
                t(th, v, 8, 256, stage),
            ));
        }
        for (name, shape, o) in cases {
            scan_case(
                &client,
                &mut report,
                &name,
                &shape,
                ScanOp::Sum,
                DType::F32,
                o,
                false,
                10,
            );
        }
        scan_case(
            &client,
            &mut report,
            "diag cummax f32 rows + indices (vector index stores)",
            &[16384, 4096],
            ScanOp::Max,
            DType::F32,
            d,
            true,
            20,
        );
        return report;
    }
    let lb = d.algorithm(ScanAlgorithm::DecoupledLookback);
    // The plan's long tile with plain loads (the plan copies asynchronously on CUDA sm_80+).
    let lb_plain = lb.tuning(cubeprim::ScanTuning {
        threads: cubeprim::scan::LONG_TILE.0,
        vectors_per_thread: cubeprim::scan::LONG_TILE.1,
        windows: cubeprim::scan::WINDOWS,
        spins: cubeprim::scan::SPINS_CUDA,
        stage: true,
        async_copy: false,
    });
    let rts = d.algorithm(ScanAlgorithm::ReduceThenScan);
    let f32_ = DType::F32;
    for (name, shape, op, dt, o, idx, reps) in [
        (
            "cumsum f32 1-D (look-back)",
            vec![1 << 20],
            ScanOp::Sum,
            f32_,
            lb,
            false,
            50,
        ),
        (
            "cumsum f32 1-D (look-back)",
            vec![1 << 24],
            ScanOp::Sum,
            f32_,
            lb,
            false,
            30,
        ),
        (
            "cumsum f32 1-D (look-back)",
            vec![1 << 28],
            ScanOp::Sum,
            f32_,
            lb,
            false,
            20,
        ),
        (
            "cumsum f32 1-D (look-back, plain loads)",
            vec![1 << 28],
            ScanOp::Sum,
            f32_,
            lb_plain,
            false,
            20,
        ),
        (
            "cumsum f32 1-D (reduce-then-scan)",
            vec![1 << 28],
            ScanOp::Sum,
            f32_,
            rts,
            false,
            20,
        ),
        (
            "cumsum f32 1-D exclusive reverse",
            vec![1 << 28],
            ScanOp::Sum,
            f32_,
            lb.exclusive().reverse(),
            false,
            20,
        ),
        (
            "cumsum i32 1-D",
            vec![1 << 28],
            ScanOp::Sum,
            DType::I32,
            lb,
            false,
            20,
        ),
        (
            "cumsum bf16 1-D",
            vec![1 << 28],
            ScanOp::Sum,
            DType::BF16,
            lb,
            false,
            20,
        ),
        (
            "cummax f32 1-D",
            vec![1 << 28],
            ScanOp::Max,
            f32_,
            lb,
            false,
            20,
        ),
        (
            "cumsum f32 rows",
            vec![1024, 4096],
            ScanOp::Sum,
            f32_,
            d,
            false,
            200,
        ),
        (
            "cumsum f32 rows",
            vec![16384, 4096],
            ScanOp::Sum,
            f32_,
            d,
            false,
            50,
        ),
        (
            "cumsum f32 rows",
            vec![65536, 1024],
            ScanOp::Sum,
            f32_,
            d,
            false,
            50,
        ),
        (
            "cumsum f32 rows",
            vec![256, 1 << 20],
            ScanOp::Sum,
            f32_,
            d,
            false,
            30,
        ),
        (
            "cumsum f32 rows",
            vec![64, 65536],
            ScanOp::Sum,
            f32_,
            d,
            false,
            100,
        ),
        (
            "cumprod f32 rows",
            vec![16384, 4096],
            ScanOp::Prod,
            f32_,
            d,
            false,
            50,
        ),
        (
            "cummax f32 rows",
            vec![16384, 4096],
            ScanOp::Max,
            f32_,
            d,
            false,
            50,
        ),
        (
            "cummax f32 rows + indices",
            vec![16384, 4096],
            ScanOp::Max,
            f32_,
            d,
            true,
            50,
        ),
        (
            "cummin f32 rows + indices",
            vec![1024, 4096],
            ScanOp::Min,
            f32_,
            d,
            true,
            100,
        ),
    ] {
        // --quick: the target cases only (for a second runtime in the same call).
        let target = (name.starts_with("cumsum f32 1-D (look-back") && shape == [1 << 28])
            || (name == "cumsum f32 rows" && shape != [65536, 1024] && shape != [64, 65536])
            || name == "cummax f32 rows + indices";
        if (quick && !target) || only.is_some_and(|o| !name.contains(o)) {
            continue;
        }
        scan_case(&client, &mut report, name, &shape, op, dt, o, idx, reps);
    }
    report
}

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    common: Common,
    /// Writes the run as JSON (the same as `--out`).
    #[arg(value_name = "OUT.json")]
    json: Option<std::path::PathBuf>,
    /// The headline cases only (the 1-D 2^28 look-back scans, three row shapes, cummax
    /// with indices).
    #[arg(long)]
    quick: bool,
    /// The cases whose name contains TEXT.
    #[arg(long, value_name = "TEXT")]
    only: Option<String>,
    /// Tile and look-back variants of the 1-D and row scans instead of the cases.
    #[arg(long)]
    diag: bool,
    /// With `--diag`: the staged tiles to sweep, units x vectors per unit with optional spins,
    /// e.g. `384x8,512x8s16`.
    #[arg(long, value_name = "UxV[sSPINS],..")]
    tiles: Option<String>,
    /// Small cases of every kernel path, checked once (for compute-sanitizer).
    #[arg(long)]
    sanitize: bool,
}

pub fn main(mut args: Args) {
    if let Some(j) = args.json.take() {
        args.common.out.get_or_insert(j);
    }
    let report = match args.common.runtime {
        #[cfg(feature = "cuda")]
        super::RuntimeName::Cuda => run::<cubecl::cuda::CudaRuntime>(&Default::default(), &args),
        #[cfg(all(feature = "wgpu", not(feature = "cuda")))]
        super::RuntimeName::Wgpu => run::<cubecl::wgpu::WgpuRuntime>(&Default::default(), &args),
        #[allow(unreachable_patterns)]
        _ => panic!("runtime not built: a `cuda` build has CUDA only, others wgpu"),
    };
    super::finish(&args.common, report);
}
