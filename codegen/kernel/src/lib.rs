//! Kernels written by users: Numba's `@cuda.jit` in Rust.
//!
//! [`Kernel::build`] records the body a closure writes through a
//! [`KernelScope`] as a `DeviceKernel` — the form the CUDA printer prints
//! and the SIMT simulator runs. [`Kernel::prepare_launch`] checks a launch's
//! arguments (dtypes, shapes, scalars: this crate knows no `Array`) and
//! describes it for the graph; the facade's `Kernel::launch` adds it, lazily:
//! it returns the new versions of the arrays the kernel writes as arrays
//! whose node is the launch, so inputs are uploaded once, results stay on
//! the device, and element-wise work around the launch still fuses.
//! The `cuda` backend compiles the kernel with NVRTC; `sim` runs it with
//! real block and thread semantics on its simulated device memory; `cpu`
//! and `reference` run it through the same simulator on host memory.
//!
//! ```
//! use lazyfuse_kernel::Kernel;
//! use lazyfuse_core::DType;
//!
//! let increment_by_one = Kernel::build("increment_by_one", |k| {
//!     let a = k.array_mut("a", DType::F32, 1);
//!     let pos = k.grid(1).remove(0);
//!     k.if_(pos.lt(a.len(0)), |k| {
//!         let next = a.at(&pos) + 1.0;
//!         k.store(&a, &pos, next);
//!     });
//! })
//! .unwrap();
//! assert!(increment_by_one.cuda_source().contains("increment_by_one"));
//! ```

mod arg;
pub mod device_scan;
mod gufunc;
mod launch;
mod memory;
mod parallel;
mod producer;
mod raw;
mod scan;
mod scope;
mod val;

use std::any::Any;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::sync::{Arc, OnceLock};

use lazyfuse_core::{Error, HostBuffer, KernelLaunch, Literal, Result, SliceMut, UserKernel};

use launch::ArgSpec;

use lazyfuse_device::cuda;
use lazyfuse_device::ir::{ArgSource, DeviceKernel, GridRule, ParamKind};
use lazyfuse_device::simt::{self, Binding, Geometry};
use lazyfuse_device::verify::is_identifier;

pub use arg::ArgKernels;
pub use gufunc::{CoreDim, GUfunc, GUfuncCall, Layout};
pub use launch::{
    ArgValue, Dim3, MAX_BLOCK_DIM, MAX_GRID_DIM, MAX_SHARED_BYTES, MAX_THREADS_PER_BLOCK,
};
pub use lazyfuse_device::ir::{AtomicOp, Dim, FenceScope, WarpOp};
pub use memory::{ArrayParam, Indices, Local, LocalArrayRef, SharedArrayRef};
pub use raw::{RawKernel, RawKernelImpl, RawParam};
pub use scan::ScanKernels;
pub use scope::{KernelScope, Printed};
pub use val::Val;

/// A kernel built with [`Kernel::build`].
#[derive(Clone, Debug)]
pub struct Kernel {
    inner: Arc<BuiltKernel>,
}

/// The compiled form behind a [`Kernel`].
#[derive(Debug)]
pub struct BuiltKernel {
    /// The device program of the kernel.
    pub device: DeviceKernel,
    args: Vec<ArgSpec>,
    shared_bytes: usize,
    host_code: OnceLock<std::result::Result<HostCode, &'static str>>,
    /// The same computation with its threads independent (no barriers),
    /// for hosts that run threads one after another: a gufunc whose body
    /// spreads `par_range` over a block runs its loop elements this way
    /// on the CPU. Launched with one thread per block.
    host_variant: Option<Kernel>,
    /// A library routine the CPU runs instead of compiling the program.
    host_routine: Option<Arc<dyn HostRoutine>>,
    /// Launches write every element of the written arrays before reading
    /// any (see [`Kernel::overwriting`]).
    overwrites: bool,
}

/// One task of a [`HostRoutine`], given its number.
pub type Task<'a> = &'a (dyn Fn(usize) + Sync);

