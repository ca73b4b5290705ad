//! Device sorts (wgpu; lavapipe in CI) against the CPU reference `cubeprim::cpu`: a stable
//! `sort_by` with a total order (NaN last in ascending order, `-0.0` equal to `+0.0`, equal keys
//! in input order). Keys, values and indices must match exactly, bit for bit.
//!
//! Refusals accepted: dtypes the runtime lacks (`UnsupportedDType`: bf16 on lavapipe).
//! Each kernel variant (key type × tile × flags) costs a shader compile on lavapipe, so sizes
//! are picked to hit the tile boundaries of the routes rather than swept.
//!
//! Without a device the tests skip, except under `CI=true`, where they fail
//! (`common::client`).

use crate::common;

use common::*;
use cubeprim::cpu::{self, SortElement};
use cubeprim::{
    DType, DeviceTensor, Element, Error, IndexType, Len, Payload, PlaneOps, Side, SortOptions,
    SortTuning, TopKMethod, Workspace,
};
use half::{bf16, f16};
use rand::rngs::StdRng;
use rand::Rng;

/// The two tile rankings: plane ballots (forced: lavapipe's adapter reports no plane
/// operations, yet its subgroups run them) and bit splits over shared-memory scans.
const RANKINGS: [PlaneOps; 2] = [PlaneOps::Force, PlaneOps::Off];

fn ranked(p: PlaneOps) -> SortOptions {
    SortOptions::default().plane_ops(p)
}

fn bytes_eq<E: Element>(a: &[E], b: &[E]) -> bool {
    a.len() == b.len() && bytemuck::cast_slice::<E, u8>(a) == bytemuck::cast_slice::<E, u8>(b)
}

fn first_diff<E: Element>(a: &[E], b: &[E]) -> String {
    let i = (0..a.len().min(b.len()))
        .find(|&i| bytemuck::bytes_of(&a[i]) != bytemuck::bytes_of(&b[i]))
        .unwrap_or(a.len().min(b.len()));
    format!(
        "lengths {} / {}; first difference at {i}: got {:?}, want {:?}",
        a.len(),
        b.len(),
        a.get(i),
        b.get(i)
    )
}

fn read_idx(c: &Client, t: &DeviceTensor<R>) -> Vec<i64> {
    match t.dtype {
        DType::U32 => t.to_vec::<u32>(c).into_iter().map(i64::from).collect(),
        DType::I64 => t.to_vec::<i64>(c),
        d => panic!("index dtype {d}"),
    }
}

/// Sort-with-indices of the view `x` (its data `data`, row-major) against the reference.
fn check_view<E: SortElement>(
    c: &Client,
    ws: &mut Workspace<R>,
    x: &DeviceTensor<R>,
    data: &[E],
    opts: SortOptions,
    index: IndexType,
) {
    let n = *x.shape.last().unwrap();
    let what = format!(
        "{} shape {:?} strides {:?} {opts:?} {index:?}",
        E::DTYPE,
        x.shape,
        x.strides
    );
    let (v, i) = cubeprim::sort_with_indices(c, x, index, opts, ws)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(v.shape, x.shape, "{what}");
    assert_eq!(i.dtype, index.dtype(), "{what}");
    let want_i = cpu::argsort_rows(data, n, opts.descending);
    let want_v = cpu::permute_rows(data, n, &want_i).unwrap();
    let got_v: Vec<E> = v.to_vec(c);
    assert!(
        bytes_eq(&got_v, &want_v),
        "{what}: values: {}",
        first_diff(&got_v, &want_v)
    );
    let got_i = read_idx(c, &i);
    let want_i: Vec<i64> = want_i.into_iter().map(i64::from).collect();
    assert!(
        got_i == want_i,
        "{what}: indices: {}",
        first_diff(&got_i, &want_i)
    );
}

fn check_rows<E: SortElement>(
    c: &Client,
    ws: &mut Workspace<R>,
    data: &[E],
    shape: &[usize],
    opts: SortOptions,
    index: IndexType,
) {
    let x = upload(c, data, shape);
    check_view(c, ws, &x, data, opts, index);
}

/// Random keys with the type's special values mixed in: extremes (±inf / MIN / MAX), NaN,
/// ±0, and many ties.
fn special<E: TestElem>(rng: &mut StdRng, n: usize) -> Vec<E> {
    let mut v: Vec<E> = (0..n)
        .map(|_| match rng.random_range(0..10) {
            0 => E::top(),
            1 => E::bottom(),
            2 => E::nan().unwrap_or(E::top()),
            3 => E::from_f64(0.0),
            4 => E::from_f64(if E::DTYPE.is_float() { -0.0 } else { 1.0 }),
            5 => E::from_f64(2.0),
            _ => E::wide(rng),
        })
        .collect();
    if let (Some(nan), true) = (E::nan(), n > 3) {
        // A negative NaN too: it must sort with the others, last.
        let b = bytemuck::bytes_of(&nan).to_vec();
        let mut neg = b.clone();
        *neg.last_mut().unwrap() |= 0x80;
        v[1] = *bytemuck::from_bytes::<E>(&neg);
    }
    v
}

fn dtype_case<E: TestElem + SortElement>(c: &Client, ws: &mut Workspace<R>, seed: u64) {
    if !supports(c, E::DTYPE) {
        let x = upload(c, &[E::from_f64(1.0)], &[1]);
        let e = cubeprim::sort(c, &x, SortOptions::default(), ws).unwrap_err();
        assert!(matches!(e, Error::UnsupportedDType { .. }), "{e}");
        return;
    }
    let mut r = rng(seed);
    // In one cube ([7, 300], [2, 1000]), and device-wide (1-D 5000: tiles of at most 2048).
    for (shape, index) in [
        (vec![7, 300], IndexType::U32),
        (vec![2, 1000], IndexType::I64),
        (vec![5000], IndexType::U32),
    ] {
        let data: Vec<E> = special(&mut r, shape.iter().product());
        for p in RANKINGS {
            for opts in [ranked(p), ranked(p).descending()] {
                check_rows(c, ws, &data, &shape, opts, index);
            }
        }
    }
}

