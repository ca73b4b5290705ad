//! The tuning layer: what a device offers ([`DeviceProfile`]), the choices every planner makes
//! from it ([`Policy`], one table for every family), and the only way to override them: a
//! [`Tuning`] value given explicitly, on the [`Workspace`](crate::Workspace) a call uses
//! ([`Workspace::with_tuning`](crate::Workspace::with_tuning)) and, for the options a user
//! picks per call, in [`ScanOptions`](crate::ScanOptions) and
//! [`SortOptions`](crate::SortOptions). The library reads no environment variable.
//!
//! The tile shapes themselves (CUB's `tuning_*.cuh`) stay beside each family's planner, one
//! named constant per choice with the measurement behind it: `scan::plan::LONG_TILE`, the sort
//! plan's `KEYS_TILE` / `PAIRS_TILE` / `ROW_TILES`, the compaction pass's `THREADS`. What this
//! module holds is every choice that depends on the device or that a caller may override.
//!
//! ```
//! # #[cfg(feature = "wgpu")] {
//! use cubeprim::tuning::{TileOrder, Tuning};
//! use cubeprim::{PlaneOps, Workspace};
//! // The single-pass kernels with plane operations even where the runtime does not report
//! // them (lavapipe runs them), tile ids from the cube position, 3 tiles per reduce cube.
//! let tuning = Tuning {
//!     plane_ops: PlaneOps::Force,
//!     tile_order: TileOrder::Position,
//!     reduce_tiles_per_cube: Some(3),
//!     ..Tuning::default()
//! };
//! let ws = Workspace::<cubecl::wgpu::WgpuRuntime>::new().with_tuning(tuning);
//! assert_eq!(ws.tuning(), &tuning);
//! # }
//! ```

use crate::scan::PlaneOps;
use crate::DType;
use cubecl::ir::features::Plane;
use cubecl::prelude::*;

/// The runtime a client belongs to (what the policies distinguish).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RuntimeKind {
    /// cubecl's CUDA runtime.
    Cuda,
    /// cubecl's wgpu runtime (Vulkan, Metal, DX12; lavapipe in CI).
    Wgpu,
    /// Any other cubecl runtime.
    Other,
}

/// Whether cubes that have started keep making progress while others wait on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ForwardProgress {
    /// Resident cubes all make progress and start in the order of their position (CUDA): a
    /// look-back may wait long, and tile ids may come from the cube position.
    Resident,
    /// No promise (WGSL, Metal): every wait is bounded and falls back, tile ids come from a
    /// ticket taken when a cube starts.
    None,
}

/// What a device offers, read once from its client: every planner reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceProfile {
    /// The runtime.
    pub runtime: RuntimeKind,
    /// Shared (workgroup, threadgroup) memory a cube may declare, in bytes.
    pub max_shared_bytes: usize,
    /// Units a cube may have.
    pub max_units_per_cube: u32,
    /// The narrowest plane (warp, subgroup, SIMD group) the device may run.
    pub plane_width_min: u32,
    /// The widest plane.
    pub plane_width_max: u32,
    /// Plane operations are reported by the runtime.
    pub plane_ops: bool,
    /// Plane barriers are reported by the runtime.
    pub plane_sync: bool,
    /// Asynchronous global-to-shared copies (CUDA sm_80+).
    pub copy_async: bool,
    /// 64-bit integers (and so the sort's packed 64-bit counters and packed argsort).
    pub int64: bool,
    /// Whether waiting cubes may rely on each other's progress.
    pub forward_progress: ForwardProgress,
    /// The largest buffer the device allocates, in bytes.
    pub max_buffer_bytes: u64,
    /// Streaming multiprocessors (compute units) where the runtime reports them.
    pub multiprocessors: Option<u32>,
}

