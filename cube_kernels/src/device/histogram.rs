//! Histogram (bincount) of integer keys. Keys are read as `u32` bits, so a negative `i32`
//! key is a value of at least 2^31 and lands outside every bin range: keys outside
//! `[0, bins)` are ignored. 64-bit keys (`wide`) are read as two `u32` words (low word first)
//! and count only when the high word is zero, so negative `i64` keys are ignored as well. Each cube counts a bounded chunk of `threads × items` keys
//! (`items` is a launch argument; the trip count never grows with the length).
// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use crate::device::select::pass_len;
use cubecl::prelude::*;

/// Key `i` as `u32` bits, and whether it can fall in a bin (a 64-bit key whose high word is
/// not zero cannot).
#[cube]
fn key_at(keys: &Array<u32>, i: u32, #[comptime] wide: bool) -> (u32, bool) {
    if comptime![wide] {
        let at = i as usize * 2;
        (keys[at], keys[at + 1] == 0u32)
    } else {
        (keys[i as usize], true)
    }
}

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
    #[comptime] wide: bool,
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
            let (key, low) = key_at(keys, i, wide);
            if low && key < bins {
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
    #[comptime] wide: bool,
) {
    let t = UNIT_POS;
    let threads = CUBE_DIM;
    let m = pass_len(len, n, device_len);
    let start = CUBE_POS as u32 * threads * items;
    for k in 0..items {
        let i = start + k * threads + t;
        if i < m {
            let (key, low) = key_at(keys, i, wide);
            if low && key < bins {
                out[key as usize].fetch_add(1u32);
            }
        }
    }
}
