//! User kernel launches on the CPU: the kernel's library routine when it
//! has one ([`HostRoutine`]: matrix products); compiled code
//! ([`jit::kernel`]) for a kernel built with the kernel builder that needs
//! no lockstep threads, its blocks spread over the worker pool; otherwise
//! (barriers, shared memory, atomics, an operation the JIT lacks,
//! `JitMode::Never`) the SIMT simulator on host memory.

use std::sync::Arc;

use lazyfuse_core::{
    Counter, DType, Error, HostBuffer, KernelLaunch, Literal, Result, SliceMut, StatsCounter, Wide,
};
use lazyfuse_device::ir::{ArgSource, ParamKind};
use lazyfuse_kernel::{BuiltKernel, HostRoutine, Workers};

use super::jit::kernel::{self, KernelCode};
use super::jit::support::Unsupported;
use super::settings::JitMode;
use super::tasks::all_indices;

/// Runs `launch` over `arrays` (all its array arguments); returns the new
/// values of the written ones, in order. A written argument whose buffer
/// `arrays` alone holds is written in place (see [`written_values`]).
pub(crate) fn run(
    launch: &KernelLaunch,
    mut arrays: Vec<Arc<HostBuffer>>,
    mode: JitMode,
    pool: Option<&rayon::ThreadPool>,
    stats: &StatsCounter,
) -> Result<Vec<HostBuffer>> {
    if let Some(routine) = routine_of(launch) {
        let (mut outputs, _) = written_values(launch, &mut arrays, pool, stats)?;
        let mut slices: Vec<SliceMut<'_>> =
            outputs.iter_mut().map(HostBuffer::as_slice_mut).collect();
        let arrays = views(&arrays);
        with_workers(pool, |workers| {
            routine.run(launch, &arrays, &mut slices, workers)
        })?;
        drop(slices);
        return Ok(outputs);
    }
    let Some((built, code)) = compiled(launch, mode).ok() else {
        return launch.kernel.run_host(launch, &views(&arrays));
    };
    let (mut outputs, in_place) = written_values(launch, &mut arrays, pool, stats)?;
    let destinations: Vec<(u64, u64)> = (outputs.iter_mut())
        .map(|o| (o.as_mut_ptr() as u64, o.len() as u64))
        .collect();
    let mut arrays = views(&arrays);
    if execute((built, code), launch, &arrays, &destinations, pool, None)? {
        return Ok(outputs);
    }
    // An access outside a buffer: the simulator runs the launch again and
    // reports it with the thread and index.
    if !in_place {
        return launch.kernel.run_host(launch, &arrays);
    }
    // From the arguments written in place as the kernel left them: the
    // simulator most likely meets the same access; if not, the error says
    // where to look.
    for (&w, output) in launch.written.iter().zip(&outputs) {
        arrays[w] = output;
    }
    launch.kernel.run_host(launch, &arrays)?;
    Err(Error::Device {
        op: format!("kernel {}", launch.kernel.name()),
        message: "an access fell outside its array's elements, and the argument it \
                  wrote in place changed (run the kernel on the 'sim' backend to see the \
                  thread and the index)"
            .to_string(),
    })
}

/// The buffers of `arrays`, borrowed.
fn views(arrays: &[Arc<HostBuffer>]) -> Vec<&HostBuffer> {
    arrays.iter().map(|a| &**a).collect()
}

/// The arguments `launch` writes, in order, ready to be written, and
/// whether one is written in place. An argument whose buffer `arrays`
/// alone holds (a temporary that dies with the launch) is taken, and left
/// empty in `arrays`: the kernel reads a written argument only through its
/// output. Any other is copied, since values are immutable, and counted,
/// unless the launch overwrites it whole (fresh zeroed memory then).
fn written_values(
    launch: &KernelLaunch,
    arrays: &mut [Arc<HostBuffer>],
    pool: Option<&rayon::ThreadPool>,
    stats: &StatsCounter,
) -> Result<(Vec<HostBuffer>, bool)> {
    let mut in_place = false;
    let values = (launch.written.iter())
        .map(|&w| {
            let once = launch.written.iter().filter(|&&x| x == w).count() == 1;
            let argument = arrays
                .get_mut(w)
                .ok_or_else(|| Error::internal("kernel launch", "a written argument is missing"))?;
            match Arc::get_mut(argument) {
                Some(owned) if once => {
                    in_place = true;
                    let empty = HostBuffer::try_zeros(owned.dtype(), 0)?;
                    Ok(std::mem::replace(owned, empty))
                }
                // Overwritten whole: its value is never read, fresh memory will do.
                _ if launch.overwrites => crate::pages::zeroed(argument.dtype(), argument.len()),
                _ => {
                    let bytes = argument.as_bytes().len() as u64;
                    stats.add(Counter::ArgumentCopyBytes, bytes);
                    copy_of(argument, pool)
                }
            }
        })
        .collect::<Result<_>>()?;
    Ok((values, in_place))
}