/// Forcing plane operations selects the ballot ranking on this device (lavapipe's subgroups
/// included), in both routes; turning them off selects the split ranking.
#[test]
fn rankings_follow_the_plane_setting() {
    let Some(c) = client() else { return };
    for shape in [&[5usize, 1000][..], &[100_000]] {
        for p in RANKINGS {
            let plan = cubeprim::sort_plan(
                &c,
                shape,
                DType::F32,
                Payload::Indices(IndexType::U32),
                false,
                ranked(p),
            )
            .unwrap();
            assert_eq!(
                plan.cfg.plane_ops,
                p == PlaneOps::Force,
                "{shape:?} {p:?}: {plan:?}"
            );
            if p == PlaneOps::Force {
                eprintln!("{shape:?}: {:?} tile {:?}", plan.route, plan.cfg);
            }
        }
    }
}

#[test]
fn every_key_type_with_special_values() {
    let Some(c) = client() else { return };
    let mut ws = workspace();
    dtype_case::<u32>(&c, &mut ws, 1);
    dtype_case::<i32>(&c, &mut ws, 2);
    dtype_case::<f32>(&c, &mut ws, 3);
    dtype_case::<f16>(&c, &mut ws, 4);
    dtype_case::<bf16>(&c, &mut ws, 5);
    dtype_case::<f64>(&c, &mut ws, 6);
    dtype_case::<i64>(&c, &mut ws, 7);
    dtype_case::<u64>(&c, &mut ws, 8);
}

#[test]
fn f16_and_bf16_every_bit_pattern() {
    // All 65536 patterns of a 16-bit float (subnormals, both zeros, every NaN), shuffled.
    let Some(c) = client() else { return };
    let mut ws = workspace();
    let mut r = rng(11);
    let mut bits: Vec<u16> = (0..=u16::MAX).collect();
    for i in (1..bits.len()).rev() {
        bits.swap(i, r.random_range(0..=i));
    }
    let h: Vec<f16> = bits.iter().map(|&b| f16::from_bits(b)).collect();
    check_rows(
        &c,
        &mut ws,
        &h,
        &[65536],
        SortOptions::default(),
        IndexType::U32,
    );
    if supports(&c, DType::BF16) {
        let b: Vec<bf16> = bits.iter().map(|&b| bf16::from_bits(b)).collect();
        check_rows(
            &c,
            &mut ws,
            &b,
            &[65536],
            SortOptions::default(),
            IndexType::U32,
        );
    }
}

/// Keys-only sort and argsort of 1-D u32 keys of length `n`.
fn check_1d(c: &Client, ws: &mut Workspace<R>, r: &mut StdRng, n: usize, p: PlaneOps) {
    let data: Vec<u32> = (0..n).map(|_| r.random()).collect();
    let x = upload(c, &data, &[n]);
    let got: Vec<u32> = cubeprim::sort(c, &x, ranked(p), ws).unwrap().to_vec(c);
    let mut want = data.clone();
    want.sort();
    assert!(got == want, "sort n={n} {p:?}: {}", first_diff(&got, &want));
    let idx = cubeprim::argsort(c, &x, IndexType::U32, ranked(p).descending(), ws).unwrap();
    let got = read_idx(c, &idx);
    let want: Vec<i64> = cpu::argsort_rows(&data, n, true)
        .into_iter()
        .map(i64::from)
        .collect();
    assert!(
        got == want,
        "argsort n={n} {p:?}: {}",
        first_diff(&got, &want)
    );
}

#[test]
fn lengths_around_tiles_and_powers_of_two() {
    let Some(c) = client() else { return };
    let mut ws = workspace();
    let mut r = rng(21);
    // One cube up to 2048 keys on lavapipe; device-wide tiles of 2048 u32 keys above.
    for n in [
        0,
        1,
        2,
        7,
        33,
        1023,
        2047,
        2048,
        2049,
        4095,
        4097,
        65537,
        (1 << 20) - 1,
    ] {
        for p in RANKINGS {
            check_1d(&c, &mut ws, &mut r, n, p);
        }
    }
}

/// Forced tile shapes of the device-wide passes, with one-bit ranking (32-bit counters) and
/// two-bit ranking (64-bit counters, where the runtime has them), and 12 keys per unit as in the
/// key-value passes' tile on large devices (512 x 12; its 512 units need 64 planes' ballot
/// counters on lavapipe's 8-wide planes, more than its 32 KiB of shared memory), and 96 x 5:
/// units that are 3 x 2^k, as in the keys-only tile of CUDA's plan (384 x 20, too large for
/// lavapipe's shared memory), with an odd count of keys each, and 96 x 8 as the packed
/// argsort's 8-byte tile there (384 x 16).
#[test]
fn tuned_tiles_and_one_bit_ranking() {
    let Some(c) = client() else { return };
    let mut ws = workspace();
    let mut r = rng(23);
    let n = 9000;
    let data: Vec<i32> = (0..n).map(|_| r.random_range(-100..100)).collect();
    for p in RANKINGS {
        for (threads, items, wide_counts) in [
            (64, 4, false),
            (128, 8, false),
            (64, 4, true),
            (64, 12, false),
            (96, 5, false),
            (96, 8, false),
        ] {
            let opts = ranked(p).tuning(SortTuning {
                threads,
                items,
                wide_counts,
            });
            check_rows(&c, &mut ws, &data, &[n], opts, IndexType::U32);
            check_rows(&c, &mut ws, &data, &[n], opts.descending(), IndexType::U32);
        }
    }
    let bad = SortOptions::default().tuning(SortTuning {
        threads: 1024,
        items: 64,
        wide_counts: false,
    });
    let e = cubeprim::sort(&c, &upload(&c, &data, &[n]), bad, &mut ws).unwrap_err();
    assert!(matches!(e, Error::Unsupported(_)), "{e}");
}

