//! `lazyfuse::Error` as Python exceptions, NumPy's way: shapes that do
//! not fit and bad arguments are `ValueError`s, dtypes `TypeError`s,
//! backends and devices that fail `RuntimeError`s, code that cannot be
//! compiled `lazyfuse.CompileError` (a `RuntimeError`). The message is
//! lazyfuse's: it names the operation, the shapes or dtypes, and what was
//! expected.

use lazyfuse::Error;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;

pyo3::create_exception!(
    lazyfuse,
    CompileError,
    PyRuntimeError,
    "Code that could not be compiled: a kernel, or Python outside the subset lazyfuse translates."
);

/// The Python exception for `error`.
pub(crate) fn to_py(error: Error) -> PyErr {
    let message = error.to_string();
    match error {
        Error::ShapeMismatch { .. } | Error::InvalidArgument { .. } => {
            PyValueError::new_err(message)
        }
        Error::DTypeMismatch { .. } => PyTypeError::new_err(message),
        Error::Compile { .. } => CompileError::new_err(message),
        _ => PyRuntimeError::new_err(message),
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("CompileError", m.py().get_type::<CompileError>())
}
