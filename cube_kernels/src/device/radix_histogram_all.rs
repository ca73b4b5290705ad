//! The digit histograms of every pass of a device-wide radix sort, in one read of the keys
//! (the first kernel of a onesweep sort, see [`radix_onesweep`](super::radix_onesweep)).
// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use super::radix_histogram::{radix_row_base, radix_row_len, RADIX};
use crate::cube::clear_shared_counters;
use crate::ops::radix_digit;
use cubecl::prelude::*;

/// Shift and mask of pass `p`'s digit: bits `[begin_bit + 8p, min(begin_bit + 8p + 8,
/// end_bit))` (mask 0 when the range is empty: every key has digit 0).
#[cube]
pub fn pass_digit_field(begin_bit: u32, end_bit: u32, p: u32) -> (u32, u32) {
    let shift = begin_bit + p * 8u32;
    let mut bits = 0u32;
    if end_bit > shift {
        bits = select(end_bit - shift < 8u32, end_bit - shift, 8u32);
    }
    (shift, (1u32 << bits) - 1u32)
}

/// `totals[(row * passes + p) * 256 + d] +=` the keys of the row whose digit of pass `p` is `d`
/// (see [`pass_digit_field()`]). Each cube covers `rounds` consecutive tiles of `threads * items`
/// keys of one row (`cubes_per_row` cubes per row): per tile, every unit loads its `items` keys
/// into registers first, then counts their digits of every pass in shared memory; at the end
/// each non-zero bin goes to `totals` by one global atomic add. Keys are read as
/// [`radix_histogram`](super::radix_histogram::radix_histogram()) reads them (rows of `n`, or of
/// the device-resident count, `in_stride` apart; `layout` when `strided`). `totals` must be
/// zero before the launch.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn radix_histogram_all<T: Numeric>(
    keys: &Array<T>,
    totals: &mut Array<Atomic<u32>>,
    layout: &Array<u32>,
    count: &Array<u32>,
    n: u32,
    cubes_per_row: u32,
    num_cubes: u32,
    rounds: u32,
    in_stride: u32,
    strided: u32,
    begin_bit: u32,
    end_bit: u32,
    flip: u32,
    #[comptime] threads: u32,
    #[comptime] items: u32,
    #[comptime] passes: u32,
    #[comptime] device_len: bool,
) {
    let t = UNIT_POS;
    let cube = CUBE_POS as u32;
    let bins = comptime![passes * RADIX];
    let bin_rounds = comptime![bins.div_ceil(threads)];
    if cube < num_cubes {
        let row = cube / cubes_per_row;
        let c = cube % cubes_per_row;
        let hist = SharedMemory::<Atomic<u32>>::new(comptime![bins as usize]);
        clear_shared_counters(&hist, bins, threads);
        sync_cube();
        let len = radix_row_len(n, count, device_len);
        let base = radix_row_base(row, n, layout, strided);
        let tile_len = comptime![threads * items];
        let mut start = c * rounds * tile_len;
        let mut r = 0u32;
        while r < rounds && start < len {
            let mut ks = Array::<T>::new(comptime![items as usize]);
            #[unroll]
            for k in 0..items {
                let i = start + k * threads + t;
                if i < len {
                    ks[k as usize] = keys[base + i as usize * in_stride as usize];
                }
            }
            #[unroll]
            for k in 0..items {
                let i = start + k * threads + t;
                if i < len {
                    #[unroll]
                    for p in 0..passes {
                        let (shift, mask) = pass_digit_field(begin_bit, end_bit, p);
                        let d = radix_digit::<T>(ks[k as usize], shift, mask, flip);
                        hist[(p * RADIX + d) as usize].fetch_add(1u32);
                    }
                }
            }
            start += tile_len;
            r += 1;
        }
        sync_cube();
        let out = row as usize * bins as usize;
        #[unroll]
        for k in 0..bin_rounds {
            let b = k * threads + t;
            if b < bins {
                let v = hist[b as usize].load();
                if v != 0u32 {
                    totals[out + b as usize].fetch_add(v);
                }
            }
        }
    }
}
