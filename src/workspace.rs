use crate::tuning::Tuning;
use crate::{Error, Result};
use cubecl::prelude::*;
use cubecl::server::Handle;
use cubeprim_kernels::device::fill::fill_u32;
use cubeprim_kernels::device::tile_state::MAX_EPOCH;

/// Caller-owned scratch for the device-wide algorithms: the look-back tile state, and the
/// temporary buffers of multi-pass algorithms (histograms, ping-pong keys, flags, …).
///
/// Ask an op how many bytes it needs (e.g. [`scan_workspace_bytes`](crate::scan_workspace_bytes)),
/// create a workspace of that size once with [`Workspace::with_capacity`], and pass it to every
/// call: nothing is allocated or cleared on the hot path (stale state from earlier calls is made
/// invalid by an epoch number, not by a memset). [`Workspace::new`] instead grows on demand.
pub struct Workspace<R: Runtime> {
    handle: Option<Handle>,
    bytes: usize,
    growable: bool,
    /// The device (its client's properties, shared by every client of one server) and the
    /// cubecl stream of the first use.
    owner: Option<(usize, u64)>,
    /// Asked of [`Workspace::with_capacity`] past the device's largest buffer.
    oversized: Option<usize>,
    epoch: u32,
    counter: u32,
    /// Bytes from the start of the buffer known to hold only look-back state (zero or tagged with
    /// an older epoch). A temp region may leave garbage above it; a later, larger state region
    /// is cleared first.
    clean_bytes: usize,
    /// The last row layout uploaded, reused while shapes repeat.
    layout: Option<(Vec<u32>, Handle)>,
    /// A small buffer bound where a kernel argument is unused.
    dummy: Option<Handle>,
    /// The overrides every call with this workspace plans with.
    tuning: Tuning,
    _r: std::marker::PhantomData<R>,
}

impl<R: Runtime> Default for Workspace<R> {
    fn default() -> Self {
        Self::new()
    }
}

/// What a launch gets from the workspace: the state buffer and the values that make it valid.
pub(crate) struct StateLease {
    pub handle: Handle,
    pub words: usize,
    pub epoch: u32,
    pub counter_base: u32,
}

impl<R: Runtime> Workspace<R> {
    /// An empty workspace that allocates (once, then reuses) what calls need.
    pub fn new() -> Self {
        Self {
            handle: None,
            bytes: 0,
            growable: true,
            owner: None,
            oversized: None,
            epoch: 0,
            counter: 0,
            clean_bytes: 0,
            layout: None,
            dummy: None,
            tuning: Tuning::default(),
            _r: Default::default(),
        }
    }

    /// A workspace of exactly `bytes`; calls that need more fail with
    /// [`Error::ScratchTooSmall`] instead of allocating. A size past the device's largest buffer
    /// ([`max_buffer_bytes`](crate::max_buffer_bytes)) allocates nothing, and every call that
    /// needs scratch then fails with [`Error::BufferTooLarge`] ([`Workspace::try_with_capacity`]
    /// says so at once).
    pub fn with_capacity(client: &ComputeClient<R>, bytes: usize) -> Self {
        Self::try_with_capacity(client, bytes).unwrap_or_else(|_| {
            let mut ws = Self::new();
            ws.growable = false;
            ws.oversized = Some(bytes);
            ws
        })
    }

    /// [`Workspace::with_capacity`], or [`Error::BufferTooLarge`] when `bytes` is past the
    /// device's largest buffer.
    pub fn try_with_capacity(client: &ComputeClient<R>, bytes: usize) -> Result<Self> {
        let mut ws = Self::new();
        ws.growable = false;
        if bytes > 0 {
            ws.allocate(client, bytes)?;
        }
        Ok(ws)
    }

    /// This workspace with `tuning`: every call that uses it plans with these overrides of the
    /// [`Policy`](crate::tuning::Policy) (see [`Tuning`]).
    pub fn with_tuning(mut self, tuning: Tuning) -> Self {
        self.tuning = tuning;
        self
    }

