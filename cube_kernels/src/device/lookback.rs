//! Decoupled look-back, with the decoupled-fallback rule.
//!
//! A window of predecessors is read at once (one memory round trip per round): by the first
//! plane with plane operations (windows of `PLANE_DIM` tiles, walking back over up to `windows`
//! of them with no cube-wide barrier, then waiting there for a prefix), or by the first `window`
//! units through shared memory without them. The nearest predecessor holding an inclusive prefix ends the walk; the
//! exclusive prefix is that prefix followed by the aggregates of the tiles in between,
//! combined oldest first: every published prefix is then the same left fold of the tile
//! aggregates, whichever tiles were ready, so float results are reproducible. The unit that
//! finds the prefix publishes the tile's inclusive prefix at once, before the cube joins it:
//! successors wait on a barrier of this cube no longer.
//!
//! A predecessor that has published nothing after `spins` rounds is reduced by this cube
//! itself (its input is at hand), so progress never depends on another cube being scheduled
//! (WGSL, Metal and lavapipe give no such guarantee), and no unit spins for long (llvmpipe
//! ends long loops). Tile ids come from an atomic ticket, so every predecessor has started, or
//! on CUDA from the cube position ([`take_ticket`](super::select::take_ticket())), where a
//! predecessor not yet started is met by the same fallback.
//!
//! A deepest window that holds only aggregates waits for its oldest tile's prefix. That tile
//! has started, so where started cubes always progress (CUDA) the wait ends, as in CUB's
//! look-back. Where they need not (WGSL, Metal, lavapipe: the tile may never be scheduled
//! again), `spins` carries [`DEEP_FOLD`]: after `deep_rounds` the cube folds its prefix
//! itself from the nearest published prefix (`deep_prefix`, the same left fold), so no wait
//! is unbounded there. CUDA kernels are built without it: its second copy of the tile
//! reduction cost `masked_select` of 2^28 f32 with a u32 mask 22 % on an H100, even though it
//! never ran (1.39 against 1.14 ms; BENCHMARKS.md at 52581a0, 2026-12-06 (H100 and H200), "the
//! trust work's two regressions").
// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use super::tile_state::{publish, read_status, AGGREGATE, PREFIX};
use crate::cube::{tile_aggregate, TileConfig, TileShared};
use crate::ops::{combine_items, Item, ScanOp};
use cubecl::prelude::*;

/// Shared memory of the look-back.
#[derive(CubeType)]
pub struct LookbackShared<A: Numeric> {
    status: SharedMemory<u32>,
    val: SharedMemory<A>,
    idx: SharedMemory<u32>,
    /// Aggregates this cube computed itself (fallback), per window slot.
    own: SharedMemory<u32>,
    own_val: SharedMemory<A>,
    own_idx: SharedMemory<u32>,
    /// [done, fallback slot + 1, rounds spent waiting]
    ctrl: SharedMemory<u32>,
    result_v: SharedMemory<A>,
    result_i: SharedMemory<u32>,
}

#[cube]
impl<A: Numeric> LookbackShared<A> {
    /// Plane variant (`plane_ops`): `windows` windows of up to `plane_max` tiles; shared
    /// variant: one `window` of tiles. [`lookback_shared_bytes`] gives the size.
    pub fn new(
        #[comptime] window: u32,
        #[comptime] windows: u32,
        #[comptime] plane_ops: bool,
        #[comptime] plane_max: u32,
    ) -> LookbackShared<A> {
        let (w, n) = comptime![lookback_lens(window, windows, plane_ops, plane_max)];
        LookbackShared::<A> {
            status: SharedMemory::<u32>::new(w),
            val: SharedMemory::<A>::new(w),
            idx: SharedMemory::<u32>::new(w),
            own: SharedMemory::<u32>::new(n),
            own_val: SharedMemory::<A>::new(n),
            own_idx: SharedMemory::<u32>::new(n),
            ctrl: SharedMemory::<u32>::new(4usize),
            result_v: SharedMemory::<A>::new(1usize),
            result_i: SharedMemory::<u32>::new(1usize),
        }
    }
}

