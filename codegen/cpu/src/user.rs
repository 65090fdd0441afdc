//! User kernel launches on the CPU: compiled code ([`jit::kernel`]) for a
//! kernel built with the kernel builder that needs no lockstep threads,
//! its blocks spread over the worker pool; otherwise (barriers, shared
//! memory, atomics, an operation the JIT lacks, `JitMode::Never`) the
//! SIMT simulator on host memory.

use lazyfuse_core::{Error, HostBuffer, KernelLaunch, Literal, Result, Wide};
use lazyfuse_device::ir::{ArgSource, ParamKind};
use lazyfuse_kernel::BuiltKernel;
use rayon::prelude::*;

use super::jit::kernel::{self, KernelCode};
use super::jit::support::Unsupported;
use super::settings::JitMode;

/// Runs `launch` over `arrays` (all its array arguments); returns the new
/// values of the written ones, in order.
pub(crate) fn run(
    launch: &KernelLaunch,
    arrays: &[&HostBuffer],
    mode: JitMode,
    pool: Option<&rayon::ThreadPool>,
) -> Result<Vec<HostBuffer>> {
    let Some((built, code)) = compiled(launch, mode).ok() else {
        return launch.kernel.run_host(launch, arrays);
    };
    let mut outputs: Vec<HostBuffer> = launch
        .written
        .iter()
        .map(|&w| {
            arrays
                .get(w)
                .map(|a| (*a).clone())
                .ok_or_else(|| Error::internal("kernel launch", "a written argument is missing"))
        })
        .collect::<Result<_>>()?;
    let (args, lens) = bind(run_as(built), launch, arrays, &mut outputs)?;
    let [gx, gy, gz] = launch.grid.map(u64::from);
    let [bx, by, bz] = if built.host_variant().is_some() {
        [1, 1, 1]
    } else {
        launch.block.map(u64::from)
    };
    let threads = pool.map_or(1, rayon::ThreadPool::current_num_threads) as u64;
    let spread = u64::from(threads > 1);
    let geometry = [gx, gy, gz, bx, by, bz, spread];
    let blocks = gx * gy * gz;
    let run_blocks = |range: std::ops::Range<u64>| {
        // SAFETY: `bind` gave every buffer parameter the address and length
        // of a live buffer of its dtype (outputs are the private copies
        // above, which nothing else touches until this returns) and every
        // scalar its bits; `range` lies within the grid. Every access the
        // code makes is checked against its buffer's length. Blocks running
        // at once touch one output only if the user's kernel has blocks
        // writing one element (a race on a GPU too): the value is then
        // unspecified, the memory stays in bounds.
        unsafe { code.run(&args, &lens, &geometry, range) }
    };
    let in_bounds = match pool {
        // Inside the pool even for one block: the pieces of its
        // independent loops spread over the pool's threads.
        Some(pool) if threads > 1 => pool.install(|| {
            let pieces = (threads * 4).min(blocks).max(1);
            (0..pieces)
                .into_par_iter()
                .all(|p| run_blocks(blocks * p / pieces..blocks * (p + 1) / pieces))
        }),
        _ => run_blocks(0..blocks),
    };
    if in_bounds {
        Ok(outputs)
    } else {
        // An access outside a buffer: the simulator runs the launch again
        // from the same inputs and reports it with the thread and index.
        launch.kernel.run_host(launch, arrays)
    }
}

/// What runs `launch` on the CPU, for `explain()`.
pub(crate) fn describe(launch: &KernelLaunch, mode: JitMode) -> String {
    match compiled(launch, mode) {
        Ok((built, _)) if built.host_variant().is_some() => {
            "compiled code (JIT), one thread per loop element, spread over the worker \
             threads; a long par_range or par_reduce runs in pieces on all of them"
                .to_string()
        }
        Ok(_) => "compiled code (JIT), blocks spread over the worker threads".to_string(),
        Err(why) => format!("{} ({why})", launch.kernel.host_executor()),
    }
}

/// The kernel and its compiled code, or why it has none.
fn compiled(
    launch: &KernelLaunch,
    mode: JitMode,
) -> std::result::Result<(&BuiltKernel, &KernelCode), Unsupported> {
    let built = launch
        .kernel
        .as_any()
        .downcast_ref::<BuiltKernel>()
        .ok_or("not a kernel of the kernel builder")?;
    if mode == JitMode::Never {
        return Err("JitMode::Never");
    }
    let code = run_as(built).host_code(|device| {
        // Cranelift reports most failures as errors, but an unexpected
        // lowering gap may panic: either way the simulator runs the kernel.
        std::panic::catch_unwind(|| kernel::compile(device)).unwrap_or(Err("the compiler stopped"))
    })?;
    Ok((built, code))
}

/// The kernel the CPU runs for `built`: its host variant, if it has one.
fn run_as(built: &BuiltKernel) -> &BuiltKernel {
    built.host_variant().unwrap_or(built)
}

/// The argument table and buffer lengths of the compiled function.
fn bind(
    built: &BuiltKernel,
    launch: &KernelLaunch,
    arrays: &[&HostBuffer],
    outputs: &mut [HostBuffer],
) -> Result<(Vec<u64>, Vec<u64>)> {
    let params = &built.device.params;
    let (mut args, mut lens) = (vec![0u64; params.len()], vec![0u64; params.len()]);
    let mut outputs = outputs.iter_mut();
    let missing = |what: &str| Error::internal("kernel launch", format!("no value for {what}"));
    for (i, param) in params.iter().enumerate() {
        match (param.source, param.kind) {
            (ArgSource::UserArray(_), ParamKind::Output(_)) => {
                let out = outputs.next().ok_or_else(|| missing(&param.name))?;
                lens[i] = out.len() as u64;
                args[i] = out.as_mut_ptr() as u64;
            }
            (ArgSource::UserArray(k), _) => {
                let input = arrays.get(k).ok_or_else(|| missing(&param.name))?;
                lens[i] = input.len() as u64;
                args[i] = input.as_bytes().as_ptr() as u64;
            }
            (ArgSource::UserExtent(k, d), _) => {
                let extent = launch.shapes.get(k).and_then(|s| s.get(d));
                args[i] = *extent.ok_or_else(|| missing(&param.name))? as u64;
            }
            (ArgSource::UserScalar(s), _) => {
                let value = launch.scalars.get(s).ok_or_else(|| missing(&param.name))?;
                args[i] = bits(*value);
            }
            _ => return Err(missing(&param.name)),
        }
    }
    Ok((args, lens))
}

/// A scalar's bits, as the compiled code loads them (low bytes first).
fn bits(value: Literal) -> u64 {
    match value.to_wide() {
        // Two's complement: the low 64 bits.
        Wide::Int(x) => x as u64,
        Wide::Float(x) if value.dtype() == lazyfuse_core::DType::F32 => {
            u64::from((x as f32).to_bits())
        }
        Wide::Float(x) => x.to_bits(),
    }
}
