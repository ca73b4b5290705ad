mod common;
use cubeprim::{PlaneOps, ScanAlgorithm, ScanOp, ScanOptions, Workspace};

#[test]
fn smoke() {
    let Some(c) = common::client() else { return };
    for plane in [PlaneOps::Force, PlaneOps::Off] {
        for n in [1usize, 5, 100, 4096, 5000, 70000, 1 << 20, 3_000_001] {
            let data: Vec<f32> = (0..n).map(|i| (i % 7) as f32 - 3.0).collect();
            let x = common::upload(&c, &data, &[n]);
            let mut ws = Workspace::new();
            let o = ScanOptions::default().plane_ops(plane).algorithm(ScanAlgorithm::DecoupledLookback);
            let y = cubeprim::scan(&c, &x, 0, ScanOp::Sum, o, &mut ws).unwrap();
            let got = y.to_vec::<f32>(&c);
            let want = cubeprim::cpu::scan(&data, &[n], 0, ScanOp::Sum, o);
            let bad = got.iter().zip(&want).position(|(a, b)| (a - b).abs() > 1e-3 * b.abs().max(1.0));
            assert!(bad.is_none(), "{plane:?} n={n} first bad {:?} {:?}", bad, bad.map(|i| (got[i], want[i])));
        }
    }
}

#[test]
fn smoke_f64() {
    let Some(c) = common::client() else { return };
    for algo in [ScanAlgorithm::DecoupledLookback, ScanAlgorithm::ReduceThenScan] {
        let n = 10_000;
        let data: Vec<f64> = (0..n).map(|i| (i % 7) as f64 - 3.0).collect();
        let x = common::upload(&c, &data, &[n]);
        let o = ScanOptions::default().algorithm(algo);
        let y = cubeprim::scan(&c, &x, 0, ScanOp::Sum, o, &mut Workspace::new()).unwrap();
        let got = y.to_vec::<f64>(&c);
        let want = cubeprim::cpu::scan(&data, &[n], 0, ScanOp::Sum, o);
        assert_eq!(&got[..20], &want[..20], "{algo:?}");
        assert_eq!(got, want, "{algo:?}");
    }
}