/// Entries of the per-window arrays and of the fallback ("own") arrays.
fn lookback_lens(window: u32, windows: u32, plane_ops: bool, plane_max: u32) -> (usize, usize) {
    if plane_ops {
        (1, (windows * plane_max) as usize)
    } else {
        (window as usize, window as usize)
    }
}

/// Bytes of shared memory of [`LookbackShared`] for an accumulator of `acc_bytes`.
pub fn lookback_shared_bytes(
    window: u32,
    windows: u32,
    plane_ops: bool,
    plane_max: u32,
    acc_bytes: usize,
) -> usize {
    let (w, n) = lookback_lens(window, windows, plane_ops, plane_max);
    w * (8 + acc_bytes) + n * (8 + acc_bytes) + 16 + acc_bytes + 4
}

/// Status of a window slot before the row's first tile.
const ROW_START: u32 = 3;

/// `ctrl[1]` when the deepest window has held only aggregates for [`deep_rounds`]: the cube
/// then folds its prefix itself ([`deep_prefix`]) instead of waiting on.
const DEEP: u32 = u32::MAX;

/// A bit of `spins` for tests only: no tile publishes an inclusive prefix, so every look-back
/// deeper than its windows must end in `deep_prefix`, as when a predecessor that has
/// published its aggregate is never scheduled again (no forward progress between cubes); in
/// the scan every third tile publishes nothing at all, so the deep fold reduces tiles too.
/// Implies [`DEEP_FOLD`].
pub const STALL_PREFIXES: u32 = 1 << 31;

/// A bit of `spins`: the deepest window's wait ends after `deep_rounds` in `deep_prefix`.
/// For runtimes whose cubes have no forward-progress guarantee between them (see the module).
pub const DEEP_FOLD: u32 = 1 << 30;

/// The rounds to wait (`spins` without its flag bits), at least one.
fn wait_rounds(spins: u32) -> u32 {
    (spins & !(STALL_PREFIXES | DEEP_FOLD)).max(1)
}

/// Whether the kernel bounds the deepest window's wait with [`deep_prefix`].
fn deep_fold(spins: u32) -> bool {
    spins & (STALL_PREFIXES | DEEP_FOLD) != 0
}

/// How many times longer than a silent slot's wait ([`wait_rounds`]) the deepest window may
/// hold only aggregates before the cube folds its prefix itself ([`deep_prefix`]): a silent
/// slot costs one tile's reduction, the deep fold a serial read of every tile back to the
/// nearest prefix, and it is meant only for a predecessor that makes no progress.
const DEEP_FACTOR: u32 = 64;

/// The rounds a deepest window of aggregates is waited on before [`deep_prefix`].
fn deep_rounds(spins: u32) -> u32 {
    wait_rounds(spins).saturating_mul(DEEP_FACTOR)
}

/// Whether tiles publish their inclusive prefixes (always, but in tests of [`STALL_PREFIXES`]).
fn publishes(spins: u32) -> bool {
    spins & STALL_PREFIXES == 0
}

/// What a look-back carries from tile to tile: how two tile values combine (`a` earlier) and how
/// a waiting cube computes a silent predecessor's aggregate itself (from `input` and `aux`, the
/// kernel's own inputs). `n` and `tile` locate the tile as the kernel counts them.
#[cube]
pub trait TileCarry: 'static + Send + Sync {
    /// `a ⊕ b` of two tile values, `a` the earlier tile.
    fn combine<A: Numeric, O: ScanOp>(a: Item<A>, b: Item<A>, #[comptime] indexed: bool)
        -> Item<A>;
    /// The aggregate of `tile` computed from the kernel's inputs (`base`, `stride` and `n`
    /// locate the row), for a predecessor that has published nothing: the fallback.
    #[allow(clippy::too_many_arguments)]
    fn aggregate<I: Numeric, J: Numeric, A: Numeric, O: ScanOp, N: Size>(
        input: &Array<Vector<I, N>>,
        aux: &Array<Vector<J, N>>,
        base: usize,
        stride: usize,
        n: u32,
        tile: u32,
        sh: &mut TileShared<A>,
        #[comptime] cfg: TileConfig,
    ) -> Item<A>;
}

