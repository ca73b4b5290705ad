//! The single-pass layer: what every decoupled look-back kernel shares (CUB's
//! `single_pass_scan_operators`), used by the scans ([`scan_rows`](super::scan_rows)), select
//! ([`select`](super::select)) and run-length encoding ([`run_length`](super::run_length)).
//!
//! - [`LookbackConfig`]: the look-back's compile-time constants, one type for every kernel;
//! - [`take_ticket`]: the tile id (a ticket in start order, or the cube position on CUDA);
//! - [`publish_tile`]: a tile's aggregate, or its inclusive prefix where it starts its chain;
//! - [`tile_lookback`]: a tile's exclusive prefix from its predecessors' published state, under
//!   a carry ([`TileCarry`]: the scans' operator, select's count, run-length's runs), which
//!   publishes the tile's inclusive prefix on the way.
//!
//! Beneath them: the tile state's words ([`tile_state`](super::tile_state): status and payload
//! in tagged 32-bit atomics) and the look-back walk ([`lookback`](super::lookback)).
// `#[cube]` generates an undocumented module (and its items) beside each function.
#![allow(missing_docs)]

use super::lookback::lookback_with;
pub use super::lookback::{LookbackShared, ScanCarry, TileCarry, DEEP_FOLD, STALL_PREFIXES};
pub use super::tile_state::{publish, AGGREGATE, PREFIX};
use crate::cube::{TileConfig, TileShared};
use crate::ops::{Item, ScanOp};
use cubecl::prelude::*;

/// A look-back kernel's tile state: the status-and-payload words as atomics, and the same
/// buffer bound a second time for plain loads (see [`LookbackConfig::plain_reads`]).
#[derive(CubeLaunch, CubeType)]
pub struct TileStateArgs {
    pub state: Array<Atomic<u32>>,
    pub view: Array<u32>,
}

/// The run-time scalars of a single-pass compaction or run-length pass: the host's element
/// count (unless the length is read on the device), the tile state's epoch and the ticket
/// counter's word.
#[derive(CubeLaunch, CubeType)]
pub struct PassScalars {
    pub n_host: u32,
    pub epoch: u32,
    pub counter_base: u32,
}

/// The look-back's compile-time constants (see [`lookback_with`]).
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub struct LookbackConfig {
    /// Predecessors read per look-back round without plane operations.
    pub window: u32,
    /// Plane-wide windows walked over before waiting for a prefix.
    pub windows: u32,
    /// Rounds waited on a silent predecessor before reducing its tile itself (with flag bits
    /// such as [`DEEP_FOLD`]).
    pub spins: u32,
    /// Poll the state with plain loads through a second binding (CUDA; see
    /// `tile_state::load_word`).
    pub plain_reads: bool,
    /// Widest plane of the device (the fold's lane loop is unrolled to it).
    pub plane_max: u32,
    /// Tile ids from the cube position instead of a ticket (see [`take_ticket()`]).
    pub ordered: bool,
}

/// The cube's tile id. A ticket (word 0 of the state, counting from `counter_base`) numbers
/// tiles in the order cubes start, so every predecessor has started. With `ordered` (CUDA,
/// which starts cubes in the order of their position, as CUB's single-pass scan assumes) the id
/// is the cube's position and the counter is still bumped, unread, so the host's count of it
/// holds: no atomic round trip before the tile's loads (H200: 1-D cumsum of 2^28 f32 0.600-0.603
/// against 0.610-0.611 ms; BENCHMARKS.md, "What was learned"). A predecessor that has not
/// started is then met by the look-back's fallback, like a silent one. Only for a runtime that
/// keeps its resident cubes progressing (CUDA): the plane look-back waits at its deepest window
/// while every tile there holds an aggregate but none a prefix yet, and on lavapipe, whose loops
/// end after about 65 535 rounds, that wait came out wrong with this order (the shared-memory
/// look-back passed; tickets keep the windows shallow there).
#[cube]
pub fn take_ticket(
    state: &Array<Atomic<u32>>,
    counter_base: u32,
    #[comptime] ordered: bool,
) -> u32 {
    let mut id = CUBE_POS as u32;
    if comptime![ordered] {
        if UNIT_POS == 0 {
            state[0].fetch_add(1);
        }
    } else {
        let mut ticket = SharedMemory::<u32>::new(1usize);
        if UNIT_POS == 0 {
            ticket[0] = state[0].fetch_add(1) - counter_base;
        }
        sync_cube();
        id = ticket[0];
    }
    id
}

/// Publishes tile `tile_id`'s `total`: its inclusive prefix where it starts its chain (`first`:
/// the first tile of a row), else its aggregate. One unit calls it.
#[cube]
pub fn publish_tile<A: Numeric>(
    state: &Array<Atomic<u32>>,
    tile_id: u32,
    first: bool,
    total: Item<A>,
    epoch: u32,
    #[comptime] indexed: bool,
) {
    if first {
        publish::<A>(state, tile_id, total, PREFIX, epoch, indexed);
    } else {
        publish::<A>(state, tile_id, total, AGGREGATE, epoch, indexed);
    }
}

/// The exclusive prefix of tile `tile` (>= 1) of the chain whose first tile id is `row_tile0`,
/// under carry `G` with the constants `lb`; the tile's inclusive prefix (combined with its
/// aggregate `total`) is published on the way. `input` / `aux` (from `base`, every `stride`
/// vectors, `n` of them) are what a waiting cube reads to reduce a silent predecessor itself.
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn tile_lookback<T: Numeric, J: Numeric, A: Numeric, O: ScanOp, N: Size, G: TileCarry>(
    input: &Array<Vector<T, N>>,
    aux: &Array<Vector<J, N>>,
    base: usize,
    stride: usize,
    n: u32,
    state: &Array<Atomic<u32>>,
    state_view: &Array<u32>,
    row_tile0: u32,
    tile: u32,
    epoch: u32,
    total: Item<A>,
    sh: &mut TileShared<A>,
    #[comptime] cfg: TileConfig,
    #[comptime] lb: LookbackConfig,
) -> Item<A> {
    let mut shared = LookbackShared::<A>::new(lb.window, lb.windows, cfg.plane_ops, lb.plane_max);
    lookback_with::<T, J, A, O, N, G>(
        input,
        aux,
        base,
        stride,
        n,
        state,
        state_view,
        row_tile0,
        tile,
        epoch,
        total,
        sh,
        &mut shared,
        cfg,
        lb.window,
        lb.windows,
        lb.spins,
        lb.plain_reads,
        lb.plane_max,
    )
}
