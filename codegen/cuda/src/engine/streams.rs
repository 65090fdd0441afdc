//! CUDA streams of the runtime: the main one, for demands made outside any
//! `Stream` (id 0), and up to [`SIDE_STREAMS`] more that the session's
//! streams and the pipeline's streams share (by a hash of their ids), so
//! that work on different streams overlaps on the GPU.
//!
//! Why this is safe with cudarc's per-buffer event tracking turned off:
//! - Allocations and frees are queued on the main stream. Every copy or
//!   kernel queued on a side stream first makes it wait for everything
//!   queued on the main stream so far ([`CudaRuntime::stream`]), so it
//!   never uses a buffer before its allocation, reads a value the main
//!   stream is still computing, or reuses a pool block before the main
//!   stream's last use of it (a block returns to the pool only after the
//!   work using it was queued).
//! - A buffer notes the side streams that used it (`CudaBuffer::use_on`);
//!   when it is dropped, events are recorded on them and the pool reuses
//!   the block only once they completed (`CachingPool::release_after`).
//! - A demand on a side stream waits for its work before it returns
//!   ([`CudaRuntime::leave`]), so its values are complete before the main
//!   stream or another stream reads them, and its errors reach the demand.
//! - Pinned host memory a copy on a stream reads is held until that stream
//!   synchronises.

use std::sync::Arc;

use cudarc::driver::CudaStream;
use lazyfuse_core::{HostBuffer, Result};

use super::{lock, CudaRuntime};
use crate::driver::device_error;

/// CUDA streams besides the main one: the session's streams share them.
pub(super) const SIDE_STREAMS: usize = 8;

/// Which CUDA stream serves stream `id`: 0 for the main one, else
/// `1..=SIDE_STREAMS`.
pub(super) fn slot(id: u64) -> usize {
    if id == 0 {
        return 0;
    }
    // SplitMix64's finaliser: consecutive ids spread over the streams.
    let mut z = id.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    1 + ((z ^ (z >> 31)) % SIDE_STREAMS as u64) as usize
}

impl CudaRuntime {
    /// The CUDA stream of stream `id`, ready for the next copy or kernel: a
    /// side stream first waits for the main stream's work so far.
    pub(super) fn stream(&self, id: u64) -> Result<Arc<CudaStream>> {
        let slot = slot(id);
        if slot == 0 {
            return Ok(Arc::clone(&self.stream));
        }
        let side = {
            let mut side = lock(&self.side);
            while side.len() < slot {
                let created = self
                    .ctx
                    .new_stream()
                    .map_err(|e| device_error("cuStreamCreate", e))?;
                side.push(created);
            }
            Arc::clone(&side[slot - 1])
        };
        side.join(&self.stream)
            .map_err(|e| device_error("cuStreamWaitEvent", e))?;
        Ok(side)
    }

    /// Work of a demand on stream `id` is queued: waits for it (nothing
    /// to do for the main stream, whose order serves every later use).
    pub(super) fn leave(&self, id: u64) -> Result<()> {
        if slot(id) == 0 {
            return Ok(());
        }
        self.synchronize(id)
    }

    /// Makes stream `waiter` wait for the work queued so far on `waited`.
    pub(super) fn wait_for(&self, waiter: u64, waited: &[u64]) -> Result<()> {
        let stream = self.stream(waiter)?;
        for &other in waited {
            if slot(other) != slot(waiter) {
                stream
                    .join(&*self.stream(other)?)
                    .map_err(|e| device_error("cuStreamWaitEvent", e))?;
            }
        }
        Ok(())
    }

    /// Waits until stream `id`'s CUDA stream has done everything queued on
    /// it, then drops the pinned host buffers its copies read.
    pub(super) fn synchronize(&self, id: u64) -> Result<()> {
        let slot = slot(id);
        let stream = match slot {
            0 => Arc::clone(&self.stream),
            _ => match lock(&self.side).get(slot - 1) {
                Some(stream) => Arc::clone(stream),
                None => return Ok(()),
            },
        };
        stream
            .synchronize()
            .map_err(|e| device_error("cuStreamSynchronize", e))?;
        lock(&self.in_flight).retain(|(s, _)| *s != slot);
        Ok(())
    }

    /// Waits for every stream (before the runtime's memory goes).
    pub(super) fn synchronize_all(&self) {
        let _ = self.stream.synchronize();
        for stream in lock(&self.side).iter() {
            let _ = stream.synchronize();
        }
        lock(&self.in_flight).clear();
    }

    /// Keeps `host` (pinned memory an asynchronous copy on stream `id`
    /// reads) alive until that stream next synchronises.
    pub(super) fn hold_until_synchronized(&self, id: u64, host: &Arc<HostBuffer>) {
        lock(&self.in_flight).push((slot(id), Arc::clone(host)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_main_stream_is_its_own_and_others_spread_over_the_side_streams() {
        assert_eq!(slot(0), 0);
        let mut used = [0usize; SIDE_STREAMS + 1];
        for id in 1..=64u64 {
            used[slot(id)] += 1;
        }
        for k in 1..=64u64 {
            used[slot(1 << 63 | k << 2)] += 1;
        }
        assert_eq!(used[0], 0);
        assert!(used[1..].iter().all(|&n| n >= 4), "{used:?}");
    }
}
