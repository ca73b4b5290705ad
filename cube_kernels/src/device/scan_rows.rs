//! The scan kernel: each cube scans one tile of one row.
//!
//! Rows are the lines along the scanned axis of an N-d strided tensor (see
//! [`row_offsets()`]); a row of `n_vec` vectors is cut into tiles of
//! `threads * vectors_per_thread` vectors. How a tile learns the combination of the tiles before
//! it in its row is the [`ScanMode`].
// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use super::single_pass::{
    publish, publish_tile, take_ticket, tile_lookback, LookbackConfig, ScanCarry, TileStateArgs,
    AGGREGATE, STALL_PREFIXES,
};
use super::{row_length, row_offsets};
use crate::cube::{
    lead_shared, load_tile, load_tile_staged, write_tile, write_tile_staged, StagedTile,
    TileConfig, TileShared,
};
use crate::ops::{identity_item, Item, ScanOp};
use cubecl::prelude::*;

/// How tiles get their prefix.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum ScanMode {
    /// One tile per row: no prefix.
    SingleTile,
    /// Single pass: decoupled look-back (with fallback) through the tile state, with the
    /// single-pass layer's constants.
    Lookback(LookbackConfig),
    /// Reduce-then-scan: the exclusive prefix of each tile was computed by earlier passes
    /// and is read from `prefixes`.
    Prefixed,
}

/// What a scan reads: the input, and a linear recurrence's multipliers and initial states
/// (one-element dummies for every other scan).
#[derive(CubeLaunch, CubeType)]
pub struct ScanInputs<T: Numeric, N: Size> {
    pub input: Array<Vector<T, N>>,
    pub mul: Array<Vector<T, N>>,
    pub init: Array<T>,
}

/// What a scan writes: the output, and the indices of an indexed scan (a dummy otherwise).
#[derive(CubeLaunch, CubeType)]
pub struct ScanOutputs<T: Numeric, X: Int, N: Size> {
    pub output: Array<Vector<T, N>>,
    pub indices: Array<Vector<X, N>>,
}

/// What a scan reads beside its inputs: the tiles' prefixes of a prefixed scan, the rows'
/// offsets and the device-resident length (dummies where unused).
#[derive(CubeLaunch, CubeType)]
pub struct ScanMeta<A: Numeric> {
    pub prefixes: Array<A>,
    pub layout: Array<u32>,
    pub len: Array<u32>,
}

/// The run-time scalars of a scan: its row length in vectors (unless read on the device),
/// tiles per row and in all, the axis' strides, the tile state's epoch and the ticket
/// counter's word.
#[derive(CubeLaunch, CubeType)]
pub struct ScanScalars {
    pub n_vec: u32,
    pub tiles_per_row: u32,
    pub num_tiles: u32,
    pub in_stride: u32,
    pub out_stride: u32,
    pub epoch: u32,
    pub counter_base: u32,
}

