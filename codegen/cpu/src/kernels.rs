//! Running one fused launch on host memory: the compile cache of register
//! machines, the worker pools, and the dispatch between element-wise and
//! reduction kernels.

use rustc_hash::FxHashMap as HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use lazyfuse_core::{Counter, DType, EvalEnv, HostBuffer, Literal, Result, SliceMut};
use lazyfuse_fusion::rows::TilePart;
use lazyfuse_fusion::{
    CombineIr, FusedKernel, Inst, Launch, Layout, ScanInput, ScanKind, ScanLaunch, ValueId,
};

use super::machine::Machine;
use super::settings::CpuSettings;
use super::{arg, interp, reduce, rows, run, scan};

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
        let fixed: Vec<bool> = kernel
            .inputs
            .iter()
            .map(|input| input.layout == Layout::Scalar)
            .collect();
        let machine = match &kernel.reduction {
            Some(r) => {
                // Compiled code combines in the value's own dtype.
                let op = match r.combine {
                    CombineIr::Builtin(op) if kernel.body.dtype(r.value) == r.acc => Some(op),
                    _ => None,
                };
                Machine::new(&kernel.body, &fixed, &[], Some(r.value), op)?
            }
            None => Machine::new(&kernel.body, &fixed, &kernel.outputs, None, None)?,
        };
        Ok(CompiledKernel {
            kernel: Arc::clone(kernel),
            machine,
        })
    }
}

/// The compile cache: one compiled form per structural kernel hash, a hit
/// confirmed by comparing the kernels.
#[derive(Debug, Default)]
pub struct KernelCache {
    kernels: Mutex<Kernels>,
}

#[derive(Debug, Default)]
struct Kernels {
    by_hash: HashMap<u64, Arc<CompiledKernel>>,
    /// The same entries by the address of a `FusedKernel` looked up before:
    /// a cached program hands the same `Arc` to every demand, so a repeated
    /// demand skips hashing and comparing the kernel. Sound because the
    /// entry holds that `Arc`, so no other kernel can have the address.
    by_address: HashMap<usize, (Arc<FusedKernel>, Arc<CompiledKernel>)>,
    /// The compiled kernels of each row program's split (`rows`), by the
    /// address of the row program, as `by_address`.
    row_parts: HashMap<usize, (Arc<FusedKernel>, Arc<RowParts>)>,
}

/// A row program's `tile_split`, each part's kernel compiled.
#[derive(Debug)]
struct RowParts {
    parts: Vec<(Arc<CompiledKernel>, TilePart)>,
    stored: Vec<DType>,
}

/// Entries kept by address before that map starts over: programs compiled
/// anew bring new addresses for the same kernels, one per program, so it
/// keeps as many as the program cache keeps programs.
const ADDRESSES_KEPT: usize = lazyfuse_fusion::cache::CAPACITY;

impl KernelCache {
    /// The compiled form of `kernel`, counting a compilation or a cache hit.
    pub fn get(&self, kernel: &Arc<FusedKernel>, env: EvalEnv<'_>) -> Result<Arc<CompiledKernel>> {
        let address = Arc::as_ptr(kernel) as usize;
        let mut map = self.kernels.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((seen, found)) = map.by_address.get(&address) {
            if Arc::ptr_eq(seen, kernel) {
                env.stats.add(Counter::KernelCacheHits, 1);
                return Ok(Arc::clone(found));
            }
        }
        let hash = kernel.structural_hash();
        let compiled = match map.by_hash.get(&hash) {
            Some(found) if found.kernel == *kernel => {
                env.stats.add(Counter::KernelCacheHits, 1);
                Arc::clone(found)
            }
            _ => {
                let compiled = Arc::new(CompiledKernel::new(kernel)?);
                env.stats.add(Counter::KernelsCompiled, 1);
                map.by_hash.insert(hash, Arc::clone(&compiled));
                compiled
            }
        };
        if map.by_address.len() >= ADDRESSES_KEPT {
            map.by_address.clear();
        }
        map.by_address
            .insert(address, (Arc::clone(kernel), Arc::clone(&compiled)));
        Ok(compiled)
    }