/// The scatter kernels of full tiles with the digit as constants (CUDA's form, asked for by
/// `const_digits`), on lengths of whole tiles and with a partial last tile: u32 keys sorted
/// (keys only, four digits), argsorted over a bit range (two digits, the second at shift 16)
/// ascending and descending, and an f32 argsort with special values (four digits).
#[test]
fn full_tiles_with_constant_digits() {
    let Some(c) = client() else { return };
    let mut ws = workspace();
    let mut r = rng(31);
    let opts = ranked(PlaneOps::Force).const_digits(true);
    // The argsorts' tile (4-byte indices).
    let idx = Payload::Indices(IndexType::U32);
    let plan = cubeprim::sort_plan(&c, &[1 << 16], DType::U32, idx, false, opts).unwrap();
    assert!(plan.const_digits, "{plan:?}");
    let tile = plan.cfg.tile_len() as usize;
    for n in [3 * tile, 3 * tile + 5] {
        let k32: Vec<u32> = (0..n).map(|_| r.random()).collect();
        let got: Vec<u32> = cubeprim::sort(&c, &upload(&c, &k32, &[n]), opts, &mut ws)
            .unwrap()
            .to_vec(&c);
        let mut want = k32.clone();
        want.sort();
        assert!(got == want, "sort n={n}: {}", first_diff(&got, &want));
        for descending in [false, true] {
            let mut o = opts.bits(8, 24);
            o.descending = descending;
            let idx =
                cubeprim::argsort(&c, &upload(&c, &k32, &[n]), IndexType::U32, o, &mut ws).unwrap();
            let want: Vec<i64> = cpu::argsort_rows_bits(&k32, n, descending, 8, 24)
                .unwrap()
                .into_iter()
                .map(i64::from)
                .collect();
            let got = read_idx(&c, &idx);
            assert!(got == want, "u32 n={n} {o:?}: {}", first_diff(&got, &want));
        }
        let keys: Vec<f32> = special(&mut r, n);
        let idx =
            cubeprim::argsort(&c, &upload(&c, &keys, &[n]), IndexType::U32, opts, &mut ws).unwrap();
        let want: Vec<i64> = cpu::argsort_rows(&keys, n, false)
            .into_iter()
            .map(i64::from)
            .collect();
        let got = read_idx(&c, &idx);
        assert!(got == want, "argsort n={n}: {}", first_diff(&got, &want));
    }
}

/// Keys-only sort of `shape` (by the bits of `opts`) against the reference.
fn check_keys<E: TestElem + SortElement>(
    c: &Client,
    ws: &mut Workspace<R>,
    data: &[E],
    shape: &[usize],
    opts: SortOptions,
) {
    let n = *shape.last().unwrap();
    let got: Vec<E> = cubeprim::sort(c, &upload(c, data, shape), opts, ws)
        .unwrap()
        .to_vec(c);
    let end = opts.end_bit.unwrap_or(8 * size_of::<E>() as u32);
    let order = cpu::argsort_rows_bits(data, n, opts.descending, opts.begin_bit, end).unwrap();
    let want = cpu::permute_rows(data, n, &order).unwrap();
    assert!(
        bytes_eq(&got, &want),
        "{} {shape:?} {opts:?}: {}",
        E::DTYPE,
        first_diff(&got, &want)
    );
}

/// Rows of 8 full tiles or more: each digit's histogram counts the groups of 8 full tiles
/// through the full-tile kernel (16-byte vectors where every row starts on one: u32 by 4,
/// f16 by 8, u64 by 2; one key at a time in rows of an odd length) and the rest of each row
/// through the checked kernel, the digit a constant (u32, whose kernels llvmpipe compiles
/// once per digit) or read from the arguments, with either ranking.
#[test]
fn full_tile_histogram_groups() {
    let Some(c) = client() else { return };
    let mut ws = workspace();
    let mut r = rng(33);
    let opts = ranked(PlaneOps::Force).const_digits(false);
    let plan = cubeprim::sort_plan(&c, &[1 << 20], DType::U32, Payload::None, false, opts).unwrap();
    let tile = plan.cfg.tile_len() as usize;
    let (one, two) = (vec![17 * tile + 3], vec![2, 9 * tile + 1]);
    for shape in [&one, &two] {
        let k: Vec<u32> = (0..shape.iter().product()).map(|_| r.random()).collect();
        check_keys(&c, &mut ws, &k, shape, opts.const_digits(true));
    }
    let k: Vec<u32> = (0..8 * tile).map(|_| r.random()).collect();
    check_keys(&c, &mut ws, &k, &[8 * tile], opts.descending());
    // The split ranking's passes count full tiles the same way.
    check_keys(&c, &mut ws, &k, &[8 * tile], ranked(PlaneOps::Off));
    if supports(&c, DType::F16) {
        let h: Vec<f16> = special(&mut r, one[0]);
        check_keys(&c, &mut ws, &h, &one, opts);
    }
    if supports(&c, DType::U64) {
        let w: Vec<u64> = (0..2 * two[1]).map(|_| r.random()).collect();
        check_keys(&c, &mut ws, &w, &two, opts.bits(0, 24));
    }
    // Key-value tiles (f32 keys, u32 indices): two rows of 8 full tiles and a partial one.
    let idx = Payload::Indices(IndexType::U32);
    let plan = cubeprim::sort_plan(&c, &[1 << 20], DType::F32, idx, false, opts).unwrap();
    let tile = plan.cfg.tile_len() as usize;
    let shape = [2, 8 * tile + 4];
    let keys: Vec<f32> = special(&mut r, 2 * shape[1]);
    check_rows(&c, &mut ws, &keys, &shape, opts, IndexType::U32);
}

