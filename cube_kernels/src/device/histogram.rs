//! Histogram (bincount) of integer keys. Keys are read as `u32` bits, so a negative `i32`
//! key is a value of at least 2^31 and lands outside every bin range: keys outside
//! `[0, bins)` are ignored. Each cube counts a bounded chunk of `threads × items` keys
//! (`items` is a launch argument; the trip count never grows with the length).

use crate::device::select::pass_len;
use cubecl::prelude::*;

/// Counts into privatised bins in shared memory (`smem_bins >= bins` words), then adds each
/// non-zero bin into `out` (zeroed before the launch) with one global atomic.
#[cube(launch_unchecked)]
pub fn histogram_shared(
    keys: &Array<u32>,
    out: &mut Array<Atomic<u32>>,
    len: &Array<u32>,
    n: u32,
    bins: u32,
    items: u32,
    #[comptime] smem_bins: usize,
    #[comptime] device_len: bool,
) {
    let t = UNIT_POS;
    let threads = CUBE_DIM;
    let hist = SharedMemory::<Atomic<u32>>::new(smem_bins);
    let rounds = bins.div_ceil(threads);
    for k in 0..rounds {
        let b = k * threads + t;
        if b < bins {
            hist[b as usize].store(0u32);
        }
    }
    sync_cube();
    let m = pass_len(len, n, device_len);
    let start = CUBE_POS as u32 * threads * items;
    for k in 0..items {
        let i = start + k * threads + t;
        if i < m {
            let key = keys[i as usize];
            if key < bins {
                hist[key as usize].fetch_add(1u32);
            }
        }
    }
    sync_cube();
    for k in 0..rounds {
        let b = k * threads + t;
        if b < bins {
            let v = hist[b as usize].load();
            if v != 0u32 {
                out[b as usize].fetch_add(v);
            }
        }
    }
}

/// Counts straight into `out` (zeroed before the launch) with one global atomic per key in
/// range: the path for more bins than shared memory holds.
#[cube(launch_unchecked)]
pub fn histogram_global(
    keys: &Array<u32>,
    out: &mut Array<Atomic<u32>>,
    len: &Array<u32>,
    n: u32,
    bins: u32,
    items: u32,
    #[comptime] device_len: bool,
) {
    let t = UNIT_POS;
    let threads = CUBE_DIM;
    let m = pass_len(len, n, device_len);
    let start = CUBE_POS as u32 * threads * items;
    for k in 0..items {
        let i = start + k * threads + t;
        if i < m {
            let key = keys[i as usize];
            if key < bins {
                out[key as usize].fetch_add(1u32);
            }
        }
    }
}