/// The scan's carry: the operator's combine, and [`tile_aggregate()`] of the input (`aux`: the
/// multipliers of [`Affine`](crate::ops::Affine), read only by that operator).
pub struct ScanCarry;

#[cube]
impl TileCarry for ScanCarry {
    fn combine<A: Numeric, O: ScanOp>(
        a: Item<A>,
        b: Item<A>,
        #[comptime] indexed: bool,
    ) -> Item<A> {
        combine_items::<A, O>(a, b, indexed)
    }
    fn aggregate<I: Numeric, J: Numeric, A: Numeric, O: ScanOp, N: Size>(
        input: &Array<Vector<I, N>>,
        aux: &Array<Vector<J, N>>,
        base: usize,
        stride: usize,
        n: u32,
        tile: u32,
        sh: &mut TileShared<A>,
        #[comptime] cfg: TileConfig,
    ) -> Item<A> {
        tile_aggregate::<I, J, A, O, N>(input, aux, base, stride, n, tile, sh, cfg)
    }
}

/// The exclusive prefix of tile `tile` (≥ 1) of a row whose tile 0 has global id `row_tile0`;
/// the tile's inclusive prefix (the prefix combined with its aggregate `total`) is published
/// as soon as it is known. Every unit of the cube must call it; all receive the prefix.
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn lookback<T: Numeric, A: Numeric, O: ScanOp, N: Size>(
    input: &Array<Vector<T, N>>,
    base: usize,
    stride: usize,
    n_vec: u32,
    state: &Array<Atomic<u32>>,
    view: &Array<u32>,
    row_tile0: u32,
    tile: u32,
    epoch: u32,
    total: Item<A>,
    sh: &mut TileShared<A>,
    lb: &mut LookbackShared<A>,
    #[comptime] cfg: TileConfig,
    #[comptime] window: u32,
    #[comptime] windows: u32,
    #[comptime] spins: u32,
    #[comptime] plain_reads: bool,
    #[comptime] plane_max: u32,
) -> Item<A> {
    lookback_with::<T, T, A, O, N, ScanCarry>(
        input,
        input,
        base,
        stride,
        n_vec,
        state,
        view,
        row_tile0,
        tile,
        epoch,
        total,
        sh,
        lb,
        cfg,
        window,
        windows,
        spins,
        plain_reads,
        plane_max,
    )
}

/// [`lookback()`] for any [`TileCarry`]: the combine and the fallback's aggregate come from `G`
/// (select counts flags, run-length encoding carries run counts and segment values).
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn lookback_with<T: Numeric, J: Numeric, A: Numeric, O: ScanOp, N: Size, G: TileCarry>(
    input: &Array<Vector<T, N>>,
    aux: &Array<Vector<J, N>>,
    base: usize,
    stride: usize,
    n_vec: u32,
    state: &Array<Atomic<u32>>,
    view: &Array<u32>,
    row_tile0: u32,
    tile: u32,
    epoch: u32,
    total: Item<A>,
    sh: &mut TileShared<A>,
    lb: &mut LookbackShared<A>,
    #[comptime] cfg: TileConfig,
    #[comptime] window: u32,
    #[comptime] windows: u32,
    #[comptime] spins: u32,
    #[comptime] plain_reads: bool,
    #[comptime] plane_max: u32,
) -> Item<A> {
    if comptime![cfg.plane_ops] {
        lookback_planes::<T, J, A, O, N, G>(
            input,
            aux,
            base,
            stride,
            n_vec,
            state,
            view,
            row_tile0,
            tile,
            epoch,
            total,
            sh,
            lb,
            cfg,
            windows,
            spins,
            plain_reads,
            plane_max,
        )
    } else {
        lookback_shared::<T, J, A, O, N, G>(
            input, aux, base, stride, n_vec, state, view, row_tile0, tile, epoch, total, sh, lb,
            cfg, window, spins,
        )
    }
}

