//! The CUDA engine: one context and one stream per device, kernels lowered
//! and printed like the simulator's, compiled by NVRTC (cubin for the
//! device's own architecture, PTX as fallback), cached in memory and on
//! disk, launched through cudarc with the lowering's launch configuration.
//!
//! Memory: device buffers come from a caching pool (size classes, reuse,
//! out-of-memory retried once after emptying the cache); large copies of
//! pageable memory, both ways, go through a small ring of pinned chunks
//! (`staging`), so the host copies one chunk while the device copies
//! another; results are downloaded only when read.
//!
//! This module runs only where a GPU is present: it is compiled and
//! reviewed everywhere, and exercised by the GPU tests where a device exists.

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::sync::atomic::AtomicU16;
use std::sync::{Arc, Mutex, PoisonError};

use cudarc::driver::{CudaContext, CudaModule, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use lazyfuse_core::{
    Counter, DType, DeviceBuffer, Error, EvalEnv, HostBuffer, KernelLaunch, Literal, PinnedRanges,
    Residency, Result, SliceMut, StatsCounter,
};
use lazyfuse_fusion::{count_written_copies, Driver, Launch, Runtime, ScanLaunch};
use lazyfuse_kernel::device_scan;

use super::disk_cache::DiskCache;
use super::driver::{self, device_error, guarded};
use super::pool::{CachingPool, PoolStats};
use lazyfuse_device::ir::{ArgSource, Param, ParamKind};
use lazyfuse_device::nvrtc::{self, Target};
use lazyfuse_device::{bind, cuda};

mod args;
mod buffer;
mod compile;
mod pinned;
mod staging;
mod streams;
mod user;

use args::ScalarArg;
use buffer::{cuda_buffer, on_device, SideStreams};
pub use buffer::{CudaAllocator, CudaBuffer};
use compile::{stable_hash, LoadedProgram};
use staging::StagingRing;

/// Copies from or into pageable memory at least this large are staged
/// through the pinned ring.
const STAGED_COPY: usize = 1 << 20;

/// The CUDA engine: the driver over the runtime of one device.
pub type CudaEngine = Driver<CudaRuntime>;

/// The CUDA runtime of one device.
pub struct CudaRuntime {
    ordinal: usize,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    arch: (i32, i32),
    nvrtc_version: (i32, i32),
    /// What NVRTC compiles for this device.
    target: Target,
    loaded: Mutex<HashMap<(u64, DType), Arc<LoadedProgram>>>,
    /// Modules of user kernels by a hash of their CUDA source (with the
    /// source, which confirms a hit).
    user_modules: Mutex<HashMap<u64, (String, Arc<CudaModule>)>>,
    pool: Arc<CachingPool<CudaAllocator>>,
    staging: Mutex<StagingRing>,
    disk: DiskCache,
    /// Host memory registered (page-locked) for this device.
    pinned: PinnedRanges,
    /// Host memory registered and mapped into the device (also in `pinned`).
    mapped: PinnedRanges,
    /// Pinned host buffers that queued copies read, with the slot of the
    /// stream that reads them (`streams`): held until it next synchronises.
    in_flight: Mutex<Vec<(usize, Arc<HostBuffer>)>>,
    /// The side streams, shared with the pool's allocator.
    side: SideStreams,
}

impl Drop for CudaRuntime {
    fn drop(&mut self) {
        // Nothing queued may outlive the buffers and modules it uses.
        self.synchronize_all();
    }
}

impl fmt::Debug for CudaRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CudaRuntime")
            .field("device", &self.ordinal)
            .field("compute_capability", &self.arch)
            .field("nvrtc", &self.nvrtc_version)
            .finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl CudaRuntime {
    /// The engine of device `ordinal`, or why there is none (no driver, no
    /// such device, no NVRTC): never a panic.
    pub fn new(ordinal: usize) -> Result<CudaRuntime> {
        CudaRuntime::with_disk_cache(ordinal, DiskCache::from_env())
    }

    /// [`CudaRuntime::new`] with compiled kernels cached in `disk` rather
    /// than where the environment says.
    pub fn with_disk_cache(ordinal: usize, disk: DiskCache) -> Result<CudaRuntime> {
        driver::probe(ordinal)?;
        guarded("creating the CUDA context", || {
            let ctx = CudaContext::new(ordinal)
                .map_err(|e| device_error("cuDevicePrimaryCtxRetain", e))?;
            // SAFETY: allocations and frees go to the main stream, and so
            // does all work outside a `Stream`: stream order keeps each use
            // of a buffer before its reuse or free. Work on a side stream
            // first waits for the main stream, and a buffer it used returns
            // to the pool only after events recorded on that side stream
            // (`streams`, `CudaBuffer::fences`). Per-buffer events on every
            // use would only add work. (Pinned staging buffers keep their
            // own events.)
            unsafe { ctx.disable_event_tracking() };
            let arch = ctx
                .compute_capability()
                .map_err(|e| device_error("cuDeviceGetAttribute", e))?;
            let stream = ctx
                .new_stream()
                .map_err(|e| device_error("cuStreamCreate", e))?;
            let target = nvrtc::target_for(arch, &nvrtc::supported_archs()?).ok_or_else(|| {
                Error::BackendUnavailable {
                    backend: "cuda".to_string(),
                    reason: format!(
                        "NVRTC cannot compile for compute capability {}.{} or any older architecture",
                        arch.0, arch.1
                    ),
                }
            })?;
            let side = SideStreams::default();
            let pool = Arc::new(CachingPool::new(CudaAllocator {
                stream: Arc::clone(&stream),
                side: Arc::clone(&side),
            }));
            Ok(CudaRuntime {
                ordinal,
                ctx,
                stream,
                arch,
                nvrtc_version: nvrtc::version()?,
                target,
                loaded: Mutex::new(HashMap::new()),
                user_modules: Mutex::new(HashMap::new()),
                pool,
                staging: Mutex::new(StagingRing::default()),
                disk,
                pinned: PinnedRanges::default(),
                mapped: PinnedRanges::default(),
                in_flight: Mutex::new(Vec::new()),
                side,
            })
        })
    }

    /// The runtime with its demands using at most `limit` bytes of device
    /// memory (`None`: what the device has).
    pub fn with_memory_limit(mut self, limit: Option<usize>) -> CudaRuntime {
        if let Some(pool) = Arc::get_mut(&mut self.pool) {
            // No buffer holds the pool yet: the runtime was just made.
            pool.set_limit(limit);
        }
        self
    }

    /// The device's compute capability, `(major, minor)`.
    pub fn compute_capability(&self) -> (i32, i32) {
        self.arch
    }

    /// The device memory pool's counters.
    pub fn pool_stats(&self) -> PoolStats {
        self.pool.stats()
    }

    /// A buffer of `len` elements of `dtype` for a kernel to write: every
    /// element is written before it is read.
    fn scratch(&self, dtype: DType, len: usize, env: EvalEnv<'_>) -> Result<Arc<dyn DeviceBuffer>> {
        let buffer = self.allocate(len * dtype.size(), env.stats)?;
        Ok(Arc::new(buffer) as Arc<dyn DeviceBuffer>)
    }

    /// A device buffer of `bytes` from the pool; an allocation the pool
    /// could not serve from freed blocks is counted in `stats`.
    fn allocate(&self, bytes: usize, stats: &StatsCounter) -> Result<CudaBuffer> {
        let pooled = self.pool.allocate(bytes)?;
        if pooled.fresh {
            stats.add(Counter::DeviceAllocations, 1);
            stats.add(Counter::DeviceBytesAllocated, pooled.class as u64);
        }
        Ok(CudaBuffer {
            slice: Some(pooled.block),
            class: pooled.class,
            bytes,
            pool: Arc::clone(&self.pool),
            mapped: None,
            used_on: AtomicU16::new(0),
        })
    }

    /// Uploads `bytes`, all or part of `host`'s (which is held until the
    /// stream synchronises when the copy reads pinned memory directly).
    fn upload_bytes(
        &self,
        host: &Arc<HostBuffer>,
        bytes: &[u8],
        env: EvalEnv<'_>,
    ) -> Result<Arc<dyn DeviceBuffer>> {
        let mut buffer = self.allocate(bytes.len(), env.stats)?;
        if !bytes.is_empty() {
            let stream = self.stream(env.stream)?;
            buffer.use_on(env.stream);
            let slice = buffer
                .slice
                .as_mut()
                .ok_or_else(|| Error::internal("cuda backend", "a released device buffer"))?;
            let pinned = self.is_pinned(bytes);
            if !pinned {
                env.stats.add(Counter::StagedBytes, bytes.len() as u64);
            }
            let mut view = slice.slice_mut(0..bytes.len());
            let staged = !pinned
                && bytes.len() >= STAGED_COPY
                && lock(&self.staging).upload(&self.ctx, &stream, bytes, &mut view)?;
            if pinned {
                // A DMA from the pinned memory itself, asynchronous: hold it.
                self.hold_until_synchronized(env.stream, host);
            }
            if !staged {
                stream
                    .memcpy_htod(bytes, &mut view)
                    .map_err(|e| device_error("cuMemcpyHtoD", e))?;
            }
        }
        Ok(on_device(buffer))
    }

    fn run(
        &self,
        loaded: &LoadedProgram,
        launch: &Launch,
        inputs: &[Option<&CudaBuffer>],
        env: EvalEnv<'_>,
    ) -> Result<Vec<CudaBuffer>> {
        let stats = env.stats;
        let program = &loaded.program;
        let sizes = bind::Sizes::of(launch);
        let out_len = if launch.kernel.writes_domain() {
            sizes.domain_len
        } else {
            sizes.kept_len
        };
        let outputs = (0..launch.kernel.outputs.len())
            .map(|j| self.allocate(out_len * launch.kernel.output_dtype(j).size(), stats))
            .collect::<Result<Vec<_>>>()?;
        let partials = program
            .partials
            .map(|d| self.allocate(sizes.partial_count * d.size(), stats))
            .transpose()?;
        // After the allocations: the side stream waits for them too.
        let stream = self.stream(env.stream)?;
        for buffer in inputs
            .iter()
            .flatten()
            .copied()
            .chain(&outputs)
            .chain(&partials)
        {
            buffer.use_on(env.stream);
        }
        let bound = Bound {
            inputs,
            outputs: &outputs,
            partials: partials.as_ref(),
        };
        for (kernel, function) in program.kernels.iter().zip(&loaded.functions) {
            let scalars = kernel
                .params
                .iter()
                .map(|p| match p.kind {
                    ParamKind::Input(_) | ParamKind::Output(_) => Ok(None),
                    ParamKind::Scalar(dtype) => {
                        let value = bind::scalar(p.source, launch, program)?;
                        ScalarArg::for_param(value, dtype).map(Some)
                    }
                })
                .collect::<Result<Vec<_>>>()?;
            let mut args = stream.launch_builder(function);
            for (param, scalar) in kernel.params.iter().zip(&scalars) {
                match scalar {
                    Some(scalar) => scalar.push(&mut args),
                    None => {
                        args.arg(bound.buffer(param)?);
                    }
                }
            }
            let blocks = bind::blocks(kernel, launch);
            let config = LaunchConfig {
                grid_dim: (blocks as u32, 1, 1),
                block_dim: (kernel.block, 1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: the arguments are exactly the kernel's parameters, in
            // order and of their printed types (both come from `kernel`;
            // scalars are checked against the parameter dtypes); every buffer
            // holds the elements its index arithmetic reaches (the simulator
            // checks the same program's accesses); a buffer dropped after the
            // launch is reused only after the kernel (the stream's order on
            // the main stream, the buffer's fences on a side stream).
            unsafe { args.launch(config) }.map_err(|e| {
                device_error(
                    format!(
                        "launch {} (grid {blocks}, block {})",
                        kernel.name, kernel.block
                    ),
                    e,
                )
            })?;
        }
        Ok(outputs)
    }
}

/// The buffers a launch of a fused program binds to its parameters.
struct Bound<'a> {
    inputs: &'a [Option<&'a CudaBuffer>],
    outputs: &'a [CudaBuffer],
    partials: Option<&'a CudaBuffer>,
}

impl Bound<'_> {
    /// The device memory of buffer parameter `param`.
    fn buffer(&self, param: &Param) -> Result<&CudaSlice<u8>> {
        let buffer = match param.source {
            ArgSource::InputBuffer(k) => self.inputs.get(k).copied().flatten(),
            ArgSource::OutputBuffer(j) => self.outputs.get(j),
            _ => self.partials,
        };
        buffer
            .ok_or_else(|| Error::internal("cuda launch", format!("no buffer for {}", param.name)))?
            .slice()
    }
}

