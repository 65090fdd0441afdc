//! Device code generation: fused kernels lowered to a [`DeviceProgram`],
//! which the CUDA printer turns into CUDA C for NVRTC and the SIMT
//! interpreter executes on the CPU (the `sim` backend).
//!
//! Owns: the `DeviceProgram` IR, lowering from `FusedKernel`, the
//! [`verify`]er every program passes, the CUDA C printer and its prelude
//! (the value semantics of every op, once), NVRTC, and the SIMT interpreter
//! (kept here, beside the program it runs, so that user kernels and the
//! `sim` runtime share it). Must not know: runtimes, device memory,
//! `Array`, or how demands are planned.

pub mod bind;
mod builder;
pub mod cuda;
pub mod ir;
pub mod lower;
pub mod nvrtc;
pub mod printf;
pub mod simt;
mod vector;
pub mod verify;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use lazyfuse_core::{Counter, DType, Error, EvalEnv, HostBuffer, Result};
use lazyfuse_fusion::{FusedKernel, Launch};

pub use ir::{DeviceKernel, DeviceProgram};

use ir::{ArgSource, ParamKind};
use simt::Binding;

/// Lowered programs by kernel and index type. A hit on the structural hash
/// is confirmed by comparing the kernels (the cache rule of every compile
/// cache: equal hashes are not proof).
#[derive(Debug, Default)]
pub struct LoweringCache {
    programs: Mutex<HashMap<(u64, DType), Lowered>>,
}

/// A cached lowering, with the kernel it was lowered from.
type Lowered = (Arc<FusedKernel>, Arc<DeviceProgram>);

impl LoweringCache {
    /// The lowered form of `launch`'s kernel for its sizes, counting a
    /// compilation or a cache hit.
    pub fn get(&self, launch: &Launch, env: EvalEnv<'_>) -> Result<Arc<DeviceProgram>> {
        let index = bind::index_type(launch);
        let key = (launch.kernel.structural_hash(), index);
        let mut map = self.programs.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((kernel, program)) = map.get(&key) {
            if **kernel == *launch.kernel {
                env.stats.add(Counter::KernelCacheHits, 1);
                return Ok(Arc::clone(program));
            }
        }
        let program = Arc::new(lower::lower(&launch.kernel, index)?);
        env.stats.add(Counter::KernelsCompiled, 1);
        map.insert(key, (Arc::clone(&launch.kernel), Arc::clone(&program)));
        Ok(program)
    }
}

/// The CUDA C of the kernels `launch` runs (without the prelude).
pub fn cuda_text(launch: &Launch) -> Result<String> {
    let lowered = lower::lower(&launch.kernel, bind::index_type(launch))?;
    Ok(cuda::print_kernels(&lowered))
}

/// What `explain()` shows of launch `index` on a device backend: the CUDA C
/// it runs (the prelude that defines every `lf_` function is left out:
/// `lazyfuse::cuda_source` shows it).
pub fn explain_launch(index: usize, launch: &Launch) -> String {
    match cuda_text(launch) {
        Ok(text) => format!("k{index} CUDA C (after the lazyfuse prelude):{text}"),
        Err(e) => format!("k{index} could not be lowered: {e}\n"),
    }
}

/// Runs `program` for `launch` on the SIMT interpreter over device buffers
/// `inputs` (one per kernel input; `None` for generated inputs); returns the
/// kernel's outputs, allocated as a device allocation would be.
pub fn simulate(
    program: &DeviceProgram,
    launch: &Launch,
    inputs: &[Option<&HostBuffer>],
) -> Result<Vec<HostBuffer>> {
    simulate_in(program, launch, inputs, HostBuffer::try_zeros).map(|(outputs, _)| outputs)
}

/// [`simulate`], taking the output and scratch buffers from `allocate`
/// (`(dtype, len)`; their contents are overwritten before they are read,
/// as on a device). Returns the outputs and the scratch buffer of block
/// partials, if the program used one (for the caller to free).
pub fn simulate_in(
    program: &DeviceProgram,
    launch: &Launch,
    inputs: &[Option<&HostBuffer>],
    mut allocate: impl FnMut(DType, usize) -> Result<HostBuffer>,
) -> Result<(Vec<HostBuffer>, Option<HostBuffer>)> {
    let sizes = bind::Sizes::of(launch);
    let out_len = if launch.kernel.writes_domain() {
        sizes.domain_len
    } else {
        sizes.kept_len
    };
    let mut outputs: Vec<HostBuffer> = (0..launch.kernel.outputs.len())
        .map(|j| allocate(launch.kernel.output_dtype(j), out_len))
        .collect::<Result<_>>()?;
    let mut partials = program
        .partials
        .map(|dtype| allocate(dtype, sizes.partial_count))
        .transpose()?;
    for kernel in &program.kernels {
        let blocks = bind::blocks(kernel, launch);
        // Hand out each output at most once: a kernel names it in one parameter.
        let mut outputs_left: Vec<Option<&mut HostBuffer>> = outputs.iter_mut().map(Some).collect();
        let mut partials_left = partials.as_mut();
        let mut bindings = Vec::with_capacity(kernel.params.len());
        for param in &kernel.params {
            let missing = || Error::internal("sim launch", format!("no buffer for {}", param.name));
            let binding = match (param.source, param.kind) {
                (ArgSource::InputBuffer(k), _) => {
                    Binding::Read(inputs.get(k).copied().flatten().ok_or_else(missing)?)
                }
                (ArgSource::OutputBuffer(j), _) => Binding::Write(
                    outputs_left
                        .get_mut(j)
                        .and_then(Option::take)
                        .ok_or_else(missing)?,
                ),
                (ArgSource::Partials, ParamKind::Output(_)) => {
                    Binding::Write(partials_left.take().ok_or_else(missing)?)
                }
                (ArgSource::Partials, _) => {
                    Binding::Read(&*partials_left.take().ok_or_else(missing)?)
                }
                (source, _) => Binding::Value(bind::scalar(source, launch, program)?),
            };
            bindings.push(binding);
        }
        simt::run(
            kernel,
            simt::Geometry::linear(blocks, kernel.block),
            &mut bindings,
        )?;
    }
    Ok((outputs, partials))
}
