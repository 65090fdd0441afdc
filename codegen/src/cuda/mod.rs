//! The `cuda` backend: fused kernels compiled by NVRTC and run on an NVIDIA
//! GPU through cudarc (loaded dynamically: a machine without CUDA builds and
//! runs everything else).

pub mod disk_cache;
pub mod driver;
mod engine;
pub mod pool;

pub use engine::{CudaAllocator, CudaBuffer, CudaEngine, CudaRuntime};
