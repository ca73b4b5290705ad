//! Stream compaction in one pass: each cube counts the set flags of its tile, learns how many
//! were set before it by decoupled look-back (the carry is a `u32` count; a waiting cube counts a
//! silent predecessor's flags itself), and scatters its selected elements in the same kernel.
//!
//! A tile is `threads × vectors_per_thread` vectors; unit `t` owns the consecutive vectors
//! `[t * vpt, (t + 1) * vpt)` of its tile (blocked), so its set flags fit one `u32` bit mask
//! (`vpt × vector width ≤ 32`) and the selected elements leave in input order.
// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use super::single_pass::{
    publish_tile, take_ticket, tile_lookback, LookbackConfig, PassScalars, TileCarry, TileStateArgs,
};
use crate::cube::{cube_exclusive_scan, CubeScan, TileConfig, TileShared};
use crate::ops::{combine_items, is_nan, Add, Item, ScanOp};
use cubecl::prelude::*;

/// The compile-time shape of a single-pass look-back kernel over flat data (select and
/// run-length encoding): the tile and the look-back constants.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub struct PassConfig {
    /// Units per cube (a multiple of the plane width).
    pub threads: u32,
    /// Consecutive vectors per unit (`vectors_per_thread × vector width ≤ 32`).
    pub vectors_per_thread: u32,
    /// Cube scans and the look-back use plane (subgroup) operations.
    pub plane_ops: bool,
    /// The look-back's constants (the single-pass layer's).
    pub lookback: LookbackConfig,
    /// The length is `min(len[0], n)` (a count held on the device), not `n`.
    pub device_len: bool,
    /// Select / nonzero stage the tile's selection in shared memory and write it coalesced
    /// (`tile × element size` bytes of shared memory).
    pub staged: bool,
    /// The flags are bytes (u8 / bool masks), four to a `u32` word: `flags` is read as words
    /// and element `e`'s flag is byte `e % 4` of word `e / 4` (`vectors_per_thread` is then a
    /// multiple of 4, so a unit reads whole vectors of words).
    pub packed_flags: bool,
    /// Staged Select without values: the unit's data vectors are loaded into registers before
    /// its flags, so both loads are in flight together (otherwise each data vector is loaded
    /// after the tile's flag scan, and only where one of its flags is set).
    pub prefetch: bool,
}

impl PassConfig {
    /// Vectors in one tile.
    pub fn tile_vectors(&self) -> u32 {
        self.threads * self.vectors_per_thread
    }
    /// The tile configuration the look-back and the cube scans see.
    pub fn tile(&self, indexed: bool) -> TileConfig {
        TileConfig {
            threads: self.threads,
            vectors_per_thread: self.vectors_per_thread,
            reverse: false,
            exclusive: false,
            indexed,
            plane_ops: self.plane_ops,
            stage: false,
            async_copy: false,
        }
    }
}

/// What the compaction writes.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum CompactMode {
    /// `out[k] = data[i]` for the `k`-th set flag (and `out_values[k] = values[i]`).
    Select {
        /// Also select `values` into `out_values` (key-value pairs).
        values: bool,
    },
    /// Selected elements first, the others after them from `total[0]` on (both stable).
    Partition {
        /// Also partition `values` into `out_values` (key-value pairs).
        values: bool,
    },
    /// The flags are the data: `out_index[k * rank + d]` = coordinate `d` of the `k`-th
    /// non-zero element (row-major, `shape = [rank, dims..]`).
    NonZero,
    /// Only the count.
    Count,
}

/// The set flags among the `vpt` vectors from `first_vec` (bit `k * width + l`), counting only
/// elements below `n`. Any non-zero value is set (NaN too). With `packed`, `flags` holds bytes
/// four to a word (see [`PassConfig::packed_flags`]).
#[cube]
pub fn unit_flags<F: Numeric, N: Size>(
    flags: &Array<Vector<F, N>>,
    first_vec: u32,
    n: u32,
    #[comptime] vpt: u32,
    #[comptime] packed: bool,
) -> u32 {
    let nl = N::value();
    let mut bits = 0u32;
    if comptime![packed] {
        // Vector `qw` of words holds elements [4 * nl * qw, 4 * nl * (qw + 1)).
        let nlu = nl as u32;
        #[unroll]
        for kw in 0..comptime![vpt / 4] {
            let qw = first_vec / 4 + kw;
            let e_base = qw * 4 * nlu;
            if e_base < n {
                let w = flags[qw as usize];
                #[unroll]
                for l in 0..nl {
                    let word = u32::cast_from(w[l]);
                    #[unroll]
                    for b in 0..4u32 {
                        let e = e_base + (l as u32) * 4 + b;
                        if e < n && (word >> (8 * b)) & 0xFF != 0 {
                            bits |= 1u32 << (kw * 4 * nlu + (l as u32) * 4 + b);
                        }
                    }
                }
            }
        }
    } else {
        bits = unit_flags_plain::<F, N>(flags, first_vec, n, vpt);
    }
    bits
}

