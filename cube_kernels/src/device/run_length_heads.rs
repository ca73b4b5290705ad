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
//! Keys only (no lengths), the look-back carries the plain head count ([`HeadCountCarry`], two
//! state words per tile where the run carry takes four).
//!
//! Same tiling, look-back state and fallback as [`run_length`](super::run_length), whose
//! kernel dispatches here for unique-consecutive without inverse indices.

use super::lookback::TileCarry;
use super::run_length::{differs, publish_aggregate, tile_prefix, RunConfig};
use super::select::{pass_lookback, scan_shared, tile_bit_scan, PassConfig};
use super::tile_state::{publish, AGGREGATE, PREFIX};
use crate::cube::{combine_runs, cube_exclusive_segmented_scan_with, TileConfig, TileShared};
use crate::ops::{combine_items, Add, Item, ScanOp};
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
    // A unit past the end reads nothing (its previous vector may be past the buffer).
    if e_first > 0 && e_first < n {
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
    let heads = tile_total.index;
    if comptime![lengths] {
        publish_aggregate::<A>(state, tile, epoch, tile_total);
    } else {
        publish_count::<A>(
            state,
            tile,
            epoch,
            heads,
            select(tile == 0, PREFIX, AGGREGATE),
        );
    }

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

    let last = tile == num_tiles - 1;
    let base = if comptime![lengths] {
        let prefix = tile_prefix::<K, V, A, O, N>(
            keys, values, state, state_view, n, tile, epoch, tile_total, &mut sh, cfg, true,
        );
        // The fold carried into the unit: elements since the last head before it, in this tile
        // and earlier ones; and the runs before it.
        let into = combine_runs::<A, O>(prefix, cs.exclusive);
        let ends_last = last && valid > 0 && tile_e0 + ue0 + valid == n;
        write_lengths::<W>(
            out_values,
            bits,
            into.index,
            u32::cast_from(into.value),
            valid,
            ends_last,
        );
        prefix.index
    } else {
        head_count_prefix::<K, V, A, N>(
            keys, values, state, state_view, n, tile, epoch, heads, &mut sh, cfg,
        )
    };
    if t == 0 && last {
        count[0] = base + heads;
    }
    sync_cube();

    let mut r = t;
    while r < heads {
        out_keys[(base + r) as usize] = sk[r as usize];
        r += threads;
    }
}

/// Publishes a head count of the keys-only carry with `status` (unit 0).
#[cube]
fn publish_count<A: Numeric>(
    state: &mut Array<Atomic<u32>>,
    tile: u32,
    epoch: u32,
    heads: u32,
    status: u32,
) {
    if UNIT_POS == 0 {
        let item = Item::<A> {
            value: A::cast_from(heads),
            index: 0u32,
        };
        publish::<A>(state, tile, item, status, epoch, false);
    }
}

/// Heads before the tile, by look-back over the plain head counts (keys only: two state words
/// per tile where the run carry takes four; H200, 2^28 sorted i32 keys: 0.736 against 0.856 ms,
/// BENCHMARKS.md stop 6), then the tile's inclusive count published.
#[cube]
#[allow(clippy::too_many_arguments)]
fn head_count_prefix<K: Numeric, V: Numeric, A: Numeric, N: Size>(
    keys: &Array<Vector<K, N>>,
    values: &Array<Vector<V, N>>,
    state: &mut Array<Atomic<u32>>,
    state_view: &mut Array<u32>,
    n: u32,
    tile: u32,
    epoch: u32,
    heads: u32,
    sh: &mut TileShared<A>,
    #[comptime] cfg: PassConfig,
) -> u32 {
    let mut before = u32::new(0);
    if tile > 0 {
        let p = pass_lookback::<K, V, A, Add, N, HeadCountCarry>(
            keys, values, n, state, state_view, tile, epoch, sh, cfg, false,
        );
        before = u32::cast_from(p.value);
        publish_count::<A>(state, tile, epoch, before + heads, PREFIX);
    }
    before
}

/// Look-back carry of unique-consecutive keys only: the plain head count; a waiting cube counts
/// a silent predecessor's heads itself.
pub struct HeadCountCarry;

#[cube]
impl TileCarry for HeadCountCarry {
    fn combine<A: Numeric, O: ScanOp>(
        a: Item<A>,
        b: Item<A>,
        #[comptime] _indexed: bool,
    ) -> Item<A> {
        combine_items::<A, O>(a, b, false)
    }
    fn aggregate<I: Numeric, J: Numeric, A: Numeric, O: ScanOp, N: Size>(
        input: &Array<Vector<I, N>>,
        _aux: &Array<Vector<J, N>>,
        _base: usize,
        _stride: usize,
        n: u32,
        tile: u32,
        sh: &mut TileShared<A>,
        #[comptime] cfg: TileConfig,
    ) -> Item<A> {
        let nl = N::value();
        let vpt = comptime![cfg.vectors_per_thread];
        let first_vec = tile * comptime![cfg.tile_vectors()] + UNIT_POS * vpt;
        let mut ks = Array::<I>::new(comptime![cfg.vectors_per_thread as usize * nl]);
        let bits = unit_heads::<I, N>(input, first_vec, n, &mut ks, vpt, false);
        tile_bit_scan::<A, O>(bits, sh, cfg.threads, cfg.plane_ops).total
    }
}

/// Writes the lengths of the runs a unit's heads end: each head ends the run before it, whose
/// length is the distance from the unit's previous head, or for its first head `carry` (the
/// elements since the last head before the unit) plus its position. `runs`: the runs before
/// the unit. `ends_last`: the unit holds the last element and also ends the last run. A unit's
/// lengths are consecutive in the output.
#[cube]
fn write_lengths<W: Numeric>(
    out_values: &mut Array<W>,
    bits: u32,
    runs: u32,
    carry: u32,
    valid: u32,
    ends_last: bool,
) {
    let mut r = runs;
    let mut since = carry;
    let mut at = 0u32;
    let mut m = bits;
    while m != 0 {
        let j = m.trailing_zeros();
        if r > 0 {
            out_values[(r - 1) as usize] = W::cast_from(since + j - at);
        }
        since = 0u32;
        at = j;
        r += 1;
        m &= m - 1;
    }
    if ends_last {
        out_values[(r - 1) as usize] = W::cast_from(since + valid - at);
    }
}
