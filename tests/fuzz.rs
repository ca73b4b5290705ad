//! Randomized differential test (issue 35): seeded cases that draw an op family and variant, a
//! dtype the runtime has, a shape (rank 1–3, sizes mostly at tile edges and powers of two, a
//! few up to 300 000 so the device-wide routes run), an axis, a view (contiguous, transposed,
//! narrowed with an offset and a step, stride-0 broadcast, or several at once, built over a
//! buffer of its own by [`view`]), the op's options and values with NaN, ±inf, ±0, ties and
//! runs, then compare the device with `cubeprim::cpu` on the gathered host data under the
//! tolerances of `tests/common/mod.rs` (exact for integers, moves, max / min, indices; float
//! sums and products within the documented bounds). Every drawn case is one the library must
//! accept: an `Err` from it is a failure, as is a panic.
//!
//! * [`random_cases_match_the_cpu`]: a fixed budget ([`CI_CASES`] seeds from 0) for CI.
//! * [`soak`] (ignored): `CUBEPRIM_FUZZ_CASES` cases (default 10 000) from seed
//!   `CUBEPRIM_FUZZ_SEED` (default 0); prints `fuzz: N cases, M mismatches` and every failing
//!   seed. `CUBEPRIM_FUZZ_SEED=s CUBEPRIM_FUZZ_CASES=1` replays one case.
//!   `suite --ignored fuzz::soak` (built with `--features cuda,test-cuda` it runs on CUDA).

use crate::common::{self, client, gather_view, rng, supports, Client, TestElem, R};
use cubecl::Runtime;
use cubeprim::cpu::{self, ScanElement, SortElement};
use cubeprim::{
    DType, DeviceTensor, Element, IndexType, Len, PlaneOps, ScanAlgorithm, ScanOp, ScanOptions,
    Side, SortOptions, TopKMethod, Workspace,
};
use half::f16;
use rand::rngs::StdRng;
use rand::Rng;
use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

/// Seeds the CI test runs (0..CI_CASES): about 60–90 s on a 2-core machine under lavapipe,
/// most of it compiling the kernels the cases reach (see the report of the run).
pub const CI_CASES: u64 = 120;

/// The most elements a drawn tensor has (a case stays fast on lavapipe).
pub const MAX_TOTAL: usize = 600_000;

const OPS: [ScanOp; 4] = [ScanOp::Sum, ScanOp::Prod, ScanOp::Max, ScanOp::Min];

/// Element types of the keyed and computed ops.
pub trait Fz: TestElem + SortElement + PartialEq {}
impl<T: TestElem + SortElement + PartialEq> Fz for T {}

/// Runs `$body` with `$E` the host type of a dtype (not u8).
macro_rules! with_elem {
    ($d:expr, |$E:ident| $body:expr) => {
        match $d {
            DType::F32 => {
                type $E = f32;
                $body
            }
            DType::F64 => {
                type $E = f64;
                $body
            }
            DType::F16 => {
                type $E = half::f16;
                $body
            }
            DType::BF16 => {
                type $E = half::bf16;
                $body
            }
            DType::I32 => {
                type $E = i32;
                $body
            }
            DType::U32 => {
                type $E = u32;
                $body
            }
            DType::I64 => {
                type $E = i64;
                $body
            }
            DType::U64 => {
                type $E = u64;
                $body
            }
            DType::U8 => unreachable!("u8 is a flag dtype only"),
        }
    };
}

/// Runs `$body` with `$B` a host type of the dtype's size (data that is only moved).
macro_rules! with_bits {
    ($d:expr, |$B:ident| $body:expr) => {
        match $d.size() {
            2 => {
                type $B = half::f16;
                $body
            }
            4 => {
                type $B = u32;
                $body
            }
            _ => {
                type $B = u64;
                $body
            }
        }
    };
}

// ---------------------------------------------------------------------------------------------
// Adapters: the one place tensors are built and read and the CPU reference is called, so that
// a change of the library's signatures (views or CPU functions returning `Result`) is one edit.

/// Uploads `data` as a contiguous tensor of `shape`.
pub fn up<E: Element>(c: &Client, data: &[E], shape: &[usize]) -> DeviceTensor<R> {
    common::upload(c, data, shape)
}

/// Uploads `data` (host type `B`, of the dtype's size) as a contiguous tensor of `dtype`.
fn up_as<B: Element>(c: &Client, data: &[B], shape: &[usize], dtype: DType) -> DeviceTensor<R> {
    assert_eq!(B::DTYPE.size(), dtype.size());
    retag(&up(c, data, shape), dtype)
}

/// The same view read as another dtype of the same size.
fn retag(t: &DeviceTensor<R>, dtype: DType) -> DeviceTensor<R> {
    DeviceTensor::from_parts(
        t.handle.clone(),
        t.shape.clone(),
        t.strides.clone(),
        t.offset,
        dtype,
    )
}

/// A view (`l`) over a fresh buffer holding `all`.
pub fn view<E: Element>(c: &Client, all: &[E], l: &Layout) -> DeviceTensor<R> {
    assert_eq!(all.len(), l.buf_len);
    let handle = up(c, all, &[all.len()]).handle;
    DeviceTensor::from_parts(
        handle,
        l.shape.clone(),
        l.strides.clone(),
        l.offset,
        E::DTYPE,
    )
}

/// Reads a tensor (row-major).
pub fn read<E: Element>(c: &Client, t: &DeviceTensor<R>) -> Vec<E> {
    t.to_vec(c)
}

/// Reads an index tensor (u32, i32 or i64) as i64.
pub fn read_idx(c: &Client, t: &DeviceTensor<R>) -> Result<Vec<i64>, String> {
    Ok(match t.dtype {
        DType::U32 => read::<u32>(c, t).into_iter().map(i64::from).collect(),
        DType::I32 => read::<i32>(c, t).into_iter().map(i64::from).collect(),
        DType::I64 => read::<i64>(c, t),
        d => return Err(format!("index tensor of dtype {d}")),
    })
}

/// A library result: an error here is a failure of the case.
pub fn lib<T>(r: cubeprim::Result<T>) -> Result<T, String> {
    r.map_err(|e| format!("unexpected library error: {e}"))
}

/// The CPU reference (`cubeprim::cpu`), one wrapper per function.
pub mod reference {
    use super::*;

    pub fn scan<E: ScanElement>(
        d: &[E],
        s: &[usize],
        ax: usize,
        op: ScanOp,
        o: ScanOptions,
    ) -> Vec<E> {
        cpu::scan(d, s, ax, op, o).expect("the CPU reference")
    }
    pub fn scan_with_indices<E: ScanElement>(
        d: &[E],
        s: &[usize],
        ax: usize,
        op: ScanOp,
        o: ScanOptions,
    ) -> (Vec<E>, Vec<i64>) {
        cpu::scan_with_indices(d, s, ax, op, o).expect("the CPU reference")
    }
    pub fn reduce<E: ScanElement>(d: &[E], s: &[usize], ax: Option<usize>, op: ScanOp) -> Vec<E> {
        cpu::reduce(d, s, ax, op).expect("the CPU reference")
    }
    pub fn select<T: Copy + Send + Sync>(d: &[T], set: &[u8]) -> Vec<T> {
        cpu::select(d, set)
    }
    pub fn partition<T: Copy + Send + Sync>(d: &[T], set: &[u8]) -> (Vec<T>, usize) {
        cpu::partition(d, set)
    }
    pub fn nonzero(set: &[u8], shape: &[usize]) -> Vec<i64> {
        cpu::nonzero(set, shape).expect("the CPU reference")
    }
    pub fn is_set<F: Element>(f: F) -> bool {
        cpu::is_set(f)
    }
    pub fn unique_consecutive<K: Copy + PartialEq + Send + Sync>(
        k: &[K],
    ) -> (Vec<K>, Vec<i64>, Vec<i64>) {
        cpu::unique_consecutive(k)
    }
    pub fn reduce_by_key<K: Copy + PartialEq + Send + Sync, V: ScanElement>(
        k: &[K],
        v: &[V],
        op: ScanOp,
    ) -> (Vec<K>, Vec<V>) {
        cpu::reduce_by_key(k, v, op)
    }
    pub fn unique<E: SortElement + PartialEq>(k: &[E]) -> (Vec<E>, Vec<i64>, Vec<i64>) {
        cpu::unique(k)
    }
    pub fn histogram(k: &[i64], bins: usize) -> Vec<u32> {
        cpu::histogram(k, bins)
    }
    /// The stable order of each row (`bits`: only the ordered-key bits `[begin, end)`).
    pub fn argsort<E: SortElement>(
        d: &[E],
        n: usize,
        desc: bool,
        bits: Option<(u32, u32)>,
    ) -> Vec<u32> {
        match bits {
            Some((b, e)) => cpu::argsort_rows_bits(d, n, desc, b, e).expect("the CPU reference"),
            None => cpu::argsort_rows(d, n, desc),
        }
    }
    pub fn permute<E: Copy>(d: &[E], n: usize, order: &[u32]) -> Vec<E> {
        cpu::permute_rows(d, n, order).expect("the CPU reference")
    }
    pub fn top_k<E: SortElement>(d: &[E], n: usize, k: usize, largest: bool) -> (Vec<E>, Vec<u32>) {
        cpu::top_k_rows(d, n, k, largest)
    }
    pub fn searchsorted<E: SortElement>(
        s: &[E],
        n: usize,
        q: &[E],
        m: usize,
        right: bool,
    ) -> Vec<u32> {
        cpu::searchsorted(s, n, q, m, right).expect("the CPU reference")
    }
    pub fn key_bits(d: DType) -> u32 {
        cpu::key_bits(d)
    }
}
use reference as cpu_ref;

