//! GPU benchmarks for the H200 (CUDA) or any wgpu device, one binary for three families:
//!
//! - `bench_gpu scan [cuda|wgpu] ..`: the scans ([`scan`]);
//! - `bench_gpu compact [cuda|wgpu] ..`: reduce, select, nonzero, run-length ([`compact`]);
//! - `bench_gpu sort [cuda|wgpu] ..`: the sorts, top-k, searchsorted ([`sort`]).
//!
//! Build with `cargo build --release --features cuda,bench-tools --example bench_gpu` for CUDA
//! (loaded at run time), or without `cuda` for wgpu: one runtime per build (CI, without the
//! feature `bench-tools`, does not build it). Each family measures the
//! device copy below in the same run, as its floor. (One binary and one runtime: every binary
//! compiles its own copy of the launches it reaches for each runtime.)

mod compact;
mod scan;
mod sort;

use cubecl::prelude::*;
use cubecl::server::Handle;

/// The runtime when none is named: the one this build has.
pub const DEFAULT_RUNTIME: &str = if cfg!(feature = "cuda") {
    "cuda"
} else {
    "wgpu"
};

/// The floor of every family: a vectorised copy of 32-bit words, one vector per unit.
#[cube(launch_unchecked)]
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
/// from the peers' CUDA events; `None` where the runtime is not CUDA, or the clock did not move.
pub fn device_ms<R: Runtime>(
    client: &ComputeClient<R>,
    reps: usize,
    mut f: impl FnMut(),
) -> Option<f64> {
    let stamps = Stamps::new(client)?;
    stamps.stamp(0);
    for _ in 0..reps {
        f();
    }
    stamps.stamp(1);
    Some(stamps.elapsed_ns()? as f64 * 1e-6 / reps.max(1) as f64)
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
            "device clock (stamp kernels): empty interval {:.4} ms (median of 20; min {:.4}, max {:.4})",
            d[10], d[0], d[19]
        );
    } else {
        println!("device clock (stamp kernels): none (the runtime is not CUDA, or the clock did not move)");
    }
}

fn main() {
    let mut args: Vec<String> = std::env::args().collect();
    let family = if args.len() > 1 {
        args.remove(1)
    } else {
        String::new()
    };
    match family.as_str() {
        "scan" => scan::main(args),
        "compact" => compact::main(args),
        "sort" => sort::main(args),
        _ => {
            eprintln!("usage: bench_gpu scan|compact|sort [cuda|wgpu] [options of the family]");
            std::process::exit(2);
        }
    }
}
