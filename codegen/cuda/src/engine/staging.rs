//! Staged copies between pageable host memory and the device: a ring of a
//! few pinned chunks. An upload copies each chunk of the source into the
//! next chunk of the ring and queues its DMA, so the host fills one chunk
//! while the device copies the last; a download queues the DMAs of the
//! first chunks and copies each out as it lands. The host side of each
//! chunk is copied by several threads: one thread's memcpy is what limits
//! the driver's own staging of pageable memory. The pinned memory is small
//! and allocated once, however large the copy.
//!
//! Measured on an H100 machine (`bench/RESULTS-gpu.md`): a 400 MB upload
//! took 38 ms this way, 63 to 78 ms as one pageable `cuMemcpyHtoD`, and
//! 47 ms through CuPy.
//!
//! Why an event of our own per chunk: the engine turns off cudarc's event
//! tracking (one stream orders everything else), and with it off cudarc
//! records no event after a copy from pinned memory, so waiting on cudarc's
//! own event before refilling a chunk would not wait at all. The GPU check
//! caught exactly that: three same-size uploads shared one staging buffer
//! and the later ones overwrote it while the first was still copying.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaEvent, CudaStream, CudaView, CudaViewMut, PinnedHostSlice};
use lazyfuse_core::Result;

use crate::driver::device_error;

/// Bytes per chunk of the ring.
const CHUNK: usize = 32 << 20;
/// Chunks in the ring: enough that the host rarely waits for a DMA.
const SLOTS: usize = 3;
/// Host threads that fill one chunk: one thread's memcpy is the bottleneck
/// of a pageable upload (it is the driver's own staging copy).
const FILL_THREADS: usize = 8;

/// One pinned chunk and the event recorded after the copy that read it.
struct Slot {
    memory: PinnedHostSlice<u8>,
    copied: CudaEvent,
}

impl Slot {
    /// Waits for the last copy that used this chunk.
    fn wait(&self) -> Result<()> {
        self.copied
            .synchronize()
            .map_err(|e| device_error("cuEventSynchronize", e))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        // The pinned memory is freed next: no copy may still read it.
        let _ = self.copied.synchronize();
    }
}

/// The ring of pinned chunks; empty until the first staged upload.
#[derive(Default)]
pub(super) struct StagingRing {
    slots: Vec<Slot>,
    next: usize,
}

impl StagingRing {
    /// Queues the copy of `bytes` into `target` (of the same length) on
    /// `stream` through the ring. `Ok(false)`, with nothing queued, when no
    /// pinned memory could be had: the caller then copies directly.
    pub(super) fn upload(
        &mut self,
        ctx: &Arc<CudaContext>,
        stream: &Arc<CudaStream>,
        bytes: &[u8],
        target: &mut CudaViewMut<'_, u8>,
    ) -> Result<bool> {
        if !self.fill(ctx)? {
            return Ok(false);
        }
        for (k, chunk) in bytes.chunks(CHUNK).enumerate() {
            let slot = &mut self.slots[self.next];
            self.next = (self.next + 1) % SLOTS;
            slot.wait()?;
            let staged = &mut slot
                .memory
                .as_mut_slice()
                .map_err(|e| device_error("pinned staging", e))?[..chunk.len()];
            parallel_copy(staged, chunk);
            let start = k * CHUNK;
            let mut view = target.slice_mut(start..start + chunk.len());
            // A plain slice: cudarc adds no synchronisation, and the driver
            // sees pinned memory, so the copy runs asynchronously.
            stream
                .memcpy_htod(&*staged, &mut view)
                .map_err(|e| device_error("cuMemcpyHtoDAsync", e))?;
            slot.copied
                .record(stream)
                .map_err(|e| device_error("cuEventRecord", e))?;
        }
        Ok(true)
    }

    /// Copies `source` into `target` (of the same length) through the ring
    /// and waits for it. `Ok(false)`, with nothing copied, when no pinned
    /// memory could be had: the caller then copies directly.
    pub(super) fn download(
        &mut self,
        ctx: &Arc<CudaContext>,
        stream: &Arc<CudaStream>,
        source: &CudaView<'_, u8>,
        target: &mut [u8],
    ) -> Result<bool> {
        if !self.fill(ctx)? {
            return Ok(false);
        }
        let chunks = target.len().div_ceil(CHUNK);
        // Chunk k lands in slot k % SLOTS; SLOTS copies are in flight.
        for k in 0..chunks.min(SLOTS) {
            self.queue_download(stream, source, k)?;
        }
        for (k, out) in target.chunks_mut(CHUNK).enumerate() {
            let slot = &mut self.slots[k % SLOTS];
            slot.wait()?;
            let landed = slot
                .memory
                .as_slice()
                .map_err(|e| device_error("pinned staging", e))?;
            parallel_copy(out, &landed[..out.len()]);
            if k + SLOTS < chunks {
                self.queue_download(stream, source, k + SLOTS)?;
            }
        }
        self.next = 0;
        Ok(true)
    }

    /// Queues the DMA of chunk `k` of `source` into slot `k % SLOTS`.
    fn queue_download(
        &mut self,
        stream: &Arc<CudaStream>,
        source: &CudaView<'_, u8>,
        k: usize,
    ) -> Result<()> {
        let slot = &mut self.slots[k % SLOTS];
        slot.wait()?;
        let start = k * CHUNK;
        let end = (start + CHUNK).min(source.len());
        let landing = &mut slot
            .memory
            .as_mut_slice()
            .map_err(|e| device_error("pinned staging", e))?[..end - start];
        // A plain slice: cudarc adds no synchronisation; the slot's event
        // says when the bytes have landed.
        stream
            .memcpy_dtoh(&source.slice(start..end), landing)
            .map_err(|e| device_error("cuMemcpyDtoHAsync", e))?;
        slot.copied
            .record(stream)
            .map_err(|e| device_error("cuEventRecord", e))
    }

    /// Allocates the ring's chunks if it has none yet; false when pinned
    /// memory is refused.
    fn fill(&mut self, ctx: &Arc<CudaContext>) -> Result<bool> {
        while self.slots.len() < SLOTS {
            // SAFETY: the memory is uninitialised; a chunk's bytes are
            // written (by the host or a DMA) before anything reads them.
            // Cached, not write-combined: downloads read it on the host.
            let Ok(memory) = (unsafe { ctx.alloc_pinned_with_flags::<u8>(CHUNK, 0) }) else {
                return Ok(false);
            };
            let copied = ctx
                .new_event(None)
                .map_err(|e| device_error("cuEventCreate", e))?;
            self.slots.push(Slot { memory, copied });
        }
        Ok(true)
    }

    /// Frees the ring (after the copies that read it); the bytes freed.
    pub(super) fn release(&mut self) -> usize {
        let bytes = self.slots.len() * CHUNK;
        self.slots.clear();
        self.next = 0;
        bytes
    }
}

/// `target.copy_from_slice(source)`, split over up to [`FILL_THREADS`].
fn parallel_copy(target: &mut [u8], source: &[u8]) {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(FILL_THREADS);
    let part = source.len().div_ceil(threads).max(1 << 20);
    if threads == 1 || source.len() <= part {
        target.copy_from_slice(source);
        return;
    }
    std::thread::scope(|scope| {
        for (t, s) in target.chunks_mut(part).zip(source.chunks(part)) {
            scope.spawn(move || t.copy_from_slice(s));
        }
    });
}