// ---------------------------------------------------------------------------------------------
// Comparison (tolerances of tests/common/mod.rs).

fn bits_eq<E: Element>(a: E, b: E) -> bool {
    bytemuck::bytes_of(&a) == bytemuck::bytes_of(&b)
}

/// Equal bits, or both NaN.
fn same<E: Element>(a: E, b: E) -> bool {
    bits_eq(a, b) || (a.to_f64().is_nan() && b.to_f64().is_nan())
}

/// Elements that must match exactly: bit for bit (`strict`: data the op only moves), else
/// bit for bit or both NaN.
pub fn check_exact<E: Element>(
    what: &str,
    got: &[E],
    want: &[E],
    strict: bool,
) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!(
            "{what}: {} elements, want {}",
            got.len(),
            want.len()
        ));
    }
    let eq = |a: E, b: E| if strict { bits_eq(a, b) } else { same(a, b) };
    let bad: Vec<usize> = (0..got.len()).filter(|&i| !eq(got[i], want[i])).collect();
    match bad.first() {
        None => Ok(()),
        Some(&i) => Err(format!(
            "{what}: {} of {} differ; first at {i}: got {:?}, want {:?}",
            bad.len(),
            got.len(),
            got[i],
            want[i]
        )),
    }
}

/// Folds (reductions of groups of elements): integers and max / min exactly, float sums within
/// `tol * (S + 1)` (`abs_sum[i]` = S, the sum of |x| of the group), float products within
/// `tol * sqrt(k + 1) * |want| + tiny` (`factors[i]` = k).
pub fn check_fold<E: Element>(
    what: &str,
    got: &[E],
    want: &[E],
    op: ScanOp,
    abs_sum: &[f64],
    factors: &[f64],
) -> Result<(), String> {
    check_fold_exact(what, got, want, None, op, abs_sum, factors)
}

/// [`check_fold`] with the float sums also given in f64 (`exact`): a sum that is not `want`
/// bit for bit is compared with `exact` ([`common::sum_within`]), not with `want`, whose own
/// sequential rounding can be further off than the device's tree.
pub fn check_fold_exact<E: Element>(
    what: &str,
    got: &[E],
    want: &[E],
    exact: Option<&[f64]>,
    op: ScanOp,
    abs_sum: &[f64],
    factors: &[f64],
) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!(
            "{what}: {} elements, want {}",
            got.len(),
            want.len()
        ));
    }
    let d = E::DTYPE;
    let approx = d.is_float() && matches!(op, ScanOp::Sum | ScanOp::Prod);
    let ok = |i: usize| {
        let (g, w) = (got[i], want[i]);
        if same(g, w) {
            return true;
        }
        if !approx {
            return false;
        }
        if op == ScanOp::Sum {
            let e = exact.map_or(w.to_f64(), |e| e[i]);
            return common::sum_within(d, g.to_f64(), e, abs_sum[i], factors[i]);
        }
        if !w.to_f64().is_finite() {
            return false;
        }
        let (g, w) = (g.to_f64(), w.to_f64());
        let lim = common::tol_prod(d) * (factors[i] + 1.0).sqrt() * w.abs() + common::tiny(d);
        (g - w).abs() <= lim
    };
    let bad: Vec<usize> = (0..got.len()).filter(|&i| !ok(i)).collect();
    match bad.first() {
        None => Ok(()),
        Some(&i) => Err(format!(
            "{what}: {} of {} differ; first at {i}: got {:?}, want {:?} (sum |x| {}, factors {})",
            bad.len(),
            got.len(),
            got[i],
            want[i],
            abs_sum[i],
            factors[i]
        )),
    }
}

fn check_idx(what: &str, got: &[i64], want: &[i64]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!(
            "{what}: {} indices, want {}",
            got.len(),
            want.len()
        ));
    }
    match (0..got.len()).find(|&i| got[i] != want[i]) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{what}: {} of {} differ; first at {i}: got {}, want {}",
            (0..got.len()).filter(|&j| got[j] != want[j]).count(),
            got.len(),
            got[i],
            want[i]
        )),
    }
}

fn check_eq<T: PartialEq + std::fmt::Debug>(what: &str, got: T, want: T) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: got {got:?}, want {want:?}"))
    }
}

fn widen(v: &[u32]) -> Vec<i64> {
    v.iter().map(|&x| x as i64).collect()
}

// ---------------------------------------------------------------------------------------------
// Drawing.

pub fn pick<T: Copy>(rng: &mut StdRng, v: &[T]) -> T {
    v[rng.random_range(0..v.len())]
}

/// Lengths at the edges of the tiles (scan 3072 × vector, sort rows up to 8192, device-wide
/// tiles 2048–7680) and powers of two.
const EDGES: [usize; 46] = [
    2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 511,
    512, 513, 1023, 1024, 1025, 2047, 2048, 2049, 3071, 3072, 3073, 4095, 4096, 4097, 6143, 6144,
    6145, 7679, 7680, 7681, 8191, 8192, 8193,
];
const LONG: [usize; 18] = [
    12_287, 12_288, 12_289, 16_383, 16_384, 16_385, 24_575, 24_576, 24_577, 32_767, 32_768, 32_769,
    65_535, 65_536, 65_537, 131_071, 131_072, 131_073,
];
const SMALL_DIMS: [usize; 26] = [
    1, 1, 2, 2, 3, 3, 4, 5, 7, 8, 9, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257,
    1025,
];

/// A length: mostly at tile edges, some tiny, a few up to 300 000; at most `max` (drawn
/// again while above it).
pub fn draw_len(rng: &mut StdRng, max: usize) -> usize {
    for _ in 0..16 {
        let n = match rng.random_range(0..100) {
            0..=9 => rng.random_range(0..=2),
            10..=69 => pick(rng, &EDGES),
            70..=91 => pick(rng, &LONG),
            _ => rng.random_range(131_074..=300_000),
        };
        if n <= max {
            return n;
        }
    }
    rng.random_range(0..=max)
}

/// A shape of rank 1–3 with one axis drawn by [`draw_len`], the others small; at most
/// `max` elements.
pub fn draw_shape(rng: &mut StdRng, max: usize) -> Vec<usize> {
    let rank = match rng.random_range(0..10) {
        0..=4 => 1,
        5..=7 => 2,
        _ => 3,
    };
    let long = rng.random_range(0..rank);
    let mut s: Vec<usize> = (0..rank)
        .map(|i| {
            if i == long {
                draw_len(rng, max)
            } else if rng.random_range(0..40) == 0 {
                0
            } else {
                pick(rng, &SMALL_DIMS)
            }
        })
        .collect();
    shrink(&mut s, max);
    s
}

/// Halves the largest dimension of `s` until it holds at most `max` elements, counting an
/// empty dimension as one (so the buffer of an empty view stays small too).
fn shrink(s: &mut [usize], max: usize) {
    while s.iter().map(|&d| d.max(1)).product::<usize>() > max {
        let m = (0..s.len()).max_by_key(|&i| s[i]).unwrap();
        s[m] /= 2;
    }
}

/// How a tensor lies in its buffer.
#[derive(Clone, Debug)]
pub struct Layout {
    pub shape: Vec<usize>,
    pub strides: Vec<usize>,
    pub offset: usize,
    /// Elements of the buffer the view is cut from.
    pub buf_len: usize,
    pub kind: String,
}

