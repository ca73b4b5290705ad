//! The copy floor itself, taken apart: why one runtime's device copy is slower than another's
//! on the same card (issue: wgpu on Vulkan against CUDA).
//!
//! `bench_gpu copy [cuda|wgpu] [--log2 N]`
//!
//! Every variant copies 2^N 32-bit words (default 2^28) and is checked word for word against its
//! source before it is timed (as the other families, [`super::warm_up`] first, then the median of
//! 20 samples of 5 back-to-back calls by the host clock, and on CUDA by the device clock). The
//! variants change one thing at a time against the floor the other families use (vectors of 4
//! words, 256 units a cube, one vector a unit, bounds checks off):
//! - the vector width (1, 2, 4 words);
//! - the units per cube (64 .. 1024);
//! - vectors per unit (4, 16: fewer, longer cubes, so fewer workgroups to dispatch);
//! - a persistent grid (1024 cubes striding over the whole buffer);
//! - a checked launch (cubecl's bounds checks on every access).

use super::compact::median_ms;
use super::{Common, Report};
use cubecl::prelude::*;
use cubecl::server::Handle;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    common: Common,
    /// log2 of the words copied.
    #[arg(long, default_value_t = 28)]
    log2: u32,
}

/// `per_unit` vectors a unit: cube `c` copies vectors `[c * dim * per_unit, (c + 1) * dim *
/// per_unit)`, unit `u` every `dim`-th of them from `u` (coalesced); with `persistent`, every
/// unit strides by the whole grid until the end instead.
#[cube(launch_unchecked)]
fn copy_variant<N: Size>(
    input: &Array<Vector<u32, N>>,
    output: &mut Array<Vector<u32, N>>,
    n_vec: u32,
    #[comptime] per_unit: u32,
    #[comptime] persistent: bool,
) {
    let dim = CUBE_DIM as usize;
    if comptime![persistent] {
        let mut i = CUBE_POS * dim + UNIT_POS as usize;
        let stride = CUBE_COUNT * dim;
        while i < n_vec as usize {
            output[i] = input[i];
            i += stride;
        }
    } else {
        let base = CUBE_POS * dim * comptime![per_unit as usize] + UNIT_POS as usize;
        #[unroll]
        for k in 0..per_unit as usize {
            let i = base + k * dim;
            if i < n_vec as usize {
                output[i] = input[i];
            }
        }
    }
}

/// One variant: vector width, units per cube, vectors per unit, persistent, checked.
#[derive(Clone, Copy)]
struct Variant {
    width: usize,
    units: u32,
    per_unit: u32,
    persistent: bool,
    checked: bool,
}

impl Variant {
    fn name(&self) -> String {
        let mut s = format!(
            "copy u32 vec{} {}u x{}",
            self.width, self.units, self.per_unit
        );
        if self.persistent {
            s += " persistent 1024 cubes";
        }
        if self.checked {
            s += " checked";
        }
        s
    }

    fn launch<R: Runtime>(&self, client: &ComputeClient<R>, src: &Handle, dst: &Handle, n: usize) {
        let n_vec = n / self.width;
        let cubes = if self.persistent {
            1024
        } else {
            (n_vec as u32).div_ceil(self.units * self.per_unit)
        };
        let count = cubeprim::device::cube_count_2d(cubes);
        let dim = CubeDim::new_1d(self.units);
        // SAFETY: both buffers hold `n` words; every access is below `n_vec` vectors.
        unsafe {
            let a = ArrayArg::from_raw_parts(src.clone(), n_vec);
            let b = ArrayArg::from_raw_parts(dst.clone(), n_vec);
            if self.checked {
                super::copy_kernel::launch::<R>(client, count, dim, self.width, a, b, n_vec as u32);
            } else {
                copy_variant::launch_unchecked::<R>(
                    client,
                    count,
                    dim,
                    self.width,
                    a,
                    b,
                    n_vec as u32,
                    self.per_unit,
                    self.persistent,
                );
            }
        }
    }
}

fn run<R: Runtime>(device: &R::Device, log2: u32) -> Report {
    let client = R::client(device);
    println!(
        "runtime {} | {:?}",
        R::name(&client),
        client.properties().hardware
    );
    super::print_stamp_interval(&client);
    let n = 1usize << log2;
    let words: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    let src = client.create_from_slice(bytemuck::cast_slice(&words));
    let dst = client.empty(n * 4);
    let mut report = Report::new("copy");
    let floor = Variant {
        width: 4,
        units: 256,
        per_unit: 1,
        persistent: false,
        checked: false,
    };
    let mut variants = vec![floor];
    for width in [1, 2] {
        variants.push(Variant { width, ..floor });
    }
    for units in [64, 128, 512, 1024] {
        variants.push(Variant { units, ..floor });
    }
    for per_unit in [4, 16] {
        variants.push(Variant { per_unit, ..floor });
    }
    variants.push(Variant {
        persistent: true,
        ..floor
    });
    variants.push(Variant {
        persistent: true,
        width: 1,
        ..floor
    });
    variants.push(Variant {
        checked: true,
        ..floor
    });
    variants.push(Variant {
        checked: true,
        width: 1,
        ..floor
    });
    for (k, v) in variants.iter().enumerate() {
        // A clean destination, so a variant that copies nothing cannot pass on its predecessor.
        let zeros = client.create_from_slice(bytemuck::cast_slice(&vec![0u32; n]));
        v.launch(&client, &src, &zeros, n);
        let back: Vec<u32> = bytemuck::pod_collect_to_vec(&client.read_one_unchecked(zeros));
        let bad = back.iter().zip(&words).filter(|(a, b)| a != b).count();
        let check = if bad == 0 {
            Ok(String::new())
        } else {
            Err(format!("{bad} words differ"))
        };
        let t = median_ms(&client, || v.launch(&client, &src, &dst, n));
        if k == 0 {
            assert!(check.is_ok(), "the floor's copy is wrong: {check:?}");
            report.copy("u32", n, t);
            report.cases.last_mut().unwrap().op = v.name();
        } else {
            report.push(&v.name(), "u32", &[n], 8.0 * n as f64, t, check);
        }
    }
    report
}

pub fn main(args: Args) {
    let report = match args.common.runtime {
        #[cfg(feature = "cuda")]
        super::RuntimeName::Cuda => {
            run::<cubecl::cuda::CudaRuntime>(&Default::default(), args.log2)
        }
        #[cfg(all(feature = "wgpu", not(feature = "cuda")))]
        super::RuntimeName::Wgpu => {
            run::<cubecl::wgpu::WgpuRuntime>(&Default::default(), args.log2)
        }
        #[allow(unreachable_patterns)]
        _ => panic!("runtime not built: a `cuda` build has CUDA only, others wgpu"),
    };
    super::finish(&args.common, report);
}
