//! Hostile arguments at the public entry points (issue 35, items 3, 4, 5 and 9): sizes past the
//! kernels' 32-bit positions, views that reach past their buffers, outputs that share memory
//! with an input or another output, and values that used to panic. Each gets its typed
//! `Error` (or, for aliasing, a correct result), never a panic or a wrong `Ok`.
//!
//! The size tests use stride-0 views over one element: they cost no memory, and the calls
//! fail before anything is allocated or launched.
//!
//! Without a device the tests skip, except under `CI=true`, where they fail
//! (`common::client`).

use crate::common::*;
use cubeprim::cpu;
use cubeprim::scan::ScanTuning;
use cubeprim::sort::{Payload, SortTuning};
use cubeprim::{
    DType, DeviceTensor, Error, IndexType, Len, ReduceOp, ScanOp, ScanOptions, Side, SortOptions,
    Workspace, MAX_ELEMENTS,
};
use rand::Rng;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The result without its value (tensors are not comparable).
fn unit<T>(r: cubeprim::Result<T>) -> cubeprim::Result<()> {
    r.map(|_| ())
}

/// A stride-0 view of `shape` over a 16-byte buffer whose first element is 1 (any dtype).
fn broadcast(c: &Client, dtype: DType, shape: &[usize]) -> DeviceTensor<R> {
    let h = c.create_from_slice(bytemuck::cast_slice(&[1u64, 1]));
    DeviceTensor::from_parts(h, shape.to_vec(), vec![0; shape.len()], 0, dtype)
}

/// `shape` over `bytes` bytes of memory (contiguous strides, offset `offset`).
fn view(c: &Client, bytes: usize, shape: &[usize], offset: usize, dtype: DType) -> DeviceTensor<R> {
    let h = c.create_from_slice(&vec![0u8; bytes]);
    let mut t = DeviceTensor::from_parts(h, shape.to_vec(), vec![1; shape.len()], offset, dtype);
    t.strides = row_major(shape);
    t
}

fn row_major(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1].max(1);
    }
    s
}

fn too_large<T>(r: &cubeprim::Result<T>) -> bool {
    matches!(r, Err(Error::TooLarge { .. }))
}

fn out_of_bounds<T>(r: &cubeprim::Result<T>) -> bool {
    matches!(r, Err(Error::OutOfBounds { .. }))
}

fn aliased<T>(r: &cubeprim::Result<T>) -> bool {
    matches!(r, Err(Error::Aliased { .. }))
}

fn describe<T>(r: &cubeprim::Result<T>) -> String {
    match r {
        Ok(_) => "Ok".into(),
        Err(e) => format!("Err({e:?})"),
    }
}

/// The dtypes of the size tests the runtime has.
fn dtypes(c: &Client) -> Vec<DType> {
    [DType::U64, DType::U32, DType::F32]
        .into_iter()
        .filter(|&d| supports(c, d))
        .collect()
}

// ---- Item 3: sizes past 32-bit positions -------------------------------------------------

/// The confirmed case: the sum of a broadcast of 2^32 - 1 ones returned 4294975487. Any
/// tensor, view or output past `MAX_ELEMENTS` is refused before a launch.
#[test]
fn reduce_of_a_broadcast_past_the_limit_is_too_large() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let n = (1usize << 32) - 1;
    for dtype in dtypes(&c) {
        let x = broadcast(&c, dtype, &[n]);
        let got = cubeprim::reduce(&c, &x, None, ReduceOp::Sum, &mut ws);
        if dtype == DType::U64 {
            if let Ok(t) = &got {
                let v = t.to_vec::<u64>(&c)[0];
                panic!("the sum of {n} ones: Ok({v})");
            }
        }
        assert!(too_large(&got), "{dtype} sum of {n}: {}", describe(&got));
        let got = cubeprim::reduce(&c, &x, Some(0), ReduceOp::Max, &mut ws);
        assert!(too_large(&got), "{dtype} max along 0: {}", describe(&got));
        let out = DeviceTensor::empty(&c, &[], dtype);
        let got = cubeprim::reduce_len_into(&c, &x, n, ReduceOp::Sum, &out, &mut ws);
        assert!(
            too_large(&got),
            "{dtype} reduce_len_into: {}",
            describe(&got)
        );
        // 2-D, each axis within the limit but not their product.
        let x = broadcast(&c, dtype, &[1 << 16, 1 << 16]);
        let got = cubeprim::reduce(&c, &x, None, ReduceOp::Sum, &mut ws);
        assert!(too_large(&got), "{dtype} 2-D sum: {}", describe(&got));
    }
}

/// `nonzero`'s output holds `count x rank` positions: 2^30 + 2^20 byte flags of rank 4 need
/// 2^32 + 2^22 of them.
#[test]
fn nonzero_whose_output_is_past_the_limit_is_too_large() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let x = broadcast(&c, DType::U8, &[1025, 1024, 1024, 1]);
    assert!(x.num_elements() <= MAX_ELEMENTS);
    let got = cubeprim::nonzero(&c, &x, &mut ws);
    assert!(too_large(&got), "nonzero: {}", describe(&got));
    let out = DeviceTensor::empty(&c, &[4, 4], cubeprim::nonzero_index_dtype(&c));
    let count = cubeprim::new_count(&c);
    let got = cubeprim::nonzero_into(&c, &x, &out, &count, &mut ws);
    assert!(too_large(&got), "nonzero_into: {}", describe(&got));
}

/// Scans (with indices too) of views past the limit, 1-D and along an axis of a 2-D view.
#[test]
fn scans_past_the_limit_are_too_large() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let d = ScanOptions::default();
    for shape in [vec![MAX_ELEMENTS + 1], vec![1usize << 16, 1 << 16]] {
        let axis = shape.len() as isize - 1;
        let x = broadcast(&c, DType::F32, &shape);
        let got = cubeprim::cumsum(&c, &x, axis);
        assert!(too_large(&got), "cumsum {shape:?}: {}", describe(&got));
        let got = cubeprim::cummax_with_indices(&c, &x, axis);
        assert!(
            too_large(&got),
            "cummax_with_indices {shape:?}: {}",
            describe(&got)
        );
        let got = cubeprim::scan(&c, &x, 0, ScanOp::Prod, d.exclusive(), &mut ws);
        assert!(too_large(&got), "scan {shape:?}: {}", describe(&got));
    }
    let got = cubeprim::scan_workspace_bytes(&c, &[MAX_ELEMENTS + 1], 0, DType::F32, true, d);
    assert!(too_large(&got), "scan_workspace_bytes: {got:?}");
}