impl Layout {
    pub fn contiguous(shape: &[usize]) -> Self {
        Layout {
            shape: shape.to_vec(),
            strides: contiguous_strides(shape),
            offset: 0,
            buf_len: shape.iter().product::<usize>().max(1),
            kind: "contiguous".into(),
        }
    }
    fn describe(&self) -> String {
        format!(
            "shape {:?} view {} (strides {:?} offset {} of {})",
            self.shape, self.kind, self.strides, self.offset, self.buf_len
        )
    }
}

fn contiguous_strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1].max(1);
    }
    s
}

/// Which views an op reads.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Views {
    /// Any strides and offset (scan, reduce, the sorts).
    Any,
    /// Contiguous, or 1-D with any stride and offset (unique).
    Flat,
    Contiguous,
}

/// A view of `shape`: contiguous (40 %), its axes permuted (transposed), narrowed (padding
/// before and after each axis, so an offset; sometimes a step), stride-0 broadcast along some
/// axes, or all of them at once.
pub fn draw_layout(rng: &mut StdRng, shape: &[usize], views: Views) -> Layout {
    let r = shape.len();
    let kind = rng.random_range(0..10);
    if views == Views::Contiguous || kind < 4 || (views == Views::Flat && r > 1) {
        return Layout::contiguous(shape);
    }
    let all = kind == 9;
    let transpose = (kind < 6 || all) && r >= 2;
    let narrow = (6..8).contains(&kind) || all || (kind < 6 && r < 2);
    let broadcast = kind == 8 || (all && rng.random_bool(0.5));
    let mut perm: Vec<usize> = (0..r).collect();
    if transpose {
        for i in (1..r).rev() {
            perm.swap(i, rng.random_range(0..=i));
        }
        if perm.iter().enumerate().all(|(i, &p)| i == p) {
            perm.swap(0, r - 1);
        }
    }
    let mut lo = vec![0usize; r];
    let mut hi = vec![0usize; r];
    let mut step = vec![1usize; r];
    let mut base = 0;
    if narrow {
        base = rng.random_range(0..=5);
        for a in 0..r {
            lo[a] = rng.random_range(0..=3);
            hi[a] = rng.random_range(0..=3);
        }
        // A step along one axis, where the buffer stays small.
        if rng.random_bool(0.3) && shape.iter().product::<usize>() <= 200_000 {
            step[rng.random_range(0..r)] = rng.random_range(2..=3);
        }
    }
    let mut bcast = vec![false; r];
    if broadcast {
        for b in bcast.iter_mut() {
            *b = rng.random_bool(0.5);
        }
        if !bcast.iter().any(|&b| b) {
            bcast[rng.random_range(0..r)] = true;
        }
    }
    let mut strides = vec![0usize; r];
    let mut offset = base;
    let mut unit = 1usize;
    for &a in perm.iter().rev() {
        if bcast[a] {
            strides[a] = 0;
            continue;
        }
        let n = shape[a];
        let extent = lo[a] + if n == 0 { 1 } else { (n - 1) * step[a] + 1 } + hi[a];
        strides[a] = unit * step[a];
        offset += lo[a] * unit;
        unit *= extent;
    }
    let mut k = Vec::new();
    if transpose {
        k.push(format!("permuted {perm:?}"));
    }
    if narrow {
        k.push(format!(
            "narrowed lo {lo:?} hi {hi:?} step {step:?} base {base}"
        ));
    }
    if broadcast {
        k.push(format!("broadcast {bcast:?}"));
    }
    Layout {
        shape: shape.to_vec(),
        strides,
        offset,
        buf_len: base + unit,
        kind: k.join(", "),
    }
}

/// A dtype the runtime has, among `from`.
fn draw_dtype(cx: &mut Cx, from: &[DType]) -> DType {
    let ok: Vec<DType> = from
        .iter()
        .copied()
        .filter(|&d| supports(cx.c, d))
        .collect();
    pick(&mut cx.rng, &ok)
}

/// Plane operations: the plan's choice mostly, sometimes off or forced (where the plane width
/// allows forcing).
fn draw_plane_ops(cx: &mut Cx) -> PlaneOps {
    let p = cx.c.properties().hardware.plane_size_max;
    let force_ok = (1..=256).contains(&p) && 256 % p == 0;
    match cx.rng.random_range(0..10) {
        0 => PlaneOps::Off,
        1 if force_ok => PlaneOps::Force,
        _ => PlaneOps::Auto,
    }
}

fn draw_index(cx: &mut Cx) -> IndexType {
    if supports(cx.c, DType::I64) && cx.rng.random_bool(0.4) {
        IndexType::I64
    } else {
        IndexType::U32
    }
}

/// A length argument over `n` available elements: `(length the op must process, capacity,
/// device count)`; the count is a `u32[1]` on the device (`Len::Device`) half of the time.
fn draw_count(cx: &mut Cx, n: usize) -> (usize, usize, Option<DeviceTensor<R>>) {
    let cap = if cx.rng.random_bool(0.7) {
        n
    } else {
        cx.rng.random_range(0..=n)
    };
    if cx.rng.random_bool(0.5) {
        cx.note(format!("Len::Host({cap})"));
        return (cap, cap, None);
    }
    let k = if cx.rng.random_bool(0.3) {
        cap
    } else {
        cx.rng.random_range(0..=cap)
    };
    cx.note(format!("Len::Device {{ count {k}, capacity {cap} }}"));
    (k, cap, Some(up(cx.c, &[k as u32], &[1])))
}

fn len_of(cap: usize, dev: &Option<DeviceTensor<R>>) -> Len<'_, R> {
    match dev {
        Some(t) => Len::Device {
            count: t,
            capacity: cap,
        },
        None => Len::Host(cap),
    }
}

/// Random bits: every value of the type (floats: NaN payloads of both signs, subnormals, ±inf).
fn raw<E: Element>(rng: &mut StdRng, n: usize) -> Vec<E> {
    (0..n)
        .map(|_| {
            let b: [u8; 8] = rng.random();
            bytemuck::pod_read_unaligned(&b[..E::DTYPE.size()])
        })
        .collect()
}

fn neg_nan<E: TestElem>() -> Option<E> {
    let nan = E::nan()?;
    let mut b = bytemuck::bytes_of(&nan).to_vec();
    *b.last_mut().unwrap() |= 0x80;
    Some(bytemuck::pod_read_unaligned(&b))
}

/// One special value of the type: ±inf / MIN / MAX, NaN (either sign), ±0.
fn special<E: TestElem>(rng: &mut StdRng) -> E {
    match rng.random_range(0..6) {
        0 => E::top(),
        1 => E::bottom(),
        2 => E::nan().unwrap_or(E::top()),
        3 => neg_nan().unwrap_or(E::bottom()),
        4 => E::from_f64(-0.0),
        _ => E::from_f64(0.0),
    }
}

/// Replaces each element by a special value with probability `p`.
fn sprinkle<E: TestElem>(rng: &mut StdRng, v: &mut [E], p: f64) {
    if p == 0.0 {
        return;
    }
    for x in v.iter_mut() {
        if rng.random_bool(p) {
            *x = special(rng);
        }
    }
}

/// Values for a scan / reduce / fold with `op` (common's `values_for`: sums that wrap, products
/// far from overflow), with special values sprinkled in a third of the cases.
fn fold_values<E: Fz>(rng: &mut StdRng, n: usize, op: ScanOp, span: usize) -> (Vec<E>, f64) {
    let mut v: Vec<E> = if matches!(op, ScanOp::Max | ScanOp::Min) && rng.random_bool(0.3) {
        common::tie_values(rng, n, 0.02, 0.01)
    } else {
        common::values_for_span(rng, n, op, span)
    };
    let p = pick(rng, &[0.0, 0.0, 0.0, 0.0001, 0.01]);
    sprinkle(rng, &mut v, p);
    (v, p)
}

