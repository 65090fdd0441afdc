//! `lazyfuse._native`: the Rust side of the Python package. Contexts,
//! lazy arrays, ufuncs and reducers from expression strings, and the
//! conversions from and to NumPy. The Python side (`python/lazyfuse/`)
//! builds NumPy's and Numba's vocabulary on it.

mod array;
mod bench;
mod complex;
mod convert;
mod errors;
mod index;
mod kernel;
mod pinned;
mod raw;
mod replay;

use lazyfuse::{Context, DType, Reducer, Ufunc};
use pyo3::prelude::*;

use array::PyArr;

/// The module's allocator. A demand allocates and frees many small
/// pieces (its graph, plan and buffers); glibc's malloc spent about 15% of
/// a 1,000-element demand in `malloc`, `free` and the consolidation of its
/// fast bins, and returned freed memory at the heap's top to the system
/// at once, so the next large buffer faulted its pages in again.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use errors::to_py;

/// A lazyfuse context: one backend (`"cpu"`, `"sim"`, `"cuda"`,
/// `"reference"`, or `"auto"`).
#[pyclass(name = "Context", module = "lazyfuse", frozen)]
struct PyContext {
    inner: Context,
}

#[pymethods]
impl PyContext {
    #[new]
    #[pyo3(signature = (backend = "auto", device_memory_limit = None, pipeline_threshold = None))]
    fn new(
        backend: &str,
        device_memory_limit: Option<usize>,
        pipeline_threshold: Option<usize>,
    ) -> PyResult<PyContext> {
        let settings = (device_memory_limit, pipeline_threshold);
        if backend == "default" && settings == (None, None) {
            return Ok(PyContext {
                inner: Context::new(),
            });
        }
        let mut builder = Context::builder().backend(backend);
        if let Some(bytes) = device_memory_limit {
            builder = builder.device_memory_limit(bytes);
        }
        if let Some(bytes) = pipeline_threshold {
            builder = builder.pipeline_threshold(bytes);
        }
        let inner = builder.build().map_err(to_py)?;
        Ok(PyContext { inner })
    }

