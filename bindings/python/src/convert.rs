//! Arrays from and to NumPy: elements are copied (row-major) into
//! lazyfuse, except a computed value NumPy views whole, which comes back
//! shared; out of it, a computed value is shared read-only
//! ([`to_numpy_view`]) and the rest computed into new NumPy memory. Every
//! NumPy dtype lazyfuse has converts; `bfloat16` (which NumPy lacks) comes
//! back as `float32`.

use std::sync::Arc;

use half::{bf16, f16};
use lazyfuse::{Array, DType, Session};
use numpy::{
    PyArray, PyArray1, PyArrayMethods, PyReadonlyArrayDyn, PyReadwriteArrayDyn, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::errors::{self, to_py};

/// The most dimensions an array from NumPy may have: rust-numpy's views
/// panic past 32 (NumPy 1's limit; NumPy 2 allows 64).
const MAX_NDIM: usize = 32;

/// Copies a NumPy array into a new array of `cx`.
pub(crate) fn from_numpy(cx: &Session, array: &Bound<'_, PyAny>) -> PyResult<Array> {
    let ndim = match array.downcast::<PyUntypedArray>() {
        Ok(untyped) => untyped.ndim(),
        Err(_) => array.getattr("ndim")?.extract()?,
    };
    if ndim > MAX_NDIM {
        return Err(errors::raise(
            "ArgumentError",
            format!("asarray: a NumPy array of {ndim} dimensions (expected at most {MAX_NDIM})"),
        ));
    }
    // A computed value handed out by `np.asarray` comes back without a copy.
    if let Some(value) = viewed_value(array) {
        let shape: Vec<usize> = array.downcast::<PyUntypedArray>()?.shape().to_vec();
        return cx.from_shared(value, &shape).map_err(to_py);
    }
    macro_rules! try_dtypes {
        ($($t:ty),*) => {$(
            if let Ok(view) = array.extract::<PyReadonlyArrayDyn<'_, $t>>() {
                let shape = view.shape().to_vec();
                let dtype = <$t as lazyfuse::Element>::DTYPE;
                cx.count_host_copy(view.len() * dtype.size());
                if view.len() * dtype.size() < lazyfuse::core::element::spare::SMALLEST_BYTES {
                    let data: Vec<$t> = match view.as_slice() {
                        Ok(dense) => dense.to_vec(),
                        Err(_) => view.as_array().iter().copied().collect(),
                    };
                    return cx.from_vec(data, &shape).map_err(to_py);
                }
                // From 64 KiB: into a spare buffer of its size, whose values
                // the copy below replaces all (`for_overwrite`), else new
                // memory, on huge pages from 4 MiB (NumPy's own rule). New
                // memory is faulted in by the copy: 10^6 float32 took 590 µs
                // into new memory, a 40 MB buffer on 4 KiB pages more time
                // in page faults than in the copy.
                let mut buffer = lazyfuse::codegen::cpu::pages::for_overwrite(dtype, view.len())
                    .map_err(to_py)?;
                let mut slice = buffer.as_slice_mut();
                match (view.as_slice(), slice.as_bytes_mut()) {
                    // Contiguous: copied on the CPU backend's threads (one
                    // thread gets ~60 % of the memory's bandwidth here).
                    (Ok(dense), Some(into)) => {
                        let pool = lazyfuse::codegen::cpu::kernels::pool(0);
                        let from: &[u8] = bytemuck::cast_slice(dense);
                        lazyfuse::codegen::cpu::pages::copy_bytes(into, from, pool.as_deref());
                    }
                    _ => {
                        let into = <$t as lazyfuse::Element>::slice_of_mut(&mut buffer).ok_or_else(|| {
                            errors::raise("InternalError", "asarray: a buffer of another dtype".into())
                        })?;
                        into.iter_mut().zip(view.as_array().iter()).for_each(|(i, v)| *i = *v);
                    }
                }
                return cx.from_buffer(buffer, &shape).map_err(to_py);
            }
        )*};
    }
    try_dtypes!(f32, f64, i32, i64, bool, f16, i8, i16, u8, u16, u32, u64);
    // The other byte order (`>f8` on this machine): its values in this
    // one, copied by NumPy, as NumPy's own arithmetic on them would.
    if let Ok(dtype) = array.getattr("dtype") {
        if !dtype.getattr("isnative")?.extract::<bool>()? {
            let native = dtype.call_method1("newbyteorder", ("=",))?;
            return from_numpy(cx, &array.call_method1("astype", (native,))?);
        }
    }
    let dtype = array
        .getattr("dtype")
        .map(|d| d.to_string())
        .unwrap_or_else(|_| "unknown".to_string());
    Err(PyTypeError::new_err(format!(
        "asarray: cannot hold a NumPy array of dtype {dtype} as a real array (expected a bool, integer or float dtype; lazyfuse.asarray makes complex64 and complex128 arrays lazyfuse.ComplexArray)"
    )))
}