/// Plane variant: the first plane walks back window by window (storing the aggregates it
/// passes), with no cube-wide barrier until it has the prefix (and has published the tile's
/// inclusive prefix) or needs a fallback.
#[cube]
#[allow(clippy::too_many_arguments)]
fn lookback_planes<T: Numeric, J: Numeric, A: Numeric, O: ScanOp, N: Size, G: TileCarry>(
    input: &Array<Vector<T, N>>,
    aux: &Array<Vector<J, N>>,
    base: usize,
    stride: usize,
    n_vec: u32,
    state: &Array<Atomic<u32>>,
    view: &Array<u32>,
    row_tile0: u32,
    tile: u32,
    epoch: u32,
    total: Item<A>,
    sh: &mut TileShared<A>,
    lb: &mut LookbackShared<A>,
    #[comptime] cfg: TileConfig,
    #[comptime] windows: u32,
    #[comptime] spins: u32,
    #[comptime] plain_reads: bool,
    #[comptime] plane_max: u32,
) -> Item<A> {
    let t = UNIT_POS;
    let indexed = comptime![cfg.indexed];
    let mut hist_v = Array::<A>::new(comptime![windows as usize]);
    let mut hist_i = Array::<u32>::new(comptime![windows as usize]);
    // The walking plane clears what it reads before the first barrier: each lane its own
    // fallback slots (slot `s` is only ever read by lane `s % PLANE_DIM`), unit 0 the flags.
    // No barrier is needed before the walk; the walk's depth stays in `depth` (registers).
    let mut depth = u32::new(0);
    if t < PLANE_DIM {
        let mut i = t;
        while i < comptime![windows * plane_max] {
            lb.own[i as usize] = 0;
            i += PLANE_DIM;
        }
        if t == 0 {
            lb.ctrl[0] = 0;
            lb.ctrl[1] = 0;
        }
    }
    loop {
        if t < PLANE_DIM {
            walk_plane::<A, O, G>(
                state,
                view,
                row_tile0,
                tile,
                epoch,
                total,
                lb,
                &mut hist_v,
                &mut hist_i,
                &mut depth,
                indexed,
                windows,
                spins,
                plain_reads,
                plane_max,
            );
        }
        sync_cube();
        if fallback_step::<T, J, A, O, N, G>(
            input, aux, base, stride, n_vec, state, view, row_tile0, tile, epoch, total, sh, lb,
            cfg, spins,
        ) {
            break;
        }
    }
    Item::<A> {
        value: lb.result_v[0],
        index: lb.result_i[0],
    }
}

