//! The boundary every C call crosses: panics are caught, errors become
//! status codes with a thread-local message, and raw pointers are checked
//! for NULL before use. All `unsafe` of the crate is in this file.

use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use lazyfuse::Error;

use crate::{
    lf_status, LF_ERROR_BACKEND_UNAVAILABLE, LF_ERROR_BUFFER_TOO_SMALL, LF_ERROR_COMPILE,
    LF_ERROR_DEVICE, LF_ERROR_DTYPE, LF_ERROR_INTERNAL, LF_ERROR_INVALID_ARGUMENT,
    LF_ERROR_NULL_POINTER, LF_ERROR_PANIC, LF_ERROR_SHAPE, LF_OK,
};

/// An error of the C layer: a status and its message.
pub(crate) struct Failure {
    pub(crate) status: lf_status,
    pub(crate) message: String,
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        let status = match &e {
            Error::ShapeMismatch { .. } => LF_ERROR_SHAPE,
            Error::DTypeMismatch { .. } => LF_ERROR_DTYPE,
            Error::InvalidArgument { .. } => LF_ERROR_INVALID_ARGUMENT,
            Error::BackendUnavailable { .. } => LF_ERROR_BACKEND_UNAVAILABLE,
            Error::Compile { .. } => LF_ERROR_COMPILE,
            Error::Device { .. } => LF_ERROR_DEVICE,
            _ => LF_ERROR_INTERNAL,
        };
        Failure {
            status,
            message: e.to_string(),
        }
    }
}

impl Failure {
    pub(crate) fn invalid(message: impl Into<String>) -> Failure {
        Failure {
            status: LF_ERROR_INVALID_ARGUMENT,
            message: message.into(),
        }
    }

    pub(crate) fn too_small(message: impl Into<String>) -> Failure {
        Failure {
            status: LF_ERROR_BUFFER_TOO_SMALL,
            message: message.into(),
        }
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: &str) {
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = text);
}

/// The message of the last failed call on this thread ("" after a success).
pub(crate) fn last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// Runs the body of an entry point: a panic or an error becomes a status and
/// the thread's last-error message; success clears the message.
pub(crate) fn guard(name: &str, body: impl FnOnce() -> Result<(), Failure>) -> lf_status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => {
            set_last_error("");
            LF_OK
        }
        Ok(Err(failure)) => {
            set_last_error(&format!("{name}: {}", failure.message));
            failure.status
        }
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            set_last_error(&format!("{name}: internal panic (please report): {what}"));
            LF_ERROR_PANIC
        }
    }
}

/// Runs a `free` body, swallowing panics (nothing to report them to).
pub(crate) fn guard_free(body: impl FnOnce()) {
    let _ = catch_unwind(AssertUnwindSafe(body));
}

fn null(what: &str) -> Failure {
    Failure {
        status: LF_ERROR_NULL_POINTER,
        message: format!("{what} is NULL"),
    }
}

/// `&*ptr`, or an error for NULL.
pub(crate) fn borrow<'a, T>(ptr: *const T, what: &str) -> Result<&'a T, Failure> {
    // SAFETY: the C contract: a non-NULL handle argument points to a live
    // object made by this library and not freed during the call.
    unsafe { ptr.as_ref() }.ok_or_else(|| null(what))
}

/// Stores `value` into `*out` as a new heap object owned by the caller.
pub(crate) fn give<T>(out: *mut *mut T, value: T) -> Result<(), Failure> {
    if out.is_null() {
        return Err(null("the output pointer"));
    }
    // SAFETY: `out` is non-NULL and, by the C contract, valid for one write.
    unsafe { out.write(Box::into_raw(Box::new(value))) };
    Ok(())
}

/// Writes one value through an output pointer.
pub(crate) fn write<T>(out: *mut T, value: T, what: &str) -> Result<(), Failure> {
    if out.is_null() {
        return Err(null(what));
    }
    // SAFETY: `out` is non-NULL and, by the C contract, valid for one write.
    unsafe { out.write(value) };
    Ok(())
}

/// Drops a caller-owned object made by [`give`]; NULL does nothing.
pub(crate) fn take_back<T>(ptr: *mut T) {
    if !ptr.is_null() {
        // SAFETY: non-NULL pointers passed to `*_free` were made by
        // `Box::into_raw` in `give` and are freed once (the C contract).
        drop(unsafe { Box::from_raw(ptr) });
    }
}

/// A NUL-terminated UTF-8 string argument.
pub(crate) fn string<'a>(ptr: *const c_char, what: &str) -> Result<&'a str, Failure> {
    if ptr.is_null() {
        return Err(null(what));
    }
    // SAFETY: non-NULL, and by the C contract NUL-terminated and alive for the call.
    let text = unsafe { CStr::from_ptr(ptr) };
    text.to_str()
        .map_err(|_| Failure::invalid(format!("{what} is not UTF-8")))
}

/// `len` elements at `ptr` (any pointer is fine when `len` is 0).
pub(crate) fn slice<'a, T>(ptr: *const T, len: usize, what: &str) -> Result<&'a [T], Failure> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(null(what));
    }
    if len
        .checked_mul(std::mem::size_of::<T>())
        .is_none_or(|b| b > isize::MAX as usize)
    {
        return Err(Failure::invalid(format!(
            "{what}: {len} elements is too many"
        )));
    }
    // SAFETY: non-NULL, and by the C contract valid for `len` reads of T
    // during the call; the size fits isize (checked above).
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// `len` writable elements at `ptr`.
pub(crate) fn slice_mut<'a, T>(
    ptr: *mut T,
    len: usize,
    what: &str,
) -> Result<&'a mut [T], Failure> {
    if len == 0 {
        return Ok(&mut []);
    }
    if ptr.is_null() {
        return Err(null(what));
    }
    if len
        .checked_mul(std::mem::size_of::<T>())
        .is_none_or(|b| b > isize::MAX as usize)
    {
        return Err(Failure::invalid(format!(
            "{what}: {len} elements is too many"
        )));
    }
    // SAFETY: non-NULL, and by the C contract valid for `len` writes of T
    // and not aliased during the call.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
}

/// `len` writable bytes at `ptr`.
pub(crate) fn bytes_mut<'a>(
    ptr: *mut std::ffi::c_void,
    len: usize,
    what: &str,
) -> Result<&'a mut [u8], Failure> {
    slice_mut(ptr.cast::<u8>(), len, what)
}

/// A caller-owned C string copy of `text` (freed with `lf_string_free`).
pub(crate) fn give_string(out: *mut *mut c_char, text: &str) -> Result<(), Failure> {
    let owned = CString::new(text.replace('\0', " ")).unwrap_or_default();
    write(out, owned.into_raw(), "the output pointer")
}

/// Frees a string made by [`give_string`]; NULL does nothing.
pub(crate) fn take_back_string(ptr: *mut c_char) {
    if !ptr.is_null() {
        // SAFETY: made by `CString::into_raw` in `give_string`, freed once.
        drop(unsafe { CString::from_raw(ptr) });
    }
}
