//! Top-k of rows that fit one tile by radix selection, one cube per row: find the k-th key
//! digit by digit (most significant first) with a shared-memory histogram, keep the keys
//! before it plus the first ties in row order, and sort only those `k` keys.
// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use super::row_offsets;
use crate::cube::{
    cube_exclusive_scan, radix_slot, radix_slots, tile_sort_by_digit, RadixConfig, DIGIT_BITS,
};
use crate::ops::{radix_digit, Add, Item};
use cubecl::prelude::*;

/// Digit values of one selection pass.
const BUCKETS: u32 = 1 << DIGIT_BITS;

/// State of a key during the selection: still tied with the k-th key's digits so far.
const TIED: u32 = 0;
/// Known to come before the k-th key (kept).
const BEFORE: u32 = 1;
/// Known to come after the k-th key, or past the row (dropped).
const AFTER: u32 = 2;

/// A count as a scan item.
#[cube]
fn count_item<A: Numeric>(value: A) -> Item<A> {
    Item::<A> { value, index: 0u32 }
}

/// The first `k` keys of each row in the stable order of their ordered bits `[0, key_bits)`
/// (`flip` all ones: descending), as the first `k` of [`super::radix_sort_rows`]'s output,
/// without sorting the row. Rows of `n <= threads * items` keys (row `r` starts at
/// [`row_offsets()`]`(r, layout)`, keys `in_stride` apart); `k <= threads * cand_items`.
/// Writes `keys_out` and the positions `indices_out` (contiguous rows of `k`).
///
/// Per unit: `items` keys, `key_bits / 8` selection passes of `items` keys and
/// `256 / threads` buckets, then a stable in-cube sort of `threads * cand_items` entries.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn radix_select_rows<T: Numeric, X: Numeric>(
    keys_in: &Array<T>,
    keys_out: &mut Array<T>,
    indices_out: &mut Array<X>,
    layout: &Array<u32>,
    rows: u32,
    n: u32,
    in_stride: u32,
    k: u32,
    key_bits: u32,
    flip: u32,
    #[comptime] cfg: RadixConfig,
    #[comptime] cand_items: u32,
) {
    let t = UNIT_POS;
    let row = CUBE_POS as u32;
    let threads = comptime![cfg.threads];
    let items = comptime![cfg.items];
    let chunk = comptime![BUCKETS.div_ceil(cfg.threads)];
    let cand_tile = comptime![cfg.threads * cand_items];
    if row < rows {
        let mut keys_sh = SharedMemory::<T>::new(comptime![radix_slots(cfg.tile_len())]);
        let hist = SharedMemory::<Atomic<u32>>::new(comptime![BUCKETS as usize]);
        let mut pick = SharedMemory::<u32>::new(2usize);
        let mut scan_v = SharedMemory::<u32>::new(comptime![2 * cfg.threads as usize]);
        let mut scan_i = SharedMemory::<u32>::new(1usize);
        let mut cand_x = SharedMemory::<u32>::new(comptime![radix_slots(cand_tile)]);
        let mut xch = SharedMemory::<u32>::new(comptime![radix_slots(cand_tile)]);

        // Coalesced load, then each unit takes a blocked run of positions (row order).
        let (base, _) = row_offsets(row, layout);
        #[unroll]
        for c in 0..items {
            let j = c * threads + t;
            if j < n {
                keys_sh[radix_slot(j)] = keys_in[base + j as usize * in_stride as usize];
            }
        }
        sync_cube();
        let mut keys = Array::<T>::new(comptime![cfg.items as usize]);
        let mut state = Array::<u32>::new(comptime![cfg.items as usize]);
        #[unroll]
        for i in 0..items {
            let j = t * items + i;
            keys[i as usize] = keys_sh[radix_slot(j)];
            state[i as usize] = select(j < n, TIED, AFTER);
        }

        // Selection: `need` keys are still to be taken among the tied ones.
        let mut need = k;
        let passes = key_bits / DIGIT_BITS;
        for p in 0..passes {
            let shift = key_bits - (p + 1u32) * DIGIT_BITS;
            #[unroll]
            for c in 0..chunk {
                let d = t * chunk + c;
                if d < BUCKETS {
                    hist[d as usize].store(0u32);
                }
            }
            sync_cube();
            #[unroll]
            for i in 0..items {
                if state[i as usize] == TIED {
                    let d = radix_digit::<T>(keys[i as usize], shift, BUCKETS - 1u32, flip);
                    hist[d as usize].fetch_add(1u32);
                }
            }
            sync_cube();
            let mut mine = 0u32;
            #[unroll]
            for c in 0..chunk {
                let d = t * chunk + c;
                if d < BUCKETS {
                    mine += hist[d as usize].load();
                }
            }
            let cs = cube_exclusive_scan::<u32, Add>(
                count_item::<u32>(mine),
                &mut scan_v,
                &mut scan_i,
                threads,
                false,
                comptime![cfg.plane_ops],
            );
            let mut before = cs.exclusive.value;
            #[unroll]
            for c in 0..chunk {
                let d = t * chunk + c;
                if d < BUCKETS {
                    let h = hist[d as usize].load();
                    if before < need && need <= before + h {
                        pick[0] = d;
                        pick[1] = need - before;
                    }
                    before += h;
                }
            }
            sync_cube();
            let chosen = pick[0];
            need = pick[1];
            #[unroll]
            for i in 0..items {
                if state[i as usize] == TIED {
                    let d = radix_digit::<T>(keys[i as usize], shift, BUCKETS - 1u32, flip);
                    state[i as usize] = select(d < chosen, BEFORE, select(d > chosen, AFTER, TIED));
                }
            }
        }

        // Compaction in row order into `keys_sh` (free again: the keys are in registers): the
        // keys before the k-th one and the first `need` ties.
        // Position = keys before earlier + min(ties earlier, need); both counts < 2^16.
        let mut counts = 0u32;
        #[unroll]
        for i in 0..items {
            let s = state[i as usize];
            counts += select(s == TIED, 1u32, 0u32) + select(s == BEFORE, 1u32 << 16, 0u32);
        }
        sync_cube();
        let cs = cube_exclusive_scan::<u32, Add>(
            count_item::<u32>(counts),
            &mut scan_v,
            &mut scan_i,
            threads,
            false,
            comptime![cfg.plane_ops],
        );
        let mut ties = cs.exclusive.value & 0xffffu32;
        let mut kept = cs.exclusive.value >> 16;
        #[unroll]
        for i in 0..items {
            let s = state[i as usize];
            if s == BEFORE || (s == TIED && ties < need) {
                let pos = kept + select(ties < need, ties, need);
                keys_sh[radix_slot(pos)] = keys[i as usize];
                cand_x[radix_slot(pos)] = t * items + i;
            }
            ties += select(s == TIED, 1u32, 0u32);
            kept += select(s == BEFORE, 1u32, 0u32);
        }
        sync_cube();

        // Stable LSD sort of the `k` candidates (already in row order); the padding entries
        // take the largest digit and stay behind them.
        let mut packed = Array::<u32>::new(comptime![cand_items as usize]);
        let mut ck = Array::<T>::new(comptime![cand_items as usize]);
        let mut cx = Array::<u32>::new(comptime![cand_items as usize]);
        for p in 0..passes {
            let shift = p * DIGIT_BITS;
            #[unroll]
            for i in 0..cand_items {
                let j = t * cand_items + i;
                let d = select(
                    j < k,
                    radix_digit::<T>(keys_sh[radix_slot(j)], shift, BUCKETS - 1u32, flip),
                    BUCKETS - 1u32,
                );
                packed[i as usize] = d | (j << DIGIT_BITS);
            }
            tile_sort_by_digit(
                &mut packed,
                &mut xch,
                &mut scan_v,
                &mut scan_i,
                DIGIT_BITS,
                threads,
                cand_items,
                comptime![cfg.plane_ops],
                comptime![cfg.wide_counts],
            );
            #[unroll]
            for i in 0..cand_items {
                let src = radix_slot(packed[i as usize] >> DIGIT_BITS);
                ck[i as usize] = keys_sh[src];
                cx[i as usize] = cand_x[src];
            }
            sync_cube();
            #[unroll]
            for i in 0..cand_items {
                let dst = radix_slot(t * cand_items + i);
                keys_sh[dst] = ck[i as usize];
                cand_x[dst] = cx[i as usize];
            }
            sync_cube();
        }

        let out_row = row as usize * k as usize;
        #[unroll]
        for c in 0..cand_items {
            let j = c * threads + t;
            if j < k {
                keys_out[out_row + j as usize] = keys_sh[radix_slot(j)];
                indices_out[out_row + j as usize] = X::cast_from(cand_x[radix_slot(j)]);
            }
        }
    }
}
