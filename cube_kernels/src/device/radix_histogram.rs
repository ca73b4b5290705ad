//! First pass of one radix-sort digit (reduce-then-scan): the digit histogram of every tile.

use super::row_offsets;
use crate::cube::RadixConfig;
use crate::ops::radix_digit;
use cubecl::prelude::*;

/// Digits of the 8-bit radix.
pub const RADIX: u32 = 256;

/// Keys in a row: `n`, or with `device_len` the device-resident count (at most `n`).
#[cube]
pub fn radix_row_len(n: u32, count: &Array<u32>, #[comptime] device_len: bool) -> u32 {
    let mut len = n;
    if comptime![device_len] {
        len = select(count[0] < n, count[0], n);
    }
    len
}

/// Where row `row` starts in the keys: through `layout` (see [`row_offsets`]) when `strided`
/// is non-zero, else `row * n` (a contiguous `[rows, n]` buffer).
#[cube]
pub fn radix_row_base(row: u32, n: u32, layout: &Array<u32>, strided: u32) -> usize {
    let mut base = row as usize * n as usize;
    if strided != 0u32 {
        let (b, _) = row_offsets(row, layout);
        base = b;
    }
    base
}

/// `counts[(row * 256 + d) * tiles_per_row + tile]` = keys of the tile whose digit is `d`
/// (digit-major per row, so that an exclusive scan of each row gives every (digit, tile) its
/// first output position). Rows are `n` keys long, `in_stride` apart; tiles past the length
/// count nothing.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn radix_histogram<T: Numeric>(
    keys: &Array<T>,
    counts: &mut Array<u32>,
    layout: &Array<u32>,
    count: &Array<u32>,
    n: u32,
    tiles_per_row: u32,
    num_tiles: u32,
    in_stride: u32,
    strided: u32,
    shift: u32,
    mask: u32,
    flip: u32,
    #[comptime] cfg: RadixConfig,
    #[comptime] device_len: bool,
) {
    let t = UNIT_POS;
    let tile_id = CUBE_POS as u32;
    let threads = comptime![cfg.threads];
    let digit_rounds = comptime![RADIX.div_ceil(cfg.threads)];
    if tile_id < num_tiles {
        let row = tile_id / tiles_per_row;
        let tile = tile_id % tiles_per_row;
        let hist = SharedMemory::<Atomic<u32>>::new(comptime![RADIX as usize]);
        #[unroll]
        for k in 0..digit_rounds {
            let d = k * threads + t;
            if d < RADIX {
                hist[d as usize].store(0u32);
            }
        }
        sync_cube();
        let len = radix_row_len(n, count, device_len);
        let start = tile * comptime![cfg.tile_len()];
        let base = radix_row_base(row, n, layout, strided);
        // Every load is issued before the first atomic: interleaved, each key's load would
        // wait on the atomic before it and the kernel would run at a third of the bandwidth.
        let mut digits = Array::<u32>::new(comptime![cfg.items as usize]);
        #[unroll]
        for k in 0..comptime![cfg.items] {
            let i = start + k * threads + t;
            let mut d = 256u32; // RADIX: no digit
            if i < len {
                let key = keys[base + i as usize * in_stride as usize];
                d = radix_digit::<T>(key, shift, mask, flip);
            }
            digits[k as usize] = d;
        }
        #[unroll]
        for k in 0..comptime![cfg.items] {
            let d = digits[k as usize];
            if d < RADIX {
                hist[d as usize].fetch_add(1u32);
            }
        }
        sync_cube();
        let out = row as usize * (RADIX * tiles_per_row) as usize + tile as usize;
        #[unroll]
        for k in 0..digit_rounds {
            let d = k * threads + t;
            if d < RADIX {
                counts[out + (d * tiles_per_row) as usize] = hist[d as usize].load();
            }
        }
    }
}