/// The array's value as a new NumPy array (computing it).
pub(crate) fn to_numpy(py: Python<'_>, array: &Array) -> PyResult<PyObject> {
    let shape = array.shape().to_vec();
    macro_rules! convert {
        ($t:ty) => {{
            // Computed straight into a new NumPy array (NumPy's memory:
            // huge pages for large arrays, memory it freed reused), not
            // into lazyfuse's memory and then copied; `np.empty`'s, not
            // `np.zeros`', as zeroing reused memory is a pass of its own.
            // SAFETY: every bit pattern is a value of `$t` (a number, not
            // a bool: those take the zeroed form below), nothing is
            // dropped, `read_into` writes every element, and Python sees
            // the array only once it has.
            let out = unsafe { PyArray::<$t, _>::new(py, shape, false) };
            convert!(into out, $t)
        }};
        (zeroed $t:ty) => {{
            let out = PyArray::<$t, _>::zeros(py, shape, false);
            convert!(into out, $t)
        }};
        (into $out:ident, $t:ty) => {{
            let out = $out;
            let mut view = out.readwrite();
            let slice = view.as_slice_mut().map_err(|_| {
                errors::raise(
                    "LazyfuseError",
                    "numpy: a new array that is not contiguous".into(),
                )
            })?;
            py.allow_threads(|| array.read_into::<$t>(slice))
                .map_err(to_py)?;
            drop(view);
            Ok(out.into_any().unbind())
        }};
    }
    match array.dtype() {
        DType::F16 => convert!(f16),
        DType::F32 => convert!(f32),
        DType::F64 => convert!(f64),
        DType::I8 => convert!(i8),
        DType::I16 => convert!(i16),
        DType::I32 => convert!(i32),
        DType::I64 => convert!(i64),
        DType::U8 => convert!(u8),
        DType::U16 => convert!(u16),
        DType::U32 => convert!(u32),
        DType::U64 => convert!(u64),
        DType::Bool => convert!(zeroed bool),
        DType::BF16 => {
            let data: Vec<f32> = py
                .allow_threads(|| array.to_vec::<bf16>())
                .map_err(to_py)?
                .into_iter()
                .map(f32::from)
                .collect();
            let flat = PyArray1::from_vec(py, data);
            Ok(flat.reshape(shape)?.into_any().unbind())
        }
    }
}

/// Keeps a computed value's host memory alive while NumPy arrays view it
/// (their base object).
#[pyclass(frozen)]
pub(crate) struct HostValue(Arc<lazyfuse::HostBuffer>);

/// The computed value a NumPy array views whole — `np.asarray(y)` of a
/// lazyfuse array, whose base is its `HostValue`: the same elements in the
/// same order and dtype — or None for any other array. Such a view is
/// read-only and cannot be made writeable, so the value may be shared.
fn viewed_value(array: &Bound<'_, PyAny>) -> Option<Arc<lazyfuse::HostBuffer>> {
    let untyped = array.downcast::<PyUntypedArray>().ok()?;
    // SAFETY: `untyped` is a live NumPy array; its flags are read.
    let flags = unsafe { (*untyped.as_array_ptr()).flags };
    if flags & numpy::npyffi::flags::NPY_ARRAY_WRITEABLE != 0 {
        return None; // (first: most arrays, and no attribute lookup for them)
    }
    let base = array.getattr("base").ok()?;
    let value = base.downcast::<HostValue>().ok()?;
    let buffer = &value.get().0;
    let dtype = untyped.dtype().to_string();
    // SAFETY: `untyped` is a live NumPy array; its data pointer is read,
    // not dereferenced.
    let data = unsafe { (*untyped.as_array_ptr()).data } as *const u8;
    let whole = untyped.is_c_contiguous()
        && untyped.len() == buffer.len()
        && dtype == buffer.dtype().name()
        && std::ptr::eq(data, buffer.as_bytes().as_ptr());
    whole.then(|| Arc::clone(buffer))
}

