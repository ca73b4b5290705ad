//! Reduce, select (masked_select), nonzero, unique_consecutive (with counts, and values only),
//! reduce_by_key and a 256-bin histogram.
//!
//! `bench_gpu compact [cuda|wgpu] [LOG2_N] [--runs]` (`--runs`: the copy floor,
//! unique_consecutive and reduce_by_key only)
//!
//! Each case is first checked against the CPU reference on a fresh random input of 2^22
//! elements, then timed on 2^n elements (default 2^28): 3 warm-up calls, then 20 samples of 5
//! back-to-back calls; the figure is the median sample divided by 5, by the host's wall clock
//! and a sync after each sample (`host_ms`, so launch overhead counts) and by the device clock
//! (`ours_ms` on CUDA, see [`super::Stamps`]). Outputs, counts and scratch are allocated once
//! (no host read inside the timed calls). A vectorised copy of 2^n f32 is measured in the same
//! run as the floor.

use super::{Common, Report, Times};
use cubecl::prelude::*;
use cubeprim::{DType, DeviceTensor, ScanOp, Workspace};
use std::time::Instant;

/// A fast deterministic generator for large inputs.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// The median of 20 samples of 5 back-to-back calls of `f` after [`super::warm_up`], by the
/// host clock and (CUDA) the device clock.
pub fn median_ms<R: Runtime>(client: &ComputeClient<R>, mut f: impl FnMut()) -> Times {
    super::warm_up(client, &mut f);
    let mut samples = vec![];
    for _ in 0..20 {
        let t = Instant::now();
        for _ in 0..5 {
            f();
        }
        cubecl::future::block_on(client.sync()).unwrap();
        samples.push(t.elapsed().as_secs_f64() * 1e3 / 5.0);
    }
    samples.sort_by(|a, b| a.total_cmp(b));
    let mut dev: Vec<f64> = (0..20)
        .map_while(|_| super::device_ms(client, 5, &mut f))
        .collect();
    dev.sort_by(|a, b| a.total_cmp(b));
    Times {
        host: samples[samples.len() / 2],
        device: (dev.len() == 20).then(|| dev[10]),
    }
}

/// [`Report::push`]'s check of a comparison with the CPU reference.
fn checked(ok: bool) -> Result<String, String> {
    if ok {
        Ok(String::new())
    } else {
        Err("differs from the CPU".into())
    }
}

fn mask(n: usize, seed: u64, p: f32) -> Vec<u32> {
    let mut r = Rng(seed | 1);
    (0..n).map(|_| (r.unit() < p) as u32).collect()
}
fn floats(n: usize, seed: u64) -> Vec<f32> {
    let mut r = Rng(seed | 1);
    (0..n).map(|_| r.unit() * 2.0 - 1.0).collect()
}
/// Sorted keys with runs of mean length 4.
fn sorted_keys(n: usize, seed: u64) -> Vec<i32> {
    sorted_runs(n, seed, 4)
}

/// Sorted keys with runs of mean length `mean` (a new key with probability `1 / mean`).
fn sorted_runs(n: usize, seed: u64, mean: u32) -> Vec<i32> {
    let mut r = Rng(seed | 1);
    let mut k = 0i32;
    let p = 1.0 / mean as f32;
    (0..n)
        .map(|_| {
            if r.unit() < p {
                k += 1;
            }
            k
        })
        .collect()
}

