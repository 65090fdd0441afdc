//! Kernels given as CUDA C source (PyCUDA's `SourceModule`, CuPy's
//! `RawKernel`): compiled by NVRTC and launched on the `cuda` backend. No
//! other backend can run CUDA C — the simulator runs `DeviceProgram`s, not
//! C — so there a launch fails with `Error::BackendUnavailable` saying so.

use std::any::Any;
use std::sync::Arc;

use lazyfuse_core::{DType, Error, HostBuffer, KernelLaunch, Result, UserKernel};

use crate::launch::{self, ArgSpec, ArgValue, Dim3};
use lazyfuse_device::nvrtc::{self, Compiled, Target};

/// One parameter of a raw kernel, in the order of the C signature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RawParam {
    /// `T*` (or `const T*`): an array of `dtype`; the launch returns a new
    /// version of it when `written`.
    Array {
        /// Element type.
        dtype: DType,
        /// Whether the kernel writes it.
        written: bool,
    },
    /// A scalar passed by value.
    Scalar(DType),
}

/// A kernel from CUDA C source.
#[derive(Clone, Debug)]
pub struct RawKernel {
    inner: Arc<RawKernelImpl>,
}

/// The parts of a [`RawKernel`].
#[derive(Debug)]
pub struct RawKernelImpl {
    /// The `extern "C"` name of the kernel in `source`.
    pub name: String,
    /// The CUDA C source.
    pub source: String,
    /// The parameters, in order.
    pub params: Vec<RawParam>,
}

impl RawKernel {
    /// A kernel named `name` (declared `extern "C" __global__`) in `source`,
    /// with the given parameters.
    pub fn new(name: &str, source: &str, params: &[RawParam]) -> RawKernel {
        RawKernel {
            inner: Arc::new(RawKernelImpl {
                name: name.to_string(),
                source: source.to_string(),
                params: params.to_vec(),
            }),
        }
    }

    /// Compiles the source with NVRTC (no GPU needed): a check, and what
    /// the `cuda` backend loads.
    pub fn compile(&self, target: &Target) -> Result<Compiled> {
        nvrtc::compile(&self.inner.name, &self.inner.source, target)
    }

    /// Checks a launch and describes it for the graph, as
    /// [`Kernel::prepare_launch`](super::Kernel::prepare_launch).
    pub fn prepare_launch(
        &self,
        grid: Dim3,
        block: Dim3,
        args: &[ArgValue<'_>],
    ) -> Result<KernelLaunch> {
        let specs: Vec<ArgSpec> = self
            .inner
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| match p {
                RawParam::Array { dtype, written } => ArgSpec::Array {
                    name: format!("param{i}"),
                    dtype: *dtype,
                    ndim: None,
                    written: *written,
                },
                RawParam::Scalar(dtype) => ArgSpec::Scalar {
                    name: format!("param{i}"),
                    dtype: *dtype,
                },
            })
            .collect();
        let kernel: Arc<dyn UserKernel> = self.inner.clone();
        launch::prepare(kernel, (&specs, 0), (grid, block), args)
    }

    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }
}

impl UserKernel for RawKernelImpl {
    fn name(&self) -> &str {
        &self.name
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn run_host(&self, _launch: &KernelLaunch, _arrays: &[&HostBuffer]) -> Result<Vec<HostBuffer>> {
        Err(Error::BackendUnavailable {
            backend: "cuda".to_string(),
            reason: format!(
                "kernel '{}' is CUDA C source, which only the cuda backend runs (the simulator \
                 runs kernels written with Kernel::build; rewrite it that way to run it here)",
                self.name
            ),
        })
    }

    fn host_executor(&self) -> &'static str {
        "nothing (raw CUDA source needs the cuda backend)"
    }
}
