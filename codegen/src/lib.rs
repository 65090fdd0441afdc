//! lazyfuse code generation and execution: the backends that run the fused
//! kernels of `lazyfuse-fusion`.
//!
//! - [`cpu`]: executes kernels on host memory, chunk by chunk.
//! - [`device`]: fused kernels lowered to a SIMT [`device::DeviceProgram`],
//!   printed as CUDA C and compiled by NVRTC, or executed by the SIMT
//!   interpreter.
//! - [`sim`]: a simulated device with memory of its own; copies are real and
//!   counted, kernels are the lowered device programs run by the SIMT
//!   interpreter.
//! - `cuda`: not built yet.

pub mod cpu;
pub mod cuda;
pub mod device;
pub mod executor;
pub mod kernel;
pub mod sim;

pub use cpu::CpuEngine;
pub use sim::SimEngine;

/// The fusion crate, re-exported for engines' users.
pub use lazyfuse_fusion as fusion;
