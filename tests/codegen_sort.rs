//! Metal (MSL) and CUDA C++ source of every sort kernel variant, generated without a device
//! (as tests/codegen.rs does for the scan): each `define_*` repeats what
//! `#[cube(launch_unchecked)]` generates for `CubeKernel::define`, minus the client. A variant
//! passes when both compilers report no error and the source names the kernel.

use crate::common::codegen;

use codegen::*;
use cubecl::prelude::*;
use cubeprim_kernels::cube::RadixConfig;
use cubeprim_kernels::device::radix_histogram::{
    radix_histogram, PassTiles, RadixDigitExpand, RadixGridExpand, RadixRowsExpand,
};
use cubeprim_kernels::device::radix_scatter::{
    radix_scatter, RadixValues, ScatterInputsExpand, ScatterOutputsExpand,
};
use cubeprim_kernels::device::radix_select_rows::radix_select_rows;
use cubeprim_kernels::device::radix_sort_rows::radix_sort_rows;
use cubeprim_kernels::device::search_sorted::search_sorted;
use half::{bf16, f16};

/// The histogram of `tiles` reading vectors of `vec` keys (1 for [`PassTiles::Checked`]).
fn define_histogram<T: Numeric>(
    name: &str,
    cfg: RadixConfig,
    device_len: bool,
    tiles: PassTiles,
    vec: usize,
) -> KernelDefinition {
    use radix_histogram::{_N, _T};
    type DT = DynamicScalar<_T>;
    type DN = DynamicSize<_N>;
    let (mut b, s) = settings(name, cfg.threads);
    register::<T, _T>(&mut b);
    b.scope.register_size::<DN>(vec);
    s.address_type.register(&mut b.scope);
    let keys = <Array<Vector<DT, DN>> as LaunchArg>::expand(&ARRAY, &mut b);
    let counts = <Array<u32> as LaunchArg>::expand_output(&ARRAY, &mut b);
    let layout = <Array<u32> as LaunchArg>::expand(&ARRAY, &mut b);
    let count = <Array<u32> as LaunchArg>::expand(&ARRAY, &mut b);
    let a: Vec<_> = (0..11).map(|_| u32_arg(&mut b)).collect();
    let [n, tpr, ng, gpr, ft, st, sd, sh, bits, fl, _] = a.try_into().ok().unwrap();
    radix_histogram::expand::<DT, DN>(
        &mut b.scope,
        vec,
        keys,
        counts,
        RadixRowsExpand { layout, count },
        RadixGridExpand {
            n,
            tiles_per_row: tpr,
            num_cubes: ng,
            cubes_per_row: gpr,
            first_tile: ft,
            in_stride: st,
            strided: sd,
        },
        RadixDigitExpand {
            shift: sh,
            bits,
            flip: fl,
        },
        cfg,
        device_len,
        tiles,
    );
    b.build(s)
}

/// [`define_scatter_tiles`] for any tile ([`PassTiles::Checked`]).
fn define_scatter<T: Numeric, VI: Numeric, VO: Numeric>(
    name: &str,
    cfg: RadixConfig,
    device_len: bool,
    values: RadixValues,
    write_keys: bool,
) -> KernelDefinition {
    define_scatter_tiles::<T, VI, VO>(
        name,
        cfg,
        device_len,
        values,
        write_keys,
        PassTiles::Checked,
    )
}

