//! cubeprim's candle ops against candle's built-ins, on the CPU and (feature `candle-cuda`)
//! on CUDA.
//!
//! ```text
//! cargo run --release --features candle --example bench_candle
//! cargo run --release --no-default-features --features candle-cuda --example bench_candle
//! ```
//!
//! CPU: `scan_sum` vs candle's `cumsum` (an O(n²) matmul with a triangular matrix) and a plain
//! O(n) loop. CUDA: first every op (dtypes, ranks, axes, strided views, indices) against the
//! CPU result, then timings of `scan_sum` against candle's `cumsum` and a device copy of the
//! same tensor (the bandwidth bound), and candle's `arg_sort_last_dim` (which fails on long
//! rows) against cubeprim's `arg_sort_stable` and `top_k`, with the fixed cost of an op that
//! goes through cubecl's runtime. Medians of several runs; the device is synchronised around
//! each.

use candle_core::{Device, Result, Tensor};
use cubeprim::candle::ScanExt;
#[cfg(feature = "candle-cuda")]
use cubeprim::candle::{RunsExt, SortExt};
use std::time::Instant;

/// Median seconds of `reps` runs of `f` (after one warm-up), synchronising `dev` around each.
fn time(dev: &Device, reps: usize, mut f: impl FnMut() -> Result<Tensor>) -> Result<f64> {
    f()?;
    dev.synchronize()?;
    let mut t = Vec::with_capacity(reps);
    for _ in 0..reps {
        let start = Instant::now();
        let out = f()?;
        dev.synchronize()?;
        t.push(start.elapsed().as_secs_f64());
        drop(out);
    }
    t.sort_by(f64::total_cmp);
    Ok(t[reps / 2])
}

fn ms(s: f64) -> String {
    format!("{:.3} ms", s * 1e3)
}

fn cpu() -> Result<()> {
    let dev = Device::Cpu;
    println!("## CPU ({} threads)", rayon_threads());
    println!("| shape, axis | candle cumsum | plain O(n) loop | cubeprim scan_sum | vs candle |");
    println!("|---|---|---|---|---|");
    for (shape, axis, candle_reps) in [
        (vec![16usize, 16384], 1usize, 3usize),
        (vec![16384, 16], 0, 3),
        (vec![256, 1024], 1, 5),
        (vec![1, 1 << 22], 1, 0),
    ] {
        let n: usize = shape.iter().product();
        let data: Vec<f32> = (0..n).map(|i| ((i * 7919) % 13) as f32 - 6.0).collect();
        let x = Tensor::from_vec(data.clone(), &*shape, &dev)?;
        let ours = time(&dev, 20, || x.scan_sum(axis))?;
        let plain = {
            let len = shape[axis];
            let inner: usize = shape[axis + 1..].iter().product();
            let start = Instant::now();
            let reps = 20;
            for _ in 0..reps {
                let mut out = vec![0f32; n];
                for (o, chunk) in data.chunks(len * inner).enumerate() {
                    for i in 0..inner {
                        let mut acc = 0f32;
                        for s in 0..len {
                            acc += chunk[s * inner + i];
                            out[o * len * inner + s * inner + i] = acc;
                        }
                    }
                }
                std::hint::black_box(&out);
            }
            start.elapsed().as_secs_f64() / reps as f64
        };
        let candle = if candle_reps > 0 {
            let t = time(&dev, candle_reps, || x.cumsum(axis))?;
            let diff = (x.cumsum(axis)? - x.scan_sum(axis)?)?
                .abs()?
                .max_all()?
                .to_scalar::<f32>()?;
            assert!(diff < 1e-2, "cumsum and scan_sum differ by {diff}");
            Some(t)
        } else {
            None
        };
        println!(
            "| {shape:?}, {axis} | {} | {} | {} | {} |",
            candle.map(ms).unwrap_or_else(|| format!(
                "not run: needs a {}×{} matrix ({} GiB)",
                shape[axis],
                shape[axis],
                (shape[axis] * shape[axis] * 4) >> 30
            )),
            ms(plain),
            ms(ours),
            candle
                .map(|c| format!("{:.0}×", c / ours))
                .unwrap_or_else(|| "-".into()),
        );
    }
    Ok(())
}

fn rayon_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

#[cfg(feature = "candle-cuda")]
mod cuda {
    use super::*;
    use candle_core::{DType, D};
    use cubeprim::{ScanOp, ScanOptions};