/// Every other family refuses inputs, lengths and size queries past the limit.
#[test]
fn every_family_refuses_sizes_past_the_limit() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let big = MAX_ELEMENTS + 1;
    let x = broadcast(&c, DType::U32, &[big]);
    let f = broadcast(&c, DType::U8, &[big]);
    let small = upload(&c, &[1u32, 2, 3, 4], &[4]);
    let flags = upload(&c, &[1u32, 0, 1, 1], &[4]);
    let count = cubeprim::new_count(&c);
    let d = SortOptions::default();
    let mut cases: Vec<(&str, cubeprim::Result<()>)> = vec![
        ("select", unit(cubeprim::select(&c, &x, &f, big, &mut ws))),
        (
            "select of a long length",
            unit(cubeprim::select(&c, &small, &flags, big, &mut ws)),
        ),
        (
            "partition",
            unit(cubeprim::partition(&c, &x, &f, big, &mut ws)),
        ),
        (
            "masked_select",
            unit(cubeprim::masked_select(&c, &x, &f, &mut ws)),
        ),
        (
            "count_nonzero_into",
            cubeprim::count_nonzero_into(&c, &f, big, &count, &mut ws),
        ),
        (
            "unique_consecutive",
            unit(cubeprim::unique_consecutive(
                &c, &x, big, true, true, &mut ws,
            )),
        ),
        (
            "reduce_by_key",
            unit(cubeprim::reduce_by_key(
                &c,
                &x,
                &x,
                big,
                ScanOp::Sum,
                &mut ws,
            )),
        ),
        (
            "unique",
            unit(cubeprim::unique(&c, &x, true, true, &mut ws)),
        ),
        (
            "histogram",
            unit(cubeprim::histogram(&c, &x, 16, big, &mut ws)),
        ),
        ("sort", unit(cubeprim::sort(&c, &x, d, &mut ws))),
        (
            "argsort",
            unit(cubeprim::argsort(&c, &x, IndexType::U32, d, &mut ws)),
        ),
        (
            "top_k",
            unit(cubeprim::top_k(&c, &x, 1, true, IndexType::U32, &mut ws)),
        ),
        (
            "searchsorted",
            unit(cubeprim::searchsorted(
                &c,
                &small,
                &x,
                Side::Left,
                IndexType::U32,
            )),
        ),
        (
            "reduce_workspace_bytes",
            unit(cubeprim::reduce_workspace_bytes(
                &c,
                &[big],
                None,
                DType::U32,
            )),
        ),
        (
            "select_workspace_bytes",
            unit(cubeprim::select_workspace_bytes(
                &c,
                big,
                DType::U8,
                DType::U32,
            )),
        ),
        (
            "runs_workspace_bytes",
            unit(cubeprim::runs_workspace_bytes(&c, big, DType::U32, None)),
        ),
        (
            "sort_workspace_bytes",
            unit(cubeprim::sort_workspace_bytes(
                &c,
                &[big],
                DType::U32,
                Payload::None,
                false,
                d,
            )),
        ),
    ];
    let wide = broadcast(&c, DType::U32, &[1 << 16, 1 << 16]);
    cases.push(("2-D sort", unit(cubeprim::sort(&c, &wide, d, &mut ws))));
    for (what, got) in cases {
        assert!(too_large(&got), "{what}: {}", describe(&got));
    }
}

/// The limit itself: `MAX_ELEMENTS` elements (and reach) pass `check`, one more does not.
#[test]
fn the_limit_is_max_elements() {
    let Some(c) = client() else { return };
    assert!(broadcast(&c, DType::F32, &[MAX_ELEMENTS]).check().is_ok());
    assert!(too_large(
        &broadcast(&c, DType::F32, &[MAX_ELEMENTS + 1]).check()
    ));
    // A reach past the limit, with few elements.
    let mut t = broadcast(&c, DType::F32, &[2]);
    t.strides = vec![MAX_ELEMENTS];
    assert!(too_large(&t.check()), "{:?}", t.check());
}

// ---- Item 4: reach past the buffer --------------------------------------------------------

/// Views that reach past their handle's memory, by shape, offset, strides or the handle's own
/// offsets, are refused by every family.
#[test]
fn views_past_their_buffer_are_refused() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    // 16 u32 of memory.
    let views: Vec<(&str, DeviceTensor<R>)> = vec![
        ("17 elements", view(&c, 64, &[17], 0, DType::U32)),
        ("offset 13 + 4", view(&c, 64, &[4], 13, DType::U32)),
        ("strides 5 of [4, 4]", {
            let mut t = view(&c, 64, &[4, 4], 0, DType::U32);
            t.strides = vec![5, 1];
            t
        }),
        ("an 8-byte dtype", view(&c, 64, &[16], 0, DType::U64)),
        ("offset_start 4", {
            let mut t = view(&c, 64, &[16], 0, DType::U32);
            t.handle = t.handle.clone().offset_start(4);
            t
        }),
        ("offset_end 4", {
            let mut t = view(&c, 64, &[16], 0, DType::U32);
            t.handle = t.handle.clone().offset_end(4);
            t
        }),
        ("offsets past the size", {
            let mut t = view(&c, 64, &[4], 0, DType::U32);
            t.handle = t.handle.clone().offset_start(100);
            t
        }),
    ];
    let d = SortOptions::default();
    for (what, x) in &views {
        let n = x.num_elements();
        let flags = upload(&c, &vec![1u32; n], &[n]);
        let results: Vec<(&str, cubeprim::Result<()>)> = vec![
            ("check", x.check()),
            (
                "scan",
                unit(cubeprim::scan(
                    &c,
                    x,
                    0,
                    ScanOp::Sum,
                    ScanOptions::default(),
                    &mut ws,
                )),
            ),
            (
                "reduce",
                unit(cubeprim::reduce(&c, x, None, ReduceOp::Sum, &mut ws)),
            ),
            ("sort", unit(cubeprim::sort(&c, x, d, &mut ws))),
            (
                "top_k",
                unit(cubeprim::top_k(&c, x, 1, true, IndexType::U32, &mut ws)),
            ),
            ("select", unit(cubeprim::select(&c, x, x, n, &mut ws))),
            ("nonzero", unit(cubeprim::nonzero(&c, x, &mut ws))),
            (
                "unique_consecutive",
                unit(cubeprim::unique_consecutive(&c, x, n, false, true, &mut ws)),
            ),
            (
                "unique",
                unit(cubeprim::unique(&c, x, false, false, &mut ws)),
            ),
            ("histogram", unit(cubeprim::histogram(&c, x, 4, n, &mut ws))),
            (
                "searchsorted",
                unit(cubeprim::searchsorted(
                    &c,
                    &flags,
                    x,
                    Side::Right,
                    IndexType::U32,
                )),
            ),
            ("to_vec", unit(x.try_to_vec::<u32>(&c))),
        ];
        for (op, got) in results {
            // An 8-byte view is refused for its dtype where the runtime lacks it.
            if x.dtype == DType::U64 && matches!(got, Err(Error::UnsupportedDType { .. })) {
                continue;
            }
            if op == "to_vec" && x.dtype == DType::U64 {
                continue;
            }
            assert!(out_of_bounds(&got), "{what}, {op}: {}", describe(&got));
        }
    }
}

