//! The `cpu` backend: fused kernels executed on host memory. All planner
//! steps are zero-copy here: leaves are read in place, outputs are host buffers.
//!
//! Owns: the CPU [`Runtime`] and its settings,
//! the kernel cache, the register machine, the Cranelift JIT tier,
//! vectorised math, reductions and streaming stores. Must not know: device
//! programs, CUDA, `Array`; the driver (`lazyfuse-fusion`) plans and calls it.

mod arg;
pub mod divide;
pub mod frame;
pub mod interp;
pub mod isa;
pub mod jit;
pub mod kernels;
pub mod loops;
pub mod machine;
pub mod pages;
pub mod pairwise;
pub mod primitive;
pub mod reduce;
mod reduce_table;
mod rows;
pub mod run;
mod scan;
pub mod settings;
mod spare;
pub mod steps;
pub mod stream;
mod tasks;
pub mod team;
mod user;
pub mod vmath;

pub mod widen;

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, OnceLock};

use lazyfuse_core::{
    Counter, DType, EvalEnv, HostBuffer, KernelLaunch, Residency, Result, SliceMut,
};
use lazyfuse_fusion::rows::Writes;
use lazyfuse_fusion::{Driver, Launch, Runtime, ScanInput, ScanLaunch};

use kernels::KernelCache;
pub use settings::{CpuSettings, JitMode};

/// The CPU engine: the driver over the CPU runtime.
pub type CpuEngine = Driver<CpuRuntime>;

/// The CPU runtime: computes in host memory, so every planner step is
/// zero-copy (leaves are read in place, outputs are host buffers).
#[derive(Debug, Default)]
pub struct CpuRuntime {
    cache: KernelCache,
    settings: CpuSettings,
    /// The worker pool for the context's thread count, found once. (A
    /// panic cannot leave a pool half-changed: the pool is shared as is.)
    pool: AssertUnwindSafe<OnceLock<(usize, Option<Arc<rayon::ThreadPool>>)>>,
}

impl CpuRuntime {
    /// A CPU runtime with `settings` and an empty kernel cache.
    pub fn new(settings: CpuSettings) -> CpuRuntime {
        CpuRuntime {
            cache: KernelCache::default(),
            settings,
            pool: AssertUnwindSafe(OnceLock::new()),
        }
    }

    fn executor<'a>(&'a self, pool: Option<&'a rayon::ThreadPool>) -> kernels::Executor<'a> {
        kernels::Executor {
            cache: &self.cache,
            settings: &self.settings,
            pool,
        }
    }

    /// The worker pool for `threads` threads (`None`: the calling thread).
    fn pool(&self, threads: usize) -> Option<Arc<rayon::ThreadPool>> {
        let (cached, pool) = self.pool.get_or_init(|| (threads, kernels::pool(threads)));
        if *cached == threads {
            pool.clone()
        } else {
            kernels::pool(threads)
        }
    }

    /// Its settings.
    pub fn settings(&self) -> &CpuSettings {
        &self.settings
    }

    /// Which tier runs `kernel`, for `explain()`.
    fn tier(&self, kernel: &lazyfuse_fusion::FusedKernel) -> String {
        match (jit::accepts(kernel), self.settings.jit) {
            (Err(why), _) => format!("the register machine ({why})"),
            (Ok(()), JitMode::Never) => "the register machine (JitMode::Never)".into(),
            (Ok(()), JitMode::Always) => "compiled code (JIT)".into(),
            (Ok(()), JitMode::Auto) => format!(
                "compiled code (JIT) once it has run {} elements, the register machine before",
                jit::JIT_AFTER
            ),
        }
    }
}

fn host_inputs<'a>(inputs: &[Option<&'a Arc<HostBuffer>>]) -> Vec<Option<&'a HostBuffer>> {
    inputs.iter().map(|i| i.map(|b| &**b)).collect()
}

