//! Run-length ops and histograms on burn tensors: [`RunsExt`] (unique_consecutive, unique,
//! reduce_by_key) and [`HistogramExt`] (histogram, bincount), with their ops.
//!
//! unique / unique_consecutive / reduce_by_key return outputs sized by the number of runs: one
//! pass on the device writes them into buffers sized for every element and leaves the count
//! there; the method reads that count (the one host read these methods do) and returns views
//! cut to it.

use super::backend::{any, read_count, run, tensor, NumericKind, PrimBackend};
use super::grad::Saved;
use super::host::{with_host_data, HostData, HostTensor, IntoHostData};
use super::op::{check_inputs, device_dtype, same_shape, Kind, OutputSpec, PrimOp, TensorMeta};
use super::reduce::ReduceExt;
use super::scan::take;
use super::select::{count_tensor, flat, pad};
use crate::cpu;
use crate::{DType, DeviceTensor, Error, Result, ScanOp, Workspace};
use ::burn::tensor::ops::FloatTensor;
use ::burn::tensor::{Int, Tensor};
use cubecl::prelude::*;

/// Runs of equal elements of the flattened input: their first elements, and optionally the
/// length of each and the run index of every element (`torch.unique_consecutive`); with
/// `sorted`, of the sorted input (`torch.unique(sorted=True)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Runs {
    /// Sort first: the runs of the sorted input are its unique values.
    pub sorted: bool,
    /// Also return the run index of every element.
    pub inverse: bool,
    /// Also return the length of each run.
    pub counts: bool,
}

/// Runs of equal consecutive keys (input 0) with the fold of their values (input 1, same
/// shape) with `op`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReduceByKey {
    /// The fold of each run's values.
    pub op: ScanOp,
}

/// Counts of the int keys equal to each `b < bins` (others ignored).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Histogram {
    /// Number of bins: keys in `[0, bins)` are counted.
    pub bins: usize,
}

impl PrimOp for Runs {
    const NAME: &'static str = "cubeprim::unique";

    fn needs_contiguous(&self) -> bool {
        true
    }

    fn outputs(&self, inputs: &[TensorMeta]) -> Result<Vec<OutputSpec>> {
        check_inputs(inputs, 1, false, "unique")?;
        let x = &inputs[0];
        let n: usize = x.shape.iter().product();
        if self.sorted && n > u32::MAX as usize {
            return Err(Error::Unsupported(format!(
                "{n} elements: unique takes at most 2^32 - 1"
            )));
        }
        let mut out = vec![OutputSpec::flat(inputs, 0)];
        if self.counts {
            out.push(OutputSpec::index(vec![n]));
        }
        if self.inverse {
            out.push(OutputSpec::index(x.shape.clone()));
        }
        out.push(OutputSpec::count());
        Ok(out)
    }

    fn check_device<R: Runtime>(
        &self,
        client: &ComputeClient<R>,
        inputs: &[TensorMeta],
    ) -> Result<()> {
        let x = &inputs[0];
        let dtype = device_dtype(client, x)?;
        let n: usize = x.shape.iter().product();
        if self.sorted && n > 0 {
            let payload = crate::Payload::Indices(crate::IndexType::U32);
            let opts = crate::SortOptions::default();
            crate::sort_workspace_bytes(client, &[n], dtype, payload, false, opts)?;
        }
        crate::runs_workspace_bytes(client, n, dtype, None).map(drop)
    }

    fn run_device<R: Runtime>(
        &self,
        client: &ComputeClient<R>,
        inputs: &[DeviceTensor<R>],
        ws: &mut Workspace<R>,
    ) -> Result<Vec<DeviceTensor<R>>> {
        let x = &inputs[0];
        let (inv, counts) = (self.inverse, self.counts);
        let u = if self.sorted {
            crate::unique::unique_unsized(client, x, inv, counts, ws)?
        } else {
            let f = flat(x);
            let mut u = crate::unique_consecutive(client, &f, f.num_elements(), inv, counts, ws)?;
            u.inverse = u.inverse.map(|i| reshape(i, &x.shape));
            u
        };
        Ok([Some(u.values), u.counts, u.inverse, Some(u.count)]
            .into_iter()
            .flatten()
            .collect())
    }