#[allow(clippy::too_many_arguments)]
fn define_scatter_tiles<T: Numeric, VI: Numeric, VO: Numeric>(
    name: &str,
    cfg: RadixConfig,
    device_len: bool,
    values: RadixValues,
    write_keys: bool,
    tiles: PassTiles,
) -> KernelDefinition {
    use radix_scatter::{_T, _VI, _VO};
    type DT = DynamicScalar<_T>;
    type Dvi = DynamicScalar<_VI>;
    type Dvo = DynamicScalar<_VO>;
    let (mut b, s) = settings(name, cfg.threads);
    register::<T, _T>(&mut b);
    register::<VI, _VI>(&mut b);
    register::<VO, _VO>(&mut b);
    s.address_type.register(&mut b.scope);
    let keys_in = <Array<DT> as LaunchArg>::expand(&ARRAY, &mut b);
    let values_in = <Array<Dvi> as LaunchArg>::expand(&ARRAY, &mut b);
    let keys_out = <Array<DT> as LaunchArg>::expand_output(&ARRAY, &mut b);
    let values_out = <Array<Dvo> as LaunchArg>::expand_output(&ARRAY, &mut b);
    let offsets = <Array<u32> as LaunchArg>::expand(&ARRAY, &mut b);
    let layout = <Array<u32> as LaunchArg>::expand(&ARRAY, &mut b);
    let count = <Array<u32> as LaunchArg>::expand(&ARRAY, &mut b);
    let a: Vec<_> = (0..11).map(|_| u32_arg(&mut b)).collect();
    let [n, tpr, nc, cpr, ft, st, sd, oc, sh, bits, fl] = a.try_into().ok().unwrap();
    radix_scatter::expand::<DT, Dvi, Dvo>(
        &mut b.scope,
        ScatterInputsExpand { keys_in, values_in },
        ScatterOutputsExpand {
            keys_out,
            values_out,
        },
        offsets,
        RadixRowsExpand { layout, count },
        RadixGridExpand {
            n,
            tiles_per_row: tpr,
            num_cubes: nc,
            cubes_per_row: cpr,
            first_tile: ft,
            in_stride: st,
            strided: sd,
        },
        oc,
        RadixDigitExpand {
            shift: sh,
            bits,
            flip: fl,
        },
        cfg,
        device_len,
        values,
        write_keys,
        tiles,
    );
    b.build(s)
}

fn define_rows<T: Numeric, X: Numeric>(
    name: &str,
    cfg: RadixConfig,
    indexed: bool,
    write_keys: bool,
) -> KernelDefinition {
    use radix_sort_rows::{_T, _X};
    type DT = DynamicScalar<_T>;
    type DX = DynamicScalar<_X>;
    let (mut b, s) = settings(name, cfg.threads);
    register::<T, _T>(&mut b);
    register::<X, _X>(&mut b);
    s.address_type.register(&mut b.scope);
    let keys_in = <Array<DT> as LaunchArg>::expand(&ARRAY, &mut b);
    let keys_out = <Array<DT> as LaunchArg>::expand_output(&ARRAY, &mut b);
    let idx_out = <Array<DX> as LaunchArg>::expand_output(&ARRAY, &mut b);
    let layout = <Array<u32> as LaunchArg>::expand(&ARRAY, &mut b);
    let a: Vec<_> = (0..8).map(|_| u32_arg(&mut b)).collect();
    let [rows, n, st, oc, bb, eb, fl, _] = a.try_into().ok().unwrap();
    radix_sort_rows::expand::<DT, DX>(
        &mut b.scope,
        keys_in,
        keys_out,
        idx_out,
        layout,
        rows,
        n,
        st,
        oc,
        bb,
        eb,
        fl,
        cfg,
        indexed,
        write_keys,
    );
    b.build(s)
}

fn define_select<T: Numeric, X: Numeric>(
    name: &str,
    cfg: RadixConfig,
    cand_items: u32,
) -> KernelDefinition {
    use radix_select_rows::{_T, _X};
    type DT = DynamicScalar<_T>;
    type DX = DynamicScalar<_X>;
    let (mut b, s) = settings(name, cfg.threads);
    register::<T, _T>(&mut b);
    register::<X, _X>(&mut b);
    s.address_type.register(&mut b.scope);
    let keys_in = <Array<DT> as LaunchArg>::expand(&ARRAY, &mut b);
    let keys_out = <Array<DT> as LaunchArg>::expand_output(&ARRAY, &mut b);
    let idx_out = <Array<DX> as LaunchArg>::expand_output(&ARRAY, &mut b);
    let layout = <Array<u32> as LaunchArg>::expand(&ARRAY, &mut b);
    let a: Vec<_> = (0..6).map(|_| u32_arg(&mut b)).collect();
    let [rows, n, st, k, kb, fl] = a.try_into().ok().unwrap();
    radix_select_rows::expand::<DT, DX>(
        &mut b.scope,
        keys_in,
        keys_out,
        idx_out,
        layout,
        rows,
        n,
        st,
        k,
        kb,
        fl,
        cfg,
        cand_items,
    );
    b.build(s)
}

