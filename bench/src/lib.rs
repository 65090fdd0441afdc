//! The library of `lazyfuse-bench`: the expression suite (E1–E6 and the
//! latency case), the hand-written fused loops it is measured against, the
//! timing and the reports. The `lazyfuse-bench` binary runs it as a whole;
//! the criterion bench `targets` (`cargo bench -p lazyfuse-bench`) measures
//! the CPU backend's performance targets with the same cases and hand loops.
//! The `lazyfuse-gpu` binary times the cuda backend against CuPy on a GPU
//! (`scripts/gpu-check.sh`).

pub mod cases;
pub mod cli;
pub mod measure;
pub mod mvec;
pub mod plot;
pub mod programs;
pub mod reference;
pub mod report;
pub mod runner;
pub mod types;

/// The harness's error: any error, with a message for people.
pub type Error = Box<dyn std::error::Error + Send + Sync>;
/// The harness's result.
pub type Result<T> = std::result::Result<T, Error>;