impl DeviceProfile {
    /// The profile of `client`'s device.
    pub fn of<R: Runtime>(client: &ComputeClient<R>) -> Self {
        let props = client.properties();
        let hw = &props.hardware;
        let features = client.features();
        let runtime = match R::name(client) {
            "cuda" => RuntimeKind::Cuda,
            "wgpu" => RuntimeKind::Wgpu,
            _ => RuntimeKind::Other,
        };
        let plane_width_max = hw.plane_size_max.max(1);
        Self {
            runtime,
            max_shared_bytes: hw.max_shared_memory_size,
            max_units_per_cube: hw.max_units_per_cube,
            plane_width_min: hw.plane_size_min.clamp(1, plane_width_max),
            plane_width_max,
            plane_ops: features.plane.contains(Plane::Ops),
            plane_sync: features.plane.contains(Plane::Sync),
            copy_async: features.copy_async,
            int64: crate::supports_dtype(client, DType::U64),
            forward_progress: if runtime == RuntimeKind::Cuda {
                ForwardProgress::Resident
            } else {
                ForwardProgress::None
            },
            max_buffer_bytes: crate::max_buffer_bytes(client) as u64,
            multiprocessors: hw.num_streaming_multiprocessors,
        }
    }

    /// A CUDA device.
    pub fn is_cuda(&self) -> bool {
        self.runtime == RuntimeKind::Cuda
    }
}

/// Where the single-pass kernels (scan look-back, compaction, run-length) take a tile's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TileOrder {
    /// The policy's choice: the cube position where cubes start in that order (CUDA), else a
    /// ticket.
    #[default]
    Auto,
    /// From the cube position (the look-back's bounded wait and fallback carry any cube whose
    /// predecessor has not started, so this is correct everywhere, only slower where cubes
    /// start out of order).
    Position,
    /// From a ticket taken when the cube starts.
    Ticket,
}

/// Explicit overrides of the [`Policy`]. The default overrides nothing. Give it to a
/// [`Workspace`](crate::Workspace) ([`Workspace::with_tuning`](crate::Workspace::with_tuning));
/// every call that uses that workspace plans with it. The `*_workspace_bytes` size queries
/// plan with the default; a tuned workspace made with
/// [`Workspace::with_capacity`](crate::Workspace::with_capacity) may need more (a call then
/// fails with [`Error::ScratchTooSmall`](crate::Error::ScratchTooSmall)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tuning {
    /// Plane operations for the families without a per-call choice (compaction, run-length,
    /// unique, histogram, reduce, the sorts' and scans' [`PlaneOps::Auto`]): `Force` runs
    /// their plane variants where the runtime does not report plane operations (lavapipe
    /// runs them), `Off` never uses them.
    pub plane_ops: PlaneOps,
    /// Where the single-pass kernels take a tile's id.
    pub tile_order: TileOrder,
    /// Tiles one reduce cube folds (1 to 64; `None`: the policy's choice).
    pub reduce_tiles_per_cube: Option<u32>,
    /// Whether staged selections load their data with their flags (`None`: yes).
    pub select_prefetch: Option<bool>,
    /// Units per cube of the run-length tile (a multiple of 32 up to 1024, else ignored;
    /// `None`: the policy's choice).
    pub runs_units: Option<u32>,
    /// Vectors per unit of the run-length tile, staged while it fits; 0: the unstaged kernel
    /// (`None`: the largest staged tile that fits).
    pub runs_vectors_per_unit: Option<u32>,
    /// The in-cube row sort's tile `(units, keys per unit)` where a row fits it (`None`: the
    /// first of the plan's row tiles that fits).
    pub sort_row_tile: Option<(u32, u32)>,
    /// Whether CUDA's ballot rankings use CUB's inline PTX (`None`: yes where they apply).
    pub ptx_ballot: Option<bool>,
}

impl Default for Tuning {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl Tuning {
    /// No override (a `const` form of [`Tuning::default`]).
    pub const DEFAULT: Self = Self {
        plane_ops: PlaneOps::Auto,
        tile_order: TileOrder::Auto,
        reduce_tiles_per_cube: None,
        select_prefetch: None,
        runs_units: None,
        runs_vectors_per_unit: None,
        sort_row_tile: None,
        ptx_ballot: None,
    };