/// Offsets and strides whose reach overflows `usize` are refused without an overflow panic.
#[test]
fn overflowing_reach_is_refused() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let cases = [
        (vec![4usize], vec![usize::MAX / 2], 0usize),
        (vec![2], vec![1], usize::MAX),
        (vec![3, 3], vec![usize::MAX, 1], 1),
        (vec![usize::MAX, 2], vec![0, 0], 0),
    ];
    for (shape, strides, offset) in cases {
        let mut x = view(&c, 64, &[1], 0, DType::F32);
        x.shape = shape.clone();
        x.strides = strides.clone();
        x.offset = offset;
        let got = x.check();
        assert!(too_large(&got), "{shape:?} {strides:?} +{offset}: {got:?}");
        let got = cubeprim::cumsum(&c, &x, 0);
        assert!(too_large(&got), "cumsum: {}", describe(&got));
        let got = cubeprim::reduce(&c, &x, None, ReduceOp::Max, &mut ws);
        assert!(too_large(&got), "reduce: {}", describe(&got));
    }
}

/// Outputs are checked by the bytes of their handle, not by their element count: an output
/// whose shape claims more than its memory holds would overrun a neighbouring tensor.
#[test]
fn outputs_are_checked_by_bytes() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let n = 1000;
    let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let x = upload(&c, &data, &[n]);
    let flags = upload(&c, &vec![1u32; n], &[n]);
    let keys = upload(&c, &vec![3u32; n], &[n]);
    let count = cubeprim::new_count(&c);
    // A contiguous output of `n` elements over 16 bytes, and a neighbour after it.
    let short = |dtype: DType, shape: &[usize]| view(&c, 16, shape, 0, dtype);
    let neighbour = upload(&c, &[7.0f32; 64], &[64]);
    let idx = cubeprim::nonzero_index_dtype(&c);
    let results: Vec<(&str, cubeprim::Result<()>)> = vec![
        (
            "select_into",
            cubeprim::select_into(&c, &x, &flags, n, &short(DType::F32, &[n]), &count, &mut ws),
        ),
        (
            "partition_into",
            cubeprim::partition_into(&c, &x, &flags, n, &short(DType::F32, &[n]), &count, &mut ws),
        ),
        (
            "scan_into",
            cubeprim::scan_into(
                &c,
                &x,
                &short(DType::F32, &[n]),
                None,
                0,
                ScanOp::Sum,
                ScanOptions::default(),
                &mut ws,
            ),
        ),
        (
            "sort_into",
            cubeprim::sort_into(
                &c,
                &x,
                Some(&short(DType::F32, &[n])),
                None,
                Len::Host(n),
                SortOptions::default(),
                &mut ws,
            ),
        ),
        (
            "sort_into indices",
            cubeprim::sort_into(
                &c,
                &x,
                None,
                Some(&short(DType::U32, &[n])),
                Len::Host(n),
                SortOptions::default(),
                &mut ws,
            ),
        ),
        (
            "histogram_into",
            cubeprim::histogram_into(&c, &keys, 100, n, &short(DType::U32, &[100]), &mut ws),
        ),
        (
            "nonzero_into",
            cubeprim::nonzero_into(&c, &x, &short(idx, &[n, 1]), &count, &mut ws),
        ),
        (
            "reduce_by_key_into",
            cubeprim::reduce_by_key_into(
                &c,
                &keys,
                &x,
                n,
                ScanOp::Sum,
                &short(DType::U32, &[n]),
                &upload(&c, &vec![0.0f32; n], &[n]),
                &count,
                &mut ws,
            ),
        ),
        (
            "reduce_into",
            cubeprim::reduce_into(
                &c,
                &upload(&c, &vec![1.0f32; 10 * n], &[n, 10]),
                Some(1),
                ReduceOp::Sum,
                &short(DType::F32, &[n]),
                &mut ws,
            ),
        ),
        (
            "searchsorted_into",
            cubeprim::searchsorted_into(&c, &x, &x, Side::Left, &short(DType::U32, &[n])),
        ),
        (
            "a count of two bytes",
            cubeprim::count_nonzero_into(&c, &flags, n, &view(&c, 2, &[1], 0, DType::U32), &mut ws),
        ),
    ];
    for (what, got) in results {
        assert!(out_of_bounds(&got), "{what}: {}", describe(&got));
    }
    assert_eq!(neighbour.to_vec::<f32>(&c), vec![7.0f32; 64]);
}

/// Strides of another rank are refused by every family (`ShapeMismatch`), without a panic.
#[test]
fn strides_of_another_rank_are_refused() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let good = upload(&c, &[1u32, 2, 3, 4, 5, 6, 7, 8], &[8]);
    for strides in [vec![], vec![1, 1]] {
        let mut x = good.clone();
        x.strides = strides.clone();
        let got = catch_unwind(AssertUnwindSafe(|| {
            vec![
                ("check", x.check()),
                ("cumsum", unit(cubeprim::cumsum(&c, &x, 0))),
                (
                    "reduce",
                    unit(cubeprim::reduce(&c, &x, None, ReduceOp::Sum, &mut ws)),
                ),
                (
                    "sort",
                    unit(cubeprim::sort(&c, &x, SortOptions::default(), &mut ws)),
                ),
                ("select", unit(cubeprim::select(&c, &x, &good, 8, &mut ws))),
                ("nonzero", unit(cubeprim::nonzero(&c, &x, &mut ws))),
                (
                    "unique",
                    unit(cubeprim::unique(&c, &x, true, true, &mut ws)),
                ),
                (
                    "histogram",
                    unit(cubeprim::histogram(&c, &x, 4, 8, &mut ws)),
                ),
                ("narrow", unit(x.narrow(0, 0, 1))),
                ("transpose", unit(x.transpose(0, 0))),
            ]
        }))
        .unwrap_or_else(|_| panic!("strides {strides:?}: a panic"));
        for (what, r) in got {
            assert!(
                matches!(r, Err(Error::ShapeMismatch { .. })),
                "strides {strides:?}, {what}: {r:?}"
            );
        }
    }
}