/// One plane's walk: reads windows of `PLANE_DIM` predecessors (slot `s` is tile
/// `tile - 1 - s`; window `d` holds slots `d * PLANE_DIM ..`) until a prefix (or the row start)
/// is found — then the plane folds, and unit 0 publishes the tile's inclusive prefix (the fold
/// combined with `total`) and sets `ctrl[0]` — or a tile stays silent for `spins` rounds — then
/// `ctrl[1]` names its slot and `depth` keeps the window for the next call. Each unit keeps its
/// slot of every window passed in `hist` (registers), so no shared memory is exchanged inside
/// the plane (WGSL has no plane barrier).
#[cube]
#[allow(clippy::too_many_arguments)]
fn walk_plane<A: Numeric, O: ScanOp, G: TileCarry>(
    state: &Array<Atomic<u32>>,
    view: &Array<u32>,
    row_tile0: u32,
    tile: u32,
    epoch: u32,
    total: Item<A>,
    lb: &mut LookbackShared<A>,
    hist_v: &mut Array<A>,
    hist_i: &mut Array<u32>,
    depth: &mut u32,
    #[comptime] indexed: bool,
    #[comptime] windows: u32,
    #[comptime] spins: u32,
    #[comptime] plain_reads: bool,
    #[comptime] plane_max: u32,
) {
    let lane = UNIT_POS_PLANE;
    let p = PLANE_DIM;
    let mut d = *depth;
    let mut waited = u32::new(0);
    let mut round = u32::new(0);
    let mut go = true;
    while go {
        round += 1;
        let s = d * p + lane;
        // ROW_START unless the slot is a tile of the row.
        let mut status = 3u32;
        let mut item = Item::<A> {
            value: A::from_int(0),
            index: 0u32,
        };
        if s < tile {
            // Plain loads, with an atomic refresh every 8th round (see `load_word`).
            let plain = comptime![plain_reads] && (round % 8 != 7);
            let st = read_status::<A>(state, view, row_tile0 + tile - 1 - s, epoch, plain, indexed);
            status = st.status;
            item = st.item;
            if status == 0 && lb.own[s as usize] == 1 {
                status = 1;
                item = Item::<A> {
                    value: lb.own_val[s as usize],
                    index: lb.own_idx[s as usize],
                };
            }
        }
        hist_v[d as usize] = item.value;
        hist_i[d as usize] = item.index;
        let k = plane_min(select(status != 1, lane, p));
        if k == p {
            // A whole window of aggregates: move back if there is room; in the deepest window
            // wait for its oldest tile's prefix (with DEEP_FOLD, for `deep_rounds` rounds,
            // then the prefix is folded here: `deep_prefix`).
            if d + 1 < windows {
                d += 1;
            } else {
                #[allow(clippy::collapsible_if)] // a comptime condition inside a runtime branch
                if comptime![deep_fold(spins)] {
                    waited += 1;
                    if waited >= comptime![deep_rounds(spins)] {
                        if lane == 0 {
                            lb.ctrl[1] = DEEP;
                        }
                        *depth = d;
                        go = false;
                    }
                }
            }
        } else {
            let found = plane_shuffle(status, k);
            if found == 0 {
                waited += 1;
                if waited >= comptime![wait_rounds(spins)] {
                    if lane == 0 {
                        lb.ctrl[1] = d * p + k + 1;
                    }
                    *depth = d;
                    go = false;
                }
            } else {
                let mut start = d * p + k;
                if found == ROW_START {
                    start -= 1;
                }
                let acc = fold_windows::<A, O, G>(hist_v, hist_i, start, indexed, plane_max);
                if lane == 0 {
                    if comptime![publishes(spins)] {
                        let incl = G::combine::<A, O>(acc, total, indexed);
                        publish::<A>(state, row_tile0 + tile, incl, PREFIX, epoch, indexed);
                    }
                    lb.result_v[0] = acc.value;
                    lb.result_i[0] = acc.index;
                    lb.ctrl[0] = 1;
                }
                go = false;
            }
        }
    }
}

