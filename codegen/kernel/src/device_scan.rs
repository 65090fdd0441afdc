//! A device runtime's scans (`Runtime::scan` and `Runtime::scan_fused` of
//! `sim` and `cuda`): running scans by [`ScanKernels`], arg-reductions by
//! [`ArgKernels`], each launched by the runtime's `run` on scratch buffers
//! from its `zeros`; a producer the kernels cannot compute inside them is
//! launched first.

use std::sync::Arc;

use lazyfuse_core::reference::Lines;
use lazyfuse_core::{DType, DeviceBuffer, EvalEnv, Result};
use lazyfuse_fusion::{launch_then_scan, Launch, Runtime, ScanKind, ScanLaunch};

use crate::scan::DeviceRun;
use crate::{ArgKernels, ScanKernels};

/// Scratch buffers of a dtype and length, as the runtime allocates them.
pub type Zeros<'a> = &'a dyn Fn(DType, usize) -> Result<Arc<dyn DeviceBuffer>>;

/// `scan` of the buffer `input`.
pub fn scan(
    scan: &ScanLaunch,
    input: &Arc<dyn DeviceBuffer>,
    env: EvalEnv<'_>,
    zeros: Zeros<'_>,
    run: DeviceRun<'_>,
) -> Result<Arc<dyn DeviceBuffer>> {
    let lines = Lines::of(&scan.shape, scan.axis);
    let (op, input) = ((scan.op, scan.dtype), Arc::clone(input));
    match scan.kind {
        ScanKind::Running => {
            ScanKernels::scan(op, lines, input, env, |len| zeros(scan.dtype, len), run)
        }
        ScanKind::Arg => ArgKernels::reduce(op, lines, input, env, zeros, run),
    }
}

/// `scan` of `producer`'s values, computed inside the scan's kernels when
/// they can replay it, else by `runtime` launching it first.
pub fn scan_fused<R: Runtime<Buffer = Arc<dyn DeviceBuffer>>>(
    runtime: &R,
    scan: &ScanLaunch,
    producer: &Launch,
    inputs: &[Option<&Arc<dyn DeviceBuffer>>],
    env: EvalEnv<'_>,
    zeros: Zeros<'_>,
    run: DeviceRun<'_>,
) -> Result<Arc<dyn DeviceBuffer>> {
    let (op, lines) = ((scan.op, scan.dtype), Lines::of(&scan.shape, scan.axis));
    let fused = match scan.kind {
        ScanKind::Running => {
            let zeros = |len| zeros(scan.dtype, len);
            ScanKernels::scan_fused(op, lines, producer, inputs, env, zeros, run)?
        }
        ScanKind::Arg => ArgKernels::reduce_fused(op, lines, producer, inputs, env, zeros, run)?,
    };
    match fused {
        Some(out) => Ok(out),
        None => launch_then_scan(runtime, scan, producer, inputs, env),
    }
}
