//! **lazyfuse**: lazy, fused array expressions — Numba-style ufuncs and
//! reductions, CuPy-style arrays — for CUDA, a simulated device and the CPU.
//!
//! Operations on [`Array`]s only build an expression graph; nothing is
//! copied, compiled or run until a result is demanded (`to_vec`, `item`,
//! `read_into`, `eval`).
//!
//! ```
//! use lazyfuse::{Context, Expr, Ufunc};
//!
//! let cx = Context::cpu();
//! let a = cx.from_slice(&[1.0f32, 1.0, 2.0]);
//! let b = cx.from_slice(&[5.0f32, 4.0, 9.0]);
//! let c = cx.from_slice(&[2.0f32, 3.0, 1.0]);
//! let disc = Ufunc::new("discriminant", |[a, b, c]: [Expr; 3]| (b * b - 4.0 * a * c).sqrt());
//! let d = disc.call(&[&a, &b, &c]);
//! let total = d.sum();
//! assert_eq!(cx.stats().kernel_launches, 0); // nothing has run yet
//! assert_eq!(d.to_vec::<f32>()?, vec![17f32.sqrt(), 2.0, 73f32.sqrt()]);
//! assert!((total.item::<f32>()? - (17f32.sqrt() + 2.0 + 73f32.sqrt())).abs() < 1e-5);
//! # Ok::<(), lazyfuse::Error>(())
//! ```
//!
//! Crates: `lazyfuse-core` (graph, types, reference evaluator),
//! `lazyfuse-fusion` (passes, fusion, planning, the driver), the runtimes
//! (`lazyfuse-cpu`, `lazyfuse-sim`, `lazyfuse-cuda`), device code
//! (`lazyfuse-device`), user kernels (`lazyfuse-kernel`) and the operations
//! built as kernels and host routines (`lazyfuse-library`: sort, take,
//! matmul, …); this facade wires them into a [`Context`] and re-exports
//! them (`docs/architecture.md`).

mod context;
pub mod gufunc;
mod inspect;

pub use context::{Context, ContextBuilder};
pub use gufunc::GUfunc;
pub use inspect::cuda_source;
pub use lazyfuse_core::{
    can_cast_safely, half, promote, Array, AxisIndex, CleanupGuard, DType, DeviceEngine, Element,
    Error, Expr, ExprOperand, HostBuffer, MappedBuf, Operand, Pending, PinnedBuf, Reducer, Result,
    Scalar, Session, Signature, SliceMut, Stats, Stream, TimelineEvent, Ufunc,
};
pub use lazyfuse_cpu::JitMode;
pub use lazyfuse_fusion::is_pipeline_stream;
pub use lazyfuse_library::{
    argsort, argsort_kernel, argsort_stage_kernel, assign_region, bincount, bincount_kernel, fft,
    fft_kernel, kernel, matmul, matmul_kernel, partition, partition_kernel, region_kernel,
    region_kernels, rfft_kernel, roll, roll_kernel, scatter, scatter_kernels, searchsorted,
    searchsorted_kernel, sort, sort_kernel, sort_stage_kernel, take, take_kernels, ArrayLibrary,
    ComplexArray, ComplexBinary, ComplexDType, ComplexOperand, ComplexResult, ComplexUnary,
    IndexMode, Norm, Region, Side, STAGED_FROM,
};
pub use lazyfuse_sim::SimTiming;

/// Lower-level pieces for backend and pass authors: the graph, engines, ops.
pub mod core {
    pub use lazyfuse_core::*;
}

/// The backends and device code generation: lowering to `DeviceProgram`,
/// the CUDA C printer, NVRTC, the SIMT simulator, the CUDA engine.
pub mod codegen {
    /// The CPU runtime.
    pub use lazyfuse_cpu as cpu;
    pub use lazyfuse_cpu::{CpuEngine, CpuRuntime, CpuSettings, JitMode};
    /// The CUDA runtime.
    pub use lazyfuse_cuda as cuda;
    /// Device programs: lowering, the verifier, the CUDA printer, NVRTC, the SIMT interpreter.
    pub use lazyfuse_device as device;
    /// The fusion crate.
    pub use lazyfuse_fusion as fusion;
    /// User kernels.
    pub use lazyfuse_kernel as kernel;
    /// The simulated device.
    pub use lazyfuse_sim as sim;
    pub use lazyfuse_sim::{SimEngine, SimRuntime};
}
