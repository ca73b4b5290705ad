//! Signed zeros (issue 35): every op that compares floats treats `-0.0` and `+0.0` as equal,
//! as PyTorch does (and CUB, which canonicalises `-0.0` in its radix key). Stable sorts keep
//! zeros of either sign in their input order and write the input's own bits; `searchsorted` /
//! `bucketize` compare them equal; top-k resolves their ties as any tie (the lower index
//! first); `unique` returns one zero (the first one in sorted order, i.e. in input order);
//! `cummax` / `cummin` treat them as ties (the later index wins).
//!
//! Expectations are PyTorch's, written out here (an order on `f64` where `-0.0 == 0.0`, NaN
//! last), not taken from `cubeprim::cpu`; the CPU functions are checked against them too.
//! f32, f64, f16 and bf16 where the runtime has them; device-wide and in-cube sorts.

use crate::common;

use common::*;
use cubeprim::cpu::{self, SortElement};
use cubeprim::sort::Route;
use cubeprim::{
    DType, DeviceTensor, Element, IndexType, Payload, PlaneOps, ScanOp, ScanOptions, Side,
    SortOptions, TopKMethod, Workspace,
};
use half::{bf16, f16};
use rand::rngs::StdRng;
use rand::Rng;
use std::cmp::Ordering;

/// PyTorch's order: by value, `-0.0 == 0.0`, NaN last (every NaN equal).
fn torch_cmp<E: Element>(a: &E, b: &E) -> Ordering {
    let (a, b) = (a.to_f64(), b.to_f64());
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).expect("not NaN"),
    }
}

/// PyTorch's stable argsort of each row of `n` (NaN first descending).
fn torch_argsort<E: Element>(data: &[E], n: usize, descending: bool) -> Vec<u32> {
    data.chunks(n)
        .flat_map(|row| {
            let mut idx: Vec<u32> = (0..row.len() as u32).collect();
            idx.sort_by(|&a, &b| {
                let o = torch_cmp(&row[a as usize], &row[b as usize]);
                if descending {
                    o.reverse()
                } else {
                    o
                }
            });
            idx
        })
        .collect()
}

fn bits<E: Element>(v: &[E]) -> Vec<u8> {
    bytemuck::cast_slice::<E, u8>(v).to_vec()
}

fn e<E: Element>(x: f64) -> E {
    E::from_f64(x)
}

/// Zeros of random sign; with `others`, a third of the keys are -1, 1, 2 or NaN.
fn zeros<E: Element>(r: &mut StdRng, n: usize, others: bool) -> Vec<E> {
    (0..n)
        .map(|_| match r.random_range(0..if others { 12 } else { 8 }) {
            0..=3 => e(0.0),
            4..=7 => e(-0.0),
            8 => e(-1.0),
            9 => e(1.0),
            10 => e(2.0),
            _ => e(f64::NAN),
        })
        .collect()
}

fn u32s(v: &[u32]) -> Vec<i64> {
    v.iter().map(|&i| i64::from(i)).collect()
}

fn read_idx(c: &Client, t: &DeviceTensor<R>) -> Vec<i64> {
    match t.dtype {
        DType::U32 => t.to_vec::<u32>(c).into_iter().map(i64::from).collect(),
        _ => read_indices(c, t),
    }
}

