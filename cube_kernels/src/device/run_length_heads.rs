//! One tile of unique-consecutive (keys, and run lengths when asked) found from the heads
//! alone: no per-element fold.
//!
//! With every value 1 the fold of a unit is known from its head mask: `(elements after its last
//! head, heads)`, or `(its elements, 0)` with no head. So a unit reads its consecutive (blocked)
//! key vectors straight from global memory, sets a bit per head, and its fold is a popcount and
//! a leading-zero count. After the cube's segmented scan, each head stages its key in shared
//! memory; after the look-back the cube writes the unique keys coalesced, and each unit writes
//! the lengths of the runs its heads end straight from its mask (the distance between its
//! consecutive heads; before its first head, the fold carried into the unit). Only the keys
//! are staged, so a tile takes half the shared memory of staging lengths too.
//!
//! Same tiling, look-back state and fallback as [`run_length`](super::run_length), whose
//! kernel dispatches here for unique-consecutive without inverse indices.

use super::run_length::{differs, publish_aggregate, tile_prefix, RunConfig};
use super::select::{scan_shared, PassConfig};
use crate::cube::{combine_runs, cube_exclusive_segmented_scan_with};
use crate::ops::{Item, ScanOp};
use cubecl::prelude::*;

/// Bit `j` if `key` (element `j` of the unit) starts a run after `prev`.
#[cube]
fn head_bit<K: Numeric>(prev: K, key: K, j: u32) -> u32 {
    let mut b = 0u32;
    if differs::<K>(prev, key) {
        b = 1u32 << j;
    }
    b
}

/// The head mask of a unit's `vpt` vectors from `first_vec` (bit `k * width + l`), its keys in
/// `ks`, over the elements below `n`. `full`: every element is below `n` (no checks).
#[cube]
fn unit_heads<K: Numeric, N: Size>(
    keys: &Array<Vector<K, N>>,
    first_vec: u32,
    n: u32,
    ks: &mut Array<K>,
    #[comptime] vpt: u32,
    #[comptime] full: bool,
) -> u32 {
    let nl = N::value();
    let nlu = nl as u32;
    let e_first = first_vec * nlu;
    let mut prev = K::from_int(0);
    if e_first > 0 {
        let pv = keys[(first_vec - 1) as usize];
        prev = pv[nl - 1];
    }
    let mut bits = 0u32;
    #[unroll]
    for k in 0..vpt {
        let q = first_vec + k;
        if comptime![full] {
            let kv = keys[q as usize];
            #[unroll]
            for l in 0..nl {
                let j = (k as usize) * nl + l;
                ks[j] = kv[l];
                bits |= head_bit::<K>(prev, kv[l], j as u32);
                prev = kv[l];
            }
        } else if q * nlu < n {
            let kv = keys[q as usize];
            #[unroll]
            for l in 0..nl {
                let j = (k as usize) * nl + l;
                if q * nlu + (l as u32) < n {
                    ks[j] = kv[l];
                    bits |= head_bit::<K>(prev, kv[l], j as u32);
                    prev = kv[l];
                }
            }
        }
    }
    // The first element is a head (whatever `prev` was).
    if e_first == 0 && n > 0 {
        bits |= 1u32;
    }
    bits
}