/// The worker threads a [`HostRoutine`] may spread its work over.
#[derive(Clone, Copy)]
pub struct Workers<'a> {
    /// How many tasks run at once.
    pub threads: usize,
    /// Runs `tasks` independent tasks, `task(i)` for each `i` below
    /// `tasks`, on the threads (in any order, some at once).
    pub run: &'a (dyn Fn(usize, Task<'_>) + Sync),
}

impl Workers<'_> {
    /// `each(first, part)` for consecutive parts of `values`, each a whole
    /// number of units of `unit` elements starting at unit `first`: one
    /// part per thread, or one part on the calling thread when `values`
    /// has fewer than `parallel_from` elements (waking a worker costs tens
    /// of microseconds).
    pub fn split_mut<T: Send>(
        &self,
        values: &mut [T],
        unit: usize,
        parallel_from: usize,
        each: impl Fn(usize, &mut [T]) + Sync,
    ) {
        let unit = unit.max(1);
        let units = values.len() / unit;
        let threads = match values.len() < parallel_from {
            true => 1,
            false => self.threads.clamp(1, units.max(1)),
        };
        let per_task = units.div_ceil(threads).max(1);
        let parts: Vec<std::sync::Mutex<(usize, &mut [T])>> = values
            .chunks_mut(per_task * unit)
            .enumerate()
            .map(|(t, part)| std::sync::Mutex::new((t * per_task, part)))
            .collect();
        (self.run)(parts.len(), &|t| {
            let mut part = parts[t]
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let (first, values) = &mut *part;
            each(*first, values);
        });
    }
}

/// A library routine that computes a kernel's launches on the host. The
/// CPU backend calls it instead of compiling the kernel's device program:
/// a matrix product through `matrixmultiply`, whose blocking for caches
/// and registers a compiled one-thread-per-element program does not have.
/// It computes what the device program computes, up to the rounding of
/// sums taken in another order (the tests compare the two).
pub trait HostRoutine: Send + Sync + UnwindSafe + RefUnwindSafe + std::fmt::Debug {
    /// Runs `launch`: `arrays` are all its array arguments, `outputs` the
    /// written ones in `launch.written` order, each holding its argument's
    /// value on entry; `workers` run tasks on the worker threads. A written
    /// argument is read through its output only: its entry in `arrays` may
    /// be empty (its buffer moved to the output, written in place).
    fn run(
        &self,
        launch: &KernelLaunch,
        arrays: &[&HostBuffer],
        outputs: &mut [SliceMut<'_>],
        workers: Workers<'_>,
    ) -> Result<()>;

    /// What the routine is, for `explain()`.
    fn describe(&self) -> String;
}

/// Code a backend compiled from a kernel, kept with it (freed with it).
struct HostCode(Box<dyn Any + Send + Sync + UnwindSafe + RefUnwindSafe>);

impl std::fmt::Debug for HostCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HostCode")
    }
}

impl Kernel {
    /// Records the kernel `body` writes. Errors: a name or parameter name
    /// that is not a C identifier (or repeats), a store to a read-only
    /// array, an index of the wrong rank, an atomic on an unsupported dtype.
    pub fn build(name: &str, body: impl FnOnce(&mut KernelScope)) -> Result<Kernel> {
        let op = format!("kernel '{name}'");
        if !is_identifier(name) {
            return Err(Error::InvalidArgument {
                op,
                message: "the name must be a C identifier ([A-Za-z_][A-Za-z0-9_]*)".to_string(),
            });
        }
        let mut scope = KernelScope::new(name);
        body(&mut scope);
        // Only a gufunc's block trace checks that par_range iterations are
        // independent: a plain kernel runs them in order everywhere.
        scope.independent.clear();
        Kernel::finish(scope)
    }

