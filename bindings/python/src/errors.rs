//! `lazyfuse::Error` as Python exceptions: the classes of
//! `lazyfuse.errors`, each a `LazyfuseError` and also the built-in
//! exception NumPy raises for its kind (shapes and bad arguments are
//! `ValueError`s, dtypes `TypeError`s, compilation, backends and devices
//! `RuntimeError`s). The message is lazyfuse's: it names the operation,
//! the shapes or dtypes, and what was expected.

use lazyfuse::Error;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyType;

/// The exception class `name` of `lazyfuse.errors`.
fn class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyType>> {
    Ok(py
        .import("lazyfuse.errors")?
        .getattr(name)?
        .downcast_into::<PyType>()?)
}

/// A `lazyfuse.errors` exception of class `name` with `message`. If the
/// module cannot be imported (the native module used on its own), a
/// `RuntimeError` still carries the message.
pub(crate) fn raise(name: &str, message: String) -> PyErr {
    Python::with_gil(|py| match class(py, name) {
        Ok(cls) => PyErr::from_type(cls, message),
        Err(_) => PyRuntimeError::new_err(message),
    })
}

/// A `lazyfuse.CompileError` with `message`.
pub(crate) fn compile_error(message: String) -> PyErr {
    raise("CompileError", message)
}

/// The Python exception for `error`.
pub(crate) fn to_py(error: Error) -> PyErr {
    let name = match &error {
        Error::ShapeMismatch { .. } => "ShapeError",
        Error::InvalidArgument { .. } => "ArgumentError",
        Error::DTypeMismatch { .. } => "DTypeError",
        Error::Compile { .. } => "CompileError",
        Error::BackendUnavailable { .. } => "BackendError",
        Error::Device { .. } => "DeviceError",
        Error::Internal { .. } => "InternalError",
        _ => "LazyfuseError",
    };
    raise(name, error.to_string())
}
