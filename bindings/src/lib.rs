//! The C API of lazyfuse (`lf_*` functions over opaque handles).
//!
//! Status: the crate exists and builds as `cdylib` and `staticlib`; the
//! functions of the C contract land with the C API issue.

pub use lazyfuse;
