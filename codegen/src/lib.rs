//! lazyfuse code generation and execution: the runtimes on which
//! `lazyfuse-fusion`'s driver runs every demand.
//!
//! - [`cpu`]: executes kernels on host memory, chunk by chunk.
//! - [`device`]: fused kernels lowered to a SIMT [`device::DeviceProgram`],
//!   printed as CUDA C and compiled by NVRTC, or executed by the SIMT
//!   interpreter.
//! - [`sim`]: a simulated device with memory of its own; copies are real and
//!   counted, kernels are the lowered device programs run by the SIMT
//!   interpreter.
//! - [`cuda`]: the CUDA runtime through cudarc (dynamic loading).

pub mod cpu;
pub mod cuda;
pub mod device;
pub mod kernel;
pub mod sim;

pub use cpu::{CpuEngine, CpuRuntime, CpuSettings, JitMode};
pub use sim::{SimEngine, SimRuntime};

/// The fusion crate, re-exported for engines' users.
pub use lazyfuse_fusion as fusion;