/// Keys: `raw` bits (where the op orders or moves bits only), few distinct values, special
/// values mixed with ties, runs of equal keys, or already sorted.
fn keys<E: Fz>(rng: &mut StdRng, n: usize, allow_raw: bool) -> (Vec<E>, &'static str) {
    let float = E::DTYPE.is_float();
    let signed = float || matches!(E::DTYPE, DType::I32 | DType::I64);
    let small = |rng: &mut StdRng, k: i64| {
        let lo = if signed { -k } else { 0 };
        E::from_f64(rng.random_range(lo..=k) as f64)
    };
    let mode = rng.random_range(0..if allow_raw { 6 } else { 5 });
    match mode {
        0 => {
            let k = pick(rng, &[1i64, 2, 3, 10, 1000]);
            ((0..n).map(|_| small(rng, k)).collect(), "few distinct")
        }
        1 => (
            (0..n)
                .map(|_| match rng.random_range(0..8) {
                    0..=2 => special(rng),
                    3 => E::from_f64(1.0),
                    4 => E::from_f64(2.0),
                    _ => E::wide(rng),
                })
                .collect(),
            "specials",
        ),
        2 => {
            let mean = pick(rng, &[1.5f64, 8.0, 200.0]);
            let mut v = Vec::with_capacity(n);
            let mut cur = small(rng, 3);
            for _ in 0..n {
                if rng.random_bool(1.0 / mean) {
                    cur = if rng.random_bool(0.1) {
                        special(rng)
                    } else {
                        small(rng, 3)
                    };
                }
                v.push(cur);
            }
            (v, "runs")
        }
        3 => {
            let mut v: Vec<E> = (0..n).map(|_| E::wide(rng)).collect();
            v.sort_by(|a, b| a.sort_cmp(b));
            if rng.random_bool(0.5) {
                v.reverse();
            }
            (v, "sorted")
        }
        4 => ((0..n).map(|_| E::wide(rng)).collect(), "wide"),
        _ => (raw(rng, n), "raw bits"),
    }
}

// ---------------------------------------------------------------------------------------------
// The case.

/// A case being drawn: the device, the workspace, the generator, what was drawn so far.
pub struct Cx<'a> {
    pub c: &'a Client,
    pub ws: &'a mut Workspace<R>,
    pub rng: StdRng,
    pub what: String,
    /// The most elements of a drawn tensor.
    pub max: usize,
}

impl Cx<'_> {
    pub fn note(&mut self, s: impl std::fmt::Display) {
        if !self.what.is_empty() {
            self.what.push_str("; ");
        }
        let _ = write!(self.what, "{s}");
    }
}

/// The families and their weights.
pub const FAMILIES: [(&str, u32); 14] = [
    ("scan", 14),
    ("reduce", 9),
    ("select", 5),
    ("partition", 3),
    ("masked_select", 3),
    ("nonzero", 4),
    ("reduce_by_key", 6),
    ("unique_consecutive", 5),
    ("unique", 5),
    ("histogram", 4),
    ("sort", 12),
    ("sort_pairs", 4),
    ("top_k", 7),
    ("searchsorted", 6),
];

/// One random case of `seed`: drawn, run on the device and on the CPU, compared. `Ok` and
/// `Err` name the seed and everything drawn.
pub fn case(c: &Client, ws: &mut Workspace<R>, seed: u64) -> Result<String, String> {
    case_in(c, ws, seed, None, MAX_TOTAL)
}

/// [`case`] of the given family (else one drawn by weight), tensors of at most `max` elements.
pub fn case_in(
    c: &Client,
    ws: &mut Workspace<R>,
    seed: u64,
    family: Option<&str>,
    max: usize,
) -> Result<String, String> {
    let mut cx = Cx {
        c,
        ws,
        rng: rng(seed ^ 0x6675_7a7a_0000_0000),
        what: String::new(),
        max,
    };
    let total: u32 = FAMILIES.iter().map(|f| f.1).sum();
    let mut t = cx.rng.random_range(0..total);
    let drawn = FAMILIES
        .iter()
        .find(|f| {
            if t < f.1 {
                true
            } else {
                t -= f.1;
                false
            }
        })
        .unwrap()
        .0;
    let fam = family.unwrap_or(drawn);
    cx.note(fam);
    let r = match fam {
        "scan" => {
            let d = draw_dtype(&mut cx, &DType::ALL);
            with_elem!(d, |E| scan_case::<E>(&mut cx))
        }
        "reduce" => {
            let d = draw_dtype(&mut cx, &DType::ALL);
            with_elem!(d, |E| reduce_case::<E>(&mut cx))
        }
        "select" | "partition" | "masked_select" | "nonzero" => compaction_case(&mut cx, fam),
        "reduce_by_key" => {
            let k = draw_dtype(&mut cx, &DType::ALL);
            let v = draw_dtype(&mut cx, &DType::ALL);
            with_elem!(k, |K| with_elem!(v, |V| reduce_by_key_case::<K, V>(
                &mut cx
            )))
        }
        "unique_consecutive" => {
            let d = draw_dtype(&mut cx, &DType::ALL);
            with_elem!(d, |E| unique_consecutive_case::<E>(&mut cx))
        }
        "unique" => {
            let d = draw_dtype(&mut cx, &DType::ALL);
            with_elem!(d, |E| unique_case::<E>(&mut cx))
        }
        "histogram" => {
            let d = pick(
                &mut cx.rng,
                &[DType::U32, DType::I32, DType::U64, DType::I64],
            );
            match d {
                DType::U32 => histogram_case::<u32>(&mut cx),
                DType::I32 => histogram_case::<i32>(&mut cx),
                DType::U64 => histogram_case::<u64>(&mut cx),
                _ => histogram_case::<i64>(&mut cx),
            }
        }
        "sort" => {
            let d = draw_dtype(&mut cx, &DType::ALL);
            with_elem!(d, |E| sort_case::<E>(&mut cx))
        }
        "sort_pairs" => {
            let k = draw_dtype(&mut cx, &DType::ALL);
            let v = draw_dtype(&mut cx, &DType::ALL);
            with_elem!(k, |K| with_bits!(v, |B| sort_pairs_case::<K, B>(
                &mut cx, v
            )))
        }
        "top_k" => {
            let d = draw_dtype(&mut cx, &DType::ALL);
            with_elem!(d, |E| top_k_case::<E>(&mut cx))
        }
        _ => {
            let d = draw_dtype(&mut cx, &DType::ALL);
            with_elem!(d, |E| searchsorted_case::<E>(&mut cx))
        }
    };
    match r {
        Ok(()) => Ok(format!("seed {seed}: {}", cx.what)),
        Err(e) => Err(format!("seed {seed}: {}: {e}", cx.what)),
    }
}

/// [`case`] with a panic turned into an `Err` (and the workspace replaced: the panic may have
/// left it mid-call).
pub fn case_caught(
    c: &Client,
    ws: &mut Workspace<R>,
    seed: u64,
    family: Option<&str>,
    max: usize,
) -> Result<String, String> {
    let run = |ws: &mut Workspace<R>| match (family, max) {
        (None, MAX_TOTAL) => case(c, ws, seed),
        _ => case_in(c, ws, seed, family, max),
    };
    let result = match catch_unwind(AssertUnwindSafe(|| run(ws))) {
        Ok(r) => r,
        Err(p) => {
            *ws = Workspace::new();
            Err(format!("seed {seed}: panic: {}", panic_message(&*p)))
        }
    };
    // A launch the runtime refused (wgpu: more shared memory than the device has) returns no
    // error from the launch: cubecl keeps it on the stream until a flush. Each case flushes, so
    // a refused kernel fails the case that launched it, not a later one.
    match (result, c.flush()) {
        (r, Ok(())) => r,
        (Ok(what), Err(e)) => Err(format!("seed {seed} ({what}): the runtime reports {e:?}")),
        (Err(m), Err(e)) => Err(format!("{m}; the runtime reports {e:?}")),
    }
}

/// The message of a caught panic.
pub fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Data of a drawn view: the view on the device and its elements (row-major) on the host.
fn draw_view<E: Element>(
    cx: &mut Cx,
    shape: &[usize],
    views: Views,
    gen: impl FnOnce(&mut StdRng, usize, usize) -> Vec<E>,
) -> (DeviceTensor<R>, Vec<E>, Layout) {
    let l = draw_layout(&mut cx.rng, shape, views);
    // How often the view repeats each element it reaches (its stride-0 dimensions).
    let reps: usize = (0..l.shape.len())
        .filter(|&i| l.strides[i] == 0)
        .map(|i| l.shape[i].max(1))
        .product();
    let all = gen(&mut cx.rng, l.buf_len, reps);
    let x = view(cx.c, &all, &l);
    let data = gather_view(&all, &l.shape, &l.strides, l.offset);
    cx.note(l.describe());
    (x, data, l)
}

