//! lazyfuse code generation and execution: the backends that run the fused
//! kernels of `lazyfuse-fusion`.
//!
//! - [`cpu`]: executes kernels on host memory, chunk by chunk.
//! - [`sim`]: a simulated device with memory of its own; copies are real and
//!   counted. Kernels run through the cpu interpreter until the SIMT
//!   interpreter of lowered device programs lands.
//! - `cuda`: not built yet.

pub mod cpu;
pub mod executor;
pub mod sim;

pub use cpu::CpuEngine;
pub use sim::SimEngine;

/// The fusion crate, re-exported for engines' users.
pub use lazyfuse_fusion as fusion;
