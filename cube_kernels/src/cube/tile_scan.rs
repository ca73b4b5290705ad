// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use super::cube_scan::read_item;
use super::{cube_exclusive_scan, tile_aggregate_staged, TileConfig};
use crate::ops::{affine_bits, affine_mul, combine_items, identity_item, item_at, Item, ScanOp};
use cubecl::prelude::*;

/// Shared memory of one tile scan, allocated once per kernel and reused.
#[derive(CubeType)]
pub struct TileShared<A: Numeric> {
    /// One entry per vector of the tile (padded).
    pub rake_v: SharedMemory<A>,
    /// The index of each entry of `rake_v` (indexed scans; one dummy entry otherwise).
    pub rake_i: SharedMemory<u32>,
    /// Scratch of the cube-wide scan.
    pub scan_v: SharedMemory<A>,
    /// Index scratch of the cube-wide scan (indexed scans; one dummy entry otherwise).
    pub scan_i: SharedMemory<u32>,
}

#[cube]
impl<A: Numeric> TileShared<A> {
    /// Allocates the shared memory of a tile scan of `cfg`.
    pub fn new(#[comptime] cfg: TileConfig) -> TileShared<A> {
        let idx_len = comptime![if cfg.indexed { cfg.rake_len() } else { 1 }];
        let scan_len = comptime![2 * cfg.threads as usize];
        let scan_idx_len = comptime![if cfg.indexed { scan_len } else { 1 }];
        TileShared::<A> {
            rake_v: SharedMemory::<A>::new(comptime![cfg.rake_len()]),
            rake_i: SharedMemory::<u32>::new(idx_len),
            scan_v: SharedMemory::<A>::new(scan_len),
            scan_i: SharedMemory::<u32>::new(scan_idx_len),
        }
    }
}

/// Where vector `q` of a row (in scan order) sits in memory: `q`, or counted from the end
/// when the scan runs in `reverse`.
#[cube]
pub(crate) fn memory_position(q: u32, n_vec: u32, #[comptime] reverse: bool) -> u32 {
    let mut p = q;
    if comptime![reverse] {
        p = n_vec - 1 - q;
    }
    p
}

/// Raking-buffer slot of tile vector `j` (one pad entry every 32 avoids bank conflicts when a
/// unit walks its consecutive slots).
#[cube]
fn slot(j: u32) -> usize {
    (j + j / 32) as usize
}

