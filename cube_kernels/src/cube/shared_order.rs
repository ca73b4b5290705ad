//! Which shared array sits at byte 0, whatever order the optimiser allocates in.
//!
//! cubecl-opt 0.10 places a kernel's shared arrays block by block in the order of the blocks'
//! ids: first those live in the entry block (the code before the kernel's first branch, plus
//! what a branch that depends on the unit uses right after it), then, at the return block
//! (id 1), every other array, since an array stays live to the end. Within a block the order is
//! a hash set's, which differs from one process to the next. The staged look-back scan ran 19 %
//! slower on the H200 in the layouts with its copies' barrier at byte 0 and at the same speed
//! in every other layout (BENCHMARKS.md at 52581a0, 2026-12-03 (H200), "a fixed shared
//! layout"), so it puts one of its arrays at byte 0 with [`lead_shared()`].
// `#[cube]` generates an undocumented module (and its items) beside each function.
#![allow(missing_docs)]

use cubecl::prelude::*;

/// Puts `arr` at byte 0 of the cube's shared memory, every other shared array after it (in the
/// optimiser's order). Call it first in the kernel, before any other use of shared memory and
/// before any branch.
///
/// The branch is never taken (no unit has that position) and depends on the unit, so its use of
/// `arr` counts in the entry block, which the branch ends: `arr` is then the only array live
/// there.
#[cube]
pub fn lead_shared<E: CubePrimitive>(arr: &mut SharedMemory<E>) {
    if UNIT_POS == u32::MAX {
        let v = arr[0];
        arr[0] = v;
    }
}
