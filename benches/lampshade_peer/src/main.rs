//! Peer benchmark for lampshade 0.13 (wgpu 30 / WGSL primitives), run beside cubeprim's own
//! wgpu bench on the same card in the same run.
//!
//! For each size and each u32 primitive lampshade has, the GPU-resident `*_gpu_to_gpu` API is
//! first checked once against a CPU reference (output read back), then timed: one warm-up call
//! and a device wait, then R calls submitted back to back and one device wait; the wall clock of
//! the R calls over R is the time per call. A `copy_buffer_to_buffer` of the same n*4 bytes is
//! timed the same way as a memory floor.
//!
//! Usage: `lampshade_peer [--log2 N]... [--reps R] [--warmup-ms MS] [--op NAME]... [--out FILE.json]`

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use lampshade::{
    Compactor, Context, Histogram, Reducer, RunLengthEncoder, RunLengthOutputBuffers, Scanner,
    Sorter, U32Reduction,
};
use rand::{rngs::StdRng, Rng, SeedableRng};
use serde::Serialize;
use serde_json::json;
use wgpu::util::DeviceExt;

const PEER: &str = "lampshade 0.13.0";
const BINS: u32 = 256;
const DEFAULT_LOG2: [u32; 3] = [20, 24, 28];
const DEFAULT_REPS: usize = 20;

/// The ops, in the order they run at each size.
const OPS: [&str; 7] = [
    "scan_inclusive_u32",
    "scan_exclusive_u32",
    "compact_u32",
    "sort_u32",
    "reduce_sum_u32",
    "run_length_encode_u32",
    "histogram_256_u32",
];

/// Run only with `--op`, or automatically at a size where `sort_u32` hits lampshade's
/// optimized radix-sort element limit (the NVIDIA 8-bit path stops at 65535 * 1792 keys).
const FALLBACK_OPS: [&str; 1] = ["sort_u32_portable"];

type Call<'a> = dyn FnMut() -> Result<(), lampshade::Error> + 'a;

#[derive(Serialize)]
struct Case {
    op: String,
    n: u64,
    /// Milliseconds per call (host wall clock of R back-to-back calls and one wait, over R).
    ms: Option<f64>,
    /// Milliseconds per `copy_buffer_to_buffer` of n*4 bytes, timed the same way.
    copy_ms: Option<f64>,
    /// 2 * n * 4 bytes / copy_ms.
    copy_gbps: Option<f64>,
    reps: usize,
    check: String,
    note: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

struct Args {
    log2: Vec<u32>,
    reps: usize,
    warmup_ms: f64,
    ops: Vec<String>,
    out: Option<String>,
}

fn usage() -> ! {
    eprintln!(
        "usage: lampshade_peer [--log2 N]... [--reps R] [--warmup-ms MS] [--op NAME]... [--out FILE.json]\n\
         defaults: --log2 20 --log2 24 --log2 28 --reps {DEFAULT_REPS} --warmup-ms 0 (one warm-up call), every op\n\
         ops: {}, {} (the latter also runs where sort_u32 hits the 8-bit path's limit)",
        OPS.join(", "),
        FALLBACK_OPS.join(", ")
    );
    std::process::exit(2)
}

fn parse_args() -> Args {
    let mut args = Args {
        log2: Vec::new(),
        reps: DEFAULT_REPS,
        warmup_ms: 0.0,
        ops: Vec::new(),
        out: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| usage());
        match flag.as_str() {
            "--log2" => match value().parse::<u32>() {
                Ok(v) if v <= 31 => args.log2.push(v),
                _ => usage(),
            },
            "--reps" => match value().parse::<usize>() {
                Ok(v) if v > 0 => args.reps = v,
                _ => usage(),
            },
            "--warmup-ms" => match value().parse::<f64>() {
                Ok(v) if v >= 0.0 => args.warmup_ms = v,
                _ => usage(),
            },
            "--op" => {
                let op = value();
                if !OPS.contains(&op.as_str()) && !FALLBACK_OPS.contains(&op.as_str()) {
                    usage();
                }
                args.ops.push(op);
            }
            "--out" => args.out = Some(value()),
            _ => usage(),
        }
    }
    if args.log2.is_empty() {
        args.log2 = DEFAULT_LOG2.to_vec();
    }
    if args.ops.is_empty() {
        args.ops = OPS.iter().map(|s| s.to_string()).collect();
    }
    args
}