fn define_search<T: Numeric, X: Numeric>(name: &str, right: bool) -> KernelDefinition {
    use search_sorted::{_T, _X};
    type DT = DynamicScalar<_T>;
    type DX = DynamicScalar<_X>;
    let (mut b, s) = settings(name, 256);
    register::<T, _T>(&mut b);
    register::<X, _X>(&mut b);
    s.address_type.register(&mut b.scope);
    let sorted = <Array<DT> as LaunchArg>::expand(&ARRAY, &mut b);
    let queries = <Array<DT> as LaunchArg>::expand(&ARRAY, &mut b);
    let out = <Array<DX> as LaunchArg>::expand_output(&ARRAY, &mut b);
    let a: Vec<_> = (0..6).map(|_| u32_arg(&mut b)).collect();
    let [n, m, total, rs, steps, _] = a.try_into().ok().unwrap();
    search_sorted::expand::<DT, DX>(
        &mut b.scope,
        sorted,
        queries,
        out,
        n,
        m,
        total,
        rs,
        steps,
        right,
    );
    b.build(s)
}

/// The split ranking over shared-memory scans, and the ballot ranking on 32-lane planes with
/// plane barriers (CUDA's shape).
const CFGS: [RadixConfig; 2] = [
    RadixConfig {
        threads: 128,
        items: 8,
        plane_ops: false,
        wide_counts: false,
        plane_min: 32,
        plane_max: 32,
        plane_sync: false,
        ptx_ballot: false,
    },
    RadixConfig {
        threads: 256,
        items: 16,
        plane_ops: true,
        wide_counts: true,
        plane_min: 32,
        plane_max: 32,
        plane_sync: true,
        ptx_ballot: false,
    },
];

/// The ballot ranking (plane operations) uses ballots, and plane barriers where the runtime
/// has them; the split ranking neither.
fn check_ranking(name: &str, cfg: RadixConfig, cuda: &str, msl: &str) {
    if cfg.ptx_ballot {
        check_ptx_ballots(name, cfg, cuda);
    } else {
        assert!(!cuda.contains("#define"), "{name}: a directive in CUDA C++");
        assert_eq!(
            cuda.contains("__ballot_sync"),
            cfg.plane_ops,
            "{name}: ballots in CUDA C++"
        );
    }
    // (Only CUDA takes the PTX form, whose carriers are shuffles in other languages.)
    assert_eq!(
        msl.contains("simd_ballot"),
        cfg.plane_ops && !cfg.ptx_ballot,
        "{name}: ballots in MSL"
    );
    assert_eq!(
        cuda.contains("__syncwarp"),
        cfg.plane_ops && cfg.plane_sync,
        "{name}: plane barriers in CUDA C++"
    );
}

