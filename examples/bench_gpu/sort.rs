//! The sort family.
//!
//! `bench_gpu sort [cuda|wgpu] [--small] [--rows-only] [--core] [--keys] [--argsort] [--wide]
//! [--split] [--packed] [--tile UNITSxKEYS]` (`bench_gpu sort --help` says what each selects).
//!
//! Each case is first checked on fresh random data (against the CPU reference, or for the 2^28
//! cases by an O(n) check: output ordered, a stable permutation of the input), then timed:
//! 3 warm-up calls, then `reps` (>= 20) calls each followed by a sync (`host_ms`: their median
//! by the host's wall clock, so launch overhead counts). `ours_ms`: the median device time of
//! one call (two device clock stamps around it, CUDA only: see [`super::Stamps`]; as the peers'
//! CUDA events time them). `extra`: `b2b_ms`, the mean of `reps` calls issued back to back with
//! one sync at the end; `issue_ms`, the median host time of issuing one call (before its sync).
//! A device copy (a CubeCL copy kernel, read + write) is measured in the same run as the floor.

use super::{Common, Report, Times};
use cubecl::prelude::*;
use cubeprim::cpu::{self, SortElement};
use cubeprim::{DeviceTensor, IndexType, SortOptions, TopKMethod, Workspace};
use rand::{Rng, SeedableRng};
use std::time::Instant;

/// A case's time: the median over `reps` calls each followed by a sync, the mean of `reps` calls
/// issued back to back with one sync at the end (without the per-call launch latency and sync),
/// the median host time of a call's launches (before its sync), and the median device time of
/// one call where the runtime has device timing.
#[derive(Clone, Copy)]
struct Timing {
    median: f64,
    b2b: f64,
    host: f64,
    dev: Option<f64>,
}

fn median_ms<R: Runtime>(client: &ComputeClient<R>, reps: usize, mut f: impl FnMut()) -> Timing {
    let sync = || cubecl::future::block_on(client.sync()).unwrap();
    super::warm_up(client, &mut f);
    let (mut t, mut h): (Vec<f64>, Vec<f64>) = (0..reps)
        .map(|_| {
            let s = Instant::now();
            f();
            let issued = s.elapsed().as_secs_f64() * 1e3;
            sync();
            (s.elapsed().as_secs_f64() * 1e3, issued)
        })
        .unzip();
    t.sort_by(|a, b| a.total_cmp(b));
    h.sort_by(|a, b| a.total_cmp(b));
    let s = Instant::now();
    for _ in 0..reps {
        f();
    }
    sync();
    let b2b = s.elapsed().as_secs_f64() * 1e3 / reps as f64;
    let mut d: Vec<f64> = (0..reps)
        .map_while(|_| super::device_ms(client, 1, &mut f))
        .collect();
    d.sort_by(|a, b| a.total_cmp(b));
    Timing {
        median: t[reps / 2],
        b2b,
        host: h[reps / 2],
        dev: (d.len() == reps).then(|| d[reps / 2]),
    }
}

/// Records one case: `t`'s device median (else its host median) against the copy.
fn line(
    report: &mut Report,
    case: &str,
    dtype: &str,
    shape: &[usize],
    t: Timing,
    bytes: f64,
    check: Result<String, String>,
) {
    let times = Times {
        host: t.median,
        device: t.dev,
    };
    report
        .push(case, dtype, shape, bytes, times, check)
        .extra("b2b_ms", t.b2b)
        .extra("issue_ms", t.host);
}

/// O(n) check of a 1-D stable argsort: `idx` is a permutation, keys along it ascend, equal keys
/// keep increasing positions.
fn check_argsort<E: SortElement>(keys: &[E], idx: &[u32]) -> Result<(), String> {
    let mut seen = vec![false; keys.len()];
    for (p, &i) in idx.iter().enumerate() {
        let i = i as usize;
        if i >= keys.len() || seen[i] {
            return Err(format!("not a permutation at {p}"));
        }
        seen[i] = true;
        if p > 0 {
            let j = idx[p - 1] as usize;
            match keys[j].sort_cmp(&keys[i]) {
                std::cmp::Ordering::Greater => return Err(format!("not sorted at {p}")),
                std::cmp::Ordering::Equal if j > i => return Err(format!("not stable at {p}")),
                _ => {}
            }
        }
    }
    Ok(())
}

