//! Kernels written by users: Numba's `@cuda.jit` in Rust.
//!
//! [`Kernel::build`] records the body a closure writes through a
//! [`KernelScope`] as a `DeviceKernel` — the form the CUDA printer prints
//! and the SIMT simulator runs. [`Kernel::launch`] is lazy like everything
//! else: it returns the new versions of the arrays the kernel writes as
//! `Array`s whose node is the launch, so inputs are uploaded once, results
//! stay on the device, and element-wise work around the launch still fuses.
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

mod memory;
mod raw;
mod scope;
mod val;

use std::any::Any;
use std::sync::Arc;

use lazyfuse_core::{
    Array, DType, Error, HostBuffer, KernelLaunch, Literal, Result, Scalar, Session, UserKernel,
};

use lazyfuse_device::cuda;
use lazyfuse_device::ir::{ArgSource, DeviceKernel, GridRule, ParamKind};
use lazyfuse_device::simt::{self, Binding, Geometry};
use lazyfuse_device::verify::is_identifier;

pub use lazyfuse_device::ir::Dim;
pub use memory::{ArrayParam, Indices, Local, SharedArrayRef};
pub use raw::{RawKernel, RawKernelImpl, RawParam};
pub use scope::KernelScope;
pub use val::Val;

/// Threads a block may have.
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;
/// Threads a block may have along x, y and z.
pub const MAX_BLOCK_DIM: [u32; 3] = [1024, 1024, 64];
/// Blocks a grid may have along x, y and z.
pub const MAX_GRID_DIM: [u32; 3] = [i32::MAX as u32, 65535, 65535];
/// Static shared memory a block may use.
pub const MAX_SHARED_BYTES: usize = 48 * 1024;

/// Launch geometry: blocks in a grid or threads in a block, along x, y, z
/// (from `n`, `(x, y)` or `(x, y, z)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim3(pub [u32; 3]);

impl From<u32> for Dim3 {
    fn from(x: u32) -> Dim3 {
        Dim3([x, 1, 1])
    }
}
impl From<(u32, u32)> for Dim3 {
    fn from((x, y): (u32, u32)) -> Dim3 {
        Dim3([x, y, 1])
    }
}
impl From<(u32, u32, u32)> for Dim3 {
    fn from((x, y, z): (u32, u32, u32)) -> Dim3 {
        Dim3([x, y, z])
    }
}

/// An argument of a launch, in the kernel's parameter order.
#[derive(Clone, Debug)]
pub enum KernelArg<'a> {
    /// For an array parameter.
    Array(&'a Array),
    /// For a scalar parameter (converted to its dtype, range-checked).
    Scalar(Scalar),
}

impl<'a> From<&'a Array> for KernelArg<'a> {
    fn from(a: &'a Array) -> KernelArg<'a> {
        KernelArg::Array(a)
    }
}

macro_rules! scalar_args {
    ($($t:ty),*) => {$(
        impl From<$t> for KernelArg<'_> {
            fn from(v: $t) -> Self {
                KernelArg::Scalar(Scalar::from(v))
            }
        }
    )*};
}
scalar_args!(f64, f32, i64, i32, u32, u64, usize, bool);

/// What a launch must be given, parameter by parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ArgSpec {
    Array {
        name: String,
        dtype: DType,
        /// `None`: any dimensionality (raw kernels).
        ndim: Option<usize>,
        written: bool,
    },
    Scalar {
        name: String,
        dtype: DType,
    },
}

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
            .map(|s| s.len as usize * s.dtype.size())
            .sum();
        let device = DeviceKernel {
            name: name.to_string(),
            params: std::mem::take(&mut scope.params),
            shared: std::mem::take(&mut scope.shared),
            vars: std::mem::take(&mut scope.vars),
            body: scope.finish_body(),
            block: 0,
            grid: GridRule::User,
        };
        lazyfuse_device::verify::verify_kernel(&device)?;
        Ok(Kernel {
            inner: Arc::new(BuiltKernel {
                device,
                args,
                shared_bytes,
            }),
        })
    }

    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.inner.device.name
    }

    /// The device program (what the printer prints and the simulator runs).
    pub fn device_kernel(&self) -> &DeviceKernel {
        &self.inner.device
    }

    /// The CUDA C of the kernel, with the prelude it needs.
    pub fn cuda_source(&self) -> String {
        self.inner.cuda_source()
    }

    /// Launches the kernel over `grid` blocks of `block` threads (Numba's
    /// `kernel[grid, block](args)`), lazily: returns one new array per
    /// array parameter the kernel writes, in parameter order. Errors: the
    /// arguments do not match the parameters, or the geometry or shared
    /// memory exceed the hardware's limits.
    pub fn launch(
        &self,
        session: &Session,
        grid: impl Into<Dim3>,
        block: impl Into<Dim3>,
        args: &[KernelArg<'_>],
    ) -> Result<Vec<Array>> {
        let kernel: Arc<dyn UserKernel> = self.inner.clone();
        launch_checked(
            session,
            kernel,
            (&self.inner.args, self.inner.shared_bytes),
            (grid.into(), block.into()),
            args,
        )
    }
}