    /// Row program `kernel`'s `tile_split` (see `lazyfuse_fusion::rows`),
    /// its kernels compiled, made once per program kernel.
    fn row_parts(&self, kernel: &Arc<FusedKernel>, env: EvalEnv<'_>) -> Result<Arc<RowParts>> {
        let address = Arc::as_ptr(kernel) as usize;
        {
            let map = self.kernels.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some((seen, parts)) = map.row_parts.get(&address) {
                if Arc::ptr_eq(seen, kernel) {
                    env.stats.add(Counter::KernelCacheHits, 1);
                    return Ok(Arc::clone(parts));
                }
            }
        }
        let split = lazyfuse_fusion::rows::tile_split(kernel)
            .ok_or_else(|| lazyfuse_core::Error::internal("cpu backend", "not a row program"))?;
        let parts = Arc::new(RowParts {
            stored: split.stored,
            parts: split
                .parts
                .into_iter()
                .map(|part| Ok((self.get(&Arc::new(part.kernel.clone()), env)?, part)))
                .collect::<Result<_>>()?,
        });
        let mut map = self.kernels.lock().unwrap_or_else(PoisonError::into_inner);
        if map.row_parts.len() >= ADDRESSES_KEPT {
            map.row_parts.clear();
        }
        map.row_parts
            .insert(address, (Arc::clone(kernel), Arc::clone(&parts)));
        Ok(parts)
    }
}

/// The worker pool for `threads` threads (0: `LAZYFUSE_THREADS` when it
/// names a positive number, else one per core), shared by all contexts
/// asking for that many; `None` runs on the calling thread.
pub fn pool(threads: usize) -> Option<Arc<rayon::ThreadPool>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    // Asking the OS reads cgroup files: do it once, not per launch.
    static CORES: OnceLock<usize> = OnceLock::new();
    let threads = if threads == 0 {
        *CORES.get_or_init(|| {
            // Several processes sharing the cores (Dask's worker processes)
            // each take their share, as OMP_NUM_THREADS does for OpenMP.
            std::env::var("LAZYFUSE_THREADS")
                .ok()
                .and_then(|n| n.trim().parse::<usize>().ok())
                .filter(|&n| n > 0)
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        })
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

/// What runs a launch: the compile cache, the settings and the workers.
#[derive(Clone, Copy)]
pub struct Executor<'a> {
    /// Compiled kernels.
    pub cache: &'a KernelCache,
    /// The CPU backend's settings.
    pub settings: &'a CpuSettings,
    /// The workers (`None`: the calling thread).
    pub pool: Option<&'a rayon::ThreadPool>,
}

