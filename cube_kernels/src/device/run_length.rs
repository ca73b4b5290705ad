//! Run-length encoding in one pass: reduce-by-key and unique-consecutive.
//!
//! A head is an element whose key differs from the previous one (the first element, and every
//! NaN key: NaN != NaN, as PyTorch). Each unit folds its consecutive elements into
//! `(fold since its last head, heads)`; a cube-wide segmented scan and a decoupled look-back of
//! the same pair ([`combine_runs`]) give every unit the run index and the partial fold it
//! continues. A unit writes the unique key at each head, the finished value of the previous run
//! just before it, and the last run at the last element. Tiling as in [`compact`](super::select).

use super::lookback::{lookback_with, LookbackShared, TileCarry};
use super::select::{pass_len, scan_shared, take_ticket, PassConfig};
use super::tile_state::{publish, AGGREGATE, PREFIX};
use crate::cube::{combine_runs, cube_exclusive_segmented_scan, TileConfig, TileShared};
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

/// Whether `a` (earlier) and `b` start different runs: unequal, or either is NaN.
#[cube]
fn differs<K: Numeric>(a: K, b: K) -> bool {
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
    let e_first = first_vec * nlu;
    let mut prev = K::from_int(0);
    if e_first > 0 && e_first < n {
        let pv = keys[(first_vec - 1) as usize];
        prev = pv[nl - 1];
    }
    #[unroll]
    for k in 0..vpt {
        let q = first_vec + k;
        let e0 = q * nlu;
        if e0 < n {
            let kv = keys[q as usize];
            let mut vv = Vector::<V, N>::empty();
            if comptime![!ones] {
                vv = values[q as usize];
            }
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
    let cs =
        cube_exclusive_segmented_scan::<A, O>(unit, &mut sh.scan_v, &mut sh.scan_i, cfg.threads);
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

/// Look-back carry of reduce-by-key: `(segment fold, heads)` with [`combine_runs`]; the
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

/// Run-length encodes `n` keys: `out_keys[r]` = key of run `r`, `out_values[r]` = fold of its
/// values with `O` (or its length, with `run.ones`), `inverse[i]` = run of element `i`,
/// `count[0]` = number of runs. Unused buffers are 1-element dummies.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn run_length<K: Numeric, V: Numeric, A: Numeric, W: Numeric, X: Int, O: ScanOp, N: Size>(
    keys: &Array<Vector<K, N>>,
    values: &Array<Vector<V, N>>,
    out_keys: &mut Array<K>,
    out_values: &mut Array<W>,
    inverse: &mut Array<X>,
    count: &mut Array<u32>,
    len: &Array<u32>,
    state: &mut Array<Atomic<u32>>,
    state_view: &mut Array<u32>,
    n_host: u32,
    epoch: u32,
    counter_base: u32,
    #[comptime] cfg: PassConfig,
    #[comptime] run: RunConfig,
) {
    let t = UNIT_POS;
    let tile = take_ticket(state, counter_base);
    let n = pass_len(len, n_host, cfg.device_len);
    let nl = N::value();
    let nlu = nl as u32;
    let tile_elems = comptime![cfg.tile_vectors()] * nlu;
    let num_tiles = n.div_ceil(tile_elems);
    if tile == 0 && n == 0 && t == 0 {
        count[0] = 0u32;
    }
    if tile < num_tiles {
        let vpt = comptime![cfg.vectors_per_thread];
        let tcfg = comptime![cfg.tile(true)];
        let mut sh = scan_shared::<A>(cfg.threads);
        let mut vals = Array::<A>::new(comptime![cfg.vectors_per_thread as usize * nl]);
        let (bits, unit_excl, tile_total) =
            tile_runs::<K, V, A, O, N>(keys, values, n, tile, &mut vals, &mut sh, tcfg, run.ones);
        let mut prefix = Item::<A> {
            value: O::identity::<A>(),
            index: 0u32,
        };
        if tile == 0 {
            if t == 0 {
                publish::<A>(state, tile, tile_total, PREFIX, epoch, true);
            }
        } else {
            if t == 0 {
                publish::<A>(state, tile, tile_total, AGGREGATE, epoch, true);
            }
            let mut lb =
                LookbackShared::<A>::new(cfg.window, cfg.windows, cfg.plane_ops, cfg.plane_max);
            if comptime![run.ones] {
                prefix = lookback_with::<K, V, A, O, N, RunLengthCarry>(
                    keys,
                    values,
                    0usize,
                    1usize,
                    n,
                    state,
                    state_view,
                    0u32,
                    tile,
                    epoch,
                    &mut sh,
                    &mut lb,
                    tcfg,
                    cfg.window,
                    cfg.windows,
                    cfg.spins,
                    cfg.plain_reads,
                    cfg.plane_max,
                );
            } else {
                prefix = lookback_with::<K, V, A, O, N, RunCarry>(
                    keys,
                    values,
                    0usize,
                    1usize,
                    n,
                    state,
                    state_view,
                    0u32,
                    tile,
                    epoch,
                    &mut sh,
                    &mut lb,
                    tcfg,
                    cfg.window,
                    cfg.windows,
                    cfg.spins,
                    cfg.plain_reads,
                    cfg.plane_max,
                );
            }
            if t == 0 {
                let incl = combine_runs::<A, O>(prefix, tile_total);
                publish::<A>(state, tile, incl, PREFIX, epoch, true);
            }
        }
        // The unit's walk: `acc.index` = heads so far, `acc.value` = fold of the current run.
        let mut acc = combine_runs::<A, O>(prefix, unit_excl);
        let first_vec = tile * comptime![cfg.tile_vectors()] + t * vpt;
        #[unroll]
        for k in 0..vpt {
            let q = first_vec + k;
            let e0 = q * nlu;
            if e0 < n {
                let kb = (bits >> (k * nlu)) & ((1u32 << nlu) - 1);
                let mut kv = Vector::<K, N>::empty();
                if kb != 0 {
                    kv = keys[q as usize];
                }
                #[unroll]
                for l in 0..nl {
                    let i = e0 + (l as u32);
                    let j = (k as usize) * nl + l;
                    if i < n {
                        let x = vals[j];
                        if (kb >> (l as u32)) & 1 == 1 {
                            if i > 0 && comptime![run.write_values] {
                                out_values[(acc.index - 1) as usize] = W::cast_from(acc.value);
                            }
                            out_keys[acc.index as usize] = kv[l];
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
                            inverse[i as usize] = X::cast_from(acc.index - 1);
                        }
                        if i == n - 1 {
                            if comptime![run.write_values] {
                                out_values[(acc.index - 1) as usize] = W::cast_from(acc.value);
                            }
                            count[0] = acc.index;
                        }
                    }
                }
            }
        }
    }
}