fn scan_case<E: Fz>(cx: &mut Cx) -> Result<(), String> {
    let op = pick(&mut cx.rng, &OPS);
    let v = cx.rng.random_range(0..100);
    let indexed = v < 30 && matches!(op, ScanOp::Max | ScanOp::Min);
    let len_into = v >= 85;
    let mut opts = ScanOptions {
        exclusive: cx.rng.random_bool(0.5),
        reverse: cx.rng.random_bool(0.5),
        ..ScanOptions::default()
    };
    opts.algorithm = match cx.rng.random_range(0..10) {
        0 => ScanAlgorithm::DecoupledLookback,
        1 if !indexed => ScanAlgorithm::ReduceThenScan,
        _ => ScanAlgorithm::Auto,
    };
    opts.plane_ops = draw_plane_ops(cx);
    let shape = if len_into {
        vec![draw_len(&mut cx.rng, cx.max)]
    } else {
        draw_shape(&mut cx.rng, cx.max)
    };
    let rank = shape.len();
    let axis = cx.rng.random_range(0..rank);
    let arg = if cx.rng.random_bool(0.3) {
        axis as isize - rank as isize
    } else {
        axis as isize
    };
    cx.note(format!(
        "{} {op:?}{} {}axis {arg} {opts:?}",
        E::DTYPE,
        if indexed { " with indices" } else { "" },
        if len_into { "scan_len_into " } else { "" }
    ));
    let mut p = 0.0;
    let (x, data, _) = draw_view(cx, &shape, Views::Any, |r, n, reps| {
        let (v, q) = fold_values::<E>(r, n, op, n * reps * reps);
        p = q;
        v
    });
    cx.note(format!("specials p={p}"));
    let c = cx.c;
    if len_into {
        let n = shape[0];
        let (k, cap, dev) = draw_count(cx, n);
        let out = DeviceTensor::empty(c, &[n], E::DTYPE);
        let idx = indexed.then(|| DeviceTensor::empty(c, &[n], common::index_dtype(c)));
        lib(cubeprim::scan_len_into(
            c,
            &x,
            &out,
            idx.as_ref(),
            len_of(cap, &dev),
            op,
            opts,
            cx.ws,
        ))?;
        let d = &data[..k];
        let (want, want_i) = cpu_ref::scan_with_indices(d, &[k], 0, op, opts);
        let got: Vec<E> = read(c, &out);
        common::compare(&got[..k], &want, d, &[k], 0, op, opts)?;
        if let Some(idx) = idx {
            check_idx("indices", &read_idx(c, &idx)?[..k], &want_i)?;
        }
        return Ok(());
    }
    if indexed {
        let (y, i) = lib(cubeprim::scan_with_indices(c, &x, arg, op, opts, cx.ws))?;
        check_eq("shape", &y.shape, &shape)?;
        check_eq("index shape", &i.shape, &shape)?;
        let (want, want_i) = cpu_ref::scan_with_indices(&data, &shape, axis, op, opts);
        common::compare(&read::<E>(c, &y), &want, &data, &shape, axis, op, opts)?;
        check_idx("indices", &read_idx(c, &i)?, &want_i)
    } else {
        let y = lib(cubeprim::scan(c, &x, arg, op, opts, cx.ws))?;
        check_eq("shape", &y.shape, &shape)?;
        check_eq("dtype", y.dtype, E::DTYPE)?;
        let want = cpu_ref::scan(&data, &shape, axis, op, opts);
        common::compare(&read::<E>(c, &y), &want, &data, &shape, axis, op, opts)
    }
}

/// Per output of a reduction: the sum of |x| and the number of factors.
fn fold_scales<E: Element>(
    data: &[E],
    shape: &[usize],
    axis: Option<usize>,
) -> (Vec<f64>, Vec<f64>) {
    let abs: Vec<f64> = data.iter().map(|x| x.to_f64().abs()).collect();
    let s = cpu_ref::reduce(&abs, shape, axis, ScanOp::Sum);
    let k = match axis {
        Some(a) => shape[a],
        None => data.len(),
    } as f64;
    let n = s.len();
    (s, vec![k; n])
}

fn reduce_case<E: Fz>(cx: &mut Cx) -> Result<(), String> {
    let mut op = pick(&mut cx.rng, &OPS);
    let v = cx.rng.random_range(0..100);
    let c = cx.c;
    if v >= 85 {
        // The first `len` elements of a contiguous tensor (an empty max / min is the identity).
        let n = draw_len(&mut cx.rng, cx.max);
        cx.note(format!("{} {op:?} reduce_len_into n {n}", E::DTYPE));
        let (data, p) = fold_values::<E>(&mut cx.rng, n, op, n);
        cx.note(format!("specials p={p}"));
        let x = up(c, &data, &[n]);
        let (k, cap, dev) = draw_count(cx, n);
        let out = DeviceTensor::empty(c, &[1], E::DTYPE);
        lib(cubeprim::reduce_len_into(
            c,
            &x,
            len_of(cap, &dev),
            op,
            &out,
            cx.ws,
        ))?;
        let d = &data[..k];
        let want = cpu_ref::reduce(d, &[k], None, op);
        let exact = exact_sums(d, &[k], None, op);
        let (s, f) = fold_scales(d, &[k], None);
        let got = &read::<E>(c, &out)[..1];
        return check_fold_exact("value", got, &want, exact.as_deref(), op, &s, &f);
    }
    let shape = draw_shape(&mut cx.rng, cx.max);
    let rank = shape.len();
    let axis = (v < 70).then(|| cx.rng.random_range(0..rank));
    let reduced = axis.map_or(shape.iter().product::<usize>(), |a| shape[a]);
    if reduced == 0 && matches!(op, ScanOp::Max | ScanOp::Min) {
        // A max / min of nothing has no value (an error by design).
        op = ScanOp::Sum;
    }
    let arg = axis.map(|a| {
        if cx.rng.random_bool(0.3) {
            a as isize - rank as isize
        } else {
            a as isize
        }
    });
    cx.note(format!("{} {op:?} axis {arg:?}", E::DTYPE));
    let mut p = 0.0;
    let (x, data, _) = draw_view(cx, &shape, Views::Any, |r, n, reps| {
        let (v, q) = fold_values::<E>(r, n, op, n * reps * reps);
        p = q;
        v
    });
    cx.note(format!("specials p={p}"));
    let y = lib(cubeprim::reduce(c, &x, arg, op, cx.ws))?;
    let mut out_shape = shape.clone();
    match axis {
        Some(a) => {
            out_shape.remove(a);
        }
        None => out_shape.clear(),
    }
    check_eq("shape", &y.shape, &out_shape)?;
    let want = cpu_ref::reduce(&data, &shape, axis, op);
    let exact = exact_sums(&data, &shape, axis, op);
    let (s, f) = fold_scales(&data, &shape, axis);
    let got = read::<E>(c, &y);
    check_fold_exact("values", &got, &want, exact.as_deref(), op, &s, &f)
}

/// Float sums of a reduction in f64 (see [`check_fold_exact`]); `None` for other folds.
fn exact_sums<E: Element>(
    data: &[E],
    shape: &[usize],
    axis: Option<usize>,
    op: ScanOp,
) -> Option<Vec<f64>> {
    (op == ScanOp::Sum && E::DTYPE.is_float()).then(|| {
        let wide: Vec<f64> = data.iter().map(|x| x.to_f64()).collect();
        cpu_ref::reduce(&wide, shape, axis, ScanOp::Sum)
    })
}

/// Flags of `shape` of a drawn dtype (any the runtime has, or bytes): the device tensor and
/// whether each is set (by `cpu::is_set` of the stored value).
fn draw_flags(cx: &mut Cx, shape: &[usize]) -> (DeviceTensor<R>, Vec<u8>) {
    let mut from = DType::ALL.to_vec();
    from.push(DType::U8);
    from.push(DType::U8);
    let d = pick(&mut cx.rng, &from);
    let d = if d == DType::U8 || supports(cx.c, d) {
        d
    } else {
        DType::U32
    };
    let n: usize = shape.iter().product();
    let density = pick(&mut cx.rng, &[0.0, 0.001, 0.1, 0.5, 0.9, 0.999, 1.0]);
    let alternate = cx.rng.random_bool(0.1);
    cx.note(format!(
        "flags {d} {}",
        if alternate {
            "alternating".to_string()
        } else {
            format!("density {density}")
        }
    ));
    let rng = &mut cx.rng;
    let mut value = |i: usize| -> f64 {
        let set = if alternate {
            i % 2 == 1
        } else {
            rng.random_bool(density)
        };
        if set {
            pick(rng, &[1.0, 1.0, 2.5, -1.0, f64::NAN, 255.0, 1e-3])
        } else {
            pick(rng, &[0.0, 0.0, -0.0])
        }
    };
    macro_rules! go {
        ($F:ty) => {{
            let f: Vec<$F> = (0..n).map(|i| <$F>::from_f64(value(i))).collect();
            let set = f.iter().map(|&x| cpu_ref::is_set(x) as u8).collect();
            (up(cx.c, &f, shape), set)
        }};
    }
    match d {
        DType::U8 => go!(u8),
        DType::F32 => go!(f32),
        DType::F64 => go!(f64),
        DType::F16 => go!(half::f16),
        DType::BF16 => go!(half::bf16),
        DType::I32 => go!(i32),
        DType::U32 => go!(u32),
        DType::I64 => go!(i64),
        DType::U64 => go!(u64),
    }
}