/// O(n) check of a 1-D keys-only sort by the keys' order (u32 or u64): ascending, same multiset
/// (histogram of the low 16 bits and sums of the values).
fn check_sorted<O: Copy + Ord + Into<u64>>(input: &[O], out: &[O]) -> Result<(), String> {
    if out.windows(2).any(|w| w[0] > w[1]) {
        return Err("not sorted".into());
    }
    let sig = |v: &[O]| {
        let mut h = vec![0u32; 65536];
        let mut s = 0u64;
        for &x in v {
            let x: u64 = x.into();
            h[(x & 0xffff) as usize] += 1;
            s = s.wrapping_add(x.wrapping_mul(0x9e37_79b9));
        }
        (h, s)
    };
    if sig(input) != sig(out) {
        return Err("not a permutation of the input".into());
    }
    Ok(())
}

fn ok(r: Result<(), String>) -> Result<String, String> {
    r.map(|()| String::new())
}

/// [`ok`] of a comparison with the CPU reference.
fn same_as_cpu(same: bool) -> Result<String, String> {
    ok(if same {
        Ok(())
    } else {
        Err("differs from the CPU".into())
    })
}

/// Which cases run, and the sort options of the sorts.
#[derive(Clone, Copy)]
struct Cases {
    small: bool,
    rows_only: bool,
    core: bool,
    keys_only: bool,
    argsort_only: bool,
    wide: bool,
    packed: bool,
    opts: SortOptions,
}

/// Times the keys-only sort of `src` and checks it through `order`, the keys' order as u32 or
/// u64.
#[allow(clippy::too_many_arguments)]
fn keys_case<R: Runtime, T: cubeprim::Element, O: Copy + Ord + Into<u64>>(
    client: &ComputeClient<R>,
    ws: &mut Workspace<R>,
    opts: SortOptions,
    src: &[T],
    order: fn(&T) -> O,
    (label, dtype): (&str, &str),
    reps: usize,
    report: &mut Report,
) {
    let x = DeviceTensor::<R>::from_slice(client, src, &[src.len()]).unwrap();
    let out = cubeprim::sort(client, &x, opts, ws).unwrap();
    let as_u = |v: &[T]| v.iter().map(order).collect::<Vec<O>>();
    let check = ok(check_sorted(&as_u(src), &as_u(&out.to_vec::<T>(client))));
    let ms = median_ms(client, reps, || {
        cubeprim::sort(client, &x, opts, ws).unwrap();
    });
    let n = src.len();
    let bytes = 2.0 * std::mem::size_of::<T>() as f64 * n as f64;
    line(report, label, dtype, &[n], ms, bytes, check);
}

/// The order of u32 keys, and of i32 keys (the sign bit flipped).
const U32_ORDER: fn(&u32) -> u32 = |&u| u;
const I32_ORDER: fn(&i32) -> u32 = |&i| i as u32 ^ 0x8000_0000;
const U64_ORDER: fn(&u64) -> u64 = |&u| u;

