//! The C API's views, casts and orders (`arrange.rs`) and its reads
//! straight into the caller's memory: values as NumPy gives them, errors
//! that say what was expected.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::ptr::{null, null_mut};

use common::{c, fixture, message, Fixture};
use lazyfuse_ffi::*;

/// A 2 × 3 f64 array `0..6` of the fixture's context.
fn grid(f: &Fixture) -> *mut lf_array {
    let mut g = null_mut();
    let data = [0.0f64, 1.0, 2.0, 3.0, 4.0, 5.0];
    let shape = [2usize, 3];
    // SAFETY: a live context, and pointers to live locals of the sizes given.
    let status = unsafe {
        lf_array_from_data(
            f.cx,
            LF_F64,
            shape.as_ptr(),
            2,
            data.as_ptr().cast(),
            &mut g,
        )
    };
    assert_eq!(status, LF_OK);
    g
}

/// Reads `n` f64 values of `a` (a live array made by the library) and frees it.
fn read_f64(a: *mut lf_array, n: usize) -> Vec<f64> {
    let mut out = vec![0f64; n];
    // SAFETY: `a` is live until freed here; `out` holds `n * 8` bytes.
    unsafe {
        assert_eq!(
            lf_array_read(a, out.as_mut_ptr().cast(), n * 8),
            LF_OK,
            "{}",
            message()
        );
        lf_array_free(a);
    }
    out
}