/// Left fold of window slots `start ..= 0` (oldest first), all units of the plane in step:
/// window `w` is in `hist_*[w]`, slot `w * PLANE_DIM + l` on lane `l`. The lane loop is unrolled
/// to `plane_max` so the shuffles issue back to back and only the combines form a chain.
#[cube]
fn fold_windows<A: Numeric, O: ScanOp, G: TileCarry>(
    hist_v: &Array<A>,
    hist_i: &Array<u32>,
    start: u32,
    #[comptime] indexed: bool,
    #[comptime] plane_max: u32,
) -> Item<A> {
    let p = PLANE_DIM;
    let top = start / p;
    let mut acc = Item::<A> {
        value: plane_shuffle(hist_v[top as usize], start % p),
        index: 0u32,
    };
    if comptime![indexed] {
        acc.index = plane_shuffle(hist_i[top as usize], start % p);
    }
    let mut w = top + 1;
    while w > 0 {
        w -= 1;
        let v = hist_v[w as usize];
        let vi = hist_i[w as usize];
        #[unroll]
        for j in 0..plane_max {
            let l = comptime![plane_max - 1 - j];
            if l < p {
                let x_v = plane_shuffle(v, l);
                let mut x_i = 0u32;
                if comptime![indexed] {
                    x_i = plane_shuffle(vi, l);
                }
                if w * p + l < start {
                    acc = G::combine::<A, O>(
                        acc,
                        Item::<A> {
                            value: x_v,
                            index: x_i,
                        },
                        indexed,
                    );
                }
            }
        }
    }
    acc
}

/// Left fold of slots `last ..= 0` (oldest first) into `result`; at the row start, slot
/// `last` holds nothing and the fold starts one slot younger. Publishes the inclusive prefix
/// of global tile `tile_id` (the fold combined with `total`) and sets `ctrl[0]`.
#[cube]
#[allow(clippy::too_many_arguments)]
fn fold<A: Numeric, O: ScanOp, G: TileCarry>(
    lb: &mut LookbackShared<A>,
    last: u32,
    row_start: bool,
    state: &Array<Atomic<u32>>,
    tile_id: u32,
    epoch: u32,
    total: Item<A>,
    #[comptime] indexed: bool,
    #[comptime] publish_prefix: bool,
) {
    let mut m = last;
    if row_start {
        m = last - 1;
    }
    let mut acc = Item::<A> {
        value: lb.val[m as usize],
        index: lb.idx[m as usize],
    };
    while m > 0 {
        m -= 1;
        let x = Item::<A> {
            value: lb.val[m as usize],
            index: lb.idx[m as usize],
        };
        acc = G::combine::<A, O>(acc, x, indexed);
    }
    if comptime![publish_prefix] {
        let incl = G::combine::<A, O>(acc, total, indexed);
        publish::<A>(state, tile_id, incl, PREFIX, epoch, indexed);
    }
    lb.result_v[0] = acc.value;
    lb.result_i[0] = acc.index;
    lb.ctrl[0] = 1;
}

/// The cube-wide step after each look-back round (every unit calls it, after a barrier):
/// returns whether the prefix is ready; if not, reduces the tile that `ctrl[1]` names (the
/// fallback), keeps its aggregate as this cube's own value for that slot, and ends with a
/// barrier. Once the prefix is ready nothing in shared memory changes any more, so that path
/// needs no barrier.
#[cube]
#[allow(clippy::too_many_arguments)]
fn fallback_step<T: Numeric, J: Numeric, A: Numeric, O: ScanOp, N: Size, G: TileCarry>(
    input: &Array<Vector<T, N>>,
    aux: &Array<Vector<J, N>>,
    base: usize,
    stride: usize,
    n_vec: u32,
    state: &Array<Atomic<u32>>,
    view: &Array<u32>,
    row_tile0: u32,
    tile: u32,
    epoch: u32,
    total: Item<A>,
    sh: &mut TileShared<A>,
    lb: &mut LookbackShared<A>,
    #[comptime] cfg: TileConfig,
    #[comptime] spins: u32,
) -> bool {
    let done = lb.ctrl[0];
    let fallback = lb.ctrl[1];
    // Without DEEP_FOLD `ctrl[1]` is never DEEP, and the kernel holds no deep fold.
    let mut deep = false;
    if comptime![deep_fold(spins)] {
        deep = fallback == DEEP;
        if done != 1 && deep {
            deep_prefix::<T, J, A, O, N, G>(
                input, aux, base, stride, n_vec, state, view, row_tile0, tile, epoch, total, sh,
                lb, cfg, spins,
            );
        }
    }
    if done != 1 && !deep {
        if fallback > 0 {
            let s = fallback - 1;
            let agg = G::aggregate::<T, J, A, O, N>(
                input,
                aux,
                base,
                stride,
                n_vec,
                tile - 1 - s,
                sh,
                cfg,
            );
            if UNIT_POS == 0 {
                lb.own[s as usize] = 1;
                lb.own_val[s as usize] = agg.value;
                lb.own_idx[s as usize] = agg.index;
                lb.ctrl[1] = 0;
            }
        }
        sync_cube();
    }
    done == 1 || deep
}

