//! Look-back status of a tile, in 32-bit atomic words only (WGSL has no 64-bit atomics).
//!
//! A tile's payload (its aggregate, or its inclusive prefix, and for indexed scans the index)
//! is split in 16-bit halves; each word holds `tag << 16 | half` with
//! `tag = epoch * 4 + status` (`status` 1: aggregate, 2: inclusive prefix). A reader accepts a
//! payload only when every word carries the same current tag, so a half-written publication
//! is never read: no fence is needed, the payload travels inside the atomics. The epoch
//! (1..2^14, bumped by the host on each launch) makes stale words from an earlier launch
//! invalid without clearing the buffer. Word 0 of the buffer is the tile-id counter.
// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use crate::ops::Item;
use cubecl::prelude::*;

/// Status of a tile that has published its aggregate.
pub const AGGREGATE: u32 = 1;
/// Status of a tile that has published its inclusive prefix.
pub const PREFIX: u32 = 2;
/// Largest epoch a tag can carry.
pub const MAX_EPOCH: u32 = (1 << 14) - 1;

/// Words of state per tile for an accumulator of `value_bytes` bytes.
pub fn words_per_tile(value_bytes: usize, indexed: bool) -> usize {
    value_bytes / 2 + if indexed { 2 } else { 0 }
}

/// Publishes `item` for `tile` with `status`.
#[cube]
pub fn publish<A: Numeric>(
    state: &Array<Atomic<u32>>,
    tile: u32,
    item: Item<A>,
    status: u32,
    epoch: u32,
    #[comptime] indexed: bool,
) {
    let ty = type_of::<A>();
    let bytes = comptime![ty.size()];
    let words = comptime![words_per_tile(bytes, indexed)];
    let base = 1 + tile as usize * words;
    let tag = (epoch * 4 + status) << 16;
    if comptime![bytes == 4] {
        let b = u32::reinterpret(item.value);
        state[base].store(tag | (b & 0xffff));
        state[base + 1].store(tag | (b >> 16));
    } else {
        let b = u64::reinterpret(item.value);
        let lo = u32::cast_from(b & 0xffff_ffffu64);
        let hi = u32::cast_from(b >> 32u64);
        state[base].store(tag | (lo & 0xffff));
        state[base + 1].store(tag | (lo >> 16));
        state[base + 2].store(tag | (hi & 0xffff));
        state[base + 3].store(tag | (hi >> 16));
    }
    if comptime![indexed] {
        let w = base + comptime![bytes / 2];
        state[w].store(tag | (item.index & 0xffff));
        state[w + 1].store(tag | (item.index >> 16));
    }
}

/// A tile's status as read by a successor: 0 when not (completely) published yet.
#[derive(CubeType, Clone, Copy)]
pub struct TileStatus<A: Numeric> {
    /// [`AGGREGATE`], [`PREFIX`] or 0 (nothing valid published yet).
    pub status: u32,
    /// The published aggregate or inclusive prefix.
    pub item: Item<A>,
}

/// One state word: an atomic load, or with `plain` an ordinary load through `view` (the same
/// buffer bound a second time). cubecl lowers CUDA atomic loads to `atomicAdd(p, 0)`, a
/// read-modify-write that serialises on the hot words every waiting cube polls; a plain load
/// may return an older publication, never a torn one (tags are checked), so callers poll with
/// plain loads and refresh with atomic ones now and then.
#[cube]
fn load_word(state: &Array<Atomic<u32>>, view: &Array<u32>, i: usize, plain: bool) -> u32 {
    if plain {
        view[i]
    } else {
        state[i].load()
    }
}

/// Reads the status of `tile` (see `load_word` for `plain`).
#[cube]
pub fn read_status<A: Numeric>(
    state: &Array<Atomic<u32>>,
    view: &Array<u32>,
    tile: u32,
    epoch: u32,
    plain: bool,
    #[comptime] indexed: bool,
) -> TileStatus<A> {
    let ty = type_of::<A>();
    let bytes = comptime![ty.size()];
    let words = comptime![words_per_tile(bytes, indexed)];
    let base = 1 + tile as usize * words;
    let w0 = load_word(state, view, base, plain);
    let tag = w0 >> 16;
    let mut ok = (tag >> 2) == epoch;
    let w1 = load_word(state, view, base + 1, plain);
    ok = ok && (w1 >> 16) == tag;
    let value = if comptime![bytes == 4] {
        A::reinterpret((w0 & 0xffff) | (w1 << 16))
    } else {
        let w2 = load_word(state, view, base + 2, plain);
        let w3 = load_word(state, view, base + 3, plain);
        ok = ok && (w2 >> 16) == tag && (w3 >> 16) == tag;
        let lo = u64::cast_from((w0 & 0xffff) | (w1 << 16));
        let hi = u64::cast_from((w2 & 0xffff) | (w3 << 16));
        A::reinterpret(lo | (hi << 32u64))
    };
    let mut index = 0u32;
    if comptime![indexed] {
        let w = base + comptime![bytes / 2];
        let i0 = load_word(state, view, w, plain);
        let i1 = load_word(state, view, w + 1, plain);
        ok = ok && (i0 >> 16) == tag && (i1 >> 16) == tag;
        index = (i0 & 0xffff) | (i1 << 16);
    }
    let status = select(ok, tag & 3, 0u32);
    TileStatus::<A> {
        status,
        item: Item::<A> { value, index },
    }
}