    /// The kernel `scope` recorded, checked.
    pub(crate) fn finish(mut scope: KernelScope) -> Result<Kernel> {
        let op = format!("kernel '{}'", scope.name);
        if let Some(error) = scope.problems.first.take() {
            return Err(error);
        }
        let mut seen = std::collections::HashSet::new();
        for param in &scope.params {
            if !is_identifier(&param.name) || !seen.insert(param.name.clone()) {
                return Err(Error::InvalidArgument {
                    op,
                    message: format!(
                        "parameter name '{}' is not a C identifier or is used twice",
                        param.name
                    ),
                });
            }
        }
        let args = scope
            .params
            .iter()
            .filter_map(|p| match (p.source, p.kind) {
                (ArgSource::UserArray(k), ParamKind::Input(dtype) | ParamKind::Output(dtype)) => {
                    Some(ArgSpec::Array {
                        name: p.name.clone(),
                        dtype,
                        ndim: Some(scope.arrays[k].ndim),
                        written: scope.arrays[k].written,
                    })
                }
                (ArgSource::UserScalar(_), ParamKind::Scalar(dtype)) => Some(ArgSpec::Scalar {
                    name: p.name.clone(),
                    dtype,
                }),
                _ => None,
            })
            .collect();
        let shared_bytes = scope
            .shared
            .iter()
            .filter(|s| !s.local)
            .map(|s| s.len as usize * s.dtype.size())
            .sum();
        let device = DeviceKernel {
            name: scope.name.clone(),
            params: std::mem::take(&mut scope.params),
            shared: std::mem::take(&mut scope.shared),
            vars: std::mem::take(&mut scope.vars),
            body: scope.finish_body(),
            block: 0,
            grid: GridRule::User,
            independent: std::mem::take(&mut scope.independent),
        };
        lazyfuse_device::verify::verify_kernel(&device)?;
        Ok(Kernel {
            inner: Arc::new(BuiltKernel {
                device,
                args,
                shared_bytes,
                host_code: OnceLock::new(),
                host_variant: None,
                host_routine: None,
                overwrites: false,
            }),
        })
    }

    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.inner.device.name
    }

    /// This kernel, with `host` as its [`BuiltKernel::host_variant`].
    pub(crate) fn with_host_variant(mut self, host: Kernel) -> Kernel {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.host_variant = Some(host);
        }
        self
    }

    /// This kernel, with `routine` computing its launches on the CPU
    /// ([`HostRoutine`]); the other backends run its device program.
    /// Errors: the kernel has been cloned (the routine would reach some
    /// handles and not others): give it one right after building it.
    pub fn with_host_routine(mut self, routine: Arc<dyn HostRoutine>) -> Result<Kernel> {
        let name = self.name().to_string();
        let Some(inner) = Arc::get_mut(&mut self.inner) else {
            return Err(Error::invalid(
                format!("kernel '{name}'"),
                "a host routine for a kernel that has clones (expected it right after building)",
            ));
        };
        inner.host_routine = Some(routine);
        Ok(self)
    }

    /// Declares that every launch writes each element of the arrays it
    /// writes before reading it (a library kernel whose geometry covers its
    /// whole output, such as a gather): their values before a launch are
    /// never needed, so runtimes do not copy them in
    /// ([`KernelLaunch::overwrites`]). Only for kernels launched that way.
    pub fn overwriting(mut self) -> Result<Kernel> {
        let name = self.name().to_string();
        let Some(inner) = Arc::get_mut(&mut self.inner) else {
            return Err(Error::invalid(
                format!("kernel '{name}'"),
                "overwriting() on a kernel that has clones (expected it right after building)",
            ));
        };
        inner.overwrites = true;
        Ok(self)
    }

    /// The device program (what the printer prints and the simulator runs).
    pub fn device_kernel(&self) -> &DeviceKernel {
        &self.inner.device
    }

    /// The CUDA C of the kernel, with the prelude it needs.
    pub fn cuda_source(&self) -> String {
        self.inner.cuda_source()
    }

    /// Checks a launch over `grid` blocks of `block` threads with `args`
    /// (Numba's `kernel[grid, block](args)`) and describes it for the
    /// graph. Errors: the arguments do not match the parameters, or the
    /// geometry or shared memory exceed the hardware's limits.
    pub fn prepare_launch(
        &self,
        grid: Dim3,
        block: Dim3,
        args: &[ArgValue<'_>],
    ) -> Result<KernelLaunch> {
        let kernel: Arc<dyn UserKernel> = self.inner.clone();
        launch::prepare(
            kernel,
            (&self.inner.args, self.inner.shared_bytes),
            (grid, block),
            args,
        )
        .map(|launch| launch.overwriting(self.inner.overwrites))
    }
}

