//! Rows that fit one tile, sorted inside one cube each (shared-memory LSD radix sort): one
//! launch sorts any number of rows, whatever their count. Each digit pass ranks the tile by
//! plane ballots ([`tile_rank_match()`]) where the runtime has plane operations, else by bit
//! splits ([`tile_sort_by_digit()`]).
// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use super::row_offsets;
use crate::cube::{
    lead_shared, radix_slot, radix_slots, tile_rank_match, tile_sort_by_digit, warp_striped_pos,
    RadixConfig, RankLayout, DIGIT_BITS,
};
use crate::ops::radix_digit;
use cubecl::prelude::*;

/// Sorts each of `rows` rows of `n <= threads * items` keys (row `r` starts at
/// [`row_offsets()`]`(r, layout)`, keys `in_stride` apart) by the ordered key bits
/// `[begin_bit, end_bit)`, 8 bits per digit pass, stably; `flip` all ones sorts descending.
/// Writes the first `out_cols` sorted keys of each row to `keys_out` (when `write_keys`) and,
/// with `indexed`, their positions in the row to `indices_out` (contiguous rows of `out_cols`).
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn radix_sort_rows<T: Numeric, X: Numeric>(
    keys_in: &Array<T>,
    keys_out: &mut Array<T>,
    indices_out: &mut Array<X>,
    layout: &Array<u32>,
    rows: u32,
    n: u32,
    in_stride: u32,
    out_cols: u32,
    begin_bit: u32,
    end_bit: u32,
    flip: u32,
    #[comptime] cfg: RadixConfig,
    #[comptime] indexed: bool,
    #[comptime] write_keys: bool,
) {
    let t = UNIT_POS;
    let row = CUBE_POS as u32;
    let threads = comptime![cfg.threads];
    let items = comptime![cfg.items];
    let slots = comptime![radix_slots(cfg.tile_len())];
    // Two shared arrays in a fixed layout: the keys at byte 0, then one u32 array carved into
    // the positions and (with plane operations) the ranking's counters and scan scratch.
    let mut keys_sh = SharedMemory::<T>::new(slots);
    let mut vals_sh = SharedMemory::<u32>::new(comptime![u32_words(&cfg, indexed)]);
    lead_shared::<T>(&mut keys_sh);
    if row < rows {
        let (base, _) = row_offsets(row, layout);
        #[unroll]
        for k in 0..items {
            let j = k * threads + t;
            if j < n {
                keys_sh[radix_slot(j)] = keys_in[base + j as usize * in_stride as usize];
            }
            if comptime![indexed] {
                vals_sh[radix_slot(j)] = j;
            }
        }
        sync_cube();

        let passes = (end_bit - begin_bit).div_ceil(DIGIT_BITS);
        if comptime![cfg.plane_ops] {
            sort_passes_match::<T>(
                &mut keys_sh,
                &mut vals_sh,
                n,
                passes,
                begin_bit,
                end_bit,
                flip,
                cfg,
                indexed,
            );
        } else {
            sort_passes_split::<T>(
                &mut keys_sh,
                &mut vals_sh,
                n,
                passes,
                begin_bit,
                end_bit,
                flip,
                cfg,
                indexed,
            );
        }

        let out_row = row as usize * out_cols as usize;
        let m = select(n < out_cols, n, out_cols);
        #[unroll]
        for k in 0..items {
            let j = k * threads + t;
            if j < m {
                if comptime![write_keys] {
                    keys_out[out_row + j as usize] = keys_sh[radix_slot(j)];
                }
                if comptime![indexed] {
                    indices_out[out_row + j as usize] = X::cast_from(vals_sh[radix_slot(j)]);
                }
            }
        }
    }
}

/// Words of the kernel's u32 shared array: the positions (`indexed`), then with plane
/// operations the ranking's scratch ([`RankLayout::carved`]). Separate arrays were placed by
/// cubecl-opt 0.10 in a hash set's order, a different layout in every process, and the row sort
/// ran 10-11 % slower in some of them on the H100 (BENCHMARKS.md, "NVIDIA H100 80GB HBM3,
/// 2026-12-07 (afternoon)").
pub fn u32_words(cfg: &RadixConfig, indexed: bool) -> usize {
    let vals = vals_words(cfg, indexed);
    if cfg.plane_ops {
        vals + RankLayout::carved_words(cfg)
    } else {
        vals.max(1)
    }
}

/// Words of the positions at the front of the u32 array (none without `indexed`).
fn vals_words(cfg: &RadixConfig, indexed: bool) -> usize {
    if indexed {
        radix_slots(cfg.tile_len())
    } else {
        0
    }
}

