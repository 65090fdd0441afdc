//! The simulated device's memory: buffers, and a cache of freed ones.
//!
//! As a GPU memory pool does, buffers whose arrays are gone are kept (by
//! dtype and length, up to [`CACHE_LIMIT`] bytes) and handed out again, so
//! a steady loop of demands (or Numba's `out=` pattern: an output re-bound
//! while nothing else holds its old value) makes no new allocations, which
//! `Stats::device_allocations` shows. While a `defer_cleanup` guard lives,
//! freed buffers are queued instead, and released when the last guard
//! drops (Numba's deallocation queue).
//!
//! A memory may have a size (`ContextBuilder::device_memory_limit`): an
//! allocation that would pass it first frees the cache, then fails with
//! an error naming the sizes, as a GPU out of memory does.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use lazyfuse_core::deferral::Deferral;
use lazyfuse_core::{Counter, DType, DeviceBuffer, Error, HostBuffer, Result, StatsCounter};

/// The most bytes of freed buffers kept for reuse.
pub const CACHE_LIMIT: usize = 256 << 20;

/// The simulated device's memory (shared by its buffers, which return to
/// it when dropped).
#[derive(Debug, Default)]
pub struct SimMemory {
    /// The device's size in bytes; `None`: as large as the host allows.
    limit: Option<usize>,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    free: HashMap<(DType, usize), Vec<HostBuffer>>,
    cached_bytes: usize,
    /// Bytes of buffers handed out and not yet freed or cached (queued
    /// deferred buffers included).
    live_bytes: usize,
    deferral: Deferral<HostBuffer>,
}

impl SimMemory {
    /// A memory of `limit` bytes (`None`: no limit).
    pub fn with_limit(limit: Option<usize>) -> SimMemory {
        SimMemory {
            limit,
            state: Mutex::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A buffer of `len` elements of `dtype`: a freed one if any (its
    /// contents stale, as on a device), else a new allocation, counted; an
    /// error when it does not fit in the memory's limit.
    pub fn allocate(&self, dtype: DType, len: usize, stats: &StatsCounter) -> Result<HostBuffer> {
        let bytes = len.saturating_mul(dtype.size());
        {
            let mut state = self.lock();
            if let Some(buffer) = state.free.get_mut(&(dtype, len)).and_then(Vec::pop) {
                state.cached_bytes -= bytes;
                state.live_bytes += bytes;
                return Ok(buffer);
            }
            if let Some(limit) = self.limit {
                if state.live_bytes + state.cached_bytes + bytes > limit {
                    // As a pool out of memory does: free the cache, retry.
                    state.free.clear();
                    state.cached_bytes = 0;
                }
                if state.live_bytes + bytes > limit {
                    return Err(Error::Device {
                        op: format!("sim: allocating {len} {dtype} elements"),
                        message: format!(
                            "out of device memory: {bytes} bytes requested, {} of the {limit}-byte device_memory_limit in use",
                            state.live_bytes
                        ),
                    });
                }
            }
            state.live_bytes += bytes;
        }
        let buffer = HostBuffer::try_zeros(dtype, len).inspect_err(|_| {
            self.lock().live_bytes -= bytes;
        })?;
        stats.add(Counter::DeviceAllocations, 1);
        stats.add(Counter::DeviceBytesAllocated, bytes as u64);
        Ok(buffer)
    }

    /// The bytes that can still be allocated, when the memory has a limit.
    pub fn available(&self) -> Option<usize> {
        let live = self.lock().live_bytes;
        self.limit.map(|limit| limit.saturating_sub(live))
    }

    /// Bytes of buffers in use (cached ones not counted).
    pub fn live_bytes(&self) -> usize {
        self.lock().live_bytes
    }

    /// Takes back a buffer whose array is gone.
    fn release(&self, buffer: HostBuffer) {
        let mut state = self.lock();
        if let Some(buffer) = state.deferral.hold(buffer) {
            state.live_bytes -= buffer.as_bytes().len();
            state.cache(buffer);
        }
    }

    /// Frees every cached buffer; returns the bytes released.
    pub fn release_cached(&self) -> usize {
        let mut state = self.lock();
        state.free.clear();
        std::mem::take(&mut state.cached_bytes)
    }

    /// Starts deferring cleanup (one more guard).
    pub fn defer(&self) {
        self.lock().deferral.defer();
    }

    /// Ends one guard; when it was the last, the queued buffers are freed
    /// (into the cache).
    pub fn resume(&self) {
        let mut state = self.lock();
        for buffer in state.deferral.resume() {
            state.live_bytes -= buffer.as_bytes().len();
            state.cache(buffer);
        }
    }

    /// Buffers freed while cleanup is deferred, not yet released.
    pub fn deferred(&self) -> usize {
        self.lock().deferral.queued()
    }
}

impl State {
    fn cache(&mut self, buffer: HostBuffer) {
        let bytes = buffer.as_bytes().len();
        if self.cached_bytes + bytes <= CACHE_LIMIT {
            self.cached_bytes += bytes;
            self.free
                .entry((buffer.dtype(), buffer.len()))
                .or_default()
                .push(buffer);
        }
    }
}

/// A buffer the simulated device reads and writes: in its own memory, or
/// host memory mapped into it (read in place).
#[derive(Debug)]
pub struct SimBuffer {
    data: Data,
}

#[derive(Debug)]
enum Data {
    /// In the device's memory, returned to it when dropped.
    Device(HostBuffer, Arc<SimMemory>),
    /// Host memory mapped into the device (`Session::mapped`).
    Mapped(Arc<HostBuffer>),
}

impl SimBuffer {
    /// `data` in `memory`.
    pub(crate) fn new(data: HostBuffer, memory: &Arc<SimMemory>) -> SimBuffer {
        SimBuffer {
            data: Data::Device(data, Arc::clone(memory)),
        }
    }

    /// Host memory mapped into the device, read in place.
    pub(crate) fn mapped(host: Arc<HostBuffer>) -> SimBuffer {
        SimBuffer {
            data: Data::Mapped(host),
        }
    }

    /// The elements.
    pub fn data(&self) -> &HostBuffer {
        match &self.data {
            Data::Device(data, _) => data,
            Data::Mapped(host) => host,
        }
    }

    /// Whether the buffer is mapped host memory.
    pub fn is_mapped(&self) -> bool {
        matches!(self.data, Data::Mapped(_))
    }
}

impl DeviceBuffer for SimBuffer {
    fn bytes(&self) -> usize {
        self.data().as_bytes().len()
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Drop for SimBuffer {
    fn drop(&mut self) {
        if let Data::Device(data, memory) = &mut self.data {
            memory.release(std::mem::replace(data, HostBuffer::Bool(Vec::new())));
        }
    }
}
