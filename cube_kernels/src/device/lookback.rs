//! Decoupled look-back over a window of predecessors, with the decoupled-fallback rule.
//!
//! Units `0..window` each read one predecessor's status (in parallel: one memory round trip
//! per round), then unit 0 looks for the nearest predecessor holding an inclusive prefix.
//! When it finds one, the exclusive prefix is that prefix followed by the aggregates of the
//! tiles in between, combined oldest first: every published prefix is then the same left fold
//! of the tile aggregates, whichever tiles were ready, so float results are reproducible.
//!
//! A predecessor that has published nothing after `spins` rounds is reduced by this cube
//! itself (its input is at hand), so progress never depends on another cube being scheduled
//! (WGSL, Metal and lavapipe give no such guarantee), and no unit spins for long (llvmpipe
//! ends long loops). Tile ids come from an atomic counter, so every predecessor has started.

use super::tile_state::{read_status, PREFIX};
use crate::cube::{load_tile, TileConfig, TileShared};
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
    pub fn new(#[comptime] window: u32) -> LookbackShared<A> {
        let w = comptime![window as usize];
        LookbackShared::<A> {
            status: SharedMemory::<u32>::new(w),
            val: SharedMemory::<A>::new(w),
            idx: SharedMemory::<u32>::new(w),
            own: SharedMemory::<u32>::new(w),
            own_val: SharedMemory::<A>::new(w),
            own_idx: SharedMemory::<u32>::new(w),
            ctrl: SharedMemory::<u32>::new(4usize),
            result_v: SharedMemory::<A>::new(1usize),
            result_i: SharedMemory::<u32>::new(1usize),
        }
    }
}

/// Status of a window slot before the row's first tile.
const ROW_START: u32 = 3;

/// The exclusive prefix of tile `tile` (≥ 1) of a row whose tile 0 has global id `row_tile0`.
/// Every unit of the cube must call it; all receive the prefix.
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn lookback<T: Numeric, A: Numeric, O: ScanOp, N: Size>(
    input: &Array<Vector<T, N>>,
    base: usize,
    stride: usize,
    n_vec: u32,
    state: &Array<Atomic<u32>>,
    row_tile0: u32,
    tile: u32,
    epoch: u32,
    sh: &mut TileShared<A>,
    lb: &mut LookbackShared<A>,
    #[comptime] cfg: TileConfig,
    #[comptime] window: u32,
    #[comptime] spins: u32,
) -> Item<A> {
    let t = UNIT_POS;
    let indexed = comptime![cfg.indexed];
    if t < window {
        lb.own[t as usize] = 0;
    }
    if t == 0 {
        lb.ctrl[0] = 0;
        lb.ctrl[1] = 0;
        lb.ctrl[2] = 0;
    }
    sync_cube();
    loop {
        if t < window {
            let s = t as usize;
            if t >= tile {
                lb.status[s] = ROW_START;
            } else {
                let st = read_status::<A>(state, row_tile0 + tile - 1 - t, epoch, indexed);
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
                if comptime![indexed] {
                    lb.idx[s] = item.index;
                }
            }
        }
        sync_cube();
        if t == 0 {
            let mut k = 0u32;
            while k < window && lb.status[k as usize] == 1 {
                k += 1;
            }
            if k < window && lb.status[k as usize] >= PREFIX {
                // Fold oldest first: P(k) (or, at the row start, the oldest aggregate), then
                // the aggregates of the younger tiles.
                let mut m = k;
                let mut acc = Item::<A> {
                    value: lb.val[k as usize],
                    index: lb.idx[k as usize],
                };
                if lb.status[k as usize] == ROW_START {
                    m = k - 1;
                    acc = Item::<A> {
                        value: lb.val[m as usize],
                        index: lb.idx[m as usize],
                    };
                }
                while m > 0 {
                    m -= 1;
                    let x = Item::<A> {
                        value: lb.val[m as usize],
                        index: lb.idx[m as usize],
                    };
                    acc = combine_items::<A, O>(acc, x, indexed);
                }
                lb.result_v[0] = acc.value;
                if comptime![indexed] {
                    lb.result_i[0] = acc.index;
                }
                lb.ctrl[0] = 1;
            } else if k < window {
                // Slot k has published nothing: wait a few rounds, then reduce it ourselves.
                let waited = lb.ctrl[2] + 1;
                if waited >= spins {
                    lb.ctrl[1] = k + 1;
                    lb.ctrl[2] = 0;
                } else {
                    lb.ctrl[2] = waited;
                }
            }
            // else: a full window of aggregates; the oldest will publish its prefix.
        }
        sync_cube();
        let fallback = lb.ctrl[1];
        if fallback > 0 {
            let s = fallback - 1;
            let pred = tile - 1 - s;
            let nl = N::value();
            let nv = comptime![cfg.vectors_per_thread as usize * nl];
            let vpt = comptime![cfg.vectors_per_thread as usize];
            let mut vals = Array::<A>::new(nv);
            let mut idxs = Array::<u32>::new(nv);
            let mut pre_v = Array::<A>::new(vpt);
            let mut pre_i = Array::<u32>::new(vpt);
            let agg = load_tile::<T, A, O, N>(
                input,
                base,
                stride,
                n_vec,
                pred * comptime![cfg.tile_vectors()],
                &mut vals,
                &mut idxs,
                &mut pre_v,
                &mut pre_i,
                sh,
                cfg,
            );
            if t == 0 {
                lb.own[s as usize] = 1;
                lb.own_val[s as usize] = agg.value;
                lb.own_idx[s as usize] = agg.index;
                lb.ctrl[1] = 0;
            }
        }
        let done = lb.ctrl[0];
        sync_cube();
        if done == 1 {
            break;
        }
    }
    Item::<A> {
        value: lb.result_v[0],
        index: lb.result_i[0],
    }
}