/// [`unit_flags`] of one flag per element.
#[cube]
fn unit_flags_plain<F: Numeric, N: Size>(
    flags: &Array<Vector<F, N>>,
    first_vec: u32,
    n: u32,
    #[comptime] vpt: u32,
) -> u32 {
    let nl = N::value();
    let mut bits = 0u32;
    #[unroll]
    for k in 0..vpt {
        let q = first_vec + k;
        let e0 = q * (nl as u32);
        if e0 < n {
            let v = flags[q as usize];
            #[unroll]
            for l in 0..nl {
                if e0 + (l as u32) < n && (v[l] != F::from_int(0) || is_nan::<F>(v[l])) {
                    bits |= 1u32 << (k * (nl as u32) + (l as u32));
                }
            }
        }
    }
    bits
}

/// The look-back carry of select: a count of set flags, added (`PACKED`: byte flags, four to a
/// word, as [`PassConfig::packed_flags`]).
pub struct CountCarry<const PACKED: bool>;

#[cube]
impl<const PACKED: bool> TileCarry for CountCarry<PACKED> {
    fn combine<A: Numeric, O: ScanOp>(
        a: Item<A>,
        b: Item<A>,
        #[comptime] indexed: bool,
    ) -> Item<A> {
        combine_items::<A, O>(a, b, indexed)
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
        let first = tile * comptime![cfg.tile_vectors()] + UNIT_POS * cfg.vectors_per_thread;
        let bits = unit_flags::<I, N>(input, first, n, cfg.vectors_per_thread, PACKED);
        tile_bit_scan::<A, O>(bits, sh, cfg.threads, cfg.plane_ops).total
    }
}

/// The cube-wide exclusive scan of the units' set-bit counts (`bits`: each unit's mask) with
/// `O`, synced: a unit's selected elements before it, and the tile's count (`total`, the
/// aggregate a look-back fallback computes for a count carry).
#[cube]
pub fn tile_bit_scan<A: Numeric, O: ScanOp>(
    bits: u32,
    sh: &mut TileShared<A>,
    #[comptime] threads: u32,
    #[comptime] plane_ops: bool,
) -> CubeScan<A> {
    let cs = cube_exclusive_scan::<A, O>(
        Item::<A> {
            value: A::cast_from(bits.count_ones()),
            index: 0u32,
        },
        &mut sh.scan_v,
        &mut sh.scan_i,
        threads,
        false,
        plane_ops,
    );
    sync_cube();
    cs
}

/// Bytes of shared memory of [`scan_shared()`] for `threads` units and an accumulator of
/// `acc_bytes`.
pub fn scan_shared_bytes(threads: u32, acc_bytes: usize) -> usize {
    let scan = 2 * threads as usize;
    acc_bytes + 4 + scan * (acc_bytes + 4)
}

/// Shared memory for cube-wide scans only (no raking buffer): what the single-pass kernels and
/// their look-back fallbacks use.
#[cube]
pub fn scan_shared<A: Numeric>(#[comptime] threads: u32) -> TileShared<A> {
    let scan_len = comptime![2 * threads as usize];
    TileShared::<A> {
        rake_v: SharedMemory::<A>::new(1usize),
        rake_i: SharedMemory::<u32>::new(1usize),
        scan_v: SharedMemory::<A>::new(scan_len),
        scan_i: SharedMemory::<u32>::new(scan_len),
    }
}

/// The look-back of a pass over flat data (select, run-length): the exclusive prefix of `tile`
/// (>= 1) under carry `G`, with the pass's look-back constants (see [`tile_lookback()`]); the
/// tile's inclusive prefix (combined with its aggregate `total`) is published on the way.
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn pass_lookback<T: Numeric, J: Numeric, A: Numeric, O: ScanOp, N: Size, G: TileCarry>(
    input: &Array<Vector<T, N>>,
    aux: &Array<Vector<J, N>>,
    n: u32,
    state: &Array<Atomic<u32>>,
    state_view: &Array<u32>,
    tile: u32,
    epoch: u32,
    total: Item<A>,
    sh: &mut TileShared<A>,
    #[comptime] cfg: PassConfig,
    #[comptime] indexed: bool,
) -> Item<A> {
    tile_lookback::<T, J, A, O, N, G>(
        input,
        aux,
        0usize,
        1usize,
        n,
        state,
        state_view,
        0u32,
        tile,
        epoch,
        total,
        sh,
        cfg.tile(indexed),
        cfg.lookback,
    )
}

