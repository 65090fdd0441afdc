//! User kernels on the GPU: kernels built with `Kernel::build` are printed
//! as CUDA C, raw kernels bring theirs; both are compiled by NVRTC (cached
//! by a hash of the source) and launched with the launch's own geometry.
//! Written arrays get new device buffers, copies of the old contents made on
//! the device, so the arrays passed in keep their values.

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use super::*;
use lazyfuse_device::ir::ParamKind;
use lazyfuse_kernel::{BuiltKernel, RawKernelImpl, RawParam};

/// One argument to push, in parameter order.
enum Arg {
    /// Array argument `k` (its written copy when the kernel writes it).
    Array(usize),
    /// Entry `i` of the scalar values.
    Scalar(usize),
}

/// A user kernel as the GPU runs it: its CUDA C and its arguments.
struct UserProgram {
    /// The `__global__` function to launch.
    name: String,
    source: String,
    /// The arguments in parameter order.
    plan: Vec<Arg>,
    scalars: Vec<ScalarArg>,
}

impl UserProgram {
    /// The program of `launch`'s kernel: a built kernel printed as CUDA C,
    /// or a raw kernel's own source.
    fn of(launch: &KernelLaunch) -> Result<UserProgram> {
        let any = launch.kernel.as_any();
        if let Some(built) = any.downcast_ref::<BuiltKernel>() {
            let (plan, scalars) = built_arguments(built, launch)?;
            Ok(UserProgram {
                name: built.device.name.clone(),
                source: built_source(built),
                plan,
                scalars,
            })
        } else if let Some(raw) = any.downcast_ref::<RawKernelImpl>() {
            let (plan, scalars) = raw_arguments(raw, launch)?;
            Ok(UserProgram {
                name: raw.name.clone(),
                source: raw.source.clone(),
                plan,
                scalars,
            })
        } else {
            Err(Error::internal(
                "cuda backend",
                format!("kernel '{}' is of an unknown kind", launch.kernel.name()),
            ))
        }
    }
}

impl CudaRuntime {
    pub(super) fn run_user_kernel(
        &self,
        launch: &KernelLaunch,
        arrays: &[(Arc<dyn DeviceBuffer>, DType)],
        env: EvalEnv<'_>,
    ) -> Result<Vec<Arc<dyn DeviceBuffer>>> {
        let UserProgram {
            name,
            source,
            plan,
            scalars,
        } = UserProgram::of(launch)?;
        let inputs = arrays
            .iter()
            .map(|(b, _)| cuda_buffer(b))
            .collect::<Result<Vec<&CudaBuffer>>>()?;
        let mut outputs = Vec::with_capacity(launch.written.len());
        for &w in &launch.written {
            let source = inputs
                .get(w)
                .ok_or_else(|| Error::internal("cuda backend", "a written argument is missing"))?;
            outputs.push(self.allocate(source.bytes, env.stats)?);
        }
        // After the allocations: a side stream waits for them too.
        let stream = self.stream(env.stream)?;
        for buffer in inputs.iter().copied().chain(&outputs) {
            buffer.use_on(env.stream);
        }
        for (&w, copy) in launch.written.iter().zip(&mut outputs) {
            let source = inputs
                .get(w)
                .ok_or_else(|| Error::internal("cuda backend", "a written argument is missing"))?;
            // A launch that overwrites its outputs whole needs none of their
            // values (the simulator checks that claim with poisoned memory).
            if source.bytes > 0 && !launch.overwrites {
                let from = source.slice()?.slice(0..source.bytes);
                let target = copy
                    .slice
                    .as_mut()
                    .ok_or_else(|| Error::internal("cuda backend", "a released device buffer"))?;
                let mut to = target.slice_mut(0..source.bytes);
                stream
                    .memcpy_dtod(&from, &mut to)
                    .map_err(|e| device_error("cuMemcpyDtoD", e))?;
            }
        }
        let function = self.user_function(&name, &source, env)?;
        let slice_of = |k: usize| -> Result<&CudaSlice<u8>> {
            match launch.written.iter().position(|&w| w == k) {
                Some(j) => outputs[j].slice(),
                None => inputs
                    .get(k)
                    .ok_or_else(|| Error::internal("cuda backend", "a missing array argument"))?
                    .slice(),
            }
        };
        let mut args = stream.launch_builder(&function);
        for arg in &plan {
            match *arg {
                Arg::Array(k) => {
                    args.arg(slice_of(k)?);
                }
                Arg::Scalar(i) => {
                    let scalar = scalars
                        .get(i)
                        .ok_or_else(|| Error::internal("cuda backend", "a missing scalar"))?;
                    scalar.push(&mut args);
                }
            }
        }
        let config = LaunchConfig {
            grid_dim: (launch.grid[0], launch.grid[1], launch.grid[2]),
            block_dim: (launch.block[0], launch.block[1], launch.block[2]),
            shared_mem_bytes: 0,
        };
        // SAFETY: the arguments follow the kernel's parameter list (checked
        // against the launch's arrays and scalars when it was made, scalars
        // against the parameter dtypes), every buffer holds its array's
        // elements, the geometry was checked against the hardware limits, and
        // buffers are reused only after the kernel (the stream's order on
        // the main stream, the buffers' fences on a side stream).
        unsafe { args.launch(config) }.map_err(|e| {
            device_error(
                format!(
                    "launch kernel '{name}' (grid {:?}, block {:?})",
                    launch.grid, launch.block
                ),
                e,
            )
        })?;
        Ok(outputs.into_iter().map(on_device).collect())
    }