    /// The backend's name.
    #[getter]
    fn backend(&self) -> &'static str {
        self.inner.backend_name()
    }

    /// An array holding a copy of a NumPy array's elements.
    fn asarray(&self, array: &Bound<'_, PyAny>) -> PyResult<PyArr> {
        convert::from_numpy(&self.inner, array).map(PyArr::new)
    }

    /// The real and imaginary parts of a C-contiguous complex NumPy array,
    /// copied into this context.
    fn complex_parts(&self, array: &Bound<'_, PyAny>) -> PyResult<(PyArr, PyArr)> {
        complex::split_numpy(&self.inner, array)
    }

    /// `shape` filled with `value` as `dtype` (a NumPy dtype name).
    fn full(&self, shape: Vec<usize>, value: &Bound<'_, PyAny>, dtype: &str) -> PyResult<PyArr> {
        let dtype = parse_dtype(dtype)?;
        PyArr::checked(self.inner.full(&shape, array::fill_value(value)?, dtype))
    }

    /// Numba's `cuda.pinned_array`: a zeroed NumPy array of `shape` in
    /// page-locked memory of this context (downloads into it are direct).
    fn pinned_array(&self, py: Python<'_>, shape: Vec<usize>, dtype: &str) -> PyResult<PyObject> {
        pinned::pinned_array(py, &self.inner, shape, parse_dtype(dtype)?, false)
    }

    /// Numba's `cuda.mapped_array`: a zeroed NumPy array of `shape` in host
    /// memory mapped into this context's device (results read into it are
    /// written there by the device, with no copy).
    fn mapped_array(&self, py: Python<'_>, shape: Vec<usize>, dtype: &str) -> PyResult<PyObject> {
        pinned::pinned_array(py, &self.inner, shape, parse_dtype(dtype)?, true)
    }

    /// Uniform values in `[0, 1)` of `shape` and the float `dtype`: lazy,
    /// generated where they are used (`Session::random_uniform`).
    fn random_uniform(&self, shape: Vec<usize>, dtype: &str, seed: u64) -> PyResult<PyArr> {
        let dtype = parse_dtype(dtype)?;
        PyArr::checked(self.inner.random_uniform(&shape, dtype, seed))
    }

    /// Standard normal values of `shape` and the float `dtype`
    /// (`Session::random_normal`).
    fn random_normal(&self, shape: Vec<usize>, dtype: &str, seed: u64) -> PyResult<PyArr> {
        let dtype = parse_dtype(dtype)?;
        PyArr::checked(self.inner.random_normal(&shape, dtype, seed))
    }

    /// NumPy's `arange(start, stop, step)` as `dtype`.
    fn arange(&self, start: f64, stop: f64, step: f64, dtype: &str) -> PyResult<PyArr> {
        let dtype = parse_dtype(dtype)?;
        PyArr::checked(self.inner.arange(start, stop, step, dtype))
    }

    /// The counters of what ran (`kernel_launches`, `h2d_bytes`, …).
    fn stats(&self, py: Python<'_>) -> PyResult<PyObject> {
        let s = self.inner.stats();
        let dict = pyo3::types::PyDict::new(py);
        for (name, value) in [
            ("kernels_compiled", s.kernels_compiled),
            ("kernel_cache_hits", s.kernel_cache_hits),
            ("kernel_launches", s.kernel_launches),
            ("h2d_copies", s.h2d_copies),
            ("h2d_bytes", s.h2d_bytes),
            ("d2h_copies", s.d2h_copies),
            ("d2h_bytes", s.d2h_bytes),
            ("evaluations", s.evaluations),
            ("device_allocations", s.device_allocations),
            ("device_bytes_allocated", s.device_bytes_allocated),
            ("staged_bytes", s.staged_bytes),
            ("mapped_bytes", s.mapped_bytes),
            ("argument_copy_bytes", s.argument_copy_bytes),
            ("host_copy_bytes", s.host_copy_bytes),
        ] {
            dict.set_item(name, value)?;
        }
        Ok(dict.into_any().unbind())
    }

    /// Frees the memory kept for reuse (the device pool, spare host
    /// buffers); returns its bytes.
    fn release_memory(&self, py: Python<'_>) -> usize {
        py.allow_threads(|| self.inner.release_device_memory())
    }

    /// Starts deferring the release of freed device buffers; returns the
    /// guard whose `close()` ends it (Numba's `cuda.defer_cleanup()`).
    fn defer_cleanup(&self) -> PyCleanup {
        PyCleanup {
            guard: std::sync::Mutex::new(Some(self.inner.defer_cleanup())),
        }
    }

    /// A new stream (Numba's `cuda.stream()`).
    fn stream(&self) -> PyStream {
        PyStream {
            inner: self.inner.stream(),
        }
    }

    fn __repr__(&self) -> String {
        format!("lazyfuse.Context('{}')", self.inner.backend_name())
    }
}

/// An ordered queue of asynchronous demands.
#[pyclass(name = "Stream", module = "lazyfuse", frozen)]
struct PyStream {
    inner: lazyfuse::Stream,
}

#[pymethods]
impl PyStream {
    /// Queues the demand of `arrays`; returns at once.
    fn eval(&self, arrays: Vec<PyRef<'_, PyArr>>) -> PyResult<PyPending> {
        let refs: Vec<&lazyfuse::Array> = arrays.iter().map(|a| &a.inner).collect();
        let pending = self.inner.eval(&refs).map_err(to_py)?;
        Ok(PyPending {
            pending: std::sync::Mutex::new(Some(pending)),
        })
    }

    /// Queues `array`'s copy to the device; returns the array at once.
    fn to_device(&self, array: PyRef<'_, PyArr>) -> PyResult<PyArr> {
        array
            .inner
            .to_device_on(&self.inner)
            .map(array::PyArr::new)
            .map_err(to_py)
    }

    /// Waits for everything queued so far (releasing the GIL meanwhile).
    fn synchronize(&self, py: Python<'_>) -> PyResult<()> {
        py.allow_threads(|| self.inner.synchronize()).map_err(to_py)
    }

    /// The stream's identity.
    #[getter]
    fn id(&self) -> u64 {
        self.inner.id()
    }
}

/// The outcome of queued work.
#[pyclass(name = "Pending", module = "lazyfuse", frozen)]
struct PyPending {
    pending: std::sync::Mutex<Option<lazyfuse::Pending>>,
}

