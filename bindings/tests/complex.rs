//! The C API's complex arithmetic (`complex.rs`): values of parts as
//! NumPy's complex numbers give them, real results, errors that say what
//! was expected.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::ptr::{null, null_mut};

use common::{c, fixture, message};
use lazyfuse_ffi::*;

fn read(a: *mut lf_array) -> Vec<f32> {
    let mut out = vec![0f32; 3];
    // SAFETY: a live array of three f32 values, read into three f32s (12 bytes).
    assert_eq!(
        unsafe { lf_array_read(a, out.as_mut_ptr().cast(), 12) },
        LF_OK,
        "{}",
        message()
    );
    out
}

#[test]
fn complex_values_of_parts_compute_as_numpys() {
    let f = fixture(); // a = [1, 2, 3], b = [4, 5, 6] (f32)
    unsafe {
        // (a + bi) * (b + ai) = (ab - ab) + (a² + b²)i
        let (mut re, mut im) = (null_mut(), null_mut());
        let status = lf_complex_apply(c("multiply").as_ptr(), f.a, f.b, f.b, f.a, &mut re, &mut im);
        assert_eq!(status, LF_OK, "{}", message());
        assert_eq!(read(re), [0.0, 0.0, 0.0]);
        assert_eq!(read(im), [17.0, 29.0, 45.0]);
        lf_array_free(re);
        lf_array_free(im);
        // |a + bi|: a real result, the imaginary output NULL.
        let (mut size, mut none) = (null_mut(), null_mut::<lf_array>());
        let status = lf_complex_apply(
            c("absolute").as_ptr(),
            f.a,
            f.b,
            null(),
            null(),
            &mut size,
            &mut none,
        );
        assert_eq!(status, LF_OK, "{}", message());
        assert!(none.is_null());
        let got = read(size);
        for (g, (x, y)) in got.iter().zip([(1f32, 4f32), (2.0, 5.0), (3.0, 6.0)]) {
            assert!((g - x.hypot(y)).abs() < 1e-6);
        }
        lf_array_free(size);
        // A real operand (NULL imaginary part): (a + 0i) / (0 + bi) = -(a/b) i.
        let (mut re, mut im) = (null_mut(), null_mut());
        let status = lf_complex_apply(
            c("divide").as_ptr(),
            f.a,
            null(),
            null(),
            null(),
            &mut re,
            &mut im,
        );
        assert_eq!(status, LF_ERROR_INVALID_ARGUMENT, "divide of one operand");
        assert!(
            message().contains("'divide' of one complex operand"),
            "{}",
            message()
        );
        let mut zero = null_mut();
        assert_eq!(
            lf_apply_scalar(c("multiply").as_ptr(), f.a, 0.0, &mut zero),
            LF_OK
        );
        let status = lf_complex_apply(
            c("divide").as_ptr(),
            f.a,
            null(),
            zero,
            f.b,
            &mut re,
            &mut im,
        );
        assert_eq!(status, LF_OK, "{}", message());
        assert_eq!(read(re), [0.0, 0.0, 0.0]);
        let want: Vec<f32> = [(1f32, 4f32), (2.0, 5.0), (3.0, 6.0)]
            .iter()
            .map(|(x, y)| -x / y)
            .collect();
        assert!(read(im)
            .iter()
            .zip(&want)
            .all(|(g, w)| (g - w).abs() < 1e-6));
        lf_array_free(re);
        lf_array_free(im);
        lf_array_free(zero);
        // Unknown names are errors that list what is expected.
        let status = lf_complex_apply(c("arctan2").as_ptr(), f.a, f.b, f.a, f.b, &mut re, &mut im);
        assert_eq!(status, LF_ERROR_INVALID_ARGUMENT);
        assert!(
            message().contains("expected add, subtract"),
            "{}",
            message()
        );
        let status = lf_complex_apply(
            c("exp").as_ptr(),
            f.a,
            f.b,
            null(),
            null(),
            null_mut(),
            &mut im,
        );
        assert_ne!(status, LF_OK);
    }
}