impl BuiltKernel {
    /// The variant of this kernel for hosts that run threads one after
    /// another, if it has one: same parameters, no barriers, to be launched
    /// with one thread per block over the same grid.
    pub fn host_variant(&self) -> Option<&BuiltKernel> {
        self.host_variant.as_ref().map(|k| &*k.inner)
    }

    /// The library routine that computes this kernel's launches on the
    /// CPU, if it has one ([`Kernel::with_host_routine`]).
    pub fn host_routine(&self) -> Option<&dyn HostRoutine> {
        self.host_routine.as_deref()
    }

    /// The host code of this kernel, compiled by `compile` on first use
    /// and kept with the kernel; or why there is none. (One backend
    /// compiles host code: every caller passes the same `compile`.)
    pub fn host_code<T: Any + Send + Sync + UnwindSafe + RefUnwindSafe>(
        &self,
        compile: impl FnOnce(&DeviceKernel) -> std::result::Result<T, &'static str>,
    ) -> std::result::Result<&T, &'static str> {
        let code = self
            .host_code
            .get_or_init(|| compile(&self.device).map(|code| HostCode(Box::new(code))));
        match code {
            Ok(code) => {
                let code: &dyn Any = &*code.0;
                code.downcast_ref().ok_or("host code of another kind")
            }
            Err(why) => Err(why),
        }
    }

    fn cuda_source(&self) -> String {
        let mut text = cuda::prelude();
        text.push('\n');
        cuda::print_kernel(&mut text, &self.device);
        text
    }
}

impl UserKernel for BuiltKernel {
    fn name(&self) -> &str {
        &self.device.name
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn run_host(&self, launch: &KernelLaunch, arrays: &[&HostBuffer]) -> Result<Vec<HostBuffer>> {
        let mut outputs: Vec<HostBuffer> = launch
            .written
            .iter()
            .map(|&w| {
                arrays.get(w).map(|a| (*a).clone()).ok_or_else(|| {
                    Error::internal("kernel launch", "a written argument is missing")
                })
            })
            .collect::<Result<_>>()?;
        self.simulate(launch, arrays, &mut outputs)?;
        Ok(outputs)
    }

    fn host_executor(&self) -> &'static str {
        "the SIMT simulator on host memory"
    }
}

impl BuiltKernel {
    /// Runs the kernel on the simulator: `arrays` are all array arguments,
    /// `outputs` the buffers of the written ones (in order), updated in place.
    pub fn simulate(
        &self,
        launch: &KernelLaunch,
        arrays: &[&HostBuffer],
        outputs: &mut [HostBuffer],
    ) -> Result<()> {
        let mut outputs = outputs.iter_mut();
        let mut bindings = Vec::with_capacity(self.device.params.len());
        let missing =
            |what: String| Error::internal("kernel launch", format!("no value for {what}"));
        for param in &self.device.params {
            let binding = match (param.source, param.kind) {
                (ArgSource::UserArray(_), ParamKind::Output(_)) => {
                    Binding::Write(outputs.next().ok_or_else(|| missing(param.name.clone()))?)
                }
                (ArgSource::UserArray(k), _) => Binding::Read(
                    arrays
                        .get(k)
                        .copied()
                        .ok_or_else(|| missing(param.name.clone()))?,
                ),
                (ArgSource::UserExtent(k, d), _) => {
                    let extent = launch
                        .shapes
                        .get(k)
                        .and_then(|s| s.get(d))
                        .ok_or_else(|| missing(param.name.clone()))?;
                    Binding::Value(Literal::of(*extent as i64))
                }
                (ArgSource::UserScalar(i), _) => Binding::Value(
                    *launch
                        .scalars
                        .get(i)
                        .ok_or_else(|| missing(param.name.clone()))?,
                ),
                _ => return Err(missing(param.name.clone())),
            };
            bindings.push(binding);
        }
        let geometry = Geometry {
            grid: launch.grid,
            block: launch.block,
        };
        simt::run(&self.device, geometry, &mut bindings)
    }
}