impl BuiltKernel {
    fn cuda_source(&self) -> String {
        let mut text = cuda::prelude();
        text.push('\n');
        cuda::print_kernel(&mut text, &self.device);
        text
    }
}

/// Checks a launch against the parameters and the hardware limits, then
/// adds it to the graph.
pub(crate) fn launch_checked(
    session: &Session,
    kernel: Arc<dyn UserKernel>,
    (specs, shared_bytes): (&[ArgSpec], usize),
    (grid, block): (Dim3, Dim3),
    args: &[KernelArg<'_>],
) -> Result<Vec<Array>> {
    let op = format!("kernel '{}'", kernel.name());
    let invalid = |message: String| Error::InvalidArgument {
        op: op.clone(),
        message,
    };
    check_geometry(grid, block, shared_bytes).map_err(invalid)?;
    if args.len() != specs.len() {
        return Err(invalid(format!(
            "takes {} arguments, got {}",
            specs.len(),
            args.len()
        )));
    }
    let (mut arrays, mut scalars, mut written) = (Vec::new(), Vec::new(), Vec::new());
    for (i, (spec, arg)) in specs.iter().zip(args).enumerate() {
        match (spec, arg) {
            (
                ArgSpec::Array {
                    name,
                    dtype,
                    ndim,
                    written: w,
                },
                KernelArg::Array(a),
            ) => {
                if a.dtype() != *dtype || ndim.is_some_and(|n| n != a.ndim()) {
                    return Err(Error::DTypeMismatch {
                        op: op.clone(),
                        message: format!(
                            "argument {i} ('{name}') is a {} array of shape {:?} (expected a {}{dtype} array)",
                            a.dtype(),
                            a.shape(),
                            ndim.map_or(String::new(), |n| format!("{n}-d "))
                        ),
                    });
                }
                if *w {
                    written.push(arrays.len());
                }
                arrays.push(*a);
            }
            (ArgSpec::Scalar { name, dtype }, KernelArg::Scalar(s)) => {
                scalars.push(s.to_literal(&format!("{op} argument {i} ('{name}')"), *dtype)?);
            }
            (ArgSpec::Array { name, .. } | ArgSpec::Scalar { name, .. }, _) => {
                let expected = if matches!(spec, ArgSpec::Array { .. }) {
                    "an array"
                } else {
                    "a scalar"
                };
                return Err(invalid(format!(
                    "argument {i} ('{name}') must be {expected}"
                )));
            }
        }
    }
    if written.is_empty() {
        return Err(invalid(
            "writes no array: declare its outputs with array_mut (or written: true)".to_string(),
        ));
    }
    let shapes = arrays.iter().map(|a| a.shape().to_vec()).collect();
    let launch = KernelLaunch::new(kernel, (grid.0, block.0), scalars, written, shapes);
    session.launch_kernel(launch, &arrays)
}

fn check_geometry(grid: Dim3, block: Dim3, shared_bytes: usize) -> std::result::Result<(), String> {
    let threads: u64 = block.0.iter().map(|&d| u64::from(d)).product();
    if grid.0.contains(&0) || block.0.contains(&0) {
        return Err(format!(
            "grid {:?} and block {:?} must have no zero dimension",
            grid.0, block.0
        ));
    }
    if threads > u64::from(MAX_THREADS_PER_BLOCK) {
        return Err(format!(
            "a block of {:?} has {threads} threads (at most {MAX_THREADS_PER_BLOCK})",
            block.0
        ));
    }
    for d in 0..3 {
        if block.0[d] > MAX_BLOCK_DIM[d] || grid.0[d] > MAX_GRID_DIM[d] {
            return Err(format!(
                "grid {:?} or block {:?} exceeds the limits (grid at most {:?}, block at most {:?})",
                grid.0, block.0, MAX_GRID_DIM, MAX_BLOCK_DIM
            ));
        }
    }
    if shared_bytes > MAX_SHARED_BYTES {
        return Err(format!(
            "uses {shared_bytes} bytes of shared memory per block (at most {MAX_SHARED_BYTES})"
        ));
    }
    Ok(())
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
