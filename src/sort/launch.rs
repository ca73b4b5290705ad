//! Dtype dispatch and the kernel launches of the sort family.

use super::plan::{
    pass_bytes, ping_pong_used, Route, SelectPlan, SortOutputs, SortPlan, ValueKind,
};
use crate::scan::{scan_into, ScanOp, ScanOptions};
use crate::{DType, DeviceTensor, Result, Workspace};
use cubecl::prelude::*;
use cubecl::server::Handle;
use cubeprim_kernels::cube::{RadixConfig, DIGIT_BITS};
use cubeprim_kernels::device::radix_histogram::{
    radix_histogram, PassTiles, RadixDigitLaunch, RadixGridLaunch, RadixRowsLaunch, HISTOGRAM_GROUP,
};
use cubeprim_kernels::device::radix_scatter::{
    radix_scatter, RadixValues, ScatterInputsLaunch, ScatterOutputsLaunch,
};
use cubeprim_kernels::device::radix_select_rows::radix_select_rows;
use cubeprim_kernels::device::radix_sort_rows::radix_sort_rows;
use half::{bf16, f16};

/// Runs `$body` with `$K` bound to the key dtype's storage type ([`with_dtype`]).
macro_rules! with_key {
    ($dtype:expr, |$K:ident| $body:expr) => {
        $crate::dispatch::with_dtype!($dtype, |$K, _KeyAcc| $body)
    };
}
pub(crate) use with_key;

/// The input keys as a launch sees them: a buffer, its `[rank, shape.., strides.., out
/// strides.., offset]` row layout (see `row_offsets`) and the stride along the sorted axis.
pub(crate) struct KeysIn {
    pub handle: Handle,
    pub len: usize,
    pub layout: Handle,
    pub layout_len: usize,
    pub stride: u32,
    /// Row `r` starts at key `r * n` (a contiguous view, no offset): the layout is not needed.
    pub rows_contiguous: bool,
}

/// Runs `$go!(VI, VO)` with a pass's value types: what it reads (`VI`) and writes (`VO`): u32
/// indices (i64 on the last pass of i64 indices), or the values' own type by size.
macro_rules! with_pass_values {
    ($vk:expr, $pass:expr, $go:ident) => {
        match $vk {
            // The packed argsort's first pass: u32 positions staged, u64 words written.
            _ if $pass.values == RadixValues::PackIota => $go!(u32, u64),
            ValueKind::None => $go!(u32, u32),
            ValueKind::Indices(_) if $pass.widen => $go!(u32, i64),
            ValueKind::Indices(_) => $go!(u32, u32),
            ValueKind::Values(d) => match d {
                DType::F16 => $go!(f16, f16),
                DType::BF16 => $go!(bf16, bf16),
                d if d.size() == 8 => $go!(u64, u64),
                _ => $go!(u32, u32),
            },
        }
    };
}

/// The buffers of one sort.
pub(crate) struct SortBuffers<'a> {
    pub keys: KeysIn,
    pub values: Option<&'a Handle>,
    pub keys_out: Option<&'a Handle>,
    pub values_out: Option<&'a Handle>,
    pub count: Option<&'a Handle>,
    /// Columns of each output row (`n`, or `k` for top-k).
    pub out_cols: u32,
    pub descending: bool,
}

fn arg<R: Runtime>(h: &Handle, len: usize) -> ArrayArg<R> {
    // SAFETY (for every use): kernels index within the lengths given by the plan.
    unsafe { ArrayArg::from_raw_parts(h.clone(), len.max(1)) }
}

/// `bytes` at `offset` of the region `h`.
fn sub(h: &Handle, offset: usize, bytes: usize) -> Handle {
    let used = h.size_in_used() as usize;
    h.clone()
        .offset_start(offset as u64)
        .offset_end((used - offset - bytes) as u64)
}

pub(crate) fn run<R: Runtime>(
    client: &ComputeClient<R>,
    plan: &SortPlan,
    key: DType,
    vk: ValueKind,
    b: &SortBuffers<'_>,
    ws: &mut Workspace<R>,
) -> Result<()> {
    match plan.route {
        Route::InCube => {
            in_cube(client, plan, key, vk, b, ws);
            Ok(())
        }
        Route::DeviceWide => device_wide(client, plan, key, vk, b, ws),
    }
}

