//! `cuda.pinned_array` on the Rust side: a NumPy array whose memory is a
//! pinned buffer of the context (`PinnedBuf`), so that `copy_to_host(out=)`
//! into it is a direct download with no staging copy. Its memory is owned
//! by a `PinnedMemory` object, the NumPy array's base; lazyfuse arrays
//! never share it (`asarray` copies it), so NumPy may write it freely.

use half::f16;
use lazyfuse::{Context, DType, Element, PinnedBuf};
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

/// A pinned buffer of one of the dtypes NumPy has.
enum Pinned {
    F16(PinnedBuf<f16>),
    F32(PinnedBuf<f32>),
    F64(PinnedBuf<f64>),
    I8(PinnedBuf<i8>),
    I16(PinnedBuf<i16>),
    I32(PinnedBuf<i32>),
    I64(PinnedBuf<i64>),
    U8(PinnedBuf<u8>),
    U16(PinnedBuf<u16>),
    U32(PinnedBuf<u32>),
    U64(PinnedBuf<u64>),
    Bool(PinnedBuf<bool>),
}

/// A NumPy array of `shape` over pinned memory of `cx`: zeroed, writeable.
pub(crate) fn pinned_array(
    py: Python<'_>,
    cx: &Context,
    shape: Vec<usize>,
    dtype: DType,
) -> PyResult<PyObject> {
    let n = shape.iter().product();
    macro_rules! make {
        ($($variant:ident => $t:ty),*) => {
            match dtype {
                $(DType::$variant => Pinned::$variant(cx.pinned::<$t>(n).map_err(to_py)?),)*
                DType::BF16 => {
                    return Err(PyTypeError::new_err(
                        "pinned_array: NumPy has no bfloat16 (use float32)",
                    ))
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
                $(Pinned::$variant(b) => numpy_view(b, &shape, &owner),)*
            }
        };
    }
    view!(F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, Bool)
}

/// A NumPy array over `buffer`'s elements, in `shape`, kept alive by `owner`.
fn numpy_view<T: Element + numpy::Element>(
    buffer: &PinnedBuf<T>,
    shape: &[usize],
    owner: &Bound<'_, PyPinned>,
) -> PyResult<PyObject> {
    let view = ArrayViewD::from_shape(shape, &buffer[..])
        .map_err(|e| PyTypeError::new_err(format!("pinned_array: {e}")))?;
    // SAFETY: `owner` (the array's base) owns the pinned buffer and is
    // frozen: the buffer is neither freed nor reallocated while the NumPy
    // array lives, and no lazyfuse array shares it (asarray copies it), so
    // its writes through NumPy are the only writes.
    let array = unsafe { PyArray::borrow_from_array(&view, owner.clone().into_any()) };
    Ok(array.into_any().unbind())
}
