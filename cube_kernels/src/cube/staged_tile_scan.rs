// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use super::tile_scan::memory_position;
use super::{cube_exclusive_scan, TileConfig, TileShared};
use crate::ops::{combine_items, Item, ScanOp};
use cubecl::prelude::barrier::{copy_async, Barrier};
use cubecl::prelude::*;

/// A tile staged in shared memory: the tile's vectors in scan order, one pad vector after each
/// unit's chunk of `vectors_per_thread` (vector `j` sits in slot `j + j / vectors_per_thread`),
/// whose first lane holds the unit's exclusive prefix within the tile once the tile is
/// scanned. Stored and read as whole vectors: units storing striped vectors side by side and
/// units walking their chunks (stride `vectors_per_thread + 1`, odd when the chunk is even)
/// both spread over the banks with 128-bit accesses, and a unit moves a vector in one
/// instruction instead of one per lane.
#[derive(CubeType)]
pub struct StagedTile<A: Numeric, N: Size> {
    /// The staging buffer: [`TileConfig::stage_vectors`] slots.
    pub vectors: SharedMemory<Vector<A, N>>,
}

#[cube]
impl<A: Numeric, N: Size> StagedTile<A, N> {
    /// Allocates the staging buffer of a tile of `cfg` in shared memory.
    pub fn new(#[comptime] cfg: TileConfig) -> StagedTile<A, N> {
        StagedTile::<A, N> {
            vectors: SharedMemory::<Vector<A, N>>::new(comptime![cfg.stage_vectors()]),
        }
    }
}

/// Slot of tile vector `j` in the staging buffer: one pad vector after each unit's chunk.
#[cube]
fn stage_slot(j: u32, #[comptime] vpt: u32) -> usize {
    (j + j / vpt) as usize
}

/// Slot of the first vector of unit `u`'s chunk; its pad vector (the parked prefix) is
/// `vpt` slots further.
#[cube]
fn chunk_slot(u: u32, #[comptime] vpt: u32) -> usize {
    (u * (vpt + 1)) as usize
}

/// Vectors folded per round of [`load_tile_staged`]: up to 8 elements' worth, dividing the
/// chunk.
fn fold_group(vpt: u32, lanes: usize) -> u32 {
    [8u32, 4, 2]
        .into_iter()
        .find(|g| g * lanes as u32 <= 8 && vpt.is_multiple_of(*g))
        .unwrap_or(1)
}