/// The packed argsort (indices only, keys of 4 bytes, device-wide, at least two digits: each
/// key and its position travel as one u64 word) against the reference and against the
/// key-value argsort it replaces, with either ranking: f32 with special values in 1-D and in
/// rows, ascending and descending, u32 and i64 indices; i32 keys over a bit range (two
/// digits); a strided view (the first pass reads through the row layout); a device-resident
/// length, in a workspace of the size `sort_workspace_bytes` gives for indices.
#[test]
fn packed_argsort() {
    let Some(c) = client() else { return };
    let mut ws = workspace();
    let mut r = rng(35);
    let wide = supports(&c, DType::U64);
    for p in RANKINGS {
        let opts = ranked(p);
        let shape = [1 << 20];
        let plan = cubeprim::argsort_plan(&c, &shape, DType::F32, IndexType::U32, false, opts);
        let plan = plan.unwrap();
        // Packed wherever the runtime has 64-bit integers; not when asked not to, nor when the
        // sorted keys are written too.
        assert_eq!(plan.packed, wide, "{plan:?}");
        let off = opts.pack_indices(false);
        let f32_ = DType::F32;
        assert!(
            !cubeprim::argsort_plan(&c, &shape, f32_, IndexType::U32, false, off)
                .unwrap()
                .packed
        );
        let idx = Payload::Indices(IndexType::U32);
        assert!(
            !cubeprim::sort_plan(&c, &shape, f32_, idx, false, opts)
                .unwrap()
                .packed
        );
        let tile = plan.cfg.tile_len() as usize;
        let check = |ws: &mut Workspace<R>,
                     x: &DeviceTensor<R>,
                     want: Vec<u32>,
                     index: IndexType,
                     o: SortOptions| {
            let what = format!("{:?} {:?} {index:?} {o:?}", x.shape, x.strides);
            let want: Vec<i64> = want.into_iter().map(i64::from).collect();
            for o in [o, o.pack_indices(false)] {
                let got = read_idx(&c, &cubeprim::argsort(&c, x, index, o, ws).unwrap());
                assert!(got == want, "{what} {o:?}: {}", first_diff(&got, &want));
            }
        };
        for (shape, index, descending) in [
            (vec![3 * tile + 5], IndexType::U32, false),
            (vec![3 * tile + 5], IndexType::I64, true),
            (vec![3, tile + 7], IndexType::U32, true),
        ] {
            let n = *shape.last().unwrap();
            let keys: Vec<f32> = special(&mut r, shape.iter().product());
            let mut o = opts;
            o.descending = descending;
            let want = cpu::argsort_rows(&keys, n, descending);
            check(&mut ws, &upload(&c, &keys, &shape), want, index, o);
        }
        let n = 2 * tile + 1;
        let keys: Vec<i32> = (0..n).map(|_| r.random_range(-1 << 20..1 << 20)).collect();
        let o = opts.bits(8, 24).descending();
        let want = cpu::argsort_rows_bits(&keys, n, true, 8, 24).unwrap();
        check(&mut ws, &upload(&c, &keys, &[n]), want, IndexType::U32, o);
        // Two rows of `tile + 3`, the columns of a [tile + 3, 2] buffer.
        let n = tile + 3;
        let buf: Vec<f32> = special(&mut r, 2 * n);
        let t = upload(&c, &buf, &[n, 2]).transpose(0, 1).unwrap();
        let data = gather_view(&buf, &t.shape, &t.strides, t.offset);
        let want = cpu::argsort_rows(&data, n, false);
        check(&mut ws, &t, want, IndexType::U32, opts);
        // A device-resident length, into a fixed workspace of the size asked for indices
        // (enough for the packed plan, whose tile differs from the sort with indices').
        let cap = 2 * tile + 3;
        let keys: Vec<f32> = special(&mut r, cap);
        let x = upload(&c, &keys, &[cap]);
        let idx = Payload::Indices(IndexType::U32);
        let bytes = cubeprim::sort_workspace_bytes(&c, &[cap], f32_, idx, true, opts).unwrap();
        let mut fixed = Workspace::with_capacity(&c, bytes);
        for count in [tile as u32 + 5, cap as u32 + 9] {
            let cnt = upload(&c, &[count], &[1]);
            let out = DeviceTensor::<R>::empty(&c, &[cap], DType::U32);
            let len = Len::Device {
                count: &cnt,
                capacity: cap,
            };
            cubeprim::sort_into(&c, &x, None, Some(&out), len, opts, &mut fixed).unwrap();
            let m = (count as usize).min(cap);
            let want: Vec<i64> = cpu::argsort_rows(&keys[..m], m, false)
                .into_iter()
                .map(i64::from)
                .collect();
            let got = read_idx(&c, &out);
            assert!(
                got[..m] == want[..],
                "{p:?} count {count}: {}",
                first_diff(&got[..m], &want)
            );
        }
    }
}

#[test]
fn a_few_million_keys() {
    let Some(c) = client() else { return };
    let mut ws = workspace();
    let mut r = rng(22);
    for p in RANKINGS {
        check_1d(&c, &mut ws, &mut r, (1 << 22) + 1, p);
    }
}

