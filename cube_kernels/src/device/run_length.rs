//! Run-length encoding in one pass: reduce-by-key and unique-consecutive.
//!
//! A head is an element whose key differs from the previous one (the first element, and every
//! NaN key: NaN != NaN, as PyTorch). Each unit folds its consecutive elements into
//! `(fold since its last head, heads)`; a cube-wide segmented scan and a decoupled look-back of
//! the same pair ([`combine_runs()`]) give every unit the run index and the partial fold it
//! continues. A unit writes the unique key at each head, the finished value of the previous run
//! just before it, and the last run at the last element. Tiling as in [`compact`](super::select).
// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use super::run_length_heads::run_length_heads;
use super::select::{pass_len, pass_lookback, scan_shared, PassConfig};
use super::single_pass::{publish_tile, take_ticket, PassScalars, TileCarry, TileStateArgs};
use crate::cube::{combine_runs, cube_exclusive_segmented_scan_with, TileConfig, TileShared};
use crate::ops::{is_nan, Item, ScanOp};
use cubecl::prelude::*;

/// What a run-length pass reads and writes.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub struct RunConfig {
    /// Every value is 1 (`values` is not read): the folds are run lengths.
    pub ones: bool,
    /// Write `inverse[i]` = run index of element `i`.
    pub inverse: bool,
    /// Write the run values (else only keys, inverse and count).
    pub write_values: bool,
}

impl RunConfig {
    /// Runs found from the head mask alone (every value 1, no inverse): the staged tile of
    /// [`run_length_heads`](super::run_length_heads).
    pub fn heads(&self) -> bool {
        self.ones && !self.inverse
    }
}

/// Whether `a` (earlier) and `b` start different runs: unequal, or either is NaN.
#[cube]
pub(crate) fn differs<K: Numeric>(a: K, b: K) -> bool {
    a != b || is_nan::<K>(a) || is_nan::<K>(b)
}

/// The unit's heads (bit mask, as `unit_flags`), its values cast to `A` (in `vals`) and its
/// fold `(value since its last head, heads)` over the elements below `n`.
#[cube]
#[allow(clippy::too_many_arguments)]
fn unit_runs<K: Numeric, V: Numeric, A: Numeric, O: ScanOp, N: Size>(
    keys: &Array<Vector<K, N>>,
    values: &Array<Vector<V, N>>,
    first_vec: u32,
    n: u32,
    vals: &mut Array<A>,
    #[comptime] vpt: u32,
    #[comptime] ones: bool,
) -> (u32, Item<A>) {
    let nl = N::value();
    let nlu = nl as u32;
    let mut bits = 0u32;
    let mut acc = Item::<A> {
        value: O::identity::<A>(),
        index: 0u32,
    };
    let mut prev = key_before_vector::<K, N>(keys, first_vec, n);
    #[unroll]
    for k in 0..vpt {
        let q = first_vec + k;
        let e0 = q * nlu;
        if e0 < n {
            let (kv, vv) = load_vector::<K, V, N>(keys, values, q, ones);
            #[unroll]
            for l in 0..nl {
                let i = e0 + (l as u32);
                let j = (k as usize) * nl + l;
                if i < n {
                    let key = kv[l];
                    let mut x = A::from_int(1);
                    if comptime![!ones] {
                        x = A::cast_from(vv[l]);
                    }
                    vals[j] = x;
                    if i == 0 || differs::<K>(prev, key) {
                        bits |= 1u32 << (j as u32);
                        acc = Item::<A> {
                            value: x,
                            index: acc.index + 1,
                        };
                    } else {
                        acc = Item::<A> {
                            value: O::combine::<A>(acc.value, x),
                            index: acc.index,
                        };
                    }
                    prev = key;
                }
            }
        }
    }
    (bits, acc)
}

/// A tile's `(fold since its last head, heads)`: unit folds, then the cube-wide segmented scan.
#[cube]
#[allow(clippy::too_many_arguments)]
fn tile_runs<K: Numeric, V: Numeric, A: Numeric, O: ScanOp, N: Size>(
    keys: &Array<Vector<K, N>>,
    values: &Array<Vector<V, N>>,
    n: u32,
    tile: u32,
    vals: &mut Array<A>,
    sh: &mut TileShared<A>,
    #[comptime] cfg: TileConfig,
    #[comptime] ones: bool,
) -> (u32, Item<A>, Item<A>) {
    let vpt = comptime![cfg.vectors_per_thread];
    let first = tile * comptime![cfg.tile_vectors()] + UNIT_POS * vpt;
    let (bits, unit) = unit_runs::<K, V, A, O, N>(keys, values, first, n, vals, vpt, ones);
    let cs = cube_exclusive_segmented_scan_with::<A, O>(
        unit,
        &mut sh.scan_v,
        &mut sh.scan_i,
        cfg.threads,
        cfg.plane_ops,
    );
    sync_cube();
    (bits, cs.exclusive, cs.total)
}

