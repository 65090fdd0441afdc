//! Complex arrays and the FFT for Python's `lazyfuse.ComplexArray` and
//! `lazyfuse.fft`: each function takes a complex array as its two parts
//! (native arrays) and returns a complex result as a tuple of two parts,
//! a real one as one array. The formulas are the library crate's
//! (`lazyfuse::ComplexArray`); nothing here computes.

use lazyfuse::Session;
use lazyfuse::{fft, ComplexArray, ComplexDType, ComplexOperand, ComplexResult, Norm};
use num_complex::Complex;
use numpy::{PyArray, PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyComplex;

use crate::array::PyArr;
use crate::errors::to_py;

type Parts = (PyArr, PyArr);

fn complex(re: &PyArr, im: &PyArr) -> PyResult<ComplexArray> {
    ComplexArray::new(&re.inner, &im.inner).map_err(to_py)
}

fn parts(z: ComplexArray) -> PyResult<Parts> {
    Ok((
        PyArr::checked(z.re().clone())?,
        PyArr::checked(z.im().clone())?,
    ))
}

fn result(py: Python<'_>, r: ComplexResult) -> PyResult<PyObject> {
    match r {
        ComplexResult::Complex(z) => Ok(parts(z)?.into_pyobject(py)?.into_any().unbind()),
        ComplexResult::Real(a) => Ok(Py::new(py, PyArr::checked(a)?)?.into_any()),
    }
}

fn dtype(name: Option<&str>) -> PyResult<Option<ComplexDType>> {
    name.map(|n| {
        ComplexDType::from_name(n).ok_or_else(|| {
            PyTypeError::new_err(format!(
                "{n} is not a complex dtype (expected complex64 or complex128)"
            ))
        })
    })
    .transpose()
}

/// The complex array of parts `re` and `im` (one shape; cast to their
/// joint float dtype).
#[pyfunction]
pub(crate) fn complex_new(re: PyRef<'_, PyArr>, im: PyRef<'_, PyArr>) -> PyResult<Parts> {
    parts(complex(&re, &im)?)
}

/// The real array `x` as complex (of `dtype`, or the one holding it).
#[pyfunction]
#[pyo3(signature = (x, dtype=None))]
pub(crate) fn complex_from_real(x: PyRef<'_, PyArr>, dtype: Option<&str>) -> PyResult<Parts> {
    parts(ComplexArray::from_real(&x.inner, self::dtype(dtype)?).map_err(to_py)?)
}

/// The parts cast to complex dtype `dtype`.
#[pyfunction]
pub(crate) fn complex_astype(
    re: PyRef<'_, PyArr>,
    im: PyRef<'_, PyArr>,
    dtype: &str,
) -> PyResult<Parts> {
    let target = self::dtype(Some(dtype))?.unwrap_or(ComplexDType::C128);
    parts(complex(&re, &im)?.astype(target))
}

/// The complex array's values as a new NumPy complex array: both parts
/// computed in one program (the kernel computing them writes both), then
/// interleaved into NumPy's layout on all cores.
#[pyfunction]
pub(crate) fn complex_numpy(
    py: Python<'_>,
    re: PyRef<'_, PyArr>,
    im: PyRef<'_, PyArr>,
) -> PyResult<PyObject> {
    let z = complex(&re, &im)?;
    match z.dtype() {
        ComplexDType::C64 => interleaved_numpy::<f32>(py, &z),
        ComplexDType::C128 => interleaved_numpy::<f64>(py, &z),
    }
}

fn interleaved_numpy<T>(py: Python<'_>, z: &ComplexArray) -> PyResult<PyObject>
where
    T: lazyfuse::Element + Copy + Send + Sync,
    Complex<T>: numpy::Element,
{
    // Computed and kept (as `np.asarray` of a real array keeps its value):
    // dense parts are then read where they are, not copied first.
    py.allow_threads(|| z.session().eval(&[z.re(), z.im()]))
        .map_err(to_py)?;
    let (re_kept, im_kept) = (z.re().host_value(), z.im().host_value());
    let (re_copy, im_copy);
    let re: &[T] = match re_kept.as_deref().and_then(|b| b.as_slice::<T>()) {
        Some(values) => values,
        None => {
            re_copy = z.re().to_vec::<T>().map_err(to_py)?;
            &re_copy
        }
    };
    let im: &[T] = match im_kept.as_deref().and_then(|b| b.as_slice::<T>()) {
        Some(values) => values,
        None => {
            im_copy = z.im().to_vec::<T>().map_err(to_py)?;
            &im_copy
        }
    };
    if re.len() != z.len() || im.len() != z.len() {
        return Err(PyTypeError::new_err(
            "complex demand: parts of the wrong length",
        ));
    }
    let out = PyArray::<Complex<T>, _>::zeros(py, z.shape().to_vec(), false);
    {
        let mut view = out.readwrite();
        let values = view
            .as_slice_mut()
            .map_err(|e| PyTypeError::new_err(e.to_string()))?;
        py.allow_threads(|| interleave(re, im, values));
    }
    Ok(out.into_any().unbind())
}

/// The parts of a C-contiguous complex NumPy array, copied into
/// `session` in one pass on all cores (NumPy's layout split as the
/// kernels read it).
pub(crate) fn split_numpy(session: &Session, value: &Bound<'_, PyAny>) -> PyResult<Parts> {
    if let Ok(a) = value.downcast::<PyArrayDyn<Complex<f32>>>() {
        return split::<f32>(session, a);
    }
    if let Ok(a) = value.downcast::<PyArrayDyn<Complex<f64>>>() {
        return split::<f64>(session, a);
    }
    Err(PyTypeError::new_err(format!(
        "complex parts of a {} (expected a complex64 or complex128 NumPy array)",
        value.get_type().name()?
    )))
}

fn split<T>(session: &Session, a: &Bound<'_, PyArrayDyn<Complex<T>>>) -> PyResult<Parts>
where
    T: lazyfuse::Element + Default + Copy + Send + Sync,
    Complex<T>: numpy::Element,
{
    let shape = a.shape().to_vec();
    let values = a.readonly();
    let values = values
        .as_slice()
        .map_err(|e| PyTypeError::new_err(format!("complex parts: {e}")))?;
    let (mut re, mut im) = (
        vec![T::default(); values.len()],
        vec![T::default(); values.len()],
    );
    a.py()
        .allow_threads(|| deinterleave(values, &mut re, &mut im));
    let re = session.from_vec(re, &shape).map_err(to_py)?;
    let im = session.from_vec(im, &shape).map_err(to_py)?;
    Ok((PyArr::new(re), PyArr::new(im)))
}

/// `re[i], im[i] = values[i]`, in pieces on scoped threads.
fn deinterleave<T: Copy + Send + Sync>(values: &[Complex<T>], re: &mut [T], im: &mut [T]) {
    let piece = values.len().div_ceil(threads_for(values.len())).max(1);
    std::thread::scope(|scope| {
        for ((values, re), im) in values
            .chunks(piece)
            .zip(re.chunks_mut(piece))
            .zip(im.chunks_mut(piece))
        {
            scope.spawn(move || {
                for ((value, re), im) in values.iter().zip(re).zip(im) {
                    (*re, *im) = (value.re, value.im);
                }
            });
        }
    });
}

/// Threads for a pass over `len` elements: one below [`PARALLEL_ELEMENTS`].
fn threads_for(len: usize) -> usize {
    match len < PARALLEL_ELEMENTS {
        true => 1,
        false => std::thread::available_parallelism().map_or(1, |n| n.get()),
    }
}

/// Elements below which interleaving runs on the calling thread.
const PARALLEL_ELEMENTS: usize = 1 << 16;

/// `out[i] = re[i] + i im[i]`, in pieces on scoped threads.
fn interleave<T: Copy + Send + Sync>(re: &[T], im: &[T], out: &mut [Complex<T>]) {
    let piece = out.len().div_ceil(threads_for(out.len())).max(1);
    std::thread::scope(|scope| {
        for (k, part) in out.chunks_mut(piece).enumerate() {
            let (re, im) = (&re[k * piece..], &im[k * piece..]);
            scope.spawn(move || {
                for (i, value) in part.iter_mut().enumerate() {
                    *value = Complex {
                        re: re[i],
                        im: im[i],
                    };
                }
            });
        }
    });
}

/// NumPy's function `name` of the complex array.
#[pyfunction]
pub(crate) fn complex_unary(
    py: Python<'_>,
    name: &str,
    re: PyRef<'_, PyArr>,
    im: PyRef<'_, PyArr>,
) -> PyResult<PyObject> {
    result(py, complex(&re, &im)?.apply_named(name).map_err(to_py)?)
}

/// The other operand of a complex operation: a real array, a pair of
/// parts, or a Python number.
fn operand(other: &Bound<'_, PyAny>) -> PyResult<ComplexOperand> {
    if let Ok(a) = other.downcast::<PyArr>() {
        return Ok(ComplexOperand::Real(a.get().inner.clone()));
    }
    if let Ok((re, im)) = other.extract::<(PyRef<'_, PyArr>, PyRef<'_, PyArr>)>() {
        return Ok(ComplexOperand::Complex(complex(&re, &im)?));
    }
    if let Ok(z) = other.downcast::<PyComplex>() {
        return Ok(ComplexOperand::Scalar(z.real(), z.imag()));
    }
    if let Ok(x) = other.extract::<f64>() {
        return Ok(ComplexOperand::Scalar(x, 0.0));
    }
    Err(PyTypeError::new_err(format!(
        "a complex operation with a {} (expected a lazyfuse array or a number)",
        other.get_type().name()?
    )))
}

/// NumPy's binary function `name` (`add` … `not_equal`) of the complex
/// array and `other`, or of `other` and the array when `reflected`.
#[pyfunction]
pub(crate) fn complex_binary(
    py: Python<'_>,
    name: &str,
    re: PyRef<'_, PyArr>,
    im: PyRef<'_, PyArr>,
    other: &Bound<'_, PyAny>,
    reflected: bool,
) -> PyResult<PyObject> {
    let op = lazyfuse::ComplexBinary::from_name(name)
        .ok_or_else(|| PyTypeError::new_err(format!("{name}: not defined for complex arrays")))?;
    let z = complex(&re, &im)?;
    result(py, z.binary(op, operand(other)?, reflected).map_err(to_py)?)
}

/// The complex array to the integer power `n` (repeated multiplication).
#[pyfunction]
pub(crate) fn complex_powi(re: PyRef<'_, PyArr>, im: PyRef<'_, PyArr>, n: i64) -> PyResult<Parts> {
    parts(complex(&re, &im)?.powi(n).map_err(to_py)?)
}

/// The sum (`mean`: the mean) of the complex array over `axes`.
#[pyfunction]
pub(crate) fn complex_reduce(
    re: PyRef<'_, PyArr>,
    im: PyRef<'_, PyArr>,
    mean: bool,
    axes: Vec<isize>,
    keepdims: bool,
) -> PyResult<Parts> {
    let z = complex(&re, &im)?;
    parts(match mean {
        true => z.mean_axes(&axes, keepdims),
        false => z.sum_axes(&axes, keepdims),
    })
}

/// The input of a transform: complex parts, or a real array (`im` None).
fn signal(re: &PyArr, im: Option<&PyArr>) -> PyResult<ComplexArray> {
    match im {
        Some(im) => complex(re, im),
        None => ComplexArray::from_real(&re.inner, None).map_err(to_py),
    }
}

/// One-axis transform `kind` (`fft`, `ifft`, `rfft`, `irfft`, `hfft`,
/// `ihfft`) of `(re, im)` (`im` None: real).
#[pyfunction]
#[pyo3(signature = (kind, re, im, n, axis, norm))]
pub(crate) fn fft1(
    py: Python<'_>,
    kind: &str,
    re: PyRef<'_, PyArr>,
    im: Option<PyRef<'_, PyArr>>,
    n: Option<usize>,
    axis: isize,
    norm: &str,
) -> PyResult<PyObject> {
    let norm = Norm::from_name(norm).map_err(to_py)?;
    let z = || signal(&re, im.as_deref());
    let r = match kind {
        "fft" => ComplexResult::Complex(fft::fft(&z()?, n, axis, norm).map_err(to_py)?),
        "ifft" => ComplexResult::Complex(fft::ifft(&z()?, n, axis, norm).map_err(to_py)?),
        "rfft" => ComplexResult::Complex(fft::rfft(&re.inner, n, axis, norm).map_err(to_py)?),
        "ihfft" => ComplexResult::Complex(fft::ihfft(&re.inner, n, axis, norm).map_err(to_py)?),
        "irfft" => ComplexResult::Real(fft::irfft(&z()?, n, axis, norm).map_err(to_py)?),
        "hfft" => ComplexResult::Real(fft::hfft(&z()?, n, axis, norm).map_err(to_py)?),
        other => return Err(PyTypeError::new_err(format!("no transform {other}"))),
    };
    result(py, r)
}

/// Several-axis transform `kind` (`fftn`, `ifftn`, `rfftn`, `irfftn`) of
/// `(re, im)` (`im` None: real).
#[pyfunction]
#[pyo3(signature = (kind, re, im, s, axes, norm))]
pub(crate) fn fftn(
    py: Python<'_>,
    kind: &str,
    re: PyRef<'_, PyArr>,
    im: Option<PyRef<'_, PyArr>>,
    s: Option<Vec<usize>>,
    axes: Option<Vec<isize>>,
    norm: &str,
) -> PyResult<PyObject> {
    let norm = Norm::from_name(norm).map_err(to_py)?;
    let (s, axes) = (s.as_deref(), axes.as_deref());
    let z = || signal(&re, im.as_deref());
    let r = match kind {
        "fftn" => ComplexResult::Complex(fft::fftn(&z()?, s, axes, norm).map_err(to_py)?),
        "ifftn" => ComplexResult::Complex(fft::ifftn(&z()?, s, axes, norm).map_err(to_py)?),
        "rfftn" => ComplexResult::Complex(fft::rfftn(&re.inner, s, axes, norm).map_err(to_py)?),
        "irfftn" => ComplexResult::Real(fft::irfftn(&z()?, s, axes, norm).map_err(to_py)?),
        other => return Err(PyTypeError::new_err(format!("no transform {other}"))),
    };
    result(py, r)
}

/// NumPy's names of the functions of one complex array lazyfuse has (the
/// library's table, `ComplexUnary`), so the Python package keeps no list.
#[pyfunction]
pub(crate) fn complex_unary_names() -> Vec<&'static str> {
    lazyfuse::ComplexUnary::ALL
        .iter()
        .map(|op| op.name())
        .collect()
}

/// NumPy's names of the complex binary operations (`ComplexBinary`).
#[pyfunction]
pub(crate) fn complex_binary_names() -> Vec<&'static str> {
    lazyfuse::ComplexBinary::ALL
        .iter()
        .map(|op| op.name())
        .collect()
}

/// Adds this module's functions to the native module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(complex_new, m)?)?;
    m.add_function(wrap_pyfunction!(complex_from_real, m)?)?;
    m.add_function(wrap_pyfunction!(complex_astype, m)?)?;
    m.add_function(wrap_pyfunction!(complex_numpy, m)?)?;
    m.add_function(wrap_pyfunction!(complex_unary, m)?)?;
    m.add_function(wrap_pyfunction!(complex_binary, m)?)?;
    m.add_function(wrap_pyfunction!(complex_powi, m)?)?;
    m.add_function(wrap_pyfunction!(complex_reduce, m)?)?;
    m.add_function(wrap_pyfunction!(complex_unary_names, m)?)?;
    m.add_function(wrap_pyfunction!(complex_binary_names, m)?)?;
    m.add_function(wrap_pyfunction!(fft1, m)?)?;
    m.add_function(wrap_pyfunction!(fftn, m)?)?;
    Ok(())
}