/// `runs_only`: the copy floor, unique_consecutive and reduce_by_key only.
fn run<R: Runtime>(client: ComputeClient<R>, log2: u32, runs_only: bool) -> Report {
    let n = 1usize << log2;
    let small = 1usize << 22;
    let c = &client;
    let mut report = Report::new("compact");

    // The copy floor: 2^n f32 read + written.
    let src = DeviceTensor::<R>::from_slice(c, &floats(n, 1), &[n]).unwrap();
    let dst = DeviceTensor::<R>::empty(c, &[n], DType::F32);
    let copy = median_ms(c, || super::launch_copy(c, &src.handle, &dst.handle, n));
    report.copy("f32", n, copy);
    let mut ws = Workspace::<R>::new();

    // reduce sum f32 (read bandwidth).
    if !runs_only {
        let x = floats(small, 2);
        let got = cubeprim::reduce(
            c,
            &DeviceTensor::from_slice(c, &x, &[small]).unwrap(),
            None,
            ScanOp::Sum,
            &mut ws,
        )
        .unwrap()
        .to_vec::<f32>(c)[0] as f64;
        let want: f64 = x.iter().map(|&v| v as f64).sum();
        let abs: f64 = x.iter().map(|&v| v.abs() as f64).sum();
        let ok = (got - want).abs() <= 1e-5 * (abs + 1.0);
        let out = DeviceTensor::<R>::empty(c, &[], DType::F32);
        let ms = median_ms(c, || {
            cubeprim::reduce_into(c, &src, None, ScanOp::Sum, &out, &mut ws).unwrap()
        });
        report.push(
            "reduce sum f32",
            "f32",
            &[n],
            4.0 * n as f64,
            ms,
            checked(ok),
        );
    }

    // Masks as u32 words and as bytes (u8 / bool, PyTorch's mask dtype, read four to a word).
    let upload_mask = |m: &[u32], len: usize, bytes: bool| -> DeviceTensor<R> {
        if bytes {
            let b: Vec<u8> = m.iter().map(|&x| x as u8).collect();
            DeviceTensor::from_slice(c, &b, &[len]).unwrap()
        } else {
            DeviceTensor::from_slice(c, m, &[len]).unwrap()
        }
    };
    let masks: &[(bool, &str)] = if runs_only {
        &[]
    } else {
        &[(false, "u32"), (true, "u8")]
    };
    for &(bytes, name) in masks {
        let mb = if bytes { 1.0 } else { 4.0 };
        // masked_select f32 at 50%, device side only.
        {
            let (x, m) = (floats(small, 3), mask(small, 4, 0.5));
            let got = cubeprim::masked_select(
                c,
                &DeviceTensor::from_slice(c, &x, &[small]).unwrap(),
                &upload_mask(&m, small, bytes),
                &mut ws,
            )
            .unwrap()
            .to_vec::<f32>(c);
            let ok = got == cubeprim::cpu::select(&x, &m);
            let md = upload_mask(&mask(n, 5, 0.5), n, bytes);
            let out = DeviceTensor::<R>::empty(c, &[n], DType::F32);
            let count = cubeprim::new_count(c);
            let ms = median_ms(c, || {
                cubeprim::select_into(c, &src, &md, n, &out, &count, &mut ws).unwrap()
            });
            let k = cubeprim::read_count(c, &count) as f64;
            report.push(
                &format!("masked_select f32 50% ({name} mask)"),
                "f32",
                &[n],
                (4.0 + mb) * n as f64 + 4.0 * k,
                ms,
                checked(ok),
            );
        }
        // nonzero of 2^n flags at 50%, indices i64.
        {
            let m = mask(small, 6, 0.5);
            let got = cubeprim::nonzero(c, &upload_mask(&m, small, bytes), &mut ws).unwrap();
            let got: Vec<i64> = if got.dtype == DType::I64 {
                got.to_vec::<i64>(c)
            } else {
                got.to_vec::<i32>(c).into_iter().map(i64::from).collect()
            };
            let ok = got == cubeprim::cpu::nonzero(&m, &[small]).unwrap();
            let md = upload_mask(&mask(n, 7, 0.5), n, bytes);
            // The worst case's positions (every flag set) may pass the runtime's largest
            // buffer (2^28 i64 on a 2 GiB Vulkan binding limit): then the case is not run.
            let out =
                match DeviceTensor::<R>::try_empty(c, &[n, 1], cubeprim::nonzero_index_dtype(c)) {
                    Ok(out) => out,
                    Err(e) => {
                        println!("nonzero 50% ({name} flags) [{n}]: not run: {e}");
                        continue;
                    }
                };
            let count = cubeprim::new_count(c);
            let ms = median_ms(c, || {
                cubeprim::nonzero_into(c, &md, &out, &count, &mut ws).unwrap()
            });
            let k = cubeprim::read_count(c, &count) as f64;
            report.push(
                &format!("nonzero 50% ({name} flags)"),
                name,
                &[n],
                mb * n as f64 + 8.0 * k,
                ms,
                checked(ok),
            );
        }
    }

    // unique_consecutive with counts of sorted i32 keys, runs of mean 8 (lampshade's
    // run-length encoding's input) and mean 4, then values only of the latter.
    for mean in [8, 4] {
        let kd = DeviceTensor::<R>::from_slice(c, &sorted_runs(n, 9, mean), &[n]).unwrap();
        let k = sorted_runs(small, 8, mean);
        let u = cubeprim::unique_consecutive_sized(
            c,
            &DeviceTensor::from_slice(c, &k, &[small]).unwrap(),
            false,
            true,
            &mut ws,
        )
        .unwrap();
        let (wu, wc, _) = cubeprim::cpu::unique_consecutive(&k);
        let counts = u.counts.unwrap();
        let cnt: Vec<i64> = if counts.dtype == DType::I64 {
            counts.to_vec::<i64>(c)
        } else {
            counts.to_vec::<i32>(c).into_iter().map(i64::from).collect()
        };
        let ok = u.values.to_vec::<i32>(c) == wu && cnt == wc;
        let mut runs = 0.0;
        let ms = median_ms(c, || {
            let u = cubeprim::unique_consecutive(c, &kd, n, false, true, &mut ws).unwrap();
            runs = u.count.num_elements() as f64;
        });
        let _ = runs;
        let u = cubeprim::unique_consecutive(c, &kd, n, false, true, &mut ws).unwrap();
        let r = cubeprim::read_count(c, &u.count) as f64;
        let name = if mean == 4 {
            "unique_consecutive i32 sorted, counts".to_string()
        } else {
            format!("unique_consecutive i32 sorted (mean run {mean}), counts")
        };
        report
            .push(
                &name,
                "i32",
                &[n],
                4.0 * n as f64 + 12.0 * r,
                ms,
                checked(ok),
            )
            .extra("runs", r);
    }
    // Values only (PyTorch's default).
    let kd = DeviceTensor::<R>::from_slice(c, &sorted_keys(n, 9), &[n]).unwrap();
    {
        let k = sorted_keys(small, 8);
        let u = cubeprim::unique_consecutive_sized(
            c,
            &DeviceTensor::from_slice(c, &k, &[small]).unwrap(),
            false,
            false,
            &mut ws,
        )
        .unwrap();
        let ok = u.values.to_vec::<i32>(c) == cubeprim::cpu::unique_consecutive(&k).0;
        let ms = median_ms(c, || {
            let _ = cubeprim::unique_consecutive(c, &kd, n, false, false, &mut ws).unwrap();
        });
        let u = cubeprim::unique_consecutive(c, &kd, n, false, false, &mut ws).unwrap();
        let r = cubeprim::read_count(c, &u.count);
        report
            .push(
                "unique_consecutive i32 sorted",
                "i32",
                &[n],
                4.0 * n as f64 + 4.0 * r as f64,
                ms,
                checked(ok),
            )
            .extra("runs", r as f64);
    }
    drop(kd);

    // reduce_by_key sum, i32 keys (mean run 4), f32 values.
    {
        let (k, v) = (sorted_keys(small, 10), floats(small, 11));
        let (ok_, ov, count) = cubeprim::reduce_by_key(
            c,
            &DeviceTensor::from_slice(c, &k, &[small]).unwrap(),
            &DeviceTensor::from_slice(c, &v, &[small]).unwrap(),
            small,
            ScanOp::Sum,
            &mut ws,
        )
        .unwrap();
        let r = cubeprim::read_count(c, &count);
        let (wk, wv) = cubeprim::cpu::reduce_by_key(&k, &v, ScanOp::Sum);
        let gv = ov.to_vec::<f32>(c);
        let ok = r == wk.len()
            && ok_.to_vec::<i32>(c)[..r] == wk[..]
            && gv[..r]
                .iter()
                .zip(&wv)
                .all(|(a, b)| (a - b).abs() <= 1e-4 * (b.abs() + 8.0));
        let kd = DeviceTensor::<R>::from_slice(c, &sorted_keys(n, 12), &[n]).unwrap();
        let ok2 = DeviceTensor::<R>::empty(c, &[n], DType::I32);
        let ov2 = DeviceTensor::<R>::empty(c, &[n], DType::F32);
        let count = cubeprim::new_count(c);
        let ms = median_ms(c, || {
            cubeprim::reduce_by_key_into(c, &kd, &src, n, ScanOp::Sum, &ok2, &ov2, &count, &mut ws)
                .unwrap()
        });
        let r = cubeprim::read_count(c, &count) as f64;
        report.push(
            "reduce_by_key sum (i32 keys, f32 values)",
            "i32,f32",
            &[n],
            8.0 * n as f64 + 8.0 * r,
            ms,
            checked(ok),
        );
    }

    // histogram of 256 bins, random u32 keys below 256 (lampshade's histogram's input).
    {
        let keys = |len: usize, seed: u64| -> Vec<u32> {
            let mut r = Rng(seed | 1);
            (0..len).map(|_| (r.next() >> 24) as u32 % 256).collect()
        };
        let k = keys(small, 13);
        let got = cubeprim::histogram(
            c,
            &DeviceTensor::from_slice(c, &k, &[small]).unwrap(),
            256,
            small,
            &mut ws,
        )
        .unwrap()
        .to_vec::<u32>(c);
        let mut want = vec![0u32; 256];
        for &v in &k {
            want[v as usize] += 1;
        }
        let kd = DeviceTensor::<R>::from_slice(c, &keys(n, 14), &[n]).unwrap();
        let out = DeviceTensor::<R>::empty(c, &[256], DType::U32);
        let ms = median_ms(c, || {
            cubeprim::histogram_into(c, &kd, 256, n, &out, &mut ws).unwrap()
        });
        report.push(
            "histogram 256 bins (u32 keys)",
            "u32",
            &[n],
            4.0 * n as f64,
            ms,
            checked(got == want),
        );
    }
    report
}

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    common: Common,
    /// The timed cases' size: 2^LOG2_N elements (the checks use 2^22).
    #[arg(default_value_t = 28, value_name = "LOG2_N")]
    log2: u32,
    /// The copy floor, unique_consecutive and reduce_by_key only.
    #[arg(long)]
    runs: bool,
}

pub fn main(args: Args) {
    let report = match args.common.runtime {
        #[cfg(feature = "cuda")]
        super::RuntimeName::Cuda => {
            use cubecl::cuda::{CudaDevice, CudaRuntime};
            run(
                CudaRuntime::client(&CudaDevice::new(0)),
                args.log2,
                args.runs,
            )
        }
        #[cfg(all(feature = "wgpu", not(feature = "cuda")))]
        super::RuntimeName::Wgpu => {
            use cubecl::wgpu::{WgpuDevice, WgpuRuntime};
            run(
                WgpuRuntime::client(&WgpuDevice::default()),
                args.log2,
                args.runs,
            )
        }
        #[allow(unreachable_patterns)]
        _ => panic!("runtime not built: a `cuda` build has CUDA only, others wgpu"),
    };
    super::finish(&args.common, report);
}