/// The exclusive prefix of `tile` folded by this cube alone, waiting on nobody: the nearest
/// published inclusive prefix (or the row start), then every tile after it oldest first — its
/// prefix where it has published one since, its aggregate, or the aggregate this cube reduces
/// from the input. The same left fold as every other prefix, so the result is bit for bit the
/// one the look-back would have found. Reached only when the deepest window holds aggregates
/// for [`deep_rounds`]: a predecessor that has published its aggregate is not progressing
/// (WGSL and Metal promise no forward progress between cubes). Every unit calls it; it
/// publishes the tile's inclusive prefix and sets the results and `ctrl[0]`.
#[cube]
#[allow(clippy::too_many_arguments)]
fn deep_prefix<T: Numeric, J: Numeric, A: Numeric, O: ScanOp, N: Size, G: TileCarry>(
    input: &Array<Vector<T, N>>,
    aux: &Array<Vector<J, N>>,
    base: usize,
    stride: usize,
    n_vec: u32,
    state: &Array<Atomic<u32>>,
    view: &Array<u32>,
    row_tile0: u32,
    tile: u32,
    epoch: u32,
    total: Item<A>,
    sh: &mut TileShared<A>,
    lb: &mut LookbackShared<A>,
    #[comptime] cfg: TileConfig,
    #[comptime] spins: u32,
) {
    let indexed = comptime![cfg.indexed];
    // Unit 0 holds the fold; `have` is false until it has a first term.
    let mut acc = Item::<A> {
        value: A::from_int(0),
        index: 0u32,
    };
    let mut have = false;
    if UNIT_POS == 0 {
        // The nearest inclusive prefix published so far, read once per tile (no waiting).
        let mut u = tile;
        while u > 0 && !have {
            u -= 1;
            let st = read_status::<A>(state, view, row_tile0 + u, epoch, false, indexed);
            if st.status == PREFIX {
                acc = st.item;
                have = true;
            }
        }
        lb.ctrl[2] = select(have, u + 1, 0u32);
    }
    sync_cube();
    let mut u = lb.ctrl[2];
    while u < tile {
        if UNIT_POS == 0 {
            let st = read_status::<A>(state, view, row_tile0 + u, epoch, false, indexed);
            if st.status == PREFIX {
                acc = st.item;
                have = true;
            } else if st.status == AGGREGATE {
                if have {
                    acc = G::combine::<A, O>(acc, st.item, indexed);
                } else {
                    acc = st.item;
                    have = true;
                }
            }
            lb.ctrl[3] = st.status;
        }
        sync_cube();
        if lb.ctrl[3] == 0 {
            // Nothing published (or a publication read half-written): reduce the tile here.
            let agg = G::aggregate::<T, J, A, O, N>(input, aux, base, stride, n_vec, u, sh, cfg);
            if UNIT_POS == 0 {
                if have {
                    acc = G::combine::<A, O>(acc, agg, indexed);
                } else {
                    acc = agg;
                    have = true;
                }
            }
        }
        sync_cube();
        u += 1;
    }
    if UNIT_POS == 0 {
        if comptime![publishes(spins)] {
            let incl = G::combine::<A, O>(acc, total, indexed);
            publish::<A>(state, row_tile0 + tile, incl, PREFIX, epoch, indexed);
        }
        lb.result_v[0] = acc.value;
        lb.result_i[0] = acc.index;
        lb.ctrl[0] = 1;
    }
    sync_cube();
}