fn run<R: Runtime>(device: &R::Device, cases: Cases) -> Report {
    let Cases {
        small,
        rows_only,
        core,
        keys_only,
        argsort_only,
        wide,
        packed,
        opts,
    } = cases;
    let client = R::client(device);
    let mut report = Report::new("sort");
    let mut ws = Workspace::<R>::new();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let big = if small { 1usize << 22 } else { 1 << 28 };
    let reps = 20;

    super::print_stamp_interval(&client);
    // Floor: device copy of `big` u32 (read + write).
    let src: Vec<u32> = (0..big).map(|_| rng.random()).collect();
    let a = client.create_from_slice(bytemuck::cast_slice(&src));
    let b = client.empty(big * 4);
    let copy = median_ms(&client, reps, || super::launch_copy(&client, &a, &b, big));
    let copy = Times {
        host: copy.median,
        device: copy.dev,
    };
    report.copy("u32", big, copy);
    drop((a, b));
    if wide {
        // u64 keys-only, half as many keys as `big` (the same bytes as `big` u32 keys).
        drop(src);
        let src: Vec<u64> = (0..big / 2).map(|_| rng.random()).collect();
        let label = ("sort u64 keys", "u64");
        keys_case(
            &client,
            &mut ws,
            opts,
            &src,
            U64_ORDER,
            label,
            reps,
            &mut report,
        );
        return report;
    }

    // The 1-D cases (skipped with `--rows-only`).
    if !rows_only {
        let u32_case = |ws: &mut Workspace<R>, r: &mut Report, src: &[u32], label: &str| {
            keys_case(&client, ws, opts, src, U32_ORDER, (label, "u32"), reps, r)
        };
        if !argsort_only {
            u32_case(&mut ws, &mut report, &src, "sort u32 keys");
            // i32 keys only (issue 4 names u32 and i32 alike: in `--core` too).
            let src_i: Vec<i32> = (0..big).map(|_| rng.random()).collect();
            keys_case(
                &client,
                &mut ws,
                opts,
                &src_i,
                I32_ORDER,
                ("sort i32 keys", "i32"),
                reps,
                &mut report,
            );
        }
        if keys_only {
            // Whether the i32 sort's time is its data or its turn: the u32 keys again, then
            // i32 keys whose order bits are the u32 keys' own (the same passes, same data).
            u32_case(&mut ws, &mut report, &src, "sort u32 keys (again)");
            let same: Vec<i32> = src.iter().map(|&u| (u ^ 0x8000_0000) as i32).collect();
            drop(src);
            let label = ("sort i32 keys (the u32 keys' order bits)", "i32");
            keys_case(
                &client,
                &mut ws,
                opts,
                &same,
                I32_ORDER,
                label,
                reps,
                &mut report,
            );
            return report;
        }
        drop(src);
        // f32 stable argsort (u32 and i64 indices; with `--packed` also through the key-value
        // passes, `SortOptions::pack_indices(false)`).
        {
            let src: Vec<f32> = (0..big).map(|_| rng.random_range(-1.0..1.0)).collect();
            let x = DeviceTensor::<R>::from_slice(&client, &src, &[big]).unwrap();
            let mut runs = vec![(IndexType::U32, opts), (IndexType::I64, opts)];
            if packed {
                let kv = opts.pack_indices(false);
                runs.extend([(IndexType::U32, kv), (IndexType::I64, kv)]);
            }
            for (index, o) in runs {
                let idx = cubeprim::argsort(&client, &x, index, o, &mut ws).unwrap();
                let got: Vec<u32> = match index {
                    IndexType::U32 => idx.to_vec::<u32>(&client),
                    IndexType::I64 => idx
                        .to_vec::<i64>(&client)
                        .iter()
                        .map(|&i| i as u32)
                        .collect(),
                };
                let check = ok(check_argsort(&src, &got));
                let ms = median_ms(&client, reps, || {
                    cubeprim::argsort(&client, &x, index, o, &mut ws).unwrap();
                });
                let ib = if index == IndexType::U32 { 4.0 } else { 8.0 };
                let form = if o.pack_indices == Some(false) {
                    ", key-value passes"
                } else {
                    ""
                };
                line(
                    &mut report,
                    &format!("argsort f32 stable ({index:?} indices{form})"),
                    "f32",
                    &[big],
                    ms,
                    (4.0 + ib) * big as f64,
                    check,
                );
            }
        }
        if argsort_only {
            return report;
        }
        // Rows too long for one cube: argsort through the device-wide passes, row by row in one
        // launch per pass (the packed argsort; every row checked against the CPU).
        {
            let (rows, n) = if small {
                (4, (1usize << 18) + 5)
            } else {
                (8, (1 << 21) + 5)
            };
            let src: Vec<f32> = (0..rows * n).map(|_| rng.random_range(-1.0..1.0)).collect();
            let x = DeviceTensor::<R>::from_slice(&client, &src, &[rows, n]).unwrap();
            let idx = cubeprim::argsort(&client, &x, IndexType::U32, opts, &mut ws).unwrap();
            let want = cpu::argsort_rows(&src, n, false);
            let got = idx.to_vec::<u32>(&client);
            let check = same_as_cpu(got == want);
            let ms = median_ms(&client, reps, || {
                cubeprim::argsort(&client, &x, IndexType::U32, opts, &mut ws).unwrap();
            });
            line(
                &mut report,
                "row argsort f32 stable (U32 indices), long rows",
                "f32",
                &[rows, n],
                ms,
                8.0 * (rows * n) as f64,
                check,
            );
        }
        // f32 sort of 2^22 (burn's built-in sort, read back to the CPU, is the comparison).
        if !core {
            let n = 1usize << 22;
            let src: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
            let x = DeviceTensor::<R>::from_slice(&client, &src, &[n]).unwrap();
            let out = cubeprim::sort(&client, &x, opts, &mut ws).unwrap();
            let want = cpu::sort_rows(&src, n, false);
            let got = out.to_vec::<f32>(&client);
            let check = same_as_cpu(got == want);
            let ms = median_ms(&client, reps, || {
                cubeprim::sort(&client, &x, opts, &mut ws).unwrap();
            });
            line(
                &mut report,
                "sort f32 keys",
                "f32",
                &[n],
                ms,
                8.0 * n as f64,
                check,
            );
        }
    }
    // Row-wise sort with indices and top-k, [16384, 4096] f32.
    let (rows, n) = if small { (1024, 4096) } else { (16384, 4096) };
    let src: Vec<f32> = (0..rows * n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let x = DeviceTensor::<R>::from_slice(&client, &src, &[rows, n]).unwrap();
    let sub = 64 * n; // rows checked against the CPU
    {
        let (v, i) =
            cubeprim::sort_with_indices(&client, &x, IndexType::I64, opts, &mut ws).unwrap();
        let want_i = cpu::argsort_rows(&src[..sub], n, false);
        let want_v = cpu::permute_rows(&src[..sub], n, &want_i).unwrap();
        let gv = v.to_vec::<f32>(&client);
        let gi = i.to_vec::<i64>(&client);
        let same =
            gv[..sub] == want_v[..] && gi[..sub].iter().zip(&want_i).all(|(&a, &b)| a == b as i64);
        let check = same_as_cpu(same);
        let ms = median_ms(&client, reps, || {
            cubeprim::sort_with_indices(&client, &x, IndexType::I64, opts, &mut ws).unwrap();
        });
        line(
            &mut report,
            "row sort f32 with i64 indices",
            "f32",
            &[rows, n],
            ms,
            16.0 * (rows * n) as f64,
            check,
        );
    }
    if core {
        return report;
    }
    // top-k by selection (one cube per row) and by sorting each row.
    for method in [TopKMethod::Select, TopKMethod::Sort] {
        let k = 50;
        let top = |ws: &mut Workspace<R>| {
            cubeprim::top_k_with(&client, &x, k, true, IndexType::I64, method, ws)
        };
        let (v, i) = match top(&mut ws) {
            Ok(r) => r,
            Err(e) => {
                let zero = Times {
                    host: 0.0,
                    device: None,
                };
                let label = format!("top-k k=50 f32 (i64 indices, {method:?})");
                report.push(&label, "f32", &[rows, n], 0.0, zero, Err(e.to_string()));
                continue;
            }
        };
        let (want_v, want_i) = cpu::top_k_rows(&src[..sub], n, k, true);
        let gv = v.to_vec::<f32>(&client);
        let gi = i.to_vec::<i64>(&client);
        let s = 64 * k;
        let same =
            gv[..s] == want_v[..] && gi[..s].iter().zip(&want_i).all(|(&a, &b)| a == b as i64);
        let check = same_as_cpu(same);
        let ms = median_ms(&client, reps, || {
            top(&mut ws).unwrap();
        });
        line(
            &mut report,
            &format!("top-k k=50 f32 (i64 indices, {method:?})"),
            "f32",
            &[rows, n],
            ms,
            4.0 * (rows * n) as f64,
            check,
        );
    }
    // searchsorted: 2^24 queries into 2^20 sorted keys.
    {
        let n = 1usize << 20;
        let m = 1usize << 24;
        let mut s: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        s.sort_by(|a, b| a.total_cmp(b));
        let q: Vec<f32> = (0..m).map(|_| rng.random_range(-1.1..1.1)).collect();
        let st = DeviceTensor::<R>::from_slice(&client, &s, &[n]).unwrap();
        let qt = DeviceTensor::<R>::from_slice(&client, &q, &[m]).unwrap();
        let out = cubeprim::searchsorted(&client, &st, &qt, cubeprim::Side::Left, IndexType::I64)
            .unwrap();
        let want = cpu::searchsorted(&s, n, &q[..1 << 16], 1 << 16, false).unwrap();
        let got = out.to_vec::<i64>(&client);
        let same = got[..1 << 16]
            .iter()
            .zip(&want)
            .all(|(&a, &b)| a == b as i64);
        let check = same_as_cpu(same);
        let ms = median_ms(&client, reps, || {
            cubeprim::searchsorted(&client, &st, &qt, cubeprim::Side::Left, IndexType::I64)
                .unwrap();
        });
        line(
            &mut report,
            "searchsorted f32 left",
            "f32",
            &[m],
            ms,
            12.0 * m as f64,
            check,
        );
    }
    report
}

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    common: Common,
    /// 2^22 keys instead of 2^28 (rows: [1024, 4096] instead of [16384, 4096]).
    #[arg(long)]
    small: bool,
    /// The copy floor, the row sorts, top-k and searchsorted; no 1-D sorts.
    #[arg(long)]
    rows_only: bool,
    /// The copy floor, the 1-D u32 and i32 sorts, the f32 argsorts, the argsort of long rows
    /// and the row sort with indices only.
    #[arg(long)]
    core: bool,
    /// The copy floor and the 1-D u32 and i32 sorts only, then the u32 sort again and an i32 sort
    /// of the u32 keys' order bits (whether a sort's time is its data or its turn).
    #[arg(long)]
    keys: bool,
    /// The copy floor and the 1-D f32 argsorts only.
    #[arg(long)]
    argsort: bool,
    /// The copy floor and a 1-D sort of u64 keys only, half as many keys as the u32 sorts.
    #[arg(long)]
    wide: bool,
    /// Tiles ranked by bit splits instead of plane ballots (no plane operations).
    #[arg(long)]
    split: bool,
    /// Also the f32 argsorts through the key-value passes (`pack_indices(false)`).
    #[arg(long)]
    packed: bool,
    /// The tile of the device-wide passes instead of the plan's, e.g. `256x16`.
    #[arg(long, value_name = "UNITSxKEYS", value_parser = parse_tile)]
    tile: Option<(u32, u32)>,
}

