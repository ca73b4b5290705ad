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

/// Mean device time in ms of `reps` calls of `f` issued back to back, from the runtime's own
/// timestamps (CUDA events on CUDA), so the launch and sync latency of the host clock is left
/// out as it is from the peers' CUDA events; `None` where the runtime has no device timing.
pub fn device_ms<R: Runtime>(
    client: &ComputeClient<R>,
    reps: usize,
    mut f: impl FnMut() + Send,
) -> Option<f64> {
    let (_, d) = client
        .profile(
            move || {
                for _ in 0..reps {
                    f();
                }
            },
            "bench_gpu",
        )
        .ok()?;
    if d.timing_method() != cubecl::profile::TimingMethod::Device {
        return None;
    }
    let ticks = cubecl::future::block_on(d.resolve());
    Some(ticks.duration().as_secs_f64() * 1e3 / reps as f64)
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