#[test]
fn views_casts_and_orders() {
    let f = fixture();
    unsafe {
        let g = grid(&f);
        let mut v = null_mut();
        let shape = [-1i64, 2];
        assert_eq!(lf_array_reshape(g, shape.as_ptr(), 2, &mut v), LF_OK);
        let mut dims = [0usize; 2];
        assert_eq!(lf_array_shape(v, dims.as_mut_ptr(), 2), LF_OK);
        assert_eq!(dims, [3, 2]);
        lf_array_free(v);
        assert_eq!(lf_array_transpose(g, null(), 0, &mut v), LF_OK);
        assert_eq!(read_f64(v, 6), [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
        let axes = [-1i64, 0];
        assert_eq!(lf_array_transpose(g, axes.as_ptr(), 2, &mut v), LF_OK);
        assert_eq!(read_f64(v, 6), [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
        assert_eq!(lf_array_slice(g, 1, i64::MAX, i64::MIN, -2, &mut v), LF_OK);
        assert_eq!(read_f64(v, 4), [2.0, 0.0, 5.0, 3.0]);
        assert_eq!(lf_array_astype(f.a, LF_I32, &mut v), LF_OK);
        let mut ints = [0i32; 3];
        assert_eq!(lf_array_read(v, ints.as_mut_ptr().cast(), 12), LF_OK);
        assert_eq!(ints, [1, 2, 3]);
        lf_array_free(v);
        // g @ g.T
        let mut t = null_mut();
        assert_eq!(lf_array_transpose(g, null(), 0, &mut t), LF_OK);
        assert_eq!(lf_matmul(g, t, &mut v), LF_OK);
        assert_eq!(read_f64(v, 4), [5.0, 14.0, 14.0, 50.0]);
        lf_array_free(t);
        // Reversed rows, sorted back; their order; positions of values.
        assert_eq!(lf_array_slice(g, -1, i64::MAX, i64::MIN, -1, &mut t), LF_OK);
        assert_eq!(lf_sort(t, -1, &mut v), LF_OK);
        assert_eq!(read_f64(v, 6), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(lf_argsort(t, 1, &mut v), LF_OK);
        let mut order = [0i64; 6];
        assert_eq!(lf_array_read(v, order.as_mut_ptr().cast(), 48), LF_OK);
        assert_eq!(order, [2, 1, 0, 2, 1, 0]);
        lf_array_free(v);
        lf_array_free(t);
        let mut flat = null_mut();
        let six = [6i64];
        assert_eq!(lf_array_reshape(g, six.as_ptr(), 1, &mut flat), LF_OK);
        for (right, want) in [(false, [1i64, 2, 3]), (true, [2, 3, 4])] {
            assert_eq!(lf_searchsorted(flat, f.a, right, &mut v), LF_OK);
            let mut at = [0i64; 3];
            assert_eq!(lf_array_read(v, at.as_mut_ptr().cast(), 24), LF_OK);
            assert_eq!(at, want);
            lf_array_free(v);
        }
        let mut idx = null_mut();
        let (picks, len) = ([2i64, -3], [2usize]);
        assert_eq!(
            lf_array_from_data(
                f.cx,
                LF_I64,
                len.as_ptr(),
                1,
                picks.as_ptr().cast(),
                &mut idx
            ),
            LF_OK
        );
        assert_eq!(lf_take(g, idx, 1, &mut v), LF_OK);
        assert_eq!(read_f64(v, 4), [2.0, 0.0, 5.0, 3.0]);
        lf_array_free(idx);
        lf_array_free(flat);
        lf_array_free(g);
        assert_eq!(message(), "");
    }
}

#[test]
fn arranging_errors_name_what_was_expected() {
    let f = fixture();
    unsafe {
        let mut v = null_mut();
        let bad = [-1i64, -1];
        assert_eq!(
            lf_array_reshape(f.a, bad.as_ptr(), 2, &mut v),
            LF_ERROR_INVALID_ARGUMENT
        );
        assert!(message().contains("at most one -1"), "{}", message());
        let four = [4i64];
        assert_eq!(
            lf_array_reshape(f.a, four.as_ptr(), 1, &mut v),
            LF_ERROR_SHAPE
        );
        assert_eq!(
            lf_array_reshape(f.a, null(), 1, &mut v),
            LF_ERROR_NULL_POINTER
        );
        let axes = [3i64];
        assert_eq!(
            lf_array_transpose(f.a, axes.as_ptr(), 1, &mut v),
            LF_ERROR_INVALID_ARGUMENT
        );
        assert!(
            message().contains("axis 3 is out of bounds"),
            "{}",
            message()
        );
        assert_eq!(
            lf_array_slice(f.a, 0, 0, 3, 0, &mut v),
            LF_ERROR_INVALID_ARGUMENT
        );
        assert_eq!(lf_array_astype(f.a, 99, &mut v), LF_ERROR_INVALID_ARGUMENT);
        assert!(message().contains("unknown dtype code 99"), "{}", message());
        assert_eq!(lf_matmul(f.a, null(), &mut v), LF_ERROR_NULL_POINTER);
        assert_eq!(lf_sort(f.a, 1, &mut v), LF_ERROR_INVALID_ARGUMENT);
        assert_eq!(lf_argsort(null(), 0, &mut v), LF_ERROR_NULL_POINTER);
        assert_eq!(
            lf_searchsorted(f.a, f.b, false, null_mut()),
            LF_ERROR_NULL_POINTER
        );
        assert_ne!(lf_take(f.a, f.b, 0, &mut v), LF_OK); // float indices
        assert!(v.is_null());
    }
}

#[test]
fn reads_are_computed_straight_into_aligned_destinations() {
    let f = fixture();
    unsafe {
        let args = [f.a as *const lf_array, f.b as *const lf_array];
        let mut sum = null_mut();
        assert_eq!(
            lf_apply(c("add").as_ptr(), args.as_ptr(), 2, &mut sum),
            LF_OK
        );
        // Aligned: the kernel writes the destination. Unaligned (one byte
        // in): computed, then copied. Both give the values.
        let mut words = [0u32; 5];
        let aligned = words.as_mut_ptr().cast::<u8>();
        assert_eq!(lf_array_read(sum, aligned.cast(), 12), LF_OK);
        assert_eq!(
            &words[..3],
            &[5f32.to_bits(), 7f32.to_bits(), 9f32.to_bits()]
        );
        let mut bytes = [0u8; 13];
        assert_eq!(
            lf_array_read(sum, bytes.as_mut_ptr().add(1).cast(), 12),
            LF_OK
        );
        let third = f32::from_ne_bytes(bytes[9..13].try_into().unwrap());
        assert_eq!(third, 9.0);
        // Bools are copied as bytes 0 and 1.
        let mut greater = null_mut();
        assert_eq!(
            lf_apply(c("greater").as_ptr(), args.as_ptr(), 2, &mut greater),
            LF_OK
        );
        let mut flags = [7u8; 3];
        assert_eq!(lf_array_read(greater, flags.as_mut_ptr().cast(), 3), LF_OK);
        assert_eq!(flags, [0, 0, 0]);
        lf_array_free(greater);
        lf_array_free(sum);
    }
}

#[test]
fn rolls_and_fourier_transforms() {
    let f = fixture();
    unsafe {
        let g = grid(&f);
        let mut v = null_mut();
        assert_eq!(lf_roll(g, 1, -1, &mut v), LF_OK, "{}", message());
        assert_eq!(read_f64(v, 6), [2.0, 0.0, 1.0, 5.0, 3.0, 4.0]);
        // The rows 0, 1, 2 and 3, 4, 5: their transforms, as NumPy's.
        let (mut re, mut im) = (null_mut(), null_mut());
        assert_eq!(
            lf_fft(g, null(), 0, 1, LF_NORM_BACKWARD, false, &mut re, &mut im),
            LF_OK
        );
        let half = 3f64.sqrt() / 2.0;
        let want_re = [3.0, -1.5, -1.5, 12.0, -1.5, -1.5];
        let want_im = [0.0, half, -half, 0.0, half, -half];
        let (got_re, got_im) = (read_f64(re, 6), read_f64(im, 6));
        for i in 0..6 {
            assert!(
                (got_re[i] - want_re[i]).abs() < 1e-12 && (got_im[i] - want_im[i]).abs() < 1e-12
            );
        }
        // rfft then irfft gives the rows back.
        let (mut re, mut im, mut back) = (null_mut(), null_mut(), null_mut());
        assert_eq!(lf_rfft(g, 0, -1, LF_NORM_ORTHO, &mut re, &mut im), LF_OK);
        assert_eq!(
            lf_irfft(re, im, 3, -1, LF_NORM_ORTHO, &mut back),
            LF_OK,
            "{}",
            message()
        );
        let values = read_f64(back, 6);
        assert!(
            values
                .iter()
                .zip(0..6)
                .all(|(v, i)| (v - i as f64).abs() < 1e-12),
            "{values:?}"
        );
        lf_array_free(re);
        lf_array_free(im);
        // Bad arguments are errors that say what was expected.
        let (mut a, mut b) = (null_mut(), null_mut());
        assert_eq!(
            lf_fft(g, null(), 0, 0, 7, false, &mut a, &mut b),
            LF_ERROR_INVALID_ARGUMENT
        );
        assert!(message().contains("LF_NORM_BACKWARD"));
        assert_eq!(
            lf_fft(g, null(), -2, 0, 0, false, &mut a, &mut b),
            LF_ERROR_INVALID_ARGUMENT
        );
        assert_eq!(lf_roll(g, 1, 5, &mut a), LF_ERROR_INVALID_ARGUMENT);
        lf_array_free(g);
    }
}