fn compaction_case(cx: &mut Cx, fam: &str) -> Result<(), String> {
    let c = cx.c;
    if fam == "nonzero" {
        let shape = draw_shape(&mut cx.rng, cx.max);
        cx.note(format!("shape {shape:?}"));
        let (x, set) = draw_flags(cx, &shape);
        if cx.rng.random_bool(0.3) {
            // The count alone.
            let n = set.len();
            let (k, cap, dev) = draw_count(cx, n);
            let x = retag_flat(&x, n);
            let count = cubeprim::new_count(c);
            lib(cubeprim::count_nonzero_into(
                c,
                &x,
                len_of(cap, &dev),
                &count,
                cx.ws,
            ))?;
            let want = set[..k].iter().filter(|&&s| s != 0).count();
            return check_eq("count_nonzero", cubeprim::read_count(c, &count), want);
        }
        cx.note("nonzero");
        let got = lib(cubeprim::nonzero(c, &x, cx.ws))?;
        let want = cpu_ref::nonzero(&set, &shape);
        check_eq(
            "shape",
            got.shape.clone(),
            vec![want.len() / shape.len(), shape.len()],
        )?;
        return check_idx("indices", &read_idx(c, &got)?, &want);
    }
    let dd = draw_dtype(cx, &DType::ALL);
    cx.note(format!("data {dd}"));
    with_bits!(dd, |B| {
        if fam == "masked_select" {
            let shape = draw_shape(&mut cx.rng, cx.max);
            cx.note(format!("shape {shape:?}"));
            let (mask, set) = draw_flags(cx, &shape);
            let data: Vec<B> = raw(&mut cx.rng, set.len());
            let x = up_as(c, &data, &shape, dd);
            let got = lib(cubeprim::masked_select(c, &x, &mask, cx.ws))?;
            let want = cpu_ref::select(&data, &set);
            return check_exact(
                "selected",
                &read::<B>(c, &retag(&got, B::DTYPE)),
                &want,
                true,
            );
        }
        let n = draw_len(&mut cx.rng, cx.max);
        cx.note(format!("n {n}"));
        let (flags, set) = draw_flags(cx, &[n]);
        let data: Vec<B> = raw(&mut cx.rng, n);
        let x = up_as(c, &data, &[n], dd);
        let pairs = fam == "select" && cx.rng.random_bool(0.4);
        let (k, cap, dev) = draw_count(cx, n);
        let len = len_of(cap, &dev);
        if fam == "partition" {
            let (out, count) = lib(cubeprim::partition(c, &x, &flags, len, cx.ws))?;
            let (want, wk) = cpu_ref::partition(&data[..k], &set[..k]);
            check_eq("count", cubeprim::read_count(c, &count), wk)?;
            let got: Vec<B> = read(c, &retag(&out, B::DTYPE));
            return check_exact("partitioned", &got[..k], &want, true);
        }
        let vd = draw_dtype(cx, &DType::ALL);
        if pairs {
            cx.note(format!("select_pairs values {vd}"));
            return with_bits!(vd, |V| {
                let vals: Vec<V> = raw(&mut cx.rng, n);
                let vt = up_as(c, &vals, &[n], vd);
                let (ok, ov, count) = lib(cubeprim::select_pairs(c, &x, &vt, &flags, len, cx.ws))?;
                let want_k = cpu_ref::select(&data[..k], &set[..k]);
                let want_v = cpu_ref::select(&vals[..k], &set[..k]);
                let m = cubeprim::read_count(c, &count);
                check_eq("count", m, want_k.len())?;
                let gk: Vec<B> = read(c, &retag(&ok, B::DTYPE));
                let gv: Vec<V> = read(c, &retag(&ov, V::DTYPE));
                check_exact("keys", &gk[..m], &want_k, true)?;
                check_exact("values", &gv[..m], &want_v, true)
            });
        }
        let (out, count) = lib(cubeprim::select(c, &x, &flags, len, cx.ws))?;
        let want = cpu_ref::select(&data[..k], &set[..k]);
        let m = cubeprim::read_count(c, &count);
        check_eq("count", m, want.len())?;
        let got: Vec<B> = read(c, &retag(&out, B::DTYPE));
        check_exact("selected", &got[..m], &want, true)
    })
}

/// A contiguous tensor seen as 1-D.
fn retag_flat(t: &DeviceTensor<R>, n: usize) -> DeviceTensor<R> {
    DeviceTensor::from_parts(t.handle.clone(), vec![n], vec![1], 0, t.dtype)
}

/// Sums of |v| and sizes of the runs of `counts`.
fn run_scales<V: Element>(vals: &[V], counts: &[i64]) -> (Vec<f64>, Vec<f64>) {
    let mut at = 0usize;
    counts
        .iter()
        .map(|&n| {
            let n = n as usize;
            let s = vals[at..at + n]
                .iter()
                .map(|v| v.to_f64().abs())
                .sum::<f64>();
            at += n;
            (s, n as f64)
        })
        .unzip()
}

fn reduce_by_key_case<K: Fz, V: Fz>(cx: &mut Cx) -> Result<(), String> {
    let c = cx.c;
    let op = pick(&mut cx.rng, &OPS);
    let n = draw_len(&mut cx.rng, cx.max);
    let (kd, mode) = keys::<K>(&mut cx.rng, n, false);
    let (vd, p) = fold_values::<V>(&mut cx.rng, n, op, n);
    cx.note(format!(
        "keys {} ({mode}) values {} {op:?} n {n} specials p={p}",
        K::DTYPE,
        V::DTYPE
    ));
    let kt = up(c, &kd, &[n]);
    let vt = up(c, &vd, &[n]);
    let (k, cap, dev) = draw_count(cx, n);
    let (ok, ov, count) = lib(cubeprim::reduce_by_key(
        c,
        &kt,
        &vt,
        len_of(cap, &dev),
        op,
        cx.ws,
    ))?;
    let (wk, wv) = cpu_ref::reduce_by_key(&kd[..k], &vd[..k], op);
    let (_, runs, _) = cpu_ref::unique_consecutive(&kd[..k]);
    let m = cubeprim::read_count(c, &count);
    check_eq("runs", m, wk.len())?;
    check_exact("keys", &read::<K>(c, &ok)[..m], &wk, false)?;
    let (s, f) = run_scales(&vd[..k], &runs);
    check_fold("values", &read::<V>(c, &ov)[..m], &wv, op, &s, &f)
}

fn unique_consecutive_case<E: Fz>(cx: &mut Cx) -> Result<(), String> {
    let c = cx.c;
    let inverse = cx.rng.random_bool(0.5);
    let counts = cx.rng.random_bool(0.6);
    if cx.rng.random_bool(0.3) {
        // The whole (N-d, contiguous) tensor, cut to the number of runs.
        let shape = draw_shape(&mut cx.rng, cx.max);
        let n = shape.iter().product();
        let (kd, mode) = keys::<E>(&mut cx.rng, n, false);
        cx.note(format!(
            "{} ({mode}) shape {shape:?} sized inverse {inverse} counts {counts}",
            E::DTYPE
        ));
        let u = lib(cubeprim::unique_consecutive_sized(
            c,
            &up(c, &kd, &shape),
            inverse,
            counts,
            cx.ws,
        ))?;
        let (wv, wc, wi) = cpu_ref::unique_consecutive(&kd);
        check_exact("values", &read::<E>(c, &u.values), &wv, false)?;
        if let Some(t) = &u.counts {
            check_idx("counts", &read_idx(c, t)?, &wc)?;
        }
        if let Some(t) = &u.inverse {
            check_eq("inverse shape", &t.shape, &shape)?;
            check_idx("inverse", &read_idx(c, t)?, &wi)?;
        }
        return check_eq(
            "outputs",
            (u.counts.is_some(), u.inverse.is_some()),
            (counts, inverse),
        );
    }
    let n = draw_len(&mut cx.rng, cx.max);
    let (kd, mode) = keys::<E>(&mut cx.rng, n, false);
    cx.note(format!(
        "{} ({mode}) n {n} inverse {inverse} counts {counts}",
        E::DTYPE
    ));
    let (k, cap, dev) = draw_count(cx, n);
    let kt = up(c, &kd, &[n]);
    let u = lib(cubeprim::unique_consecutive(
        c,
        &kt,
        len_of(cap, &dev),
        inverse,
        counts,
        cx.ws,
    ))?;
    let (wv, wc, wi) = cpu_ref::unique_consecutive(&kd[..k]);
    let m = cubeprim::read_count(c, &u.count);
    check_eq("runs", m, wv.len())?;
    check_exact("values", &read::<E>(c, &u.values)[..m], &wv, false)?;
    if let Some(t) = &u.counts {
        check_idx("counts", &read_idx(c, t)?[..m], &wc)?;
    }
    if let Some(t) = &u.inverse {
        check_idx("inverse", &read_idx(c, t)?[..k], &wi)?;
    }
    check_eq(
        "outputs",
        (u.counts.is_some(), u.inverse.is_some()),
        (counts, inverse),
    )
}

