//! Running a fused [`Program`](lazyfuse_fusion::Program) over buffers: shared by the host (cpu) and
//! simulated-device backends, which differ only in where buffers live.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use lazyfuse_core::{Counter, EvalEnv, HostBuffer, Options, Result};
use lazyfuse_fusion::{FusedKernel, FusionOptions, Launch};

use crate::cpu::interp;

/// The compile cache: one compiled form per structural kernel hash.
///
/// The cpu backend interprets kernels, so "compiling" validates the kernel
/// and keeps it; the counters mean what they will mean for generated code.
#[derive(Debug, Default)]
pub struct KernelCache {
    kernels: Mutex<HashMap<u64, Arc<FusedKernel>>>,
}

impl KernelCache {
    /// The cached form of `kernel`, counting a compilation or a cache hit.
    pub fn get(&self, kernel: &Arc<FusedKernel>, env: EvalEnv<'_>) -> Result<Arc<FusedKernel>> {
        let hash = kernel.structural_hash();
        let mut map = self.kernels.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(found) = map.get(&hash) {
            env.stats.add(Counter::KernelCacheHits, 1);
            return Ok(Arc::clone(found));
        }
        kernel.verify()?;
        env.stats.add(Counter::KernelsCompiled, 1);
        map.insert(hash, Arc::clone(kernel));
        Ok(Arc::clone(kernel))
    }
}

/// Fusion settings from a context's options.
pub fn fusion_options(options: &Options) -> FusionOptions {
    FusionOptions {
        enabled: options.fusion,
        ..FusionOptions::default()
    }
}

/// Runs one launch on host memory (through the cache), counting it.
pub fn launch(
    cache: &KernelCache,
    launch: &Launch,
    inputs: &[Option<&HostBuffer>],
    env: EvalEnv<'_>,
) -> Result<Vec<HostBuffer>> {
    let kernel = cache.get(&launch.kernel, env)?;
    env.stats.add(Counter::KernelLaunches, 1);
    let _ = kernel;
    interp::run(launch, inputs)
}
