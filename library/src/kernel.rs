//! Kernels written by users (Numba's `@cuda.jit`): [`Kernel::build`] and
//! launches that are lazy graph nodes; [`RawKernel`] for CUDA C source.
//!
//! This is the `Array`-facing side of a launch: the builder and the checks
//! of a launch's arguments against the kernel's parameters live in
//! `lazyfuse-kernel`, which knows dtypes and shapes but no `Array`; here a
//! launch's arrays become a node of the graph (`Session::launch_kernel`),
//! a step of the plan of the first demand that needs one of its results.
//!
//! ```
//! use lazyfuse::kernel::Kernel;
//! use lazyfuse::{Context, DType};
//!
//! let increment_by_one = Kernel::build("increment_by_one", |k| {
//!     let a = k.array_mut("a", DType::F32, 1); // a parameter the kernel writes
//!     let pos = k.grid(1).remove(0); // cuda.grid(1)
//!     k.if_(pos.lt(a.len(0)), |k| {
//!         k.store(&a, &pos, a.at(&pos) + 1.0);
//!     });
//! })?;
//! let cx = Context::sim();
//! let a = cx.from_slice(&[1.0f32, 2.0, 3.0]);
//! let out = increment_by_one.launch(&cx, 1u32, 32u32, &[(&a).into()])?; // lazy
//! assert_eq!((&out[0] * 2.0f32).to_vec::<f32>()?, [4.0, 6.0, 8.0]); // runs now
//! # Ok::<(), lazyfuse::Error>(())
//! ```

use lazyfuse_core::{Array, KernelLaunch, Result, Scalar, Session};
use lazyfuse_device::ir::DeviceKernel;
use lazyfuse_device::nvrtc::{Compiled, Target};

pub use lazyfuse_kernel::{
    ArgKernels, ArgValue, ArrayParam, AtomicOp, BuiltKernel, Dim, Dim3, FenceScope, HostRoutine,
    Indices, KernelScope, Local, LocalArrayRef, Printed, RawKernelImpl, RawParam, ScanKernels,
    SharedArrayRef, Val, WarpOp, Workers, MAX_BLOCK_DIM, MAX_GRID_DIM, MAX_SHARED_BYTES,
    MAX_THREADS_PER_BLOCK,
};

/// A kernel built with [`Kernel::build`].
#[derive(Clone, Debug)]
pub struct Kernel {
    built: lazyfuse_kernel::Kernel,
}

impl Kernel {
    /// Records the kernel `body` writes. Errors: a name or parameter name
    /// that is not a C identifier (or repeats), a store to a read-only
    /// array, an index of the wrong rank, an atomic on an unsupported dtype.
    pub fn build(name: &str, body: impl FnOnce(&mut KernelScope)) -> Result<Kernel> {
        lazyfuse_kernel::Kernel::build(name, body).map(|built| Kernel { built })
    }

    /// The kernel's name.
    pub fn name(&self) -> &str {
        self.built.name()
    }

    /// The device program (what the printer prints and the simulator runs).
    pub fn device_kernel(&self) -> &DeviceKernel {
        self.built.device_kernel()
    }

    /// The CUDA C of the kernel, with the prelude it needs.
    pub fn cuda_source(&self) -> String {
        self.built.cuda_source()
    }

    /// The builder's kernel (for code below the facade).
    pub fn built(&self) -> &lazyfuse_kernel::Kernel {
        &self.built
    }

    /// The facade's handle of a builder's kernel.
    pub(crate) fn from_built(built: lazyfuse_kernel::Kernel) -> Kernel {
        Kernel { built }
    }

    /// This kernel, declared to write every element of the arrays it
    /// writes before reading any, in every launch (as a kernel filling a
    /// fresh output does): backends then neither copy those arrays' values
    /// in nor keep them, and the simulator hands the kernel memory with
    /// every bit set (NaN), so that an element a launch fails to write
    /// shows. Call it right after building.
    ///
    /// ```
    /// use lazyfuse::kernel::{Dim, Kernel};
    /// use lazyfuse::{Context, DType};
    ///
    /// let squares = Kernel::build("squares", |k| {
    ///     let out = k.array_mut("out", DType::F64, 1);
    ///     let i = k.thread_idx(Dim::X).cast(DType::I64);
    ///     k.store(&out, &i, (&i * &i).cast(DType::F64));
    /// })?
    /// .overwriting()?;
    /// let cx = Context::sim();
    /// let out = cx.zeros(&[4], DType::F64);
    /// let got = squares.launch(cx.session(), 1u32, 4u32, &[(&out).into()])?.remove(0);
    /// assert_eq!(got.to_vec::<f64>()?, [0.0, 1.0, 4.0, 9.0]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn overwriting(self) -> Result<Kernel> {
        Ok(Kernel {
            built: self.built.overwriting()?,
        })
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
        let (grid, block) = (grid.into(), block.into());
        launch(session, args, |values| {
            self.built.prepare_launch(grid, block, values)
        })
    }
}

/// A kernel from CUDA C source (PyCUDA's `SourceModule`, CuPy's
/// `RawKernel`): compiled by NVRTC and launched on the `cuda` backend. No
/// other backend can run CUDA C, so there a launch's demand fails with
/// `Error::BackendUnavailable` saying so.
#[derive(Clone, Debug)]
pub struct RawKernel {
    raw: lazyfuse_kernel::RawKernel,
}

impl RawKernel {
    /// A kernel named `name` (declared `extern "C" __global__`) in `source`,
    /// with the given parameters.
    pub fn new(name: &str, source: &str, params: &[RawParam]) -> RawKernel {
        RawKernel {
            raw: lazyfuse_kernel::RawKernel::new(name, source, params),
        }
    }

    /// The kernel's name.
    pub fn name(&self) -> &str {
        self.raw.name()
    }

    /// Compiles the source with NVRTC (no GPU needed): a check, and what
    /// the `cuda` backend loads.
    pub fn compile(&self, target: &Target) -> Result<Compiled> {
        self.raw.compile(target)
    }

    /// Launches the kernel lazily, as [`Kernel::launch`].
    pub fn launch(
        &self,
        session: &Session,
        grid: impl Into<Dim3>,
        block: impl Into<Dim3>,
        args: &[KernelArg<'_>],
    ) -> Result<Vec<Array>> {
        let (grid, block) = (grid.into(), block.into());
        launch(session, args, |values| {
            self.raw.prepare_launch(grid, block, values)
        })
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

/// Checks a launch (`prepare` sees each argument's dtype and shape, or its
/// value) and adds it to `session`'s graph over the array arguments.
fn launch(
    session: &Session,
    args: &[KernelArg<'_>],
    prepare: impl FnOnce(&[ArgValue<'_>]) -> Result<KernelLaunch>,
) -> Result<Vec<Array>> {
    let values: Vec<ArgValue<'_>> = args
        .iter()
        .map(|arg| match arg {
            KernelArg::Array(a) => ArgValue::Array {
                dtype: a.dtype(),
                shape: a.shape(),
            },
            KernelArg::Scalar(s) => ArgValue::Scalar(*s),
        })
        .collect();
    let launch = prepare(&values)?;
    let arrays: Vec<&Array> = args
        .iter()
        .filter_map(|arg| match arg {
            KernelArg::Array(a) => Some(*a),
            KernelArg::Scalar(_) => None,
        })
        .collect();
    session.launch_kernel(launch, &arrays)
}