/// Shared-memory variant (no plane operations): units `0..window` read one window per round,
/// unit 0 scans it; the cube waits on a barrier each round.
#[cube]
#[allow(clippy::too_many_arguments)]
fn lookback_shared<T: Numeric, J: Numeric, A: Numeric, O: ScanOp, N: Size, G: TileCarry>(
    input: &Array<Vector<T, N>>,
    aux: &Array<Vector<J, N>>,
    base: usize,
    stride: usize,
    n_vec: u32,
    state: &Array<Atomic<u32>>,
    view: &Array<u32>,
    row_tile0: u32,
    tile: u32,
    epoch: u32,
    total: Item<A>,
    sh: &mut TileShared<A>,
    lb: &mut LookbackShared<A>,
    #[comptime] cfg: TileConfig,
    #[comptime] window: u32,
    #[comptime] spins: u32,
) -> Item<A> {
    let t = UNIT_POS;
    let indexed = comptime![cfg.indexed];
    // Each reader clears what it reads first (unit `s` its fallback slot, unit 0 the flags),
    // so no barrier is needed before the first round's.
    if t < window {
        lb.own[t as usize] = 0;
    }
    if t == 0 {
        lb.ctrl[0] = 0;
        lb.ctrl[1] = 0;
        lb.ctrl[2] = 0;
    }
    loop {
        if t < window {
            let s = t as usize;
            if t >= tile {
                lb.status[s] = ROW_START;
            } else {
                let st =
                    read_status::<A>(state, view, row_tile0 + tile - 1 - t, epoch, false, indexed);
                let mut status = st.status;
                let mut item = st.item;
                if status == 0 && lb.own[s] == 1 {
                    status = 1;
                    item = Item::<A> {
                        value: lb.own_val[s],
                        index: lb.own_idx[s],
                    };
                }
                lb.status[s] = status;
                lb.val[s] = item.value;
                lb.idx[s] = item.index;
            }
        }
        sync_cube();
        if t == 0 {
            let mut k = 0u32;
            while k < window && lb.status[k as usize] == 1 {
                k += 1;
            }
            if k < window && lb.status[k as usize] >= PREFIX {
                let row_start = lb.status[k as usize] == ROW_START;
                fold::<A, O, G>(
                    lb,
                    k,
                    row_start,
                    state,
                    row_tile0 + tile,
                    epoch,
                    total,
                    indexed,
                    comptime![publishes(spins)],
                );
            } else if k < window {
                // Slot k has published nothing: wait a few rounds, then reduce it ourselves.
                let waited = lb.ctrl[2] + 1;
                if waited >= comptime![wait_rounds(spins)] {
                    lb.ctrl[1] = k + 1;
                    lb.ctrl[2] = 0;
                } else {
                    lb.ctrl[2] = waited;
                }
            } else {
                // A full window of aggregates: wait for the oldest one's prefix (with
                // DEEP_FOLD for `deep_rounds` rounds, then the prefix is folded here:
                // `deep_prefix`).
                #[allow(clippy::collapsible_if)] // a comptime condition inside a runtime branch
                if comptime![deep_fold(spins)] {
                    let waited = lb.ctrl[2] + 1;
                    if waited >= comptime![deep_rounds(spins)] {
                        lb.ctrl[1] = DEEP;
                        lb.ctrl[2] = 0;
                    } else {
                        lb.ctrl[2] = waited;
                    }
                }
            }
        }
        sync_cube();
        if fallback_step::<T, J, A, O, N, G>(
            input, aux, base, stride, n_vec, state, view, row_tile0, tile, epoch, total, sh, lb,
            cfg, spins,
        ) {
            break;
        }
    }
    Item::<A> {
        value: lb.result_v[0],
        index: lb.result_i[0],
    }
}
