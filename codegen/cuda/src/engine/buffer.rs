//! Device buffers: blocks of the caching pool (or mapped host memory) that
//! know which streams used them, so that a dropped buffer returns to the
//! pool only once the work queued on it is done.

use std::any::Any;
use std::fmt;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaEvent, CudaSlice, CudaStream};
use lazyfuse_core::{DeviceBuffer, Error, HostBuffer, Result};

use super::super::driver::{self, device_error};
use super::super::pool::{CachingPool, DeviceAllocator};
use super::{lock, streams};

/// Device memory from cudarc's stream-ordered allocator (on the main
/// stream), and the side streams whose events say when a block they used
/// is free again.
pub struct CudaAllocator {
    pub(super) stream: Arc<CudaStream>,
    pub(super) side: SideStreams,
}

/// The runtime's side streams, created on first use (`streams`).
pub(super) type SideStreams = Arc<Mutex<Vec<Arc<CudaStream>>>>;

impl DeviceAllocator for CudaAllocator {
    type Block = CudaSlice<u8>;

    fn allocate(&self, bytes: usize) -> Result<CudaSlice<u8>> {
        // SAFETY: the memory is uninitialised; every buffer is fully written
        // (by an upload or by the kernel that produces it) before it is read.
        unsafe { self.stream.alloc::<u8>(bytes) }.map_err(|e| device_error("cuMemAllocAsync", e))
    }

    fn is_out_of_memory(&self, error: &Error) -> bool {
        driver::is_out_of_memory(error)
    }

    type Fence = CudaEvent;

    fn is_done(&self, fence: &CudaEvent) -> bool {
        fence.is_complete()
    }
}

/// A buffer in GPU memory, returned to the pool when dropped; or host
/// memory mapped into the device, read in place.
pub struct CudaBuffer {
    pub(super) slice: Option<CudaSlice<u8>>,
    pub(super) class: usize,
    pub(super) bytes: usize,
    pub(super) pool: Arc<CachingPool<CudaAllocator>>,
    /// The mapped host memory the slice points into (`None`: device memory
    /// of the pool): held while the buffer lives, never freed by it.
    pub(super) mapped: Option<Arc<HostBuffer>>,
    /// The side streams (bit `k` for side stream `k`) that queued work on
    /// the buffer: it returns to the pool once that work is done.
    pub(super) used_on: AtomicU16,
}

impl CudaBuffer {
    /// Notes that work on stream `id` uses the buffer.
    pub(super) fn use_on(&self, id: u64) {
        let slot = streams::slot(id);
        if slot != 0 {
            self.used_on.fetch_or(1 << slot, Ordering::Relaxed);
        }
    }

    /// Waits for the main stream and the side streams that used the buffer.
    pub(super) fn wait_for_readers(&self) {
        let _ = self.pool.allocator().stream.synchronize();
        let used = self.used_on.load(Ordering::Relaxed);
        let side = lock(&self.pool.allocator().side);
        for (k, stream) in side.iter().enumerate() {
            if used & (1 << (k + 1)) != 0 {
                let _ = stream.synchronize();
            }
        }
    }

    /// Events recorded now on the side streams that used the buffer: after
    /// them, it is free. A stream that cannot record one is waited for.
    pub(super) fn fences(&self) -> Vec<CudaEvent> {
        let used = self.used_on.load(Ordering::Relaxed);
        if used == 0 {
            return Vec::new();
        }
        let side = lock(&self.pool.allocator().side);
        (1..=streams::SIDE_STREAMS)
            .filter(|slot| used & (1 << slot) != 0)
            .filter_map(|slot| side.get(slot - 1))
            .filter_map(|stream| match stream.record_event(None) {
                Ok(event) => Some(event),
                Err(_) => {
                    let _ = stream.synchronize();
                    None
                }
            })
            .collect()
    }
}

impl CudaBuffer {
    pub(super) fn slice(&self) -> Result<&CudaSlice<u8>> {
        self.slice
            .as_ref()
            .ok_or_else(|| Error::internal("cuda backend", "a released device buffer"))
    }
}

impl Drop for CudaBuffer {
    fn drop(&mut self) {
        match (self.slice.take(), &self.mapped) {
            // The host memory is not the device's to free; the host may
            // write it once no queued kernel reads it.
            (Some(slice), Some(_)) => {
                slice.leak();
                self.wait_for_readers();
            }
            (Some(slice), None) => {
                let fences = self.fences();
                self.pool.release_after(slice, self.class, fences);
            }
            (None, _) => {}
        }
    }
}

impl fmt::Debug for CudaBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CudaBuffer({} bytes)", self.bytes)
    }
}

impl DeviceBuffer for CudaBuffer {
    fn bytes(&self) -> usize {
        self.bytes
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

pub(super) fn cuda_buffer(device: &Arc<dyn DeviceBuffer>) -> Result<&CudaBuffer> {
    device
        .as_any()
        .downcast_ref::<CudaBuffer>()
        .ok_or_else(|| Error::internal("cuda backend", "a device buffer of another backend"))
}

pub(super) fn on_device(buffer: CudaBuffer) -> Arc<dyn DeviceBuffer> {
    Arc::new(buffer)
}