/// CUB's PTX ballots (`RadixConfig::ptx_ballot`): each chunk of keys the ranking walks defines
/// `__shfl_sync` as the inline PTX, at the start of a line, and undefines it after; between the
/// two lie the chunk's eight carriers (one per digit bit) and no plain ballot. If cubecl
/// stopped writing multi-line comments verbatim, the directives would be lost and the carriers
/// would be plain shuffles: this catches it without a GPU.
fn check_ptx_ballots(name: &str, cfg: RadixConfig, cuda: &str) {
    let (mut defined, mut defines, mut undefines, mut carriers) = (false, 0, 0, 0);
    for line in cuda.lines() {
        if line.starts_with("#define __shfl_sync(mask_, v_, lane_) ") {
            assert!(!defined, "{name}: defined twice");
            assert!(
                line.contains("vote.sync.ballot.b32 %0, p, 0xffffffff; @!p not.b32 %0, %0;"),
                "{name}: {line}"
            );
            (defined, defines) = (true, defines + 1);
        } else if line.starts_with("#undef __shfl_sync") {
            assert!(defined, "{name}: undefined before defined");
            (defined, undefines) = (false, undefines + 1);
        } else if defined {
            assert!(!line.contains("__ballot_sync"), "{name}: a ballot: {line}");
            carriers += line.matches("__shfl_sync(").count();
        }
    }
    assert!(!defined, "{name}: left defined");
    assert_eq!((defines, undefines), (cfg.items, cfg.items), "{name}");
    assert_eq!(
        carriers,
        8 * cfg.items as usize,
        "{name}: one per digit bit and key"
    );
}

/// Every kernel for one key type; returns the number of variants compiled.
fn key_type<T: Numeric>(ty: &str) -> usize {
    let mut count = 0;
    for (c, &cfg) in CFGS.iter().enumerate() {
        for device_len in [false, true] {
            let name = format!("radix_histogram_{ty}_c{c}_d{}", device_len as u8);
            compile_both(&name, || {
                define_histogram::<T>(&name, cfg, device_len, PassTiles::Checked, 1)
            });
            count += 1;
        }
        // Groups of full tiles read as 16-byte vectors, the digit a constant (the third,
        // descending) and read from the arguments.
        let vec = 16 / size_of::<T>();
        for digit in [Some((16, 8, true)), None] {
            let name = format!("radix_histogram_{ty}_full{}_c{c}", digit.is_some() as u8);
            let tiles = PassTiles::Full { digit };
            compile_both(&name, || {
                define_histogram::<T>(&name, cfg, false, tiles, vec)
            });
            count += 1;
        }
        let variants: [(&str, RadixValues, bool); 4] = [
            ("keys", RadixValues::None, true),
            ("iota", RadixValues::Iota, false),
            ("load", RadixValues::Load, true),
            ("load_nokeys", RadixValues::Load, false),
        ];
        for (v, values, write_keys) in variants {
            let name = format!("radix_scatter_{ty}_{v}_c{c}");
            let (cuda, msl) = compile_both(&name, || {
                define_scatter::<T, u32, u32>(&name, cfg, c == 1, values, write_keys)
            });
            check_ranking(&name, cfg, &cuda, &msl);
            count += 1;
            if cfg.plane_ops {
                // Full tiles, the digit a constant (the third digit, descending), as CUDA runs
                // them.
                let name = format!("radix_scatter_{ty}_{v}_full_c{c}");
                let tiles = PassTiles::Full {
                    digit: Some((16, 8, true)),
                };
                let (cuda, msl) = compile_both(&name, || {
                    define_scatter_tiles::<T, u32, u32>(
                        &name, cfg, false, values, write_keys, tiles,
                    )
                });
                check_ranking(&name, cfg, &cuda, &msl);
                count += 1;
            }
        }
        let name = format!("radix_scatter_{ty}_widen_c{c}");
        compile_both(&name, || {
            define_scatter::<T, u32, i64>(&name, cfg, false, RadixValues::Load, false)
        });
        let name = format!("radix_scatter_{ty}_u64_c{c}");
        compile_both(&name, || {
            define_scatter::<T, u64, u64>(&name, cfg, false, RadixValues::Load, true)
        });
        let name = format!("radix_scatter_{ty}_f16_c{c}");
        compile_both(&name, || {
            define_scatter::<T, f16, f16>(&name, cfg, false, RadixValues::Load, true)
        });
        count += 3;
        for (indexed, write_keys) in [(false, true), (true, true), (true, false)] {
            let name = format!(
                "radix_sort_rows_{ty}_c{c}_i{}_k{}",
                indexed as u8, write_keys as u8
            );
            let (cuda, msl) = compile_both(&name, || {
                define_rows::<T, u32>(&name, cfg, indexed, write_keys)
            });
            if cfg.plane_ops {
                assert!(cuda.contains("__shfl"), "{name}: no shuffle in CUDA C++");
                assert!(msl.contains("simd_shuffle"), "{name}: no shuffle in MSL");
            }
            check_ranking(&name, cfg, &cuda, &msl);
            count += 1;
        }
        let name = format!("radix_sort_rows_{ty}_c{c}_i64");
        compile_both(&name, || define_rows::<T, i64>(&name, cfg, true, true));
        count += 1;
    }
    for right in [false, true] {
        for (x, wide) in [("u32", false), ("i64", true)] {
            let name = format!("search_sorted_{ty}_{x}_r{}", right as u8);
            if wide {
                compile_both(&name, || define_search::<T, i64>(&name, right));
            } else {
                compile_both(&name, || define_search::<T, u32>(&name, right));
            }
            count += 1;
        }
    }
    count
}

