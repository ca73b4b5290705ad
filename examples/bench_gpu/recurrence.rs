//! The linear recurrence family: `h[t] = a[t] * h[t-1] + b[t]` ([`cubeprim::linear_recurrence`]).
//!
//! `bench_gpu recurrence [cuda|wgpu] [--out OUT.json] [--only TEXT] [--small] [--tiles UxV,..]`
//! (`--only TEXT`: the cases whose name contains TEXT; `--small`: small shapes and a small copy,
//! for a CPU wgpu adapter such as lavapipe; `--tiles`: the long-row case again under each tile,
//! units x vectors per unit).
//!
//! f32 along the last axis, from `h[-1] = 0` (and one case from an initial state `h0`), forward
//! and reverse; f64 forward where the runtime has it. Every case is first checked on fresh random data (`a` in [0.5, 1), `b` in
//! [-1, 1)) against [`cubeprim::cpu::linear_recurrence`] run in f64 on the same values: the
//! error of each element must stay within `1e-5 * (S + 1)`, `S` the same recurrence over `|a|`
//! and `|b|` (the scale of the rounding of its terms). Its output is poisoned first, so every
//! element must be written, and must equal a second, fresh call's. Then it is timed as the
//! scans are ([`super::scan::time_ms`]): `linear_recurrence_into` with a reused [`Workspace`]
//! and output, `reps` calls back to back, by the host clock (`host_ms`) and by the device
//! clock (`ours_ms` on CUDA).
//!
//! The floor is the device copy of 2^28 f32 measured in the same run (2^20 with `--small`): a
//! call must read `a` and `b` and write `h`, 12 bytes per element, so `bytes` is 12 per element
//! and *% of copy* is those bytes at the copy's bandwidth over the call's time.

use super::scan::{random_f32, time_ms};
use super::{Common, Report};
use cubecl::prelude::*;
use cubeprim::{DType, DeviceTensor, RecurrenceOptions, Workspace};

/// The largest error of `got` against `want` relative to `scale + 1`, and whether every one
/// is within `tol` (NaN fails).
fn check(got: &[f64], want: &[f64], scale: &[f64], tol: f64) -> (f64, bool) {
    let mut worst = 0.0f64;
    let mut ok = got.len() == want.len() && want.len() == scale.len();
    for ((&g, &w), &s) in got.iter().zip(want).zip(scale) {
        let e = (g - w).abs() / (s + 1.0);
        if e.is_nan() || e > tol {
            ok = false;
        }
        worst = worst.max(if e.is_nan() { f64::INFINITY } else { e });
    }
    (worst, ok)
}