// ---------------------------------------------------------------------------------------------
// Device helpers

fn wait(device: &wgpu::Device) -> Result<(), String> {
    device
        .poll(wgpu::PollType::Wait {
            submission_index: None,
            timeout: None,
        })
        .map(|_| ())
        .map_err(|e| format!("device poll failed: {e}"))
}

const USAGE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
    .union(wgpu::BufferUsages::COPY_SRC)
    .union(wgpu::BufferUsages::COPY_DST);

fn upload(device: &wgpu::Device, data: &[u32], label: &str) -> wgpu::Buffer {
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: bytemuck::cast_slice(data),
        usage: USAGE,
    })
}

fn empty(device: &wgpu::Device, words: usize, label: &str) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: (words.max(1) * 4) as u64,
        usage: USAGE,
        mapped_at_creation: false,
    })
}

/// Copies the first `words` u32 of `buffer` to the host (after all submitted work).
fn readback(ctx: &Context, buffer: &wgpu::Buffer, words: usize) -> Result<Vec<u32>, String> {
    if words == 0 {
        return Ok(Vec::new());
    }
    let bytes = (words * 4) as u64;
    let staging = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("lampshade_peer readback"),
        size: bytes,
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, bytes);
    ctx.queue.submit(Some(encoder.finish()));
    let slice = staging.slice(..);
    let (tx, rx) = mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    wait(&ctx.device)?;
    rx.recv()
        .map_err(|e| format!("map callback lost: {e}"))?
        .map_err(|e| format!("map failed: {e}"))?;
    let view = slice
        .get_mapped_range()
        .map_err(|e| format!("mapped range: {e}"))?;
    let out = bytemuck::cast_slice::<u8, u32>(&view).to_vec();
    drop(view);
    staging.unmap();
    Ok(out)
}

/// How a call is timed.
#[derive(Clone, Copy)]
struct Timing {
    reps: usize,
    /// After the warm-up call, keep calling (a wait after each) until this much wall time has
    /// passed; 0 = the single warm-up call only.
    warmup_ms: f64,
}

/// One warm-up call and a wait (repeated for `warmup_ms` if set), then `reps` calls back to
/// back and one wait: ms per call.
fn time_calls(device: &wgpu::Device, t: Timing, call: &mut Call<'_>) -> Result<f64, String> {
    let warm = Instant::now();
    loop {
        call().map_err(|e| e.to_string())?;
        wait(device)?;
        if warm.elapsed().as_secs_f64() * 1e3 >= t.warmup_ms {
            break;
        }
    }
    let start = Instant::now();
    let reps = t.reps;
    for _ in 0..reps {
        call().map_err(|e| e.to_string())?;
    }
    wait(device)?;
    Ok(start.elapsed().as_secs_f64() * 1e3 / reps as f64)
}

/// `copy_buffer_to_buffer` of n*4 bytes, one encoder per call, timed like the ops.
fn copy_floor(ctx: &Context, n: usize, t: Timing) -> Result<f64, String> {
    let src = empty(&ctx.device, n, "copy src");
    let dst = empty(&ctx.device, n, "copy dst");
    let bytes = (n * 4) as u64;
    let mut call = || {
        let mut encoder = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        encoder.copy_buffer_to_buffer(&src, 0, &dst, 0, bytes);
        ctx.queue.submit(Some(encoder.finish()));
        Ok(())
    };
    time_calls(&ctx.device, t, &mut call)
}

// ---------------------------------------------------------------------------------------------
// CPU references and comparison