/// The CPU reference (the test oracle of the other suites and the CPU path) on hand-written
/// PyTorch results.
fn cpu_case<E: SortElement + cpu::ScanElement>() {
    let t = E::DTYPE;
    let (p, m) = (e::<E>(0.0), e::<E>(-0.0));
    for (x, desc) in [
        ([p, m], false),
        ([m, p], false),
        ([p, m], true),
        ([m, p], true),
    ] {
        assert_eq!(cpu::argsort_rows(&x, 2, desc), [0, 1], "{t} argsort {x:?}");
        assert_eq!(
            bits(&cpu::sort_rows(&x, 2, desc)),
            bits(&x),
            "{t} sort {x:?}"
        );
        let ob = cpu::argsort_rows_bits(&x, 2, desc, 0, cpu::key_bits(t)).unwrap();
        assert_eq!(ob, [0, 1], "{t} argsort_rows_bits {x:?}");
    }
    let x: Vec<E> = [1.0, -0.0, 0.0, -0.0, -1.0, 0.0].map(e).to_vec();
    assert_eq!(cpu::argsort_rows(&x, 6, false), [4, 1, 2, 3, 5, 0], "{t}");
    assert_eq!(cpu::argsort_rows(&x, 6, true), [0, 1, 2, 3, 5, 4], "{t}");
    // searchsorted([-0.0, 1.0], +0.0) == 0 (left), 1 (right), as torch.
    let ss = |s: &[f64], q: &[f64], right| {
        let (s, q): (Vec<E>, Vec<E>) = (
            s.iter().map(|&v| e(v)).collect(),
            q.iter().map(|&v| e(v)).collect(),
        );
        cpu::searchsorted(&s, s.len(), &q, q.len(), right).unwrap()
    };
    assert_eq!(ss(&[-0.0, 1.0], &[0.0, -0.0], false), [0, 0], "{t}");
    assert_eq!(ss(&[-0.0, 1.0], &[0.0, -0.0], true), [1, 1], "{t}");
    assert_eq!(ss(&[0.0, 1.0], &[-0.0], false), [0], "{t}");
    assert_eq!(
        ss(&[-1.0, 0.0, -0.0, 0.0, 2.0], &[0.0, -0.0], false),
        [1, 1],
        "{t}"
    );
    assert_eq!(
        ss(&[-1.0, 0.0, -0.0, 0.0, 2.0], &[0.0, -0.0], true),
        [4, 4],
        "{t}"
    );
    // top-k: ties between zeros go to the lower index.
    let (v, i) = cpu::top_k_rows(&x, 6, 4, true);
    assert_eq!(
        (bits(&v), i),
        (bits(&[1.0, -0.0, 0.0, -0.0].map(e::<E>)), vec![0, 1, 2, 3])
    );
    let (v, i) = cpu::top_k_rows(&x, 6, 3, false);
    assert_eq!(
        (bits(&v), i),
        (bits(&[-1.0, -0.0, 0.0].map(e::<E>)), vec![4, 1, 2])
    );
    // unique: one zero, the first in sorted (= input) order.
    let (v, c, inv) = cpu::unique(&[0.0, -0.0, 1.0, -0.0].map(e::<E>));
    assert_eq!(bits(&v), bits(&[0.0, 1.0].map(e::<E>)), "{t} unique");
    assert_eq!((c, inv), (vec![3, 1], vec![0, 0, 1, 0]), "{t} unique");
    let (v, _, _) = cpu::unique(&[-0.0, 0.0].map(e::<E>));
    assert_eq!(bits(&v), bits(&[-0.0].map(e::<E>)), "{t} unique");
    let (v, c, _) = cpu::unique_consecutive(&[0.0, -0.0, 1.0, -0.0].map(e::<E>));
    assert_eq!(bits(&v), bits(&[0.0, 1.0, -0.0].map(e::<E>)), "{t}");
    assert_eq!(c, [2, 1, 1], "{t}");
    // cummax / cummin: zeros tie, the later index wins (and its value).
    let z = [0.0, -0.0, 0.0, -0.0].map(e::<E>);
    for op in [ScanOp::Max, ScanOp::Min] {
        let (v, i) = cpu::scan_with_indices(&z, &[4], 0, op, ScanOptions::default()).unwrap();
        assert_eq!((bits(&v), i), (bits(&z), vec![0, 1, 2, 3]), "{t} {op:?}");
    }
}

#[test]
fn cpu_reference_treats_signed_zeros_as_equal() {
    cpu_case::<f32>();
    cpu_case::<f64>();
    cpu_case::<f16>();
    cpu_case::<bf16>();
    // The case: the stable argsort of 2^16 random-sign zeros is the identity.
    let x: Vec<f32> = zeros(&mut rng(350), 1 << 16, false);
    let id: Vec<u32> = (0..1u32 << 16).collect();
    assert!(cpu::argsort_rows(&x, x.len(), false) == id);
    assert!(cpu::argsort_rows(&x, x.len(), true) == id);
}