/// An item with no index.
#[cube]
pub fn plain_item<A: Numeric>(value: A) -> Item<A> {
    Item::<A> { value, index: 0u32 }
}

/// The element count: `n`, or with a device length `min(len[0], n)`.
#[cube]
pub fn pass_len(len: &Array<u32>, n: u32, #[comptime] device_len: bool) -> u32 {
    let mut m = n;
    if comptime![device_len] {
        m = min(len[0], n);
    }
    m
}

/// What a compaction reads: the flags, and the data and values selected by them (one-element
/// dummies where the mode has none).
#[derive(CubeLaunch, CubeType)]
pub struct CompactInputs<F: Numeric, T: Numeric, V: Numeric, N: Size> {
    pub flags: Array<Vector<F, N>>,
    pub data: Array<Vector<T, N>>,
    pub values: Array<Vector<V, N>>,
}

/// What a compaction writes: the selected data, values and positions (or nonzero's
/// coordinates), and the count.
#[derive(CubeLaunch, CubeType)]
pub struct CompactOutputs<T: Numeric, V: Numeric, X: Int> {
    pub out: Array<T>,
    pub out_values: Array<V>,
    pub out_index: Array<X>,
    pub count: Array<u32>,
}

/// What a compaction reads beside its inputs: the device-resident length, partition's count
/// of selected elements (where the rejected ones start) and nonzero's shape `[rank, dims..]`.
#[derive(CubeLaunch, CubeType)]
pub struct CompactMeta {
    pub len: Array<u32>,
    pub total: Array<u32>,
    pub shape: Array<u32>,
}

/// Compacts `n` elements (see [`CompactMode`]); `count[0]` receives the number selected (not
/// written by `Partition`, whose `total[0]` already holds it). Buffers a mode does not use are
/// 1-element dummies. `G`: [`CountCarry`], packed as `cfg.packed_flags` says.
#[cube(launch_unchecked)]
pub fn compact<F: Numeric, T: Numeric, V: Numeric, X: Int, N: Size, G: TileCarry>(
    input: &CompactInputs<F, T, V, N>,
    output: &mut CompactOutputs<T, V, X>,
    meta: &CompactMeta,
    tiles: &mut TileStateArgs,
    scalars: PassScalars,
    #[comptime] cfg: PassConfig,
    #[comptime] mode: CompactMode,
) {
    let t = UNIT_POS;
    let tile = take_ticket(&tiles.state, scalars.counter_base, cfg.lookback.ordered);
    let n = pass_len(&meta.len, scalars.n_host, cfg.device_len);
    let nl = N::value() as u32;
    let tile_elems = comptime![cfg.tile_vectors()] * nl;
    let num_tiles = n.div_ceil(tile_elems);
    let write_count = comptime![!matches!(mode, CompactMode::Partition { .. })];
    if write_count && tile == 0 && n == 0 && t == 0 {
        output.count[0] = 0u32;
    }
    if tile < num_tiles {
        let vpt = comptime![cfg.vectors_per_thread];
        let first_vec = tile * comptime![cfg.tile_vectors()] + t * vpt;
        // Select / NonZero with `cfg.staged`: the selection goes through shared memory and
        // leaves the cube in one coalesced run (before the look-back, which it overlaps).
        let staged = comptime![
            cfg.staged && matches!(mode, CompactMode::Select { .. } | CompactMode::NonZero)
        ];
        let with_values = comptime![matches!(mode, CompactMode::Select { values: true })];
        let nonzero = comptime![matches!(mode, CompactMode::NonZero)];
        let prefetch = comptime![cfg.prefetch && staged && !nonzero && !with_values];
        let mut held =
            Array::<Vector<T, N>>::new(comptime![if prefetch { vpt as usize } else { 1 }]);
        if comptime![prefetch] {
            #[unroll]
            for k in 0..vpt {
                let q = first_vec + k;
                if q * nl < n {
                    held[k as usize] = input.data[q as usize];
                }
            }
        }
        let bits = unit_flags::<F, N>(&input.flags, first_vec, n, vpt, cfg.packed_flags);
        let mut sh = scan_shared::<u32>(cfg.threads);
        let cs = tile_bit_scan::<u32, Add>(bits, &mut sh, cfg.threads, cfg.plane_ops);
        let tile_total = cs.total.value;
        let nlv = N::value();
        let te = comptime![cfg.tile_vectors() as usize * nlv];
        let mut stage = SharedMemory::<T>::new(comptime![if staged && !nonzero { te } else { 1 }]);
        let mut stage_v =
            SharedMemory::<V>::new(comptime![if staged && with_values { te } else { 1 }]);
        let mut stage_i =
            SharedMemory::<u32>::new(comptime![if staged && nonzero { te } else { 1 }]);
        if comptime![staged] {
            stage_unit::<T, V, N>(
                &input.data,
                &input.values,
                &held,
                &mut stage,
                &mut stage_v,
                &mut stage_i,
                first_vec,
                bits,
                cs.exclusive.value,
                vpt,
                mode,
                prefetch,
            );
        }
        let mut prefix = 0u32;
        if t == 0 {
            publish_tile::<u32>(
                &tiles.state,
                tile,
                tile == 0,
                cs.total,
                scalars.epoch,
                false,
            );
        }
        if tile > 0 {
            let p = pass_lookback::<F, F, u32, Add, N, G>(
                &input.flags,
                &input.flags,
                n,
                &tiles.state,
                &tiles.view,
                tile,
                scalars.epoch,
                cs.total,
                &mut sh,
                cfg,
                false,
            );
            prefix = p.value;
        }
        if write_count && tile == num_tiles - 1 && t == 0 {
            output.count[0] = prefix + tile_total;
        }
        if comptime![staged] {
            sync_cube();
            copy_out::<T, V, X>(
                &stage,
                &stage_v,
                &stage_i,
                &mut output.out,
                &mut output.out_values,
                &mut output.out_index,
                &meta.shape,
                prefix,
                tile_total,
                mode,
            );
        } else {
            scatter::<T, V, X, N>(
                &input.data,
                &input.values,
                &mut output.out,
                &mut output.out_values,
                &mut output.out_index,
                &meta.total,
                &meta.shape,
                first_vec,
                n,
                bits,
                prefix + cs.exclusive.value,
                vpt,
                mode,
            );
        }
    }
}

