// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use super::{cube_exclusive_scan, TileConfig, TileShared};
use crate::ops::{Item, ScanOp};
use cubecl::prelude::*;

/// The combination of tiles `tile .. tile + tiles` of a row (same tiling as the scan: unit `t`
/// loads vectors `k * threads + t` of each, coalesced): each unit folds its vectors in order,
/// tile after tile, then one cube-wide scan of the unit folds. Positions past `n_vec` are
/// skipped. Fixed order: the same bits every run.
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn tile_reduce<T: Numeric, A: Numeric, O: ScanOp, N: Size>(
    input: &Array<Vector<T, N>>,
    base: usize,
    stride: usize,
    n_vec: u32,
    tile: u32,
    tiles: u32,
    sh: &mut TileShared<A>,
    #[comptime] cfg: TileConfig,
) -> A {
    let t = UNIT_POS;
    let nl = N::value();
    let threads = comptime![cfg.threads];
    let mut acc = O::identity::<A>();
    for m in 0..tiles {
        let tile_start = (tile + m) * comptime![cfg.tile_vectors()];
        #[unroll]
        for k in 0..cfg.vectors_per_thread {
            let q = tile_start + k * threads + t;
            if q < n_vec {
                let v = input[base + q as usize * stride];
                #[unroll]
                for l in 0..nl {
                    acc = O::combine::<A>(acc, A::cast_from(v[l]));
                }
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
    cs.total.value
}