    /// The run-length tile's units override, if any (a multiple of 32 up to 1024; else
    /// ignored).
    pub fn checked_runs_units(&self) -> Option<u32> {
        self.runs_units
            .filter(|t| t % 32 == 0 && (32..=1024).contains(t))
    }
}

/// Tiles one reduce cube folds at most (see [`Policy::reduce_tiles_per_cube`]).
const REDUCE_GROUP: u32 = 8;
/// Cubes a reduce pass keeps at least before grouping tiles (about 20 per SM of an H200).
const REDUCE_MIN_CUBES: u32 = 2048;

/// A device's profile and a caller's [`Tuning`]: the one table of choices every planner asks.
/// Each method is one entry, with its reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// The device.
    pub profile: DeviceProfile,
    /// The caller's overrides.
    pub tuning: Tuning,
}

impl Policy {
    /// The policy of `client`'s device under `tuning`.
    pub fn of<R: Runtime>(client: &ComputeClient<R>, tuning: &Tuning) -> Self {
        Self {
            profile: DeviceProfile::of(client),
            tuning: *tuning,
        }
    }

    /// The policy of `client`'s device without overrides (what the size queries plan with).
    pub fn default_of<R: Runtime>(client: &ComputeClient<R>) -> Self {
        Self::of(client, &Tuning::default())
    }

    /// Whether kernels use plane operations, for a per-call choice `p`: `Auto` defers to the
    /// tuning, then to what the runtime reports.
    pub fn plane_ops(&self, p: PlaneOps) -> bool {
        match (p, self.tuning.plane_ops) {
            (PlaneOps::Force, _) | (PlaneOps::Auto, PlaneOps::Force) => true,
            (PlaneOps::Off, _) | (PlaneOps::Auto, PlaneOps::Off) => false,
            (PlaneOps::Auto, PlaneOps::Auto) => self.profile.plane_ops,
        }
    }

    /// Tile ids from the cube position where cubes start in that order (CUDA: no ticket's
    /// atomic on the way in), else from a ticket (a cube that starts early would otherwise
    /// wait on predecessors that have not started).
    pub fn ordered_tiles(&self) -> bool {
        match self.tuning.tile_order {
            TileOrder::Position => true,
            TileOrder::Ticket => false,
            TileOrder::Auto => self.profile.forward_progress == ForwardProgress::Resident,
        }
    }

    /// The look-back's bounded wait: `spins` rounds, with the deep fold
    /// ([`DEEP_FOLD`](cubeprim_kernels::device::lookback::DEEP_FOLD)) where cubes have no
    /// forward-progress guarantee, so that even the deepest window's wait ends.
    pub fn lookback_spins(&self, spins: u32) -> u32 {
        crate::device::lookback_spins(
            spins,
            self.profile.forward_progress == ForwardProgress::Resident,
        )
    }

    /// Poll look-back state with plain loads: on CUDA, where atomic loads are read-modify-
    /// writes; elsewhere atomic loads.
    pub fn plain_reads(&self) -> bool {
        self.profile.is_cuda()
    }

    /// Staged selections load their data with their flags. H200, masked_select of 2^28 f32 at
    /// 50 % with a u8 mask: 0.741 / 0.739 ms against 0.789 / 0.787 ms without (56 registers
    /// instead of 32).
    pub fn select_prefetch(&self) -> bool {
        self.tuning.select_prefetch.unwrap_or(true)
    }

    /// Tiles one reduce cube folds for a pass of `tiles` tiles: enough cubes to fill the device
    /// ([`REDUCE_MIN_CUBES`]), at most [`REDUCE_GROUP`] tiles each (a cube per tile spends its
    /// time starting and leaving). H200, sum of 2^28 f32 (21 846 tiles): 8 tiles per cube
    /// 0.271 / 0.279 ms, 4: 0.273, 16: 0.295, one: 0.288 / 0.294 (BENCHMARKS.md at 52581a0,
    /// 2026-12-01 (H200), "Reduce: several tiles per cube").
    pub fn reduce_tiles_per_cube(&self, tiles: u32) -> u32 {
        self.tuning
            .reduce_tiles_per_cube
            .map(|g| g.clamp(1, 64))
            .unwrap_or_else(|| (tiles / REDUCE_MIN_CUBES).clamp(1, REDUCE_GROUP))
    }

