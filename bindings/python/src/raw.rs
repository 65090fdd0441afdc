//! CUDA C source outside the subset `lazyfuse._c_translate` reads (CuPy's
//! `RawKernel`, PyCUDA's `SourceModule`): the source itself, compiled by
//! NVRTC and launched on the `cuda` backend (`lazyfuse::kernel::RawKernel`).

use lazyfuse::codegen::device::nvrtc::Target;
use lazyfuse::kernel::{RawKernel, RawParam};
use pyo3::prelude::*;

use crate::array::PyArr;
use crate::errors::to_py;
use crate::kernel::launch_with;
use crate::replay::dtype;

/// A kernel of CUDA C source, run as written on the `cuda` backend only.
#[pyclass(name = "RawSource", module = "lazyfuse", frozen)]
pub(crate) struct PyRawSource {
    inner: RawKernel,
}

/// The kernel `name` (declared `extern "C" __global__`) of `source`, with
/// its parameters in order: `(dtype, written)` for a pointer, whether the
/// kernel writes it; `(dtype, None)` for a scalar.
#[pyfunction]
pub(crate) fn raw_source(
    name: &str,
    source: &str,
    params: Vec<(String, Option<bool>)>,
) -> PyResult<PyRawSource> {
    let params = params
        .iter()
        .map(|(dt, written)| {
            let dtype = dtype(dt)?;
            Ok(match written {
                Some(written) => RawParam::Array {
                    dtype,
                    written: *written,
                },
                None => RawParam::Scalar(dtype),
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyRawSource {
        inner: RawKernel::new(name, source, &params),
    })
}

#[pymethods]
impl PyRawSource {
    /// Launches the kernel lazily (its demand runs on `cuda` only); the
    /// arrays it writes, in parameter order.
    fn launch(
        &self,
        grid: Vec<u32>,
        block: Vec<u32>,
        args: Vec<Bound<'_, PyAny>>,
    ) -> PyResult<Vec<PyArr>> {
        launch_with(grid, block, &args, |session, grid, block, values| {
            self.inner.launch(session, grid, block, values)
        })
    }

    /// Compiles the source with NVRTC for `arch` (`"sm_80"`): a check that
    /// needs NVRTC, not a GPU. Errors name NVRTC's log.
    fn compile(&self, py: Python<'_>, arch: &str) -> PyResult<()> {
        let target = Target::Cubin(arch.to_string());
        py.allow_threads(|| self.inner.compile(&target).map(|_| ()))
            .map_err(to_py)
    }
}