/// One case: `a`, `b` of `shape` in `E` (f32 or f64; drawn as f32), along the last axis (under
/// `tuning` where given).
#[allow(clippy::too_many_arguments)]
fn recurrence_case<R: Runtime, E: cubeprim::Element>(
    client: &ComputeClient<R>,
    report: &mut Report,
    name: &str,
    shape: &[usize],
    reverse: bool,
    with_h0: bool,
    reps: usize,
    tuning: Option<cubeprim::ScanTuning>,
) {
    let n: usize = shape.iter().product();
    let axis = shape.len() - 1;
    let rows = n / shape[axis];
    let done = report
        .cases
        .iter()
        .filter(|c| !c.op.starts_with("copy"))
        .count() as u64;
    let seed = done * 7919 + 40;
    let a_host = random_f32(n, seed, 0.5, 1.0);
    let b_host = random_f32(n, seed + 1, -1.0, 1.0);
    let h0_host = with_h0.then(|| random_f32(rows, seed + 2, -1.0, 1.0));
    let to_e = |v: &[f32]| -> Vec<E> { v.iter().map(|&x| E::from_f64(x as f64)).collect() };
    let a = DeviceTensor::<R>::from_slice(client, &to_e(&a_host), shape).unwrap();
    let b = DeviceTensor::<R>::from_slice(client, &to_e(&b_host), shape).unwrap();
    let h0 = h0_host
        .as_ref()
        .map(|h| DeviceTensor::<R>::from_slice(client, &to_e(h), &shape[..axis]).unwrap());
    let size = E::DTYPE.size();
    let opts = RecurrenceOptions {
        reverse,
        tuning,
        ..Default::default()
    };
    // Output and scratch allocated once, as a performance-minded caller does.
    let mut ws = Workspace::<R>::new();
    let out = DeviceTensor::<R>::empty(client, shape, E::DTYPE);
    let run = |ws: &mut Workspace<R>| {
        cubeprim::linear_recurrence_into(client, &a, &b, h0.as_ref(), &out, -1, opts, ws).unwrap();
    };
    // Every element written, and the same twice: a poisoned output, then the fresh one.
    {
        let poison = vec![0xAAu8; n * size];
        let p = DeviceTensor::<R>::from_parts(
            client.create_from_slice(&poison),
            shape.to_vec(),
            out.strides.clone(),
            0,
            E::DTYPE,
        );
        cubeprim::linear_recurrence_into(client, &a, &b, h0.as_ref(), &p, -1, opts, &mut ws)
            .unwrap();
        let same: Vec<u8> =
            bytemuck::pod_collect_to_vec(&client.read_one_unchecked(p.handle.clone()));
        run(&mut ws);
        let again: Vec<u8> =
            bytemuck::pod_collect_to_vec(&client.read_one_unchecked(out.handle.clone()));
        assert!(
            same[..] == again[..n * size],
            "{name}: poisoned and fresh outputs differ (unwritten elements or a non-deterministic result)"
        );
    }
    let got: Vec<f64> = out.to_vec::<E>(client).iter().map(|x| x.to_f64()).collect();
    // The reference in f64 on the same (f32) values, and the scale of its terms.
    let f64s = |v: &[f32], abs: bool| -> Vec<f64> {
        v.iter()
            .map(|&x| if abs { x.abs() as f64 } else { x as f64 })
            .collect()
    };
    let (a64, b64) = (f64s(&a_host, false), f64s(&b_host, false));
    let h064 = h0_host.as_ref().map(|h| f64s(h, false));
    let want = cubeprim::cpu::linear_recurrence(&a64, &b64, h064.as_deref(), shape, axis, reverse)
        .unwrap();
    drop((a64, b64));
    let (aa, ba) = (f64s(&a_host, true), f64s(&b_host, true));
    let h0a = h0_host.as_ref().map(|h| f64s(h, true));
    let scale =
        cubeprim::cpu::linear_recurrence(&aa, &ba, h0a.as_deref(), shape, axis, reverse).unwrap();
    drop((aa, ba));
    let tol = if E::DTYPE == DType::F64 { 1e-12 } else { 1e-5 };
    let (worst, ok) = check(&got, &want, &scale, tol);
    drop((got, want, scale));
    let t = time_ms(client, reps, || run(&mut ws));
    // Read a and b, write h (and read h0: one element per row).
    let bytes = (3 * size * n) as f64 + if with_h0 { (size * rows) as f64 } else { 0.0 };
    let check = format!("max err {worst:.1e} of (S + 1), tol {tol:.0e}");
    report.push(
        name,
        &E::DTYPE.to_string(),
        shape,
        bytes,
        t,
        if ok { Ok(check) } else { Err(check) },
    );
}

