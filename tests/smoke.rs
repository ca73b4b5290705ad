mod common;
use cubeprim::{ScanOp, ScanOptions, Workspace};

#[test]
fn smoke() {
    let Some(c) = common::client() else { return };
    println!("{:?}", c.properties().hardware);
    println!("plane feats {:?}", c.features().plane);
    for n in [1usize, 5, 100, 4096, 5000, 70000, 1 << 20] {
        let data: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
        let x = common::upload(&c, &data, &[n]);
        let mut ws = Workspace::new();
        let y = cubeprim::scan(&c, &x, 0, ScanOp::Sum, ScanOptions::default(), &mut ws).unwrap();
        let got = y.to_vec::<f32>(&c);
        let want = cubeprim::cpu::scan(&data, &[n], 0, ScanOp::Sum, ScanOptions::default());
        let bad = got
            .iter()
            .zip(&want)
            .position(|(a, b)| (a - b).abs() > 1e-3 * b.abs().max(1.0));
        println!(
            "n={n} first bad {:?} {:?}",
            bad,
            bad.map(|i| (got[i], want[i]))
        );
    }
}
