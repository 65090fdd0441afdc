//! Programs on the device: fused kernels lowered and printed as CUDA C,
//! compiled by NVRTC (a cubin for the device, or PTX the driver compiles),
//! cached in memory by the kernel's hash and on disk by the source's.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;
use lazyfuse_core::{Counter, EvalEnv, Result};
use lazyfuse_device::ir::DeviceProgram;
use lazyfuse_device::nvrtc::{self, Target};
use lazyfuse_device::{bind, cuda, lower};
use lazyfuse_fusion::{FusedKernel, Launch};

use super::super::disk_cache::{CacheKey, ImageKind};
use super::super::driver::device_error;
use super::{lock, CudaRuntime};

/// A lowered program loaded on the device.
pub(super) struct LoadedProgram {
    /// The kernel it was lowered from: confirms a hit on its hash.
    pub(super) kernel: Arc<FusedKernel>,
    pub(super) program: DeviceProgram,
    pub(super) functions: Vec<CudaFunction>,
    _module: Arc<CudaModule>,
}

/// 64-bit FNV-1a: a hash that is stable across builds, for disk cache keys.
pub(super) fn stable_hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl CudaRuntime {
    /// The loaded program for `launch`: from memory, the disk cache, or NVRTC.
    pub(super) fn program(&self, launch: &Launch, env: EvalEnv<'_>) -> Result<Arc<LoadedProgram>> {
        let index = bind::index_type(launch);
        let key = (launch.kernel.structural_hash(), index);
        if let Some(found) = lock(&self.loaded).get(&key) {
            if *found.kernel == *launch.kernel {
                env.stats.add(Counter::KernelCacheHits, 1);
                return Ok(Arc::clone(found));
            }
        }
        let program = lower::lower(&launch.kernel, index)?;
        let source = cuda::print(&program);
        let module = self.load_compiled(&program.name, &source, env)?;
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
            kernel: Arc::clone(&launch.kernel),
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
        let mut image = nvrtc::compile(name, source, &self.target)?.image;
        if let Target::Ptx(_) = self.target {
            // cuModuleLoadData reads PTX as a C string.
            image.push(0);
        }
        Ok(image)
    }

    /// The disk cache key of a compiled `source`.
    fn disk_key(&self, source: &str) -> CacheKey {
        let (arch, kind) = match &self.target {
            Target::Cubin(arch) => (arch.clone(), ImageKind::Cubin),
            Target::Ptx(arch) => (arch.clone(), ImageKind::Ptx),
        };
        CacheKey {
            program_hash: stable_hash(source.as_bytes()),
            source: source.to_string(),
            arch,
            nvrtc_version: self.nvrtc_version,
            kind,
        }
    }

    /// Loads `source` compiled: from the disk cache when a valid entry
    /// loads, else compiled by NVRTC (and cached).
    pub(super) fn load_compiled(
        &self,
        name: &str,
        source: &str,
        env: EvalEnv<'_>,
    ) -> Result<Arc<CudaModule>> {
        let key = self.disk_key(source);
        if let Some(image) = self.disk.load(&key) {
            // An entry the driver rejects (e.g. PTX newer than the driver
            // after a downgrade) is recompiled, not trusted.
            if let Ok(module) = self.ctx.load_module(Ptx::from_binary(image)) {
                env.stats.add(Counter::KernelCacheHits, 1);
                return Ok(module);
            }
        }
        let image = self.compile(name, source)?;
        env.stats.add(Counter::KernelsCompiled, 1);
        // The disk cache is an optimisation: a failed write is not an error.
        let _ = self.disk.store(&key, &image);
        self.ctx
            .load_module(Ptx::from_binary(image))
            .map_err(|e| device_error(format!("cuModuleLoadData {name}"), e))
    }
}
