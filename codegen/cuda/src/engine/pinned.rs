//! Pinned host memory on the CUDA runtime: buffers the session pins are
//! page-locked with `cuMemHostRegister`, so uploads from them and downloads
//! into them are DMA transfers with no staging copy. An upload from pinned
//! memory is asynchronous: the runtime holds the source buffer until the
//! stream next synchronises, so it cannot be freed or rewritten meanwhile
//! (a `PinnedBuf` shared this way copies on write).
//!
//! Mapped host memory (`Session::mapped`) is registered with
//! `CU_MEMHOSTREGISTER_DEVICEMAP` as well: kernels read arrays over it
//! through its device address, in place, with no upload (the view waits
//! for the kernels that read it when it is dropped, so the host writes the
//! memory only after them). Results read into it are copied there by one
//! direct DMA (kernels do not write it in place yet), so they count as
//! device-to-host copies.

use std::sync::Arc;

use cudarc::driver::{sys, CudaStream};
use lazyfuse_core::{Counter, DeviceBuffer, EvalEnv, HostBuffer, Result, SliceMut};

use super::{lock, CudaBuffer, CudaRuntime};
use crate::driver::device_error;

impl CudaRuntime {
    /// Page-locks the memory of `buffer` for this device.
    pub(super) fn register_host(&self, buffer: &HostBuffer) -> Result<()> {
        self.register(buffer, 0)
    }

    /// Page-locks the memory of `buffer` and maps it into the device's
    /// address space.
    pub(super) fn register_mapped(&self, buffer: &HostBuffer) -> Result<()> {
        self.register(buffer, sys::CU_MEMHOSTREGISTER_DEVICEMAP)?;
        self.mapped.insert(buffer.as_bytes());
        Ok(())
    }

    fn register(&self, buffer: &HostBuffer, flags: u32) -> Result<()> {
        let bytes = buffer.as_bytes();
        if bytes.is_empty() || !self.pinned.insert(bytes) {
            return Ok(());
        }
        self.ctx
            .bind_to_thread()
            .map_err(|e| device_error("cuCtxSetCurrent", e))?;
        // SAFETY: `bytes` is live host memory of this length, and the
        // session keeps it alive and in place until `unregister_host`;
        // registering only page-locks it (nothing is written).
        let status = unsafe {
            sys::cuMemHostRegister_v2(bytes.as_ptr().cast_mut().cast(), bytes.len(), flags)
        };
        status.result().map_err(|e| {
            self.pinned.remove(bytes);
            device_error("cuMemHostRegister", e)
        })
    }

    /// Ends [`CudaRuntime::register_host`] of `buffer`.
    pub(super) fn unregister_host(&self, buffer: &HostBuffer) {
        let bytes = buffer.as_bytes();
        self.mapped.remove(bytes);
        if !self.pinned.remove(bytes) || self.ctx.bind_to_thread().is_err() {
            return;
        }
        // Nothing may still be copying from or into it.
        self.synchronize_all();
        // SAFETY: the memory was registered by `register_host` and is still
        // live (the session unpins before it frees); no copy uses it.
        let _ = unsafe { sys::cuMemHostUnregister(bytes.as_ptr().cast_mut().cast()) };
    }

    /// A device buffer over mapped host memory `host` (its device
    /// address), when `host` is mapped; kernels read it in place.
    pub(super) fn mapped_view(&self, host: &Arc<HostBuffer>) -> Option<Arc<dyn DeviceBuffer>> {
        let bytes = host.as_bytes();
        if !self.mapped.contains(bytes) || self.ctx.bind_to_thread().is_err() {
            return None;
        }
        let mut address: sys::CUdeviceptr = 0;
        // SAFETY: `bytes` lies in host memory registered with
        // CU_MEMHOSTREGISTER_DEVICEMAP (checked above), live while `host`
        // is; the call only writes the device address into `address`.
        let status = unsafe {
            sys::cuMemHostGetDevicePointer_v2(&mut address, bytes.as_ptr().cast_mut().cast(), 0)
        };
        status.result().ok()?;
        // SAFETY: `address` is the device's address of `bytes.len()` bytes
        // of mapped host memory, which the buffer keeps alive (it holds
        // `host`) and never frees (its drop leaks the slice); kernels only
        // read it (arguments are never written in place).
        let slice = unsafe { self.stream.upgrade_device_ptr::<u8>(address, bytes.len()) };
        Some(Arc::new(CudaBuffer {
            slice: Some(slice),
            class: 0,
            bytes: bytes.len(),
            pool: Arc::clone(&self.pool),
            mapped: Some(Arc::clone(host)),
            used_on: Default::default(),
        }))
    }

    /// Whether `host` lies in memory pinned for this device.
    pub(super) fn is_pinned(&self, host: &[u8]) -> bool {
        self.pinned.contains(host)
    }

    /// Copies `source` straight into `out` and waits for it; false (nothing
    /// copied) for a destination of bools or of another size.
    pub(super) fn download_direct(
        &self,
        source: &cudarc::driver::CudaView<'_, u8>,
        out: &mut SliceMut<'_>,
        env: EvalEnv<'_>,
    ) -> Result<bool> {
        let Some(target) = out.as_bytes_mut().filter(|t| t.len() == source.len()) else {
            return Ok(false);
        };
        let stream = self.stream(env.stream)?;
        if self.is_pinned(target) {
            stream
                .memcpy_dtoh(source, target)
                .map_err(|e| device_error("cuMemcpyDtoH", e))?;
        } else {
            env.stats.add(Counter::StagedBytes, target.len() as u64);
            self.copy_to_host(&stream, source, target)?;
        }
        self.synchronize(env.stream)?;
        Ok(true)
    }

    /// Queues the copy of `source` into pageable `target`: through the
    /// pinned ring when it is large, else directly (the driver stages it).
    /// The caller synchronises.
    pub(super) fn copy_to_host(
        &self,
        stream: &Arc<CudaStream>,
        source: &cudarc::driver::CudaView<'_, u8>,
        target: &mut [u8],
    ) -> Result<()> {
        if target.len() >= super::STAGED_COPY
            && lock(&self.staging).download(&self.ctx, stream, source, target)?
        {
            return Ok(());
        }
        stream
            .memcpy_dtoh(source, target)
            .map_err(|e| device_error("cuMemcpyDtoH", e))
    }
}