// ---- Item 5: aliasing ---------------------------------------------------------------------

/// The confirmed case: 2^20 u32 keys sorted in place by their low 8 bits (one pass, odd) came
/// back in the wrong order with `Ok`. Now refused, or right.
#[test]
fn in_place_sort_is_refused_or_right() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let mut rng = rng(35);
    for (n, end_bit) in [(1usize << 20, 8u32), (1 << 20, 16), (1 << 20, 24), (300, 8)] {
        let keys: Vec<u32> = (0..n).map(|_| rng.random()).collect();
        let x = upload(&c, &keys, &[n]);
        let opts = SortOptions {
            end_bit: Some(end_bit),
            ..Default::default()
        };
        let got = cubeprim::sort_into(&c, &x, Some(&x), None, Len::Host(n), opts, &mut ws);
        match got {
            Err(Error::Aliased { .. }) => {}
            Ok(()) => {
                let order = cpu::argsort_rows_bits(&keys, n, false, 0, end_bit).unwrap();
                let want = cpu::permute_rows(&keys, n, &order).unwrap();
                let got = x.to_vec::<u32>(&c);
                let bad = (0..n).filter(|&i| got[i] != want[i]).count();
                assert_eq!(
                    bad, 0,
                    "{n} keys sorted in place by {end_bit} bits: Ok, {bad} wrong"
                );
            }
            Err(e) => panic!("{n} keys in place, {end_bit} bits: {e:?}"),
        }
    }
}

/// Every pair of sort arguments that shares memory: keys and their output, keys and the
/// indices, the two outputs, values and an output, part of a buffer.
#[test]
fn sort_outputs_that_share_memory_are_aliased() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    // Halves and whole rows of `n` u32 start on 512-byte boundaries, where handles may be cut
    // (the device's memory alignment: 512 on CUDA, at most 256 on wgpu).
    let n = 5120;
    let keys: Vec<u32> = (0..n as u32).rev().collect();
    let d = SortOptions::default();
    let x = upload(&c, &keys, &[n]);
    let y = DeviceTensor::empty(&c, &[n], DType::U32);
    let v = upload(&c, &vec![1.0f32; n], &[n]);
    // `x`'s memory as indices (u32 over the same buffer).
    let x_as_idx = x.clone();
    let both = DeviceTensor::<R>::empty(&c, &[2 * n], DType::U32);
    let half = |t: &DeviceTensor<R>, k: usize| {
        let mut h = t.narrow(0, k * n / 2, n).unwrap_or_else(|e| panic!("{e}"));
        // As an output: contiguous, offset 0, the handle cut instead.
        h.handle = h.handle.clone().offset_start((h.offset * 4) as u64);
        h.offset = 0;
        h
    };
    let h = Len::Host(n);
    let results: Vec<(&str, cubeprim::Result<()>)> = vec![
        (
            "keys = indices",
            cubeprim::sort_into(&c, &x, None, Some(&x_as_idx), h, d, &mut ws),
        ),
        (
            "out = indices",
            cubeprim::sort_into(&c, &x, Some(&y), Some(&y), h, d, &mut ws),
        ),
        (
            "overlapping halves",
            cubeprim::sort_into(
                &c,
                &x,
                Some(&half(&both, 0)),
                Some(&half(&both, 1)),
                h,
                d,
                &mut ws,
            ),
        ),
        (
            "values = value output",
            cubeprim::sort_pairs_into(&c, &x, &v, &y, &v, h, d, &mut ws),
        ),
        (
            "keys = value output",
            cubeprim::sort_pairs_into(&c, &x, &v, &y, &x, h, d, &mut ws),
        ),
        (
            "top_k values = keys",
            cubeprim::top_k_into(
                &c,
                &x.narrow(0, 0, 8).unwrap(),
                8,
                true,
                &x.narrow(0, 0, 8).unwrap(),
                &DeviceTensor::empty(&c, &[8], DType::U32),
                &mut ws,
            ),
        ),
        (
            "searchsorted into its queries",
            cubeprim::searchsorted_into(&c, &x, &y, Side::Left, &y),
        ),
    ];
    for (what, got) in results {
        assert!(aliased(&got), "{what}: {}", describe(&got));
    }
    // Disjoint outputs of one buffer: fine.
    let mut lo = both.clone();
    lo.shape = vec![n];
    lo.strides = vec![1];
    let hi = DeviceTensor::<R>::from_parts(
        both.handle.clone().offset_start((4 * n) as u64),
        vec![n],
        vec![1],
        0,
        DType::U32,
    );
    cubeprim::sort_into(&c, &x, Some(&lo), Some(&hi), h, d, &mut ws).unwrap();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(lo.to_vec::<u32>(&c), sorted);
    let idx: Vec<u32> = (0..n as u32).rev().collect();
    assert_eq!(hi.to_vec::<u32>(&c), idx);
}

/// select / partition into their own data or flags, and counts that share memory.
#[test]
fn select_and_partition_into_their_inputs_are_aliased() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let n = 10_000;
    let data: Vec<u32> = (0..n as u32).collect();
    let flags: Vec<u32> = (0..n as u32).map(|i| i % 3).collect();
    let x = upload(&c, &data, &[n]);
    let f = upload(&c, &flags, &[n]);
    let out = DeviceTensor::empty(&c, &[n], DType::U32);
    let count = cubeprim::new_count(&c);
    let results: Vec<(&str, cubeprim::Result<()>)> = vec![
        (
            "select out = data",
            cubeprim::select_into(&c, &x, &f, n, &x, &count, &mut ws),
        ),
        (
            "select out = flags",
            cubeprim::select_into(&c, &x, &f, n, &f, &count, &mut ws),
        ),
        (
            "select count in data",
            cubeprim::select_into(&c, &x, &f, n, &out, &x.narrow(0, 5, 1).unwrap(), &mut ws),
        ),
        (
            "select count in out",
            cubeprim::select_into(&c, &x, &f, n, &out, &out.narrow(0, 0, 1).unwrap(), &mut ws),
        ),
        (
            "partition out = data",
            cubeprim::partition_into(&c, &x, &f, n, &x, &count, &mut ws),
        ),
        (
            "partition out = flags",
            cubeprim::partition_into(&c, &x, &f, n, &f, &count, &mut ws),
        ),
        (
            "count_nonzero count in flags",
            cubeprim::count_nonzero_into(&c, &f, n, &f.narrow(0, 0, 1).unwrap(), &mut ws),
        ),
        (
            "reduce_by_key out = keys",
            cubeprim::reduce_by_key_into(&c, &x, &f, n, ScanOp::Sum, &x, &out, &count, &mut ws),
        ),
        (
            "reduce_by_key out values = out keys",
            cubeprim::reduce_by_key_into(&c, &x, &f, n, ScanOp::Sum, &out, &out, &count, &mut ws),
        ),
        (
            "histogram into its keys",
            cubeprim::histogram_into(&c, &x, 16, n, &x.narrow(0, 0, 16).unwrap(), &mut ws),
        ),
    ];
    for (what, got) in results {
        assert!(aliased(&got), "{what}: {}", describe(&got));
    }
    // Data and flags may be one tensor (read twice).
    cubeprim::select_into(&c, &f, &f, n, &out, &count, &mut ws).unwrap();
    let k = cubeprim::read_count(&c, &count);
    let want = cpu::select(&flags, &flags);
    assert_eq!(k, want.len());
    assert_eq!(&out.to_vec::<u32>(&c)[..k], &want[..]);
}

