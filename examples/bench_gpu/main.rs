//! GPU benchmarks on CUDA or any wgpu device, one binary for five families:
//!
//! - `bench_gpu scan [cuda|wgpu] [OUT.json] ..`: the scans ([`scan`]);
//! - `bench_gpu compact [cuda|wgpu] [LOG2_N] ..`: reduce, select, nonzero, run-length
//!   ([`compact`]);
//! - `bench_gpu sort [cuda|wgpu] ..`: the sorts, top-k, searchsorted ([`sort`]);
//! - `bench_gpu copy [cuda|wgpu] ..`: the device copy's variants, the floor taken apart
//!   ([`copy`]);
//! - `bench_gpu recurrence [cuda|wgpu] ..`: the linear recurrence `h[t] = a[t] h[t-1] + b[t]`
//!   ([`recurrence`]).
//!
//! `bench_gpu FAMILY --help` lists each family's options. `--out PATH` writes the run as one
//! JSON file ([`Run`]: card, driver, runtime, commit, date and every case with its time and its
//! copy floor); `benches/report` merges such files with the peers' figures into
//! `benches/results/<card>.json` and draws the charts of BENCHMARKS.md from them.
//! `--wgpu-stamps` adds wgpu's device time by timestamp queries (with
//! `CUBECL_WGPU_MAX_TASKS=4096`, so that the timed calls fit one compute pass; see
//! `queue_stamps_ms`).
//!
//! Build with `cargo build --release --features cuda,bench-tools --example bench_gpu` for CUDA
//! (loaded at run time), or without `cuda` for wgpu: one runtime per build, since every binary
//! compiles its own copy of the launches it reaches for each runtime (CI, without the feature
//! `bench-tools`, does not build it). Every case checks its output on fresh random data before
//! it is timed, and each family measures the device copy below in the same run, as its floor.

mod compact;
mod copy;
mod recurrence;
mod scan;
mod sort;

use clap::{Parser, Subcommand, ValueEnum};
use cubecl::prelude::*;
use cubecl::server::Handle;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A runtime a build can have (a `cuda` build has CUDA only, others wgpu).
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RuntimeName {
    Cuda,
    Wgpu,
}

impl RuntimeName {
    /// The one this build has: the default.
    pub const BUILT: Self = if cfg!(feature = "cuda") {
        Self::Cuda
    } else {
        Self::Wgpu
    };

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cuda => "cuda",
            Self::Wgpu => "wgpu",
        }
    }
}

/// The arguments every family takes first.
#[derive(clap::Args)]
pub struct Common {
    /// The runtime (only the one this build has can run).
    #[arg(value_enum, default_value_t = RuntimeName::BUILT)]
    pub runtime: RuntimeName,
    /// Writes the run as one JSON file.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The card's name in the JSON (default: `nvidia-smi`'s, else "unknown").
    #[arg(long)]
    pub card: Option<String>,
}

#[derive(Parser)]
#[command(
    about = "cubeprim's GPU benchmarks: every case checked, then timed against a device copy"
)]
struct Cli {
    #[command(subcommand)]
    family: Family,
    /// Off CUDA, time the device by the runtime's timestamp queries (wgpu, where the adapter
    /// has them) as well as by the host clock; see `queue_stamps_ms` for what they cover.
    #[arg(long, global = true)]
    wgpu_stamps: bool,
    /// How long each case is run before it is timed, in ms (at least 3 calls; default 300 on
    /// CUDA, 1500 elsewhere: on an H100 under a Vulkan context alone the SM clock falls to 345
    /// MHz within about 2 s of idling, during the host-side checks, and takes about 1 s of load
    /// to come back; BENCHMARKS.md, 2026-12-08).
    #[arg(long, global = true)]
    warm_ms: Option<u64>,
}

/// `--wgpu-stamps`, for [`device_ms`].
static WGPU_STAMPS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// `--warm-ms`, for [`warm_up`] (`u64::MAX`: the runtime's default).
static WARM_MS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(u64::MAX);