fn compare(what: &str, got: &[u32], want: &[u32]) -> String {
    if got.len() != want.len() {
        return format!(
            "MISMATCH {what}: length {} vs expected {}",
            got.len(),
            want.len()
        );
    }
    match got.iter().zip(want).position(|(g, w)| g != w) {
        None => "ok".to_string(),
        Some(i) => {
            let wrong = got.iter().zip(want).filter(|(g, w)| g != w).count();
            format!(
                "MISMATCH {what}: {wrong} of {} wrong, first at {i}: got {} expected {}",
                want.len(),
                got[i],
                want[i]
            )
        }
    }
}

fn scan_ref(input: &[u32], inclusive: bool) -> Vec<u32> {
    let mut sum = 0u32;
    input
        .iter()
        .map(|&v| {
            let before = sum;
            sum = sum.wrapping_add(v);
            if inclusive {
                sum
            } else {
                before
            }
        })
        .collect()
}

/// LSD radix sort, 8 bits a pass (fast enough for 2^28 keys on one core).
fn sort_ref(input: &[u32]) -> Vec<u32> {
    let mut a = input.to_vec();
    let mut b = vec![0u32; a.len()];
    for shift in [0u32, 8, 16, 24] {
        let mut offsets = [0usize; 256];
        for &v in &a {
            offsets[((v >> shift) & 0xff) as usize] += 1;
        }
        let mut total = 0;
        for o in offsets.iter_mut() {
            let c = *o;
            *o = total;
            total += c;
        }
        for &v in &a {
            let d = ((v >> shift) & 0xff) as usize;
            b[offsets[d]] = v;
            offsets[d] += 1;
        }
        std::mem::swap(&mut a, &mut b);
    }
    a
}

fn rle_ref(input: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let mut values = Vec::new();
    let mut lengths: Vec<u32> = Vec::new();
    for &v in input {
        if values.last() == Some(&v) {
            *lengths.last_mut().unwrap() += 1;
        } else {
            values.push(v);
            lengths.push(1);
        }
    }
    (values, lengths)
}

fn random_u32(n: usize, seed: u64) -> Vec<u32> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut v = vec![0u32; n];
    rng.fill(&mut v[..]);
    v
}

