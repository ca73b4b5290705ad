//! CUDA C++ and MSL of every kernel variant the candle adapter launches, generated without a
//! device through the same code path as `cuda_fwd` / `metal_fwd` (launch geometry from
//! [`ScanLaunch`], definition and compilation from `cubeprim::candle::kernels`). Also checks
//! the argument layout the launches assume: the size of `info_st` against the bytes
//! [`scan_rows_info`] builds, and the MSL buffer slots. Nothing here runs on hardware.
//!
//! The candle adapter launches the scan kernel itself; the other families reach CUDA through
//! cubecl's `CudaRuntime` (`src/candle/bridge.rs`), which compiles their kernels with the same
//! cubecl-cpp compiler at run time: the CUDA C++ and MSL of those kernels (radix sort passes,
//! row sorts, top-k selection, searchsorted, histogram, compaction, run-length, reduce) are
//! generated in tests/codegen_sort.rs, codegen_histogram.rs and codegen_compact.rs.
#![cfg(feature = "candle")]

use cubeprim::candle::kernels::{scan_rows_info, scan_rows_source, Target, SCAN_ROWS};
use cubeprim::candle::{DeviceLimits, ScanLaunch};
use cubeprim::{DType, ScanOp, ScanOptions};
use cubeprim_kernels::device::ScanMode;

/// Shapes (with the scanned axis) that reach each route and vector width.
const SHAPES: [(&[usize], usize); 5] = [
    (&[3, 100], 1),    // one tile per row, 4-wide vectors (2-wide for 64-bit types)
    (&[3, 101], 1),    // one tile per row, scalars
    (&[101, 3], 0),    // a strided axis
    (&[2, 40_000], 1), // look-back, vectors
    (&[40_001, 2], 0), // look-back along a strided axis
];

/// Every dtype the CUDA kernels take.
const CUDA_DTYPES: [DType; 7] = [
    DType::F32,
    DType::F64,
    DType::F16,
    DType::BF16,
    DType::U32,
    DType::I32,
    DType::I64,
];

/// `(bytes of info_st, buffer slot of info)` read from the generated source.
fn info_size_cuda(src: &str) -> usize {
    let start = src
        .find("struct info_st {")
        .expect("CUDA source declares info_st");
    let body = &src[start..start + src[start..].find('}').unwrap()];
    body.split(';')
        .filter_map(|field| {
            let field = field.trim();
            let (ty, rest) = field.rsplit_once(' ')?;
            let ty = ty.rsplit(['{', ' ']).next()?;
            let width = match ty {
                "uint32" | "int32" | "float" | "uint" => 4,
                "uint64" | "int64" | "double" | "ulong" => 8,
                _ => return None,
            };
            let count: usize = rest.split_once('[')?.1.trim_end_matches(']').parse().ok()?;
            Some(width * count)
        })
        .sum()
}

fn options(i: usize) -> ScanOptions {
    let o = ScanOptions::default();
    [o, o.exclusive(), o.reverse(), o.exclusive().reverse()][i % 4]
}

/// Generates both sources for every dtype × op × indices × shape; returns the number of
/// kernels compiled.
fn every_variant(target: Target) -> usize {
    let (limits, dtypes): (_, &[DType]) = match target {
        Target::Cuda => (DeviceLimits::CUDA, &CUDA_DTYPES),
        // Metal has no f64.
        Target::Msl => (
            DeviceLimits::METAL,
            &[
                DType::F32,
                DType::F16,
                DType::BF16,
                DType::U32,
                DType::I32,
                DType::I64,
            ],
        ),
    };
    let mut count = 0;
    let mut routes = [false; 2];
    for &dtype in dtypes {
        for op in [ScanOp::Sum, ScanOp::Prod, ScanOp::Max, ScanOp::Min] {
            for indexed in [false, true] {
                if indexed && !matches!(op, ScanOp::Max | ScanOp::Min) {
                    continue;
                }
                for (s, &(shape, axis)) in SHAPES.iter().enumerate() {
                    let strides = cubeprim_strides(shape);
                    let opts = options(count + s);
                    let launch =
                        ScanLaunch::new(limits, shape, &strides, 0, axis, dtype, indexed, opts)
                            .unwrap();
                    routes[matches!(launch.mode, ScanMode::Lookback(_)) as usize] = true;
                    let src = scan_rows_source(dtype, op, &launch, target).unwrap_or_else(|e| {
                        panic!("{target:?} of {dtype} {op:?} {shape:?}/{axis}: {e}")
                    });
                    assert_eq!(src.name, SCAN_ROWS);
                    assert!(src.source.contains(SCAN_ROWS));
                    assert_eq!(src.threads, launch.cfg.threads);
                    let total: usize = shape.iter().product();
                    let info = scan_rows_info(&launch, total, total);
                    match target {
                        Target::Cuda => {
                            // Passed by value: the driver copies sizeof(info_st) bytes from
                            // the builder's data, so the two must agree.
                            assert_eq!(
                                info_size_cuda(&src.source),
                                info.len() * 8,
                                "{dtype} {op:?}"
                            );
                            assert!(src.source.contains("__grid_constant__ info_st"));
                            assert!(src.shared_bytes <= limits.max_shared_bytes);
                        }
                        Target::Msl => {
                            // The slots metal_fwd binds: ten buffers, then info at 10.
                            for slot in 0..11 {
                                assert!(
                                    src.source.contains(&format!("[[buffer({slot})]]")),
                                    "MSL binds buffer {slot}"
                                );
                            }
                            assert!(!src.source.contains("[[buffer(11)]]"));
                            assert!(src.source.contains("info_st& info [[buffer(10)]]"));
                        }
                    }
                    count += 1;
                }
            }
        }
    }
    assert_eq!(routes, [true, true], "both routes reached");
    count
}