fn in_cube<R: Runtime>(
    client: &ComputeClient<R>,
    plan: &SortPlan,
    key: DType,
    vk: ValueKind,
    b: &SortBuffers<'_>,
    ws: &mut Workspace<R>,
) {
    let dummy = ws.dummy(client);
    let out_len = plan.rows * b.out_cols as usize;
    let keys_out = b.keys_out.unwrap_or(&dummy);
    let idx_out = b.values_out.unwrap_or(&dummy);
    let flip = if b.descending { u32::MAX } else { 0 };
    let count = SortPlan::cube_count(plan.num_tiles);
    with_key!(key, |K| {
        macro_rules! go {
            ($X:ty, $indexed:expr) => {
                unsafe {
                    radix_sort_rows::launch_unchecked::<K, $X, R>(
                        client,
                        count,
                        CubeDim::new_1d(plan.cfg.threads),
                        arg(&b.keys.handle, b.keys.len),
                        arg(keys_out, if b.keys_out.is_some() { out_len } else { 1 }),
                        arg(idx_out, if $indexed { out_len } else { 1 }),
                        arg(&b.keys.layout, b.keys.layout_len),
                        plan.rows as u32,
                        plan.n as u32,
                        b.keys.stride,
                        b.out_cols,
                        plan.begin_bit,
                        plan.end_bit,
                        flip,
                        plan.cfg,
                        $indexed,
                        b.keys_out.is_some(),
                    )
                }
            };
        }
        match vk {
            ValueKind::Indices(DType::I64) => go!(i64, true),
            ValueKind::Indices(_) => go!(u32, true),
            _ => go!(u32, false),
        }
    });
}

/// Top-k by radix selection: `rows` rows of `n` keys, the first `k` of each row's stable
/// order (descending: largest first) into `values` / `indices` (u32 or i64).
#[allow(clippy::too_many_arguments)]
pub(crate) fn select_rows<R: Runtime>(
    client: &ComputeClient<R>,
    plan: SelectPlan,
    key: DType,
    index: DType,
    keys: &KeysIn,
    rows: usize,
    n: usize,
    k: usize,
    descending: bool,
    values: &Handle,
    indices: &Handle,
) {
    let out_len = rows * k;
    let flip = if descending { u32::MAX } else { 0 };
    let key_bits = crate::cpu::key_bits(key);
    let count = SortPlan::cube_count(rows as u32);
    with_key!(key, |K| {
        macro_rules! go {
            ($X:ty) => {
                unsafe {
                    radix_select_rows::launch_unchecked::<K, $X, R>(
                        client,
                        count,
                        CubeDim::new_1d(plan.cfg.threads),
                        arg(&keys.handle, keys.len),
                        arg(values, out_len),
                        arg(indices, out_len),
                        arg(&keys.layout, keys.layout_len),
                        rows as u32,
                        n as u32,
                        keys.stride,
                        k as u32,
                        key_bits,
                        flip,
                        plan.cfg,
                        plan.cand_items,
                    )
                }
            };
        }
        match index {
            DType::I64 => go!(i64),
            _ => go!(u32),
        }
    });
}

/// One digit pass: what it reads and writes.
struct Pass<'h> {
    keys_in: &'h Handle,
    keys_in_len: usize,
    layout: &'h Handle,
    layout_len: usize,
    strided: u32,
    in_stride: u32,
    values_in: &'h Handle,
    keys_out: Option<&'h Handle>,
    values_out: &'h Handle,
    values: RadixValues,
    /// The last pass of u32 indices written as i64.
    widen: bool,
    out_cols: u32,
    shift: u32,
    bits: u32,
}