/// Sorted runs of geometric length, mean 8: a new key with probability 1/8.
fn run_keys(n: usize, seed: u64) -> Vec<u32> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut key = 0u32;
    (0..n)
        .map(|i| {
            if i > 0 && rng.random_ratio(1, 8) {
                key = key.wrapping_add(1);
            }
            key
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The bench

struct Bench {
    ctx: Context,
    errors: Arc<Mutex<Vec<String>>>,
    timing: Timing,
    scanner: Scanner,
    compactor: Compactor,
    sorter: Sorter,
    /// `Sorter::new` without adapter info: lampshade's portable 2-bit radix path.
    portable_sorter: Option<Sorter>,
    /// Set when `sort_u32` was refused with `RadixElementCountLimitExceeded`.
    sort_limit_hit: bool,
    reducer: Reducer,
    rle: RunLengthEncoder,
    histogram: Histogram,
    scan_path: String,
    sort_path: String,
}

struct Outcome {
    check: String,
    ms: f64,
}

impl Bench {
    fn new(ctx: Context, timing: Timing) -> Self {
        let errors = Arc::new(Mutex::new(Vec::new()));
        let sink = errors.clone();
        ctx.device
            .on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
                sink.lock().unwrap().push(e.to_string());
            }));
        let info = &ctx.adapter_info;
        let subgroups = ctx.device.features().contains(wgpu::Features::SUBGROUP);
        // Mirrors lampshade's private routing (src/sort/pipeline.rs, src/context.rs) so the
        // JSON says which kernel the numbers belong to.
        let nvidia_vk = info.backend == wgpu::Backend::Vulkan && info.vendor == 0x10de;
        let sort_path = if nvidia_vk
            && info.device_type == wgpu::DeviceType::DiscreteGpu
            && subgroups
            && info.subgroup_min_size == 32
            && info.subgroup_max_size == 32
        {
            "expected path: 8-bit NVIDIA Vulkan subgroup radix (4 passes; n <= 2^28-1)"
        } else {
            "expected path: portable 2-bit radix (16 passes)"
        };
        let scan_path = if subgroups {
            "subgroup scan kernels (SUBGROUP enabled)"
        } else {
            "portable shared-memory scan kernels (no SUBGROUP)"
        };
        Self {
            scanner: Scanner::from_context(&ctx),
            compactor: Compactor::from_context(&ctx),
            sorter: Sorter::from_context(&ctx),
            portable_sorter: None,
            sort_limit_hit: false,
            reducer: Reducer::from_context(&ctx),
            rle: RunLengthEncoder::from_context(&ctx),
            histogram: Histogram::from_context(&ctx),
            ctx,
            errors,
            timing,
            scan_path: scan_path.to_string(),
            sort_path: sort_path.to_string(),
        }
    }

    fn note(&self, op: &str) -> String {
        let common = "GPU-resident *_gpu_to_gpu API: each call records its own encoder and \
                      submits, no host wait or readback in the timed part";
        match op {
            "scan_inclusive_u32" => format!(
                "Scanner::scan_gpu_to_gpu, random u32, wrapping sums; {}; {common}",
                self.scan_path
            ),
            "scan_exclusive_u32" => format!(
                "Scanner::scan_exclusive_gpu_to_gpu, random u32, wrapping sums; {}; {common}",
                self.scan_path
            ),
            "compact_u32" => format!(
                "Compactor::compact_gpu_to_gpu, random u32 values, random 50% 0/1 u32 mask; \
                 selected count stays in a GPU buffer; {common}"
            ),
            "sort_u32" => format!(
                "Sorter::sort_gpu_to_gpu (key-only, stable LSD radix, full 32-bit keys, \
                 out-of-place), random u32; {}; {common}",
                self.sort_path
            ),
            "sort_u32_portable" => format!(
                "Sorter::new(&device, &queue).sort_gpu_to_gpu: lampshade's portable 2-bit radix \
                 path (16 passes), chosen without adapter info; run here because the \
                 adapter-routed sort_u32 refused this n or because --op asked; random u32; \
                 {common}"
            ),
            "reduce_sum_u32" => format!(
                "Reducer::reduce_gpu_to_gpu(U32Reduction::Sum), random u32, wrapping; the \
                 scalar is written to a GPU buffer (not read back); {common}"
            ),
            "run_length_encode_u32" => format!(
                "RunLengthEncoder::encode_gpu_to_gpu, sorted runs of geometric length mean 8 \
                 (new key with probability 1/8); values, lengths and run count stay on the \
                 GPU; {}; {common}",
                self.scan_path
            ),
            "histogram_256_u32" => format!(
                "Histogram::histogram_gpu_to_gpu with 256 bins, input random u32 % 256 \
                 (lampshade bins by value, 0..bin_count); output cleared inside each call; \
                 {common}"
            ),
            _ => String::new(),
        }
    }

    fn run_case(&mut self, op: &str, n: usize, copy_ms: Option<f64>) -> Case {
        self.errors.lock().unwrap().clear();
        let result = catch_unwind(AssertUnwindSafe(|| self.run_op(op, n)));
        let _ = wait(&self.ctx.device);
        let wgpu_errors = std::mem::take(&mut *self.errors.lock().unwrap());
        let (mut check, ms, mut error) = match result {
            Ok(Ok(o)) => (o.check, Some(o.ms), None),
            Ok(Err(e)) => ("ERROR".to_string(), None, Some(e)),
            Err(panic) => {
                let msg = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "panic".to_string());
                ("ERROR".to_string(), None, Some(format!("panic: {msg}")))
            }
        };
        if !wgpu_errors.is_empty() {
            let msg = format!("wgpu error(s): {}", wgpu_errors.join(" | "));
            error = Some(match error {
                Some(e) => format!("{e}; {msg}"),
                None => msg,
            });
            if check == "ok" {
                check = "ERROR".to_string();
            }
        }
        Case {
            op: op.to_string(),
            n: n as u64,
            ms,
            copy_ms,
            copy_gbps: copy_ms.map(|c| gbps(n, c)),
            reps: self.timing.reps,
            check,
            note: self.note(op),
            error,
        }
    }

    fn run_op(&mut self, op: &str, n: usize) -> Result<Outcome, String> {
        // Per-op, per-size seed (the portable sort shares sort_u32's keys).
        let op_index = OPS
            .iter()
            .position(|o| *o == op || (*o == "sort_u32" && op == "sort_u32_portable"))
            .unwrap_or(OPS.len()) as u64;
        let seed = 0x1a3b_5ade ^ ((n as u64) << 8) ^ op_index;
        let num = u32::try_from(n).map_err(|_| format!("n = {n} does not fit in u32"))?;
        let timing = self.timing;
        let ctx = &self.ctx;
        let device = &ctx.device;
        let e = |e: lampshade::Error| e.to_string();
        match op {
            "scan_inclusive_u32" | "scan_exclusive_u32" => {
                let inclusive = op == "scan_inclusive_u32";
                let input = random_u32(n, seed);
                let gin = upload(device, &input, "scan in");
                let gout = empty(device, n, "scan out");
                let scanner = &mut self.scanner;
                let mut call = || {
                    if inclusive {
                        scanner.scan_gpu_to_gpu(&gin, &gout, num)
                    } else {
                        scanner.scan_exclusive_gpu_to_gpu(&gin, &gout, num)
                    }
                };
                call().map_err(e)?;
                let got = readback(ctx, &gout, n)?;
                let check = compare("prefix", &got, &scan_ref(&input, inclusive));
                drop((got, input));
                let ms = time_calls(device, timing, &mut call)?;
                Ok(Outcome { check, ms })
            }
            "compact_u32" => {
                let input = random_u32(n, seed);
                let mask: Vec<u32> = random_u32(n, seed ^ 0x3a5c)
                    .into_iter()
                    .map(|v| v >> 31)
                    .collect();
                let gin = upload(device, &input, "compact in");
                let gmask = upload(device, &mask, "compact mask");
                let gout = empty(device, n, "compact out");
                let gcount = empty(device, 1, "compact count");
                let compactor = &mut self.compactor;
                let mut call = || compactor.compact_gpu_to_gpu(&gin, &gmask, &gout, &gcount, num);
                call().map_err(e)?;
                let want: Vec<u32> = input
                    .iter()
                    .zip(&mask)
                    .filter(|(_, &m)| m == 1)
                    .map(|(&v, _)| v)
                    .collect();
                let count = readback(ctx, &gcount, 1)?[0] as usize;
                let check = if count != want.len() {
                    format!("MISMATCH count: got {count} expected {}", want.len())
                } else {
                    compare("values", &readback(ctx, &gout, count)?, &want)
                };
                drop((input, mask, want));
                let ms = time_calls(device, timing, &mut call)?;
                Ok(Outcome { check, ms })
            }
            "sort_u32" | "sort_u32_portable" => {
                let input = random_u32(n, seed);
                let gin = upload(device, &input, "sort in");
                let gout = empty(device, n, "sort out");
                let sorter = if op == "sort_u32" {
                    &mut self.sorter
                } else {
                    self.portable_sorter
                        .get_or_insert_with(|| Sorter::new(&ctx.device, &ctx.queue))
                };
                let mut call = || sorter.sort_gpu_to_gpu(&gin, &gout, num);
                if let Err(err) = call() {
                    if op == "sort_u32"
                        && matches!(err, lampshade::Error::RadixElementCountLimitExceeded { .. })
                    {
                        self.sort_limit_hit = true;
                    }
                    return Err(e(err));
                }
                let got = readback(ctx, &gout, n)?;
                let check = compare("keys", &got, &sort_ref(&input));
                drop((got, input));
                let ms = time_calls(device, timing, &mut call)?;
                Ok(Outcome { check, ms })
            }
            "reduce_sum_u32" => {
                let input = random_u32(n, seed);
                let gin = upload(device, &input, "reduce in");
                let gout = empty(device, 1, "reduce out");
                let reducer = &mut self.reducer;
                let mut call = || reducer.reduce_gpu_to_gpu(&gin, &gout, num, U32Reduction::Sum);
                call().map_err(e)?;
                let want = input.iter().fold(0u32, |a, &v| a.wrapping_add(v));
                let check = compare("sum", &readback(ctx, &gout, 1)?, &[want]);
                drop(input);
                let ms = time_calls(device, timing, &mut call)?;
                Ok(Outcome { check, ms })
            }
            "run_length_encode_u32" => {
                let input = run_keys(n, seed);
                let gin = upload(device, &input, "rle in");
                let gvalues = empty(device, n, "rle values");
                let glengths = empty(device, n, "rle lengths");
                let gcount = empty(device, 1, "rle count");
                let rle = &mut self.rle;
                let mut call = || {
                    rle.encode_gpu_to_gpu(
                        &gin,
                        RunLengthOutputBuffers::new(&gvalues, &glengths, &gcount),
                        num,
                    )
                };
                call().map_err(e)?;
                let (want_values, want_lengths) = rle_ref(&input);
                let count = readback(ctx, &gcount, 1)?[0] as usize;
                let check = if count != want_values.len() {
                    format!(
                        "MISMATCH run count: got {count} expected {}",
                        want_values.len()
                    )
                } else {
                    let c = compare("values", &readback(ctx, &gvalues, count)?, &want_values);
                    if c == "ok" {
                        compare("lengths", &readback(ctx, &glengths, count)?, &want_lengths)
                    } else {
                        c
                    }
                };
                drop((input, want_values, want_lengths));
                let ms = time_calls(device, timing, &mut call)?;
                Ok(Outcome { check, ms })
            }
            "histogram_256_u32" => {
                let input: Vec<u32> = random_u32(n, seed).into_iter().map(|v| v % BINS).collect();
                let gin = upload(device, &input, "histogram in");
                let gout = empty(device, BINS as usize, "histogram out");
                let histogram = &self.histogram;
                let mut call = || histogram.histogram_gpu_to_gpu(&gin, &gout, num, BINS);
                call().map_err(e)?;
                let mut want = vec![0u32; BINS as usize];
                for &v in &input {
                    want[v as usize] += 1;
                }
                let check = compare("bins", &readback(ctx, &gout, BINS as usize)?, &want);
                drop(input);
                let ms = time_calls(device, timing, &mut call)?;
                Ok(Outcome { check, ms })
            }
            _ => Err(format!("unknown op {op}")),
        }
    }
}