    fn run_host(&self, inputs: &[HostTensor<'_>]) -> Result<Vec<HostTensor<'static>>> {
        let x = &inputs[0];
        let n: usize = x.shape.iter().product();
        let (values, counts, inverse) = with_host_data!(&x.data, |v: E| {
            let (u, c, i) = if self.sorted {
                cpu::unique::<E>(v)
            } else {
                cpu::unique_consecutive::<E>(v)
            };
            let k = u.len();
            let fill = v.first().copied().unwrap_or_default();
            (E::into_host(pad(u, n, fill)), (c, k), i)
        });
        let (counts, k) = counts;
        let mut out = vec![HostTensor {
            shape: vec![n],
            data: values,
        }];
        if self.counts {
            out.push(HostTensor {
                shape: vec![n],
                data: i64::into_host(pad(counts, n, 0)),
            });
        }
        if self.inverse {
            out.push(HostTensor {
                shape: x.shape.clone(),
                data: i64::into_host(inverse),
            });
        }
        out.push(count_tensor(k));
        Ok(out)
    }
}

/// A contiguous device tensor with a new shape of the same size.
fn reshape<R: Runtime>(t: DeviceTensor<R>, shape: &[usize]) -> DeviceTensor<R> {
    let strides = crate::tensor::contiguous_strides(shape);
    DeviceTensor::from_parts(t.handle, shape.to_vec(), strides, 0, t.dtype)
}

impl PrimOp for ReduceByKey {
    const NAME: &'static str = "cubeprim::reduce_by_key";

    fn needs_contiguous(&self) -> bool {
        true
    }

    fn outputs(&self, inputs: &[TensorMeta]) -> Result<Vec<OutputSpec>> {
        check_inputs(inputs, 2, false, "reduce_by_key")?;
        same_shape(&inputs[0], &inputs[1])?;
        self.op.check_dtype(inputs[1].prim_dtype()?)?;
        let (k, v) = (OutputSpec::flat(inputs, 0), OutputSpec::flat(inputs, 1));
        Ok(vec![k, v, OutputSpec::count()])
    }

    fn check_device<R: Runtime>(
        &self,
        client: &ComputeClient<R>,
        inputs: &[TensorMeta],
    ) -> Result<()> {
        let keys = device_dtype(client, &inputs[0])?;
        let values = device_dtype(client, &inputs[1])?;
        let n = inputs[0].shape.iter().product();
        crate::runs_workspace_bytes(client, n, keys, Some(values)).map(drop)
    }

    fn run_device<R: Runtime>(
        &self,
        client: &ComputeClient<R>,
        inputs: &[DeviceTensor<R>],
        ws: &mut Workspace<R>,
    ) -> Result<Vec<DeviceTensor<R>>> {
        let (keys, values) = (flat(&inputs[0]), flat(&inputs[1]));
        let n = keys.num_elements();
        let (k, v, count) = crate::reduce_by_key(client, &keys, &values, n, self.op, ws)?;
        Ok(vec![k, v, count])
    }

    fn run_host(&self, inputs: &[HostTensor<'_>]) -> Result<Vec<HostTensor<'static>>> {
        let (keys, values) = (&inputs[0].data, &inputs[1].data);
        let n = inputs[0].shape.iter().product();
        let op = self.op;
        let (k, v, runs) = with_host_data!(keys, |ks: K| with_host_data!(values, |vs: V| {
            let (k, v) = cpu::reduce_by_key::<K, V>(ks, vs, op);
            let runs = k.len();
            let kf = ks.first().copied().unwrap_or_default();
            let vf = vs.first().copied().unwrap_or_default();
            (
                K::into_host(pad(k, n, kf)),
                V::into_host(pad(v, n, vf)),
                runs,
            )
        }));
        let one = |data| HostTensor {
            shape: vec![n],
            data,
        };
        Ok(vec![one(k), one(v), count_tensor(runs)])
    }

    fn grad_output(&self) -> Option<usize> {
        Some(1)
    }

    fn backward<B: PrimBackend>(
        &self,
        saved: &Saved<B>,
        grad: FloatTensor<B>,
    ) -> Vec<Option<FloatTensor<B>>> {
        super::grad::reduce_by_key_backward(self, saved, grad)
    }
}

impl PrimOp for Histogram {
    const NAME: &'static str = "cubeprim::histogram";

    fn needs_contiguous(&self) -> bool {
        true
    }

    fn outputs(&self, inputs: &[TensorMeta]) -> Result<Vec<OutputSpec>> {
        check_inputs(inputs, 1, false, "histogram")?;
        if inputs[0].kind != Kind::Int {
            return Err(Error::Unsupported("histogram keys are int tensors".into()));
        }
        if self.bins > i32::MAX as usize {
            return Err(Error::Unsupported(format!(
                "{} bins: at most 2^31 - 1",
                self.bins
            )));
        }
        Ok(vec![OutputSpec::index(vec![self.bins])])
    }

    fn check_device<R: Runtime>(
        &self,
        client: &ComputeClient<R>,
        inputs: &[TensorMeta],
    ) -> Result<()> {
        match device_dtype(client, &inputs[0])? {
            DType::I32 | DType::U32 | DType::I64 | DType::U64 => Ok(()),
            dtype => Err(Error::UnsupportedDType {
                dtype,
                reason: "histogram keys are i32, u32, i64 or u64 on the device".into(),
            }),
        }
    }

    fn run_device<R: Runtime>(
        &self,
        client: &ComputeClient<R>,
        inputs: &[DeviceTensor<R>],
        ws: &mut Workspace<R>,
    ) -> Result<Vec<DeviceTensor<R>>> {
        let keys = flat(&inputs[0]);
        let n = keys.num_elements();
        Ok(vec![crate::histogram(client, &keys, self.bins, n, ws)?])
    }

    fn run_host(&self, inputs: &[HostTensor<'_>]) -> Result<Vec<HostTensor<'static>>> {
        let bins = self.bins;
        let counts = match &inputs[0].data {
            HostData::I32(v) => cpu::histogram::<i32>(v, bins),
            HostData::U32(v) => cpu::histogram::<u32>(v, bins),
            HostData::I64(v) => cpu::histogram::<i64>(v, bins),
            other => {
                return Err(Error::UnsupportedDType {
                    dtype: other.dtype(),
                    reason: "histogram keys are i32, u32 or i64 on the host".into(),
                })
            }
        };
        Ok(vec![HostTensor {
            shape: vec![bins],
            data: u32::into_host(counts),
        }])
    }
}

/// The outputs of [`RunsExt::prim_unique_with`] / [`RunsExt::prim_unique_consecutive_with`].
pub struct UniqueOutput<B: PrimBackend, const D: usize, K: NumericKind<B>> {
    /// The unique values (the first of each run), 1-D.
    pub values: Tensor<B, 1, K>,
    /// How many elements each value stands for (when asked).
    pub counts: Option<Tensor<B, 1, Int>>,
    /// For every input element, the index of its value in `values` (when asked; the input's
    /// shape).
    pub inverse: Option<Tensor<B, D, Int>>,
}

impl<B: PrimBackend, const D: usize, K: NumericKind<B>> UniqueOutput<B, D, K> {
    /// Values and counts (panics where counts were not asked for).
    pub fn with_counts(self) -> (Tensor<B, 1, K>, Tensor<B, 1, Int>) {
        (self.values, self.counts.expect("counts were asked for"))
    }
    /// Values and inverse indices (panics where they were not asked for).
    pub fn with_inverse(self) -> (Tensor<B, 1, K>, Tensor<B, D, Int>) {
        (
            self.values,
            self.inverse.expect("the inverse was asked for"),
        )
    }
}

/// Run-length ops on burn float and int tensors, on any [`PrimBackend`]. The input is
/// flattened (row-major), as PyTorch does without `dim`. Outputs are sized by the number of
/// runs: each method reads that count back once (one host read, a sync). NaN equals nothing
/// (every NaN is its own run), `-0.0 == 0.0`. Counts and inverse indices have the backend's int
/// dtype.
pub trait RunsExt<B: PrimBackend, const D: usize, K: NumericKind<B>>: Sized {
    /// The first element of each run of equal consecutive elements, with their lengths and / or
    /// the run index of every element when asked (`torch.unique_consecutive(x,
    /// return_inverse, return_counts)`).
    ///
    /// # Panics
    ///
    /// Before anything is queued (burn's convention for invalid arguments), with the message of a
    /// cubeprim [`Error`](crate::Error):
    /// [`Error::UnsupportedDType`](crate::Error::UnsupportedDType) for a dtype cubeprim does not
    /// take, and, on a device, where the op cannot run there (for example
    /// [`Error::UnsupportedDType`](crate::Error::UnsupportedDType) for bf16 on Vulkan).
    fn prim_unique_consecutive_with(self, inverse: bool, counts: bool) -> UniqueOutput<B, D, K>;
    /// The sorted unique values, with their counts and / or the index of every element's value
    /// when asked (`torch.unique(x, sorted=True, return_inverse, return_counts)`).
    ///
    /// # Panics
    ///
    /// As [`prim_unique_consecutive_with`](Self::prim_unique_consecutive_with).
    fn prim_unique_with(self, inverse: bool, counts: bool) -> UniqueOutput<B, D, K>;
    /// Runs of equal consecutive keys (`self`) with the fold of their `values` (same shape)
    /// with `op`: `(key of each run, fold of its values)`. Values keep their dtype (f16 / bf16
    /// accumulate in f32).
    ///
    /// # Panics
    ///
    /// Before anything is queued (burn's convention for invalid arguments), with the message of a
    /// cubeprim [`Error`](crate::Error): [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) for
    /// `values` of another shape, [`Error::UnsupportedDType`](crate::Error::UnsupportedDType) for a
    /// dtype cubeprim does not take, and, on a device, where the op cannot run there (for example
    /// [`Error::UnsupportedDType`](crate::Error::UnsupportedDType) for bf16 on Vulkan).
    fn prim_reduce_by_key<V: NumericKind<B>>(
        self,
        values: Tensor<B, D, V>,
        op: ScanOp,
    ) -> (Tensor<B, 1, K>, Tensor<B, 1, V>);

    /// `torch.unique_consecutive(x)`.
    ///
    /// # Panics
    ///
    /// As [`prim_unique_consecutive_with`](Self::prim_unique_consecutive_with).
    fn prim_unique_consecutive(self) -> Tensor<B, 1, K> {
        self.prim_unique_consecutive_with(false, false).values
    }
    /// `torch.unique_consecutive(x, return_counts=True)`.
    ///
    /// # Panics
    ///
    /// As [`prim_unique_consecutive_with`](Self::prim_unique_consecutive_with).
    fn prim_unique_consecutive_with_counts(self) -> (Tensor<B, 1, K>, Tensor<B, 1, Int>) {
        self.prim_unique_consecutive_with(false, true).with_counts()
    }
    /// `torch.unique_consecutive(x, return_inverse=True)`.
    ///
    /// # Panics
    ///
    /// As [`prim_unique_consecutive_with`](Self::prim_unique_consecutive_with).
    fn prim_unique_consecutive_with_inverse(self) -> (Tensor<B, 1, K>, Tensor<B, D, Int>) {
        self.prim_unique_consecutive_with(true, false)
            .with_inverse()
    }
    /// `torch.unique(x)` (sorted ascending; NaN last).
    ///
    /// # Panics
    ///
    /// As [`prim_unique_with`](Self::prim_unique_with).
    fn prim_unique(self) -> Tensor<B, 1, K> {
        self.prim_unique_with(false, false).values
    }
    /// `torch.unique(x, return_counts=True)`.
    ///
    /// # Panics
    ///
    /// As [`prim_unique_with`](Self::prim_unique_with).
    fn prim_unique_with_counts(self) -> (Tensor<B, 1, K>, Tensor<B, 1, Int>) {
        self.prim_unique_with(false, true).with_counts()
    }
    /// `torch.unique(x, return_inverse=True)`.
    ///
    /// # Panics
    ///
    /// As [`prim_unique_with`](Self::prim_unique_with).
    fn prim_unique_with_inverse(self) -> (Tensor<B, 1, K>, Tensor<B, D, Int>) {
        self.prim_unique_with(true, false).with_inverse()
    }
}

fn unique_impl<B: PrimBackend, const D: usize, K: NumericKind<B>>(
    x: Tensor<B, D, K>,
    op: Runs,
) -> UniqueOutput<B, D, K> {
    let (outs, k) = read_count(run::<B, _>(&op, vec![any(x)]));
    let mut outs = outs.into_iter();
    let values = tensor::<B, 1, K>(outs.next().expect("values")).slice(0..k);
    let counts = op
        .counts
        .then(|| tensor::<B, 1, Int>(outs.next().expect("counts")).slice(0..k));
    let inverse = op
        .inverse
        .then(|| tensor::<B, D, Int>(outs.next().expect("inverse")));
    UniqueOutput {
        values,
        counts,
        inverse,
    }
}

impl<B: PrimBackend, const D: usize, K: NumericKind<B>> RunsExt<B, D, K> for Tensor<B, D, K> {
    fn prim_unique_consecutive_with(self, inverse: bool, counts: bool) -> UniqueOutput<B, D, K> {
        let op = Runs {
            sorted: false,
            inverse,
            counts,
        };
        unique_impl(self, op)
    }

    fn prim_unique_with(self, inverse: bool, counts: bool) -> UniqueOutput<B, D, K> {
        let op = Runs {
            sorted: true,
            inverse,
            counts,
        };
        unique_impl(self, op)
    }

    fn prim_reduce_by_key<V: NumericKind<B>>(
        self,
        values: Tensor<B, D, V>,
        op: ScanOp,
    ) -> (Tensor<B, 1, K>, Tensor<B, 1, V>) {
        let op = ReduceByKey { op };
        let (outs, k) = read_count(run::<B, _>(&op, vec![any(self), any(values)]));
        let [keys, folded] = take(outs);
        (
            tensor::<B, 1, K>(keys).slice(0..k),
            tensor::<B, 1, V>(folded).slice(0..k),
        )
    }
}

/// Histograms of burn int tensors, on any [`PrimBackend`]. Counts have the backend's int
/// dtype. On devices, keys are i32, u32, i64 or u64 (64-bit keys read as two words).
pub trait HistogramExt<B: PrimBackend, const D: usize>: Sized {
    /// How many keys equal each `b` in `0..bins`; keys outside are ignored
    /// (`torch.bincount(x, minlength=bins)[:bins]` of the keys in range). On the device, no
    /// host read.
    ///
    /// # Panics
    ///
    /// Before anything is queued (burn's convention for invalid arguments), with the message of a
    /// cubeprim [`Error`](crate::Error): [`Error::Unsupported`](crate::Error::Unsupported) for keys
    /// that are not an int tensor or more than 2^31 - 1 bins,
    /// [`Error::UnsupportedDType`](crate::Error::UnsupportedDType) for int keys other than i32,
    /// u32, i64 or u64 (i32, u32 or i64 on `NdArray`).
    fn prim_histogram(self, bins: usize) -> Tensor<B, 1, Int>;
    /// `torch.bincount(x, minlength=minlength)`: `max(minlength, max(x) + 1)` bins. Reads the
    /// minimum and maximum back (one host read, a sync) to size the result; panics on a
    /// negative key, as PyTorch does.
    ///
    /// # Panics
    ///
    /// As [`prim_histogram`](Self::prim_histogram), and on a negative key (as PyTorch).
    fn prim_bincount(self, minlength: usize) -> Tensor<B, 1, Int>;
}

impl<B: PrimBackend, const D: usize> HistogramExt<B, D> for Tensor<B, D, Int> {
    fn prim_histogram(self, bins: usize) -> Tensor<B, 1, Int> {
        let [out] = take(run::<B, _>(&Histogram { bins }, vec![any(self)]));
        tensor(out)
    }

    fn prim_bincount(self, minlength: usize) -> Tensor<B, 1, Int> {
        if self.shape().num_elements() == 0 {
            return self.prim_histogram(minlength);
        }
        let range = Tensor::cat(vec![self.clone().prim_min(), self.clone().prim_max()], 0);
        let range: Vec<i64> = range.into_data().iter::<i64>().collect();
        if range[0] < 0 {
            panic!(
                "{}: bincount of a negative key ({})",
                Histogram::NAME,
                range[0]
            );
        }
        let bins = minlength.max(range[1] as usize + 1);
        self.prim_histogram(bins)
    }
}
