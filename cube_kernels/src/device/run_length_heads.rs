//! One tile of unique-consecutive (keys, and run lengths when asked) found from the heads
//! alone: no per-element fold.
//!
//! With every value 1 the fold of a unit is known from its head mask: `(elements after its last
//! head, heads)`, or `(its elements, 0)` with no head. So the cube loads its tile's keys
//! coalesced into shared memory, a unit reads its consecutive (blocked) keys from there, sets a
//! bit per head, and its fold is a popcount and a leading-zero count. After the cube's
//! segmented scan, each head stages its key in shared memory; after the look-back the cube
//! writes the unique keys coalesced, then each unit stages the lengths of the runs its heads
//! end, from its mask (the distance between its consecutive heads; before its first head, the
//! fold carried into the unit from earlier units of the tile), and the cube writes them
//! coalesced too.
//!
//! The look-back carries only the plain head count ([`HeadCountCarry`], two state words per
//! tile; carrying the run fold too takes four and measured 0.11 ms slower on the H200;
//! BENCHMARKS.md at 52581a0, 2026-12-01 (H200), "The look-back carries the head count"). So a
//! tile cannot finish the run its first head ends (it started in an earlier tile), nor the last
//! run: it leaves a record per tile, and [`run_length_fixup`](super::run_length_fixup) writes
//! those lengths after the pass.
//!
//! Same tiling, look-back state and fallback as [`run_length`](super::run_length), whose
//! kernel dispatches here for unique-consecutive without inverse indices.
// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use super::run_length::{
    differs, key_before_unit, pad, padded_len, RunConfig, RunInputs, RunOutputs,
};
use super::run_length_fixup::RECORD_WORDS;
use super::select::{pass_lookback, scan_shared, tile_bit_scan, PassConfig};
use super::single_pass::{publish, TileCarry, TileStateArgs, AGGREGATE, PREFIX};
use crate::cube::{cube_exclusive_segmented_scan_with, TileConfig, TileShared};
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