#[pymethods]
impl PyPending {
    /// Waits until the work is done (releasing the GIL); raises its error.
    fn wait(&self, py: Python<'_>) -> PyResult<()> {
        let pending = self.pending.lock().ok().and_then(|mut p| p.take());
        match pending {
            Some(p) => py.allow_threads(|| p.wait()).map_err(to_py),
            None => Ok(()),
        }
    }
}

/// A `defer_cleanup` guard.
#[pyclass(name = "CleanupGuard", module = "lazyfuse", frozen)]
struct PyCleanup {
    guard: std::sync::Mutex<Option<lazyfuse::CleanupGuard>>,
}

#[pymethods]
impl PyCleanup {
    /// Ends the deferral (the last guard releases the queued buffers).
    fn close(&self) {
        if let Ok(mut guard) = self.guard.lock() {
            guard.take();
        }
    }
}

/// A ufunc from an expression string (the Python side traces functions
/// into one), optionally with Numba signatures.
#[pyclass(name = "Ufunc", module = "lazyfuse", frozen)]
struct PyUfunc {
    inner: Ufunc,
}

#[pymethods]
impl PyUfunc {
    #[new]
    #[pyo3(signature = (name, expr, args, signatures = Vec::new()))]
    fn new(name: &str, expr: &str, args: Vec<String>, signatures: Vec<String>) -> PyResult<Self> {
        let names: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut inner = Ufunc::parse(name, expr, &names).map_err(to_py)?;
        if !signatures.is_empty() {
            let sigs: Vec<&str> = signatures.iter().map(String::as_str).collect();
            inner = inner.with_signatures(&sigs).map_err(to_py)?;
        }
        Ok(PyUfunc { inner })
    }

    /// Applies the function to `args` (lazy).
    fn call(&self, args: Vec<PyRef<'_, PyArr>>) -> PyResult<PyArr> {
        let arrays: Vec<&lazyfuse::Array> = args.iter().map(|a| &a.inner).collect();
        PyArr::checked(self.inner.call(&arrays))
    }

    /// Applies the function and re-binds `out` to the result (`out=`).
    fn call_into(&self, args: Vec<PyRef<'_, PyArr>>, out: PyRef<'_, PyArr>) -> PyResult<()> {
        let arrays: Vec<&lazyfuse::Array> = args.iter().map(|a| &a.inner).collect();
        self.inner.call_into(&arrays, &out.inner).map_err(to_py)
    }

    /// How many arguments it takes.
    #[getter]
    fn arity(&self) -> usize {
        self.inner.arity()
    }
}

/// A reduction from a combine expression of two arguments and an identity
/// (Numba's `cuda.reduce`).
#[pyclass(name = "Reducer", module = "lazyfuse", frozen)]
struct PyReducer {
    inner: Reducer,
}

#[pymethods]
impl PyReducer {
    #[new]
    fn new(name: &str, expr: &str, a: &str, b: &str, identity: f64) -> PyResult<Self> {
        let inner = Reducer::parse(name, expr, [a, b], identity).map_err(to_py)?;
        Ok(PyReducer { inner })
    }

    /// Reduces all elements (or along `axis`: an int or a tuple of them,
    /// in one reduction) lazily.
    #[pyo3(signature = (array, axis = None))]
    fn reduce(&self, array: PyRef<'_, PyArr>, axis: Option<&Bound<'_, PyAny>>) -> PyResult<PyArr> {
        PyArr::checked(match crate::array::axes_of(axis)? {
            None => self.inner.reduce(&array.inner),
            Some(axes) => self.inner.reduce_axes(&array.inner, &axes),
        })
    }
}

/// A dtype from a NumPy or short name (`"float32"`, `"f32"`).
fn parse_dtype(name: &str) -> PyResult<DType> {
    name.parse::<DType>().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(format!(
            "lazyfuse has no dtype '{name}' (expected float16, bfloat16, float32, float64, int8 … uint64 or bool)"
        ))
    })
}

/// Computes every array in one demand per context (work they share runs
/// once) and keeps their values.
#[pyfunction]
fn eval_all(py: Python<'_>, arrays: Vec<PyRef<'_, PyArr>>) -> PyResult<()> {
    let arrays: Vec<&lazyfuse::Array> = arrays.iter().map(|a| &a.inner).collect();
    py.allow_threads(|| convert::eval_by_context(&arrays))
        .map_err(to_py)
}

