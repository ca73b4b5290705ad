/// The compile-time shape of one tile. Each distinct value compiles its own kernel.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub struct TileConfig {
    /// Units per cube (a multiple of the plane width).
    pub threads: u32,
    /// Vectors each unit loads; a tile holds `threads * vectors_per_thread` vectors.
    pub vectors_per_thread: u32,
    /// Scan from the end of the row towards its start.
    pub reverse: bool,
    /// Write the prefix before each element instead of the one including it.
    pub exclusive: bool,
    /// Track the index of the selected element (cummax / cummin with indices).
    pub indexed: bool,
    /// Use plane (subgroup) operations for the cube-wide scan.
    pub plane_ops: bool,
    /// Scan the tile in shared memory (a blocked scan of the staged tile, see
    /// [`load_tile_staged`](super::load_tile_staged())) instead of registers: the registers and
    /// the raking buffer it saves let more cubes share a streaming multiprocessor, so more
    /// tiles' loads are in flight while others wait in the look-back. Not with `indexed`.
    pub stage: bool,
    /// With `stage`: copy the tile from global to shared memory with asynchronous copies
    /// (CUDA `cp.async`, sm_80+: cubecl's `features.copy_async`), which hold no registers, so
    /// a unit has its whole share of the tile in flight at once. Only where the stage holds
    /// the input's own type (accumulator = input type), vectors of 4, 8 or 16 bytes, and not
    /// `reverse` (a copy cannot reverse a vector's lanes).
    pub async_copy: bool,
}

impl TileConfig {
    /// Vectors in one tile.
    pub fn tile_vectors(&self) -> u32 {
        self.threads * self.vectors_per_thread
    }
    /// Bytes of shared memory of the tile scan ([`TileShared`](super::TileShared)) for an
    /// accumulator of `acc_bytes`.
    pub fn shared_bytes(&self, acc_bytes: usize) -> usize {
        let idx = |len: usize| if self.indexed { 4 * len } else { 4 };
        let scan = 2 * self.threads as usize;
        self.rake_len() * acc_bytes + idx(self.rake_len()) + scan * acc_bytes + idx(scan)
    }
    /// Vectors of the staging buffer (1 unless `stage`): the tile, with one pad vector after
    /// each unit's chunk of `vectors_per_thread`, which then parks the unit's exclusive prefix
    /// (see [`StagedTile`](super::StagedTile)).
    pub fn stage_vectors(&self) -> usize {
        if self.stage {
            (self.threads * (self.vectors_per_thread + 1)) as usize
        } else {
            1
        }
    }
    /// Bytes of shared memory of the [`StagedTile`](super::StagedTile) for vectors of `lanes`
    /// accumulators of `acc_bytes`, with the barrier of the asynchronous copies.
    pub fn stage_bytes(&self, lanes: usize, acc_bytes: usize) -> usize {
        let barrier = if self.stage && self.async_copy { 16 } else { 0 };
        self.stage_vectors() * lanes * acc_bytes + barrier
    }
    /// Entries of the raking buffer (one per vector, padded every 32 to dodge bank conflicts);
    /// none when staged (the staged tile is scanned in its staging buffer).
    pub fn rake_len(&self) -> usize {
        if self.stage {
            return 1;
        }
        let v = self.tile_vectors() as usize;
        v + v / 32 + 1
    }
}