#[cube]
#[allow(clippy::too_many_arguments)]
fn runs_aggregate<I: Numeric, J: Numeric, A: Numeric, O: ScanOp, N: Size>(
    keys: &Array<Vector<I, N>>,
    values: &Array<Vector<J, N>>,
    n: u32,
    tile: u32,
    sh: &mut TileShared<A>,
    #[comptime] cfg: TileConfig,
    #[comptime] ones: bool,
) -> Item<A> {
    let nl = N::value();
    let mut vals = Array::<A>::new(comptime![cfg.vectors_per_thread as usize * nl]);
    let (_bits, _excl, total) =
        tile_runs::<I, J, A, O, N>(keys, values, n, tile, &mut vals, sh, cfg, ones);
    total
}

/// Look-back carry of reduce-by-key: `(segment fold, heads)` with [`combine_runs()`]; the
/// fallback folds the keys (`input`) and values (`aux`) of the silent tile.
pub struct RunCarry;

#[cube]
impl TileCarry for RunCarry {
    fn combine<A: Numeric, O: ScanOp>(
        a: Item<A>,
        b: Item<A>,
        #[comptime] _indexed: bool,
    ) -> Item<A> {
        combine_runs::<A, O>(a, b)
    }
    fn aggregate<I: Numeric, J: Numeric, A: Numeric, O: ScanOp, N: Size>(
        input: &Array<Vector<I, N>>,
        aux: &Array<Vector<J, N>>,
        _base: usize,
        _stride: usize,
        n: u32,
        tile: u32,
        sh: &mut TileShared<A>,
        #[comptime] cfg: TileConfig,
    ) -> Item<A> {
        runs_aggregate::<I, J, A, O, N>(input, aux, n, tile, sh, cfg, false)
    }
}

/// [`RunCarry`] where every value is 1 (run lengths; `aux` is not read).
pub struct RunLengthCarry;

#[cube]
impl TileCarry for RunLengthCarry {
    fn combine<A: Numeric, O: ScanOp>(
        a: Item<A>,
        b: Item<A>,
        #[comptime] _indexed: bool,
    ) -> Item<A> {
        combine_runs::<A, O>(a, b)
    }
    fn aggregate<I: Numeric, J: Numeric, A: Numeric, O: ScanOp, N: Size>(
        input: &Array<Vector<I, N>>,
        aux: &Array<Vector<J, N>>,
        _base: usize,
        _stride: usize,
        n: u32,
        tile: u32,
        sh: &mut TileShared<A>,
        #[comptime] cfg: TileConfig,
    ) -> Item<A> {
        runs_aggregate::<I, J, A, O, N>(input, aux, n, tile, sh, cfg, true)
    }
}

/// What a run-length pass reads: the keys and the values beside them (a one-element dummy
/// for unique-consecutive).
#[derive(CubeLaunch, CubeType)]
pub struct RunInputs<K: Numeric, V: Numeric, N: Size> {
    pub keys: Array<Vector<K, N>>,
    pub values: Array<Vector<V, N>>,
}

/// What a run-length pass writes: the runs' keys and folds (or lengths), each element's run
/// and the number of runs (one-element dummies where not asked for).
#[derive(CubeLaunch, CubeType)]
pub struct RunOutputs<K: Numeric, W: Numeric, X: Int> {
    pub out_keys: Array<K>,
    pub out_values: Array<W>,
    pub inverse: Array<X>,
    pub count: Array<u32>,
}