/// Loads one tile of a row and scans it inside the cube.
///
/// Unit `t` loads the tile's vectors `k * threads + t` (coalesced), casts them to the
/// accumulator type and scans each vector's lanes in registers (`vals`, `idxs`: inclusive
/// prefixes within the vector). Vector totals are then scanned through shared memory (each
/// unit rakes `vectors_per_thread` consecutive totals, then a cube-wide scan of the unit sums),
/// and `pre_v` / `pre_i` receive the tile-local exclusive prefix of each of the unit's vectors.
/// Returns the tile's total. Positions past `n_vec` hold the identity.
///
/// `base` / `stride` locate the row (in vectors); `tile_start` is the tile's first vector in
/// scan order. For [`Affine`](crate::ops::Affine) (`O::AFFINE`) each element's multiplier is
/// read from `mul` at the same position (its index word, see `combine_items`); other operators
/// ignore `mul`. The fixed combine order makes the result bitwise reproducible, and the same call
/// on the same tile always returns the same total (the look-back fallback relies on it).
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn load_tile<T: Numeric, M: Numeric, A: Numeric, O: ScanOp, N: Size>(
    input: &Array<Vector<T, N>>,
    mul: &Array<Vector<M, N>>,
    base: usize,
    stride: usize,
    n_vec: u32,
    tile_start: u32,
    vals: &mut Array<A>,
    idxs: &mut Array<u32>,
    pre_v: &mut Array<A>,
    pre_i: &mut Array<u32>,
    sh: &mut TileShared<A>,
    #[comptime] cfg: TileConfig,
) -> Item<A> {
    let t = UNIT_POS;
    let nl = N::value();
    let threads = comptime![cfg.threads];
    let vpt = comptime![cfg.vectors_per_thread];
    let indexed = comptime![cfg.indexed];

    #[unroll]
    for k in 0..vpt {
        let j = k * threads + t;
        let q = tile_start + j;
        if q < n_vec {
            let phys = memory_position(q, n_vec, cfg.reverse);
            let v = input[base + phys as usize * stride];
            let mut m = Vector::<M, N>::empty();
            if comptime![O::AFFINE] {
                m = mul[base + phys as usize * stride];
            }
            #[unroll]
            for l in 0..nl {
                let pl = comptime![if cfg.reverse { nl - 1 - l } else { l }];
                vals[(k as usize) * nl + l] = A::cast_from(v[pl]);
                if comptime![O::AFFINE] {
                    idxs[(k as usize) * nl + l] = affine_bits::<M>(m[pl]);
                } else if comptime![indexed] {
                    idxs[(k as usize) * nl + l] = q * (nl as u32) + (l as u32);
                }
            }
        } else {
            let id = identity_item::<A, O>();
            #[unroll]
            for l in 0..nl {
                vals[(k as usize) * nl + l] = id.value;
                if comptime![indexed] {
                    idxs[(k as usize) * nl + l] = id.index;
                }
            }
        }
        #[unroll]
        for l in 1..nl {
            let i = (k as usize) * nl + l;
            let r = combine_items::<A, O>(
                item_at::<A>(vals[i - 1], idxs, i - 1, indexed),
                item_at::<A>(vals[i], idxs, i, indexed),
                indexed,
            );
            vals[i] = r.value;
            if comptime![indexed] {
                idxs[i] = r.index;
            }
        }
        let last = (k as usize) * nl + nl - 1;
        sh.rake_v[slot(j)] = vals[last];
        if comptime![indexed] {
            sh.rake_i[slot(j)] = idxs[last];
        }
    }
    sync_cube();

    // Rake: unit t owns the consecutive slots [t * vpt, (t + 1) * vpt).
    let r0 = t * vpt;
    let mut acc = identity_item::<A, O>();
    #[unroll]
    for j in 0..vpt {
        let s = slot(r0 + j);
        let x = read_item::<A>(&sh.rake_v, &sh.rake_i, s, 0usize, indexed);
        if j == 0 {
            acc = x;
        } else {
            acc = combine_items::<A, O>(acc, x, indexed);
        }
        // The unit's inclusive prefix, parked in pre_* until the cube scan is done.
        pre_v[j as usize] = acc.value;
        if comptime![indexed] {
            pre_i[j as usize] = acc.index;
        }
    }
    let cs = cube_exclusive_scan::<A, O>(
        acc,
        &mut sh.scan_v,
        &mut sh.scan_i,
        threads,
        indexed,
        comptime![cfg.plane_ops],
    );
    #[unroll]
    for j in 0..vpt {
        let mut p = cs.exclusive;
        if j > 0 {
            let prev = item_at::<A>(pre_v[(j - 1) as usize], pre_i, (j - 1) as usize, indexed);
            p = combine_items::<A, O>(cs.exclusive, prev, indexed);
        }
        let s = slot(r0 + j);
        sh.rake_v[s] = p.value;
        if comptime![indexed] {
            sh.rake_i[s] = p.index;
        }
    }
    sync_cube();
    #[unroll]
    for k in 0..vpt {
        let s = slot(k * threads + t);
        pre_v[k as usize] = sh.rake_v[s];
        if comptime![indexed] {
            pre_i[k as usize] = sh.rake_i[s];
        }
    }
    sync_cube();
    cs.total
}

