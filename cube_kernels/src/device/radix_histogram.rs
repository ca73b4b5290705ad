//! First pass of one radix-sort digit (reduce-then-scan): the digit histogram of every tile.

use super::row_offsets;
use crate::cube::{clear_shared_counters, RadixConfig};
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

/// Consecutive tiles of a row one [`radix_histogram`] cube counts (8 counts of 4 bytes: its
/// writes of one digit fill a 32-byte sector).
pub const HISTOGRAM_GROUP: u32 = 8;

/// `counts[(row * 256 + d) * tiles_per_row + tile]` = keys of the tile whose digit is `d`
/// (digit-major per row, so that an exclusive scan of each row gives every (digit, tile) its
/// first output position). Rows are `n` keys long, `in_stride` apart; tiles past the length
/// count nothing. Each cube counts [`HISTOGRAM_GROUP`] consecutive tiles of one row (group
/// `g` of the row: tiles `g * 8 ..`): launch `rows * tiles_per_row.div_ceil(8)` cubes
/// (`num_groups`). One tile per cube wrote 256 counts to 256 sectors, and the kernel was bound
/// by those partial-sector writes in L2 (H200: 0.49 ms a pass over 2^28 keys, 83 % of L2
/// throughput, against about 0.27 ms to read the keys); eight fill each sector.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn radix_histogram<T: Numeric>(
    keys: &Array<T>,
    counts: &mut Array<u32>,
    layout: &Array<u32>,
    count: &Array<u32>,
    n: u32,
    tiles_per_row: u32,
    num_groups: u32,
    in_stride: u32,
    strided: u32,
    shift: u32,
    mask: u32,
    flip: u32,
    #[comptime] cfg: RadixConfig,
    #[comptime] device_len: bool,
) {
    let t = UNIT_POS;
    let group_id = CUBE_POS as u32;
    let threads = comptime![cfg.threads];
    let group = comptime![HISTOGRAM_GROUP];
    // One histogram per tile of the group, rows of 257 words: one digit's counts of the 8
    // tiles, which 8 consecutive lanes gather, then sit in 8 different banks.
    let pitch = comptime![RADIX + 1];
    let words = comptime![(HISTOGRAM_GROUP * (RADIX + 1)) as usize];
    let groups_per_row = tiles_per_row.div_ceil(group);
    if group_id < num_groups {
        let row = group_id / groups_per_row;
        let first = (group_id % groups_per_row) * group;
        let hist = SharedMemory::<Atomic<u32>>::new(words);
        clear_shared_counters(&hist, comptime![HISTOGRAM_GROUP * (RADIX + 1)], threads);
        sync_cube();
        let len = radix_row_len(n, count, device_len);
        let base = radix_row_base(row, n, layout, strided);
        let tiles = select(tiles_per_row - first < group, tiles_per_row - first, group);
        for j in 0..tiles {
            let start = (first + j) * comptime![cfg.tile_len()];
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
            let h = j * pitch;
            #[unroll]
            for k in 0..comptime![cfg.items] {
                let d = digits[k as usize];
                if d < RADIX {
                    hist[(h + d) as usize].fetch_add(1u32);
                }
            }
        }
        sync_cube();
        // Entry `e` of the group's counts: digit `e / 8`, tile `first + e % 8`; eight
        // consecutive lanes write one digit's eight counts (one sector).
        let out = row as usize * (RADIX * tiles_per_row) as usize + first as usize;
        for k in 0..comptime![(HISTOGRAM_GROUP * RADIX).div_ceil(cfg.threads)] {
            let e = k * threads + t;
            let d = e / group;
            let j = e % group;
            if d < RADIX && j < tiles {
                counts[out + (d * tiles_per_row + j) as usize] =
                    hist[(j * pitch + d) as usize].load();
            }
        }
    }
}