/// Every sort entry point on `data` (rows of the last axis of `shape`) against PyTorch's
/// stable order: indices exact, keys and values bit for bit.
fn check_sorts<E: SortElement>(
    c: &Client,
    ws: &mut Workspace<R>,
    data: &[E],
    shape: &[usize],
    opts: SortOptions,
    route: Route,
) {
    let n = *shape.last().unwrap();
    let what = format!("{} {shape:?} {opts:?}", E::DTYPE);
    let plan = cubeprim::sort_plan(
        c,
        shape,
        E::DTYPE,
        Payload::Indices(IndexType::U32),
        false,
        opts,
    )
    .unwrap();
    assert_eq!(plan.route, route, "{what}");
    let want_i = torch_argsort(data, n, opts.descending);
    let want_v = cpu::permute_rows(data, n, &want_i).unwrap();
    assert!(
        cpu::argsort_rows(data, n, opts.descending) == want_i,
        "{what}: cpu argsort"
    );
    let want_i = u32s(&want_i);
    let x = upload(c, data, shape);

    let (v, i) = cubeprim::sort_with_indices(c, &x, IndexType::U32, opts, ws).unwrap();
    assert!(
        bits(&v.to_vec::<E>(c)) == bits(&want_v),
        "{what}: sort_with_indices values"
    );
    let got = read_idx(c, &i);
    let bad = got.iter().zip(&want_i).filter(|(a, b)| a != b).count();
    assert!(
        bad == 0,
        "{what}: sort_with_indices: {bad} of {} indices differ",
        got.len()
    );
    // Indices only (4-byte keys device-wide: the packed argsort).
    let i = cubeprim::argsort(c, &x, IndexType::U32, opts, ws).unwrap();
    let got = read_idx(c, &i);
    let bad = got.iter().zip(&want_i).filter(|(a, b)| a != b).count();
    assert!(
        bad == 0,
        "{what}: argsort: {bad} of {} indices differ",
        got.len()
    );
    let k = cubeprim::sort(c, &x, opts, ws).unwrap();
    assert!(
        bits(&k.to_vec::<E>(c)) == bits(&want_v),
        "{what}: sort keys"
    );
    let pos: Vec<u32> = (0..data.len()).map(|j| (j % n) as u32).collect();
    let (k, v) = cubeprim::sort_pairs(c, &x, &upload(c, &pos, shape), opts, ws).unwrap();
    assert!(
        bits(&k.to_vec::<E>(c)) == bits(&want_v),
        "{what}: sort_pairs keys"
    );
    assert!(
        u32s(&v.to_vec::<u32>(c)) == want_i,
        "{what}: sort_pairs values"
    );
}

fn sort_case<E: SortElement>(c: &Client, ws: &mut Workspace<R>, seed: u64) {
    if !supports(c, E::DTYPE) {
        return;
    }
    let mut r = rng(seed);
    for desc in [false, true] {
        let o = |o: SortOptions| if desc { o.descending() } else { o };
        let wide: Vec<E> = zeros(&mut r, 1 << 18, true);
        check_sorts(
            c,
            ws,
            &wide,
            &[1 << 18],
            o(SortOptions::default()),
            Route::DeviceWide,
        );
        let rows: Vec<E> = zeros(&mut r, 8 * 300, true);
        check_sorts(
            c,
            ws,
            &rows,
            &[8, 300],
            o(SortOptions::default()),
            Route::InCube,
        );
    }
}