#[derive(Subcommand)]
enum Family {
    /// The scans.
    Scan(scan::Args),
    /// The device copy's variants (vector width, cube size, vectors per unit, bounds checks).
    Copy(copy::Args),
    /// Reduce, select, nonzero, unique_consecutive, reduce_by_key.
    Compact(compact::Args),
    /// The sorts, top-k, searchsorted.
    Sort(sort::Args),
    /// The linear recurrence h[t] = a[t] h[t-1] + b[t] (f32, along the last axis).
    Recurrence(recurrence::Args),
}

/// One run of the binary, as written by `--out`.
#[derive(Serialize)]
pub struct Run {
    pub card: String,
    pub driver: String,
    pub runtime: String,
    /// `CUBEPRIM_COMMIT`, else `git rev-parse --short HEAD` where run, else "unknown".
    pub commit: String,
    /// UTC, `YYYY-MM-DD`.
    pub date: String,
    pub cases: Vec<Case>,
}

/// Which clock timed `ours_ms` (and the floor it is compared with).
#[derive(Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Clock {
    /// Two device clock stamps around the calls ([`device_ms`], CUDA only), as the peers'
    /// CUDA events time them.
    Device,
    /// The host's wall clock around the calls and a sync, so launch latency counts.
    Host,
}

/// A peer's time for the same operation and shape (filled in by `benches/report`).
#[derive(Serialize)]
pub struct Peer {
    pub name: String,
    pub ms: f64,
}

/// One measured case.
#[derive(Serialize)]
pub struct Case {
    pub family: &'static str,
    pub op: String,
    pub dtype: String,
    pub shape: Vec<usize>,
    /// Time per call by `clock`.
    pub ours_ms: f64,
    pub clock: Clock,
    /// The family's host-clock figure (see the family's module).
    pub host_ms: f64,
    /// Bytes a call must read and write at least.
    pub bytes: f64,
    /// `bytes` at the copy's bandwidth measured in the same run, by the same clock.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub floor_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer: Option<Peer>,
    /// The output matched the reference on fresh random data.
    pub ok: bool,
    /// What the check found ("max err 1e-7", or why it failed).
    pub check: String,
    /// Other figures of the case (e.g. `b2b_ms`, `runs`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<&'static str, f64>,
}

impl Case {
    pub fn extra(&mut self, key: &'static str, v: f64) -> &mut Self {
        self.extra.insert(key, v);
        self
    }
}

/// A case's two clocks.
#[derive(Clone, Copy)]
pub struct Times {
    pub host: f64,
    pub device: Option<f64>,
}

/// The cases of one family, each printed as it is measured and related to the family's copy.
pub struct Report {
    family: &'static str,
    /// The copy's bytes and times.
    floor: Option<(f64, Times)>,
    pub cases: Vec<Case>,
}

impl Report {
    pub fn new(family: &'static str) -> Self {
        Self {
            family,
            floor: None,
            cases: Vec::new(),
        }
    }

    /// Records the device copy, the floor of every later case.
    pub fn copy(&mut self, dtype: &str, n: usize, t: Times) {
        let bytes = 8.0 * n as f64;
        self.floor = Some((bytes, t));
        self.push(
            &format!("copy {dtype} (r+w)"),
            dtype,
            &[n],
            bytes,
            t,
            Ok(String::new()),
        );
    }

    /// Records and prints one case; `check`: `Ok(detail)` or `Err(why it failed)`.
    pub fn push(
        &mut self,
        op: &str,
        dtype: &str,
        shape: &[usize],
        bytes: f64,
        t: Times,
        check: Result<String, String>,
    ) -> &mut Case {
        let (ours_ms, clock) = match t.device {
            Some(d) => (d, Clock::Device),
            None => (t.host, Clock::Host),
        };
        let floor_ms = self.floor.and_then(|(fb, ft)| {
            let f = match clock {
                Clock::Device => ft.device?,
                Clock::Host => ft.host,
            };
            Some(bytes * f / fb)
        });
        let (ok, check) = match check {
            Ok(detail) => (true, detail),
            Err(why) => (false, why),
        };
        let case = Case {
            family: self.family,
            op: op.into(),
            dtype: dtype.into(),
            shape: shape.to_vec(),
            ours_ms,
            clock,
            host_ms: t.host,
            bytes,
            floor_ms,
            peer: None,
            ok,
            check,
            extra: BTreeMap::new(),
        };
        let pct = floor_ms.map_or(String::new(), |f| format!("{:5.1}%", 100.0 * f / ours_ms));
        let clock = if clock == Clock::Device {
            "dev"
        } else {
            "host"
        };
        println!(
            "{:48} {:>16} {ours_ms:10.4} ms {clock:4} {:8.1} GB/s {pct:>6} of copy  {}{}",
            case.op,
            format!("{:?}", case.shape),
            bytes / (ours_ms * 1e-3) / 1e9,
            if case.ok { "ok" } else { "WRONG" },
            if case.check.is_empty() {
                String::new()
            } else {
                format!(" ({})", case.check)
            },
        );
        self.cases.push(case);
        self.cases.last_mut().unwrap()
    }

