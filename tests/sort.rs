//! Device sorts (wgpu; lavapipe in CI) against the CPU reference `cubeprim::cpu` (stable
//! `sort_by` with a total order: NaN last, -0.0 before +0.0). Keys, values and indices must
//! match exactly, bit for bit.

mod common;

use common::*;
use cubeprim::cpu::{self, SortElement};
use cubeprim::{
    DType, DeviceTensor, Element, IndexType, Len, PlaneOps, Side, SortOptions, Workspace,
};
use half::{bf16, f16};
use rand::Rng;

fn same<E: Element>(a: &[E], b: &[E]) -> bool {
    bytemuck::cast_slice::<E, u8>(a) == bytemuck::cast_slice::<E, u8>(b)
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

/// Sort-with-indices of `data` as `[rows, n]` on the device against the reference.
fn check_rows<E: SortElement>(
    c: &Client,
    ws: &mut Workspace<R>,
    data: &[E],
    shape: &[usize],
    opts: SortOptions,
    index: IndexType,
) {
    let n = *shape.last().unwrap();
    let what = format!("{} {shape:?} {opts:?} {index:?}", E::DTYPE);
    let x = upload(c, data, shape);
    let (v, i) = cubeprim::sort_with_indices(c, &x, index, opts, ws)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let want_i = cpu::argsort_rows(data, n, opts.descending);
    let want_v = cpu::permute_rows(data, n, &want_i);
    let got_v: Vec<E> = v.to_vec(c);
    assert!(same(&got_v, &want_v), "{what}: values: {}", first_diff(&got_v, &want_v));
    let got_i: Vec<i64> = match index {
        IndexType::U32 => i.to_vec::<u32>(c).into_iter().map(i64::from).collect(),
        IndexType::I64 => i.to_vec::<i64>(c),
    };
    let want_i: Vec<i64> = want_i.into_iter().map(i64::from).collect();
    assert!(got_i == want_i, "{what}: indices: {}", first_diff(&got_i, &want_i));
}

#[test]
fn smoke() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let mut r = rng(1);
    for &(rows, n) in &[(1usize, 7usize), (3, 100), (1, 5000), (2, 20000)] {
        let data: Vec<u32> = (0..rows * n).map(|_| r.random_range(0..50)).collect();
        check_rows(&c, &mut ws, &data, &[rows, n], SortOptions::default(), IndexType::U32);
        let data: Vec<f32> = (0..rows * n).map(|_| r.random_range(-4.0..4.0)).collect();
        check_rows(&c, &mut ws, &data, &[rows, n], SortOptions::default().descending(), IndexType::I64);
    }
}