    /// Replaces the overrides calls with this workspace plan with.
    pub fn set_tuning(&mut self, tuning: Tuning) {
        self.tuning = tuning;
    }

    /// The overrides calls with this workspace plan with.
    pub fn tuning(&self) -> &Tuning {
        &self.tuning
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    fn allocate(&mut self, client: &ComputeClient<R>, bytes: usize) -> Result<()> {
        let bytes = bytes.div_ceil(4) * 4;
        self.handle = Some(crate::alloc::empty(client, bytes)?);
        self.bytes = bytes;
        // A new buffer holds garbage: the first lease clears the state it uses.
        self.clean_bytes = 0;
        self.epoch = 0;
        self.counter = 0;
        Ok(())
    }

    /// Zeroes the state prefix `[0, to)` and restarts epochs and tile tickets. Nothing past `to`
    /// is touched: a lease nested in another (the scans of a device-wide sort) may restart
    /// while the enclosing lease's temp region, which starts past its state, is live.
    fn restart(&mut self, client: &ComputeClient<R>, to: usize) {
        self.clear(client, 0, to);
        self.epoch = 0;
        self.counter = 0;
        self.clean_bytes = to;
    }

    /// Zeroes the words of `[from, to)` (bytes, multiples of 4).
    fn clear(&self, client: &ComputeClient<R>, from: usize, to: usize) {
        let words = (to - from) / 4;
        if words == 0 {
            return;
        }
        let handle = self
            .handle
            .clone()
            .expect("allocated")
            .offset_start(from as u64)
            .offset_end((self.bytes - to) as u64);
        let cubes = words.div_ceil(256) as u32;
        fill_u32::launch::<R>(
            client,
            crate::device::cube_count_2d(cubes),
            CubeDim::new_1d(256),
            unsafe { ArrayArg::from_raw_parts(handle, words) },
            0u32,
        );
    }

    /// Moves the epoch so that the look-back state wraps around (and restarts) at the lease
    /// after the next `leases`: a test reaches the wrap in a few calls instead of thousands.
    #[doc(hidden)]
    pub fn wrap_epoch_after_for_test(&mut self, leases: u32) {
        self.epoch = MAX_EPOCH - leases.min(MAX_EPOCH);
    }

    /// Binds the workspace to the device and stream of its first use, and refuses any other.
    ///
    /// cubecl orders a buffer's uses across streams only against the stream that allocated it,
    /// so scratch written on two streams (two threads, on CUDA) could be overwritten while a
    /// kernel of the other still reads it; and a handle of another device's client is not
    /// checked by cubecl at all. Neither can be made safe here, so both are typed errors.
    fn check_owner(&mut self, client: &ComputeClient<R>) -> Result<()> {
        let device = client.properties() as *const _ as usize;
        let stream = cubecl::stream_id::StreamId::current().value;
        match self.owner {
            None => {
                self.owner = Some((device, stream));
                Ok(())
            }
            Some((d, _)) if d != device => Err(Error::WorkspaceMismatch(
                "this workspace belongs to another device's client: use one workspace per device"
                    .into(),
            )),
            Some((_, s)) if s != stream => Err(Error::WorkspaceMismatch(format!(
                "this workspace was first used on cubecl stream {s} and now on stream {stream} \
                 (cubecl gives each thread its own stream): use one workspace per thread"
            ))),
            Some(_) => Ok(()),
        }
    }

    /// The row layout `words` on the device, uploaded only when it changes.
    pub(crate) fn layout(&mut self, client: &ComputeClient<R>, words: &[u32]) -> Result<Handle> {
        self.check_owner(client)?;
        Ok(match &self.layout {
            Some((w, h)) if w == words => h.clone(),
            _ => {
                let h = client.create_from_slice(bytemuck::cast_slice(words));
                self.layout = Some((words.to_vec(), h.clone()));
                h
            }
        })
    }

    /// A small buffer for unused kernel arguments.
    pub(crate) fn dummy(&mut self, client: &ComputeClient<R>) -> Handle {
        self.dummy.get_or_insert_with(|| client.empty(16)).clone()
    }

    /// Leases `bytes` of look-back state for one launch of `cubes` cubes.
    pub(crate) fn lease(
        &mut self,
        client: &ComputeClient<R>,
        bytes: usize,
        cubes: u32,
    ) -> Result<StateLease> {
        Ok(self.lease_with_temp(client, bytes, 0, cubes)?.0)
    }

    /// Leases `state_bytes` of look-back state (for `cubes` cubes) and, after it, a temporary
    /// region of `temp_bytes` (returned as a handle that starts at the region, `None` when
    /// `temp_bytes == 0`; its contents are undefined). The total is [`workspace_bytes`].
    pub(crate) fn lease_with_temp(
        &mut self,
        client: &ComputeClient<R>,
        state_bytes: usize,
        temp_bytes: usize,
        cubes: u32,
    ) -> Result<(StateLease, Option<Handle>)> {
        self.check_owner(client)?;
        let state = if temp_bytes == 0 {
            state_bytes.div_ceil(4) * 4
        } else {
            align_state(state_bytes)
        };
        let bytes = workspace_bytes(state_bytes, temp_bytes);
        if let Some(asked) = self.oversized {
            return Err(Error::BufferTooLarge {
                bytes: asked,
                max: crate::max_buffer_bytes(client),
            });
        }
        if bytes > self.bytes {
            if !self.growable {
                return Err(Error::ScratchTooSmall {
                    needed: bytes,
                    available: self.bytes,
                });
            }
            // Doubling amortises growth, but never past the largest buffer: a call that fits
            // one must not fail because an earlier, smaller one doubled past it.
            crate::alloc::check_bytes(client, bytes)?;
            let max = crate::max_buffer_bytes(client) / 4 * 4;
            self.allocate(client, bytes.max(self.bytes.saturating_mul(2).min(max)))?;
        }
        // Word 0 (the ticket counter) is state even for a lease of no state bytes.
        let used = state.max(4);
        if self.epoch >= MAX_EPOCH || self.counter.checked_add(cubes).is_none() {
            // Only `[0, clean_bytes)` can hold tags of older epochs; past it is garbage that is
            // cleared before it becomes state.
            self.restart(client, self.clean_bytes.max(used));
        } else if used > self.clean_bytes {
            // Bindings start at multiples of 256 bytes; word 0 is the ticket counter, which only
            // a restart may clear.
            let from = self.clean_bytes / 256 * 256;
            if from == 0 {
                self.restart(client, used);
            } else {
                self.clear(client, from, used);
                self.clean_bytes = used;
            }
        }
        self.epoch += 1;
        let lease = StateLease {
            handle: self.handle.clone().expect("allocated"),
            words: state.max(4) / 4,
            epoch: self.epoch,
            counter_base: self.counter,
        };
        self.counter += cubes;
        let temp = (temp_bytes > 0).then(|| {
            self.clean_bytes = self.clean_bytes.min(state);
            let end = state + temp_bytes.div_ceil(4) * 4;
            self.handle
                .clone()
                .expect("allocated")
                .offset_start(state as u64)
                .offset_end((self.bytes - end) as u64)
        });
        Ok((lease, temp))
    }
}

/// The state region rounded up so that the temp region after it is aligned for any binding
/// (256 bytes: wgpu's minimum storage-buffer offset alignment).
pub(crate) fn align_state(state_bytes: usize) -> usize {
    state_bytes.div_ceil(256) * 256
}

/// Workspace bytes for an op that needs `state_bytes` of look-back state and `temp_bytes` of
/// temporary buffers (the number every `*_workspace_bytes` query returns).
pub fn workspace_bytes(state_bytes: usize, temp_bytes: usize) -> usize {
    // At least word 0, the ticket counter, which every lease holds.
    if temp_bytes == 0 {
        (state_bytes.div_ceil(4) * 4).max(4)
    } else {
        align_state(state_bytes) + temp_bytes.div_ceil(4) * 4
    }
}