    /// The failed cases' count.
    pub fn wrong(&self) -> usize {
        self.cases.iter().filter(|c| !c.ok).count()
    }
}

/// Standard output of a command, trimmed, if it ran and succeeded.
fn command_output(cmd: &str, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new(cmd).args(args).output().ok()?;
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !s.is_empty()).then_some(s)
}

/// Today's UTC date, `YYYY-MM-DD` (days since 1970 to a civil date, H. Hinnant's algorithm).
fn utc_date() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let z = secs.div_euclid(86_400) + 719_468;
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

/// Writes the family's cases as one [`Run`] where `--out` asks, then exits non-zero if a check
/// failed.
pub fn finish(common: &Common, report: Report) {
    let smi = command_output(
        "nvidia-smi",
        &[
            "--query-gpu=name,driver_version",
            "--format=csv,noheader",
            "--id=0",
        ],
    );
    let (smi_card, driver) = match smi.as_deref().and_then(|s| s.split_once(", ")) {
        Some((c, d)) => (Some(c.to_string()), d.to_string()),
        None => (None, "unknown".into()),
    };
    let wrong = report.wrong();
    if let Some(path) = &common.out {
        let run = Run {
            card: common
                .card
                .clone()
                .or(smi_card)
                .unwrap_or_else(|| "unknown".into()),
            driver,
            runtime: common.runtime.as_str().into(),
            commit: std::env::var("CUBEPRIM_COMMIT")
                .ok()
                .or_else(|| command_output("git", &["rev-parse", "--short", "HEAD"]))
                .unwrap_or_else(|| "unknown".into()),
            date: utc_date(),
            cases: report.cases,
        };
        let json = serde_json::to_string_pretty(&run).expect("a run serialises");
        std::fs::write(path, json + "\n")
            .unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        println!("wrote {}", path.display());
    }
    if wrong > 0 {
        eprintln!("{wrong} case(s) WRONG");
        std::process::exit(1);
    }
}

/// The floor of every family: a vectorised copy of 32-bit words, one vector per unit (the
/// checked launch: `bench_gpu copy`'s bounds-checked variant).
#[cube(launch, launch_unchecked)]
fn copy_kernel<N: Size>(
    input: &Array<Vector<u32, N>>,
    output: &mut Array<Vector<u32, N>>,
    n_vec: u32,
) {
    let i = CUBE_POS * CUBE_DIM as usize + UNIT_POS as usize;
    if i < n_vec as usize {
        output[i] = input[i];
    }
}

/// Warm-up before timing: at least 3 calls of `f` and `--warm-ms` (300 ms on CUDA, 1500
/// elsewhere), each call followed by a sync, so the card has left its idle clocks after the
/// host-side checks (on an H100, a single warm-up call left some 2^28 wgpu cases 2-3x slow).
pub fn warm_up<R: Runtime>(client: &ComputeClient<R>, mut f: impl FnMut()) {
    let start = std::time::Instant::now();
    let mut calls = 0;
    let warm = match WARM_MS.load(std::sync::atomic::Ordering::Relaxed) {
        u64::MAX if R::name(client) == "cuda" => 300,
        u64::MAX => 1500,
        ms => ms,
    } as u128;
    while calls < 3 || start.elapsed().as_millis() < warm {
        f();
        cubecl::future::block_on(client.sync()).unwrap();
        calls += 1;
    }
}