#[test]
fn sort_kernels_32_bit_keys() {
    assert_eq!(key_type::<u32>("u32"), 38);
    assert_eq!(key_type::<i32>("i32"), 38);
    assert_eq!(key_type::<f32>("f32"), 38);
}

#[test]
fn sort_kernels_16_bit_keys() {
    assert_eq!(key_type::<f16>("f16"), 38);
    assert_eq!(key_type::<bf16>("bf16"), 38);
}

#[test]
fn sort_kernels_64_bit_keys() {
    assert_eq!(key_type::<u64>("u64"), 38);
    assert_eq!(key_type::<i64>("i64"), 38);
    assert_eq!(key_type::<f64>("f64"), 38);
}

/// The packed argsort's first and last scatter passes (see `SortPlan::packed`), checked and on
/// full tiles with a constant digit, with either ranking: 4-byte keys to u64 words (f32, i32,
/// u32), u64 words to u32 or i64 indices. Its middle passes are the u64 keys-only scatter.
#[test]
fn packed_argsort_kernels() {
    fn both<T: Numeric, VO: Numeric>(name: &str, values: RadixValues) -> usize {
        let mut count = 0;
        for (c, &cfg) in CFGS.iter().enumerate() {
            let name = format!("{name}_c{c}");
            let (cuda, msl) = compile_both(&name, || {
                define_scatter::<T, u32, VO>(&name, cfg, false, values, false)
            });
            check_ranking(&name, cfg, &cuda, &msl);
            count += 1;
            if cfg.plane_ops {
                let name = format!("{name}_full");
                let tiles = PassTiles::Full {
                    digit: Some((8, 8, true)),
                };
                let (cuda, msl) = compile_both(&name, || {
                    define_scatter_tiles::<T, u32, VO>(&name, cfg, false, values, false, tiles)
                });
                check_ranking(&name, cfg, &cuda, &msl);
                count += 1;
            }
        }
        count
    }
    let pack = RadixValues::PackIota;
    let low = RadixValues::LowBits;
    let count = both::<f32, u64>("radix_scatter_f32_pack", pack)
        + both::<i32, u64>("radix_scatter_i32_pack", pack)
        + both::<u32, u64>("radix_scatter_u32_pack", pack)
        + both::<u64, u32>("radix_scatter_u64_low", low)
        + both::<u64, i64>("radix_scatter_u64_low_i64", low);
    assert_eq!(count, 15);
}