/// Run-length encodes `n` keys: `out_keys[r]` = key of run `r`, `out_values[r]` = fold of its
/// values with `O` (or its length, with `run.ones`), `inverse[i]` = run of element `i`,
/// `count[0]` = number of runs. Unused buffers are 1-element dummies.
///
/// With `cfg.staged` the tile goes through shared memory both ways: keys (and values) are
/// loaded striped (coalesced) and each unit reads its blocked elements from shared memory; the
/// tile's unique keys, run folds and per-element run indices are staged at tile-local
/// positions before the look-back (which they overlap) and leave the cube coalesced. Without
/// it each unit reads its blocked vectors from global memory and writes its heads' outputs
/// one scalar at a time.
#[cube(launch_unchecked)]
pub fn run_length<K: Numeric, V: Numeric, A: Numeric, W: Numeric, X: Int, O: ScanOp, N: Size>(
    input: &RunInputs<K, V, N>,
    output: &mut RunOutputs<K, W, X>,
    len: &Array<u32>,
    records: &mut Array<u32>,
    tiles: &mut TileStateArgs,
    scalars: PassScalars,
    #[comptime] cfg: PassConfig,
    #[comptime] run: RunConfig,
) {
    let t = UNIT_POS;
    let tile = take_ticket(&tiles.state, scalars.counter_base, cfg.lookback.ordered);
    let n = pass_len(len, scalars.n_host, cfg.device_len);
    let nlu = N::value() as u32;
    let tile_elems = comptime![cfg.tile_vectors()] * nlu;
    let num_tiles = n.div_ceil(tile_elems);
    if tile == 0 && n == 0 && t == 0 {
        output.count[0] = 0u32;
    }
    if tile < num_tiles {
        if comptime![cfg.staged && run.heads()] {
            run_length_heads::<K, V, A, W, X, O, N>(
                input,
                output,
                records,
                tiles,
                n,
                tile,
                num_tiles,
                scalars.epoch,
                cfg,
                run,
            );
        } else {
            run_length_tile::<K, V, A, W, X, O, N>(
                input,
                output,
                tiles,
                n,
                tile,
                num_tiles,
                scalars.epoch,
                cfg,
                run,
            );
        }
    }
}

/// Publishes the tile's aggregate (its inclusive prefix for tile 0), as early as possible.
#[cube]
pub(crate) fn publish_aggregate<A: Numeric>(
    state: &mut Array<Atomic<u32>>,
    tile: u32,
    epoch: u32,
    tile_total: Item<A>,
) {
    if UNIT_POS == 0 {
        publish_tile::<A>(state, tile, tile == 0, tile_total, epoch, true);
    }
}

/// The tile's exclusive prefix `(fold of the run it continues, runs before it)` by look-back
/// (cube-wide; after [`publish_aggregate`]); the look-back publishes its inclusive prefix.
#[cube]
#[allow(clippy::too_many_arguments)]
pub(crate) fn tile_prefix<K: Numeric, V: Numeric, A: Numeric, O: ScanOp, N: Size>(
    input: &RunInputs<K, V, N>,
    tiles: &TileStateArgs,
    n: u32,
    tile: u32,
    epoch: u32,
    tile_total: Item<A>,
    sh: &mut TileShared<A>,
    #[comptime] cfg: PassConfig,
    #[comptime] ones: bool,
) -> Item<A> {
    let mut prefix = Item::<A> {
        value: O::identity::<A>(),
        index: 0u32,
    };
    if tile > 0 {
        if comptime![ones] {
            prefix = pass_lookback::<K, V, A, O, N, RunLengthCarry>(
                &input.keys,
                &input.values,
                n,
                &tiles.state,
                &tiles.view,
                tile,
                epoch,
                tile_total,
                sh,
                cfg,
                true,
            );
        } else {
            prefix = pass_lookback::<K, V, A, O, N, RunCarry>(
                &input.keys,
                &input.values,
                n,
                &tiles.state,
                &tiles.view,
                tile,
                epoch,
                tile_total,
                sh,
                cfg,
                true,
            );
        }
    }
    prefix
}

/// Shared-memory position of tile element `e` in a staged tile: one word of padding every 32
/// elements, so that units reading their consecutive (blocked) elements hit distinct banks.
#[cube]
pub(crate) fn pad(e: u32) -> usize {
    (e + (e >> 5)) as usize
}

/// The key before the first element `ue0` of the calling unit in a tile staged (padded) in
/// `sk`, whose first vector is `tile_v0`: the previous unit's last key, or for the first unit of
/// a tile after the first the last key of the tile before, from global memory. Zero (unread)
/// for a unit past `n` or the very first element.
#[cube]
pub(crate) fn key_before_unit<K: Numeric, N: Size>(
    keys: &Array<Vector<K, N>>,
    sk: &SharedMemory<K>,
    tile: u32,
    tile_v0: u32,
    ue0: u32,
    n: u32,
) -> K {
    let nl = N::value();
    let mut prev = K::from_int(0);
    if tile_v0 * (nl as u32) + ue0 < n {
        if UNIT_POS > 0 {
            prev = sk[pad(ue0 - 1)];
        } else if tile > 0 {
            let pv = keys[(tile_v0 - 1) as usize];
            prev = pv[nl - 1];
        }
    }
    prev
}