/// The aggregate of tile `tile` of a row, with the bits the scan of that tile computes: for an
/// unstaged tile, [`load_tile()`] with its per-unit results discarded (the reduce-then-scan pass
/// and the look-back fallback both use it); for a staged one, [`tile_aggregate_staged()`].
#[cube]
pub fn tile_aggregate<T: Numeric, M: Numeric, A: Numeric, O: ScanOp, N: Size>(
    input: &Array<Vector<T, N>>,
    mul: &Array<Vector<M, N>>,
    base: usize,
    stride: usize,
    n_vec: u32,
    tile: u32,
    sh: &mut TileShared<A>,
    #[comptime] cfg: TileConfig,
) -> Item<A> {
    if comptime![cfg.stage] {
        tile_aggregate_staged::<T, A, O, N>(input, base, stride, n_vec, tile, sh, cfg)
    } else {
        let nl = N::value();
        let nv = comptime![cfg.vectors_per_thread as usize * nl];
        let vpt = comptime![cfg.vectors_per_thread as usize];
        let mut vals = Array::<A>::new(nv);
        let mut idxs = Array::<u32>::new(nv);
        let mut pre_v = Array::<A>::new(vpt);
        let mut pre_i = Array::<u32>::new(vpt);
        load_tile::<T, M, A, O, N>(
            input,
            mul,
            base,
            stride,
            n_vec,
            tile * comptime![cfg.tile_vectors()],
            &mut vals,
            &mut idxs,
            &mut pre_v,
            &mut pre_i,
            sh,
            cfg,
        )
    }
}

/// Writes one scanned tile: `prefix` (everything before the tile) ⊕ the vector prefix ⊕ the
/// lane prefix, cast back to `T`. With `indexed`, also writes the index (in the row, in memory
/// order) of the selected element; `-1` where no element precedes (exclusive, first position).
/// For [`Affine`](crate::ops::Affine) it writes `h` and no index; with `with_init`, `h` starts
/// from `init` (the row's initial state) instead of 0: the pair's running product of the
/// multipliers times `init` is added.
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn write_tile<T: Numeric, A: Numeric, X: Int, O: ScanOp, N: Size>(
    output: &mut Array<Vector<T, N>>,
    indices: &mut Array<Vector<X, N>>,
    base: usize,
    stride: usize,
    n_vec: u32,
    tile_start: u32,
    prefix: Item<A>,
    vals: &Array<A>,
    idxs: &Array<u32>,
    pre_v: &Array<A>,
    pre_i: &Array<u32>,
    init: A,
    #[comptime] cfg: TileConfig,
    #[comptime] with_init: bool,
) {
    let t = UNIT_POS;
    let nl = N::value();
    let threads = comptime![cfg.threads];
    let vpt = comptime![cfg.vectors_per_thread];
    let indexed = comptime![cfg.indexed];
    let n_elems = n_vec * (nl as u32);

    #[unroll]
    for k in 0..vpt {
        let q = tile_start + k * threads + t;
        if q < n_vec {
            let phys = memory_position(q, n_vec, cfg.reverse);
            let vp = item_at::<A>(pre_v[k as usize], pre_i, k as usize, indexed);
            let p = combine_items::<A, O>(prefix, vp, indexed);
            let mut out = Vector::<T, N>::empty();
            let mut out_i = Vector::<X, N>::empty();
            let addr = base + phys as usize * stride;
            #[unroll]
            for l in 0..nl {
                let pl = comptime![if cfg.reverse { nl - 1 - l } else { l }];
                let mut e = p;
                if comptime![cfg.exclusive] {
                    if comptime![l > 0] {
                        let i = (k as usize) * nl + l - 1;
                        e = combine_items::<A, O>(
                            p,
                            item_at::<A>(vals[i], idxs, i, indexed),
                            indexed,
                        );
                    }
                } else {
                    let i = (k as usize) * nl + l;
                    e = combine_items::<A, O>(p, item_at::<A>(vals[i], idxs, i, indexed), indexed);
                }
                if comptime![O::AFFINE && with_init] {
                    out[pl] = T::cast_from(e.value + affine_mul::<A>(e.index) * init);
                } else {
                    out[pl] = T::cast_from(e.value);
                }
                if comptime![indexed && !O::AFFINE] {
                    let mut x = X::from_int(-1);
                    if e.index != u32::MAX {
                        let pos = if comptime![cfg.reverse] {
                            n_elems - 1 - e.index
                        } else {
                            e.index
                        };
                        x = X::cast_from(pos);
                    }
                    out_i[pl] = x;
                }
            }
            output[addr] = out;
            if comptime![indexed && !O::AFFINE] {
                // One vector store per vector of values (not one scalar store per lane).
                indices[addr] = out_i;
            }
        }
    }
}
