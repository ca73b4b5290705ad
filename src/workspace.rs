use crate::{Error, Result};
use cubecl::prelude::*;
use cubecl::server::Handle;
use cubeprim_kernels::device::fill::fill_u32;
use cubeprim_kernels::device::tile_state::MAX_EPOCH;

/// Caller-owned scratch for the device-wide algorithms (the look-back tile state).
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
            CubeCount::Static(cubes.min(65535), cubes.div_ceil(65535), 1),
            CubeDim::new_1d(256),
            unsafe { ArrayArg::from_raw_parts(handle, words) },
            0u32,
        );
        self.epoch = 0;
        self.counter = 0;
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
        self.epoch += 1;
        let lease = StateLease {
            handle: self.handle.clone().expect("allocated"),
            words: self.bytes / 4,
            epoch: self.epoch,
            counter_base: self.counter,
        };
        self.counter += cubes;
        Ok(lease)
    }
}