/// A device length that is also the count the call writes would change under the launch.
#[test]
fn device_count_that_is_also_the_output_count_is_aliased() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let n = 10_000;
    let x = upload(&c, &vec![1.0f32; n], &[n]);
    let f = upload(&c, &vec![1u32; n], &[n]);
    let out = DeviceTensor::empty(&c, &[n], DType::F32);
    let cnt = upload(&c, &[7000u32], &[1]);
    let len = || Len::Device {
        count: &cnt,
        capacity: n,
    };
    let results: Vec<(&str, cubeprim::Result<()>)> = vec![
        (
            "select_into",
            cubeprim::select_into(&c, &x, &f, len(), &out, &cnt, &mut ws),
        ),
        (
            "partition_into",
            cubeprim::partition_into(&c, &x, &f, len(), &out, &cnt, &mut ws),
        ),
        (
            "count_nonzero_into",
            cubeprim::count_nonzero_into(&c, &f, len(), &cnt, &mut ws),
        ),
        (
            "reduce_by_key_into",
            cubeprim::reduce_by_key_into(
                &c,
                &f,
                &x,
                len(),
                ScanOp::Sum,
                &DeviceTensor::empty(&c, &[n], DType::U32),
                &out,
                &cnt,
                &mut ws,
            ),
        ),
        (
            "scan_len_into into its count",
            cubeprim::scan_len_into(
                &c,
                &cnt,
                &cnt,
                None,
                Len::Device {
                    count: &cnt,
                    capacity: 1,
                },
                ScanOp::Sum,
                ScanOptions::default(),
                &mut ws,
            ),
        ),
    ];
    for (what, got) in results {
        assert!(aliased(&got), "{what}: {}", describe(&got));
    }
    assert_eq!(cnt.to_vec::<u32>(&c), vec![7000]);
}

/// Scans in place (the look-back's fallback re-reads a predecessor's input), indices over the
/// output, and partial overlaps; disjoint parts of one buffer work.
#[test]
fn scans_in_place_are_aliased() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let d = ScanOptions::default();
    // Multiples of 256: half of the row starts on a 512-byte boundary (where handles may be
    // cut).
    for n in [256usize, 196_608] {
        let data: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
        let x = upload(&c, &data, &[n]);
        let got = cubeprim::scan_into(&c, &x, &x, None, 0, ScanOp::Sum, d, &mut ws);
        assert!(aliased(&got), "scan_into in place, {n}: {}", describe(&got));
        let got = cubeprim::scan_len_into(&c, &x, &x, None, Len::Host(n), ScanOp::Max, d, &mut ws);
        assert!(
            aliased(&got),
            "scan_len_into in place, {n}: {}",
            describe(&got)
        );
        // Indices over the output's memory.
        let idx_dtype = cubeprim::index_dtype(&c);
        let buf = DeviceTensor::<R>::empty(&c, &[2 * n], DType::F64);
        let out =
            DeviceTensor::<R>::from_parts(buf.handle.clone(), vec![n], vec![1], 0, DType::F32);
        let idx = DeviceTensor::<R>::from_parts(buf.handle.clone(), vec![n], vec![1], 0, idx_dtype);
        let got = cubeprim::scan_into(&c, &x, &out, Some(&idx), 0, ScanOp::Max, d, &mut ws);
        assert!(aliased(&got), "indices over the output: {}", describe(&got));
        // An output starting half-way into the input.
        let shifted = DeviceTensor::<R>::from_parts(
            x.handle.clone().offset_start((n / 2 * 4) as u64),
            vec![n / 2],
            vec![1],
            0,
            DType::F32,
        );
        let src = x.narrow(0, 0, n / 2).unwrap();
        let got = cubeprim::scan_into(&c, &src, &shifted, None, 0, ScanOp::Sum, d, &mut ws);
        assert!(got.is_ok(), "disjoint halves: {}", describe(&got));
        let src = x.narrow(0, 1, n / 2).unwrap();
        let got = cubeprim::scan_into(&c, &src, &shifted, None, 0, ScanOp::Sum, d, &mut ws);
        assert!(aliased(&got), "halves one apart: {}", describe(&got));
    }
    // Disjoint parts of one buffer: the right result.
    let n: usize = 70_001;
    let data: Vec<f32> = (0..n).map(|i| (i % 5) as f32).collect();
    let at = n.next_multiple_of(1024);
    let mut both = data.clone();
    both.resize(at + n, -1.0);
    let buf = upload(&c, &both, &[at + n]);
    let input = buf.narrow(0, 0, n).unwrap();
    let output = DeviceTensor::<R>::from_parts(
        buf.handle.clone().offset_start((4 * at) as u64),
        vec![n],
        vec![1],
        0,
        DType::F32,
    );
    cubeprim::scan_into(&c, &input, &output, None, 0, ScanOp::Sum, d, &mut ws).unwrap();
    let want = cpu::scan(&data, &[n], 0, ScanOp::Sum, d).unwrap();
    assert_eq!(output.to_vec::<f32>(&c), want);
    assert_eq!(input.to_vec::<f32>(&c), data, "the input is untouched");
}