/// The case: a stable argsort of 2^16 random-sign zeros is the identity (it differed at
/// every position), device-wide and in one cube.
#[test]
fn argsort_of_random_sign_zeros_is_the_identity() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let x: Vec<f32> = zeros(&mut rng(35), 1 << 16, false);
    let id: Vec<i64> = (0..1i64 << 16).collect();
    for opts in [SortOptions::default(), SortOptions::default().descending()] {
        let i = cubeprim::argsort(
            &c,
            &upload(&c, &x, &[1 << 16]),
            IndexType::U32,
            opts,
            &mut ws,
        )
        .unwrap();
        let got = read_idx(&c, &i);
        let bad = got.iter().zip(&id).filter(|(a, b)| a != b).count();
        assert!(bad == 0, "{opts:?}: {bad} of {} positions differ", id.len());
        let i = cubeprim::argsort(
            &c,
            &upload(&c, &x, &[64, 1024]),
            IndexType::U32,
            opts,
            &mut ws,
        )
        .unwrap();
        let rows: Vec<i64> = (0..1i64 << 16).map(|j| j % 1024).collect();
        assert!(read_idx(&c, &i) == rows, "{opts:?}: rows of 1024");
    }
}

#[test]
fn sorts_keep_zeros_in_input_order() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    sort_case::<f32>(&c, &mut ws, 1);
    sort_case::<f64>(&c, &mut ws, 2);
    sort_case::<f16>(&c, &mut ws, 3);
    sort_case::<bf16>(&c, &mut ws, 4);
    // f32 with the ballot and the split rankings.
    let mut r = rng(5);
    let x: Vec<f32> = zeros(&mut r, 1 << 18, true);
    for opts in [
        SortOptions::default().plane_ops(PlaneOps::Force),
        SortOptions::default().plane_ops(PlaneOps::Off),
        SortOptions::default().plane_ops(PlaneOps::Off).descending(),
    ] {
        check_sorts(&c, &mut ws, &x, &[1 << 18], opts, Route::DeviceWide);
    }
    let rows: Vec<f32> = zeros(&mut r, 4 * 1000, true);
    let opts = SortOptions::default().plane_ops(PlaneOps::Off);
    check_sorts(&c, &mut ws, &rows, &[4, 1000], opts, Route::InCube);
}

fn top_k_case<E: SortElement>(c: &Client, ws: &mut Workspace<R>, seed: u64) {
    if !supports(c, E::DTYPE) {
        return;
    }
    let what = E::DTYPE;
    let x: Vec<E> = [1.0, -0.0, 0.0, -0.0, -1.0, 0.0].map(e).to_vec();
    let xt = upload(c, &x, &[6]);
    for method in [TopKMethod::Select, TopKMethod::Sort] {
        let (v, i) = cubeprim::top_k_with(c, &xt, 4, true, IndexType::U32, method, ws).unwrap();
        assert_eq!(
            bits(&v.to_vec::<E>(c)),
            bits(&[1.0, -0.0, 0.0, -0.0].map(e::<E>)),
            "{what}"
        );
        assert_eq!(read_idx(c, &i), [0, 1, 2, 3], "{what} {method:?}");
        let (v, i) = cubeprim::top_k_with(c, &xt, 3, false, IndexType::U32, method, ws).unwrap();
        assert_eq!(
            bits(&v.to_vec::<E>(c)),
            bits(&[-1.0, -0.0, 0.0].map(e::<E>)),
            "{what}"
        );
        assert_eq!(read_idx(c, &i), [4, 1, 2], "{what} {method:?}");
    }
    // Rows whose k-th key is a zero: the cut goes through the run of zeros.
    let (rows, n) = (4, 1000);
    let data: Vec<E> = zeros(&mut rng(seed), rows * n, true);
    let x = upload(c, &data, &[rows, n]);
    for largest in [true, false] {
        let order = torch_argsort(&data, n, largest);
        for k in [100, 400] {
            let want_i: Vec<i64> = (0..rows)
                .flat_map(|r| order[r * n..r * n + k].iter().map(|&j| i64::from(j)))
                .collect();
            let want_v: Vec<E> = want_i
                .iter()
                .enumerate()
                .map(|(j, &i)| data[j / k * n + i as usize])
                .collect();
            for method in [TopKMethod::Select, TopKMethod::Sort] {
                let (v, i) =
                    cubeprim::top_k_with(c, &x, k, largest, IndexType::U32, method, ws).unwrap();
                let what = format!("{what} k={k} largest={largest} {method:?}");
                assert!(bits(&v.to_vec::<E>(c)) == bits(&want_v), "{what}: values");
                assert!(read_idx(c, &i) == want_i, "{what}: indices");
            }
        }
    }
}