impl Runtime for CpuRuntime {
    type Buffer = Arc<HostBuffer>;
    const DEVICE: bool = false;
    const RUNS_ROW_PROGRAMS: bool = true;
    const FUSES_SCAN_PRODUCERS: bool = true;
    fn runs_arg_reductions(_: DType) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "cpu"
    }

    fn executor(&self) -> String {
        "cpu (fused kernels, chunked)".into()
    }

    fn resident(&self, value: &Residency) -> Option<Arc<HostBuffer>> {
        value.host.clone()
    }

    fn residency(&self, buffer: Arc<HostBuffer>) -> Residency {
        Residency::host(buffer)
    }

    fn upload(&self, host: &Arc<HostBuffer>, _env: EvalEnv<'_>) -> Result<Arc<HostBuffer>> {
        Ok(Arc::clone(host))
    }

    fn download(
        &self,
        buffer: &Arc<HostBuffer>,
        _dtype: DType,
        _env: EvalEnv<'_>,
    ) -> Result<Arc<HostBuffer>> {
        Ok(Arc::clone(buffer))
    }

    fn launch(
        &self,
        launch: &Launch,
        inputs: &[Option<&Arc<HostBuffer>>],
        env: EvalEnv<'_>,
    ) -> Result<Vec<Arc<HostBuffer>>> {
        let pool = self.pool(env.options.threads);
        let outputs = self
            .executor(pool.as_deref())
            .launch(launch, &host_inputs(inputs), env)?;
        Ok(outputs.into_iter().map(Arc::new).collect())
    }

    fn launch_into<'a>(
        &self,
        launch: &Launch,
        inputs: &[Option<&Arc<HostBuffer>>],
        outs: Vec<(usize, SliceMut<'a>)>,
        env: EvalEnv<'_>,
    ) -> Result<Option<Vec<(usize, SliceMut<'a>)>>> {
        let pool = self.pool(env.options.threads);
        self.executor(pool.as_deref())
            .launch_into(launch, &host_inputs(inputs), outs, env)?;
        Ok(None)
    }

    fn run_kernel(
        &self,
        launch: &KernelLaunch,
        arrays: Vec<(Arc<HostBuffer>, DType)>,
        env: EvalEnv<'_>,
    ) -> Result<Vec<Arc<HostBuffer>>> {
        let buffers = arrays.into_iter().map(|(b, _)| b).collect();
        let pool = self.pool(env.options.threads);
        let outputs = user::run(
            launch,
            buffers,
            self.settings.jit,
            pool.as_deref(),
            env.stats,
        )?;
        Ok(outputs.into_iter().map(Arc::new).collect())
    }

    fn run_kernel_into<'a>(
        &self,
        launch: &KernelLaunch,
        arrays: &[(Arc<HostBuffer>, DType)],
        out: SliceMut<'a>,
        env: EvalEnv<'_>,
    ) -> Result<Option<SliceMut<'a>>> {
        let hosts: Vec<&HostBuffer> = arrays.iter().map(|(b, _)| &**b).collect();
        let pool = self.pool(env.options.threads);
        user::run_into(
            launch,
            &hosts,
            out,
            self.settings.jit,
            pool.as_deref(),
            env.stats,
        )
    }

    fn scan(
        &self,
        scan: &ScanLaunch,
        input: &Arc<HostBuffer>,
        env: EvalEnv<'_>,
    ) -> Result<Arc<HostBuffer>> {
        let pool = self.pool(env.options.threads);
        let out = self
            .executor(pool.as_deref())
            .scan(scan, ScanInput::Values(input), env)?;
        env.stats.add(Counter::KernelLaunches, 1);
        Ok(Arc::new(out))
    }

    fn scan_fused(
        &self,
        scan: &ScanLaunch,
        producer: &Launch,
        inputs: &[Option<&Arc<HostBuffer>>],
        env: EvalEnv<'_>,
    ) -> Result<Arc<HostBuffer>> {
        let pool = self.pool(env.options.threads);
        let inputs = host_inputs(inputs);
        let from = ScanInput::Producer(producer, &inputs);
        let out = self.executor(pool.as_deref()).scan(scan, from, env)?;
        env.stats.add(Counter::KernelLaunches, 1);
        Ok(Arc::new(out))
    }

    fn scan_into<'a>(
        &self,
        scan: &ScanLaunch,
        input: ScanInput<'_, Arc<HostBuffer>>,
        out: SliceMut<'a>,
        env: EvalEnv<'_>,
    ) -> Result<Option<SliceMut<'a>>> {
        let pool = self.pool(env.options.threads);
        let executor = self.executor(pool.as_deref());
        let declined = match input {
            ScanInput::Values(values) => {
                executor.scan_into(scan, ScanInput::Values(values), out, env)?
            }
            ScanInput::Producer(producer, inputs) => {
                let inputs = host_inputs(inputs);
                let from = ScanInput::Producer(producer, &inputs);
                executor.scan_into(scan, from, out, env)?
            }
        };
        if declined.is_none() {
            env.stats.add(Counter::KernelLaunches, 1);
        }
        Ok(declined)
    }

    fn explain_launch(&self, index: usize, launch: &Launch) -> String {
        if let Some(split) = lazyfuse_fusion::rows::tile_split(&launch.kernel) {
            let mut text = match launch.kernel.reduces_leading_axes() {
                // A column program's stages each reduce the whole domain.
                true => format!("k{index} runs each part below over the whole domain in turn:\n"),
                false => format!(
                    "k{index} runs at most {} rows at a time (tiles shared evenly by the \
                     workers), each part below over them while they are in cache:\n",
                    rows::tile_rows(launch)
                ),
            };
            for part in &split.parts {
                let what = match &part.writes {
                    Writes::Row(k) => format!("stage {k}"),
                    Writes::Stored(values) => {
                        format!("{} value(s) stored for the tile", values.len())
                    }
                    Writes::Outputs => "outputs".to_string(),
                };
                text.push_str(&format!("  {what} on {}\n", self.tier(&part.kernel)));
            }
            return text;
        }
        format!("k{index} runs on {}\n", self.tier(&launch.kernel))
    }

    fn user_kernel_executor(&self, launch: &KernelLaunch) -> String {
        format!(
            "{} (the cpu backend has no device)",
            user::describe(launch, self.settings.jit)
        )
    }
}