    /// Largest |a - b| relative to the scale of b (exact comparison for integers).
    fn max_err(a: &Tensor, b: &Tensor) -> Result<f64> {
        let a = a.to_dtype(DType::F64)?.flatten_all()?.to_vec1::<f64>()?;
        let b = b.to_dtype(DType::F64)?.flatten_all()?.to_vec1::<f64>()?;
        let mut worst = 0f64;
        for (x, y) in a.iter().zip(&b) {
            if x.is_nan() && y.is_nan() {
                continue;
            }
            worst = worst.max((x - y).abs() / (1.0 + y.abs()));
        }
        Ok(worst)
    }

    /// One op on CUDA (`g`) against the CPU (`h`): `None` when they agree, else the error.
    fn compare(
        h: &Tensor,
        g: &Tensor,
        axis: usize,
        op: ScanOp,
        opts: ScanOptions,
    ) -> Result<Option<String>> {
        let want = h.scan(axis, op, opts)?;
        let got = g.scan(axis, op, opts)?;
        let tol = match h.dtype() {
            DType::F16 | DType::BF16 => 2e-2,
            DType::F32 => 1e-5,
            _ => 1e-12,
        };
        let e = max_err(&got, &want)?;
        if e > tol {
            return Ok(Some(format!("values differ by {e}")));
        }
        if matches!(op, ScanOp::Max | ScanOp::Min) {
            let (_, wi) = h.scan_with_indices(axis, op, opts)?;
            let (gv, gi) = g.scan_with_indices(axis, op, opts)?;
            if max_err(&gv, &want)? != 0.0 {
                return Ok(Some("values with indices differ".into()));
            }
            let gi = gi
                .to_device(&Device::Cpu)?
                .flatten_all()?
                .to_vec1::<u32>()?;
            if gi != wi.flatten_all()?.to_vec1::<u32>()? {
                return Ok(Some("indices differ".into()));
            }
        }
        Ok(None)
    }