fn unique_case<E: Fz>(cx: &mut Cx) -> Result<(), String> {
    let c = cx.c;
    let inverse = cx.rng.random_bool(0.5);
    let counts = cx.rng.random_bool(0.6);
    let shape = draw_shape(&mut cx.rng, cx.max);
    let mut mode = "";
    cx.note(format!("{} inverse {inverse} counts {counts}", E::DTYPE));
    let (x, data, _) = draw_view(cx, &shape, Views::Flat, |r, n, _| {
        let (v, m) = keys::<E>(r, n, false);
        mode = m;
        v
    });
    cx.note(format!("keys {mode}"));
    let u = lib(cubeprim::unique(c, &x, inverse, counts, cx.ws))?;
    let (wv, wc, wi) = cpu_ref::unique(&data);
    check_exact("values", &read::<E>(c, &u.values), &wv, false)?;
    if let Some(t) = &u.counts {
        check_idx("counts", &read_idx(c, t)?, &wc)?;
    }
    if let Some(t) = &u.inverse {
        check_eq("inverse shape", &t.shape, &shape)?;
        check_idx("inverse", &read_idx(c, t)?, &wi)?;
    }
    check_eq(
        "outputs",
        (u.counts.is_some(), u.inverse.is_some()),
        (counts, inverse),
    )
}

/// A histogram key type.
trait HistKey: Element {
    fn key(v: i64) -> Self;
    fn as_i64(self) -> i64;
}
macro_rules! hist_key {
    ($($t:ty),*) => {$(
        impl HistKey for $t {
            fn key(v: i64) -> Self {
                v as $t
            }
            fn as_i64(self) -> i64 {
                // Past i64::MAX (u64 keys): out of every range, as the key itself.
                i64::try_from(self).unwrap_or(i64::MAX)
            }
        }
    )*};
}
hist_key!(u32, i32, u64, i64);

fn histogram_case<K: HistKey>(cx: &mut Cx) -> Result<(), String> {
    let c = cx.c;
    let bins = pick(
        &mut cx.rng,
        &[
            0usize, 1, 2, 7, 64, 255, 256, 257, 1000, 4096, 5000, 12_289, 70_000,
        ],
    );
    let n = draw_len(&mut cx.rng, cx.max);
    let out_p = pick(&mut cx.rng, &[0.0, 0.01, 0.2, 0.9]);
    cx.note(format!(
        "{} bins {bins} n {n} out of range p={out_p}",
        K::DTYPE
    ));
    let b = bins as i64;
    let rng = &mut cx.rng;
    let kd: Vec<K> = (0..n)
        .map(|_| {
            if bins == 0 || rng.random_bool(out_p) {
                match rng.random_range(0..4) {
                    0 => K::key(-rng.random_range(1..=b + 5)),
                    1 => K::key(b + rng.random_range(0..=b + 5)),
                    2 => K::key(rng.random_range(i64::MIN..=i64::MAX)),
                    // A low word in range and a high word that is not zero (64-bit keys).
                    _ => K::key(rng.random_range(0..=b) + (1i64 << 32)),
                }
            } else {
                K::key(rng.random_range(0..b))
            }
        })
        .collect();
    let kt = up(c, &kd, &[n]);
    let (k, cap, dev) = draw_count(cx, n);
    let got = lib(cubeprim::histogram(c, &kt, bins, len_of(cap, &dev), cx.ws))?;
    let wide: Vec<i64> = kd[..k].iter().map(|&x| x.as_i64()).collect();
    let want = cpu_ref::histogram(&wide, bins);
    check_eq("shape", &got.shape, &vec![bins])?;
    check_exact("counts", &read::<u32>(c, &got), &want, true)
}

/// Sort options: direction, bits (sometimes), algorithm, plane operations.
fn draw_sort_opts(cx: &mut Cx, dtype: DType) -> (SortOptions, Option<(u32, u32)>) {
    let mut o = SortOptions {
        descending: cx.rng.random_bool(0.5),
        ..SortOptions::default()
    };
    let mut bits = None;
    if cx.rng.random_bool(0.2) {
        let kb = cpu_ref::key_bits(dtype);
        let b = cx.rng.random_range(0..kb);
        let e = cx.rng.random_range(b + 1..=kb);
        o = o.bits(b, e);
        bits = Some((b, e));
    }
    o.plane_ops = draw_plane_ops(cx);
    (o, bits)
}

fn sort_case<E: Fz>(cx: &mut Cx) -> Result<(), String> {
    let c = cx.c;
    let v = cx.rng.random_range(0..4);
    let (opts, bits) = draw_sort_opts(cx, E::DTYPE);
    let index = draw_index(cx);
    let shape = if v == 3 {
        vec![draw_len(&mut cx.rng, cx.max)]
    } else {
        draw_shape(&mut cx.rng, cx.max)
    };
    let name = [
        "sort",
        "argsort",
        "sort_with_indices",
        "sort_into with a length",
    ][v];
    cx.note(format!("{name} {} {opts:?} {index:?}", E::DTYPE));
    let mut mode = "";
    let (x, data, _) = draw_view(cx, &shape, Views::Any, |r, n, _| {
        let (v, m) = keys::<E>(r, n, true);
        mode = m;
        v
    });
    cx.note(format!("keys {mode}"));
    let n = *shape.last().unwrap();
    if v == 3 {
        let (k, cap, dev) = draw_count(cx, n);
        let out = DeviceTensor::empty(c, &shape, E::DTYPE);
        let idx = DeviceTensor::empty(c, &shape, index.dtype());
        lib(cubeprim::sort_into(
            c,
            &x,
            Some(&out),
            Some(&idx),
            len_of(cap, &dev),
            opts,
            cx.ws,
        ))?;
        let order = cpu_ref::argsort(&data[..k], k, opts.descending, bits);
        let want = cpu_ref::permute(&data[..k], k, &order);
        check_exact("keys", &read::<E>(c, &out)[..k], &want, true)?;
        return check_idx("indices", &read_idx(c, &idx)?[..k], &widen(&order));
    }
    let order = cpu_ref::argsort(&data, n, opts.descending, bits);
    let want = cpu_ref::permute(&data, n, &order);
    match v {
        0 => {
            let y = lib(cubeprim::sort(c, &x, opts, cx.ws))?;
            check_eq("shape", &y.shape, &shape)?;
            check_exact("keys", &read::<E>(c, &y), &want, true)
        }
        1 => {
            let i = lib(cubeprim::argsort(c, &x, index, opts, cx.ws))?;
            check_eq("dtype", i.dtype, index.dtype())?;
            check_idx("indices", &read_idx(c, &i)?, &widen(&order))
        }
        _ => {
            let (y, i) = lib(cubeprim::sort_with_indices(c, &x, index, opts, cx.ws))?;
            check_exact("keys", &read::<E>(c, &y), &want, true)?;
            check_idx("indices", &read_idx(c, &i)?, &widen(&order))
        }
    }
}

fn sort_pairs_case<K: Fz, B: Element>(cx: &mut Cx, vd: DType) -> Result<(), String> {
    let c = cx.c;
    let (opts, bits) = draw_sort_opts(cx, K::DTYPE);
    let shape = draw_shape(&mut cx.rng, cx.max);
    cx.note(format!("keys {} values {vd} {opts:?}", K::DTYPE));
    let mut mode = "";
    let (x, data, _) = draw_view(cx, &shape, Views::Any, |r, n, _| {
        let (v, m) = keys::<K>(r, n, true);
        mode = m;
        v
    });
    cx.note(format!("keys {mode}"));
    let total = data.len();
    let vals: Vec<B> = raw(&mut cx.rng, total);
    let vt = up_as(c, &vals, &shape, vd);
    let n = *shape.last().unwrap();
    let (ko, vo) = lib(cubeprim::sort_pairs(c, &x, &vt, opts, cx.ws))?;
    let order = cpu_ref::argsort(&data, n, opts.descending, bits);
    check_exact(
        "keys",
        &read::<K>(c, &ko),
        &cpu_ref::permute(&data, n, &order),
        true,
    )?;
    let got: Vec<B> = read(c, &retag(&vo, B::DTYPE));
    check_exact("values", &got, &cpu_ref::permute(&vals, n, &order), true)
}

