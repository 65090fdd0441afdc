//! `Context`: the session of one backend, chosen by name or by what the
//! machine offers.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use lazyfuse_core::{Engine, Error, Options, ReferenceEngine, Result, Session};
use lazyfuse_cpu::{CpuEngine, CpuRuntime, CpuSettings, JitMode};
use lazyfuse_cuda::{CudaEngine, CudaRuntime};
use lazyfuse_sim::{SimEngine, SimRuntime, SimTiming};

/// Environment variable that overrides the backend [`Context::new`] picks.
pub const BACKEND_VAR: &str = "LAZYFUSE_BACKEND";

/// An engine with its settings and statistics; every array belongs to one.
/// Cheap to clone (a shared handle), `Send + Sync`.
///
/// It dereferences to [`Session`], which holds the array constructors
/// (`from_slice`, `from_vec`, `zeros`, `ones`, `full`, `arange`), `eval`,
/// `stats`, `reset_stats` and `backend_name`.
#[derive(Clone)]
pub struct Context {
    session: Session,
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("backend", &self.session.backend_name())
            .field("options", self.session.options())
            .finish()
    }
}

impl Deref for Context {
    type Target = Session;

    fn deref(&self) -> &Session {
        &self.session
    }
}

impl Default for Context {
    fn default() -> Self {
        Context::new()
    }
}

impl Context {
    /// The best backend this machine offers: CUDA device 0 when a driver and
    /// a device are usable, else the CPU. `LAZYFUSE_BACKEND=cpu|sim|cuda`
    /// overrides the choice (falling back to the CPU when the named backend
    /// is unavailable). Never panics.
    pub fn new() -> Context {
        let requested = std::env::var(BACKEND_VAR).ok();
        let requested = requested.as_deref().map(str::trim).unwrap_or("auto");
        Context::builder()
            .backend(requested)
            .build()
            .unwrap_or_else(|_| Context::cpu())
    }

    /// The CPU backend.
    pub fn cpu() -> Context {
        Context::with_engine(cpu_engine(CpuSettings::default()), Options::default())
    }

    /// The simulated device: its own device memory, copies counted in
    /// [`Stats`](crate::Stats), and the very device programs the CUDA
    /// backend compiles, run by a SIMT interpreter that checks every memory
    /// access (Numba's CUDA simulator, for lazyfuse).
    pub fn sim() -> Context {
        Context::with_engine(sim_engine(None, None), Options::default())
    }

    /// CUDA device `device`; an error (not a panic) naming the reason when
    /// there is no driver, no such device or no NVRTC.
    pub fn cuda(device: usize) -> Result<Context> {
        Context::builder().backend("cuda").device(device).build()
    }

    /// A builder for a context with chosen backend and settings.
    pub fn builder() -> ContextBuilder {
        ContextBuilder::default()
    }

    /// A context running `engine` (for backend authors and tests).
    pub fn with_engine(engine: Arc<dyn Engine>, options: Options) -> Context {
        Context {
            session: Session::new(engine, options),
        }
    }

    /// Frees the memory kept cached for reuse (arrays still alive keep
    /// theirs): the CUDA backend's device pool, and the spare host buffers
    /// every backend's large results may reuse
    /// ([`lazyfuse_core::element::spare`]); returns the bytes released.
    pub fn release_device_memory(&self) -> usize {
        self.session.engine().release_memory() + lazyfuse_core::element::spare::release()
    }

    /// The underlying session.
    pub fn session(&self) -> &Session {
        &self.session
    }
}

fn cpu_engine(settings: CpuSettings) -> Arc<dyn Engine> {
    Arc::new(CpuEngine::new(CpuRuntime::new(settings)))
}

fn sim_engine(timing: Option<SimTiming>, memory_limit: Option<usize>) -> Arc<dyn Engine> {
    Arc::new(SimEngine::new(SimRuntime::new(timing, memory_limit)))
}

fn cuda_engine(device: usize, memory_limit: Option<usize>) -> Result<Arc<dyn Engine>> {
    let runtime = CudaRuntime::new(device)?.with_memory_limit(memory_limit);
    Ok(Arc::new(CudaEngine::new(runtime)))
}

/// Builds a [`Context`]: `Context::builder().backend("cpu").fusion(false).threads(2).build()?`.
#[derive(Clone, Debug)]
pub struct ContextBuilder {
    backend: String,
    device: usize,
    options: Options,
    cpu: CpuSettings,
    sim: Option<SimTiming>,
    device_memory_limit: Option<usize>,
}

