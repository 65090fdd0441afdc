//! Running one fused launch on host memory: the compile cache of register
//! machines, the worker pools, and the dispatch between element-wise and
//! reduction kernels.

use rustc_hash::FxHashMap as HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use lazyfuse_core::{Counter, EvalEnv, HostBuffer, Result, SliceMut};
use lazyfuse_fusion::{CombineIr, FusedKernel, Launch};

use super::machine::Machine;
use super::settings::CpuSettings;
use super::{interp, reduce, run};

/// A kernel prepared for the CPU: its register machine.
#[derive(Debug)]
pub struct CompiledKernel {
    /// The kernel.
    pub kernel: Arc<FusedKernel>,
    machine: Machine,
}

impl CompiledKernel {
    fn new(kernel: &Arc<FusedKernel>) -> Result<CompiledKernel> {
        kernel.verify()?;
        let machine = match &kernel.reduction {
            Some(r) => {
                // Compiled code combines in the value's own dtype.
                let op = match r.combine {
                    CombineIr::Builtin(op) if kernel.body.dtype(r.value) == r.acc => Some(op),
                    _ => None,
                };
                Machine::new(&kernel.body, &[], Some(r.value), op)?
            }
            None => Machine::new(&kernel.body, &kernel.outputs, None, None)?,
        };
        Ok(CompiledKernel {
            kernel: Arc::clone(kernel),
            machine,
        })
    }
}

/// The compile cache: one compiled form per structural kernel hash.
#[derive(Debug, Default)]
pub struct KernelCache {
    kernels: Mutex<HashMap<u64, Arc<CompiledKernel>>>,
}

impl KernelCache {
    /// The compiled form of `kernel`, counting a compilation or a cache hit.
    pub fn get(&self, kernel: &Arc<FusedKernel>, env: EvalEnv<'_>) -> Result<Arc<CompiledKernel>> {
        let hash = kernel.structural_hash();
        let mut map = self.kernels.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(found) = map.get(&hash) {
            if found.kernel == *kernel {
                env.stats.add(Counter::KernelCacheHits, 1);
                return Ok(Arc::clone(found));
            }
        }
        let compiled = Arc::new(CompiledKernel::new(kernel)?);
        env.stats.add(Counter::KernelsCompiled, 1);
        map.insert(hash, Arc::clone(&compiled));
        Ok(compiled)
    }
}

/// The worker pool for `threads` threads (0: one per core), shared by all
/// contexts asking for that many; `None` runs on the calling thread.
pub fn pool(threads: usize) -> Option<Arc<rayon::ThreadPool>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    // Asking the OS reads cgroup files: do it once, not per launch.
    static CORES: OnceLock<usize> = OnceLock::new();
    let threads = if threads == 0 {
        *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    } else {
        threads
    };
    if threads <= 1 {
        return None;
    }
    let mut pools = POOLS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(pool) = pools.get(&threads) {
        return Some(Arc::clone(pool));
    }
    let pool = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("lazyfuse-cpu-{i}"))
            .build()
            .ok()?,
    );
    pools.insert(threads, Arc::clone(&pool));
    Some(pool)
}

/// Runs one launch on host memory (through the cache).
pub fn launch(
    cache: &KernelCache,
    settings: &CpuSettings,
    launch: &Launch,
    inputs: &[Option<&HostBuffer>],
    env: EvalEnv<'_>,
) -> Result<Vec<HostBuffer>> {
    let compiled = cache.get(&launch.kernel, env)?;
    let pool = pool(env.options.threads);
    if launch.kernel.reduction.is_some() {
        if let Some(out) = reduce::reduction(
            &compiled.machine,
            launch,
            inputs,
            pool.as_deref(),
            settings.jit,
        )? {
            return Ok(vec![out]);
        }
        return interp::run_generic(launch, inputs);
    }
    run::elementwise(
        &compiled.machine,
        launch,
        inputs,
        pool.as_deref(),
        settings,
        None,
    )?
    .into_iter()
    .map(|b| {
        b.ok_or_else(|| lazyfuse_core::Error::internal("cpu backend", "an output was not written"))
    })
    .collect()
}

/// Runs an element-wise launch whose output `index` goes into the caller's `out`.
pub fn launch_into(
    cache: &KernelCache,
    settings: &CpuSettings,
    launch: &Launch,
    inputs: &[Option<&HostBuffer>],
    index: usize,
    out: SliceMut<'_>,
    env: EvalEnv<'_>,
) -> Result<Vec<Option<HostBuffer>>> {
    let compiled = cache.get(&launch.kernel, env)?;
    let pool = pool(env.options.threads);
    run::elementwise(
        &compiled.machine,
        launch,
        inputs,
        pool.as_deref(),
        settings,
        Some((index, out)),
    )
}
