//! The fixture the C API's tests share: a CPU context and two f32 arrays.

#![allow(dead_code, clippy::unwrap_used)] // each test binary uses its part

use std::ffi::{CStr, CString};
use std::ptr::null_mut;

use lazyfuse_ffi::*;

pub fn message() -> String {
    // SAFETY: lf_last_error_message returns a valid NUL-terminated string.
    unsafe { CStr::from_ptr(lf_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

pub fn c(s: &str) -> CString {
    CString::new(s).unwrap()
}

pub struct Fixture {
    pub cx: *mut lf_context,
    pub a: *mut lf_array,
    pub b: *mut lf_array,
}

pub fn fixture() -> Fixture {
    let mut cx = null_mut();
    let mut a = null_mut();
    let mut b = null_mut();
    let shape = [3usize];
    let data_a = [1.0f32, 2.0, 3.0];
    let data_b = [4.0f32, 5.0, 6.0];
    unsafe {
        assert_eq!(lf_context_new(c("cpu").as_ptr(), &mut cx), LF_OK);
        assert_eq!(
            lf_array_from_data(
                cx,
                LF_F32,
                shape.as_ptr(),
                1,
                data_a.as_ptr().cast(),
                &mut a
            ),
            LF_OK
        );
        assert_eq!(
            lf_array_from_data(
                cx,
                LF_F32,
                shape.as_ptr(),
                1,
                data_b.as_ptr().cast(),
                &mut b
            ),
            LF_OK
        );
    }
    Fixture { cx, a, b }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        unsafe {
            lf_array_free(self.a);
            lf_array_free(self.b);
            lf_context_free(self.cx);
        }
    }
}
