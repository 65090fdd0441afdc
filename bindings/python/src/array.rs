//! `lazyfuse.Array` on the Rust side: building (operators, functions,
//! reductions, views) and demands. The Python side adds the dunder
//! methods and NumPy's protocols over these.

use lazyfuse::core::{BinaryOp, ReduceOp, UnaryOp};
use lazyfuse::{Array, Operand, Scalar};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt};

use crate::convert;
use crate::errors::{self, to_py};

/// A lazy array.
#[pyclass(name = "Array", module = "lazyfuse", frozen, subclass)]
pub(crate) struct PyArr {
    pub(crate) inner: Array,
}

impl PyArr {
    pub(crate) fn new(inner: Array) -> PyArr {
        PyArr { inner }
    }

    /// `array`, or its error if it is invalid (operations raise at once in
    /// Python, as NumPy's do).
    pub(crate) fn checked(array: Array) -> PyResult<PyArr> {
        array.check().map_err(to_py)?;
        Ok(PyArr::new(array))
    }

    /// A Python operand: an array, a Python scalar (weak, as NumPy 2's),
    /// or anything NumPy turns into an array (copied into this context).
    fn operand(&self, other: &Bound<'_, PyAny>) -> PyResult<Operand> {
        if let Ok(a) = other.downcast::<PyArr>() {
            return Ok(Operand::Array(a.get().inner.clone()));
        }
        // Python's own scalars are weak. Exact types first: asking a float
        // for `dtype` raises and clears an AttributeError (a microsecond).
        if other.is_exact_instance_of::<PyFloat>() {
            return Ok(Operand::Scalar(Scalar::from(other.extract::<f64>()?)));
        }
        if other.is_exact_instance_of::<PyInt>() {
            if let Ok(value) = other.extract::<i128>() {
                return Ok(Operand::Scalar(Scalar::from(value)));
            }
        }
        // NumPy scalars (np.float64 is a Python float too) are strong: they
        // become 0-d arrays below.
        let numpy_typed = other.hasattr("dtype")?;
        if other.is_instance_of::<PyBool>() && !numpy_typed {
            return Ok(Operand::Scalar(Scalar::from(other.extract::<bool>()?)));
        }
        if other.is_instance_of::<PyInt>() && !numpy_typed {
            // Exact (i128): the operation checks it against the array's
            // dtype, so `uint64 + 2**63` works and `int64 + 2**63` is an
            // error, as in NumPy 2.
            let value = other.extract::<i128>().map_err(|_| {
                PyValueError::new_err(format!(
                    "the Python int {other} is out of bounds for every lazyfuse dtype"
                ))
            })?;
            return Ok(Operand::Scalar(Scalar::from(value)));
        }
        if other.is_instance_of::<PyFloat>() && !numpy_typed {
            return Ok(Operand::Scalar(Scalar::from(other.extract::<f64>()?)));
        }
        let numpy = other.py().import("numpy")?;
        let array = numpy.call_method1("asarray", (other,))?;
        Ok(Operand::Array(convert::from_numpy(
            self.inner.session(),
            &array,
        )?))
    }
}

/// A fill value as lazyfuse's scalar: Python and NumPy ints exactly (not
/// through a float, so `2**53 + 1` stays itself), bools, floats.
pub(crate) fn fill_value(value: &Bound<'_, PyAny>) -> PyResult<Scalar> {
    let is_bool = value.is_instance_of::<PyBool>()
        || value
            .get_type()
            .name()
            .is_ok_and(|n| n == "bool" || n == "bool_");
    if is_bool {
        return Ok(Scalar::from(value.is_truthy()?));
    }
    if !value.is_instance_of::<PyFloat>() {
        if let Ok(i) = value.extract::<i128>() {
            return Ok(Scalar::from(i));
        }
    }
    Ok(Scalar::from(value.extract::<f64>()?))
}