/// Copies `n` 32-bit words (a multiple of 4) from `src` to `dst`: vectors of 4, 256 units a
/// cube.
pub fn launch_copy<R: Runtime>(client: &ComputeClient<R>, src: &Handle, dst: &Handle, n: usize) {
    assert_eq!(n % 4, 0, "the copy moves vectors of 4 words");
    // Rows of at most 65535 cubes, as few cubes past the count as possible (cubeprim's grids).
    let count = cubeprim::device::cube_count_2d((n / 4).div_ceil(256) as u32);
    // SAFETY: both buffers hold `n` words; units past `n / 4` vectors do nothing.
    unsafe {
        copy_kernel::launch_unchecked::<R>(
            client,
            count,
            CubeDim::new_1d(256),
            4,
            ArrayArg::from_raw_parts(src.clone(), n / 4),
            ArrayArg::from_raw_parts(dst.clone(), n / 4),
            (n / 4) as u32,
        )
    }
}

/// Writes the device's nanosecond clock (PTX `%globaltimer`), read when this kernel runs, to
/// `out[2 * slot]` (high word) and `out[2 * slot + 1]` (low word). CUDA only: cubecl 0.10 has
/// no clock read, so, as in the sort's PTX ballots (`radix_rank_match`), a `#define` written
/// into the CUDA source through a multi-line comment turns the three plane shuffles below into
/// clock reads (carrier 1 gives the low word, any other the high one; three carriers, so no
/// two are the same expression). Where the low word wrapped between the reads (the high words
/// differ) the later high word and a low word of 0 are kept.
#[cube(launch_unchecked)]
fn stamp_kernel(out: &mut Array<u32>, slot: u32) {
    comment!(
        "*/\n#define __shfl_sync(mask_, v_, lane_) ([](const unsigned int c_) { unsigned long long t_; asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t_)); return c_ == 1u ? (unsigned int)t_ : (unsigned int)(t_ >> 32); }(v_))\n/*"
    );
    let hi = plane_shuffle(0u32, 0u32);
    let lo = plane_shuffle(1u32, 0u32);
    let hi_after = plane_shuffle(2u32, 0u32);
    comment!("*/\n#undef __shfl_sync\n/*");
    if UNIT_POS == 0 {
        let s = 2 * slot as usize;
        out[s] = hi_after;
        out[s + 1] = select(hi == hi_after, lo, 0u32);
    }
}

/// Two device clock stamps ([`stamp_kernel`]) on cubecl's own stream: the interval between them
/// is the device time of the work issued between them, as CUDA events around it measure it
/// (cubecl's CUDA streams are non-blocking and not exposed, so events of ours could not bracket
/// its work, and cubecl's own `profile` times CUDA by the host clock). Each interval also holds
/// one stamp kernel (a few microseconds; [`device_ms`] with nothing between gives it).
pub struct Stamps<R: Runtime> {
    client: ComputeClient<R>,
    out: Handle,
}

impl<R: Runtime> Stamps<R> {
    /// `None` unless the runtime is CUDA (the clock read is CUDA C++).
    pub fn new(client: &ComputeClient<R>) -> Option<Self> {
        (R::name(client) == "cuda").then(|| Self {
            client: client.clone(),
            out: client.empty(16),
        })
    }

    /// Records the device clock in slot 0 (start) or 1 (end) once the work before it is done.
    pub fn stamp(&self, slot: u32) {
        // SAFETY: `out` holds 4 words; unit 0 writes words `2 * slot` and `2 * slot + 1`.
        unsafe {
            stamp_kernel::launch_unchecked::<R>(
                &self.client,
                CubeCount::Static(1, 1, 1),
                CubeDim::new_1d(32),
                ArrayArg::from_raw_parts(self.out.clone(), 4),
                slot,
            )
        }
    }

    /// Nanoseconds from the start stamp to the end stamp (waits for both).
    pub fn elapsed_ns(&self) -> Option<u64> {
        let w: Vec<u32> =
            bytemuck::pod_collect_to_vec(&self.client.read_one_unchecked(self.out.clone()));
        let at = |s: usize| (u64::from(w[2 * s]) << 32) | u64::from(w[2 * s + 1]);
        at(1).checked_sub(at(0)).filter(|&d| d > 0)
    }
}

