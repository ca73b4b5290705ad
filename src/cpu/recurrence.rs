use super::ScanElement;
use crate::{Error, Result, ScanOp};
use rayon::prelude::*;

/// `h[t] = a[t] * h[t-1] + b[t]` along `axis` of contiguous row-major `a` and `b` of `shape`
/// (with `reverse`, `h[t] = a[t] * h[t+1] + b[t]`), from `h0` (the shape without the axis,
/// row-major) or 0. Floats only; f16 / bf16 compute in f32, f64 in f64. The semantics of
/// [`crate::linear_recurrence`], one element after the other.
///
/// [`Error::LengthMismatch`] for data that does not fill its shape, [`Error::AxisOutOfRange`],
/// [`Error::UnsupportedDType`] for integers.
pub fn linear_recurrence<E: ScanElement>(
    a: &[E],
    b: &[E],
    h0: Option<&[E]>,
    shape: &[usize],
    axis: usize,
    reverse: bool,
) -> Result<Vec<E>> {
    if !E::DTYPE.is_float() {
        return Err(Error::UnsupportedDType {
            dtype: E::DTYPE,
            reason: "a linear recurrence is defined for floats".into(),
        });
    }
    super::check_shape(b.len(), shape, Some(axis))?;
    super::check_shape(a.len(), shape, Some(axis))?;
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let outer: usize = shape[..axis].iter().product();
    if let Some(h) = h0 {
        super::check_shape(h.len(), &[outer * inner], None)?;
    }
    let mut out = super::alloc::zeroed(b.len());
    if n == 0 || inner == 0 || outer == 0 {
        return Ok(out);
    }
    let block = n * inner;
    // One block of the dims before the axis: `k`-th, `[n, inner]` of `a`, `b` and `out`.
    let run = |k: usize, ab: &[E], bb: &[E], ob: &mut [E]| {
        let mut h: Vec<E::Acc> = match h0 {
            Some(h0) => h0[k * inner..(k + 1) * inner]
                .iter()
                .map(|&x| E::to_acc(x))
                .collect(),
            None => vec![E::identity(ScanOp::Sum); inner],
        };
        for s in 0..n {
            let t = if reverse { n - 1 - s } else { s };
            let r = t * inner..(t + 1) * inner;
            let row = ab[r.clone()].iter().zip(&bb[r.clone()]).zip(&mut ob[r]);
            for (hi, ((&ai, &bi), oi)) in h.iter_mut().zip(row) {
                let p = E::combine(ScanOp::Prod, E::to_acc(ai), *hi);
                *hi = E::combine(ScanOp::Sum, p, E::to_acc(bi));
                *oi = E::from_acc(*hi);
            }
        }
    };
    if b.len() >= super::scan::PARALLEL_MIN && outer >= 2 && rayon::current_num_threads() > 1 {
        a.par_chunks(block)
            .zip(b.par_chunks(block))
            .zip(out.par_chunks_mut(block))
            .enumerate()
            .for_each(|(k, ((ab, bb), ob))| run(k, ab, bb, ob));
    } else {
        let parts = a
            .chunks(block)
            .zip(b.chunks(block))
            .zip(out.chunks_mut(block));
        for (k, ((ab, bb), ob)) in parts.enumerate() {
            run(k, ab, bb, ob);
        }
    }
    Ok(out)
}