/// Pairs: stability (values are the positions) on adversarial patterns; 8- and 2-byte values.
#[test]
fn pairs_patterns_and_stability() {
    let Some(c) = client() else { return };
    let mut ws = workspace();
    let mut r = rng(31);
    let n = 10_000;
    let patterns: Vec<(&str, Vec<u32>)> = vec![
        ("all equal", vec![42; n]),
        ("sorted", (0..n as u32).collect()),
        ("reverse", (0..n as u32).rev().collect()),
        (
            "few distinct",
            (0..n).map(|_| r.random_range(0..3)).collect(),
        ),
        ("random", (0..n).map(|_| r.random()).collect()),
    ];
    for (name, keys) in patterns {
        let vals: Vec<u32> = (0..n as u32).collect();
        let opts_all = RANKINGS.map(ranked);
        for opts in opts_all.into_iter().flat_map(|o| [o, o.descending()]) {
            let (k, v) = cubeprim::sort_pairs(
                &c,
                &upload(&c, &keys, &[n]),
                &upload(&c, &vals, &[n]),
                opts,
                &mut ws,
            )
            .unwrap();
            let order = cpu::argsort_rows(&keys, n, opts.descending);
            let want_k = cpu::permute_rows(&keys, n, &order).unwrap();
            assert!(k.to_vec::<u32>(&c) == want_k, "{name} {opts:?}: keys");
            assert!(v.to_vec::<u32>(&c) == order, "{name} {opts:?}: values");
        }
    }
    // f32 keys carrying f64 and f16 values.
    let keys: Vec<f32> = special(&mut r, n);
    let v64: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
    let v16: Vec<f16> = (0..n).map(|i| f16::from_f64((i % 2000) as f64)).collect();
    let order = cpu::argsort_rows(&keys, n, false);
    let kx = upload(&c, &keys, &[n]);
    if supports(&c, DType::F64) {
        let (_, v) = cubeprim::sort_pairs(
            &c,
            &kx,
            &upload(&c, &v64, &[n]),
            SortOptions::default(),
            &mut ws,
        )
        .unwrap();
        assert!(v.to_vec::<f64>(&c) == cpu::permute_rows(&v64, n, &order).unwrap());
    }
    if supports(&c, DType::F16) {
        let (k, v) = cubeprim::sort_pairs(
            &c,
            &kx,
            &upload(&c, &v16, &[n]),
            SortOptions::default(),
            &mut ws,
        )
        .unwrap();
        assert!(bytes_eq(
            &k.to_vec::<f32>(&c),
            &cpu::permute_rows(&keys, n, &order).unwrap()
        ));
        assert!(bytes_eq(
            &v.to_vec::<f16>(&c),
            &cpu::permute_rows(&v16, n, &order).unwrap()
        ));
    }
}

#[test]
fn bit_ranges() {
    let Some(c) = client() else { return };
    let mut ws = workspace();
    let mut r = rng(41);
    for (n, p) in [1000usize, 6000]
        .into_iter()
        .flat_map(|n| RANKINGS.map(|p| (n, p)))
    {
        let k32: Vec<u32> = (0..n).map(|_| r.random()).collect();
        for (b, e) in [(0, 16), (8, 24), (4, 5), (16, 16), (0, 32)] {
            let opts = ranked(p).bits(b, e);
            let idx = cubeprim::argsort(&c, &upload(&c, &k32, &[n]), IndexType::U32, opts, &mut ws)
                .unwrap();
            let want: Vec<i64> = cpu::argsort_rows_bits(&k32, n, false, b, e)
                .unwrap()
                .into_iter()
                .map(i64::from)
                .collect();
            assert!(read_idx(&c, &idx) == want, "u32 n={n} bits [{b}, {e})");
        }
        if supports(&c, DType::I64) {
            let k64: Vec<i64> = (0..n).map(|_| r.random()).collect();
            for (b, e) in [(0, 40), (32, 64)] {
                let opts = ranked(p).bits(b, e).descending();
                let idx =
                    cubeprim::argsort(&c, &upload(&c, &k64, &[n]), IndexType::U32, opts, &mut ws)
                        .unwrap();
                let want: Vec<i64> = cpu::argsort_rows_bits(&k64, n, true, b, e)
                    .unwrap()
                    .into_iter()
                    .map(i64::from)
                    .collect();
                assert!(read_idx(&c, &idx) == want, "i64 n={n} bits [{b}, {e})");
            }
        }
    }
}

#[test]
fn device_resident_length() {
    let Some(c) = client() else { return };
    let mut r = rng(51);
    let cap = 7000;
    let keys: Vec<f32> = (0..cap).map(|_| r.random_range(-1.0..1.0)).collect();
    let vals: Vec<u32> = (0..cap as u32).collect();
    let x = upload(&c, &keys, &[cap]);
    let v = upload(&c, &vals, &[cap]);
    // Sized for both rankings.
    let bytes = RANKINGS
        .map(|p| {
            cubeprim::sort_workspace_bytes(
                &c,
                &[cap],
                DType::F32,
                Payload::Values(DType::U32),
                true,
                ranked(p),
            )
            .unwrap()
        })
        .into_iter()
        .max()
        .unwrap();
    let mut ws = Workspace::with_capacity(&c, bytes);
    let cases = RANKINGS.map(|p| [0u32, 1, 2049, 6999, 7000, 9000].map(|count| (p, count)));
    for (p, count) in cases.into_iter().flatten() {
        let cnt = upload(&c, &[count], &[1]);
        let ko = DeviceTensor::<R>::empty(&c, &[cap], DType::F32);
        let vo = DeviceTensor::<R>::empty(&c, &[cap], DType::U32);
        let len = Len::Device {
            count: &cnt,
            capacity: cap,
        };
        cubeprim::sort_pairs_into(&c, &x, &v, &ko, &vo, len, ranked(p), &mut ws).unwrap();
        let m = (count as usize).min(cap);
        let order = cpu::argsort_rows(&keys[..m], m, false);
        let got_k = ko.to_vec::<f32>(&c);
        let got_v = vo.to_vec::<u32>(&c);
        assert!(
            got_k[..m] == cpu::permute_rows(&keys[..m], m, &order).unwrap()[..],
            "{p:?} count {count}: keys"
        );
        assert!(got_v[..m] == order[..], "{p:?} count {count}: values");
    }
}

