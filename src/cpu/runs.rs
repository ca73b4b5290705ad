use super::ScanElement;
use crate::ScanOp;

/// Whether `b` starts a new run after `a` (unequal; NaN equals nothing).
fn new_run<K: PartialEq>(a: &K, b: &K) -> bool {
    a != b
}

/// `(first key of each run, run lengths, run index of every element)`.
pub fn unique_consecutive<K: Copy + PartialEq>(keys: &[K]) -> (Vec<K>, Vec<i64>, Vec<i64>) {
    let (mut u, mut c, mut inv) = (vec![], vec![], vec![]);
    for (i, k) in keys.iter().enumerate() {
        if i == 0 || new_run(&keys[i - 1], k) {
            u.push(*k);
            c.push(0);
        }
        *c.last_mut().expect("a run") += 1;
        inv.push(u.len() as i64 - 1);
    }
    (u, c, inv)
}

/// Runs of equal keys → `(key, fold of the run's values with op)`, accumulating in `V::Acc`.
pub fn reduce_by_key<K: Copy + PartialEq, V: ScanElement>(
    keys: &[K],
    values: &[V],
    op: ScanOp,
) -> (Vec<K>, Vec<V>) {
    let (mut u, mut acc): (Vec<K>, Vec<V::Acc>) = (vec![], vec![]);
    for (i, (k, v)) in keys.iter().zip(values).enumerate() {
        let x = V::to_acc(*v);
        if i == 0 || new_run(&keys[i - 1], k) {
            u.push(*k);
            acc.push(x);
        } else {
            let a = acc.last_mut().expect("a run");
            *a = V::combine(op, *a, x);
        }
    }
    (u, acc.into_iter().map(V::from_acc).collect())
}