/// A handle cut off the device's binding alignment would fail in the runtime (wgpu's device
/// thread panics, and every later call of the process with it); it is refused, and the device
/// keeps working.
#[test]
fn handles_off_the_binding_alignment_are_refused() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let buf = upload(&c, &(0..1024u32).collect::<Vec<_>>(), &[1024]);
    for bytes in [4u64, 200, 1000] {
        let x = DeviceTensor::<R>::from_parts(
            buf.handle.clone().offset_start(bytes),
            vec![64],
            vec![1],
            0,
            DType::U32,
        );
        let ones = upload(&c, &[1u32; 64], &[64]);
        let d = ScanOptions::default();
        let results: Vec<(&str, cubeprim::Result<()>)> = vec![
            ("cumsum", unit(cubeprim::cumsum(&c, &x, 0))),
            (
                "scan_into it",
                cubeprim::scan_into(&c, &ones, &x, None, 0, ScanOp::Sum, d, &mut ws),
            ),
            (
                "sort",
                unit(cubeprim::sort(&c, &x, SortOptions::default(), &mut ws)),
            ),
            (
                "reduce_len_into",
                cubeprim::reduce_len_into(
                    &c,
                    &x,
                    64,
                    ReduceOp::Sum,
                    &DeviceTensor::empty(&c, &[], DType::U32),
                    &mut ws,
                ),
            ),
        ];
        for (what, got) in results {
            assert!(
                matches!(got, Err(Error::InvalidArgument(_))),
                "offset_start {bytes}, {what}: {}",
                describe(&got)
            );
        }
    }
    // The alignment itself: fine.
    let align = c.properties().memory.alignment;
    let x = DeviceTensor::<R>::from_parts(
        buf.handle.clone().offset_start(align),
        vec![64],
        vec![1],
        0,
        DType::U32,
    );
    let y = cubeprim::cumsum(&c, &x, 0).unwrap();
    let first = (align / 4) as u32;
    let want: Vec<u32> = (first..first + 64)
        .scan(0, |a, v| {
            *a += v;
            Some(*a)
        })
        .collect();
    assert_eq!(y.to_vec::<u32>(&c), want);
}

/// `overlaps`: clones and views of one allocation, sub-handles, separate allocations.
#[test]
fn overlap_is_detected_by_memory_and_bytes() {
    let Some(c) = client() else { return };
    let a = upload(&c, &[0u32; 64], &[64]);
    let b = upload(&c, &[0u32; 64], &[64]);
    assert!(a.overlaps(&a.clone()));
    assert!(!a.overlaps(&b));
    let lo = a.narrow(0, 0, 32).unwrap();
    let hi = a.narrow(0, 32, 32).unwrap();
    assert!(!lo.overlaps(&hi) && lo.overlaps(&a) && hi.overlaps(&a));
    let cut = DeviceTensor::<R>::from_parts(
        a.handle.clone().offset_start(128),
        vec![32],
        vec![1],
        0,
        DType::U32,
    );
    assert!(cut.overlaps(&hi) && !cut.overlaps(&lo));
    let empty = a.narrow(0, 3, 0).unwrap();
    assert!(!empty.overlaps(&a));
}

// ---- Item 9: panics -----------------------------------------------------------------------

/// The confirmed case: a zero `ScanTuning` divided by zero.
#[test]
fn zero_scan_tuning_is_an_invalid_argument() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let x = upload(&c, &vec![1.0f32; 10_000], &[10_000]);
    let zero = ScanTuning {
        threads: 0,
        vectors_per_thread: 0,
        windows: 0,
        spins: 0,
        stage: false,
        async_copy: false,
    };
    let ok = ScanTuning {
        threads: 64,
        vectors_per_thread: 2,
        windows: 4,
        spins: 0,
        stage: false,
        async_copy: false,
    };
    let tunings = [
        zero,
        ScanTuning { threads: 0, ..ok },
        ScanTuning { threads: 33, ..ok },
        ScanTuning {
            threads: 4096,
            ..ok
        },
        ScanTuning {
            vectors_per_thread: 0,
            ..ok
        },
        ScanTuning {
            vectors_per_thread: u32::MAX,
            ..ok
        },
        ScanTuning { windows: 0, ..ok },
        ScanTuning {
            windows: u32::MAX,
            ..ok
        },
    ];
    for t in tunings {
        let o = ScanOptions::default().tuning(t);
        let got = cubeprim::scan(&c, &x, 0, ScanOp::Sum, o, &mut ws);
        assert!(
            matches!(got, Err(Error::InvalidArgument(_))),
            "{t:?}: {}",
            describe(&got)
        );
        let got = cubeprim::scan_workspace_bytes(&c, &[10_000], 0, DType::F32, false, o);
        assert!(
            matches!(got, Err(Error::InvalidArgument(_))),
            "{t:?}: {got:?}"
        );
    }
    // Zero spins is valid: a silent predecessor is reduced at once.
    let o = ScanOptions::default().tuning(ok);
    let y = cubeprim::scan(&c, &x, 0, ScanOp::Sum, o, &mut ws).unwrap();
    let want: Vec<f32> = (1..=10_000).map(|i| i as f32).collect();
    assert_eq!(y.to_vec::<f32>(&c), want);
}