/// One tile of [`run_length`](super::run_length::run_length) with `run.ones` and no inverse:
/// see the module documentation.
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn run_length_heads<K: Numeric, V: Numeric, A: Numeric, W: Numeric, O: ScanOp, N: Size>(
    keys: &Array<Vector<K, N>>,
    values: &Array<Vector<V, N>>,
    out_keys: &mut Array<K>,
    out_values: &mut Array<W>,
    count: &mut Array<u32>,
    state: &mut Array<Atomic<u32>>,
    state_view: &mut Array<u32>,
    n: u32,
    tile: u32,
    num_tiles: u32,
    epoch: u32,
    #[comptime] cfg: PassConfig,
    #[comptime] run: RunConfig,
) {
    let t = UNIT_POS;
    let nl = N::value();
    let nlu = nl as u32;
    let vpt = comptime![cfg.vectors_per_thread];
    let threads = comptime![cfg.threads];
    let tile_elems = comptime![cfg.tile_vectors()] * nlu;
    let unit_elems = comptime![cfg.vectors_per_thread] * nlu;
    let te = comptime![cfg.tile_vectors() as usize * nl];
    let lengths = comptime![run.write_values];
    let tile_e0 = tile * tile_elems;
    let ue0 = t * unit_elems;
    let first_vec = tile * comptime![cfg.tile_vectors()] + t * vpt;

    let mut ks = Array::<K>::new(comptime![cfg.vectors_per_thread as usize * nl]);
    let bits = if tile_e0 + tile_elems <= n {
        unit_heads::<K, N>(keys, first_vec, n, &mut ks, vpt, true)
    } else {
        unit_heads::<K, N>(keys, first_vec, n, &mut ks, vpt, false)
    };
    // The unit's elements below `n`, and its fold `(elements after its last head, heads)`.
    let mut valid = unit_elems;
    if tile_e0 + ue0 + unit_elems > n {
        valid = 0u32;
        if tile_e0 + ue0 < n {
            valid = n - tile_e0 - ue0;
        }
    }
    let mut after = valid;
    if bits != 0 {
        after = valid - (31u32 - bits.leading_zeros());
    }
    let unit = Item::<A> {
        value: A::cast_from(after),
        index: bits.count_ones(),
    };
    let mut sh = scan_shared::<A>(cfg.threads);
    let cs = cube_exclusive_segmented_scan_with::<A, O>(
        unit,
        &mut sh.scan_v,
        &mut sh.scan_i,
        cfg.threads,
        cfg.plane_ops,
    );
    sync_cube();
    let tile_total = cs.total;
    publish_aggregate::<A>(state, tile, epoch, tile_total);

    // Head `h` of the tile stages its key at `sk[h]`.
    let mut sk = SharedMemory::<K>::new(te);
    let mut h = cs.exclusive.index;
    #[unroll]
    for k in 0..vpt {
        #[unroll]
        for l in 0..nl {
            let j = (k as usize) * nl + l;
            if (bits >> (j as u32)) & 1 == 1 {
                sk[h as usize] = ks[j];
                h += 1;
            }
        }
    }

    let prefix = tile_prefix::<K, V, A, O, N>(
        keys, values, state, state_view, n, tile, epoch, tile_total, &mut sh, cfg, true,
    );
    let heads = tile_total.index;
    let base = prefix.index;
    let last = tile == num_tiles - 1;
    if t == 0 && last {
        count[0] = base + heads;
    }
    if comptime![lengths] {
        // Each head ends the run before it: its length is the distance from the previous head
        // of the unit, or for the unit's first head the fold carried into the unit (elements
        // since the last head before it, in this tile and earlier ones). Written straight from
        // the head mask; a unit's lengths are consecutive in the output.
        let into = combine_runs::<A, O>(prefix, cs.exclusive);
        let mut r = into.index;
        let mut carry = u32::cast_from(into.value);
        let mut at = 0u32;
        let mut m = bits;
        while m != 0 {
            let j = m.trailing_zeros();
            if r > 0 {
                out_values[(r - 1) as usize] = W::cast_from(carry + j - at);
            }
            carry = 0u32;
            at = j;
            r += 1;
            m &= m - 1;
        }
        // The unit holding the last element ends the last run.
        if last && valid > 0 && tile_e0 + ue0 + valid == n {
            out_values[(r - 1) as usize] = W::cast_from(carry + valid - at);
        }
    }
    sync_cube();

    let mut r = t;
    while r < heads {
        out_keys[(base + r) as usize] = sk[r as usize];
        r += threads;
    }
}