/// Entries of a padded staged tile of `elems` elements.
pub fn padded_len(elems: usize) -> usize {
    elems + elems / 32
}

/// Vector `q` of the keys and, unless `ones`, of the values.
#[cube]
fn load_vector<K: Numeric, V: Numeric, N: Size>(
    keys: &Array<Vector<K, N>>,
    values: &Array<Vector<V, N>>,
    q: u32,
    #[comptime] ones: bool,
) -> (Vector<K, N>, Vector<V, N>) {
    let mut vv = Vector::<V, N>::empty();
    if comptime![!ones] {
        vv = values[q as usize];
    }
    (keys[q as usize], vv)
}

/// Stages vector `q` of the input (keys, and values unless `ones`) at local vector `lv`.
#[cube]
#[allow(clippy::too_many_arguments)]
fn stage_vector<K: Numeric, V: Numeric, A: Numeric, N: Size>(
    keys: &Array<Vector<K, N>>,
    values: &Array<Vector<V, N>>,
    sk: &mut SharedMemory<K>,
    sv: &mut SharedMemory<A>,
    q: u32,
    lv: u32,
    #[comptime] ones: bool,
) {
    let nl = N::value();
    let (kv, vv) = load_vector::<K, V, N>(keys, values, q, ones);
    #[unroll]
    for l in 0..nl {
        let e = lv * (nl as u32) + (l as u32);
        sk[pad(e)] = kv[l];
        if comptime![!ones] {
            sv[pad(e)] = A::cast_from(vv[l]);
        }
    }
}