fn parse_tile(t: &str) -> Result<(u32, u32), String> {
    t.split_once('x')
        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
        .ok_or_else(|| format!("{t}: expected UNITSxKEYS, e.g. 256x16"))
}

pub fn main(args: Args) {
    let mut opts = SortOptions::default();
    if args.split {
        opts = opts.plane_ops(cubeprim::PlaneOps::Off);
    }
    if let Some((threads, items)) = args.tile {
        opts = opts.tuning(cubeprim::SortTuning {
            threads,
            items,
            wide_counts: true,
        });
    }
    let cases = Cases {
        small: args.small,
        rows_only: args.rows_only,
        core: args.core,
        keys_only: args.keys,
        argsort_only: args.argsort,
        wide: args.wide,
        packed: args.packed,
        opts,
    };
    let report = match args.common.runtime {
        #[cfg(feature = "cuda")]
        super::RuntimeName::Cuda => run::<cubecl::cuda::CudaRuntime>(&Default::default(), cases),
        #[cfg(all(feature = "wgpu", not(feature = "cuda")))]
        super::RuntimeName::Wgpu => run::<cubecl::wgpu::WgpuRuntime>(&Default::default(), cases),
        #[allow(unreachable_patterns)]
        _ => panic!("runtime not built: a `cuda` build has CUDA only, others wgpu"),
    };
    super::finish(&args.common, report);
}