/// The library routine of `launch`'s kernel, if it has one.
fn routine_of(launch: &KernelLaunch) -> Option<&dyn HostRoutine> {
    let built = launch.kernel.as_any().downcast_ref::<BuiltKernel>()?;
    built.host_routine()
}

/// Runs a [`HostRoutine`] with `pool`'s threads as its workers.
fn with_workers<R>(pool: Option<&rayon::ThreadPool>, body: impl FnOnce(Workers<'_>) -> R) -> R {
    let threads = pool.map_or(1, rayon::ThreadPool::current_num_threads);
    // A routine's few long tasks (two halves of a matrix product): the
    // caller takes one, the team's workers the others.
    let run = move |tasks: usize, task: &(dyn Fn(usize) + Sync)| {
        all_indices(threads, tasks, |i| {
            task(i);
            true
        });
    };
    body(Workers { threads, run: &run })
}

/// Runs `launch`, which writes one array, with that array's new value
/// computed straight into `out` (`read_into` of its result): the argument
/// is copied into `out` (unless the launch overwrites it whole) and the
/// kernel runs there, so the value is neither allocated nor copied again. When each block of the kernel touches only
/// its own part of the array (see [`KernelCode::blockwise`]), each range
/// of blocks runs right after its part is copied, while it is in cache.
/// Returns `out` back when the kernel is not compiled (the simulator runs
/// it through [`run`]).
pub(crate) fn run_into<'a>(
    launch: &KernelLaunch,
    arrays: &[&HostBuffer],
    mut out: SliceMut<'a>,
    mode: JitMode,
    pool: Option<&rayon::ThreadPool>,
    stats: &StatsCounter,
) -> Result<Option<SliceMut<'a>>> {
    if let (Some(routine), [written]) = (routine_of(launch), launch.written.as_slice()) {
        let Some(source) = arrays.get(*written) else {
            return Ok(Some(out));
        };
        if source.dtype() != out.dtype() || source.len() != out.len() {
            return Ok(Some(out));
        }
        if !launch.overwrites {
            out.copy_from(source)?;
            stats.add(Counter::ArgumentCopyBytes, source.as_bytes().len() as u64);
        }
        let outputs = std::slice::from_mut(&mut out);
        with_workers(pool, |workers| {
            routine.run(launch, arrays, outputs, workers)
        })?;
        return Ok(None);
    }
    let (Ok(compiled), [written]) = (compiled(launch, mode), launch.written.as_slice()) else {
        return Ok(Some(out));
    };
    let Some(source) = arrays.get(*written) else {
        return Ok(Some(out));
    };
    let len = out.len();
    if source.dtype() != out.dtype() || source.len() != len {
        return Ok(Some(out));
    }
    let Some(bytes) = out.as_bytes_mut() else {
        return Ok(Some(out));
    };
    let destination = [(bytes.as_mut_ptr() as u64, len as u64)];
    let staged = if launch.overwrites {
        // Written whole: `out` needs none of the argument's value.
        execute(compiled, launch, arrays, &destination, pool, None)?
    } else if blockwise(compiled, launch) {
        stats.add(Counter::ArgumentCopyBytes, source.as_bytes().len() as u64);
        let block_bytes = launch.block[0] as usize * source.dtype().size();
        execute(
            compiled,
            launch,
            arrays,
            &destination,
            pool,
            Some((source, block_bytes)),
        )?
    } else {
        stats.add(Counter::ArgumentCopyBytes, source.as_bytes().len() as u64);
        crate::pages::copy_bytes(bytes, source.as_bytes(), pool);
        execute(compiled, launch, arrays, &destination, pool, None)?
    };
    if !staged {
        let values = launch.kernel.run_host(launch, arrays)?;
        let value = values
            .first()
            .ok_or_else(|| Error::internal("kernel launch", "no value for the written array"))?;
        out.copy_from(value)?;
    }
    Ok(None)
}

/// Whether the one array `launch` writes is touched by each block only at
/// its threads' positions along x, in a grid of one row of blocks.
fn blockwise((built, code): (&BuiltKernel, &KernelCode), launch: &KernelLaunch) -> bool {
    let [written] = launch.written.as_slice() else {
        return false;
    };
    built.host_variant().is_none()
        && launch.grid[1] == 1
        && launch.grid[2] == 1
        && (built.device.params.iter().enumerate()).any(|(p, param)| {
            matches!(param.kind, ParamKind::Output(_))
                && param.source == ArgSource::UserArray(*written)
                && code.blockwise(p)
        })
}