pub(crate) fn axes_of(axis: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<isize>>> {
    match axis {
        None => Ok(None),
        Some(a) if a.is_none() => Ok(None),
        Some(a) => match a.extract::<isize>() {
            Ok(one) => Ok(Some(vec![one])),
            Err(_) => Ok(Some(a.extract::<Vec<isize>>().map_err(|_| {
                PyTypeError::new_err("axis must be None, an int or a tuple of ints")
            })?)),
        },
    }
}

#[pymethods]
impl PyArr {
    /// The shape, as a tuple.
    #[getter]
    fn shape(&self) -> Vec<usize> {
        self.inner.shape().to_vec()
    }

    /// The NumPy name of the dtype (`"float32"`).
    #[getter]
    fn dtype_name(&self) -> &'static str {
        self.inner.dtype().name()
    }

    /// A binary operation by NumPy name (`"add"`, `"less"`, …); `reflected`
    /// puts `other` first.
    fn binary(&self, op: &str, other: &Bound<'_, PyAny>, reflected: bool) -> PyResult<PyArr> {
        let op = BinaryOp::lookup(op)
            .ok_or_else(|| PyValueError::new_err(format!("no binary operation '{op}'")))?;
        let operand = self.operand(other)?;
        PyArr::checked(if reflected {
            self.inner.apply_binary_reversed(op, operand)
        } else {
            self.inner.apply_binary(op, operand)
        })
    }

    /// A unary operation by NumPy name (`"sqrt"`, `"negative"`, …).
    fn unary(&self, op: &str) -> PyResult<PyArr> {
        let op = UnaryOp::lookup(op)
            .ok_or_else(|| PyValueError::new_err(format!("no unary operation '{op}'")))?;
        PyArr::checked(self.inner.apply_unary(op))
    }

    /// `where(self, a, b)`.
    fn where_(&self, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<PyArr> {
        let (a, b) = (self.operand(a)?, self.operand(b)?);
        PyArr::checked(self.inner.where_(a, b))
    }

    /// A reduction by name over `axis` (None, an int or a tuple).
    #[pyo3(signature = (name, axis = None, keepdims = false, ddof = 0))]
    fn reduce(
        &self,
        name: &str,
        axis: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
        ddof: usize,
    ) -> PyResult<PyArr> {
        let a = &self.inner;
        let axes = axes_of(axis)?;
        let all: Vec<isize> = (0..a.ndim() as isize).collect();
        let over = axes.clone().unwrap_or(all);
        let one = |axes: &Option<Vec<isize>>| match axes.as_deref() {
            Some([axis]) => Ok(Some(*axis)),
            None => Ok(None),
            Some(_) => Err(PyValueError::new_err(format!(
                "{name} takes one axis or None"
            ))),
        };
        // The built-in reductions and their scans by the core's table
        // (`reduce_table!`); the rest are composed reductions by name.
        if let Some(op) = ReduceOp::from_name(name) {
            return PyArr::checked(a.apply_reduce_axes(op, &over, keepdims));
        }
        if let Some(op) = ReduceOp::from_scan_name(name) {
            return PyArr::checked(a.apply_scan(op, one(&axes)?.unwrap_or(-1)));
        }
        PyArr::checked(match name {
            "mean" => a.mean_axes(&over, keepdims),
            "any" => a.any_axes(&over, keepdims),
            "all" => a.all_axes(&over, keepdims),
            "argmax" => one(&axes)?.map_or_else(|| a.argmax(), |x| a.argmax_axis(x)),
            "argmin" => one(&axes)?.map_or_else(|| a.argmin(), |x| a.argmin_axis(x)),
            "var" => one(&axes)?.map_or_else(|| a.var(ddof), |x| a.var_axis(x, ddof)),
            "std" => one(&axes)?.map_or_else(|| a.std(ddof), |x| a.std_axis(x, ddof)),
            other => return Err(PyValueError::new_err(format!("no reduction '{other}'"))),
        })
    }

    /// The elements as `dtype` (a NumPy dtype name).
    fn astype(&self, dtype: &str) -> PyResult<PyArr> {
        PyArr::checked(self.inner.astype(crate::parse_dtype(dtype)?))
    }

    /// Each element's bits read as `dtype` (NumPy's `view` with the
    /// element size unchanged).
    fn view(&self, dtype: &str) -> PyResult<PyArr> {
        PyArr::checked(self.inner.view(crate::parse_dtype(dtype)?))
    }

    /// The same elements in another shape (a view).
    fn reshape(&self, shape: Vec<usize>) -> PyResult<PyArr> {
        PyArr::checked(self.inner.reshape(&shape))
    }

    /// Axes permuted (`None`: reversed).
    #[pyo3(signature = (axes = None))]
    fn transpose(&self, axes: Option<Vec<usize>>) -> PyResult<PyArr> {
        PyArr::checked(match axes {
            None => self.inner.transpose(),
            Some(axes) => self.inner.permute(&axes),
        })
    }

    /// NumPy's `broadcast_to`.
    fn broadcast_to(&self, shape: Vec<usize>) -> PyResult<PyArr> {
        PyArr::checked(self.inner.broadcast_to(&shape))
    }

    /// `a[start:stop:step]` along `axis` (a view).
    #[pyo3(signature = (axis, start, stop, step))]
    fn slice_axis(
        &self,
        axis: isize,
        start: Option<isize>,
        stop: Option<isize>,
        step: isize,
    ) -> PyResult<PyArr> {
        PyArr::checked(self.inner.slice_axis(axis, start, stop, step))
    }

    /// `self[key]` for a key of Python ints and slices only (see
    /// `index`): `(view, region, dropped axes)`, or `None` for any other
    /// key (the Python side resolves those).
    #[allow(clippy::type_complexity)] // the tuple Python unpacks
    fn basic_index(
        &self,
        key: &Bound<'_, PyAny>,
    ) -> PyResult<Option<(PyArr, Vec<crate::index::Selected>, Vec<usize>)>> {
        let Some(basic) = crate::index::basic(&self.inner, key)? else {
            return Ok(None);
        };
        Ok(Some((
            PyArr::checked(basic.native)?,
            basic.region,
            basic.drop,
        )))
    }

    /// `shape` filled with `value` as `dtype`, in this array's context
    /// (`zeros_like` and friends follow their argument's context).
    fn full_like(
        &self,
        shape: Vec<usize>,
        value: &Bound<'_, PyAny>,
        dtype: &str,
    ) -> PyResult<PyArr> {
        let dtype = crate::parse_dtype(dtype)?;
        PyArr::checked(self.inner.session().full(&shape, fill_value(value)?, dtype))
    }

    /// `0, 1, …, n-1` as `dtype`, in this array's context.
    fn arange_like(&self, n: usize, dtype: &str) -> PyResult<PyArr> {
        let dtype = crate::parse_dtype(dtype)?;
        PyArr::checked(self.inner.session().arange(0.0, n as f64, 1.0, dtype))
    }

    /// A new handle on this array's value: re-binding one (`assign`) does
    /// not change the other.
    fn copy(&self) -> PyArr {
        PyArr::new(self.inner.clone())
    }

    /// This array's value with `region` (one `(start, step, len)` per
    /// axis) replaced by `value`, broadcast and cast (NumPy's
    /// `x[key] = value`, before `x` is re-bound to it).
    fn with_region(
        &self,
        region: Vec<(i64, i64, usize)>,
        value: PyRef<'_, PyArr>,
    ) -> PyResult<PyArr> {
        let region: Vec<lazyfuse::Region> = region
            .into_iter()
            .map(|(start, step, len)| lazyfuse::Region { start, step, len })
            .collect();
        lazyfuse::assign_region(&self.inner, &region, &value.inner)
            .map(PyArr::new)
            .map_err(to_py)
    }

    /// The elements moved `shift` places along `axis`, those past the end
    /// coming back at the start (NumPy's `roll` along one axis).
    fn roll(&self, shift: i64, axis: usize) -> PyResult<PyArr> {
        lazyfuse::roll(&self.inner, shift, axis)
            .map(PyArr::new)
            .map_err(to_py)
    }

    /// The elements at `indices` (an integer array) along `axis` (NumPy's
    /// `take`); `mode` is `"raise"`, `"wrap"` or `"clip"`.
    fn take(&self, indices: PyRef<'_, PyArr>, axis: usize, mode: &str) -> PyResult<PyArr> {
        lazyfuse::take(&self.inner, &indices.inner, axis, index_mode("take", mode)?)
            .map(PyArr::new)
            .map_err(to_py)
    }

    /// This array's value with the elements at `indices` along `axis`
    /// replaced by `value`, broadcast and cast (NumPy's `x[idx] = value`,
    /// before `x` is re-bound to it); `mode` as for `take`.
    fn scatter(
        &self,
        indices: PyRef<'_, PyArr>,
        axis: usize,
        value: PyRef<'_, PyArr>,
        mode: &str,
    ) -> PyResult<PyArr> {
        let mode = index_mode("scatter", mode)?;
        lazyfuse::scatter(&self.inner, &indices.inner, axis, &value.inner, mode)
            .map(PyArr::new)
            .map_err(to_py)
    }

    /// Sorted along `axis` (NumPy's `sort`; NaNs last), lazily.
    fn sort(&self, axis: usize) -> PyResult<PyArr> {
        lazyfuse::sort(&self.inner, axis)
            .map(PyArr::new)
            .map_err(to_py)
    }

    /// Partitioned along `axis` at the positions `kth` (NumPy's
    /// `partition`; NaNs last), lazily.
    fn partition(&self, axis: usize, kth: Vec<i64>) -> PyResult<PyArr> {
        lazyfuse::partition(&self.inner, axis, &kth)
            .map(PyArr::new)
            .map_err(to_py)
    }

    /// The positions that sort along `axis` (NumPy's stable `argsort`;
    /// NaNs last), lazily.
    fn argsort(&self, axis: usize) -> PyResult<PyArr> {
        lazyfuse::argsort(&self.inner, axis)
            .map(PyArr::new)
            .map_err(to_py)
    }

    /// Where each of `values` goes in this sorted 1-d array (NumPy's
    /// `searchsorted`), `side` `"left"` or `"right"`, lazily.
    fn searchsorted(&self, values: PyRef<'_, PyArr>, side: &str) -> PyResult<PyArr> {
        let side = match side {
            "left" => lazyfuse::Side::Left,
            "right" => lazyfuse::Side::Right,
            other => {
                return Err(errors::raise(
                    "ArgumentError",
                    format!("searchsorted: side {other:?} (expected 'left' or 'right')"),
                ))
            }
        };
        lazyfuse::searchsorted(&self.inner, &values.inner, side)
            .map(PyArr::new)
            .map_err(to_py)
    }

    /// The count of each value `0..length` among these integers, or the
    /// sum of their `weights` (NumPy's `bincount`), lazily.
    #[pyo3(signature = (weights, length))]
    fn bincount(&self, weights: Option<PyRef<'_, PyArr>>, length: usize) -> PyResult<PyArr> {
        lazyfuse::bincount(&self.inner, weights.as_ref().map(|w| &w.inner), length)
            .map(PyArr::new)
            .map_err(to_py)
    }

    /// The matrix product with `other` (NumPy's `matmul`), lazily.
    fn matmul(&self, other: PyRef<'_, PyArr>) -> PyResult<PyArr> {
        lazyfuse::matmul(&self.inner, &other.inner)
            .map(PyArr::new)
            .map_err(to_py)
    }

    /// Identifies the value this handle holds now: it changes when the
    /// handle is re-bound (views compare it to see their array written).
    fn value_id(&self) -> usize {
        std::sync::Arc::as_ptr(&self.inner.node()) as usize
    }

    /// Re-binds this array to `value` (`out=`).
    fn assign(&self, value: PyRef<'_, PyArr>) -> PyResult<()> {
        self.inner.assign(&value.inner).map_err(to_py)
    }

    /// Computes the array and returns a NumPy copy.
    fn numpy(&self, py: Python<'_>) -> PyResult<PyObject> {
        convert::to_numpy(py, &self.inner)
    }

    /// The array's value for NumPy: a read-only view of a computed value's
    /// memory (no copy), else computed into a new NumPy array.
    fn numpy_view(&self, py: Python<'_>) -> PyResult<PyObject> {
        convert::to_numpy_view(py, &self.inner)
    }

    /// A copy of `value` (a NumPy array) in this array's context.
    fn like(&self, value: &Bound<'_, PyAny>) -> PyResult<PyArr> {
        convert::from_numpy(self.inner.session(), value).map(PyArr::new)
    }

    /// The real and imaginary parts of a C-contiguous complex NumPy array,
    /// copied into this array's context.
    fn complex_parts(&self, value: &Bound<'_, PyAny>) -> PyResult<(PyArr, PyArr)> {
        crate::complex::split_numpy(self.inner.session(), value)
    }

    /// Computes the array into `out` (a NumPy array of its shape and dtype).
    fn read_into(&self, py: Python<'_>, out: &Bound<'_, PyAny>) -> PyResult<()> {
        convert::read_into(py, &self.inner, out)
    }

    /// The only element as a Python scalar.
    fn item(&self, py: Python<'_>) -> PyResult<PyObject> {
        convert::item(py, &self.inner)
    }

    /// Computes the array and keeps its value.
    fn eval(&self, py: Python<'_>) -> PyResult<()> {
        py.allow_threads(|| self.inner.eval()).map_err(to_py)
    }

    /// Computes it and copies it to the device now (Numba's `to_device`).
    fn to_device(&self, py: Python<'_>) -> PyResult<PyArr> {
        py.allow_threads(|| self.inner.to_device())
            .map(PyArr::new)
            .map_err(to_py)
    }

    /// How lazyfuse would run it.
    fn explain(&self) -> String {
        self.inner.explain()
    }

    /// Whether the value has been computed.
    #[getter]
    fn is_materialized(&self) -> bool {
        self.inner.is_materialized()
    }

    /// The context's backend name.
    #[getter]
    fn backend(&self) -> &'static str {
        self.inner.session().backend_name()
    }
}

/// NumPy's index `mode` by name, for `op`.
fn index_mode(op: &str, mode: &str) -> PyResult<lazyfuse::IndexMode> {
    match mode {
        "raise" => Ok(lazyfuse::IndexMode::Raise),
        "wrap" => Ok(lazyfuse::IndexMode::Wrap),
        "clip" => Ok(lazyfuse::IndexMode::Clip),
        other => Err(errors::raise(
            "ArgumentError",
            format!("{op}: mode {other:?} (expected 'raise', 'wrap' or 'clip')"),
        )),
    }
}