impl Pass<'_> {
    /// The keys and values a scatter pass reads and writes, as launch arguments (`data`: keys
    /// of the input, `out_len`: of the outputs).
    fn io_args<R: Runtime, T: Numeric, VI: Numeric, VO: Numeric>(
        &self,
        data: usize,
        out_len: usize,
        dummy: &Handle,
    ) -> (
        ScatterInputsLaunch<T, VI, R>,
        ScatterOutputsLaunch<T, VO, R>,
    ) {
        let load = self.values == RadixValues::Load;
        let has_values = self.values != RadixValues::None;
        (
            ScatterInputsLaunch::new(
                arg(self.keys_in, self.keys_in_len),
                arg(self.values_in, if load { data } else { 1 }),
            ),
            ScatterOutputsLaunch::new(
                match self.keys_out {
                    Some(k) => arg(k, out_len.max(data)),
                    None => arg(dummy, 1),
                },
                arg(
                    self.values_out,
                    if has_values { out_len.max(data) } else { 1 },
                ),
            ),
        )
    }

    /// The rows' layout and the device-resident length (a dummy without one).
    fn rows<R: Runtime>(&self, b: &SortBuffers<'_>, dummy: &Handle) -> RadixRowsLaunch<R> {
        RadixRowsLaunch::new(
            arg(self.layout, self.layout_len),
            arg(b.count.unwrap_or(dummy), 1),
        )
    }

    /// The pass's digit, its bits flipped by `flip`.
    fn digit<R: Runtime>(&self, flip: u32) -> RadixDigitLaunch<R> {
        RadixDigitLaunch::new(self.shift, self.bits, flip)
    }
}

fn device_wide<R: Runtime>(
    client: &ComputeClient<R>,
    plan: &SortPlan,
    key: DType,
    vk: ValueKind,
    b: &SortBuffers<'_>,
    ws: &mut Workspace<R>,
) -> Result<()> {
    let t = plan.temp;
    let (_lease, temp) = ws.lease_with_temp(client, plan.state_bytes, t.total, 0)?;
    let temp = temp.expect("a device-wide sort has temp space");
    let dummy = ws.dummy(client);
    let data = plan.rows * plan.n;
    let counts = sub(&temp, t.counts, 4 * t.counts_len);
    let offsets = sub(&temp, t.offsets, 4 * t.counts_len);
    let packed = plan.packed;
    // A packed argsort writes no sorted keys: its passes ping-pong its u64 words through the
    // key buffers.
    debug_assert!(!packed || b.keys_out.is_none());
    let (ks, vs) = pass_bytes(packed, key, vk);
    // The ping-pong buffers: regions of the temp area, or buffers of their own where the
    // workspace would pass the largest buffer (`TempLayout::apart`).
    let ping_pong = |at: usize, bytes: usize| -> Result<Handle> {
        if t.apart {
            crate::alloc::empty(client, bytes)
        } else {
            Ok(sub(&temp, at, bytes))
        }
    };
    // Outputs of full rows double as ping-pong buffers (top-k's shorter rows cannot), as the
    // plan's temp area assumed. The ping-pong buffers the passes do not write stay the dummy.
    let outputs = SortOutputs {
        keys: b.keys_out.is_some(),
        full_rows: b.out_cols as usize == plan.n,
    };
    let keys_chain = b.keys_out.filter(|_| outputs.keys_chain());
    let same_values = outputs.values_chain(vk);
    let used = |i: usize, chained: bool| ping_pong_used(plan.passes, i, chained);
    let key_tmp: Vec<Handle> = (0..2)
        .map(|i| {
            if used(i, keys_chain.is_some()) {
                ping_pong(t.keys[i], ks * data)
            } else {
                Ok(dummy.clone())
            }
        })
        .collect::<Result<_>>()?;
    let val_tmp: Vec<Handle> = (0..2)
        .map(|i| {
            if vs > 0 && used(i, same_values) {
                ping_pong(t.values[i], vs * data)
            } else {
                Ok(dummy.clone())
            }
        })
        .collect::<Result<_>>()?;
    let contiguous = ws.dummy(client);
    let counts_t = DeviceTensor::<R>::from_parts(
        counts.clone(),
        plan.counts_shape.to_vec(),
        crate::tensor::contiguous_strides(&plan.counts_shape),
        0,
        DType::U32,
    );
    let offsets_t = DeviceTensor::<R>::from_parts(
        offsets.clone(),
        plan.counts_shape.to_vec(),
        counts_t.strides.clone(),
        0,
        DType::U32,
    );
    let flip = if b.descending { u32::MAX } else { 0 };
    let p_last = plan.passes - 1;
    let key_dst = |p: u32| -> Option<&Handle> {
        if p == p_last {
            b.keys_out
        } else if let Some(out) = keys_chain {
            Some(if (p_last - p).is_multiple_of(2) {
                out
            } else {
                &key_tmp[0]
            })
        } else {
            Some(&key_tmp[(p % 2) as usize])
        }
    };
    let val_dst = |p: u32| -> &Handle {
        let out = b.values_out.unwrap_or(&dummy);
        if p == p_last {
            out
        } else if same_values {
            if (p_last - p).is_multiple_of(2) {
                out
            } else {
                &val_tmp[0]
            }
        } else {
            &val_tmp[(p % 2) as usize]
        }
    };
    for p in 0..plan.passes {
        let (shift, bits) = if plan.end_bit == plan.begin_bit {
            (0, 0)
        } else {
            let s = plan.begin_bit + p * DIGIT_BITS;
            (s, DIGIT_BITS.min(plan.end_bit - s))
        };
        let first = p == 0;
        // The packed argsort: pass 0 writes its u64 words as its values, to where the keys of
        // pass 0 would go; the passes after it read and write them as keys (the last writes
        // only the indices), sorting them ascending by their upper half, the direction
        // already in them.
        let words = packed && !first;
        let (key, flip, shift) = if words {
            (DType::U64, 0, shift + 32)
        } else {
            (key, flip, shift)
        };
        let pass = Pass {
            keys_in: if first {
                &b.keys.handle
            } else {
                key_dst(p - 1).expect("intermediate keys")
            },
            keys_in_len: if first { b.keys.len } else { data },
            layout: if first { &b.keys.layout } else { &contiguous },
            layout_len: if first { b.keys.layout_len } else { 1 },
            strided: (first && !b.keys.rows_contiguous) as u32,
            in_stride: if first { b.keys.stride } else { 1 },
            values_in: if first {
                b.values.unwrap_or(&dummy)
            } else {
                val_dst(p - 1)
            },
            keys_out: if packed && first { None } else { key_dst(p) },
            values_out: if packed && first {
                key_dst(p).expect("intermediate keys")
            } else {
                val_dst(p)
            },
            values: match vk {
                _ if packed && first => RadixValues::PackIota,
                _ if packed && p == p_last => RadixValues::LowBits,
                _ if packed => RadixValues::None,
                ValueKind::None => RadixValues::None,
                ValueKind::Indices(_) if first => RadixValues::Iota,
                _ => RadixValues::Load,
            },
            widen: p == p_last && matches!(vk, ValueKind::Indices(DType::I64)),
            out_cols: if p == p_last {
                b.out_cols
            } else {
                plan.n as u32
            },
            shift,
            bits,
        };
        launch_histogram(client, plan, key, b, &pass, &counts, flip, &dummy);
        scan_into(
            client,
            &counts_t,
            &offsets_t,
            None,
            1,
            ScanOp::Sum,
            ScanOptions::default().exclusive(),
            ws,
        )?;
        launch_scatter(client, plan, key, vk, b, &pass, &offsets, flip, &dummy);
    }
    Ok(())
}