    /// The loaded function `name` of a user kernel's source, compiled once
    /// per source (a source may hold several kernels).
    fn user_function(&self, name: &str, source: &str, env: EvalEnv<'_>) -> Result<CudaFunction> {
        if name.contains('\0') {
            return Err(Error::InvalidArgument {
                op: "kernel launch".to_string(),
                message: format!("the kernel name {name:?} contains a NUL byte"),
            });
        }
        let key = stable_hash(source.as_bytes());
        let cached = lock(&self.user_modules)
            .get(&key)
            .filter(|(cached_source, _)| cached_source == source)
            .map(|(_, module)| Arc::clone(module));
        let module = match cached {
            Some(module) => {
                env.stats.add(Counter::KernelCacheHits, 1);
                module
            }
            None => {
                let module = self.load_compiled(name, source, env)?;
                lock(&self.user_modules).insert(key, (source.to_string(), Arc::clone(&module)));
                module
            }
        };
        module
            .load_function(name)
            .map_err(|e| device_error(format!("cuModuleGetFunction {name}"), e))
    }
}

fn built_source(built: &BuiltKernel) -> String {
    let mut text = cuda::prelude();
    text.push('\n');
    cuda::print_kernel(&mut text, &built.device);
    text
}

/// The arguments of a built kernel, in its parameter order: arrays, their
/// extents (as `long long`) and scalars.
fn built_arguments(
    built: &BuiltKernel,
    launch: &KernelLaunch,
) -> Result<(Vec<Arg>, Vec<ScalarArg>)> {
    let mut plan = Vec::new();
    let mut scalars = Vec::new();
    for param in &built.device.params {
        match (param.source, param.kind) {
            (ArgSource::UserArray(k), ParamKind::Input(_) | ParamKind::Output(_)) => {
                plan.push(Arg::Array(k))
            }
            (ArgSource::UserExtent(k, d), _) => {
                let extent = launch
                    .shapes
                    .get(k)
                    .and_then(|s| s.get(d))
                    .ok_or_else(|| Error::internal("cuda launch", "a missing extent"))?;
                plan.push(Arg::Scalar(scalars.len()));
                scalars.push(ScalarArg::for_param(
                    Literal::of(*extent as i64),
                    DType::I64,
                )?);
            }
            (ArgSource::UserScalar(i), ParamKind::Scalar(dtype)) => {
                let value = launch
                    .scalars
                    .get(i)
                    .ok_or_else(|| Error::internal("cuda launch", "a missing scalar"))?;
                plan.push(Arg::Scalar(scalars.len()));
                scalars.push(ScalarArg::for_param(*value, dtype)?);
            }
            _ => {
                return Err(Error::internal(
                    "cuda launch",
                    "a parameter of a fused kernel",
                ))
            }
        }
    }
    Ok((plan, scalars))
}

/// The arguments of a raw kernel, in its declared order.
fn raw_arguments(raw: &RawKernelImpl, launch: &KernelLaunch) -> Result<(Vec<Arg>, Vec<ScalarArg>)> {
    let (mut plan, mut scalars) = (Vec::new(), Vec::new());
    let (mut array, mut scalar) = (0, 0);
    for param in &raw.params {
        match param {
            RawParam::Array { .. } => {
                plan.push(Arg::Array(array));
                array += 1;
            }
            RawParam::Scalar(dtype) => {
                let value = launch
                    .scalars
                    .get(scalar)
                    .ok_or_else(|| Error::internal("cuda launch", "a missing scalar"))?;
                plan.push(Arg::Scalar(scalars.len()));
                scalars.push(ScalarArg::for_param(*value, *dtype)?);
                scalar += 1;
            }
        }
    }
    Ok((plan, scalars))
}