fn run<R: Runtime>(device: &R::Device, args: &Args) -> Report {
    let client = R::client(device);
    println!(
        "runtime {} | {:?}",
        R::name(&client),
        client.properties().hardware
    );
    let mut report = Report::new("recurrence");
    super::print_stamp_interval(&client);
    // The floor: a vectorised device copy of f32 (read + write).
    let n = 1usize << if args.small { 20 } else { 28 };
    let src = client.create_from_slice(bytemuck::cast_slice(&random_f32(n, 1, 0.0, 1.0)));
    let dst = client.empty(n * 4);
    let copy = time_ms(&client, 20, || super::launch_copy(&client, &src, &dst, n));
    let back: Vec<f32> = bytemuck::pod_collect_to_vec(&client.read_one_unchecked(dst.clone()));
    assert!(
        back == random_f32(n, 1, 0.0, 1.0),
        "the device copy is wrong"
    );
    report.copy("f32", n, copy);
    drop((src, dst));

    let fwd = "linear_recurrence f32 rows";
    let rev = "linear_recurrence f32 rows reverse";
    let h0 = "linear_recurrence f32 rows from h0";
    let cases: Vec<(&str, Vec<usize>, bool, bool, usize)> = if args.small {
        vec![
            (fwd, vec![64, 4096], false, false, 5),
            (fwd, vec![4, 1 << 17], false, false, 5),
            (rev, vec![64, 4096], true, false, 5),
            (h0, vec![64, 4096], false, true, 5),
        ]
    } else {
        vec![
            (fwd, vec![4096, 4096], false, false, 100),
            (fwd, vec![16384, 4096], false, false, 50),
            (fwd, vec![64, 1 << 20], false, false, 50),
            (rev, vec![4096, 4096], true, false, 100),
            (h0, vec![4096, 4096], false, true, 100),
        ]
    };
    for (name, shape, reverse, with_h0, reps) in cases {
        if args.only.as_deref().is_some_and(|o| !name.contains(o)) {
            continue;
        }
        recurrence_case::<R, f32>(
            &client,
            &mut report,
            name,
            &shape,
            reverse,
            with_h0,
            reps,
            None,
        );
    }
    // f64 (chunks solved in three steps, not the look-back) where the runtime has it.
    let f64_name = "linear_recurrence f64 rows";
    let f64_shapes: Vec<Vec<usize>> = if args.small {
        vec![vec![64, 4096]]
    } else {
        vec![vec![4096, 4096], vec![64, 1 << 20]]
    };
    if cubeprim::supports_dtype(&client, DType::F64)
        && args.only.as_deref().is_none_or(|o| f64_name.contains(o))
    {
        for shape in f64_shapes {
            recurrence_case::<R, f64>(
                &client,
                &mut report,
                f64_name,
                &shape,
                false,
                false,
                20,
                None,
            );
        }
    }
    // `--tiles 256x4,128x8,...`: the long-row case under other tiles (units x vectors per
    // unit), each checked and timed as the cases are.
    if let Some(list) = &args.tiles {
        let shape = if args.small {
            vec![4, 1 << 17]
        } else {
            vec![64, 1 << 20]
        };
        for tv in list.split(',') {
            let (th, v) = tv.split_once('x').expect("--tiles UxV,...");
            let tuning = cubeprim::ScanTuning {
                threads: th.parse().expect("units"),
                vectors_per_thread: v.parse().expect("vectors per unit"),
                windows: cubeprim::scan::WINDOWS,
                // The plan's rounds on each runtime.
                spins: if cfg!(feature = "cuda") {
                    cubeprim::scan::SPINS_CUDA
                } else {
                    cubeprim::scan::SPINS
                },
                stage: true,
                async_copy: true,
            };
            let name = format!("diag linear_recurrence f32 rows {th}x{v}");
            let reps = if args.small { 5 } else { 50 };
            recurrence_case::<R, f32>(
                &client,
                &mut report,
                &name,
                &shape,
                false,
                false,
                reps,
                Some(tuning),
            );
        }
    }
    report
}

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    common: Common,
    /// The cases whose name contains TEXT ("reverse", "h0", "rows" for all).
    #[arg(long, value_name = "TEXT")]
    only: Option<String>,
    /// Small shapes ([64, 4096], [4, 2^17]) and a copy of 2^20 f32: for a CPU adapter
    /// (lavapipe) or a quick check of the results.
    #[arg(long)]
    small: bool,
    /// The long-row case ([64, 2^20]; [4, 2^17] with `--small`) again under each tile of
    /// LIST: units x vectors per unit, e.g. `256x4,128x8`.
    #[arg(long, value_name = "UxV,..")]
    tiles: Option<String>,
}

pub fn main(args: Args) {
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