#[test]
fn top_k_ties_between_zeros_take_the_lower_index() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    top_k_case::<f32>(&c, &mut ws, 11);
    top_k_case::<f64>(&c, &mut ws, 12);
    top_k_case::<f16>(&c, &mut ws, 13);
    top_k_case::<bf16>(&c, &mut ws, 14);
}

fn search_case<E: SortElement>(c: &Client) {
    if !supports(c, E::DTYPE) {
        return;
    }
    let up = |v: &[f64]| {
        upload(
            c,
            &v.iter().map(|&x| e::<E>(x)).collect::<Vec<_>>(),
            &[v.len()],
        )
    };
    let q = up(&[0.0, -0.0]);
    for (sorted, left, right) in [
        (&[-0.0, 1.0][..], [0, 0], [1, 1]),
        (&[0.0, 1.0][..], [0, 0], [1, 1]),
        (&[-0.0, 0.0, 1.0][..], [0, 0], [2, 2]),
        (&[-1.0, 0.0, -0.0, 0.0, 2.0][..], [1, 1], [4, 4]),
    ] {
        let s = up(sorted);
        let what = format!("{} {sorted:?}", E::DTYPE);
        let l = cubeprim::searchsorted(c, &s, &q, Side::Left, IndexType::U32).unwrap();
        assert_eq!(read_idx(c, &l), left, "{what}: searchsorted left");
        let r = cubeprim::searchsorted(c, &s, &q, Side::Right, IndexType::U32).unwrap();
        assert_eq!(read_idx(c, &r), right, "{what}: searchsorted right");
        let b = cubeprim::bucketize(c, &q, &s, false, IndexType::U32).unwrap();
        assert_eq!(read_idx(c, &b), left, "{what}: bucketize");
        let b = cubeprim::bucketize(c, &q, &s, true, IndexType::U32).unwrap();
        assert_eq!(read_idx(c, &b), right, "{what}: bucketize right");
    }
}

#[test]
fn searchsorted_and_bucketize_compare_zeros_equal() {
    let Some(c) = client() else { return };
    search_case::<f32>(&c);
    search_case::<f64>(&c);
    search_case::<f16>(&c);
    search_case::<bf16>(&c);
}

fn unique_case<E: SortElement + PartialEq>(c: &Client, ws: &mut Workspace<R>, seed: u64) {
    if !supports(c, E::DTYPE) {
        return;
    }
    let t = E::DTYPE;
    let x: Vec<E> = [0.0, -0.0, 1.0, -0.0].map(e).to_vec();
    let u = cubeprim::unique(c, &upload(c, &x, &[4]), true, true, ws).unwrap();
    assert_eq!(
        bits(&u.values.to_vec::<E>(c)),
        bits(&[0.0, 1.0].map(e::<E>)),
        "{t}"
    );
    assert_eq!(read_indices(c, u.counts.as_ref().unwrap()), [3, 1], "{t}");
    assert_eq!(
        read_indices(c, u.inverse.as_ref().unwrap()),
        [0, 0, 1, 0],
        "{t}"
    );
    let u = cubeprim::unique(
        c,
        &upload(c, &[-0.0, 0.0].map(e::<E>), &[2]),
        false,
        false,
        ws,
    )
    .unwrap();
    assert_eq!(
        bits(&u.values.to_vec::<E>(c)),
        bits(&[-0.0].map(e::<E>)),
        "{t}"
    );
    let u = cubeprim::unique_consecutive_sized(c, &upload(c, &x, &[4]), false, true, ws).unwrap();
    assert_eq!(
        bits(&u.values.to_vec::<E>(c)),
        bits(&[0.0, 1.0, -0.0].map(e::<E>)),
        "{t}"
    );
    assert_eq!(
        read_indices(c, u.counts.as_ref().unwrap()),
        [2, 1, 1],
        "{t}"
    );
    // Device-wide: -1, one zero (the first zero of the input), 1, 2, then each NaN.
    let n = (1 << 18) + 1;
    let x: Vec<E> = zeros(&mut rng(seed), n, true);
    let u = cubeprim::unique(c, &upload(c, &x, &[n]), true, true, ws).unwrap();
    let nans = x.iter().filter(|v| v.to_f64().is_nan()).count();
    let first_zero = *x.iter().find(|v| v.to_f64() == 0.0).unwrap();
    let got = u.values.to_vec::<E>(c);
    assert_eq!(got.len(), 4 + nans, "{t}: number of unique values");
    assert_eq!(
        bits(&got[..4]),
        bits(&[e(-1.0), first_zero, e(1.0), e(2.0)]),
        "{t}"
    );
    let (wv, wc, wi) = cpu::unique(&x);
    assert_eq!(bits(&got), bits(&wv), "{t}: cpu unique");
    assert!(
        read_indices(c, u.counts.as_ref().unwrap()) == wc,
        "{t}: counts"
    );
    assert!(
        read_indices(c, u.inverse.as_ref().unwrap()) == wi,
        "{t}: inverse"
    );
}