/// Runs the compiled `code` of `launch` with the written arrays at
/// `destinations` (address and element count); `false` when an access
/// fell outside its buffer. Each destination holds a copy of its argument,
/// or, with `staging` (the one written argument and the bytes of a block's
/// part of it), is filled part by part, each just before its blocks run.
fn execute(
    (built, code): (&BuiltKernel, &KernelCode),
    launch: &KernelLaunch,
    arrays: &[&HostBuffer],
    destinations: &[(u64, u64)],
    pool: Option<&rayon::ThreadPool>,
    staging: Option<(&HostBuffer, usize)>,
) -> Result<bool> {
    let (args, lens) = bind(run_as(built), launch, arrays, destinations)?;
    let [gx, gy, gz] = launch.grid.map(u64::from);
    let [bx, by, bz] = if built.host_variant().is_some() {
        [1, 1, 1]
    } else {
        launch.block.map(u64::from)
    };
    let threads = pool.map_or(1, rayon::ThreadPool::current_num_threads) as u64;
    let geometry = [gx, gy, gz, bx, by, bz, threads];
    let blocks = gx * gy * gz;
    let target = destinations.first().map_or(0, |&(address, _)| address);
    let run_blocks = |range: std::ops::Range<u64>| {
        if let Some((source, block_bytes)) = staging {
            let bytes = source.as_bytes();
            let part = |b: u64| (b as usize).saturating_mul(block_bytes).min(bytes.len());
            // The last range also copies what no block touches.
            let to = if range.end == blocks {
                bytes.len()
            } else {
                part(range.end)
            };
            let from = part(range.start);
            // SAFETY: `target` is the destination of `source`'s length in
            // bytes, which the caller lets nothing else touch until this
            // returns; ranges of blocks running at once are disjoint, so
            // are their parts, and their blocks touch only their own part
            // (`from <= to`: parts grow with the block).
            unsafe {
                std::ptr::copy_nonoverlapping(
                    bytes[from..to].as_ptr(),
                    (target as *mut u8).add(from),
                    to - from,
                );
            }
        }
        // SAFETY: `bind` gave every buffer parameter the address and length
        // of a live buffer of its dtype (outputs are the destinations, which
        // the caller lets nothing else touch until this returns) and every
        // scalar its bits; `range` lies within the grid. Every access the
        // code makes is checked against its buffer's length. Blocks running
        // at once touch one output only if the user's kernel has blocks
        // writing one element (a race on a GPU too): the value is then
        // unspecified, the memory stays in bounds.
        unsafe { code.run(&args, &lens, &geometry, range) }
    };
    // Staged: pieces of about `STAGED_PIECE` bytes, each copied and
    // computed while in cache; otherwise a few pieces per thread.
    let pieces = match staging {
        Some((_, block_bytes)) => {
            blocks.div_ceil((STAGED_PIECE / block_bytes.max(1)).max(1) as u64)
        }
        None if threads > 1 => (threads * 4).min(blocks),
        None => 1,
    }
    .max(1);
    // Pieces on the team; with one piece the team stays free, so the
    // pieces of the block's independent loops spread over it instead.
    // After an access outside a buffer the launch runs again on the
    // simulator: the other pieces need not run.
    Ok(all_indices(threads as usize, pieces as usize, |p| {
        let p = p as u64;
        run_blocks(blocks * p / pieces..blocks * (p + 1) / pieces)
    }))
}

/// Bytes per piece of a copy whose blocks run right after it: small
/// enough that the piece is still in L2 when they do, and below the size
/// at which `memcpy` writes around the cache. Measured on 2 MiB of L2 per
/// core: 256 KiB beat 64 KiB and 1 MiB by 10 to 25 %.
const STAGED_PIECE: usize = 256 << 10;

/// A copy of `source`, written (and its fresh pages touched) by the
/// pool's threads.
fn copy_of(source: &HostBuffer, pool: Option<&rayon::ThreadPool>) -> Result<HostBuffer> {
    if source.as_bytes().len() < 2 * crate::pages::COPY_PIECE || source.dtype() == DType::Bool {
        return Ok(source.clone());
    }
    let mut copy = crate::pages::zeroed(source.dtype(), source.len())?;
    if let Some(bytes) = copy.as_slice_mut().as_bytes_mut() {
        crate::pages::copy_bytes(bytes, source.as_bytes(), pool);
    }
    Ok(copy)
}

/// What runs `launch` on the CPU, for `explain()`.
pub(crate) fn describe(launch: &KernelLaunch, mode: JitMode) -> String {
    if let Some(routine) = routine_of(launch) {
        return routine.describe();
    }
    match compiled(launch, mode) {
        Ok((built, _)) if built.host_variant().is_some() => {
            "compiled code (JIT), one thread per loop element, spread over the worker \
             threads; a long par_range or par_reduce runs in pieces on all of them"
                .to_string()
        }
        Ok((_, code)) if code.on_vectors() => "compiled code (JIT), blocks spread over the \
             worker threads, each row of a block's threads on vectors where its accesses \
             and conditions allow"
            .to_string(),
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
    destinations: &[(u64, u64)],
) -> Result<(Vec<u64>, Vec<u64>)> {
    let params = &built.device.params;
    let (mut args, mut lens) = (vec![0u64; params.len()], vec![0u64; params.len()]);
    let mut outputs = destinations.iter();
    let missing = |what: &str| Error::internal("kernel launch", format!("no value for {what}"));
    for (i, param) in params.iter().enumerate() {
        match (param.source, param.kind) {
            (ArgSource::UserArray(_), ParamKind::Output(_)) => {
                let &(address, len) = outputs.next().ok_or_else(|| missing(&param.name))?;
                lens[i] = len;
                args[i] = address;
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