/// Scans `rows` rows of `n_vec` vectors. `layout`: see [`row_offsets()`]. `state` is the
/// look-back state (word 0: tile counter, whose value before this launch is `counter_base`),
/// `prefixes` the per-tile exclusive prefixes of [`ScanMode::Prefixed`]; each is a 1-element
/// dummy in the other modes, as is `indices` unless `cfg.indexed`. With `device_len`, the row
/// length is `min(len[0], n_vec)` (a count left on the device by an earlier op); else `len` is
/// a dummy and `n_vec` is the length.
///
/// For [`Affine`](crate::ops::Affine) (the linear recurrence `h = a h + b`), `input` holds `b`
/// and `mul` holds `a` with the same layout (a dummy for every other operator), and with
/// `with_init` row `r` starts from `init[r]` (else from 0; `init` is then a dummy).
#[cube(launch_unchecked)]
pub fn scan_rows<T: Numeric, A: Numeric, X: Int, O: ScanOp, N: Size>(
    input: &ScanInputs<T, N>,
    output: &mut ScanOutputs<T, X, N>,
    tiles: &mut TileStateArgs,
    meta: &ScanMeta<A>,
    scalars: ScanScalars,
    #[comptime] cfg: TileConfig,
    #[comptime] mode: ScanMode,
    #[comptime] device_len: bool,
    #[comptime] with_init: bool,
) {
    let t = UNIT_POS;
    let mut sh = TileShared::<A>::new(cfg);
    // The tile's scan scratch at byte 0, so the copies' barrier of a staged tile never is.
    lead_shared::<A>(&mut sh.scan_v);
    let n_vec = row_length(&meta.len, scalars.n_vec, device_len);
    let mut tile_id = CUBE_POS as u32;
    if comptime![matches!(mode, ScanMode::Lookback(_))] {
        let ordered = comptime![matches!(mode, ScanMode::Lookback(lb) if lb.ordered)];
        tile_id = take_ticket(&tiles.state, scalars.counter_base, ordered);
    }
    let row = tile_id / scalars.tiles_per_row;
    let tile = tile_id % scalars.tiles_per_row;
    // Tiles past a device-resident length do nothing (no later tile waits for them).
    if tile_id < scalars.num_tiles && tile * comptime![cfg.tile_vectors()] < n_vec {
        let (base_in, base_out) = row_offsets(row, &meta.layout);
        let nl = N::value();
        // A staged tile lives in `stage`; an unstaged one in these registers.
        let regs = comptime![if cfg.stage {
            1
        } else {
            cfg.vectors_per_thread as usize
        }];
        let mut vals = Array::<A>::new(comptime![regs * nl]);
        let mut idxs = Array::<u32>::new(comptime![regs * nl]);
        let mut pre_v = Array::<A>::new(regs);
        let mut pre_i = Array::<u32>::new(regs);
        let tile_start = tile * comptime![cfg.tile_vectors()];
        let mut stage = StagedTile::<A, N>::new(cfg);
        let total = if comptime![cfg.stage] {
            load_tile_staged::<T, A, O, N>(
                &input.input,
                base_in,
                scalars.in_stride as usize,
                n_vec,
                tile_start,
                &mut sh,
                &mut stage,
                cfg,
            )
        } else {
            load_tile::<T, T, A, O, N>(
                &input.input,
                &input.mul,
                base_in,
                scalars.in_stride as usize,
                n_vec,
                tile_start,
                &mut vals,
                &mut idxs,
                &mut pre_v,
                &mut pre_i,
                &mut sh,
                cfg,
            )
        };
        let mut prefix = identity_item::<A, O>();
        match comptime![mode] {
            ScanMode::SingleTile => {}
            ScanMode::Lookback(lb) => {
                let row_tile0 = tile_id - tile;
                if tile == 0 {
                    if t == 0 {
                        publish_tile::<A>(
                            &tiles.state,
                            tile_id,
                            true,
                            total,
                            scalars.epoch,
                            cfg.indexed,
                        );
                    }
                } else {
                    if comptime![lb.spins & STALL_PREFIXES != 0] {
                        // Tests of `STALL_PREFIXES` only: every third tile publishes nothing at
                        // all, so the deep fold meets silent tiles too and reduces them itself.
                        if t == 0 && tile % 3 != 1 {
                            publish::<A>(
                                &tiles.state,
                                tile_id,
                                total,
                                AGGREGATE,
                                scalars.epoch,
                                cfg.indexed,
                            );
                        }
                    } else if t == 0 {
                        publish_tile::<A>(
                            &tiles.state,
                            tile_id,
                            false,
                            total,
                            scalars.epoch,
                            cfg.indexed,
                        );
                    }
                    prefix = tile_lookback::<T, T, A, O, N, ScanCarry>(
                        &input.input,
                        &input.mul,
                        base_in,
                        scalars.in_stride as usize,
                        n_vec,
                        &tiles.state,
                        &tiles.view,
                        row_tile0,
                        tile,
                        scalars.epoch,
                        total,
                        &mut sh,
                        cfg,
                        lb,
                    );
                }
            }
            ScanMode::Prefixed => {
                if tile > 0 {
                    prefix = Item::<A> {
                        value: meta.prefixes[tile_id as usize],
                        index: 0u32,
                    };
                }
            }
        }
        if comptime![cfg.stage] {
            write_tile_staged::<T, A, O, N>(
                &mut output.output,
                base_out,
                scalars.out_stride as usize,
                n_vec,
                tile_start,
                prefix,
                &stage,
                cfg,
            );
        } else {
            let mut h0 = A::from_int(0);
            if comptime![with_init] {
                h0 = A::cast_from(input.init[row as usize]);
            }
            write_tile::<T, A, X, O, N>(
                &mut output.output,
                &mut output.indices,
                base_out,
                scalars.out_stride as usize,
                n_vec,
                tile_start,
                prefix,
                &vals,
                &idxs,
                &pre_v,
                &pre_i,
                h0,
                cfg,
                with_init,
            );
        }
    }
}