/// The array's value as NumPy sees it (`np.asarray`): computed (and kept)
/// if it was not, then, when it is in host memory, a read-only NumPy array
/// over that memory — no copy, as JAX's on the CPU; lazyfuse never writes
/// a value another holder shares — else (a device's value, bfloat16, which
/// NumPy lacks) a new NumPy array ([`to_numpy`]).
pub(crate) fn to_numpy_view(py: Python<'_>, array: &Array) -> PyResult<PyObject> {
    // Computed once and kept: a second `np.asarray` of the array is free.
    if !array.is_materialized() {
        py.allow_threads(|| array.eval()).map_err(to_py)?;
    }
    let Some(buffer) = array.host_value() else {
        return to_numpy(py, array);
    };
    let shape = array.shape().to_vec();
    macro_rules! view {
        ($t:ty) => {{
            let data: &[$t] = buffer.as_slice().ok_or_else(|| {
                errors::raise("InternalError", "numpy: a value of another dtype".into())
            })?;
            // SAFETY: `data` holds the `shape`'s elements in row-major
            // order (`host_value` checked its length), is aligned for `$t`
            // and lives in `buffer`, which the view's base object below
            // keeps alive and nothing writes while it is shared.
            let elements = unsafe {
                numpy::ndarray::ArrayView::from_shape_ptr(
                    numpy::ndarray::IxDyn(&shape),
                    data.as_ptr(),
                )
            };
            let owner = Bound::new(py, HostValue(Arc::clone(&buffer)))?;
            // SAFETY: `owner` becomes the array's base, so `buffer` (never
            // reallocated: it is shared and immutable) outlives the array.
            let view = unsafe { PyArray::borrow_from_array(&elements, owner.into_any()) };
            // Read-only; without OWNDATA, Python cannot make it writeable
            // again. (The flag is cleared directly: `make_nonwriteable`
            // would go through rust-numpy's borrow registry, a microsecond.)
            // SAFETY: `view` is a valid array just created, not yet seen
            // by Python or borrowed; clearing WRITEABLE only forbids writes.
            unsafe {
                (*view.as_array_ptr()).flags &= !numpy::npyffi::flags::NPY_ARRAY_WRITEABLE;
            }
            Ok(view.into_any().unbind())
        }};
    }
    match array.dtype() {
        DType::F16 => view!(f16),
        DType::F32 => view!(f32),
        DType::F64 => view!(f64),
        DType::I8 => view!(i8),
        DType::I16 => view!(i16),
        DType::I32 => view!(i32),
        DType::I64 => view!(i64),
        DType::U8 => view!(u8),
        DType::U16 => view!(u16),
        DType::U32 => view!(u32),
        DType::U64 => view!(u64),
        DType::Bool => view!(bool),
        DType::BF16 => to_numpy(py, array),
    }
}

/// Computes `arrays` into new NumPy arrays, in order, in one program per
/// context: on the CPU straight into NumPy's memory when the program's
/// last kernel writes every result (nothing is kept), else one demand of
/// all of them (values kept) and a copy of each.
pub(crate) fn to_numpy_all(py: Python<'_>, arrays: &[&Array]) -> PyResult<Vec<PyObject>> {
    let Some(first) = arrays.first() else {
        return Ok(Vec::new());
    };
    let direct = arrays.iter().all(|a| {
        a.session().same_as(first.session()) && !matches!(a.dtype(), DType::Bool | DType::BF16)
    });
    if !direct {
        py.allow_threads(|| eval_by_context(arrays))
            .map_err(to_py)?;
        return arrays.iter().map(|a| to_numpy(py, a)).collect();
    }
    let mut objects: Vec<PyObject> = Vec::with_capacity(arrays.len());
    let mut outs: Vec<lazyfuse::SliceMut<'_>> = Vec::with_capacity(arrays.len());
    for array in arrays {
        let len = array.len();
        macro_rules! new_array {
            ($t:ty) => {{
                // SAFETY: every bit pattern is a value of `$t` (no bool:
                // those take the other path), and `read_all_into` writes
                // every element before Python sees the array.
                let out = unsafe { PyArray::<$t, _>::new(py, array.shape().to_vec(), false) };
                let data = out.data();
                let slice: &mut [$t] = if len == 0 {
                    &mut []
                } else {
                    // SAFETY: a new C-contiguous array of `len` elements
                    // at `data`, kept alive in `objects` until the demand
                    // below has returned, and not visible to Python code
                    // (nothing else reads or writes it) until then.
                    unsafe { std::slice::from_raw_parts_mut(data, len) }
                };
                outs.push(<$t as lazyfuse::Element>::wrap_mut(slice));
                objects.push(out.into_any().unbind());
            }};
        }
        match array.dtype() {
            DType::F16 => new_array!(f16),
            DType::F32 => new_array!(f32),
            DType::F64 => new_array!(f64),
            DType::I8 => new_array!(i8),
            DType::I16 => new_array!(i16),
            DType::I32 => new_array!(i32),
            DType::I64 => new_array!(i64),
            DType::U8 => new_array!(u8),
            DType::U16 => new_array!(u16),
            DType::U32 => new_array!(u32),
            DType::U64 => new_array!(u64),
            DType::Bool | DType::BF16 => {
                return Err(errors::raise(
                    "InternalError",
                    "compute: a bool or bfloat16 array on the direct path".into(),
                ))
            }
        }
    }
    py.allow_threads(|| first.session().read_all_into(arrays, outs))
        .map_err(to_py)?;
    Ok(objects)
}

