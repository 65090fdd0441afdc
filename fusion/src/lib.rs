//! lazyfuse fusion: from a demand's expression graph to a [`Program`] of
//! fused kernels and a [`Plan`] of copies and launches.
//!
//! The pipeline ([`compile`]) runs in this order:
//! 1. [`simplify`](simplify::simplify): common subexpressions, constant
//!    folding, exact integer no-ops, dead nodes — before fusion, so kernels
//!    see the smallest graph;
//! 2. [`partition`](partition::partition): which nodes are materialised;
//! 3. emission: each kernel root's fused cone becomes a [`FusedKernel`]
//!    (views folded into strides, constants into arguments); element-wise
//!    roots over the same domain that share work become one multi-output
//!    kernel;
//! 4. ordering: launches sorted so each reads only earlier results.
//!
//! [`plan`](plan::plan) then decides residency for device backends, and
//! the [`Driver`] runs every demand: cached program, plan, steps on a
//! backend's [`Runtime`].

pub mod cache;
pub mod driver;
pub mod explain;
pub mod ir;
pub mod partition;
pub mod pipeline;
pub mod plan;
pub mod program;
pub mod runtime;
pub mod simplify;

mod bound;
mod emit;
mod group;
mod index_map;
pub mod rows;

pub use cache::ProgramCache;
pub use driver::Driver;
pub use ir::{
    Body, CombineIr, FusedKernel, InputKind, Inst, KernelInput, Layout, ReductionIr, ValueId,
};
pub use partition::{FusionOptions, Placement};
pub use pipeline::{is_pipeline_stream, pipeline_stream, Pipeline};
pub use plan::{Plan, Step};
pub use program::{
    BufferDesc, BufferId, BufferKind, InputBinding, Launch, OutputBinding, Program, ScanKind,
    ScanLaunch, UserLaunch, Work,
};
pub use runtime::{count_written_copies, launch_then_scan, Runtime, ScanInput};

use lazyfuse_core::{ExprGraph, Result};

/// Fuses a demand's graph into a program of kernels.
pub fn compile(graph: &ExprGraph, options: &FusionOptions) -> Result<Program> {
    let graph = simplify::simplify(graph)?;
    let partition = partition::partition(&graph, options)?;
    group::build_program(graph, partition, options)
}