    /// Every op on CUDA against the same op on the CPU.
    pub fn check(dev: &Device) -> Result<()> {
        let (mut pass, mut fail) = (0, 0);
        let dtypes = [
            DType::F32,
            DType::F64,
            DType::F16,
            DType::BF16,
            DType::U32,
            DType::I32,
            DType::I64,
        ];
        let shapes: [&[usize]; 7] = [
            &[1],
            &[1000],
            &[3, 4097],
            &[1 << 20],
            &[5, 7, 300],
            &[2, 3, 4, 5],
            &[70_000, 3],
        ];
        for dt in dtypes {
            for shape in shapes {
                let n: usize = shape.iter().product();
                let data: Vec<f64> = (0..n).map(|i| ((i * 7919) % 5) as f64).collect();
                let host = Tensor::from_vec(data, shape, &Device::Cpu)?.to_dtype(dt)?;
                let gpu = host.to_device(dev)?;
                let rank = shape.len();
                // Contiguous, and a strided view (transposed or narrowed).
                let views: Vec<(Tensor, Tensor)> = if rank >= 2 {
                    vec![
                        (host.clone(), gpu.clone()),
                        (host.transpose(0, rank - 1)?, gpu.transpose(0, rank - 1)?),
                    ]
                } else if shape[0] > 2 {
                    vec![
                        (host.clone(), gpu.clone()),
                        (
                            host.narrow(0, 1, shape[0] - 2)?,
                            gpu.narrow(0, 1, shape[0] - 2)?,
                        ),
                    ]
                } else {
                    vec![(host.clone(), gpu.clone())]
                };
                for (h, g) in views {
                    for axis in 0..rank {
                        for op in [ScanOp::Sum, ScanOp::Prod, ScanOp::Max, ScanOp::Min] {
                            // Products of integers wrap identically; of floats, they are
                            // exact here only for short rows of 0..5 (zero soon).
                            let o = ScanOptions::default();
                            for opts in [o, o.exclusive().reverse()] {
                                match compare(&h, &g, axis, op, opts) {
                                    Ok(None) => pass += 1,
                                    Ok(Some(e)) => {
                                        fail += 1;
                                        println!(
                                            "MISMATCH {dt:?} {shape:?} strides {:?} axis {axis} \
                                             {op:?} {opts:?}: {e}",
                                            g.stride()
                                        );
                                    }
                                    Err(e) => {
                                        fail += 1;
                                        println!(
                                            "ERROR {dt:?} {shape:?} axis {axis} {op:?}: {}",
                                            first_line(&e.to_string())
                                        );
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        println!("CUDA vs CPU: {pass} passed, {fail} failed");
        Ok(())
    }

    pub fn bench(dev: &Device) -> Result<()> {
        println!("\n## CUDA: scan_sum vs candle cumsum (f32)");
        println!("| shape, axis | copy (GB/s) | candle cumsum | cubeprim scan_sum | scan GB/s | scan / copy time | vs candle |");
        println!("|---|---|---|---|---|---|---|");
        for (shape, axis) in [
            (vec![16usize, 16384], 1usize),
            (vec![1024, 4096], 1),
            (vec![4096, 4096], 0),
            (vec![1, 1 << 16], 1),
            (vec![1, 1 << 20], 1),
            (vec![1, 1 << 24], 1),
            (vec![1, 1 << 28], 1),
        ] {
            let n: usize = shape.iter().product();
            let x = Tensor::ones(&*shape, DType::F32, dev)?;
            let bytes = 2.0 * (n * 4) as f64;
            let copy = time(dev, 20, || x.copy())?;
            let ours = time(dev, 20, || x.scan_sum(axis))?;
            let (candle, ratio) = if shape[axis] <= 1 << 16 {
                match time(dev, 5, || x.cumsum(axis)) {
                    Ok(t) => (ms(t), format!("{:.0}×", t / ours)),
                    Err(e) => (format!("fails: {}", first_line(&e.to_string())), "-".into()),
                }
            } else {
                let gib = (shape[axis] * shape[axis] * 4) >> 30;
                (
                    format!("not run: needs a {0}×{0} matrix ({gib} GiB)", shape[axis]),
                    "-".into(),
                )
            };
            println!(
                "| {shape:?}, {axis} | {:.0} | {candle} | {} | {:.0} | {:.2} | {ratio} |",
                bytes / copy / 1e9,
                ms(ours),
                bytes / ours / 1e9,
                ours / copy
            );
        }

        println!("\n## CUDA: arg_sort (f32, ascending), candle vs cubeprim");
        println!(
            "cubeprim's sorts of rows that fit one cube run on candle's stream \
             (src/candle/cuda_sort.rs); longer rows and top_k on cubecl's CUDA runtime: one \
             device copy of the keys in, one of the indices out, host syncs between the \
             streams (src/candle/bridge.rs)."
        );
        let one = Tensor::zeros(1, DType::U32, dev)?;
        let fixed = time(dev, 50, || one.histogram(1))?;
        println!(
            "Fixed cost of a bridged op (histogram of one key): {}",
            ms(fixed)
        );
        println!(
            "| shape | copy | candle arg_sort_last_dim | cubeprim arg_sort_stable | top_k(8) |"
        );
        println!("|---|---|---|---|---|");
        for shape in [
            [4096usize, 256],
            [1024, 1024],
            [256, 8192],
            [64, 16384],
            [1, 1 << 20],
            [1, 1 << 24],
        ] {
            let n = shape[0] * shape[1];
            let data: Vec<f32> = (0..n).map(|i| ((i * 7919) % 10007) as f32).collect();
            let x = Tensor::from_vec(data, &shape, dev)?;
            let copy = time(dev, 20, || x.copy())?;
            let sort = match time(dev, 10, || x.arg_sort_last_dim(true)) {
                Ok(t) => ms(t),
                Err(e) => format!("fails: {}", first_line(&e.to_string())),
            };
            let ours = time(dev, 10, || x.arg_sort_stable(D::Minus1, true))?;
            let top = time(dev, 10, || Ok(x.top_k(8, D::Minus1)?.1))?;
            println!(
                "| {shape:?} | {} | {sort} | {} | {} |",
                ms(copy),
                ms(ours),
                ms(top)
            );
        }
        Ok(())
    }

    fn first_line(s: &str) -> String {
        s.lines().next().unwrap_or("").chars().take(90).collect()
    }
}

fn main() -> Result<()> {
    cpu()?;
    #[cfg(feature = "candle-cuda")]
    match Device::new_cuda(0) {
        Ok(dev) => {
            cuda::bench(&dev)?;
            if let Err(e) = cuda::check(&dev) {
                println!("CUDA check stopped: {e}");
            }
        }
        Err(e) => println!("\nno CUDA device: {e}"),
    }
    Ok(())
}
