//! The CUDA engine: one context and one stream per device, kernels lowered
//! and printed like the simulator's, compiled by NVRTC (cubin for the
//! device's own architecture, PTX as fallback), cached in memory and on
//! disk, launched through cudarc with the lowering's launch configuration.
//!
//! Memory: device buffers come from a caching pool (size classes, reuse,
//! out-of-memory retried once after emptying the cache); large uploads go
//! through pinned staging buffers so they run asynchronously and the host
//! goes on planning; results are downloaded only when read.
//!
//! This module runs only where a GPU is present: it is compiled and
//! reviewed everywhere, and exercised by the GPU tests where a device exists.

use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, LaunchConfig, PinnedHostSlice,
    PushKernelArg,
};
use cudarc::nvrtc::Ptx;
use lazyfuse_core::{
    Counter, DType, DeviceBuffer, Engine, Error, EvalEnv, ExprGraph, HostBuffer, KernelLaunch,
    Literal, Options, Residency, Result,
};
use lazyfuse_fusion::{Launch, ProgramCache};

use super::disk_cache::{CacheKey, DiskCache, ImageKind};
use super::driver::{self, device_error, guarded};
use super::pool::{CachingPool, DeviceAllocator, PoolStats};
use crate::device::exec::{self, DeviceRuntime};
use crate::device::ir::{ArgSource, DeviceProgram};
use crate::device::nvrtc::{self, Target};
use crate::device::{bind, cuda, lower};

mod args;
mod user;

use args::ScalarArg;

/// Device memory from cudarc's stream-ordered allocator.
pub struct CudaAllocator {
    stream: Arc<CudaStream>,
}

impl DeviceAllocator for CudaAllocator {
    type Block = CudaSlice<u8>;

    fn allocate(&self, bytes: usize) -> Result<CudaSlice<u8>> {
        // SAFETY: the memory is uninitialised; every buffer is fully written
        // (by an upload or by the kernel that produces it) before it is read.
        unsafe { self.stream.alloc::<u8>(bytes) }.map_err(|e| device_error("cuMemAlloc", e))
    }

    fn is_out_of_memory(&self, error: &Error) -> bool {
        driver::is_out_of_memory(error)
    }
}

/// A buffer in GPU memory, returned to the pool when dropped.
pub struct CudaBuffer {
    slice: Option<CudaSlice<u8>>,
    class: usize,
    bytes: usize,
    pool: Arc<CachingPool<CudaAllocator>>,
}

impl CudaBuffer {
    fn slice(&self) -> Result<&CudaSlice<u8>> {
        self.slice
            .as_ref()
            .ok_or_else(|| Error::internal("cuda backend", "a released device buffer"))
    }
}

