//! Library kernels (region assignment, gathers, matmul) built once per
//! process and key, whatever the context that first launches them.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, OnceLock, PoisonError};

use lazyfuse_core::Result;

use crate::kernel::Kernel;

/// Kernels by key, built on first use: a `static` per kind of kernel.
pub(crate) struct KernelCache<K> {
    kernels: OnceLock<Mutex<HashMap<K, Kernel>>>,
}

impl<K: Hash + Eq> KernelCache<K> {
    /// An empty cache (usable in a `static`).
    pub(crate) const fn new() -> KernelCache<K> {
        KernelCache {
            kernels: OnceLock::new(),
        }
    }

    /// The kernel of `key`, built by `build` the first time. The lock is
    /// not held while building (two threads may both build one; the
    /// second's copy is dropped): a build never waits on another.
    pub(crate) fn get_or_build(
        &self,
        key: K,
        build: impl FnOnce() -> Result<Kernel>,
    ) -> Result<Kernel> {
        let kernels = self.kernels.get_or_init(Mutex::default);
        let lock = || kernels.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(kernel) = lock().get(&key) {
            return Ok(kernel.clone());
        }
        let kernel = build()?;
        Ok(lock().entry(key).or_insert(kernel).clone())
    }
}