/// Loads one tile into shared memory and scans it there (the tile never sits in registers).
///
/// The load is striped and coalesced (unit `t` loads vectors `k * threads + t`) into the
/// staging buffer in scan order — with `cfg.async_copy`, as asynchronous copies that bypass
/// the registers; then unit `t` owns the `vectors_per_thread` consecutive vectors from
/// `t * vectors_per_thread` (blocked) and folds them in place, leaving the running
/// (inclusive, unit-local) prefix of each element; one cube-wide scan of the unit folds gives
/// each unit's exclusive prefix, parked in the pad vector after its chunk.
/// [`write_tile_staged()`] combines them. Returns the tile's total. Positions past `n_vec` hold
/// the identity.
///
/// The tile needs no raking buffer and no per-unit registers across the look-back, so more
/// cubes fit on a streaming multiprocessor. The combine order is fixed (a left fold per unit,
/// then the cube scan): the same bits on every run, and [`tile_aggregate_staged()`] returns the
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
    st: &mut StagedTile<A, N>,
    #[comptime] cfg: TileConfig,
) -> Item<A> {
    let t = UNIT_POS;
    let nl = N::value();
    let threads = comptime![cfg.threads];
    let vpt = comptime![cfg.vectors_per_thread];

    let mut none = Vector::<A, N>::empty();
    #[unroll]
    for l in 0..nl {
        none[l] = O::identity::<A>();
    }
    if comptime![cfg.async_copy] {
        let copies = Barrier::shared(CUBE_DIM, UNIT_POS == 0);
        #[unroll]
        for k in 0..vpt {
            let j = k * threads + t;
            let q = tile_start + j;
            let slot = stage_slot(j, vpt);
            if q < n_vec {
                let at = base + q as usize * stride;
                let src = input.slice(at, at + 1).downcast::<Vector<A, N>>();
                let mut dst = st.vectors.slice_mut(slot, slot + 1);
                copy_async(&src, &mut dst, comptime![nl as u32]);
            } else {
                st.vectors[slot] = none;
            }
        }
        copies.commit_copy_async();
        copies.arrive_and_wait();
    } else {
        #[unroll]
        for k in 0..vpt {
            let j = k * threads + t;
            let q = tile_start + j;
            let mut w = none;
            if q < n_vec {
                let phys = memory_position(q, n_vec, cfg.reverse);
                let v = input[base + phys as usize * stride];
                #[unroll]
                for l in 0..nl {
                    let pl = comptime![if cfg.reverse { nl - 1 - l } else { l }];
                    w[l] = A::cast_from(v[pl]);
                }
            }
            st.vectors[stage_slot(j, vpt)] = w;
        }
        sync_cube();
    }

    // The chunk in groups: a group's loads first (a store between them would serialise
    // them), then its fold in registers, then its stores. Small groups keep few values live,
    // so the kernel's register peak stays low.
    let first = chunk_slot(t, vpt);
    let group = comptime![fold_group(vpt, nl)];
    let mut run = Array::<Vector<A, N>>::new(comptime![group as usize]);
    let mut acc = O::identity::<A>();
    #[unroll]
    for g in 0..comptime![vpt / group] {
        #[unroll]
        for m in 0..group {
            run[m as usize] = st.vectors[first + (g * group + m) as usize];
        }
        #[unroll]
        for m in 0..group {
            let mut v = run[m as usize];
            #[unroll]
            for l in 0..nl {
                if comptime![g == 0 && m == 0 && l == 0] {
                    acc = v[0];
                } else {
                    acc = O::combine::<A>(acc, v[l]);
                    v[l] = acc;
                }
            }
            run[m as usize] = v;
        }
        #[unroll]
        for m in 0..group {
            st.vectors[first + (g * group + m) as usize] = run[m as usize];
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
    let mut parked = none;
    parked[0] = cs.exclusive.value;
    st.vectors[first + vpt as usize] = parked;
    sync_cube();
    cs.total
}

/// The total of tile `tile` exactly as [`load_tile_staged()`] computes it (each unit folds its
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

/// Writes one tile scanned by [`load_tile_staged()`]: `prefix` (everything before the tile) ⊕
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
    st: &StagedTile<A, N>,
    #[comptime] cfg: TileConfig,
) {
    let t = UNIT_POS;
    let nl = N::value();
    let threads = comptime![cfg.threads];
    let vpt = comptime![cfg.vectors_per_thread];

    #[unroll]
    for k in 0..vpt {
        let j = k * threads + t;
        let q = tile_start + j;
        if q < n_vec {
            let phys = memory_position(q, n_vec, cfg.reverse);
            let owner = j / vpt;
            let parked = st.vectors[chunk_slot(owner, vpt) + vpt as usize];
            let unit_pre = Item::<A> {
                value: parked[0],
                index: 0u32,
            };
            let p = combine_items::<A, O>(prefix, unit_pre, false);
            let v = st.vectors[stage_slot(j, vpt)];
            let mut out = Vector::<T, N>::empty();
            #[unroll]
            for l in 0..nl {
                let pl = comptime![if cfg.reverse { nl - 1 - l } else { l }];
                let mut e = p.value;
                if comptime![cfg.exclusive] {
                    if comptime![l > 0] {
                        e = O::combine::<A>(p.value, v[l - 1]);
                    } else {
                        // The vector's first element opens its owner's chunk, or follows the
                        // last element of the vector before it.
                        if j % vpt != 0 {
                            let before = st.vectors[stage_slot(j - 1, vpt)];
                            e = O::combine::<A>(p.value, before[nl - 1]);
                        }
                    }
                } else {
                    e = O::combine::<A>(p.value, v[l]);
                }
                out[pl] = T::cast_from(e);
            }
            output[base + phys as usize * stride] = out;
        }
    }
}