/// Mean device time in ms of `reps` calls of `f` issued back to back, between two clock
/// stamps ([`Stamps`]), so the launch and sync latency of the host clock is left out as it is
/// from the peers' CUDA events; off CUDA with `--wgpu-stamps`, by the runtime's timestamp
/// queries ([`queue_stamps_ms`]). `None` where the runtime has neither, or the clock did not
/// move.
pub fn device_ms<R: Runtime>(
    client: &ComputeClient<R>,
    reps: usize,
    mut f: impl FnMut(),
) -> Option<f64> {
    let Some(stamps) = Stamps::new(client) else {
        if WGPU_STAMPS.load(std::sync::atomic::Ordering::Relaxed) {
            return queue_stamps_ms(client, reps, &mut f);
        }
        return None;
    };
    stamps.stamp(0);
    for _ in 0..reps {
        f();
    }
    stamps.stamp(1);
    Some(stamps.elapsed_ns()? as f64 * 1e-6 / reps.max(1) as f64)
}

/// Mean device time in ms of `reps` calls of `f` by cubecl's profile, where the runtime times
/// the device (wgpu with timestamp queries). cubecl 0.10 writes the two timestamps at the start
/// and the end of the first compute pass after the profile starts, and wgpu's stream ends a
/// pass at every flush (each `CUBECL_WGPU_MAX_TASKS` dispatches, 32 by default) and every read
/// back: the figure covers all `reps` calls only where they read nothing back and dispatch
/// fewer kernels than that limit, so a run that uses it raises the limit. Inside one pass the
/// dispatches run from one submission, so the figure leaves out the gaps between the host's
/// submissions that the host clock holds. `None` where the runtime times by the host clock.
fn queue_stamps_ms<R: Runtime>(
    client: &ComputeClient<R>,
    reps: usize,
    f: &mut dyn FnMut(),
) -> Option<f64> {
    struct Calls<'a>(&'a mut dyn FnMut(), usize);
    // SAFETY: `ComputeClient::profile` runs its closure on cubecl's device thread while this
    // thread waits for it to return (cubecl-common's `run_scoped`), so what `f` borrows
    // outlives the call and nothing else touches it meanwhile; the bench's closures keep no
    // thread-local state (cubecl hands the closure this thread's stream id).
    unsafe impl Send for Calls<'_> {}
    impl Calls<'_> {
        fn run(&mut self) {
            for _ in 0..self.1 {
                (self.0)();
            }
        }
    }
    cubecl::future::block_on(client.sync()).ok()?;
    let mut calls = Calls(f, reps);
    let (_, d) = client.profile(move || calls.run(), "bench_gpu").ok()?;
    if d.timing_method() != cubecl::profile::TimingMethod::Device {
        return None;
    }
    let ticks = cubecl::future::block_on(d.resolve());
    Some(ticks.duration().as_secs_f64() * 1e3 / reps.max(1) as f64)
}

/// Prints the median of 20 empty intervals (a start stamp straight after an end stamp): what
/// each [`device_ms`] figure holds besides the work it times, about one stamp kernel.
pub fn print_stamp_interval<R: Runtime>(client: &ComputeClient<R>) {
    let mut d: Vec<f64> = (0..20)
        .filter_map(|_| device_ms(client, 1, || {}))
        .collect();
    if d.len() == 20 {
        d.sort_by(|a, b| a.total_cmp(b));
        println!(
            "device clock (stamp kernels on CUDA, timestamp queries on wgpu): empty interval {:.4} ms (median of 20; min {:.4}, max {:.4})",
            d[10], d[0], d[19]
        );
    } else {
        println!("device clock: none (the runtime is not CUDA and --wgpu-stamps is off or found no timestamps, or the clock did not move)");
    }
}

fn main() {
    let cli = Cli::parse();
    WGPU_STAMPS.store(cli.wgpu_stamps, std::sync::atomic::Ordering::Relaxed);
    if let Some(ms) = cli.warm_ms {
        WARM_MS.store(ms, std::sync::atomic::Ordering::Relaxed);
    }
    match cli.family {
        Family::Scan(a) => scan::main(a),
        Family::Copy(a) => copy::main(a),
        Family::Compact(a) => compact::main(a),
        Family::Sort(a) => sort::main(a),
        Family::Recurrence(a) => recurrence::main(a),
    }
}