/// The head mask of a unit's `vpt` vectors from `first_vec` (bit `k * width + l`) over the
/// elements below `n`, read blocked from global memory: the look-back's fallback, counting the
/// heads of a silent predecessor while the cube's own tile holds the shared memory.
#[cube]
fn unit_heads<K: Numeric, N: Size>(
    keys: &Array<Vector<K, N>>,
    first_vec: u32,
    n: u32,
    #[comptime] vpt: u32,
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
        if q * nlu < n {
            let kv = keys[q as usize];
            #[unroll]
            for l in 0..nl {
                let j = (k as usize) * nl + l;
                if q * nlu + (l as u32) < n {
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

/// The head mask of each unit of tile `tile` (bit `j` for its element `j`), its keys in `ks`,
/// through shared memory: the cube loads its tile striped and coalesced (unit `t` loads vectors
/// `k * threads + t`) into `sk`, padded, then each unit reads its blocked elements from there
/// (bank-conflict free through the padding).
/// Each unit reading its own blocked vectors from global memory instead (32 cache lines per
/// plane-wide load) took 0.82 against 0.68-0.69 ms on the H200 (unique_consecutive with
/// counts, 2^28 sorted i32; BENCHMARKS.md at 52581a0, 2026-12-01 (H200), "unique_consecutive:
/// the tile's keys staged in shared memory"). `full`: every element of the tile is
/// below `n`: the same blocks then run without their bounds checks (hence the identical `if`
/// blocks), so the compiler can issue a unit's loads back to back.
#[cube]
#[allow(clippy::too_many_arguments, clippy::if_same_then_else)]
fn unit_heads_staged<K: Numeric, N: Size>(
    keys: &Array<Vector<K, N>>,
    sk: &mut SharedMemory<K>,
    tile: u32,
    n: u32,
    ks: &mut Array<K>,
    #[comptime] cfg: PassConfig,
    #[comptime] full: bool,
) -> u32 {
    let t = UNIT_POS;
    let nl = N::value();
    let nlu = nl as u32;
    let vpt = comptime![cfg.vectors_per_thread];
    let threads = comptime![cfg.threads];
    let tile_v0 = tile * comptime![cfg.tile_vectors()];
    let tile_e0 = tile_v0 * nlu;
    #[unroll]
    for k in 0..vpt {
        let lv = k * threads + t;
        if comptime![full] {
            let kv = keys[(tile_v0 + lv) as usize];
            #[unroll]
            for l in 0..nl {
                sk[pad(lv * nlu + l as u32)] = kv[l];
            }
        } else if (tile_v0 + lv) * nlu < n {
            let kv = keys[(tile_v0 + lv) as usize];
            #[unroll]
            for l in 0..nl {
                sk[pad(lv * nlu + l as u32)] = kv[l];
            }
        }
    }
    sync_cube();
    let ue0 = t * vpt * nlu;
    let mut prev = key_before_unit::<K, N>(keys, sk, tile, tile_v0, ue0, n);
    let mut bits = 0u32;
    #[unroll]
    for j in 0..comptime![cfg.vectors_per_thread * nl as u32] {
        let e = ue0 + j;
        if comptime![full] {
            let key = sk[pad(e)];
            ks[j as usize] = key;
            bits |= head_bit::<K>(prev, key, j);
            prev = key;
        } else if tile_e0 + e < n {
            let key = sk[pad(e)];
            ks[j as usize] = key;
            bits |= head_bit::<K>(prev, key, j);
            prev = key;
        }
    }
    // The first element is a head (whatever `prev` was).
    if tile_e0 + ue0 == 0 && n > 0 {
        bits |= 1u32;
    }
    bits
}

/// One tile of [`run_length`](super::run_length::run_length()) with `run.ones` and no inverse:
/// see the module documentation.
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn run_length_heads<
    K: Numeric,
    V: Numeric,
    A: Numeric,
    W: Numeric,
    X: Int,
    O: ScanOp,
    N: Size,
>(
    input: &RunInputs<K, V, N>,
    output: &mut RunOutputs<K, W, X>,
    records: &mut Array<u32>,
    tiles: &mut TileStateArgs,
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

    // The tile's keys are staged in `sk` (padded); after the cube scan, whose barriers order
    // every read of them first, head `h` of the tile stages its key at `sk[h]`.
    let mut sk = SharedMemory::<K>::new(comptime![padded_len(te)]);
    let mut ks = Array::<K>::new(comptime![cfg.vectors_per_thread as usize * nl]);
    let bits = if tile_e0 + tile_elems <= n {
        unit_heads_staged::<K, N>(&input.keys, &mut sk, tile, n, &mut ks, cfg, true)
    } else {
        unit_heads_staged::<K, N>(&input.keys, &mut sk, tile, n, &mut ks, cfg, false)
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
    let heads = cs.total.index;
    publish_count::<A>(
        &mut tiles.state,
        tile,
        epoch,
        heads,
        select(tile == 0, PREFIX, AGGREGATE),
    );

    let before = cs.exclusive.index;
    let mut h = before;
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

    let base = head_count_prefix::<K, V, A, N>(input, tiles, n, tile, epoch, heads, &mut sh, cfg);
    if t == 0 && tile == num_tiles - 1 {
        output.count[0] = base + heads;
    }
    // Lengths: every run that ends inside the tile but the one its first head ends; that one
    // and the last run are left to `run_length_fixup`, with this tile's record.
    if comptime![lengths] {
        write_record(records, tile, tile_e0 + ue0, bits, before, heads, base);
    }
    sync_cube();

    let mut r = t;
    while r < heads {
        output.out_keys[(base + r) as usize] = sk[r as usize];
        r += threads;
    }
    if comptime![lengths] {
        // The lengths take the keys' place in shared memory (4-byte keys) and leave coalesced:
        // written from each unit's mask instead, 1.10 against 0.82 ms on the H200
        // (BENCHMARKS.md at 52581a0, 2026-12-01 (H200), "The look-back carries the head
        // count"). In f32 keys' place a length is held as a normal float (see
        // `LENGTH_TAG`), which no backend may flush as it could a subnormal.
        let ty = type_of::<K>();
        let reuse = comptime![ty.size() == 4];
        let mut sl = SharedMemory::<u32>::new(comptime![if reuse { 1usize } else { te }]);
        sync_cube();
        let carry = u32::cast_from(cs.exclusive.value);
        stage_lengths::<K>(&mut sk, &mut sl, bits, before, carry, reuse);
        sync_cube();
        let mut r = t;
        while r + 1 < heads {
            let len = if comptime![reuse] {
                u32::reinterpret(sk[r as usize]) & !LENGTH_TAG
            } else {
                sl[r as usize]
            };
            output.out_values[(base + r) as usize] = W::cast_from(len);
            r += threads;
        }
    }
}

/// Exponent bits set on a length staged in a 4-byte key's place: as an f32 the word is a
/// normal number in [2, 4) (a length is below 2^23), never a subnormal that a backend may
/// flush to zero on the way through shared memory.
const LENGTH_TAG: u32 = 0x4000_0000;

/// The tile's record for `run_length_fixup`: its first head + 1 and last head + 1 (0 without
/// heads), written by the units holding them, and the runs before it (unit 0). `at`: the
/// unit's first element; `before`: heads before the unit in the tile.
#[cube]
fn write_record(
    records: &mut Array<u32>,
    tile: u32,
    at: u32,
    bits: u32,
    before: u32,
    heads: u32,
    base: u32,
) {
    let w = RECORD_WORDS as usize;
    let rec = tile as usize * w;
    if bits != 0 {
        if before == 0 {
            records[rec] = at + bits.trailing_zeros() + 1;
        }
        if before + bits.count_ones() == heads {
            records[rec + 1] = at + (31u32 - bits.leading_zeros()) + 1;
        }
    }
    if UNIT_POS == 0 {
        if heads == 0 {
            records[rec] = 0u32;
            records[rec + 1] = 0u32;
        }
        records[rec + 2] = base;
    }
}

/// Stages the lengths of the runs the unit's heads end at their tile-local run (`sk` as u32
/// words with `reuse`, else `sl`): each head ends the run before it, whose length is the
/// distance from the unit's previous head, or for its first head `carry` (the elements since
/// the last head before the unit in the tile) plus its position. `before`: heads before the
/// unit in the tile; the tile's first head (which ends a run of an earlier tile) is skipped.
#[cube]
fn stage_lengths<K: Numeric>(
    sk: &mut SharedMemory<K>,
    sl: &mut SharedMemory<u32>,
    bits: u32,
    before: u32,
    carry: u32,
    #[comptime] reuse: bool,
) {
    let mut r = before;
    let mut since = carry;
    let mut at = 0u32;
    let mut m = bits;
    while m != 0 {
        let j = m.trailing_zeros();
        if r > 0 {
            let len = since + j - at;
            if comptime![reuse] {
                sk[(r - 1) as usize] = K::reinterpret(len | LENGTH_TAG);
            } else {
                sl[(r - 1) as usize] = len;
            }
        }
        since = 0u32;
        at = j;
        r += 1;
        m &= m - 1;
    }
}

/// Publishes a head count of the head-count carry with `status` (unit 0).
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

/// Heads before the tile, by look-back over the plain head counts (two state words per tile
/// where the run carry takes four; H200, 2^28 sorted i32 keys: values only 0.736 against
/// 0.856 ms, BENCHMARKS.md at 52581a0, 2026-11-30 (H200), "a plain head-count carry"; with
/// counts 1.10 against 1.21 ms, 2026-12-01 (H200), "The look-back carries the head count"), then
/// the tile's inclusive count published.
#[cube]
#[allow(clippy::too_many_arguments)]
fn head_count_prefix<K: Numeric, V: Numeric, A: Numeric, N: Size>(
    input: &RunInputs<K, V, N>,
    tiles: &TileStateArgs,
    n: u32,
    tile: u32,
    epoch: u32,
    heads: u32,
    sh: &mut TileShared<A>,
    #[comptime] cfg: PassConfig,
) -> u32 {
    let mut before = u32::new(0);
    if tile > 0 {
        let own = Item::<A> {
            value: A::cast_from(heads),
            index: 0u32,
        };
        let p = pass_lookback::<K, V, A, Add, N, HeadCountCarry>(
            &input.keys,
            &input.values,
            n,
            &tiles.state,
            &tiles.view,
            tile,
            epoch,
            own,
            sh,
            cfg,
            false,
        );
        before = u32::cast_from(p.value);
    }
    before
}

/// Look-back carry of the head-mask tile: the plain head count; a waiting cube counts
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
        let vpt = comptime![cfg.vectors_per_thread];
        let first_vec = tile * comptime![cfg.tile_vectors()] + UNIT_POS * vpt;
        let bits = unit_heads::<I, N>(input, first_vec, n, vpt);
        tile_bit_scan::<A, O>(bits, sh, cfg.threads, cfg.plane_ops).total
    }
}