impl Drop for CudaBuffer {
    fn drop(&mut self) {
        if let Some(slice) = self.slice.take() {
            self.pool.release(slice, self.class);
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

/// A lowered program loaded on the device.
struct LoadedProgram {
    program: DeviceProgram,
    functions: Vec<CudaFunction>,
    _module: Arc<CudaModule>,
}

/// Pinned host buffers for asynchronous uploads: in flight until the stream
/// is next synchronised, then free for reuse.
#[derive(Default)]
struct Staging {
    in_flight: Vec<PinnedHostSlice<u8>>,
    free: Vec<PinnedHostSlice<u8>>,
    in_flight_bytes: usize,
}

/// Uploads at least this large are staged through pinned memory.
const STAGED_UPLOAD: usize = 1 << 20;
/// Staging memory in flight before the host waits for the copies.
const STAGING_LIMIT: usize = 256 << 20;

/// The CUDA engine of one device.
pub struct CudaEngine {
    ordinal: usize,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    arch: (i32, i32),
    nvrtc_version: (i32, i32),
    programs: ProgramCache,
    loaded: Mutex<HashMap<(u64, DType), Arc<LoadedProgram>>>,
    /// User kernels by a hash of their CUDA source.
    user_kernels: Mutex<HashMap<u64, CudaFunction>>,
    pool: Arc<CachingPool<CudaAllocator>>,
    staging: Mutex<Staging>,
    disk: DiskCache,
}

impl fmt::Debug for CudaEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CudaEngine")
            .field("device", &self.ordinal)
            .field("compute_capability", &self.arch)
            .field("nvrtc", &self.nvrtc_version)
            .finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// 64-bit FNV-1a: a hash that is stable across builds, for disk cache keys.
fn stable_hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn cuda_buffer(device: &Arc<dyn DeviceBuffer>) -> Result<&CudaBuffer> {
    device
        .as_any()
        .downcast_ref::<CudaBuffer>()
        .ok_or_else(|| Error::internal("cuda backend", "a device buffer of another backend"))
}

impl CudaEngine {
    /// The engine of device `ordinal`, or why there is none (no driver, no
    /// such device, no NVRTC): never a panic.
    pub fn new(ordinal: usize) -> Result<CudaEngine> {
        CudaEngine::with_disk_cache(ordinal, DiskCache::from_env())
    }

    /// [`CudaEngine::new`] with compiled kernels cached in `disk` rather
    /// than where the environment says.
    pub fn with_disk_cache(ordinal: usize, disk: DiskCache) -> Result<CudaEngine> {
        driver::probe(ordinal)?;
        guarded("creating the CUDA context", || {
            let ctx = CudaContext::new(ordinal).map_err(|e| device_error("cuCtxCreate", e))?;
            let arch = ctx
                .compute_capability()
                .map_err(|e| device_error("cuDeviceGetAttribute", e))?;
            let stream = ctx
                .new_stream()
                .map_err(|e| device_error("cuStreamCreate", e))?;
            let pool = Arc::new(CachingPool::new(CudaAllocator {
                stream: Arc::clone(&stream),
            }));
            Ok(CudaEngine {
                ordinal,
                ctx,
                stream,
                arch,
                nvrtc_version: nvrtc::version()?,
                programs: ProgramCache::default(),
                loaded: Mutex::new(HashMap::new()),
                user_kernels: Mutex::new(HashMap::new()),
                pool,
                staging: Mutex::new(Staging::default()),
                disk,
            })
        })
    }

    /// The device's compute capability, `(major, minor)`.
    pub fn compute_capability(&self) -> (i32, i32) {
        self.arch
    }

    /// The device memory pool's counters.
    pub fn pool_stats(&self) -> PoolStats {
        self.pool.stats()
    }

    fn allocate(&self, bytes: usize) -> Result<CudaBuffer> {
        let pooled = self.pool.allocate(bytes)?;
        Ok(CudaBuffer {
            slice: Some(pooled.block),
            class: pooled.class,
            bytes,
            pool: Arc::clone(&self.pool),
        })
    }

    /// Waits for the stream, then recycles the staging buffers it used.
    fn synchronize(&self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(|e| device_error("cuStreamSynchronize", e))?;
        let mut staging = lock(&self.staging);
        let done = std::mem::take(&mut staging.in_flight);
        staging.free.extend(done);
        staging.in_flight_bytes = 0;
        Ok(())
    }

    fn staged_copy(&self, bytes: &[u8], target: &mut CudaSlice<u8>) -> Result<()> {
        let over_limit = lock(&self.staging).in_flight_bytes + bytes.len() > STAGING_LIMIT;
        if over_limit {
            self.synchronize()?;
        }
        let mut staging = lock(&self.staging);
        let reusable = staging.free.iter().position(|p| p.len() >= bytes.len());
        let mut pinned = match reusable {
            Some(i) => staging.free.swap_remove(i),
            // SAFETY: the pinned memory is uninitialised; it is fully written
            // below before the copy reads it.
            None => unsafe {
                self.ctx
                    .alloc_pinned::<u8>(CachingPool::<CudaAllocator>::size_class(bytes.len()))
            }
            .map_err(|e| device_error("cuMemHostAlloc", e))?,
        };
        pinned
            .as_mut_slice()
            .map_err(|e| device_error("pinned staging", e))?[..bytes.len()]
            .copy_from_slice(bytes);
        let mut view = target.slice_mut(0..bytes.len());
        let source = pinned
            .as_slice()
            .map_err(|e| device_error("pinned staging", e))?;
        // The copy reads exactly `bytes.len()` bytes of the staging buffer.
        let source = &source[..bytes.len()];
        self.stream
            .memcpy_htod(source, &mut view)
            .map_err(|e| device_error("cuMemcpyHtoDAsync", e))?;
        staging.in_flight_bytes += bytes.len();
        staging.in_flight.push(pinned);
        Ok(())
    }

    /// The loaded program for `launch`: from memory, the disk cache, or NVRTC.
    fn program(&self, launch: &Launch, env: EvalEnv<'_>) -> Result<Arc<LoadedProgram>> {
        let index = bind::index_type(launch);
        let key = (launch.kernel.structural_hash(), index);
        if let Some(found) = lock(&self.loaded).get(&key) {
            env.stats.add(Counter::KernelCacheHits, 1);
            return Ok(Arc::clone(found));
        }
        let program = lower::lower(&launch.kernel, index)?;
        let source = cuda::print(&program);
        let (major, minor) = self.arch;
        let disk_key = CacheKey {
            program_hash: stable_hash(source.as_bytes()),
            arch: format!("sm_{major}{minor}"),
            nvrtc_version: self.nvrtc_version,
            kind: ImageKind::Cubin,
        };
        let image = match self.disk.load(&disk_key) {
            Some(image) => {
                env.stats.add(Counter::KernelCacheHits, 1);
                image
            }
            None => {
                let image = self.compile(&program.name, &source)?;
                env.stats.add(Counter::KernelsCompiled, 1);
                // The disk cache is an optimisation: a failed write is not an error.
                let _ = self.disk.store(&disk_key, &image);
                image
            }
        };
        let module = self
            .ctx
            .load_module(Ptx::from_binary(image))
            .map_err(|e| device_error(format!("cuModuleLoadData {}", program.name), e))?;
        let functions = program
            .kernels
            .iter()
            .map(|k| {
                module
                    .load_function(&k.name)
                    .map_err(|e| device_error(format!("cuModuleGetFunction {}", k.name), e))
            })
            .collect::<Result<Vec<_>>>()?;
        let loaded = Arc::new(LoadedProgram {
            program,
            functions,
            _module: module,
        });
        lock(&self.loaded).insert(key, Arc::clone(&loaded));
        Ok(loaded)
    }

    /// A cubin for the device's architecture; PTX for it when this NVRTC
    /// cannot target the architecture directly (the driver JIT-compiles it).
    fn compile(&self, name: &str, source: &str) -> Result<Vec<u8>> {
        let (major, minor) = self.arch;
        match nvrtc::compile(name, source, &Target::Cubin(format!("sm_{major}{minor}"))) {
            Ok(compiled) => Ok(compiled.image),
            Err(Error::Compile { log, .. }) if log.contains("gpu-architecture") => {
                let target = Target::Ptx(format!("compute_{major}{minor}"));
                let mut ptx = nvrtc::compile(name, source, &target)?.image;
                ptx.push(0);
                Ok(ptx)
            }
            Err(e) => Err(e),
        }
    }

    fn run(
        &self,
        loaded: &LoadedProgram,
        launch: &Launch,
        inputs: &[Option<&CudaBuffer>],
    ) -> Result<Vec<CudaBuffer>> {
        let program = &loaded.program;
        let sizes = bind::Sizes::of(launch);
        let out_len = if launch.kernel.reduction.is_some() {
            sizes.kept_len
        } else {
            sizes.domain_len
        };
        let outputs = (0..launch.kernel.outputs.len())
            .map(|j| self.allocate(out_len * launch.kernel.output_dtype(j).size()))
            .collect::<Result<Vec<_>>>()?;
        let partials = program
            .partials
            .map(|d| self.allocate(sizes.partial_count * d.size()))
            .transpose()?;
        for (kernel, function) in program.kernels.iter().zip(&loaded.functions) {
            let missing =
                |what: &str| Error::internal("cuda launch", format!("no buffer for {what}"));
            let scalars = kernel
                .params
                .iter()
                .map(|p| match p.source {
                    ArgSource::InputBuffer(_)
                    | ArgSource::OutputBuffer(_)
                    | ArgSource::Partials => Ok(None),
                    source => ScalarArg::of(bind::scalar(source, launch, program)?).map(Some),
                })
                .collect::<Result<Vec<_>>>()?;
            let mut args = self.stream.launch_builder(function);
            for (param, scalar) in kernel.params.iter().zip(&scalars) {
                match (param.source, scalar) {
                    (_, Some(scalar)) => scalar.push(&mut args),
                    (ArgSource::InputBuffer(k), None) => {
                        let input = inputs
                            .get(k)
                            .copied()
                            .flatten()
                            .ok_or_else(|| missing(&param.name))?;
                        args.arg(input.slice()?);
                    }
                    (ArgSource::OutputBuffer(j), None) => {
                        args.arg(
                            outputs
                                .get(j)
                                .ok_or_else(|| missing(&param.name))?
                                .slice()?,
                        );
                    }
                    (_, None) => {
                        args.arg(
                            partials
                                .as_ref()
                                .ok_or_else(|| missing(&param.name))?
                                .slice()?,
                        );
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
            // order and of their printed types (both come from `kernel`);
            // every buffer holds the elements its index arithmetic reaches
            // (the simulator checks the same program's accesses), and lives
            // until the stream has run the kernel (cudarc records the use).
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

impl DeviceRuntime for CudaEngine {
    fn backend(&self) -> &'static str {
        "cuda backend"
    }

    fn upload(&self, host: &HostBuffer, env: EvalEnv<'_>) -> Result<Arc<dyn DeviceBuffer>> {
        let bytes = host.as_bytes();
        let mut buffer = self.allocate(bytes.len())?;
        if !bytes.is_empty() {
            let slice = buffer
                .slice
                .as_mut()
                .ok_or_else(|| Error::internal("cuda backend", "a released device buffer"))?;
            if bytes.len() >= STAGED_UPLOAD {
                self.staged_copy(bytes, slice)?;
            } else {
                let mut view = slice.slice_mut(0..bytes.len());
                self.stream
                    .memcpy_htod(bytes, &mut view)
                    .map_err(|e| device_error("cuMemcpyHtoD", e))?;
            }
        }
        env.stats.add(Counter::H2dCopies, 1);
        env.stats.add(Counter::H2dBytes, bytes.len() as u64);
        Ok(Arc::new(buffer))
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
        let outputs = self.run(&loaded, launch, &inputs)?;
        env.stats.add(Counter::KernelLaunches, 1);
        Ok(outputs
            .into_iter()
            .map(|b| Arc::new(b) as Arc<dyn DeviceBuffer>)
            .collect())
    }
}

impl Engine for CudaEngine {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn evaluate(&self, graph: &ExprGraph, env: EvalEnv<'_>) -> Result<Vec<Residency>> {
        exec::evaluate(self, &self.programs, graph, env)
    }

    fn to_host(
        &self,
        value: &Residency,
        dtype: DType,
        env: EvalEnv<'_>,
    ) -> Result<Arc<HostBuffer>> {
        if let Some(host) = &value.host {
            return Ok(Arc::clone(host));
        }
        let device = value.device.as_ref().ok_or_else(|| {
            Error::internal("cuda backend", format!("a {dtype} value with no copy"))
        })?;
        let buffer = cuda_buffer(device)?;
        let mut bytes = vec![0u8; buffer.bytes];
        if !bytes.is_empty() {
            let view = buffer.slice()?.slice(0..buffer.bytes);
            self.stream
                .memcpy_dtoh(&view, &mut bytes)
                .map_err(|e| device_error("cuMemcpyDtoH", e))?;
        }
        self.synchronize()?;
        env.stats.add(Counter::D2hCopies, 1);
        env.stats.add(Counter::D2hBytes, bytes.len() as u64);
        HostBuffer::from_bytes(dtype, &bytes).map(Arc::new)
    }

    fn to_device(
        &self,
        value: &Residency,
        env: EvalEnv<'_>,
    ) -> Result<Option<Arc<dyn DeviceBuffer>>> {
        exec::on_device(self, value, env).map(Some)
    }

    fn run_kernel(
        &self,
        launch: &KernelLaunch,
        arrays: &[(Residency, DType)],
        env: EvalEnv<'_>,
    ) -> Result<Vec<Residency>> {
        self.run_user_kernel(launch, arrays, env)
    }

    fn release_memory(&self) -> usize {
        let staged: usize = match self.synchronize() {
            Ok(()) => {
                let mut staging = lock(&self.staging);
                let bytes = staging.free.iter().map(|p| p.len()).sum();
                staging.free.clear();
                bytes
            }
            Err(_) => 0,
        };
        self.pool.trim() + staged
    }

    fn dot(&self, graph: &ExprGraph, options: &Options) -> Option<String> {
        exec::dot(graph, options)
    }

    fn describe(&self, graph: &ExprGraph, options: &Options) -> String {
        let (major, minor) = self.arch;
        exec::describe(
            &format!(
                "cuda (device {}, compute capability {major}.{minor}, NVRTC {}.{})",
                self.ordinal, self.nvrtc_version.0, self.nvrtc_version.1
            ),
            graph,
            options,
        )
    }
}