fn top_k_case<E: Fz>(cx: &mut Cx) -> Result<(), String> {
    let c = cx.c;
    let shape = draw_shape(&mut cx.rng, cx.max);
    let n = *shape.last().unwrap();
    let k = if n == 0 {
        0
    } else {
        match cx.rng.random_range(0..8) {
            0 => 1,
            1 => 2.min(n),
            2 => 8.min(n),
            3 => n / 2,
            4 => n,
            5 => 0,
            _ => cx.rng.random_range(1..=n.min(300)),
        }
    };
    let largest = cx.rng.random_bool(0.6);
    let index = draw_index(cx);
    let selectable =
        cubeprim::sort::SelectPlan::new(c, &Default::default(), n, k, E::DTYPE, PlaneOps::Auto)
            .is_some();
    let method = match cx.rng.random_range(0..4) {
        0 if selectable => TopKMethod::Select,
        1 => TopKMethod::Sort,
        _ => TopKMethod::Auto,
    };
    cx.note(format!(
        "{} k {k} largest {largest} {method:?} {index:?}",
        E::DTYPE
    ));
    let mut mode = "";
    let (x, data, _) = draw_view(cx, &shape, Views::Any, |r, n, _| {
        let (v, m) = keys::<E>(r, n, true);
        mode = m;
        v
    });
    cx.note(format!("keys {mode}"));
    let (v, i) = lib(cubeprim::top_k_with(
        c, &x, k, largest, index, method, cx.ws,
    ))?;
    let mut out_shape = shape.clone();
    *out_shape.last_mut().unwrap() = k;
    check_eq("shape", &v.shape, &out_shape)?;
    let (wv, wi) = cpu_ref::top_k(&data, n, k, largest);
    check_exact("values", &read::<E>(c, &v), &wv, true)?;
    check_idx("indices", &read_idx(c, &i)?, &widen(&wi))
}

fn searchsorted_case<E: Fz>(cx: &mut Cx) -> Result<(), String> {
    let c = cx.c;
    let variant = cx.rng.random_range(0..3);
    let right = cx.rng.random_bool(0.5);
    let index = draw_index(cx);
    // Batched: `rows` sorted rows of `n`, queries `[rows, m]`; else one shared sorted row.
    let rows = if variant == 1 {
        pick(&mut cx.rng, &[1usize, 2, 3, 7, 33])
    } else {
        1
    };
    let n = if cx.rng.random_bool(0.5) {
        draw_len(&mut cx.rng, cx.max.min(70_000) / rows)
    } else {
        pick(&mut cx.rng, &SMALL_DIMS).min(cx.max / rows)
    };
    let (raw_sorted, mode) = keys::<E>(&mut cx.rng, rows * n, true);
    let sorted = cpu_ref::permute(
        &raw_sorted,
        n,
        &cpu_ref::argsort(&raw_sorted, n, false, None),
    );
    let q_shape = if variant == 1 {
        vec![rows, draw_len(&mut cx.rng, cx.max.min(100_000) / rows)]
    } else {
        let mut s = draw_shape(&mut cx.rng, cx.max);
        shrink(&mut s, 200_000);
        s
    };
    let m = *q_shape.last().unwrap();
    let total: usize = q_shape.iter().product();
    let (fresh, _) = keys::<E>(&mut cx.rng, total, true);
    let rng = &mut cx.rng;
    let queries: Vec<E> = (0..total)
        .map(|i| {
            // Half the queries hit keys of their row exactly (ties, both sides).
            if !sorted.is_empty() && n > 0 && rng.random_bool(0.5) {
                let row = if variant == 1 { i / m.max(1) } else { 0 };
                sorted[row * n + rng.random_range(0..n)]
            } else {
                fresh[i]
            }
        })
        .collect();
    let name = [
        "searchsorted (one row)",
        "searchsorted (batched)",
        "bucketize",
    ][variant];
    cx.note(format!(
        "{name} {} sorted {rows} x {n} ({mode}) queries {q_shape:?} right {right} {index:?}",
        E::DTYPE
    ));
    let s_shape = if variant == 1 { vec![rows, n] } else { vec![n] };
    let st = up(c, &sorted, &s_shape);
    let qt = up(c, &queries, &q_shape);
    let side = if right { Side::Right } else { Side::Left };
    let got = if variant == 2 {
        lib(cubeprim::bucketize(c, &qt, &st, right, index))?
    } else {
        lib(cubeprim::searchsorted(c, &st, &qt, side, index))?
    };
    check_eq("shape", &got.shape, &q_shape)?;
    let want = cpu_ref::searchsorted(&sorted, n, &queries, m, right);
    check_idx("positions", &read_idx(c, &got)?, &widen(&want))
}

// ---------------------------------------------------------------------------------------------
// The tests.

/// Runs `count` cases from `first`; returns the failures. `CUBEPRIM_FUZZ_VERBOSE=1` prints
/// each seed before it runs and each case with its time after.
/// `CUBEPRIM_FUZZ_FAMILY=name` runs that family only and `CUBEPRIM_FUZZ_MAX=n` caps the
/// tensors at `n` elements (to replay a call of `longrun`, whose messages give both).
pub fn run_cases(c: &Client, first: u64, count: u64, progress: bool) -> Vec<String> {
    let verbose = std::env::var("CUBEPRIM_FUZZ_VERBOSE").as_deref() == Ok("1");
    let family = std::env::var("CUBEPRIM_FUZZ_FAMILY").ok();
    let max = env_u64("CUBEPRIM_FUZZ_MAX", MAX_TOTAL as u64) as usize;
    let mut ws = Workspace::new();
    let mut failures = Vec::new();
    let t0 = Instant::now();
    for seed in first..first + count {
        if verbose {
            eprintln!("fuzz: seed {seed} ...");
        }
        let t = Instant::now();
        match case_caught(c, &mut ws, seed, family.as_deref(), max) {
            Ok(what) if verbose => {
                eprintln!("fuzz: {:.0} ms {what}", t.elapsed().as_secs_f64() * 1e3)
            }
            Ok(_) => {}
            Err(e) => {
                eprintln!("fuzz: MISMATCH {e}");
                failures.push(e);
            }
        }
        if progress && (seed - first + 1).is_multiple_of(50) {
            eprintln!(
                "fuzz: {} cases, {} mismatches, {:.0} s",
                seed - first + 1,
                failures.len(),
                t0.elapsed().as_secs_f64()
            );
        }
    }
    failures
}

/// A count from the environment (test parameters only), `default` where unset.
pub fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The CI budget: seeds `0..CI_CASES`.
#[test]
fn random_cases_match_the_cpu() {
    let Some(c) = client() else { return };
    let t0 = Instant::now();
    let failures = run_cases(&c, 0, CI_CASES, false);
    eprintln!(
        "fuzz: {CI_CASES} cases, {} mismatches in {:.1} s",
        failures.len(),
        t0.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The long run: `CUBEPRIM_FUZZ_CASES` (10 000) cases from seed `CUBEPRIM_FUZZ_SEED` (0).
#[test]
#[ignore]
fn soak() {
    let Some(c) = client() else { return };
    let count = env_u64("CUBEPRIM_FUZZ_CASES", 10_000);
    let first = env_u64("CUBEPRIM_FUZZ_SEED", 0);
    let t0 = Instant::now();
    let failures = run_cases(&c, first, count, true);
    let seeds: Vec<&str> = failures
        .iter()
        .map(|f| f.split(':').next().unwrap_or(""))
        .collect();
    println!(
        "fuzz: {count} cases, {} mismatches ({} from seed {first}, {:.0} s){}",
        failures.len(),
        R::name(&c),
        t0.elapsed().as_secs_f64(),
        if seeds.is_empty() {
            String::new()
        } else {
            format!("; failing: {}", seeds.join(", "))
        }
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The generator must be able to fail: a wrong reference is caught.
#[test]
fn a_wrong_result_is_caught() {
    let want = [1.0f32, 2.0, 3.0];
    let got = [1.0f32, 2.0, 3.5];
    assert!(check_exact("x", &got, &want, false).is_err());
    assert!(check_fold("x", &got, &want, ScanOp::Sum, &[6.0; 3], &[3.0; 3]).is_err());
    assert!(check_fold("x", &want, &want, ScanOp::Sum, &[6.0; 3], &[3.0; 3]).is_ok());
    let nan = [f16::NAN];
    assert!(check_exact("x", &nan, &nan, false).is_ok());
    assert!(check_idx("i", &[0, 1], &[1, 0]).is_err());
}
