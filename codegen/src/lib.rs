//! lazyfuse code generation: the `cpu` (chunked vector programs on rayon),
//! `sim` (a SIMT interpreter with its own device memory) and `cuda` (CUDA C
//! through NVRTC and cudarc) backends, each consuming `FusedKernel`s from
//! `lazyfuse-fusion`.
//!
//! Status: the crate exists so the layering of the workspace is in place;
//! the backends land with their issues.

pub use lazyfuse_fusion as fusion;