#[test]
fn row_shapes() {
    let Some(c) = client() else { return };
    let mut ws = workspace();
    let mut r = rng(61);
    for (rows, n) in [
        (1000, 1),
        (1000, 7),
        (5, 1024),
        (5, 1025),
        (3, 5000),
        (2, 1 << 17),
    ] {
        let data: Vec<f32> = (0..rows * n).map(|_| r.random_range(-8.0..8.0)).collect();
        let data: Vec<f32> = data.iter().map(|x| x.round()).collect(); // ties
        for p in RANKINGS {
            for opts in [ranked(p), ranked(p).descending()] {
                check_rows(&c, &mut ws, &data, &[rows, n], opts, IndexType::U32);
            }
        }
    }
    // Leading dimensions fold into rows.
    let data: Vec<i32> = (0..2 * 3 * 50).map(|_| r.random_range(-5..5)).collect();
    for p in RANKINGS {
        check_rows(&c, &mut ws, &data, &[2, 3, 50], ranked(p), IndexType::I64);
    }
}

#[test]
fn strided_inputs() {
    let Some(c) = client() else { return };
    let mut ws = workspace();
    let mut r = rng(71);
    for ((rows, n), p) in [(6, 300), (3, 5000)]
        .into_iter()
        .flat_map(|s| RANKINGS.map(|p| (s, p)))
    {
        // A transposed [n, rows] buffer: rows are columns of the buffer (stride `rows`).
        let buf: Vec<f32> = (0..rows * n).map(|_| r.random_range(-4.0..4.0)).collect();
        let t = upload(&c, &buf, &[n, rows]).transpose(0, 1).unwrap();
        let data = gather_view(&buf, &t.shape, &t.strides, t.offset);
        check_view(&c, &mut ws, &t, &data, ranked(p), IndexType::U32);
        // A narrowed view with an offset.
        let v = upload(&c, &buf, &[rows, n]).narrow(1, 3, n - 5).unwrap();
        let data = gather_view(&buf, &v.shape, &v.strides, v.offset);
        check_view(&c, &mut ws, &v, &data, ranked(p), IndexType::U32);
    }
}

#[test]
fn top_k_rows() {
    let Some(c) = client() else { return };
    let mut ws = workspace();
    let mut r = rng(81);
    for (rows, n, ks) in [(4usize, 1000usize, vec![1, 10, 1000]), (2, 5000, vec![50])] {
        let data: Vec<f32> = special(&mut r, rows * n);
        let x = upload(&c, &data, &[rows, n]);
        for &k in &ks {
            for largest in [true, false] {
                for index in [IndexType::U32, IndexType::I64] {
                    let (v, i) = cubeprim::top_k(&c, &x, k, largest, index, &mut ws).unwrap();
                    assert_eq!(v.shape, vec![rows, k]);
                    let (wv, wi) = cpu::top_k_rows(&data, n, k, largest);
                    let what = format!("[{rows}, {n}] k={k} largest={largest} {index:?}");
                    let gv = v.to_vec::<f32>(&c);
                    assert!(bytes_eq(&gv, &wv), "{what}: {}", first_diff(&gv, &wv));
                    let wi: Vec<i64> = wi.into_iter().map(i64::from).collect();
                    assert!(read_idx(&c, &i) == wi, "{what}: indices");
                }
            }
        }
    }
}

/// Top-k by selection and by sorting against the reference: rows with NaN (both signs),
/// ±inf, ±0, many ties and all equal; k from 1 to n. Selection must be available for rows
/// up to 1025 keys (any device); past that it may refuse where a row does not fit a cube.
#[test]
fn top_k_selection_and_sorting_agree() {
    let Some(c) = client() else { return };
    let mut ws = workspace();
    let mut r = rng(82);
    let mut selected = 0;
    for n in [1usize, 7, 1024, 1025, 4096, 5000] {
        let rows = 4;
        let mut data: Vec<f32> = special(&mut r, n);
        data.extend(tie_values::<f32>(&mut r, n, 0.1, 0.1));
        data.extend(vec![3.5f32; n]);
        data.extend((0..n).map(|j| (j % 5) as f32 - 2.0));
        let x = upload(&c, &data, &[rows, n]);
        let mut ks: Vec<usize> = vec![1, 2, 50, n - 1, n];
        ks.retain(|&k| k >= 1 && k <= n);
        ks.dedup();
        for &k in &ks {
            for largest in [true, false] {
                let index = if k == 2 {
                    IndexType::I64
                } else {
                    IndexType::U32
                };
                if !supports(&c, index.dtype()) {
                    continue;
                }
                let (wv, wi) = cpu::top_k_rows(&data, n, k, largest);
                let wi: Vec<i64> = wi.into_iter().map(i64::from).collect();
                for method in [TopKMethod::Select, TopKMethod::Sort, TopKMethod::Auto] {
                    let what = format!("[{rows}, {n}] k={k} largest={largest} {method:?}");
                    let got = cubeprim::top_k_with(&c, &x, k, largest, index, method, &mut ws);
                    let (v, i) = match got {
                        Err(Error::Unsupported(_)) if method == TopKMethod::Select && n > 1025 => {
                            continue
                        }
                        g => g.unwrap_or_else(|e| panic!("{what}: {e}")),
                    };
                    if method == TopKMethod::Select {
                        selected += 1;
                    }
                    let gv = v.to_vec::<f32>(&c);
                    assert!(bytes_eq(&gv, &wv), "{what}: {}", first_diff(&gv, &wv));
                    assert!(read_idx(&c, &i) == wi, "{what}: indices");
                }
            }
        }
    }
    assert!(selected >= 30, "selection ran {selected} times");
}

