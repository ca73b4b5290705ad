//! User-defined operators ([`cubeprim::ops::ScanOp`]) through [`cubeprim::scan_with`] and
//! [`cubeprim::reduce_with`], against a host loop: one-tile rows, multi-tile rows (the
//! look-back route and the reduce-then-scan route), each variant, axes and views.

use crate::common;

use common::*;
use cubecl::prelude::*;
use cubeprim::{Error, ScanAlgorithm, ScanOptions, Workspace};
use rand::Rng;

/// The cap of [`SatAdd`].
const CAP: i32 = 5000;

/// Saturating sum: `min(a + b, CAP)`, associative on non-negative values, identity 0.
struct SatAdd;

#[cube]
impl cubeprim::ops::ScanOp for SatAdd {
    fn identity<A: Numeric>() -> A {
        A::from_int(0)
    }
    fn combine<A: Numeric>(a: A, b: A) -> A {
        let (s, cap) = (a + b, A::from_int(CAP as i64));
        select(s > cap, cap, s)
    }
    #[allow(clippy::useless_conversion)]
    fn take_second<A: Numeric>(_a: A, _b: A) -> bool {
        false.into()
    }
}

fn sat_add(a: i32, b: i32) -> i32 {
    (a + b).min(CAP)
}

/// The scan of row-major `x` along `axis` with [`sat_add`].
fn host_scan(x: &[i32], shape: &[usize], axis: usize, opts: ScanOptions) -> Vec<i32> {
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let outer: usize = shape[..axis].iter().product();
    let mut out = vec![0; x.len()];
    for o in 0..outer {
        for i in 0..inner {
            let mut acc = 0;
            for s in 0..n {
                let j = if opts.reverse { n - 1 - s } else { s };
                let at = (o * n + j) * inner + i;
                let next = sat_add(acc, x[at]);
                out[at] = if opts.exclusive { acc } else { next };
                acc = next;
            }
        }
    }
    out
}

#[test]
fn saturating_scan_and_reduce() {
    let Some(c) = client() else { return };
    let mut rng = rng(40);
    let mut ws = Workspace::new();
    let d = ScanOptions::default();
    // Lengths of one tile and of many (the running value saturates after about 1000 elements
    // of mean 5, so the cap is reached inside and across tiles).
    let cases: [(Vec<usize>, usize, &[ScanOptions]); 6] = [
        (vec![0], 0, &[d]),
        (vec![1], 0, &[d, d.exclusive()]),
        (
            vec![5, 300],
            1,
            &[d, d.exclusive(), d.reverse(), d.exclusive().reverse()],
        ),
        (vec![700, 3], 0, &[d, d.reverse()]),
        (vec![4097], 0, &[d, d.exclusive().reverse()]),
        (vec![(1 << 16) + 3], 0, &[d, d.exclusive(), d.reverse()]),
    ];
    for (shape, axis, variants) in cases {
        let n = shape.iter().product();
        let data: Vec<i32> = (0..n).map(|_| rng.random_range(0..11)).collect();
        let x = upload(&c, &data, &shape);
        for &opts in variants {
            let what = format!("{shape:?} axis {axis} {opts:?}");
            let want = host_scan(&data, &shape, axis, opts);
            let y = cubeprim::scan_with(&c, &x, axis as isize, SatAdd, opts, &mut ws)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(y.to_vec::<i32>(&c), want, "scan_with {what}");
        }
        // The reduction: the last element of the inclusive scan.
        let want = host_scan(&data, &shape, axis, d);
        let r = cubeprim::reduce_with(&c, &x, Some(axis as isize), SatAdd, &mut ws).unwrap();
        let inner: usize = shape[axis + 1..].iter().product();
        let outer: usize = shape[..axis].iter().product();
        let last = shape[axis].saturating_sub(1);
        let mut expected = vec![];
        for o in 0..outer {
            for i in 0..inner {
                expected.push(if shape[axis] == 0 {
                    0
                } else {
                    want[(o * shape[axis] + last) * inner + i]
                });
            }
        }
        assert_eq!(
            r.to_vec::<i32>(&c),
            expected,
            "reduce_with {shape:?} axis {axis}"
        );
        let all = cubeprim::reduce_with(&c, &x, None, SatAdd, &mut ws).unwrap();
        let total = data.iter().fold(0, |a, &b| sat_add(a, b));
        assert_eq!(all.to_vec::<i32>(&c), [total], "reduce_with all {shape:?}");
    }
}

/// The other routes and entry points: reduce-then-scan, a transposed view, `_into` forms, and
/// f32 data (the operator is generic over the accumulator).
#[test]
fn routes_views_and_into() {
    let Some(c) = client() else { return };
    let mut rng = rng(41);
    let mut ws = Workspace::new();
    let n = 3 * 4096 + 5;
    let data: Vec<i32> = (0..n).map(|_| rng.random_range(0..3)).collect();
    let x = upload(&c, &data, &[n]);
    let opts = ScanOptions::default().algorithm(ScanAlgorithm::ReduceThenScan);
    let y = cubeprim::scan_with(&c, &x, 0, SatAdd, opts, &mut ws).unwrap();
    assert_eq!(
        y.to_vec::<i32>(&c),
        host_scan(&data, &[n], 0, opts),
        "reduce-then-scan"
    );

    // The transpose of a [40, 30] tensor, scanned along its rows (the tensor's columns).
    let mem: Vec<i32> = (0..1200).map(|_| rng.random_range(0..300)).collect();
    let t = upload(&c, &mem, &[40, 30]).transpose(0, 1).unwrap();
    let view: Vec<i32> = (0..1200).map(|k| mem[(k % 40) * 30 + k / 40]).collect();
    let out = upload(&c, &[0i32; 1200], &[30, 40]);
    let d = ScanOptions::default();
    cubeprim::scan_with_into(&c, &t, &out, 1, SatAdd, d, &mut ws).unwrap();
    assert_eq!(
        out.to_vec::<i32>(&c),
        host_scan(&view, &[30, 40], 1, d),
        "view"
    );
    let r = upload(&c, &[0i32; 30], &[30]);
    cubeprim::reduce_with_into(&c, &t, Some(1), SatAdd, &r, &mut ws).unwrap();
    let want: Vec<i32> = (0..30)
        .map(|i| view[i * 40..][..40].iter().fold(0, |a, &b| sat_add(a, b)))
        .collect();
    assert_eq!(r.to_vec::<i32>(&c), want, "reduce_with_into view");

    // f32: exact on small integers.
    let xf: Vec<f32> = data.iter().map(|&v| v as f32).collect();
    let y = cubeprim::scan_with(&c, &upload(&c, &xf, &[n]), 0, SatAdd, d, &mut ws).unwrap();
    let want: Vec<f32> = host_scan(&data, &[n], 0, d)
        .iter()
        .map(|&v| v as f32)
        .collect();
    assert_eq!(y.to_vec::<f32>(&c), want, "f32");

    // The existing checks hold: an output of the wrong dtype.
    let bad = upload(&c, &[0f32; 1200], &[30, 40]);
    let e = cubeprim::scan_with_into(&c, &t, &bad, 1, SatAdd, d, &mut ws);
    assert!(matches!(e, Err(Error::UnsupportedDType { .. })), "{e:?}");
}
