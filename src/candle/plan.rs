//! The launch of a scan on a candle device (CUDA, Metal): the crate's own scan plan
//! ([`ScanPlan::with_limits`], from the device's [`DeviceLimits`] since candle's devices have no
//! cubecl client), plus what launching it by hand needs: the kernel mode, the grid, the state
//! size and the state's epoch.

use crate::scan::{DeviceLimits, ScanAlgorithm, ScanOptions, ScanPlan};
use crate::{DType, Error, Result};
use cubeprim_kernels::device::ScanMode;

/// One scan launch: the plan (fields reachable through `Deref`) and its arguments.
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct ScanLaunch {
    pub plan: ScanPlan,
    pub mode: ScanMode,
    /// Cubes along x and y (2-D past 65 535).
    pub cubes: (u32, u32),
    /// u32 words of look-back state (0 for single tiles).
    pub state_words: usize,
    /// Epoch and ticket base of the state (1 and 0 for a zeroed state; see
    /// [`crate::Workspace`] for reusing one without clearing it).
    pub epoch: u32,
    pub counter_base: u32,
}

impl std::ops::Deref for ScanLaunch {
    type Target = ScanPlan;
    fn deref(&self) -> &ScanPlan {
        &self.plan
    }
}

impl ScanLaunch {
    /// The launch for a view (`dims`, `strides`, `offset` in elements) scanned along `axis`
    /// into a contiguous output.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        limits: DeviceLimits,
        dims: &[usize],
        strides: &[usize],
        offset: usize,
        axis: usize,
        dtype: DType,
        indexed: bool,
        opts: ScanOptions,
    ) -> Result<Self> {
        if opts.algorithm == ScanAlgorithm::ReduceThenScan {
            return Err(Error::Unsupported(
                "candle devices run the single-pass scan; use Auto or DecoupledLookback".into(),
            ));
        }
        let plan = ScanPlan::with_limits(
            limits, dims, strides, offset, axis, dtype, indexed, opts, false,
        )?;
        Ok(Self {
            mode: plan.mode(),
            cubes: crate::device::grid_2d(plan.num_tiles),
            state_words: plan.state_bytes / 4,
            epoch: 1,
            counter_base: 0,
            plan,
        })
    }

    /// The seven u32 scalars of `scan_rows`, in parameter order.
    pub fn scalars(&self) -> [u32; 7] {
        [
            self.n_vec,
            self.tiles_per_row,
            self.num_tiles,
            self.in_stride,
            self.out_stride,
            self.epoch,
            self.counter_base,
        ]
    }
}