/// Writes row `row` of nonzero's output: the coordinates of flat (row-major) index `flat` in
/// `shape = [rank, dims..]`. One dimension: the index itself (no division).
#[cube]
fn write_coords<X: Int>(
    out_index: &mut Array<X>,
    shape: &Array<u32>,
    rank: u32,
    row: u32,
    flat: u32,
) {
    if rank == 1 {
        out_index[row as usize] = X::cast_from(flat);
    } else {
        let mut rem = flat;
        let mut d = rank;
        while d > 0 {
            d -= 1;
            let size = shape[(1 + d) as usize];
            out_index[(row * rank + d) as usize] = X::cast_from(rem % size);
            rem /= size;
        }
    }
}

/// Writes the tile's staged selection to `[prefix, prefix + tile_total)`, coalesced.
#[cube]
#[allow(clippy::too_many_arguments)]
fn copy_out<T: Numeric, V: Numeric, X: Int>(
    stage: &SharedMemory<T>,
    stage_v: &SharedMemory<V>,
    stage_i: &SharedMemory<u32>,
    out: &mut Array<T>,
    out_values: &mut Array<V>,
    out_index: &mut Array<X>,
    shape: &Array<u32>,
    prefix: u32,
    tile_total: u32,
    #[comptime] mode: CompactMode,
) {
    let mut j = UNIT_POS;
    match comptime![mode] {
        CompactMode::Select {
            values: with_values,
        } => {
            while j < tile_total {
                out[(prefix + j) as usize] = stage[j as usize];
                if comptime![with_values] {
                    out_values[(prefix + j) as usize] = stage_v[j as usize];
                }
                j += CUBE_DIM;
            }
        }
        CompactMode::NonZero => {
            let rank = shape[0];
            while j < tile_total {
                write_coords::<X>(out_index, shape, rank, prefix + j, stage_i[j as usize]);
                j += CUBE_DIM;
            }
        }
        _ => {}
    }
}

