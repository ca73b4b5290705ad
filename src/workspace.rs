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
            epoch: 0,
            counter: 0,
            clean_bytes: 0,
            layout: None,
            dummy: None,
            _r: Default::default(),
        }
    }

    /// A workspace of exactly `bytes`; calls that need more fail with
    /// [`Error::ScratchTooSmall`] instead of allocating.
    pub fn with_capacity(client: &ComputeClient<R>, bytes: usize) -> Self {
        let mut ws = Self::new();
        ws.growable = false;
        if bytes > 0 {
            ws.allocate(client, bytes);
        }
        ws
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    fn allocate(&mut self, client: &ComputeClient<R>, bytes: usize) {
        let bytes = bytes.div_ceil(4) * 4;
        self.handle = Some(client.empty(bytes));
        self.bytes = bytes;
        self.reset(client);
    }

    fn reset(&mut self, client: &ComputeClient<R>) {
        let words = self.bytes / 4;
        let handle = self.handle.clone().expect("allocated");
        let cubes = words.div_ceil(256) as u32;
        fill_u32::launch::<R>(
            client,
            crate::device::cube_count_2d(cubes),
            CubeDim::new_1d(256),
            unsafe { ArrayArg::from_raw_parts(handle, words) },
            0u32,
        );
        self.epoch = 0;
        self.counter = 0;
        self.clean_bytes = self.bytes;
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

    /// The row layout `words` on the device, uploaded only when it changes.
    pub(crate) fn layout(&mut self, client: &ComputeClient<R>, words: &[u32]) -> Handle {
        match &self.layout {
            Some((w, h)) if w == words => h.clone(),
            _ => {
                let h = client.create_from_slice(bytemuck::cast_slice(words));
                self.layout = Some((words.to_vec(), h.clone()));
                h
            }
        }
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
        let state = if temp_bytes == 0 {
            state_bytes.div_ceil(4) * 4
        } else {
            align_state(state_bytes)
        };
        let bytes = workspace_bytes(state_bytes, temp_bytes).max(4);
        if bytes > self.bytes {
            if !self.growable {
                return Err(Error::ScratchTooSmall {
                    needed: bytes,
                    available: self.bytes,
                });
            }
            self.allocate(client, bytes.max(self.bytes * 2));
        }
        if self.epoch >= MAX_EPOCH || self.counter.checked_add(cubes).is_none() {
            self.reset(client);
        }
        if state > self.clean_bytes {
            // Bindings start at multiples of 256 bytes; word 0 is the ticket counter, which only
            // a full reset may clear.
            let from = self.clean_bytes / 256 * 256;
            if from == 0 {
                self.reset(client);
            } else {
                self.clear(client, from, state);
                self.clean_bytes = state;
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
    if temp_bytes == 0 {
        state_bytes.div_ceil(4) * 4
    } else {
        align_state(state_bytes) + temp_bytes.div_ceil(4) * 4
    }
}