impl Runtime for CudaRuntime {
    type Buffer = Arc<dyn DeviceBuffer>;
    const DEVICE: bool = true;
    const FUSES_SCAN_PRODUCERS: bool = true;

    /// 64-bit values: narrower ones reduce as one packed key.
    const RUNS_ROW_PROGRAMS: bool = true;

    fn runs_arg_reductions(dtype: DType) -> bool {
        dtype.size() == 8
    }

    fn name(&self) -> &'static str {
        "cuda"
    }

    fn executor(&self) -> String {
        let (major, minor) = self.arch;
        format!(
            "cuda (device {}, compute capability {major}.{minor}, NVRTC {}.{})",
            self.ordinal, self.nvrtc_version.0, self.nvrtc_version.1
        )
    }

    fn resident(&self, value: &Residency) -> Option<Arc<dyn DeviceBuffer>> {
        value
            .device
            .clone()
            .or_else(|| self.mapped_view(value.host.as_ref()?))
    }

    fn residency(&self, buffer: Arc<dyn DeviceBuffer>) -> Residency {
        Residency::device(buffer)
    }

    fn upload(&self, host: &Arc<HostBuffer>, env: EvalEnv<'_>) -> Result<Arc<dyn DeviceBuffer>> {
        self.upload_bytes(host, host.as_bytes(), env)
    }

    fn upload_part(
        &self,
        host: &Arc<HostBuffer>,
        range: Range<usize>,
        env: EvalEnv<'_>,
    ) -> Result<Arc<dyn DeviceBuffer>> {
        let bytes = host.bytes_of(range, "cuda upload")?;
        self.upload_bytes(host, bytes, env)
    }

    fn leave_stream(&self, stream: u64) -> Result<()> {
        self.leave(stream)
    }

    fn synchronize(&self, stream: u64) -> Result<()> {
        CudaRuntime::synchronize(self, stream)
    }

    fn wait_streams(&self, waiter: u64, waited: &[u64]) {
        if self.wait_for(waiter, waited).is_err() {
            // No event could order them: order them by waiting here.
            for &stream in waited {
                let _ = self.synchronize(stream);
            }
        }
    }

    fn available_memory(&self) -> Option<usize> {
        let pool = self.pool.stats();
        // What the driver has free, plus the pool's cache (freed on need).
        let device = self
            .ctx
            .bind_to_thread()
            .ok()
            .and_then(|()| cudarc::driver::result::mem_get_info().ok())
            .map(|(free, _total)| free + pool.cached_bytes);
        match (self.pool.available(), device) {
            (Some(limit), Some(device)) => Some(limit.min(device)),
            (limit, device) => limit.or(device),
        }
    }

    fn download_into(
        &self,
        device: &Arc<dyn DeviceBuffer>,
        mut out: SliceMut<'_>,
        env: EvalEnv<'_>,
    ) -> Result<()> {
        let buffer = cuda_buffer(device)?;
        if buffer.bytes > 0 {
            buffer.use_on(env.stream);
            let view = buffer.slice()?.slice(0..buffer.bytes);
            if self.download_direct(&view, &mut out, env)? {
                return Ok(());
            }
        }
        let host = self.download(device, out.dtype(), env)?;
        out.copy_from(&host)
    }

    fn pin_host(&self, buffer: &HostBuffer) -> Result<()> {
        self.register_host(buffer)
    }

    fn map_host(&self, buffer: &HostBuffer) -> Result<()> {
        self.register_mapped(buffer)
    }

    fn unpin_host(&self, buffer: &HostBuffer) {
        self.unregister_host(buffer);
    }

    fn download(
        &self,
        device: &Arc<dyn DeviceBuffer>,
        dtype: DType,
        env: EvalEnv<'_>,
    ) -> Result<Arc<HostBuffer>> {
        env.stats.add(Counter::StagedBytes, device.bytes() as u64);
        let buffer = cuda_buffer(device)?;
        let mut bytes = vec![0u8; buffer.bytes];
        if !bytes.is_empty() {
            let stream = self.stream(env.stream)?;
            buffer.use_on(env.stream);
            let view = buffer.slice()?.slice(0..buffer.bytes);
            self.copy_to_host(&stream, &view, &mut bytes)?;
        }
        self.synchronize(env.stream)?;
        HostBuffer::from_bytes(dtype, &bytes).map(Arc::new)
    }

    fn launch(
        &self,
        launch: &Launch,
        inputs: &[Option<&Arc<dyn DeviceBuffer>>],
        env: EvalEnv<'_>,
    ) -> Result<Vec<Arc<dyn DeviceBuffer>>> {
        let inputs = inputs
            .iter()
            .map(|i| i.map(cuda_buffer).transpose())
            .collect::<Result<Vec<_>>>()?;
        let loaded = self.program(launch, env)?;
        let outputs = self.run(&loaded, launch, &inputs, env)?;
        Ok(outputs.into_iter().map(on_device).collect())
    }

    fn run_kernel(
        &self,
        launch: &KernelLaunch,
        arrays: Vec<(Arc<dyn DeviceBuffer>, DType)>,
        env: EvalEnv<'_>,
    ) -> Result<Vec<Arc<dyn DeviceBuffer>>> {
        count_written_copies(launch, &arrays, env);
        self.run_user_kernel(launch, &arrays, env)
    }

    fn scan(
        &self,
        scan: &ScanLaunch,
        input: &Arc<dyn DeviceBuffer>,
        env: EvalEnv<'_>,
    ) -> Result<Arc<dyn DeviceBuffer>> {
        let zeros = |dtype: DType, len: usize| self.scratch(dtype, len, env);
        let run = &mut |launch: &KernelLaunch, arrays: &[(Arc<dyn DeviceBuffer>, DType)]| {
            self.run_user_kernel(launch, arrays, env)
        };
        device_scan::scan(scan, input, env, &zeros, run)
    }

    fn scan_fused(
        &self,
        scan: &ScanLaunch,
        producer: &Launch,
        inputs: &[Option<&Arc<dyn DeviceBuffer>>],
        env: EvalEnv<'_>,
    ) -> Result<Arc<dyn DeviceBuffer>> {
        let zeros = |dtype: DType, len: usize| self.scratch(dtype, len, env);
        let run = &mut |launch: &KernelLaunch, arrays: &[(Arc<dyn DeviceBuffer>, DType)]| {
            self.run_user_kernel(launch, arrays, env)
        };
        device_scan::scan_fused(self, scan, producer, inputs, env, &zeros, run)
    }

    fn explain_launch(&self, index: usize, launch: &Launch) -> String {
        lazyfuse_device::explain_launch(index, launch)
    }

    fn user_kernel_executor(&self, _launch: &KernelLaunch) -> String {
        "the GPU (compiled by NVRTC)".into()
    }

    fn release_memory(&self) -> usize {
        let staged = lock(&self.staging).release();
        self.pool.trim() + staged
    }

    fn begin_deferred_cleanup(&self) {
        self.pool.defer();
    }

    fn end_deferred_cleanup(&self) {
        self.pool.resume();
    }
}
