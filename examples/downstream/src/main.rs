//! cubeprim used as a dependency, the way a user's crate uses it: burn's default fused `Wgpu`
//! backend (on lavapipe in CI) and candle's CPU device, each running a scan, a sort with
//! indices, top-k, masked_select and unique, every result checked. Exits non-zero on the
//! first wrong result.
//!
//! `cargo run --release --manifest-path examples/downstream/Cargo.toml`

use burn::backend::Wgpu;
use burn::tensor::{Bool, Int, Tensor, TensorData};
use cubeprim::burn::prelude::*;

fn burn_snippet() {
    let dev = Default::default();
    let x = Tensor::<Wgpu, 2>::from_floats([[3.0, 1.0, 2.0, 1.0], [4.0, 6.0, 5.0, 6.0]], &dev);

    let sums = x
        .clone()
        .prim_cumsum(1)
        .into_data()
        .to_vec::<f32>()
        .unwrap();
    assert_eq!(sums, [3., 4., 6., 7., 4., 10., 15., 21.], "burn cumsum");

    let (sorted, idx) = x.clone().prim_sort_with_indices(1);
    assert_eq!(
        sorted.into_data().to_vec::<f32>().unwrap(),
        [1., 1., 2., 3., 4., 5., 6., 6.],
        "burn sort"
    );
    // Stable: equal keys keep their order.
    let idx: Vec<i64> = idx.into_data().convert::<i64>().to_vec().unwrap();
    assert_eq!(idx, [1, 3, 2, 0, 0, 2, 1, 3], "burn sort indices");

    let (top, at) = x.clone().prim_topk_with_indices(2, 1);
    assert_eq!(
        top.into_data().to_vec::<f32>().unwrap(),
        [3., 2., 6., 6.],
        "burn top-k"
    );
    let at: Vec<i64> = at.into_data().convert::<i64>().to_vec().unwrap();
    assert_eq!(at, [0, 2, 1, 3], "burn top-k indices");

    let mask = Tensor::<Wgpu, 2, Bool>::from_data(
        TensorData::new(
            vec![true, false, false, true, false, true, true, false],
            [2, 4],
        ),
        &dev,
    );
    let picked = x.clone().prim_masked_select(mask);
    assert_eq!(
        picked.into_data().to_vec::<f32>().unwrap(),
        [3., 1., 6., 5.],
        "burn masked_select"
    );

    let ints = Tensor::<Wgpu, 1, Int>::from_ints([5, 3, 5, 1, 3, 3], &dev);
    let u: Vec<i64> = ints
        .prim_unique()
        .into_data()
        .convert::<i64>()
        .to_vec()
        .unwrap();
    assert_eq!(u, [1, 3, 5], "burn unique");
}

fn candle_snippet() -> candle_core::Result<()> {
    use candle_core::{Device, Tensor, D};
    // The candle traits share their names with the burn prelude's (`ScanExt`, `SortExt`, ..):
    // imported here, in the function, they do not shadow the burn ones above.
    use cubeprim::candle::prelude::*;
    let x = Tensor::new(&[[3f32, 1., 2., 1.], [4., 6., 5., 6.]], &Device::Cpu)?;

    let sums = x.scan_sum(1)?.to_vec2::<f32>()?;
    assert_eq!(
        sums,
        [[3., 4., 6., 7.], [4., 10., 15., 21.]],
        "candle cumsum"
    );

    let (sorted, idx) = x.sort_stable(D::Minus1, true)?;
    assert_eq!(
        sorted.to_vec2::<f32>()?,
        [[1., 1., 2., 3.], [4., 5., 6., 6.]],
        "candle sort"
    );
    assert_eq!(
        idx.to_vec2::<u32>()?,
        [[1, 3, 2, 0], [0, 2, 1, 3]],
        "candle sort indices"
    );

    let (top, at) = x.top_k(2, D::Minus1)?;
    assert_eq!(top.to_vec2::<f32>()?, [[3., 2.], [6., 6.]], "candle top-k");
    assert_eq!(
        at.to_vec2::<u32>()?,
        [[0, 2], [1, 3]],
        "candle top-k indices"
    );

    let mask = Tensor::new(&[[1u8, 0, 0, 1], [0, 1, 1, 0]], &Device::Cpu)?;
    let picked = x.masked_select(&mask)?;
    assert_eq!(
        picked.to_vec1::<f32>()?,
        [3., 1., 6., 5.],
        "candle masked_select"
    );

    let ints = Tensor::new(&[5u32, 3, 5, 1, 3, 3], &Device::Cpu)?;
    let (values, counts) = ints.unique()?;
    assert_eq!(values.to_vec1::<u32>()?, [1, 3, 5], "candle unique");
    assert_eq!(counts.to_vec1::<u32>()?, [1, 3, 2], "candle unique counts");
    Ok(())
}

fn main() {
    burn_snippet();
    println!("burn (Wgpu): cumsum, sort with indices, top-k, masked_select, unique: ok");
    candle_snippet().expect("candle snippet");
    println!("candle (CPU): cumsum, sort with indices, top-k, masked_select, unique: ok");
}