/// The selection top-k for one key type: both tiles, a small and a larger candidate tile,
/// u32 and i64 positions; the histogram uses shared-memory atomics.
fn select_key_type<T: Numeric>(ty: &str) -> usize {
    let mut count = 0;
    for (c, &cfg) in CFGS.iter().enumerate() {
        for cand_items in [1, 4] {
            let name = format!("radix_select_rows_{ty}_c{c}_ci{cand_items}");
            let (cuda, msl) =
                compile_both(&name, || define_select::<T, u32>(&name, cfg, cand_items));
            assert!(cuda.contains("atomicAdd"), "{name}: no atomic in CUDA C++");
            assert!(msl.contains("atomic_fetch_add"), "{name}: no atomic in MSL");
            count += 1;
        }
        let name = format!("radix_select_rows_{ty}_c{c}_i64");
        compile_both(&name, || define_select::<T, i64>(&name, cfg, 2));
        count += 1;
    }
    count
}

#[test]
fn select_kernels_every_key_size() {
    assert_eq!(select_key_type::<f32>("f32"), 6);
    assert_eq!(select_key_type::<i32>("i32"), 6);
    assert_eq!(select_key_type::<u32>("u32"), 6);
    assert_eq!(select_key_type::<f16>("f16"), 6);
    assert_eq!(select_key_type::<bf16>("bf16"), 6);
    assert_eq!(select_key_type::<f64>("f64"), 6);
    assert_eq!(select_key_type::<i64>("i64"), 6);
}

/// The ballot ranking for plane widths from 8 to 128 (four ballot words) without plane
/// barriers: the shape it takes on a wgpu adapter that reports no fixed width.
#[test]
fn ballot_ranking_any_plane_width() {
    let cfg = RadixConfig {
        threads: 128,
        items: 4,
        plane_ops: true,
        wide_counts: false,
        plane_min: 8,
        plane_max: 128,
        plane_sync: false,
        ptx_ballot: false,
    };
    let name = "radix_scatter_u32_iota_w4";
    let (cuda, msl) = compile_both(name, || {
        define_scatter::<u32, u32, u32>(name, cfg, false, RadixValues::Iota, true)
    });
    check_ranking(name, cfg, &cuda, &msl);
    let name = "radix_sort_rows_f32_w4";
    let (cuda, msl) = compile_both(name, || define_rows::<f32, u32>(name, cfg, true, true));
    check_ranking(name, cfg, &cuda, &msl);
}

/// The ballot ranking with CUB's PTX ballots (CUDA, 32-lane planes) in every kernel that ranks
/// by ballots: the device-wide scatters (checked and full tiles, keys with loaded, packed or
/// low-bit values) and the in-cube row sort (whose other form tests digit
/// bits through masks).
#[test]
fn ptx_ballot_kernels() {
    let cfg = RadixConfig {
        ptx_ballot: true,
        ..CFGS[1]
    };
    let full = |shift| PassTiles::Full {
        digit: Some((shift, 8, false)),
    };
    let mut sources = vec![];
    let name = "radix_scatter_u32_keys_ptx";
    sources.push(compile_both(name, || {
        define_scatter::<u32, u32, u32>(name, cfg, true, RadixValues::None, true)
    }));
    let name = "radix_scatter_u32_keys_full_ptx";
    sources.push(compile_both(name, || {
        define_scatter_tiles::<u32, u32, u32>(name, cfg, false, RadixValues::None, true, full(8))
    }));
    let name = "radix_scatter_f32_load_full_ptx";
    sources.push(compile_both(name, || {
        define_scatter_tiles::<f32, u32, u32>(name, cfg, false, RadixValues::Load, true, full(0))
    }));
    let name = "radix_scatter_f32_pack_full_ptx";
    sources.push(compile_both(name, || {
        define_scatter_tiles::<f32, u32, u64>(
            name,
            cfg,
            false,
            RadixValues::PackIota,
            false,
            full(0),
        )
    }));
    let name = "radix_scatter_u64_low_full_ptx";
    sources.push(compile_both(name, || {
        define_scatter_tiles::<u64, u32, u32>(
            name,
            cfg,
            false,
            RadixValues::LowBits,
            false,
            full(56),
        )
    }));
    for (rows_cfg, tag) in [
        (cfg, "256x16"),
        (
            RadixConfig {
                threads: 64,
                items: 4,
                ..cfg
            },
            "64x4",
        ),
    ] {
        let name = format!("radix_sort_rows_f32_i64_ptx_{tag}");
        let (cuda, msl) = compile_both(&name, || {
            define_rows::<f32, i64>(&name, rows_cfg, true, true)
        });
        check_ranking(&name, rows_cfg, &cuda, &msl);
    }
    for (i, (cuda, msl)) in sources.iter().enumerate() {
        check_ranking(&format!("variant {i}"), cfg, cuda, msl);
    }
}