/// Whether a pass's full tiles can be read by the kernels built for them ([`PassTiles::Full`]):
/// keys read with stride 1, the length on the host, a digit to sort by. What the histogram
/// needs; the scatter needs more ([`full_tiles`]).
fn full_reads(b: &SortBuffers<'_>, pass: &Pass<'_>) -> bool {
    b.count.is_none() && pass.in_stride == 1 && pass.bits > 0
}

/// Whether a scatter pass's full tiles go through the kernel built for them: [`full_reads`],
/// ballot ranking (the bit-split ranking has one form), every output kept, and at least one
/// full tile per row.
fn full_tiles(plan: &SortPlan, b: &SortBuffers<'_>, pass: &Pass<'_>) -> bool {
    full_reads(b, pass)
        && plan.cfg.plane_ops
        && pass.out_cols as usize == plan.n
        && plan.n >= plan.cfg.tile_len() as usize
}

/// The full-tile form of a pass's kernels, the digit a constant where the plan says.
fn full_form(plan: &SortPlan, pass: &Pass<'_>, flip: u32) -> PassTiles {
    PassTiles::Full {
        digit: plan
            .const_digits
            .then_some((pass.shift, pass.bits, flip != 0)),
    }
}

#[allow(clippy::too_many_arguments)]
fn launch_histogram<R: Runtime>(
    client: &ComputeClient<R>,
    plan: &SortPlan,
    key: DType,
    b: &SortBuffers<'_>,
    pass: &Pass<'_>,
    counts: &Handle,
    flip: u32,
    dummy: &Handle,
) {
    let cfg: RadixConfig = plan.cfg;
    let group = HISTOGRAM_GROUP;
    let full_groups = (plan.n / cfg.tile_len() as usize) as u32 / group;
    // Groups of 8 full tiles through the full kernel, reading vectors of 16 bytes where every
    // row starts on one (the temp buffers are 256-byte aligned; a layout may start rows
    // anywhere); the rest of each row (fewer than 8 full tiles, the partial tile) through the
    // checked kernel, one cube per 8 tiles from its first tile on.
    let vec = 16 / key.size();
    let aligned = pass.strided == 0 && (plan.rows == 1 || plan.n.is_multiple_of(vec));
    let vec = if aligned && cfg.items.is_multiple_of(vec as u32) {
        vec
    } else {
        1
    };
    let rows = plan.rows as u32;
    // (form, vector size, groups per row, first tile of a row)
    let mut launches = Vec::with_capacity(2);
    let mut first = 0;
    // The histogram's full form does not depend on the ranking or on clipped outputs.
    if full_reads(b, pass) && full_groups > 0 {
        launches.push((full_form(plan, pass, flip), vec, full_groups, 0));
        first = full_groups * group;
    }
    if first < plan.tiles_per_row {
        let groups = (plan.tiles_per_row - first).div_ceil(group);
        launches.push((PassTiles::Checked, 1, groups, first));
    }
    for (tiles, vec, groups_per_row, first_tile) in launches {
        let groups = rows * groups_per_row;
        with_key!(key, |K| unsafe {
            radix_histogram::launch_unchecked::<K, R>(
                client,
                SortPlan::cube_count(groups),
                CubeDim::new_1d(cfg.threads),
                vec,
                arg(pass.keys_in, pass.keys_in_len / vec),
                arg(counts, plan.temp.counts_len),
                pass.rows(b, dummy),
                RadixGridLaunch::new(
                    plan.n as u32,
                    plan.tiles_per_row,
                    groups,
                    groups_per_row,
                    first_tile,
                    pass.in_stride,
                    pass.strided,
                ),
                pass.digit(flip),
                cfg,
                b.count.is_some(),
                tiles,
            )
        });
    }
}

