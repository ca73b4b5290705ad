use super::ScanElement;
use crate::{Result, ScanOp};

/// The fold of `data` (row-major, `shape`) along `axis` (removed), or of everything.
/// [`crate::Error::LengthMismatch`] unless `data` fills `shape`, [`crate::Error::AxisOutOfRange`]
/// for an axis past it, [`crate::Error::UnsupportedDType`] for an integer logsumexp.
pub fn reduce<E: ScanElement>(
    data: &[E],
    shape: &[usize],
    axis: Option<usize>,
    op: ScanOp,
) -> Result<Vec<E>> {
    op.check_dtype(E::DTYPE)?;
    super::check_shape(data.len(), shape, axis)?;
    let Some(axis) = axis else {
        let mut a = E::identity(op);
        for x in data {
            a = E::combine(op, a, E::to_acc(*x));
        }
        return Ok(vec![E::from_acc(a)]);
    };
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let outer: usize = shape[..axis].iter().product();
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