#[test]
fn unique_returns_one_zero() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    unique_case::<f32>(&c, &mut ws, 21);
    unique_case::<f64>(&c, &mut ws, 22);
    unique_case::<f16>(&c, &mut ws, 23);
    unique_case::<bf16>(&c, &mut ws, 24);
}

fn cum_case<E: SortElement + cpu::ScanElement>(c: &Client, ws: &mut Workspace<R>, seed: u64) {
    if !supports(c, E::DTYPE) {
        return;
    }
    let mut r = rng(seed);
    // Zeros only: every element ties with the running max / min, so each takes over.
    for shape in [vec![1 << 18], vec![4, 300]] {
        let n: usize = shape.iter().product();
        let x: Vec<E> = zeros(&mut r, n, false);
        let xt = upload(c, &x, &shape);
        let inner = *shape.last().unwrap();
        let want_i: Vec<i64> = (0..n as i64).map(|j| j % inner as i64).collect();
        for op in [ScanOp::Max, ScanOp::Min] {
            let what = format!("{} {shape:?} {op:?}", E::DTYPE);
            let (v, i) =
                cubeprim::scan_with_indices(c, &xt, -1, op, ScanOptions::default(), ws).unwrap();
            assert!(bits(&v.to_vec::<E>(c)) == bits(&x), "{what}: values");
            assert!(read_indices(c, &i) == want_i, "{what}: indices");
            let (cv, ci) =
                cpu::scan_with_indices(&x, &shape, shape.len() - 1, op, ScanOptions::default())
                    .unwrap();
            assert!(bits(&cv) == bits(&x) && ci == want_i, "{what}: cpu");
        }
    }
    // [1, 0, -0, 0, -1] and [-1, -0, 0, -0, 1]: cummax / cummin through zeros.
    let x = [-1.0, -0.0, 0.0, -0.0, 1.0].map(e::<E>);
    let (v, i) = cubeprim::cummax_with_indices(c, &upload(c, &x, &[5]), 0).unwrap();
    assert_eq!(bits(&v.to_vec::<E>(c)), bits(&x), "{}", E::DTYPE);
    assert_eq!(read_indices(c, &i), [0, 1, 2, 3, 4], "{}", E::DTYPE);
    let x = [1.0, 0.0, -0.0, 0.0, -1.0].map(e::<E>);
    let (v, i) = cubeprim::cummin_with_indices(c, &upload(c, &x, &[5]), 0).unwrap();
    assert_eq!(bits(&v.to_vec::<E>(c)), bits(&x), "{}", E::DTYPE);
    assert_eq!(read_indices(c, &i), [0, 1, 2, 3, 4], "{}", E::DTYPE);
}

#[test]
fn cummax_cummin_zeros_tie_to_the_later_index() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    cum_case::<f32>(&c, &mut ws, 31);
    cum_case::<f64>(&c, &mut ws, 32);
    cum_case::<f16>(&c, &mut ws, 33);
    cum_case::<bf16>(&c, &mut ws, 34);
}