/// One tile (see [`run_length`]). The source of a unit's blocked elements is comptime:
/// `cfg.staged` stages the tile in shared memory (striped, coalesced loads) and keeps the
/// outputs there until after the look-back, then stores them coalesced; unstaged, each unit
/// loads its vectors from global memory, looks back first and writes its outputs in place.
#[cube]
#[allow(clippy::too_many_arguments)]
fn run_length_tile<K: Numeric, V: Numeric, A: Numeric, W: Numeric, X: Int, O: ScanOp, N: Size>(
    input: &RunInputs<K, V, N>,
    output: &mut RunOutputs<K, W, X>,
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
    let tv = comptime![cfg.tile_vectors()];
    let staged = comptime![cfg.staged];
    let padded = comptime![if staged {
        padded_len(cfg.tile_vectors() as usize * nl)
    } else {
        1
    }];
    let ones = comptime![run.ones];
    let folds = comptime![staged && (run.write_values || !run.ones)];
    // Staged: keys in (padded), then the unique keys out; values in (padded), then the run
    // folds out; the run index of every element (padded). A unit holds its keys and values in
    // registers before the cube scan, whose barriers order every read of the tile before the
    // first staged output. Unstaged, one element each (unused).
    let mut sk = SharedMemory::<K>::new(padded);
    let mut sv = SharedMemory::<A>::new(comptime![if folds { padded } else { 1 }]);
    let mut si =
        SharedMemory::<u32>::new(comptime![if staged && run.inverse { padded } else { 1 }]);
    let tile_v0 = tile * tv;
    let tile_e0 = tile_v0 * nlu;
    let ue0 = t * vpt * nlu;
    let mut ks = Array::<K>::new(comptime![cfg.vectors_per_thread as usize * nl]);
    let mut vals = Array::<A>::new(comptime![if ones {
        1
    } else {
        cfg.vectors_per_thread as usize * nl
    }]);

    if comptime![staged] {
        // Striped, coalesced load of the tile. A full tile (every tile but the last) loads
        // with no bounds checks, so that the compiler can issue its loads ahead of the shared
        // stores (ncu: with a checked branch around each load and its stores, each unit had
        // one load in flight and a third of the stall samples sat on those stores).
        if tile_e0 + comptime![cfg.tile_vectors()] * nlu <= n {
            stage_tile::<K, V, A, N>(input, &mut sk, &mut sv, tile_v0, n, cfg, ones, false);
        } else {
            stage_tile::<K, V, A, N>(input, &mut sk, &mut sv, tile_v0, n, cfg, ones, true);
        }
        sync_cube();
    } else {
        // The unit's consecutive vectors, from global memory into registers.
        #[unroll]
        for k in 0..vpt {
            let q = tile_v0 + t * vpt + k;
            if q * nlu < n {
                let (kv, vv) = load_vector::<K, V, N>(&input.keys, &input.values, q, ones);
                #[unroll]
                for l in 0..nl {
                    let j = (k as usize) * nl + l;
                    ks[j] = kv[l];
                    if comptime![!ones] {
                        vals[j] = A::cast_from(vv[l]);
                    }
                }
            }
        }
    }
    let mut prev = if comptime![staged] {
        key_before_unit::<K, N>(&input.keys, &sk, tile, tile_v0, ue0, n)
    } else {
        key_before_vector::<K, N>(&input.keys, tile_v0 + t * vpt, n)
    };

    // The unit's consecutive elements: heads (bit mask), values (in registers) and the fold
    // `(value since its last head, heads)`.
    let mut bits = 0u32;
    let mut unit = Item::<A> {
        value: O::identity::<A>(),
        index: 0u32,
    };
    #[unroll]
    for k in 0..vpt {
        #[unroll]
        for l in 0..nl {
            let j = (k as usize) * nl + l;
            let e = ue0 + (j as u32);
            let i = tile_e0 + e;
            if i < n {
                let key = if comptime![staged] { sk[pad(e)] } else { ks[j] };
                if comptime![staged] {
                    ks[j] = key;
                }
                let mut x = A::from_int(1);
                if comptime![!ones] {
                    if comptime![staged] {
                        x = sv[pad(e)];
                        vals[j] = x;
                    } else {
                        x = vals[j];
                    }
                }
                if i == 0 || differs::<K>(prev, key) {
                    bits |= 1u32 << (j as u32);
                    unit = Item::<A> {
                        value: x,
                        index: unit.index + 1,
                    };
                } else {
                    unit = Item::<A> {
                        value: O::combine::<A>(unit.value, x),
                        index: unit.index,
                    };
                }
                prev = key;
            }
        }
    }
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
    publish_aggregate::<A>(&mut tiles.state, tile, epoch, tile_total);

    // The walk: `acc.index` = heads so far, `acc.value` = fold of the current run. Staged,
    // tile-local: head `h` of the tile stages its key at `h` and the fold of the run it ends
    // at `h` (slot 0: the run the tile continues, completed with the carried fold after the
    // look-back); the last element stages the last run's fold at `heads`. Unstaged, after the
    // look-back, from the tile's prefix, in place.
    let mut acc = if comptime![staged] {
        cs.exclusive
    } else {
        let prefix = tile_prefix::<K, V, A, O, N>(
            input, tiles, n, tile, epoch, tile_total, &mut sh, cfg, run.ones,
        );
        combine_runs::<A, O>(prefix, cs.exclusive)
    };
    #[unroll]
    for k in 0..vpt {
        #[unroll]
        for l in 0..nl {
            let j = (k as usize) * nl + l;
            let e = ue0 + (j as u32);
            let i = tile_e0 + e;
            if i < n {
                let mut x = A::from_int(1);
                if comptime![!ones] {
                    x = vals[j];
                }
                if (bits >> (j as u32)) & 1 == 1 {
                    if i > 0 && comptime![run.write_values] {
                        put_fold::<A, W>(&mut sv, &mut output.out_values, acc, staged);
                    }
                    if comptime![staged] {
                        sk[acc.index as usize] = ks[j];
                    } else {
                        output.out_keys[acc.index as usize] = ks[j];
                    }
                    acc = Item::<A> {
                        value: x,
                        index: acc.index + 1,
                    };
                } else {
                    acc = Item::<A> {
                        value: O::combine::<A>(acc.value, x),
                        index: acc.index,
                    };
                }
                if comptime![run.inverse] {
                    if comptime![staged] {
                        si[pad(e)] = acc.index;
                    } else {
                        output.inverse[i as usize] = X::cast_from(acc.index - 1);
                    }
                }
                if i == n - 1 {
                    if comptime![run.write_values] {
                        put_fold::<A, W>(&mut sv, &mut output.out_values, acc, staged);
                    }
                    if comptime![!staged] {
                        output.count[0] = acc.index;
                    }
                }
            }
        }
    }
    if comptime![staged] {
        let prefix = tile_prefix::<K, V, A, O, N>(
            input, tiles, n, tile, epoch, tile_total, &mut sh, cfg, run.ones,
        );
        store_staged::<K, A, W, X, O, N>(
            output,
            &sk,
            &sv,
            &si,
            prefix,
            tile_total.index,
            tile,
            num_tiles,
            n,
            cfg,
            run,
        );
    }
}