#[test]
fn searchsorted_and_bucketize() {
    let Some(c) = client() else { return };
    let mut r = rng(91);
    let mut sorted: Vec<f32> = (0..1000)
        .map(|_| r.random_range(-5.0f32..5.0).round())
        .collect();
    sorted.extend([f32::INFINITY, f32::NAN, f32::NAN]);
    sorted.insert(0, f32::NEG_INFINITY);
    sorted.sort_by(|a, b| a.sort_cmp(b));
    let n = sorted.len();
    let mut q: Vec<f32> = (0..3000)
        .map(|_| r.random_range(-6.0f32..6.0).round())
        .collect();
    q.extend([f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, 0.0]);
    let s = upload(&c, &sorted, &[n]);
    let qt = upload(&c, &q, &[q.len()]);
    for side in [Side::Left, Side::Right] {
        for index in [IndexType::U32, IndexType::I64] {
            let got = cubeprim::searchsorted(&c, &s, &qt, side, index).unwrap();
            let want: Vec<i64> = cpu::searchsorted(&sorted, n, &q, q.len(), side == Side::Right)
                .unwrap()
                .into_iter()
                .map(i64::from)
                .collect();
            assert!(read_idx(&c, &got) == want, "{side:?} {index:?}");
        }
    }
    let b = cubeprim::bucketize(&c, &qt, &s, true, IndexType::U32).unwrap();
    let want: Vec<i64> = cpu::searchsorted(&sorted, n, &q, q.len(), true)
        .unwrap()
        .into_iter()
        .map(i64::from)
        .collect();
    assert!(read_idx(&c, &b) == want, "bucketize");
    // Rows: [4, 300] sorted rows, [4, 77] queries; and an empty sorted row.
    let rows: Vec<i32> = (0..4)
        .flat_map(|_| {
            let mut v: Vec<i32> = (0..300).map(|_| r.random_range(-50..50)).collect();
            v.sort();
            v
        })
        .collect();
    let qs: Vec<i32> = (0..4 * 77).map(|_| r.random_range(-60..60)).collect();
    let got = cubeprim::searchsorted(
        &c,
        &upload(&c, &rows, &[4, 300]),
        &upload(&c, &qs, &[4, 77]),
        Side::Right,
        IndexType::U32,
    )
    .unwrap();
    let want: Vec<i64> = cpu::searchsorted(&rows, 300, &qs, 77, true)
        .unwrap()
        .into_iter()
        .map(i64::from)
        .collect();
    assert!(read_idx(&c, &got) == want, "rows");
    let empty = DeviceTensor::<R>::from_slice::<i32>(&c, &[], &[0]).unwrap();
    let got = cubeprim::searchsorted(
        &c,
        &empty,
        &upload(&c, &qs, &[qs.len()]),
        Side::Left,
        IndexType::U32,
    )
    .unwrap();
    assert!(read_idx(&c, &got).iter().all(|&i| i == 0), "empty sorted");
}

#[test]
fn errors_and_workspace() {
    let Some(c) = client() else { return };
    let mut ws = workspace();
    let x = upload(&c, &[3.0f32, 1.0, 2.0, 0.0], &[2, 2]);
    // Index dtype.
    let bad = DeviceTensor::<R>::empty(&c, &[2, 2], DType::F32);
    let e = cubeprim::sort_into(
        &c,
        &x,
        None,
        Some(&bad),
        Len::Host(2),
        SortOptions::default(),
        &mut ws,
    )
    .unwrap_err();
    assert!(matches!(e, Error::UnsupportedDType { .. }), "{e}");
    // Output shape.
    let bad = DeviceTensor::<R>::empty(&c, &[4], DType::F32);
    let e = cubeprim::sort_into(
        &c,
        &x,
        Some(&bad),
        None,
        Len::Host(2),
        SortOptions::default(),
        &mut ws,
    )
    .unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    // Nothing to write.
    assert!(cubeprim::sort_into(
        &c,
        &x,
        None,
        None,
        Len::Host(2),
        SortOptions::default(),
        &mut ws
    )
    .is_err());
    // k > n.
    let e = cubeprim::top_k(&c, &x, 3, true, IndexType::U32, &mut ws).unwrap_err();
    assert!(matches!(e, Error::LengthMismatch { .. }), "{e}");
    // A device length on a 2-D sort.
    let cnt = upload(&c, &[1u32], &[1]);
    let out = DeviceTensor::<R>::empty(&c, &[2, 2], DType::F32);
    let len = Len::Device {
        count: &cnt,
        capacity: 2,
    };
    let e = cubeprim::sort_into(
        &c,
        &x,
        Some(&out),
        None,
        len,
        SortOptions::default(),
        &mut ws,
    )
    .unwrap_err();
    assert!(matches!(e, Error::Unsupported(_)), "{e}");
    // Bit ranges.
    for (b, e) in [(8, 4), (0, 33)] {
        let err = cubeprim::sort(&c, &x, SortOptions::default().bits(b, e), &mut ws).unwrap_err();
        assert!(matches!(err, Error::Unsupported(_)), "{err}");
    }
    // Query dtype.
    let q = upload(&c, &[1i32], &[1]);
    let e = cubeprim::searchsorted(&c, &x, &q, Side::Left, IndexType::U32).unwrap_err();
    assert!(matches!(e, Error::UnsupportedDType { .. }), "{e}");
    // A workspace too small, then one of the queried size, reused.
    let n = 9000;
    let keys: Vec<u32> = (0..n as u32).rev().collect();
    let k = upload(&c, &keys, &[n]);
    let need = cubeprim::sort_workspace_bytes(
        &c,
        &[n],
        DType::U32,
        Payload::Indices(IndexType::U32),
        false,
        SortOptions::default(),
    )
    .unwrap();
    assert!(need > 0);
    let mut small = Workspace::with_capacity(&c, need / 2);
    let e =
        cubeprim::argsort(&c, &k, IndexType::U32, SortOptions::default(), &mut small).unwrap_err();
    assert!(matches!(e, Error::ScratchTooSmall { .. }), "{e}");
    let mut exact = Workspace::with_capacity(&c, need);
    for _ in 0..3 {
        let idx =
            cubeprim::argsort(&c, &k, IndexType::U32, SortOptions::default(), &mut exact).unwrap();
        let want: Vec<u32> = (0..n as u32).rev().collect();
        assert!(idx.to_vec::<u32>(&c) == want);
    }
    assert_eq!(exact.bytes(), need.div_ceil(4) * 4);
}

