//! The `cuda` backend: fused kernels compiled by NVRTC and run on an NVIDIA
//! GPU through cudarc (loaded dynamically: a machine without CUDA builds and
//! runs everything else).
//!
//! Owns: the CUDA runtime (driver probe, caching pool, pinned staging, module
//! caches in memory and on disk, launches of fused and user kernels). Must
//! not know: how programs are fused or planned, `Array`. Every driver call
//! is behind `driver::probe`'s check that the library is present.

pub mod disk_cache;
pub mod driver;
mod engine;
pub mod pool;

pub use engine::{CudaAllocator, CudaBuffer, CudaEngine, CudaRuntime};