/// Stages the tile whose first vector is `tile_v0`, striped: unit `t` stages vectors `t`,
/// `t + threads`, ... (keys, and values unless `ones`); with `checked`, only those below `n`.
#[cube]
#[allow(clippy::too_many_arguments)]
fn stage_tile<K: Numeric, V: Numeric, A: Numeric, N: Size>(
    input: &RunInputs<K, V, N>,
    sk: &mut SharedMemory<K>,
    sv: &mut SharedMemory<A>,
    tile_v0: u32,
    n: u32,
    #[comptime] cfg: PassConfig,
    #[comptime] ones: bool,
    #[comptime] checked: bool,
) {
    let nlu = N::value() as u32;
    #[unroll]
    for k in 0..cfg.vectors_per_thread {
        let lv = k * comptime![cfg.threads] + UNIT_POS;
        let mut inside = true;
        if comptime![checked] {
            inside = (tile_v0 + lv) * nlu < n;
        }
        if inside {
            stage_vector::<K, V, A, N>(&input.keys, &input.values, sk, sv, tile_v0 + lv, lv, ones);
        }
    }
}

/// The fold `acc.value` of run `acc.index` (1-based, the run the walk is in): staged, at slot
/// `acc.index` of `sv`; else in place, at `out_values[acc.index - 1]`.
#[cube]
fn put_fold<A: Numeric, W: Numeric>(
    sv: &mut SharedMemory<A>,
    out_values: &mut Array<W>,
    acc: Item<A>,
    #[comptime] staged: bool,
) {
    if comptime![staged] {
        sv[acc.index as usize] = acc.value;
    } else {
        out_values[(acc.index - 1) as usize] = W::cast_from(acc.value);
    }
}

/// The key before vector `q` (the last of vector `q - 1`), zero (unread) for `q = 0` or a
/// vector past `n`.
#[cube]
fn key_before_vector<K: Numeric, N: Size>(keys: &Array<Vector<K, N>>, q: u32, n: u32) -> K {
    let nl = N::value();
    let mut prev = K::from_int(0);
    let e = q * (nl as u32);
    if e > 0 && e < n {
        let pv = keys[(q - 1) as usize];
        prev = pv[nl - 1];
    }
    prev
}

/// A staged tile's outputs, coalesced: its `heads` unique keys from `sk`, its run folds from
/// `sv` (slot 0 completed with the carried fold `prefix.value`) and each element's run from
/// `si`, at the tile's first run `prefix.index`; the last tile writes the count.
#[cube]
#[allow(clippy::too_many_arguments)]
fn store_staged<K: Numeric, A: Numeric, W: Numeric, X: Int, O: ScanOp, N: Size>(
    output: &mut RunOutputs<K, W, X>,
    sk: &SharedMemory<K>,
    sv: &SharedMemory<A>,
    si: &SharedMemory<u32>,
    prefix: Item<A>,
    heads: u32,
    tile: u32,
    num_tiles: u32,
    n: u32,
    #[comptime] cfg: PassConfig,
    #[comptime] run: RunConfig,
) {
    let t = UNIT_POS;
    let nl = N::value();
    let threads = comptime![cfg.threads];
    let tile_e0 = tile * comptime![cfg.tile_vectors()] * (nl as u32);
    let base = prefix.index;
    let last = tile == num_tiles - 1;
    if t == 0 && last {
        output.count[0] = base + heads;
    }
    sync_cube();

    let mut r = t;
    while r < heads {
        output.out_keys[(base + r) as usize] = sk[r as usize];
        r += threads;
    }
    if comptime![run.write_values] {
        // Slot `s` holds run `base + s - 1` (tile 0 has no slot 0; only the last tile has the
        // slot `heads`).
        let mut slots = heads;
        if last {
            slots += 1;
        }
        let mut s = t;
        while s < slots {
            if base + s > 0 {
                let mut v = sv[s as usize];
                if s == 0 {
                    // The run the tile continues: the carried fold, then the tile's part.
                    v = O::combine::<A>(prefix.value, v);
                }
                output.out_values[(base + s - 1) as usize] = W::cast_from(v);
            }
            s += threads;
        }
    }
    if comptime![run.inverse] {
        #[unroll]
        for k in 0..comptime![cfg.vectors_per_thread as usize * nl] {
            let e = (k as u32) * threads + t;
            let i = tile_e0 + e;
            if i < n {
                output.inverse[i as usize] = X::cast_from(base + si[pad(e)] - 1);
            }
        }
    }
}
