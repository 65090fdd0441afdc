//! `cuda.pinned_array` and `cuda.mapped_array` on the Rust side: a NumPy
//! array whose memory is a pinned buffer of the context (`PinnedBuf`), so
//! that `copy_to_host(out=)` into it is a direct download with no staging
//! copy, or a mapped one (`MappedBuf`), which the device writes in place.
//! Its memory is owned by a `PinnedMemory` object, the NumPy array's base;
//! lazyfuse arrays never share it (`asarray` copies it), so NumPy may write
//! it freely.

use half::f16;
use lazyfuse::{Context, DType, Element, MappedBuf, PinnedBuf};
use numpy::ndarray::ArrayViewD;
use numpy::PyArray;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use crate::errors::to_py;

/// The pinned buffer behind a NumPy array (its base object).
#[pyclass(name = "PinnedMemory", module = "lazyfuse", frozen)]
pub(crate) struct PyPinned {
    buffer: Pinned,
}

#[pymethods]
impl PyPinned {
    /// Numba's `cuda.to_device` of the NumPy array over this memory: a
    /// device copy of its elements as `shape`, made now (straight from
    /// pinned memory, with no staging copy); later writes of the NumPy
    /// array do not reach it.
    fn upload(&self, py: Python<'_>, shape: Vec<usize>) -> PyResult<crate::array::PyArr> {
        macro_rules! upload {
            ($($variant:ident),*) => {
                match &self.buffer {
                    $(Pinned::$variant(b) => b.upload(&shape),)*
                }
            };
        }
        let array =
            py.allow_threads(|| upload!(F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, Bool));
        array.map(crate::array::PyArr::new).map_err(to_py)
    }
}

/// Page-locked host memory of `T`: pinned, or mapped into the device.
enum Locked<T: Element> {
    Pinned(PinnedBuf<T>),
    Mapped(MappedBuf<T>),
}

impl<T: Element> Locked<T> {
    /// `n` zeroed elements of `cx`, mapped when `mapped`.
    fn new(cx: &Context, n: usize, mapped: bool) -> PyResult<Locked<T>> {
        Ok(match mapped {
            true => Locked::Mapped(cx.mapped(n).map_err(to_py)?),
            false => Locked::Pinned(cx.pinned(n).map_err(to_py)?),
        })
    }

    fn elements(&self) -> &[T] {
        match self {
            Locked::Pinned(b) => b,
            Locked::Mapped(b) => b,
        }
    }

    /// A device copy of the elements as `shape`, made now.
    fn upload(&self, shape: &[usize]) -> lazyfuse::Result<lazyfuse::Array> {
        match self {
            Locked::Pinned(b) => b.upload(shape),
            Locked::Mapped(b) => b.upload(shape),
        }
    }
}

/// A page-locked buffer of one of the dtypes NumPy has.
enum Pinned {
    F16(Locked<f16>),
    F32(Locked<f32>),
    F64(Locked<f64>),
    I8(Locked<i8>),
    I16(Locked<i16>),
    I32(Locked<i32>),
    I64(Locked<i64>),
    U8(Locked<u8>),
    U16(Locked<u16>),
    U32(Locked<u32>),
    U64(Locked<u64>),
    Bool(Locked<bool>),
}

/// A NumPy array of `shape` over pinned (or, when `mapped`, mapped) memory
/// of `cx`: zeroed, writeable.
pub(crate) fn pinned_array(
    py: Python<'_>,
    cx: &Context,
    shape: Vec<usize>,
    dtype: DType,
    mapped: bool,
) -> PyResult<PyObject> {
    let n = shape.iter().product();
    let what = if mapped {
        "mapped_array"
    } else {
        "pinned_array"
    };
    macro_rules! make {
        ($($variant:ident => $t:ty),*) => {
            match dtype {
                $(DType::$variant => Pinned::$variant(Locked::new(cx, n, mapped)?),)*
                DType::BF16 => {
                    return Err(PyTypeError::new_err(format!(
                        "{what}: NumPy has no bfloat16 (use float32)",
                    )))
                }
            }
        };
    }
    let buffer = make!(F16 => f16, F32 => f32, F64 => f64, I8 => i8, I16 => i16, I32 => i32,
        I64 => i64, U8 => u8, U16 => u16, U32 => u32, U64 => u64, Bool => bool);
    let owner = Bound::new(py, PyPinned { buffer })?;
    macro_rules! view {
        ($($variant:ident),*) => {
            match &owner.get().buffer {
                $(Pinned::$variant(b) => numpy_view(b.elements(), &shape, &owner, what),)*
            }
        };
    }
    view!(F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, Bool)
}

/// A NumPy array over `buffer`'s elements, in `shape`, kept alive by `owner`.
fn numpy_view<T: Element + numpy::Element>(
    buffer: &[T],
    shape: &[usize],
    owner: &Bound<'_, PyPinned>,
    what: &str,
) -> PyResult<PyObject> {
    let view = ArrayViewD::from_shape(shape, buffer)
        .map_err(|e| PyTypeError::new_err(format!("{what}: {e}")))?;
    // SAFETY: `owner` (the array's base) owns the pinned buffer and is
    // frozen: the buffer is neither freed nor reallocated while the NumPy
    // array lives, and no lazyfuse array shares it (asarray copies it), so
    // its writes through NumPy are the only writes.
    let array = unsafe { PyArray::borrow_from_array(&view, owner.clone().into_any()) };
    Ok(array.into_any().unbind())
}