impl Default for ContextBuilder {
    fn default() -> Self {
        ContextBuilder {
            backend: "auto".into(),
            device: 0,
            options: Options::default(),
            cpu: CpuSettings::default(),
            sim: None,
            device_memory_limit: None,
        }
    }
}

impl ContextBuilder {
    /// `"auto"` (default: CUDA if usable, else CPU), `"cpu"`, `"sim"`,
    /// `"cuda"`, or `"reference"` (the unfused evaluator used as test oracle).
    pub fn backend(mut self, name: &str) -> Self {
        self.backend = name.to_string();
        self
    }

    /// The CUDA device ordinal (default 0).
    pub fn device(mut self, device: usize) -> Self {
        self.device = device;
        self
    }

    /// Fuse element-wise work into kernels (default true); `false` gives one
    /// kernel per operation, the baseline benchmarks compare against.
    pub fn fusion(mut self, enabled: bool) -> Self {
        self.options.fusion = enabled;
        self
    }

    /// Worker threads for CPU execution (default 0: all cores).
    pub fn threads(mut self, threads: usize) -> Self {
        self.options.threads = threads;
        self
    }

    /// When the CPU backend compiles kernels to machine code (default
    /// [`JitMode::Auto`], or what `LAZYFUSE_JIT` names: `auto`, `always`,
    /// `never`). Results are the same either way.
    pub fn jit(mut self, mode: JitMode) -> Self {
        self.cpu.jit = mode;
        self
    }

    /// Above how many bytes read and written in all a compiled element-wise
    /// launch of the CPU backend writes its outputs with streaming
    /// (non-temporal) stores: they skip reading each output line before
    /// writing it (up to a fifth less memory traffic for `a*b + c`) but
    /// leave the output out of the caches. Default: the size of the
    /// last-level cache; `0` streams every compiled launch, `usize::MAX`
    /// none. Results are the same either way.
    pub fn streaming_threshold(mut self, bytes: usize) -> Self {
        self.cpu.streaming_threshold = Some(bytes);
        self
    }

    /// Makes the `sim` backend keep a timeline ([`Session::timeline`]) of
    /// its copy engines and compute engine, timed by `timing` (copy
    /// bandwidths, kernel throughput; `SimTiming::default()` is a PCIe 4
    /// GPU). Results do not depend on it.
    pub fn sim_timing(mut self, timing: SimTiming) -> Self {
        self.sim = Some(timing);
        self
    }

    /// Caps the device memory a device backend's demands may use at
    /// `bytes` (on `sim`, the simulated device's size; on `cuda`, its
    /// memory pool's). A demand that needs more is split into chunks that
    /// fit (the pipeline, `explain()` shows it) when it can be; otherwise
    /// its allocation fails with an `Error`. No effect on the CPU.
    pub fn device_memory_limit(mut self, bytes: usize) -> Self {
        self.device_memory_limit = Some(bytes);
        self
    }

    /// A device backend pipelines a demand (chunks whose copies overlap its
    /// kernels) when it would move more than `bytes` between host and
    /// device (default 64 MiB, [`lazyfuse_core::DEFAULT_PIPELINE_THRESHOLD`];
    /// `usize::MAX`: only when device memory requires it). Results are the
    /// same either way, up to the order in which a reduction adds.
    pub fn pipeline_threshold(mut self, bytes: usize) -> Self {
        self.options.pipeline_threshold = bytes;
        self
    }

    /// The context, or why the backend cannot be used.
    pub fn build(self) -> Result<Context> {
        let engine = match self.backend.as_str() {
            "auto" | "" => cuda_engine(self.device, self.device_memory_limit)
                .unwrap_or_else(|_| cpu_engine(self.cpu)),
            "cpu" => cpu_engine(self.cpu),
            "sim" => sim_engine(self.sim, self.device_memory_limit),
            "reference" => Arc::new(ReferenceEngine::new()),
            "cuda" => cuda_engine(self.device, self.device_memory_limit)?,
            other => {
                return Err(Error::InvalidArgument {
                    op: "Context::builder".into(),
                    message: format!(
                    "unknown backend '{other}' (expected \"auto\", \"cpu\", \"sim\", \"cuda\" or \"reference\")"
                ),
                })
            }
        };
        Ok(Context::with_engine(engine, self.options))
    }
}