    /// The in-cube row sort's tile override, if any.
    pub fn sort_row_tile(&self) -> Option<(u32, u32)> {
        self.tuning.sort_row_tile
    }

    /// Whether full-tile scatter kernels take the digit as constants: on CUDA, where a kernel
    /// compiles in well under a second; elsewhere one kernel serves every digit (llvmpipe
    /// takes seconds per kernel, and a sort of 32-bit keys would compile four).
    pub fn sort_const_digits(&self) -> bool {
        self.profile.is_cuda()
    }

    /// Whether CUDA's 32-wide ballot rankings use CUB's inline PTX: yes unless the tuning
    /// says no (on the H200 they took the u32 sort of 2^28 from 7.15-7.19 to 6.56-6.60 ms;
    /// BENCHMARKS.md at 52581a0, 2026-12-02 (H200), "CUB's PTX ballots in the radix ranking").
    pub fn ptx_ballot(&self) -> bool {
        self.profile.is_cuda()
            && self.profile.plane_width_min == 32
            && self.profile.plane_width_max == 32
            && self.tuning.ptx_ballot != Some(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(runtime: RuntimeKind) -> DeviceProfile {
        DeviceProfile {
            runtime,
            max_shared_bytes: 48 * 1024,
            max_units_per_cube: 1024,
            plane_width_min: 32,
            plane_width_max: 32,
            plane_ops: runtime == RuntimeKind::Cuda,
            plane_sync: true,
            copy_async: false,
            int64: true,
            forward_progress: if runtime == RuntimeKind::Cuda {
                ForwardProgress::Resident
            } else {
                ForwardProgress::None
            },
            max_buffer_bytes: 1 << 31,
            multiprocessors: None,
        }
    }

    #[test]
    fn overrides_win_and_the_default_follows_the_device() {
        let cuda = Policy {
            profile: profile(RuntimeKind::Cuda),
            tuning: Tuning::default(),
        };
        let wgpu = Policy {
            profile: profile(RuntimeKind::Wgpu),
            tuning: Tuning::default(),
        };
        assert!(cuda.ordered_tiles() && !wgpu.ordered_tiles());
        assert!(cuda.plane_ops(PlaneOps::Auto) && !wgpu.plane_ops(PlaneOps::Auto));
        assert!(cuda.ptx_ballot() && !wgpu.ptx_ballot());
        assert!(cuda.sort_const_digits() && !wgpu.sort_const_digits());
        assert_eq!(cuda.reduce_tiles_per_cube(21_846), 8);
        assert_eq!(cuda.reduce_tiles_per_cube(100), 1);

        let forced = Policy {
            tuning: Tuning {
                plane_ops: PlaneOps::Force,
                tile_order: TileOrder::Position,
                reduce_tiles_per_cube: Some(3),
                ptx_ballot: Some(false),
                runs_units: Some(48),
                ..Tuning::default()
            },
            ..wgpu
        };
        assert!(forced.ordered_tiles() && forced.plane_ops(PlaneOps::Auto));
        assert!(!forced.plane_ops(PlaneOps::Off), "a per-call choice wins");
        assert_eq!(forced.reduce_tiles_per_cube(100), 3);
        assert_eq!(
            forced.tuning.checked_runs_units(),
            None,
            "48 units is not a multiple of 32"
        );
        let cuda_no_ptx = Policy {
            tuning: forced.tuning,
            ..cuda
        };
        assert!(!cuda_no_ptx.ptx_ballot());
        let off = Policy {
            tuning: Tuning {
                plane_ops: PlaneOps::Off,
                tile_order: TileOrder::Ticket,
                ..Tuning::default()
            },
            ..cuda
        };
        assert!(!off.plane_ops(PlaneOps::Auto) && off.plane_ops(PlaneOps::Force));
        assert!(!off.ordered_tiles());
    }
}