fn gbps(n: usize, ms: f64) -> f64 {
    2.0 * n as f64 * 4.0 / (ms * 1e-3) / 1e9
}

/// Today's UTC date as YYYY-MM-DD (Howard Hinnant's civil-from-days).
fn today() -> String {
    let days = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() / 86_400)
        .unwrap_or(0) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

fn main() {
    let args = parse_args();
    let ctx = match pollster::block_on(Context::init()) {
        Ok(ctx) => ctx,
        Err(e) => {
            eprintln!("lampshade Context::init failed: {e}");
            std::process::exit(1);
        }
    };
    let info = ctx.adapter_info.clone();
    let limits = ctx.device.limits();
    let features = ctx.device.features();
    println!(
        "adapter: name={:?} backend={:?} device_type={:?} driver={:?} driver_info={:?}",
        info.name, info.backend, info.device_type, info.driver, info.driver_info
    );
    println!(
        "         vendor={:#06x} device={:#06x} subgroup_size={}..{} max_buffer_size={} \
         max_storage_buffer_binding_size={} features: SUBGROUP={} TIMESTAMP_QUERY={}",
        info.vendor,
        info.device,
        info.subgroup_min_size,
        info.subgroup_max_size,
        limits.max_buffer_size,
        limits.max_storage_buffer_binding_size,
        features.contains(wgpu::Features::SUBGROUP),
        features.contains(wgpu::Features::TIMESTAMP_QUERY),
    );
    let adapter = json!({
        "name": info.name,
        "backend": format!("{:?}", info.backend),
        "device_type": format!("{:?}", info.device_type),
        "driver": info.driver,
        "driver_info": info.driver_info,
        "vendor": info.vendor,
        "device": info.device,
        "subgroup_min_size": info.subgroup_min_size,
        "subgroup_max_size": info.subgroup_max_size,
        "max_buffer_size": limits.max_buffer_size,
        "max_storage_buffer_binding_size": limits.max_storage_buffer_binding_size,
        "max_compute_workgroups_per_dimension": limits.max_compute_workgroups_per_dimension,
        "subgroup_feature": features.contains(wgpu::Features::SUBGROUP),
        "timestamp_query_feature": features.contains(wgpu::Features::TIMESTAMP_QUERY),
    });
    println!(
        "reps={} warmup_ms={} (1 warm-up call + wait, repeated for warmup_ms; then R calls \
         submitted back to back, one device wait; ms = wall / R)",
        args.reps, args.warmup_ms
    );

    let timing = Timing {
        reps: args.reps,
        warmup_ms: args.warmup_ms,
    };
    let mut bench = Bench::new(ctx, timing);
    let mut cases = Vec::new();
    let mut copies = Vec::new();
    for &log2 in &args.log2 {
        let n = 1usize << log2;
        bench.errors.lock().unwrap().clear();
        let copy = catch_unwind(AssertUnwindSafe(|| copy_floor(&bench.ctx, n, timing)));
        let copy_errors = std::mem::take(&mut *bench.errors.lock().unwrap());
        let copy_ms = match copy {
            Ok(Ok(ms)) if copy_errors.is_empty() => {
                println!(
                    "n=2^{log2} ({n}): copy_buffer_to_buffer {:.4} ms, {:.1} GB/s",
                    ms,
                    gbps(n, ms)
                );
                copies.push(json!({"n": n, "ms": ms, "gbps": gbps(n, ms)}));
                Some(ms)
            }
            other => {
                let msg = match other {
                    Ok(Err(e)) => e,
                    Err(_) => "panic".to_string(),
                    Ok(Ok(_)) => copy_errors.join(" | "),
                };
                println!("n=2^{log2} ({n}): copy floor failed: {msg}");
                copies.push(json!({"n": n, "error": msg}));
                None
            }
        };
        bench.sort_limit_hit = false;
        let mut ops = args.ops.clone();
        let mut i = 0;
        while i < ops.len() {
            let op = ops[i].clone();
            i += 1;
            let case = bench.run_case(&op, n, copy_ms);
            if op == "sort_u32" && bench.sort_limit_hit && !ops.iter().any(|o| o == FALLBACK_OPS[0])
            {
                ops.insert(i, FALLBACK_OPS[0].to_string());
            }
            match (case.ms, &case.error) {
                (Some(ms), _) => println!(
                    "  {op:<22} n=2^{log2}: {ms:>10.4} ms  ({:.2} Gitems/s, {:.2}x copy)  check: {}",
                    n as f64 / (ms * 1e-3) / 1e9,
                    copy_ms.map_or(f64::NAN, |c| ms / c),
                    case.check
                ),
                (None, Some(err)) => println!("  {op:<22} n=2^{log2}: ERROR {err}"),
                (None, None) => println!("  {op:<22} n=2^{log2}: no result ({})", case.check),
            }
            cases.push(case);
        }
    }

    if let Some(path) = &args.out {
        let doc = json!({
            "peer": PEER,
            "adapter": adapter,
            "date": today(),
            "reps": args.reps,
            "warmup_ms": args.warmup_ms,
            "timing": "host wall clock: 1 warm-up call + device wait (repeated until \
                       warmup_ms of wall time if warmup_ms > 0), then R calls submitted back \
                       to back and one device.poll(Wait); ms = wall / R",
            "copy_floor": copies,
            "cases": cases,
        });
        let text = serde_json::to_string_pretty(&doc).expect("serialize JSON");
        if let Err(e) = std::fs::write(path, text + "\n") {
            eprintln!("could not write {path}: {e}");
            std::process::exit(1);
        }
        println!("wrote {path}");
    }
}
