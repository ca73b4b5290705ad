//! Picking the best device: CUDA, then wgpu, then the CPU path.

/// Which backend a program runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// cubecl's CUDA runtime (feature `cuda`).
    Cuda,
    /// cubecl's wgpu runtime: Vulkan, Metal or DX12 (feature `wgpu`).
    Wgpu,
    /// No device: the CPU implementation ([`crate::cpu`]).
    Cpu,
}

/// Runs `f`, turning a panic into `false` without printing it (cubecl panics when a runtime
/// has no device; that is an answer here, not an error).
#[cfg(any(feature = "cuda", feature = "wgpu"))]
fn quietly(f: impl FnOnce() + std::panic::UnwindSafe) -> bool {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let ok = std::panic::catch_unwind(f).is_ok();
    std::panic::set_hook(hook);
    ok
}

/// Whether a CUDA device can be opened (the driver is loaded at run time).
#[cfg(feature = "cuda")]
pub fn cuda_available() -> bool {
    quietly(|| {
        use cubecl::Runtime;
        let client = cubecl::cuda::CudaRuntime::client(&Default::default());
        let _ = client.properties();
    })
}

/// Whether a wgpu adapter can be opened.
#[cfg(feature = "wgpu")]
pub fn wgpu_available() -> bool {
    quietly(|| {
        use cubecl::Runtime;
        let client = cubecl::wgpu::WgpuRuntime::client(&Default::default());
        let _ = client.properties();
    })
}

impl Backend {
    /// The backend named `cuda`, `wgpu` or `cpu`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "cuda" => Some(Backend::Cuda),
            "wgpu" => Some(Backend::Wgpu),
            "cpu" => Some(Backend::Cpu),
            _ => None,
        }
    }
}

/// The best backend found: CUDA → wgpu → CPU.
pub fn best_backend() -> Backend {
    #[cfg(feature = "cuda")]
    if cuda_available() {
        return Backend::Cuda;
    }
    #[cfg(feature = "wgpu")]
    if wgpu_available() {
        return Backend::Wgpu;
    }
    Backend::Cpu
}

/// The backend `name`d (`cuda`, `wgpu` or `cpu`, e.g. a program's argument or environment
/// variable, which the library itself never reads), else [`best_backend`].
pub fn best_backend_or(name: Option<&str>) -> Backend {
    name.and_then(Backend::from_name)
        .unwrap_or_else(best_backend)
}

/// The 2-D grid `(x, y)` that launches `cubes` cubes (at least one), `x` at most 65535 (the
/// widest grid dimension every runtime allows), with fewer than `y` cubes past `cubes`. A
/// cube's linear position `x + y * x_count` keeps the launch order. (Rows of 65535 wasted up to
/// 65534 empty cubes: 2^28 u32 keys in tiles of 4096 launched 131070 cubes for 65536 tiles.)
pub(crate) fn grid_2d(cubes: u32) -> (u32, u32) {
    let y = cubes.div_ceil(65535).max(1);
    (cubes.div_ceil(y).max(1), y)
}

#[doc(hidden)]
/// The 2-D cube count of `cubes` cubes that every cubeprim launch uses: rows of at most 65535
/// cubes, fewer than a row of cubes past the count (see `grid_2d`). A kernel recovers the linear
/// position from `CUBE_POS`.
pub fn cube_count_2d(cubes: u32) -> cubecl::CubeCount {
    let (x, y) = grid_2d(cubes);
    cubecl::CubeCount::Static(x, y, 1)
}

/// The look-back's `spins` for a runtime: [`DEEP_FOLD`](cubeprim_kernels::device::lookback::DEEP_FOLD)
/// set where cubes have no forward-progress guarantee between them (every runtime but CUDA), so
/// the deepest window's wait is bounded there; CUDA's kernels are built without the fold.
pub(crate) fn lookback_spins(spins: u32, cuda: bool) -> u32 {
    if cuda {
        spins
    } else {
        spins | cubeprim_kernels::device::lookback::DEEP_FOLD
    }
}

#[cfg(test)]
mod tests {
    use super::grid_2d;

    #[test]
    fn grid_2d_covers_the_count_with_fewer_than_a_row_of_empty_cubes() {
        let mut counts: Vec<u32> = vec![0, 1, 2, 255, 65_534, 65_535, 65_536, 65_537, 131_070];
        counts.extend([
            131_071,
            262_144,
            327_675,
            1 << 24,
            (1 << 24) + 1,
            u32::MAX / 2,
        ]);
        for c in counts {
            let (x, y) = grid_2d(c);
            let launched = x as u64 * y as u64;
            assert!((1..=65_535).contains(&x), "{c}: x = {x}");
            assert!(launched >= c.max(1) as u64, "{c}: {x} x {y}");
            assert!(launched - (c.max(1) as u64) < y as u64, "{c}: {x} x {y}");
        }
        assert_eq!(grid_2d(65_536), (32_768, 2));
        assert_eq!(grid_2d(262_144), (52_429, 5));
    }
}