/// The shared arrays of a CUDA source: (C++ type, byte offset, bytes), in offset order.
fn shared_arrays(cuda: &str) -> Vec<(String, usize, usize)> {
    let mut out = vec![];
    let mut bytes = None;
    for line in cuda.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("// Shared array size: ") {
            let b = rest
                .split(", ")
                .nth(1)
                .and_then(|b| b.strip_suffix(" bytes"));
            bytes = b.and_then(|b| b.parse::<usize>().ok());
        } else if let (Some(at), true) = (
            line.find("reinterpret_cast<"),
            line.contains("dynamic_shared_mem["),
        ) {
            let rest = &line[at + "reinterpret_cast<".len()..];
            let ty = rest.split('*').next().unwrap().to_string();
            let off = rest.split("dynamic_shared_mem[").nth(1).unwrap();
            let off: usize = off.split(']').next().unwrap().parse().unwrap();
            out.push((ty, off, bytes.take().expect("a size before each array")));
        }
    }
    out.sort_by_key(|a| a.1);
    out
}

/// The in-cube row sort with the ballot ranking places its shared memory the same way in every
/// process: the keys at byte 0, then one u32 array (positions, counters, scan scratch), instead
/// of four arrays in the optimiser's hash order (its speed changed with that order).
#[test]
fn row_sort_shared_layout_is_fixed() {
    let cfg = RadixConfig {
        ptx_ballot: true,
        ..CFGS[1]
    };
    let small = RadixConfig {
        threads: 64,
        items: 4,
        ..cfg
    };
    let check = |name: &str, cuda: &str, key_ty: &str, key_size: usize, c: RadixConfig, indexed| {
        let arrays = shared_arrays(cuda);
        let slots = cubeprim_kernels::cube::radix_slots(c.tile_len());
        let keys = (slots * key_size).next_multiple_of(4);
        let words = cubeprim_kernels::device::radix_sort_rows::u32_words(&c, indexed);
        assert_eq!(
            arrays,
            vec![
                (key_ty.to_string(), 0, slots * key_size),
                ("uint32".to_string(), keys, 4 * words)
            ],
            "{name}: {arrays:?}"
        );
    };
    for (c, tag) in [(cfg, "256x16"), (small, "64x4")] {
        let name = format!("radix_sort_rows_f32_i64_layout_{tag}");
        let (cuda, _) = compile_both(&name, || define_rows::<f32, i64>(&name, c, true, true));
        check(&name, &cuda, "float", 4, c, true);
        let name = format!("radix_sort_rows_f16_keys_layout_{tag}");
        let (cuda, _) = compile_both(&name, || define_rows::<f16, u32>(&name, c, false, true));
        check(&name, &cuda, "__half", 2, c, false);
        let name = format!("radix_sort_rows_u64_u32_layout_{tag}");
        let (cuda, _) = compile_both(&name, || define_rows::<u64, u32>(&name, c, true, false));
        check(&name, &cuda, "uint64", 8, c, true);
    }
}