/// Computes every array in one demand per context (work they share runs
/// once) and keeps their values.
pub(crate) fn eval_by_context(arrays: &[&Array]) -> lazyfuse::Result<()> {
    let mut by_context: Vec<Vec<&Array>> = Vec::new();
    for &a in arrays {
        match by_context
            .iter_mut()
            .find(|group| group[0].session().same_as(a.session()))
        {
            Some(group) => group.push(a),
            None => by_context.push(vec![a]),
        }
    }
    by_context
        .iter()
        .try_for_each(|group| group[0].session().eval(group))
}

/// Computes `array` straight into `out`, a writeable C-contiguous NumPy
/// array of its shape and dtype (no intermediate copy; the GIL is released
/// while it runs). `bfloat16` arrays, which NumPy lacks, cannot be.
pub(crate) fn read_into(py: Python<'_>, array: &Array, out: &Bound<'_, PyAny>) -> PyResult<()> {
    // Checked before the typed view is taken: rust-numpy's views panic
    // past 32 dimensions, and the untyped array reads its shape directly.
    let untyped = out
        .downcast::<PyUntypedArray>()
        .map_err(|_| PyTypeError::new_err("copy_to_host: out must be a NumPy array"))?;
    let out_shape = untyped.shape();
    if out_shape != array.shape() {
        return Err(errors::raise(
            "ShapeError",
            format!(
                "copy_to_host: out has shape {out_shape:?}, the array {:?} (expected the same)",
                array.shape()
            ),
        ));
    }
    macro_rules! into {
        ($t:ty) => {{
            let mut view = out.extract::<PyReadwriteArrayDyn<'_, $t>>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "copy_to_host: out must be a writeable NumPy array of dtype {} (the array's)",
                    array.dtype()
                ))
            })?;
            let slice = view.as_slice_mut().map_err(|_| {
                PyValueError::new_err("copy_to_host: out must be C-contiguous")
            })?;
            py.allow_threads(|| array.read_into::<$t>(slice)).map_err(to_py)
        }};
    }
    match array.dtype() {
        DType::F16 => into!(f16),
        DType::F32 => into!(f32),
        DType::F64 => into!(f64),
        DType::I8 => into!(i8),
        DType::I16 => into!(i16),
        DType::I32 => into!(i32),
        DType::I64 => into!(i64),
        DType::U8 => into!(u8),
        DType::U16 => into!(u16),
        DType::U32 => into!(u32),
        DType::U64 => into!(u64),
        DType::Bool => into!(bool),
        DType::BF16 => Err(PyTypeError::new_err(
            "copy_to_host: a bfloat16 array cannot be written into a NumPy array (NumPy has no bfloat16; numpy() gives float32)",
        )),
    }
}

/// The only element as a Python scalar.
pub(crate) fn item(py: Python<'_>, array: &Array) -> PyResult<PyObject> {
    macro_rules! scalar {
        ($t:ty) => {
            py.allow_threads(|| array.item::<$t>())
                .map_err(to_py)?
                .into_pyobject(py)?
                .into_any()
                .unbind()
        };
    }
    Ok(match array.dtype() {
        DType::F16 => f32::from(py.allow_threads(|| array.item::<f16>()).map_err(to_py)?)
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        DType::BF16 => f32::from(py.allow_threads(|| array.item::<bf16>()).map_err(to_py)?)
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        DType::F32 => scalar!(f32),
        DType::F64 => scalar!(f64),
        DType::I8 => scalar!(i8),
        DType::I16 => scalar!(i16),
        DType::I32 => scalar!(i32),
        DType::I64 => scalar!(i64),
        DType::U8 => scalar!(u8),
        DType::U16 => scalar!(u16),
        DType::U32 => scalar!(u32),
        DType::U64 => scalar!(u64),
        DType::Bool => py
            .allow_threads(|| array.item::<bool>())
            .map_err(to_py)?
            .into_pyobject(py)?
            .to_owned()
            .into_any()
            .unbind(),
    })
}