/// The plan computing the arrays together (`Session::explain`); runs
/// nothing.
#[pyfunction]
fn explain_all(arrays: Vec<PyRef<'_, PyArr>>) -> String {
    match arrays.first() {
        Some(first) => {
            let arrays: Vec<&lazyfuse::Array> = arrays.iter().map(|a| &a.inner).collect();
            first.inner.session().explain(&arrays)
        }
        None => String::new(),
    }
}

/// Computes the arrays into new NumPy arrays, in order, in one program
/// per context (`lazyfuse.compute`).
#[pyfunction]
fn compute(py: Python<'_>, arrays: Vec<PyRef<'_, PyArr>>) -> PyResult<Vec<PyObject>> {
    let arrays: Vec<&lazyfuse::Array> = arrays.iter().map(|a| &a.inner).collect();
    convert::to_numpy_all(py, &arrays)
}

/// Whether lazyfuse has a unary operation of this name (NumPy's or an
/// alias).
#[pyfunction]
fn has_unary_operation(name: &str) -> bool {
    lazyfuse::core::UnaryOp::lookup(name).is_some()
}

/// The names of lazyfuse's binary operations a user applies (NumPy's,
/// and their aliases): what `Array.binary` accepts, from the core's table
/// (`binary_table!`), so that the Python package keeps no list of its own.
#[pyfunction]
fn binary_operation_names() -> Vec<&'static str> {
    use lazyfuse::core::{BinaryOp, ALIASES};
    let public = |op: &BinaryOp| op.method().is_some();
    let names = BinaryOp::ALL
        .iter()
        .filter(|op| public(op))
        .map(|op| op.name());
    let aliases = ALIASES
        .iter()
        .filter(|(_, numpy)| BinaryOp::from_name(numpy).is_some_and(|op| public(&op)))
        .map(|(alias, _)| *alias);
    names.chain(aliases).collect()
}

/// lazyfuse's built-in reductions, from the core's table
/// (`reduce_table!`): each as its name (`"sum"`), its scan's name
/// (`"cumsum"`) and the NumPy name of the ufunc that combines
/// (`"add"`: `np.add.reduce`), so that the Python package can keep no list
/// of its own. `Array.reduce` takes the first two.
#[pyfunction]
fn builtin_reductions() -> Vec<(&'static str, &'static str, &'static str)> {
    use lazyfuse::core::ReduceOp;
    (ReduceOp::ALL.iter())
        .map(|op| (op.name(), op.scan_name(), op.combiner().name()))
        .collect()
}

#[pyfunction]
fn cuda_source(arrays: Vec<PyRef<'_, PyArr>>) -> PyResult<String> {
    let refs: Vec<&lazyfuse::Array> = arrays.iter().map(|a| &a.inner).collect();
    lazyfuse::cuda_source(&refs).map_err(to_py)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyContext>()?;
    m.add_class::<PyArr>()?;
    m.add_class::<PyUfunc>()?;
    m.add_class::<PyReducer>()?;
    m.add_class::<PyCleanup>()?;
    m.add_class::<PyStream>()?;
    m.add_class::<pinned::PyPinned>()?;
    m.add_class::<PyPending>()?;
    m.add_function(wrap_pyfunction!(cuda_source, m)?)?;
    m.add_function(wrap_pyfunction!(has_unary_operation, m)?)?;
    m.add_function(wrap_pyfunction!(binary_operation_names, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_reductions, m)?)?;
    m.add_function(wrap_pyfunction!(eval_all, m)?)?;
    m.add_function(wrap_pyfunction!(compute, m)?)?;
    m.add_function(wrap_pyfunction!(explain_all, m)?)?;
    complex::register(m)?;
    m.add_class::<kernel::PyKernel>()?;
    m.add_class::<kernel::PyGUfunc>()?;
    m.add_function(wrap_pyfunction!(kernel::build_kernel, m)?)?;
    m.add_function(wrap_pyfunction!(kernel::build_gufunc, m)?)?;
    m.add_class::<raw::PyRawSource>()?;
    m.add_function(wrap_pyfunction!(raw::raw_source, m)?)?;
    m.add_function(wrap_pyfunction!(bench::bench_rust_case, m)?)?;
    Ok(())
}