/// Stages the unit's selected elements (Select: data and values; NonZero: flat indices) in
/// shared memory at their tile-local positions (`lp` = selected before the unit in the tile).
/// With `prefetched`, the data vectors are `held` (loaded by the caller) instead of `data`.
#[cube]
#[allow(clippy::too_many_arguments)]
fn stage_unit<T: Numeric, V: Numeric, N: Size>(
    data: &Array<Vector<T, N>>,
    values: &Array<Vector<V, N>>,
    held: &Array<Vector<T, N>>,
    stage: &mut SharedMemory<T>,
    stage_v: &mut SharedMemory<V>,
    stage_i: &mut SharedMemory<u32>,
    first_vec: u32,
    bits: u32,
    lp0: u32,
    #[comptime] vpt: u32,
    #[comptime] mode: CompactMode,
    #[comptime] prefetched: bool,
) {
    let nl = N::value();
    let mut lp = lp0;
    #[unroll]
    for k in 0..vpt {
        let q = first_vec + k;
        let kb = (bits >> (k * (nl as u32))) & ((1u32 << (nl as u32)) - 1);
        if kb != 0 {
            match comptime![mode] {
                CompactMode::Select {
                    values: with_values,
                } => {
                    let v = if comptime![prefetched] {
                        held[k as usize]
                    } else {
                        data[q as usize]
                    };
                    let mut w = Vector::<V, N>::empty();
                    if comptime![with_values] {
                        w = values[q as usize];
                    }
                    #[unroll]
                    for l in 0..nl {
                        if (kb >> (l as u32)) & 1 == 1 {
                            stage[lp as usize] = v[l];
                            if comptime![with_values] {
                                stage_v[lp as usize] = w[l];
                            }
                            lp += 1;
                        }
                    }
                }
                _ =>
                {
                    #[unroll]
                    for l in 0..nl {
                        if (kb >> (l as u32)) & 1 == 1 {
                            stage_i[lp as usize] = q * (nl as u32) + (l as u32);
                            lp += 1;
                        }
                    }
                }
            }
        }
    }
}

/// Writes the unit's elements; `sel` = elements selected before the unit's first one.
#[cube]
#[allow(clippy::too_many_arguments)]
fn scatter<T: Numeric, V: Numeric, X: Int, N: Size>(
    data: &Array<Vector<T, N>>,
    values: &Array<Vector<V, N>>,
    out: &mut Array<T>,
    out_values: &mut Array<V>,
    out_index: &mut Array<X>,
    total: &Array<u32>,
    shape: &Array<u32>,
    first_vec: u32,
    n: u32,
    bits: u32,
    sel_before: u32,
    #[comptime] vpt: u32,
    #[comptime] mode: CompactMode,
) {
    let nl = N::value();
    let mut sel = sel_before;
    match comptime![mode] {
        CompactMode::Select {
            values: with_values,
        } =>
        {
            #[unroll]
            for k in 0..vpt {
                let q = first_vec + k;
                let kb = (bits >> (k * (nl as u32))) & ((1u32 << (nl as u32)) - 1);
                if kb != 0 {
                    let v = data[q as usize];
                    #[unroll]
                    for l in 0..nl {
                        if (kb >> (l as u32)) & 1 == 1 {
                            out[sel as usize] = v[l];
                            sel += 1;
                        }
                    }
                    if comptime![with_values] {
                        let w = values[q as usize];
                        let mut s2 = sel - kb.count_ones();
                        #[unroll]
                        for l in 0..nl {
                            if (kb >> (l as u32)) & 1 == 1 {
                                out_values[s2 as usize] = w[l];
                                s2 += 1;
                            }
                        }
                    }
                }
            }
        }
        CompactMode::Partition {
            values: with_values,
        } => {
            let selected = total[0];
            #[unroll]
            for k in 0..vpt {
                let q = first_vec + k;
                let e0 = q * (nl as u32);
                if e0 < n {
                    let v = data[q as usize];
                    let mut w = Vector::<V, N>::empty();
                    if comptime![with_values] {
                        w = values[q as usize];
                    }
                    #[unroll]
                    for l in 0..nl {
                        let i = e0 + (l as u32);
                        if i < n {
                            let mut dst = selected + i - sel;
                            let set = (bits >> (k * (nl as u32) + (l as u32))) & 1 == 1;
                            if set {
                                dst = sel;
                                sel += 1;
                            }
                            out[dst as usize] = v[l];
                            if comptime![with_values] {
                                out_values[dst as usize] = w[l];
                            }
                        }
                    }
                }
            }
        }
        CompactMode::NonZero => {
            let rank = shape[0];
            #[unroll]
            for k in 0..vpt {
                let q = first_vec + k;
                #[unroll]
                for l in 0..nl {
                    if (bits >> (k * (nl as u32) + (l as u32))) & 1 == 1 {
                        write_coords::<X>(
                            out_index,
                            shape,
                            rank,
                            sel,
                            q * (nl as u32) + (l as u32),
                        );
                        sel += 1;
                    }
                }
            }
        }
        CompactMode::Count => {}
    }
}