impl Executor<'_> {
    /// Runs one launch on host memory (through the cache).
    pub fn launch(
        self,
        launch: &Launch,
        inputs: &[Option<&HostBuffer>],
        env: EvalEnv<'_>,
    ) -> Result<Vec<HostBuffer>> {
        if launch.kernel.is_row_program() {
            return self
                .row_program(launch, inputs, Vec::new(), env)?
                .into_iter()
                .map(|b| {
                    b.ok_or_else(|| {
                        lazyfuse_core::Error::internal("cpu backend", "an output was not written")
                    })
                })
                .collect();
        }
        if let Some(zeros) = zero_fill(launch)? {
            return Ok(zeros);
        }
        let compiled = self.cache.get(&launch.kernel, env)?;
        let (pool, settings) = (self.pool, self.settings);
        if launch.kernel.reduction.is_some() {
            let reduced = reduce::reduction(&compiled.machine, launch, inputs, pool, settings.jit)?;
            return match reduced {
                Some(out) => Ok(vec![out]),
                None => interp::run_generic(launch, inputs),
            };
        }
        run::elementwise(
            &compiled.machine,
            launch,
            inputs,
            pool,
            settings,
            Vec::new(),
        )?
        .into_iter()
        .map(|b| {
            b.ok_or_else(|| {
                lazyfuse_core::Error::internal("cpu backend", "an output was not written")
            })
        })
        .collect()
    }

    /// Runs a row program: its split's kernels through the cache, a tile of
    /// rows at a time (`rows`).
    fn row_program(
        self,
        launch: &Launch,
        inputs: &[Option<&HostBuffer>],
        outs: Vec<(usize, SliceMut<'_>)>,
        env: EvalEnv<'_>,
    ) -> Result<Vec<Option<HostBuffer>>> {
        let compiled = self.cache.row_parts(&launch.kernel, env)?;
        let parts: Vec<rows::Part<'_>> = compiled
            .parts
            .iter()
            .map(|(c, part)| rows::Part {
                kernel: &c.kernel,
                machine: &c.machine,
                sources: &part.sources,
                writes: &part.writes,
            })
            .collect();
        let split = (parts.as_slice(), compiled.stored.as_slice());
        rows::run(split, launch, inputs, outs, (self.pool, self.settings))
    }

    /// Runs an element-wise launch whose outputs `(index, out)` go into
    /// the caller's slices.
    pub fn launch_into(
        self,
        launch: &Launch,
        inputs: &[Option<&HostBuffer>],
        outs: Vec<(usize, SliceMut<'_>)>,
        env: EvalEnv<'_>,
    ) -> Result<Vec<Option<HostBuffer>>> {
        if launch.kernel.is_row_program() {
            return self.row_program(launch, inputs, outs, env);
        }
        let compiled = self.cache.get(&launch.kernel, env)?;
        run::elementwise(
            &compiled.machine,
            launch,
            inputs,
            self.pool,
            self.settings,
            outs,
        )
    }

    /// Runs `scan` (a scan or an arg-reduction) over `input` into a new buffer.
    pub fn scan(
        self,
        scan: &ScanLaunch,
        input: ScanInput<'_, HostBuffer>,
        env: EvalEnv<'_>,
    ) -> Result<HostBuffer> {
        self.with_scan_input(input, env, |input| match scan.kind {
            ScanKind::Running => scan::scan(scan, input, self.pool),
            ScanKind::Arg => arg::arg_reduce(scan, input, self.pool),
        })
    }

    /// Runs `scan` over `input` into the caller's `out`; `out` back when it
    /// cannot write there.
    pub fn scan_into<'o>(
        self,
        scan: &ScanLaunch,
        input: ScanInput<'_, HostBuffer>,
        out: SliceMut<'o>,
        env: EvalEnv<'_>,
    ) -> Result<Option<SliceMut<'o>>> {
        self.with_scan_input(input, env, |input| match scan.kind {
            ScanKind::Running => scan::scan_into(scan, input, self.pool, out),
            ScanKind::Arg => arg::arg_reduce_into(scan, input, self.pool, out),
        })
    }

    /// Runs `run` with `input` as the scan module reads it (a producer
    /// compiled through the cache).
    fn with_scan_input<T>(
        self,
        input: ScanInput<'_, HostBuffer>,
        env: EvalEnv<'_>,
        run: impl FnOnce(&scan::Input<'_>) -> Result<T>,
    ) -> Result<T> {
        match input {
            ScanInput::Values(values) => run(&scan::Input::Values(values)),
            ScanInput::Producer(launch, inputs) => {
                let compiled = self.cache.get(&launch.kernel, env)?;
                run(&scan::Input::Producer(scan::Producer {
                    machine: &compiled.machine,
                    launch,
                    inputs,
                    settings: self.settings,
                }))
            }
        }
    }
}

/// The outputs of a launch that only fills them with zero bits (`zeros`,
/// `empty`, the fresh output a library kernel writes): memory the system
/// hands out zeroed, with no pass that writes it (the first writer pays
/// for the pages, as it would after a fill). `None` for other launches.
fn zero_fill(launch: &Launch) -> Result<Option<Vec<HostBuffer>>> {
    let kernel = &launch.kernel;
    let zero = |v: &ValueId| match kernel.body.insts.get(v.index()) {
        Some(Inst::Arg(i)) => launch
            .args
            .get(*i as usize)
            .is_some_and(Literal::is_zero_bits),
        _ => false,
    };
    if kernel.reduction.is_some() || kernel.outputs.is_empty() || !kernel.outputs.iter().all(zero) {
        return Ok(None);
    }
    let len = launch.domain_len();
    kernel
        .outputs
        .iter()
        .map(|&v| crate::pages::zeroed(kernel.body.dtype(v), len))
        .collect::<Result<_>>()
        .map(Some)
}