/// A sort's outputs double as its ping-pong buffers, so its plan holds one region of keys (and
/// one of values) fewer than where the outputs are shorter than the rows (top-k by sorting);
/// each workspace query is enough for its call, in a workspace of exactly that size.
#[test]
fn sorts_ping_pong_through_their_outputs() {
    use cubeprim::sort::{SortOutputs, SortPlan, ValueKind};
    let Some(c) = client() else { return };
    let n = 9000;
    let mut r = rng(71);
    let keys: Vec<u32> = (0..n).map(|_| r.random()).collect();
    let vals: Vec<u32> = (0..n as u32).collect();
    let k = upload(&c, &keys, &[n]);
    let v = upload(&c, &vals, &[n]);
    let tuning = Default::default();
    let opts = SortOptions::default();
    for (kind, extra) in [
        (ValueKind::None, 4 * n),
        (ValueKind::Values(DType::U32), 8 * n),
    ] {
        let plan = |full_rows| {
            let outputs = SortOutputs {
                keys: true,
                full_rows,
            };
            SortPlan::new(&c, &tuning, 1, n, DType::U32, kind, outputs, false, opts).unwrap()
        };
        let (whole, short) = (plan(true), plan(false));
        assert_eq!(whole.passes, 4);
        assert!(
            whole.temp.total + extra <= short.temp.total,
            "{kind:?}: {} bytes of temp with outputs of whole rows, {} without",
            whole.temp.total,
            short.temp.total
        );
    }
    let sorted = {
        let mut s = keys.clone();
        s.sort();
        s
    };
    let order = cpu::argsort_rows(&keys, n, false);
    let need = |payload| {
        cubeprim::sort_workspace_bytes(&c, &[n], DType::U32, payload, false, opts).unwrap()
    };
    let mut ws = Workspace::with_capacity(&c, need(Payload::None));
    for _ in 0..2 {
        let got = cubeprim::sort(&c, &k, opts, &mut ws).unwrap();
        assert!(got.to_vec::<u32>(&c) == sorted, "keys");
    }
    assert_eq!(ws.bytes(), need(Payload::None).div_ceil(4) * 4);
    let pairs = need(Payload::Values(DType::U32));
    let mut ws = Workspace::with_capacity(&c, pairs);
    let (ko, vo) = cubeprim::sort_pairs(&c, &k, &v, opts, &mut ws).unwrap();
    assert!(ko.to_vec::<u32>(&c) == sorted, "pairs: keys");
    assert!(vo.to_vec::<u32>(&c) == order, "pairs: values");
    assert_eq!(ws.bytes(), pairs.div_ceil(4) * 4);
    let top = cubeprim::top_k_workspace_bytes(&c, &[n], DType::U32, IndexType::U32).unwrap();
    let mut ws = Workspace::with_capacity(&c, top);
    let kk = 100;
    let tv = DeviceTensor::<R>::empty(&c, &[kk], DType::U32);
    let ti = DeviceTensor::<R>::empty(&c, &[kk], DType::U32);
    cubeprim::top_k_into_with(&c, &k, kk, false, TopKMethod::Sort, &tv, &ti, &mut ws).unwrap();
    assert!(tv.to_vec::<u32>(&c) == sorted[..kk], "top-k values");
    assert!(ti.to_vec::<u32>(&c) == order[..kk], "top-k indices");
    assert_eq!(ws.bytes(), top.div_ceil(4) * 4);
}

// The tests above with plane operations forced (`PLANE_OPS`): the kernels' plane variants,
// which wgpu does not report on CPU adapters although lavapipe runs them.
crate::tuning_variants!(plane_ops_variants: [PLANE_OPS] =>
    every_key_type_with_special_values,
    f16_and_bf16_every_bit_pattern,
    lengths_around_tiles_and_powers_of_two,
    tuned_tiles_and_one_bit_ranking,
    full_tiles_with_constant_digits,
    full_tile_histogram_groups,
    packed_argsort,
    a_few_million_keys,
    pairs_patterns_and_stability,
    bit_ranges,
    device_resident_length,
    row_shapes,
    strided_inputs,
    top_k_rows,
    top_k_selection_and_sorting_agree,
    searchsorted_and_bucketize,
    errors_and_workspace,
);
