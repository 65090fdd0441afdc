//! The one error type of lazyfuse.
//!
//! Every variant names the operation that failed (`op`), and its message names
//! the shapes and dtypes involved and what was expected. Errors are `Clone`:
//! an invalid node keeps its error and every expression built on it reports
//! the same one when demanded.

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong, and in which operation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Shapes that do not fit: broadcasting, reshape, read buffers of the wrong length.
    #[error("{op}: {message}")]
    ShapeMismatch {
        /// The operation, e.g. `"add"` or `"reshape"`.
        op: String,
        /// Shapes involved and what was expected.
        message: String,
    },
    /// Element types that do not fit: `to_vec::<f64>()` on an `f32` array,
    /// `bool - bool`, no matching ufunc signature.
    #[error("{op}: {message}")]
    DTypeMismatch {
        /// The operation.
        op: String,
        /// Dtypes involved and what was expected.
        message: String,
    },
    /// An argument out of its domain: an axis out of range, a zero step, an
    /// unparsable signature, `item` on an array of more than one element.
    #[error("{op}: {message}")]
    InvalidArgument {
        /// The operation.
        op: String,
        /// What was given and what was expected.
        message: String,
    },
    /// The requested backend cannot run here (no driver, no device, not built).
    #[error("backend '{backend}' is unavailable: {reason}")]
    BackendUnavailable {
        /// `"cuda"`, `"sim"`, ...
        backend: String,
        /// Why, as precisely as known.
        reason: String,
    },
    /// A generated kernel failed to compile.
    #[error("compiling kernel {kernel} failed:\n{log}\n--- generated source ---\n{source_code}")]
    Compile {
        /// The kernel's name.
        kernel: String,
        /// The generated source.
        source_code: String,
        /// The compiler's log.
        log: String,
    },
    /// A device (or simulated device) reported an error.
    #[error("{op}: device error: {message}")]
    Device {
        /// The operation (a copy, a launch named by its kernel).
        op: String,
        /// The driver's error name and details.
        message: String,
    },
    /// A bug in lazyfuse, never the user's fault; the message says where.
    #[error("internal error in {op} (please report): {message}")]
    Internal {
        /// The pass or step that failed.
        op: String,
        /// What failed, with a graph excerpt where useful.
        message: String,
    },
}

impl Error {
    /// The operation the error is about.
    pub fn op(&self) -> &str {
        match self {
            Error::ShapeMismatch { op, .. }
            | Error::DTypeMismatch { op, .. }
            | Error::InvalidArgument { op, .. }
            | Error::Device { op, .. }
            | Error::Internal { op, .. } => op,
            Error::BackendUnavailable { backend, .. } => backend,
            Error::Compile { kernel, .. } => kernel,
        }
    }

    pub(crate) fn shape(op: impl Into<String>, message: impl Into<String>) -> Error {
        Error::ShapeMismatch {
            op: op.into(),
            message: message.into(),
        }
    }

    pub(crate) fn dtype(op: impl Into<String>, message: impl Into<String>) -> Error {
        Error::DTypeMismatch {
            op: op.into(),
            message: message.into(),
        }
    }

    /// An [`Error::InvalidArgument`] of `op`.
    pub fn invalid(op: impl Into<String>, message: impl Into<String>) -> Error {
        Error::InvalidArgument {
            op: op.into(),
            message: message.into(),
        }
    }

    /// An [`Error::Internal`]: a broken invariant inside lazyfuse.
    pub fn internal(op: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Internal {
            op: op.into(),
            message: message.into(),
        }
    }

    /// Prefixes the operation with a context, e.g. the ufunc that contained it.
    pub fn within(self, context: &str) -> Error {
        let wrap = |op: String| format!("{context}: {op}");
        match self {
            Error::ShapeMismatch { op, message } => Error::ShapeMismatch {
                op: wrap(op),
                message,
            },
            Error::DTypeMismatch { op, message } => Error::DTypeMismatch {
                op: wrap(op),
                message,
            },
            Error::InvalidArgument { op, message } => Error::InvalidArgument {
                op: wrap(op),
                message,
            },
            Error::Device { op, message } => Error::Device {
                op: wrap(op),
                message,
            },
            Error::Internal { op, message } => Error::Internal {
                op: wrap(op),
                message,
            },
            other => other,
        }
    }
}