#[allow(clippy::too_many_arguments)]
fn launch_scatter<R: Runtime>(
    client: &ComputeClient<R>,
    plan: &SortPlan,
    key: DType,
    vk: ValueKind,
    b: &SortBuffers<'_>,
    pass: &Pass<'_>,
    offsets: &Handle,
    flip: u32,
    dummy: &Handle,
) {
    let data = plan.rows * plan.n;
    let out_len = plan.rows * b.out_cols as usize;
    let tile_len = plan.cfg.tile_len() as usize;
    // A row's full tiles through the kernel built for them (no bound checks; the digit a
    // constant where the plan says); the partial last tile of each row, if any, through the
    // checked kernel.
    let full_per_row = (plan.n / tile_len) as u32;
    let fast = full_tiles(plan, b, pass);
    let rows = plan.rows as u32;
    // (tiles, cubes per row, first tile of a row)
    let mut launches = Vec::with_capacity(2);
    if fast {
        launches.push((full_form(plan, pass, flip), full_per_row, 0));
        if full_per_row < plan.tiles_per_row {
            launches.push((PassTiles::Checked, 1, full_per_row));
        }
    } else {
        launches.push((PassTiles::Checked, plan.tiles_per_row, 0));
    }
    for (tiles, cubes_per_row, first_tile) in launches {
        let cubes = rows * cubes_per_row;
        with_key!(key, |K| {
            macro_rules! go {
                ($VI:ty, $VO:ty) => {{
                    let io = pass.io_args::<R, K, $VI, $VO>(data, out_len, dummy);
                    unsafe {
                        radix_scatter::launch_unchecked::<K, $VI, $VO, R>(
                            client,
                            SortPlan::cube_count(cubes),
                            CubeDim::new_1d(plan.cfg.threads),
                            io.0,
                            io.1,
                            arg(offsets, plan.temp.counts_len),
                            pass.rows(b, dummy),
                            RadixGridLaunch::new(
                                plan.n as u32,
                                plan.tiles_per_row,
                                cubes,
                                cubes_per_row,
                                first_tile,
                                pass.in_stride,
                                pass.strided,
                            ),
                            pass.out_cols,
                            pass.digit(flip),
                            plan.cfg,
                            b.count.is_some(),
                            pass.values,
                            pass.keys_out.is_some(),
                            tiles,
                        )
                    }
                }};
            }
            with_pass_values!(vk, pass, go);
        });
    }
}