#[test]
fn narrow_and_transpose_out_of_range_are_errors() {
    let Some(c) = client() else { return };
    let x = upload(&c, &[0.0f32; 24], &[2, 3, 4]);
    assert_eq!(
        unit(x.narrow(3, 0, 1)),
        Err(Error::AxisOutOfRange { axis: 3, rank: 3 })
    );
    for (start, len) in [(0, 5), (4, 1), (5, 0), (1, usize::MAX), (usize::MAX, 2)] {
        let got = x.narrow(2, start, len);
        assert!(
            matches!(got, Err(Error::InvalidArgument(_))),
            "narrow(2, {start}, {len}): {}",
            describe(&got)
        );
    }
    assert!(x.narrow(2, 4, 0).is_ok());
    assert_eq!(
        unit(x.transpose(0, 3)),
        Err(Error::AxisOutOfRange { axis: 3, rank: 3 })
    );
    assert_eq!(
        unit(x.transpose(usize::MAX, 0)),
        Err(Error::AxisOutOfRange {
            axis: isize::MAX,
            rank: 3
        })
    );
    let t = x.transpose(0, 2).unwrap();
    assert_eq!(
        (t.shape.clone(), t.strides.clone()),
        (vec![4, 3, 2], vec![1, 4, 12])
    );
    // A narrow whose offset overflows.
    let mut huge = x.clone();
    huge.strides = vec![usize::MAX, 4, 1];
    huge.shape = vec![3, 3, 4];
    assert!(matches!(
        huge.narrow(0, 2, 1),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn from_slice_that_does_not_fill_its_shape_is_an_error() {
    let Some(c) = client() else { return };
    assert_eq!(
        unit(DeviceTensor::<R>::from_slice(
            &c,
            &[1.0f32, 2.0, 3.0],
            &[2, 2]
        )),
        Err(Error::LengthMismatch {
            expected: 4,
            got: 3
        })
    );
    assert!(DeviceTensor::<R>::from_slice::<u32>(&c, &[], &[3, 0]).is_ok());
    assert!(too_large(&DeviceTensor::<R>::from_slice::<u32>(
        &c,
        &[],
        &[usize::MAX, 2]
    )));
    let x = upload(&c, &[1u32, 2], &[2]);
    assert!(matches!(
        x.try_to_vec::<f32>(&c),
        Err(Error::UnsupportedDType { .. })
    ));
}

/// The CPU reference reports arguments that do not fit each other.
#[test]
fn cpu_functions_report_bad_arguments() {
    let d = ScanOptions::default();
    let data = [1.0f32, 2.0, 3.0];
    assert!(matches!(
        cpu::scan(&data, &[2, 2], 0, ScanOp::Sum, d),
        Err(Error::LengthMismatch {
            expected: 4,
            got: 3
        })
    ));
    assert!(matches!(
        cpu::scan_with_indices(&data, &[3], 1, ScanOp::Max, d),
        Err(Error::AxisOutOfRange { axis: 1, rank: 1 })
    ));
    assert!(matches!(
        cpu::scan(&data, &[], 0, ScanOp::Sum, d),
        Err(Error::LengthMismatch { .. })
    ));
    assert!(matches!(
        cpu::reduce(&data, &[3], Some(2), ScanOp::Sum),
        Err(Error::AxisOutOfRange { .. })
    ));
    assert!(matches!(
        cpu::reduce(&data, &[4], None, ScanOp::Sum),
        Err(Error::LengthMismatch { .. })
    ));
    assert!(matches!(
        cpu::nonzero(&data, &[0, 5]),
        Err(Error::LengthMismatch { .. })
    ));
    assert!(matches!(
        cpu::gather(&data, &[2], &[2], 1),
        Err(Error::OutOfBounds { .. })
    ));
    assert!(matches!(
        cpu::gather(&data, &[2], &[usize::MAX], 0),
        Err(Error::OutOfBounds { .. })
    ));
    assert!(matches!(
        cpu::gather(&data, &[2], &[], 0),
        Err(Error::ShapeMismatch { .. })
    ));
    assert_eq!(cpu::gather(&data, &[2], &[2], 0).unwrap(), vec![1.0, 3.0]);
    assert!(matches!(
        cpu::permute_rows(&data, 3, &[0, 3, 1]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        cpu::permute_rows(&data, 2, &[0, 1, 0, 1]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        cpu::argsort_rows_bits(&[1u32, 2], 2, false, 9, 8),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        cpu::argsort_rows_bits(&[1u32, 2], 2, false, 0, 65),
        Err(Error::InvalidArgument(_))
    ));
    // Rows of 2 sorted keys for 2 rows of queries: 3 keys are not rows of 2; 2 keys are one
    // row, fewer than the queries' two.
    assert!(cpu::searchsorted(&[1u32, 2, 3], 2, &[1, 2, 3, 4], 2, false).is_err());
    assert!(cpu::searchsorted(&[1u32, 2, 3, 4], 2, &[1, 2, 3, 4, 5], 2, false).is_err());
    assert!(cpu::searchsorted(&[1u32, 2, 3, 4], 0, &[1], 1, false).is_err());
    assert_eq!(
        cpu::searchsorted(&[1u32, 2, 3, 4], 2, &[2, 3, 2, 5], 2, false).unwrap(),
        vec![1, 2, 0, 2]
    );
}

/// Every entry point, called with hostile values, returns an `Err` and does not panic.
#[test]
fn no_panic_from_the_public_api() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let x = upload(&c, &[3.0f32, 1.0, 2.0, 0.0], &[2, 2]);
    let v = upload(&c, &[3u32, 1, 2, 0], &[4]);
    let f = upload(&c, &[1u32, 0, 1, 1], &[4]);
    let out = DeviceTensor::empty(&c, &[4], DType::U32);
    let count = cubeprim::new_count(&c);
    let zero_tuning = ScanTuning {
        threads: 0,
        vectors_per_thread: 0,
        windows: 0,
        spins: 0,
        stage: false,
        async_copy: false,
    };
    let mut past = x.clone();
    past.offset = usize::MAX - 1;
    let mut bad_strides = v.clone();
    bad_strides.strides = vec![];
    let mut wild_handle = v.clone();
    wild_handle.handle = wild_handle
        .handle
        .clone()
        .offset_start(1 << 40)
        .offset_end(1 << 40);
    let big = broadcast(&c, DType::U32, &[usize::MAX / 8]);
    let d = ScanOptions::default();
    let so = SortOptions::default();
    type Call<'a> = (
        &'static str,
        Box<dyn FnOnce(&mut Workspace<R>) -> cubeprim::Result<()> + 'a>,
    );
    let calls: Vec<Call<'_>> = vec![
        (
            "zero ScanTuning",
            Box::new(|ws| {
                unit(cubeprim::scan(
                    &c,
                    &v,
                    0,
                    ScanOp::Sum,
                    d.tuning(zero_tuning),
                    ws,
                ))
            }),
        ),
        (
            "zero SortTuning",
            Box::new(|ws| {
                let t = SortTuning {
                    threads: 0,
                    items: 0,
                    wide_counts: false,
                };
                let n = 1 << 16;
                let k = upload(&c, &vec![1u32; n], &[n]);
                unit(cubeprim::sort(&c, &k, so.tuning(t), ws))
            }),
        ),
        (
            "huge SortTuning",
            Box::new(|ws| {
                let t = SortTuning {
                    threads: 1024,
                    items: 1 << 22,
                    wide_counts: false,
                };
                let n = 1 << 16;
                let k = upload(&c, &vec![1u32; n], &[n]);
                unit(cubeprim::sort(&c, &k, so.tuning(t), ws))
            }),
        ),
        (
            "scan axis 100",
            Box::new(|ws| unit(cubeprim::scan(&c, &x, 100, ScanOp::Max, d, ws))),
        ),
        (
            "scan axis isize::MIN",
            Box::new(|ws| {
                unit(cubeprim::scan_with_indices(
                    &c,
                    &x,
                    isize::MIN,
                    ScanOp::Max,
                    d,
                    ws,
                ))
            }),
        ),
        (
            "reduce axis -5",
            Box::new(|ws| unit(cubeprim::reduce(&c, &x, Some(-5), ReduceOp::Sum, ws))),
        ),
        (
            "reduce_workspace_bytes axis 9",
            Box::new(|_| {
                unit(cubeprim::reduce_workspace_bytes(
                    &c,
                    &[2, 2],
                    Some(9),
                    DType::F32,
                ))
            }),
        ),
        (
            "offset past usize",
            Box::new(|ws| unit(cubeprim::reduce(&c, &past, None, ReduceOp::Sum, ws))),
        ),
        (
            "offset past usize, scan",
            Box::new(|ws| unit(cubeprim::scan(&c, &past, 1, ReduceOp::Sum, d, ws))),
        ),
        (
            "no strides, reduce",
            Box::new(|ws| unit(cubeprim::reduce(&c, &bad_strides, None, ReduceOp::Sum, ws))),
        ),
        (
            "no strides, select",
            Box::new(|ws| unit(cubeprim::select(&c, &bad_strides, &f, 4, ws))),
        ),
        (
            "no strides, histogram",
            Box::new(|ws| unit(cubeprim::histogram(&c, &bad_strides, 4, 4, ws))),
        ),
        (
            "no strides, searchsorted",
            Box::new(|_| {
                unit(cubeprim::searchsorted(
                    &c,
                    &v,
                    &bad_strides,
                    Side::Left,
                    IndexType::U32,
                ))
            }),
        ),
        (
            "handle offsets past its size",
            Box::new(|ws| unit(cubeprim::sort(&c, &wild_handle, so, ws))),
        ),
        (
            "huge broadcast, select",
            Box::new(|ws| unit(cubeprim::select(&c, &big, &big, big.num_elements(), ws))),
        ),
        (
            "huge length",
            Box::new(|ws| unit(cubeprim::select(&c, &v, &f, usize::MAX, ws))),
        ),
        (
            "huge device capacity",
            Box::new(|ws| {
                let cnt = upload(&c, &[2u32], &[1]);
                unit(cubeprim::select(
                    &c,
                    &v,
                    &f,
                    Len::Device {
                        count: &cnt,
                        capacity: usize::MAX,
                    },
                    ws,
                ))
            }),
        ),
        (
            "length past the data",
            Box::new(|ws| cubeprim::select_into(&c, &v, &f, 5, &out, &count, ws)),
        ),
        (
            "histogram of usize::MAX bins",
            Box::new(|ws| unit(cubeprim::histogram(&c, &v, usize::MAX, 4, ws))),
        ),
        (
            "top_k k > n",
            Box::new(|ws| {
                unit(cubeprim::top_k(
                    &c,
                    &v,
                    usize::MAX,
                    true,
                    IndexType::U32,
                    ws,
                ))
            }),
        ),
        (
            "sort bits [40, 8)",
            Box::new(|ws| unit(cubeprim::sort(&c, &v, so.bits(40, 8), ws))),
        ),
        (
            "sort bits [0, 99)",
            Box::new(|ws| unit(cubeprim::sort(&c, &v, so.bits(0, 99), ws))),
        ),
        (
            "sort of a scalar",
            Box::new(|ws| unit(cubeprim::sort(&c, &upload(&c, &[1u32], &[]), so, ws))),
        ),
        (
            "searchsorted rank mismatch",
            Box::new(|_| {
                unit(cubeprim::searchsorted(
                    &c,
                    &x,
                    &v,
                    Side::Left,
                    IndexType::U32,
                ))
            }),
        ),
        (
            "narrow past the axis",
            Box::new(|_| unit(v.narrow(0, 3, 2))),
        ),
        (
            "narrow of an axis past the rank",
            Box::new(|_| unit(v.narrow(7, 0, 0))),
        ),
        (
            "transpose past the rank",
            Box::new(|_| unit(x.transpose(1, 2))),
        ),
        (
            "from_slice short",
            Box::new(|_| unit(DeviceTensor::<R>::from_slice(&c, &[1u8, 2], &[3]))),
        ),
        (
            "to_vec of the wrong dtype",
            Box::new(|_| unit(v.try_to_vec::<i64>(&c))),
        ),
        (
            "to_vec past the buffer",
            Box::new(|_| unit(past.try_to_vec::<f32>(&c))),
        ),
        (
            "scan in place",
            Box::new(|ws| cubeprim::scan_into(&c, &v, &v, None, 0, ScanOp::Sum, d, ws)),
        ),
        (
            "sort in place",
            Box::new(|ws| cubeprim::sort_into(&c, &v, Some(&v), None, Len::Host(4), so, ws)),
        ),
        (
            "select into its data",
            Box::new(|ws| cubeprim::select_into(&c, &v, &f, 4, &v, &count, ws)),
        ),
        (
            "count = length",
            Box::new(|ws| {
                cubeprim::select_into(
                    &c,
                    &v,
                    &f,
                    Len::Device {
                        count: &count,
                        capacity: 4,
                    },
                    &out,
                    &count,
                    ws,
                )
            }),
        ),
        (
            "nonzero of a huge broadcast",
            Box::new(|ws| unit(cubeprim::nonzero(&c, &big, ws))),
        ),
        (
            "unique of a huge broadcast",
            Box::new(|ws| unit(cubeprim::unique(&c, &big, true, true, ws))),
        ),
        (
            "cpu::scan short",
            Box::new(|_| unit(cpu::scan(&[1.0f32], &[2], 0, ScanOp::Sum, d))),
        ),
        (
            "cpu::reduce axis",
            Box::new(|_| unit(cpu::reduce(&[1.0f32], &[1], Some(1), ScanOp::Sum))),
        ),
        (
            "cpu::gather past",
            Box::new(|_| unit(cpu::gather(&[1.0f32], &[4], &[1], 0))),
        ),
        (
            "cpu::searchsorted rows",
            Box::new(|_| unit(cpu::searchsorted(&[1u32, 2], 1, &[1, 2, 3], 1, false))),
        ),
        (
            "cpu::permute_rows",
            Box::new(|_| unit(cpu::permute_rows(&[1u32, 2], 2, &[5]))),
        ),
        (
            "a handle off the binding alignment",
            Box::new(|ws| {
                let h = v.handle.clone().offset_start(4);
                let cut = DeviceTensor::<R>::from_parts(h, vec![3], vec![1], 0, DType::U32);
                unit(cubeprim::scan(&c, &cut, 0, ScanOp::Sum, d, ws))
            }),
        ),
    ];
    let mut failures = Vec::new();
    for (what, call) in calls {
        match catch_unwind(AssertUnwindSafe(|| call(&mut ws))) {
            Ok(Err(_)) => {}
            Ok(Ok(())) => failures.push(format!("{what}: Ok")),
            Err(p) => {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                failures.push(format!("{what}: panicked: {msg}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
