use super::{parallel, ScanElement};
use crate::{Result, ScanOp};
use rayon::prelude::*;

/// Elements per block of a parallel whole reduction.
const BLOCK: usize = 1 << 14;

/// The fold of `data` (row-major, `shape`) along `axis` (removed), or of everything.
/// [`crate::Error::LengthMismatch`] unless `data` fills `shape`, [`crate::Error::AxisOutOfRange`]
/// for an axis past it, [`crate::Error::UnsupportedDType`] for an integer logsumexp.
///
/// Every output is folded left to right, as on one thread: along an axis the outputs spread
/// over rayon's threads; a whole reduction does so only where the grouping cannot change the
/// value (integers, which wrap; max / min, which pick an element), a float sum, product or
/// logsumexp of everything staying on one thread.
pub fn reduce<E: ScanElement>(
    data: &[E],
    shape: &[usize],
    axis: Option<usize>,
    op: ScanOp,
) -> Result<Vec<E>> {
    op.check_dtype(E::DTYPE)?;
    super::check_shape(data.len(), shape, axis)?;
    let fold = |xs: &[E]| {
        let mut a = E::identity(op);
        for x in xs {
            a = E::combine(op, a, E::to_acc(*x));
        }
        a
    };
    let Some(axis) = axis else {
        let regroup = !E::DTYPE.is_float() || matches!(op, ScanOp::Max | ScanOp::Min);
        if regroup && parallel(data.len()) {
            // Each block's fold as an element: exact, each being an integer or an element.
            let parts: Vec<E> = data
                .par_chunks(BLOCK)
                .map(|c| E::from_acc(fold(c)))
                .collect();
            let a = parts
                .into_iter()
                .fold(E::identity(op), |a, p| E::combine(op, a, E::to_acc(p)));
            return Ok(vec![E::from_acc(a)]);
        }
        return Ok(vec![E::from_acc(fold(data))]);
    };
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let outer: usize = shape[..axis].iter().product();
    if parallel(data.len()) && outer * inner >= 2 {
        let mut out = super::alloc::zeroed(outer * inner);
        if inner == 1 {
            // Rows folded whole, a row per output.
            out.par_iter_mut()
                .zip(data.par_chunks(n.max(1)))
                .with_min_len(BLOCK.div_ceil(n.max(1)))
                .for_each(|(o, row)| *o = E::from_acc(fold(&row[..n])));
        } else {
            // Columns of a block: a row of accumulators over the block's `n` rows, each output
            // still folded in the order of `k`.
            let width = inner.clamp(1, BLOCK / 16);
            out.par_chunks_mut(inner).enumerate().for_each(|(o, outs)| {
                outs.par_chunks_mut(width)
                    .enumerate()
                    .for_each(|(c, outs)| {
                        let i0 = c * width;
                        let mut acc = vec![E::identity(op); outs.len()];
                        for k in 0..n {
                            let row = &data[(o * n + k) * inner + i0..][..outs.len()];
                            for (a, &x) in acc.iter_mut().zip(row) {
                                *a = E::combine(op, *a, E::to_acc(x));
                            }
                        }
                        for (o, a) in outs.iter_mut().zip(acc) {
                            *o = E::from_acc(a);
                        }
                    })
            });
        }
        return Ok(out);
    }
    let mut out = Vec::with_capacity(outer * inner);
    for o in 0..outer {
        for i in 0..inner {
            let mut a = E::identity(op);
            for k in 0..n {
                a = E::combine(op, a, E::to_acc(data[(o * n + k) * inner + i]));
            }
            out.push(E::from_acc(a));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::test_data::{floats, sizes, with_threads};
    use super::*;
    use half::f16;

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter()
            .map(|x| if x.is_nan() { 0x7fc0_0000 } else { x.to_bits() })
            .collect()
    }

    /// Whole reductions and reductions along each axis on 4 threads: as on one, bit for bit
    /// (a NaN's payload aside), every operator, f32 (NaN, ±0 ties), f16 and wrapping integers.
    #[test]
    fn parallel_reduce_matches_one_thread() {
        let p = super::super::scan::PARALLEL_MIN;
        let mut shapes: Vec<Vec<usize>> = sizes().into_iter().map(|n| vec![n]).collect();
        shapes.extend([
            vec![7, p / 4 + 1],
            vec![p + 1, 3],
            vec![3, p / 8 + 1, 5],
            vec![2, 1, p],
        ]);
        for (s, shape) in shapes.iter().enumerate() {
            let len: usize = shape.iter().product();
            let f = floats(len, 80 + s as u64, 1 << 20);
            let h: Vec<f16> = f.iter().map(|x| f16::from_f32(*x)).collect();
            let u: Vec<u32> = f.iter().map(|x| x.to_bits().rotate_left(9)).collect();
            let axes = (0..shape.len()).map(Some).chain([None]);
            for axis in axes {
                for op in [
                    ScanOp::Sum,
                    ScanOp::Prod,
                    ScanOp::Max,
                    ScanOp::Min,
                    ScanOp::LogSumExp,
                ] {
                    let what = format!("{shape:?} {axis:?} {op:?}");
                    let run = |t| with_threads(t, || reduce(&f, shape, axis, op).unwrap());
                    assert_eq!(bits(&run(4)), bits(&run(1)), "f32 {what}");
                    let run = |t| with_threads(t, || reduce(&h, shape, axis, op).unwrap());
                    let hb = |v: Vec<f16>| {
                        v.iter()
                            .map(|x| if x.is_nan() { 0 } else { x.to_bits() })
                            .collect::<Vec<_>>()
                    };
                    assert_eq!(hb(run(4)), hb(run(1)), "f16 {what}");
                    if op != ScanOp::LogSumExp {
                        let run = |t| with_threads(t, || reduce(&u, shape, axis, op).unwrap());
                        assert_eq!(run(4), run(1), "u32 {what}");
                    }
                }
            }
        }
    }
}