fn cubeprim_strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len() - 1).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

#[test]
fn cuda_source_of_every_candle_kernel() {
    assert_eq!(every_variant(Target::Cuda), 7 * 6 * SHAPES.len());
}

#[test]
fn msl_of_every_candle_kernel() {
    assert_eq!(every_variant(Target::Msl), 6 * 6 * SHAPES.len());
}

#[test]
fn launch_geometry_follows_the_layout() {
    // A narrowed, transposed view: offset and strides reach the kernel's row layout.
    let l = ScanLaunch::new(
        DeviceLimits::CUDA,
        &[4, 6],
        &[1, 8],
        3,
        1,
        DType::F32,
        false,
        ScanOptions::default(),
    )
    .unwrap();
    assert_eq!(l.vec, 1, "a strided axis is not vectorised");
    assert_eq!((l.rows, l.n, l.in_stride, l.out_stride), (4, 6, 8, 1));
    assert_eq!(l.layout, vec![1, 4, 1, 6, 3]);
    assert_eq!(l.mode, ScanMode::SingleTile);
    assert_eq!(l.state_words, 0);
    // A long row: look-back, four-wide vectors, state for every tile.
    let l = ScanLaunch::new(
        DeviceLimits::CUDA,
        &[1 << 20],
        &[1],
        0,
        0,
        DType::F32,
        false,
        ScanOptions::default(),
    )
    .unwrap();
    assert_eq!(l.vec, 4);
    assert!(matches!(
        l.mode,
        ScanMode::Lookback(lb) if lb.plain_reads
    ));
    assert_eq!(
        l.num_tiles as usize,
        (1usize << 18).div_ceil(l.cfg.tile_vectors() as usize)
    );
    assert!(l.state_words > l.num_tiles as usize);
    assert!(ScanLaunch::new(
        DeviceLimits::METAL,
        &[8],
        &[1],
        0,
        0,
        DType::F32,
        false,
        ScanOptions::default().algorithm(cubeprim::ScanAlgorithm::ReduceThenScan),
    )
    .is_err());
}

/// The one-cube row sort the CUDA path launches on candle's stream (`src/candle/cuda_sort.rs`):
/// CUDA C++ for every key dtype and output form, its `info_st` the size of the bytes
/// [`radix_sort_rows_info`] builds, and exactly the parameters the launch passes (four buffers,
/// then info by value).
#[test]
fn cuda_source_of_the_row_sort() {
    use cubeprim::candle::kernels::{
        radix_sort_rows_info, radix_sort_rows_source, RowSortVariant, RADIX_SORT_ROWS,
    };
    use cubeprim_kernels::cube::RadixConfig;
    let mut count = 0;
    for (threads, items) in [(256, 16), (64, 4)] {
        for key in CUDA_DTYPES {
            for (indexed, write_keys) in [(true, true), (true, false), (false, true)] {
                let cfg = RadixConfig {
                    threads,
                    items,
                    plane_ops: true,
                    wide_counts: true,
                    plane_min: 32,
                    plane_max: 32,
                    plane_sync: true,
                    ptx_ballot: false,
                };
                let v = RowSortVariant {
                    key,
                    cfg,
                    indexed,
                    write_keys,
                };
                let src = radix_sort_rows_source(&v, Target::Cuda).unwrap();
                assert_eq!((src.name.as_str(), src.threads), (RADIX_SORT_ROWS, threads));
                let info = radix_sort_rows_info([7; 7], [100, 100, 100, 5]);
                assert_eq!(info_size_cuda(&src.source), info.len() * 8, "{v:?}");
                let start = src.source.find(RADIX_SORT_ROWS).unwrap();
                let params = &src.source[start..start + src.source[start..].find(')').unwrap()];
                assert_eq!(params.matches(',').count(), 4, "{params}");
                assert!(
                    params
                        .trim_end()
                        .ends_with("const __grid_constant__ info_st info"),
                    "{params}"
                );
                // Past 48 KiB the launch opts in (up to 227 KiB on sm_90).
                assert!(src.shared_bytes <= 227 * 1024, "{v:?}");
                count += 1;
            }
        }
    }
    assert_eq!(count, 2 * 7 * 3);
}

/// CUB's PTX ballots reach the row sort's CUDA C++ only: with `ptx_ballot` set (as the sort plan
/// sets it on CUDA), the CUDA source carries the `#define` and the MSL keeps its plain ballots.
#[test]
fn ptx_ballots_in_cuda_only() {
    use cubeprim::candle::kernels::{radix_sort_rows_source, RowSortVariant};
    use cubeprim_kernels::cube::RadixConfig;
    let v = RowSortVariant {
        key: DType::F32,
        cfg: RadixConfig {
            threads: 256,
            items: 16,
            plane_ops: true,
            wide_counts: true,
            plane_min: 32,
            plane_max: 32,
            plane_sync: true,
            ptx_ballot: true,
        },
        indexed: true,
        write_keys: true,
    };
    let cuda = radix_sort_rows_source(&v, Target::Cuda).unwrap().source;
    assert_eq!(cuda.matches("\n#define __shfl_sync(").count(), 16);
    let msl = radix_sort_rows_source(&v, Target::Msl).unwrap().source;
    assert!(!msl.contains("#define"));
    assert!(msl.contains("simd_ballot"));
}
