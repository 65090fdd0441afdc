//! lazyfuse fusion: graph passes (dead-node removal, common-subexpression
//! elimination, constant folding), fusion of element-wise chains and of the
//! element-wise work feeding reductions into `FusedKernel`s, and the planner
//! that decides where every buffer lives.
//!
//! Status: the crate exists so the layering of the workspace is in place;
//! the passes land with the fusion issue. Until then every backend runs the
//! unfused reference evaluator of `lazyfuse-core`.

pub use lazyfuse_core as core;