/// `CUBEPRIM_DUMP=dir cargo test --test suite codegen_sort::dump` writes the CUDA C++ of the H200
/// bench's kernels: the histogram (full tiles) and scatter of the u32 sort, the scatter of the
/// f32 argsort (first pass: positions; later passes: loaded u32 indices), the first and last
/// passes of the packed argsort, and the in-cube row
/// sort of f32 with indices, on the tile 256 units x 16 keys (`CUBEPRIM_DUMP_SORT_TILE=384x20`
/// picks another; `CUBEPRIM_DUMP_SORT_SHIFT` the full-tile kernels' digit) with the ballot ranking
/// (CUB's PTX ballots, as on CUDA, unless `CUBEPRIM_DUMP_PTX_BALLOT=0`).
#[test]
fn dump() {
    let Ok(dir) = std::env::var("CUBEPRIM_DUMP") else {
        return;
    };
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = CFGS[1];
    // `CUBEPRIM_DUMP_SORT_TILE=UNITSxKEYS`: another tile than 256 x 16.
    let (threads, items) = env_tile("CUBEPRIM_DUMP_SORT_TILE").unwrap_or((cfg.threads, cfg.items));
    let cfg = RadixConfig {
        threads,
        items,
        wide_counts: false,
        ptx_ballot: std::env::var("CUBEPRIM_DUMP_PTX_BALLOT").as_deref() != Ok("0"),
        ..cfg
    };
    let write = |name: &str, src: String| std::fs::write(format!("{dir}/{name}.cu"), src).unwrap();
    // `CUBEPRIM_DUMP_SORT_SHIFT=8`: the digit at another shift than 0 (ptxas gave the scatter of
    // 256 x 16 48 registers at shifts 0 and 24, 62-64 at 8 and 16 under ncu; BENCHMARKS.md at
    // 52581a0, 2026-12-02 (H200), "Where the u32 sort's time goes").
    let shift = std::env::var("CUBEPRIM_DUMP_SORT_SHIFT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let full = PassTiles::Full {
        digit: Some((shift, 8, false)),
    };
    let name = "radix_histogram_u32_full";
    let (cuda, _) = compile_both(name, || define_histogram::<u32>(name, cfg, false, full, 4));
    write(name, cuda);
    let name = "radix_scatter_u32_keys_full";
    let (cuda, _) = compile_both(name, || {
        define_scatter_tiles::<u32, u32, u32>(name, cfg, false, RadixValues::None, true, full)
    });
    write(name, cuda);
    for (name, values) in [
        ("radix_scatter_f32_iota_full", RadixValues::Iota),
        ("radix_scatter_f32_load_full", RadixValues::Load),
    ] {
        let (cuda, _) = compile_both(name, || {
            define_scatter_tiles::<f32, u32, u32>(name, cfg, false, values, true, full)
        });
        write(name, cuda);
    }
    let name = "radix_scatter_u32_keys";
    let (cuda, _) = compile_both(name, || {
        define_scatter::<u32, u32, u32>(name, cfg, false, RadixValues::None, true)
    });
    write(name, cuda);
    let name = "radix_scatter_f32_iota";
    let (cuda, _) = compile_both(name, || {
        define_scatter::<f32, u32, u32>(name, cfg, false, RadixValues::Iota, true)
    });
    write(name, cuda);
    let name = "radix_scatter_f32_load";
    let (cuda, _) = compile_both(name, || {
        define_scatter::<f32, u32, u32>(name, cfg, false, RadixValues::Load, true)
    });
    write(name, cuda);
    // The packed argsort's first and last passes (f32 keys, u32 indices).
    let name = "radix_scatter_f32_pack_full";
    let (cuda, _) = compile_both(name, || {
        define_scatter_tiles::<f32, u32, u64>(name, cfg, false, RadixValues::PackIota, false, full)
    });
    write(name, cuda);
    let name = "radix_scatter_u64_low_full";
    let tiles = PassTiles::Full {
        digit: Some((56, 8, false)),
    };
    let (cuda, _) = compile_both(name, || {
        define_scatter_tiles::<u64, u32, u32>(name, cfg, false, RadixValues::LowBits, false, tiles)
    });
    write(name, cuda);
    let name = "radix_sort_rows_f32_i64";
    let (cuda, _) = compile_both(name, || define_rows::<f32, i64>(name, cfg, true, true));
    write(name, cuda);
}
