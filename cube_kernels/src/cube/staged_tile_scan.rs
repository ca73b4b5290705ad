use super::tile_scan::memory_position;
use super::{cube_exclusive_scan, TileConfig, TileShared};
use crate::ops::{combine_items, Item, ScanOp};
use cubecl::prelude::*;

/// Slot of tile element `e` in the staging buffer: one pad entry after each unit's chunk of
/// `chunk` consecutive elements, so units walking their chunks side by side (stride
/// `chunk + 1`) and units storing striped vectors both spread over the banks.
#[cube]
fn stage_slot(e: u32, #[comptime] chunk: u32) -> usize {
    (e + e / chunk) as usize
}

/// Elements folded per round of [`load_tile_staged`]: 8 where the chunk divides by it.
fn fold_group(chunk: u32) -> u32 {
    [8, 4, 2]
        .into_iter()
        .find(|g| chunk.is_multiple_of(*g))
        .unwrap_or(1)
}

/// Elements each unit owns in the blocked arrangement: `vectors_per_thread` vectors.
fn chunk_of(cfg: TileConfig, lanes: usize) -> u32 {
    cfg.vectors_per_thread * lanes as u32
}

/// Loads one tile into shared memory and scans it there (the tile never sits in registers).
///
/// The load is striped and coalesced (unit `t` loads vectors `k * threads + t`) into the
/// staging buffer in scan order; then unit `t` owns the `vectors_per_thread * lanes`
/// consecutive elements from `t * chunk` (blocked) and folds them in place, leaving the
/// running (inclusive, unit-local) prefix of each; one cube-wide scan of the unit folds gives
/// each unit's exclusive prefix, parked after the tile. [`write_tile_staged`] combines them.
/// Returns the tile's total. Positions past `n_vec` hold the identity.
///
/// The tile needs no raking buffer and no per-unit registers across the look-back, so more
/// cubes fit on a streaming multiprocessor. The combine order is fixed (a left fold per unit,
/// then the cube scan): the same bits on every run, and [`tile_aggregate_staged`] returns the
/// same total for the same tile.
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn load_tile_staged<T: Numeric, A: Numeric, O: ScanOp, N: Size>(
    input: &Array<Vector<T, N>>,
    base: usize,
    stride: usize,
    n_vec: u32,
    tile_start: u32,
    sh: &mut TileShared<A>,
    stage: &mut SharedMemory<A>,
    #[comptime] cfg: TileConfig,
) -> Item<A> {
    let t = UNIT_POS;
    let nl = N::value();
    let threads = comptime![cfg.threads];
    let vpt = comptime![cfg.vectors_per_thread];
    let chunk = comptime![chunk_of(cfg, nl)];

    #[unroll]
    for k in 0..vpt {
        let j = k * threads + t;
        let q = tile_start + j;
        let e0 = j * (nl as u32);
        if q < n_vec {
            let phys = memory_position(q, n_vec, cfg.reverse);
            let v = input[base + phys as usize * stride];
            #[unroll]
            for l in 0..nl {
                let pl = comptime![if cfg.reverse { nl - 1 - l } else { l }];
                stage[stage_slot(e0 + l as u32, chunk)] = A::cast_from(v[pl]);
            }
        } else {
            #[unroll]
            for l in 0..nl {
                stage[stage_slot(e0 + l as u32, chunk)] = O::identity::<A>();
            }
        }
    }
    sync_cube();

    // The chunk in groups: a group's loads first (a store between them would serialise
    // them), then its fold in registers, then its stores. Small groups keep few values live,
    // so the kernel's register peak stays low.
    let first = t * chunk;
    let group = comptime![fold_group(chunk)];
    let mut run = Array::<A>::new(comptime![group as usize]);
    let mut acc = O::identity::<A>();
    #[unroll]
    for g in 0..comptime![chunk / group] {
        let at = first + g * group;
        #[unroll]
        for m in 0..group {
            run[m as usize] = stage[stage_slot(at + m, chunk)];
        }
        #[unroll]
        for m in 0..group {
            if comptime![g == 0 && m == 0] {
                acc = run[0];
            } else {
                acc = O::combine::<A>(acc, run[m as usize]);
                run[m as usize] = acc;
            }
        }
        #[unroll]
        for m in 0..group {
            if comptime![g > 0 || m > 0] {
                stage[stage_slot(at + m, chunk)] = run[m as usize];
            }
        }
    }
    let cs = cube_exclusive_scan::<A, O>(
        Item::<A> {
            value: acc,
            index: 0u32,
        },
        &mut sh.scan_v,
        &mut sh.scan_i,
        threads,
        false,
        comptime![cfg.plane_ops],
    );
    stage[comptime![cfg.stage_prefixes_at(nl)] + t as usize] = cs.exclusive.value;
    sync_cube();
    cs.total
}

