//! The planner: where every buffer lives, and the copies that moves them.
//!
//! Launches are fused kernels and user kernel launches, in the program's
//! schedule. For a backend with device memory: a leaf is uploaded before
//! the first launch that reads it, unless it already has a device copy (uploaded by an
//! earlier demand or by `to_device`); kernel outputs are written on the
//! device and stay there; an intermediate is freed right after its last
//! reader; demanded results are not downloaded here — `to_vec`/`item`
//! download them when read, `eval` keeps them on the device. For a host
//! backend the plan is the launches alone.

use std::fmt;

use crate::program::{BufferId, BufferKind, Program, Work};

/// One step of a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Copy a leaf's host data to the device.
    Upload(BufferId),
    /// Run `Program::launches[i]`.
    Launch(usize),
    /// Run `Program::user_launches[i]`.
    UserLaunch(usize),
    /// Run `Program::scans[i]`.
    Scan(usize),
    /// Return an intermediate's device memory to the pool.
    Free(BufferId),
}

/// The steps of one demand, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Steps in execution order.
    pub steps: Vec<Step>,
}

impl Plan {
    /// Number of uploads.
    pub fn uploads(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| matches!(s, Step::Upload(_)))
            .count()
    }
}

/// Plans `program`. `has_device_copy(buffer)` tells whether a leaf already
/// lives on the device; `device` is false for host-only backends.
pub fn plan(program: &Program, device: bool, has_device_copy: impl Fn(BufferId) -> bool) -> Plan {
    let mut steps = Vec::new();
    let mut resident = vec![false; program.buffers.len()];
    let mut freed = vec![false; program.buffers.len()];
    for &work in &program.schedule {
        if device {
            for b in program.reads(work) {
                let leaf = matches!(program.buffers[b.index()].kind, BufferKind::Leaf { .. });
                if leaf && !resident[b.index()] && !has_device_copy(b) {
                    steps.push(Step::Upload(b));
                }
                resident[b.index()] = true;
            }
        }
        steps.push(step(work));
        for out in program.writes(work) {
            resident[out.index()] = true;
        }
        if device {
            for b in program.reads(work) {
                if program.dies_after[b.index()] == Some(work) && !freed[b.index()] {
                    steps.push(Step::Free(b));
                    freed[b.index()] = true;
                }
            }
        }
    }
    Plan { steps }
}

/// The step that runs `work`.
pub fn step(work: Work) -> Step {
    match work {
        Work::Fused(l) => Step::Launch(l),
        Work::User(u) => Step::UserLaunch(u),
        Work::Scan(s) => Step::Scan(s),
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for step in &self.steps {
            match step {
                Step::Upload(b) => writeln!(f, "  upload {b}")?,
                Step::Launch(l) => writeln!(f, "  launch k{l}")?,
                Step::UserLaunch(u) => writeln!(f, "  launch user kernel u{u}")?,
                Step::Scan(s) => writeln!(f, "  scan s{s}")?,
                Step::Free(b) => writeln!(f, "  free {b}")?,
            }
        }
        Ok(())
    }
}