/// Digit passes ranked by plane ballots: each unit reads its keys warp-striped, ranks them,
/// and writes them (and their positions) back at their ranks. `vals_sh` carries the ranking's
/// scratch after the positions ([`u32_words`]).
#[cube]
#[allow(clippy::too_many_arguments)]
fn sort_passes_match<T: Numeric>(
    keys_sh: &mut SharedMemory<T>,
    vals_sh: &mut SharedMemory<u32>,
    n: u32,
    passes: u32,
    begin_bit: u32,
    end_bit: u32,
    flip: u32,
    #[comptime] cfg: RadixConfig,
    #[comptime] indexed: bool,
) {
    let items = comptime![cfg.items];
    // Never used: the starts are not written and the scan's scratch is in `vals_sh`.
    let mut starts = SharedMemory::<u32>::new(1usize);
    let mut scan_v = SharedMemory::<u32>::new(1usize);
    let mut scan_i = SharedMemory::<u32>::new(1usize);
    let mut keys = Array::<T>::new(comptime![cfg.items as usize]);
    let mut vals = Array::<u32>::new(comptime![if indexed { cfg.items as usize } else { 1 }]);
    let mut digits = Array::<u32>::new(comptime![cfg.items as usize]);
    let mut ranks = Array::<u32>::new(comptime![cfg.items as usize]);
    for p in 0..passes {
        let shift = begin_bit + p * DIGIT_BITS;
        let bits = select(end_bit - shift < DIGIT_BITS, end_bit - shift, DIGIT_BITS);
        let mask = (1u32 << bits) - 1u32;
        #[unroll]
        for i in 0..items {
            let j = warp_striped_pos(i, items);
            let at = radix_slot(j);
            keys[i as usize] = keys_sh[at];
            if comptime![indexed] {
                vals[i as usize] = vals_sh[at];
            }
            let mut d = mask;
            if j < n {
                d = radix_digit::<T>(keys[i as usize], shift, mask, flip);
            }
            digits[i as usize] = d;
        }
        // Every unit has read its keys once this returns.
        tile_rank_match(
            &digits,
            &mut ranks,
            vals_sh,
            &mut starts,
            &mut scan_v,
            &mut scan_i,
            cfg,
            comptime![RankLayout::carved(vals_words(&cfg, indexed))],
            false,
            true,
        );
        #[unroll]
        for i in 0..items {
            let at = radix_slot(ranks[i as usize]);
            keys_sh[at] = keys[i as usize];
            if comptime![indexed] {
                vals_sh[at] = vals[i as usize];
            }
        }
        sync_cube();
    }
}

/// Digit passes ranked by bit splits: packed digits sorted in the exchange buffer, keys and
/// positions permuted through it.
#[cube]
#[allow(clippy::too_many_arguments)]
fn sort_passes_split<T: Numeric>(
    keys_sh: &mut SharedMemory<T>,
    vals_sh: &mut SharedMemory<u32>,
    n: u32,
    passes: u32,
    begin_bit: u32,
    end_bit: u32,
    flip: u32,
    #[comptime] cfg: RadixConfig,
    #[comptime] indexed: bool,
) {
    let t = UNIT_POS;
    let threads = comptime![cfg.threads];
    let items = comptime![cfg.items];
    let slots = comptime![radix_slots(cfg.tile_len())];
    let mut xch = SharedMemory::<u32>::new(slots);
    let mut scan_v = SharedMemory::<u32>::new(comptime![2 * cfg.threads as usize]);
    let mut scan_i = SharedMemory::<u32>::new(1usize);
    let mut packed = Array::<u32>::new(comptime![cfg.items as usize]);
    let mut keys = Array::<T>::new(comptime![cfg.items as usize]);
    let mut vals = Array::<u32>::new(comptime![if indexed { cfg.items as usize } else { 1 }]);
    for p in 0..passes {
        let shift = begin_bit + p * DIGIT_BITS;
        let bits = select(end_bit - shift < DIGIT_BITS, end_bit - shift, DIGIT_BITS);
        let mask = (1u32 << bits) - 1u32;
        #[unroll]
        for i in 0..items {
            let j = t * items + i;
            let mut d = mask;
            if j < n {
                d = radix_digit::<T>(keys_sh[radix_slot(j)], shift, mask, flip);
            }
            packed[i as usize] = d | (j << DIGIT_BITS);
        }
        tile_sort_by_digit(
            &mut packed,
            &mut xch,
            &mut scan_v,
            &mut scan_i,
            bits,
            threads,
            items,
            comptime![cfg.plane_ops],
            comptime![cfg.wide_counts],
        );
        // Permute the keys (and positions) into the pass's order.
        #[unroll]
        for i in 0..items {
            let src = radix_slot(packed[i as usize] >> DIGIT_BITS);
            keys[i as usize] = keys_sh[src];
            if comptime![indexed] {
                vals[i as usize] = vals_sh[src];
            }
        }
        sync_cube();
        #[unroll]
        for i in 0..items {
            let dst = radix_slot(t * items + i);
            keys_sh[dst] = keys[i as usize];
            if comptime![indexed] {
                vals_sh[dst] = vals[i as usize];
            }
        }
        sync_cube();
    }
}