/// The total of tile `tile` exactly as [`load_tile_staged`] computes it (each unit folds its
/// blocked chunk, straight from global memory, then the same cube scan), without touching the
/// staging buffer: the look-back fallback calls it while the cube's own tile is staged.
#[cube]
pub fn tile_aggregate_staged<T: Numeric, A: Numeric, O: ScanOp, N: Size>(
    input: &Array<Vector<T, N>>,
    base: usize,
    stride: usize,
    n_vec: u32,
    tile: u32,
    sh: &mut TileShared<A>,
    #[comptime] cfg: TileConfig,
) -> Item<A> {
    let t = UNIT_POS;
    let nl = N::value();
    let vpt = comptime![cfg.vectors_per_thread];
    let first = tile * comptime![cfg.tile_vectors()] + t * vpt;
    let mut acc = O::identity::<A>();
    #[unroll]
    for jj in 0..vpt {
        let q = first + jj;
        let mut v = Vector::<T, N>::empty();
        let inside = q < n_vec;
        if inside {
            let phys = memory_position(q, n_vec, cfg.reverse);
            v = input[base + phys as usize * stride];
        }
        #[unroll]
        for l in 0..nl {
            let pl = comptime![if cfg.reverse { nl - 1 - l } else { l }];
            let x = select(inside, A::cast_from(v[pl]), O::identity::<A>());
            if comptime![jj == 0 && l == 0] {
                acc = x;
            } else {
                acc = O::combine::<A>(acc, x);
            }
        }
    }
    let cs = cube_exclusive_scan::<A, O>(
        Item::<A> {
            value: acc,
            index: 0u32,
        },
        &mut sh.scan_v,
        &mut sh.scan_i,
        comptime![cfg.threads],
        false,
        comptime![cfg.plane_ops],
    );
    cs.total
}

/// Writes one tile scanned by [`load_tile_staged`]: `prefix` (everything before the tile) ⊕
/// the owning unit's exclusive prefix, then ⊕ the unit-local running prefix, cast back to `T`,
/// striped and coalesced like the load. (With one vector per unit this is the order of the
/// unstaged tile, bit for bit.)
#[cube]
#[allow(clippy::too_many_arguments, clippy::manual_is_multiple_of)]
pub fn write_tile_staged<T: Numeric, A: Numeric, O: ScanOp, N: Size>(
    output: &mut Array<Vector<T, N>>,
    base: usize,
    stride: usize,
    n_vec: u32,
    tile_start: u32,
    prefix: Item<A>,
    stage: &SharedMemory<A>,
    #[comptime] cfg: TileConfig,
) {
    let t = UNIT_POS;
    let nl = N::value();
    let threads = comptime![cfg.threads];
    let vpt = comptime![cfg.vectors_per_thread];
    let chunk = comptime![chunk_of(cfg, nl)];

    #[unroll]
    for k in 0..vpt {
        let j = k * threads + t;
        let q = tile_start + j;
        if q < n_vec {
            let phys = memory_position(q, n_vec, cfg.reverse);
            let owner = j / vpt;
            let unit_pre = Item::<A> {
                value: stage[comptime![cfg.stage_prefixes_at(nl)] + owner as usize],
                index: 0u32,
            };
            let p = combine_items::<A, O>(prefix, unit_pre, false);
            // The vector's first element opens its owner's chunk.
            let opens = j % vpt == 0;
            let e0 = j * (nl as u32);
            let mut out = Vector::<T, N>::empty();
            #[unroll]
            for l in 0..nl {
                let pl = comptime![if cfg.reverse { nl - 1 - l } else { l }];
                let mut e = p.value;
                if comptime![cfg.exclusive] {
                    if comptime![l > 0] {
                        e = O::combine::<A>(p.value, stage[stage_slot(e0 + l as u32 - 1, chunk)]);
                    } else {
                        if !opens {
                            e = O::combine::<A>(p.value, stage[stage_slot(e0 - 1, chunk)]);
                        }
                    }
                } else {
                    e = O::combine::<A>(p.value, stage[stage_slot(e0 + l as u32, chunk)]);
                }
                out[pl] = T::cast_from(e);
            }
            output[base + phys as usize * stride] = out;
        }
    }
}
