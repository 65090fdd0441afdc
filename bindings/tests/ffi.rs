//! Every entry point with NULLs and malformed arguments returns an error
//! status and a message, never a crash; the happy path computes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::{c_char, CStr, CString};
use std::ptr::{null, null_mut};

use lazyfuse_ffi::*;

fn message() -> String {
    // SAFETY: lf_last_error_message returns a valid NUL-terminated string.
    unsafe { CStr::from_ptr(lf_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

fn c(s: &str) -> CString {
    CString::new(s).unwrap()
}

struct Fixture {
    cx: *mut lf_context,
    a: *mut lf_array,
    b: *mut lf_array,
}

fn fixture() -> Fixture {
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

#[test]
fn happy_path() {
    let f = fixture();
    unsafe {
        let args = [f.a as *const lf_array, f.b as *const lf_array];
        let mut sum = null_mut();
        assert_eq!(
            lf_apply(c("add").as_ptr(), args.as_ptr(), 2, &mut sum),
            LF_OK
        );
        let mut out = [0f32; 3];
        assert_eq!(lf_array_read(sum, out.as_mut_ptr().cast(), 12), LF_OK);
        assert_eq!(out, [5.0, 7.0, 9.0]);
        let names = [c("a"), c("b")];
        let name_ptrs: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
        let mut uf = null_mut();
        assert_eq!(
            lf_ufunc_from_expr(c("sqrt(a*b) + 1").as_ptr(), name_ptrs.as_ptr(), 2, &mut uf),
            LF_OK
        );
        let mut called = null_mut();
        assert_eq!(lf_ufunc_call(uf, args.as_ptr(), 2, &mut called), LF_OK);
        let mut total = null_mut();
        assert_eq!(
            lf_reduce(c("sum").as_ptr(), called, 0, true, &mut total),
            LF_OK
        );
        let mut value = 0f32;
        assert_eq!(
            lf_array_read(total, (&mut value as *mut f32).cast(), 4),
            LF_OK
        );
        let want = 4f32.sqrt() + 10f32.sqrt() + 18f32.sqrt() + 3.0;
        assert!((value - want).abs() < 1e-5, "{value} vs {want}");
        let mut scaled = null_mut();
        assert_eq!(
            lf_apply_scalar(c("mul").as_ptr(), f.a, 2.0, &mut scaled),
            LF_OK
        );
        let (mut ndim, mut dtype) = (0usize, 99u32);
        let mut shape = [0usize; 4];
        assert_eq!(lf_array_ndim(scaled, &mut ndim), LF_OK);
        assert_eq!(lf_array_shape(scaled, shape.as_mut_ptr(), 4), LF_OK);
        assert_eq!(lf_array_dtype(scaled, &mut dtype), LF_OK);
        assert_eq!((ndim, shape[0], dtype), (1, 3, LF_F32));
        let mut text = null_mut();
        assert_eq!(lf_array_explain(total, &mut text), LF_OK);
        assert!(CStr::from_ptr(text).to_string_lossy().contains("graph"));
        lf_string_free(text);
        // The NumPy reductions by name: argmax of [1, 2, 3] is 2.
        let mut index = null_mut();
        assert_eq!(
            lf_reduce(c("argmax").as_ptr(), f.a, 0, true, &mut index),
            LF_OK
        );
        let mut at = 0i64;
        assert_eq!(lf_array_read(index, (&mut at as *mut i64).cast(), 8), LF_OK);
        assert_eq!(at, 2);
        lf_array_free(index);
        // The scans by name, along an axis or of the flattened array.
        for (name, all_axes, want) in [
            ("cumsum", false, [1f32, 3.0, 6.0]),
            ("cummax", true, [1.0, 2.0, 3.0]),
            ("cummin", false, [1.0, 1.0, 1.0]),
        ] {
            let mut scanned = null_mut();
            assert_eq!(
                lf_reduce(c(name).as_ptr(), f.a, -1, all_axes, &mut scanned),
                LF_OK
            );
            let mut got = [0f32; 3];
            assert_eq!(lf_array_read(scanned, got.as_mut_ptr().cast(), 12), LF_OK);
            assert_eq!(got, want, "{name}");
            lf_array_free(scanned);
        }
        // And the new element-wise operations by name.
        let mut angle = null_mut();
        assert_eq!(
            lf_apply(c("arctan2").as_ptr(), args.as_ptr(), 2, &mut angle),
            LF_OK
        );
        assert_eq!(lf_array_read(angle, out.as_mut_ptr().cast(), 12), LF_OK);
        for (got, (y, x)) in out.iter().zip([(1f32, 4f32), (2.0, 5.0), (3.0, 6.0)]) {
            assert!((got - y.atan2(x)).abs() <= 1e-6, "{got} vs atan2({y}, {x})");
        }
        lf_array_free(angle);
        // Composites by name too: clip(b, a, a) is a.
        let bounds = [f.b as *const lf_array, f.a, f.a];
        let mut clipped = null_mut();
        assert_eq!(
            lf_apply(c("clip").as_ptr(), bounds.as_ptr(), 3, &mut clipped),
            LF_OK
        );
        assert_eq!(lf_array_read(clipped, out.as_mut_ptr().cast(), 12), LF_OK);
        assert_eq!(out, [1.0, 2.0, 3.0]);
        lf_array_free(clipped);
        assert_eq!(message(), "");
        for a in [sum, called, total, scaled] {
            lf_array_free(a);
        }
        lf_ufunc_free(uf);
    }
}

#[test]
fn null_and_malformed_arguments_are_errors() {
    let f = fixture();
    let mut out: *mut lf_array = null_mut();
    let args = [f.a as *const lf_array, f.b as *const lf_array];
    let shape = [3usize];
    let data = [0f32; 3];
    unsafe {
        let mut cx = null_mut();
        assert_eq!(
            lf_context_new(c("tpu").as_ptr(), &mut cx),
            LF_ERROR_INVALID_ARGUMENT
        );
        assert!(message().contains("unknown backend 'tpu'"), "{}", message());
        assert_eq!(lf_context_new(null(), null_mut()), LF_ERROR_NULL_POINTER);
        assert!(matches!(
            lf_context_new(c("cuda").as_ptr(), &mut cx),
            LF_ERROR_BACKEND_UNAVAILABLE | LF_OK
        ));
        lf_context_free(cx);

        assert_eq!(
            lf_array_from_data(
                null_mut(),
                LF_F32,
                shape.as_ptr(),
                1,
                data.as_ptr().cast(),
                &mut out
            ),
            LF_ERROR_NULL_POINTER
        );
        assert_eq!(
            lf_array_from_data(f.cx, 99, shape.as_ptr(), 1, data.as_ptr().cast(), &mut out),
            LF_ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            lf_array_from_data(f.cx, LF_F32, null(), 1, data.as_ptr().cast(), &mut out),
            LF_ERROR_NULL_POINTER
        );
        assert_eq!(
            lf_array_from_data(f.cx, LF_F32, shape.as_ptr(), 1, null(), &mut out),
            LF_ERROR_NULL_POINTER
        );
        assert_eq!(
            lf_array_from_data(
                f.cx,
                LF_F32,
                shape.as_ptr(),
                1,
                data.as_ptr().cast(),
                null_mut()
            ),
            LF_ERROR_NULL_POINTER
        );
        let huge = [usize::MAX, 2];
        assert_eq!(
            lf_array_from_data(
                f.cx,
                LF_F32,
                huge.as_ptr(),
                2,
                data.as_ptr().cast(),
                &mut out
            ),
            LF_ERROR_INVALID_ARGUMENT
        );
        let bad_bools = [0u8, 1, 7];
        assert_eq!(
            lf_array_from_data(
                f.cx,
                LF_BOOL,
                shape.as_ptr(),
                1,
                bad_bools.as_ptr().cast(),
                &mut out
            ),
            LF_ERROR_INVALID_ARGUMENT
        );

        assert_eq!(
            lf_apply(c("frobnicate").as_ptr(), args.as_ptr(), 2, &mut out),
            LF_ERROR_INVALID_ARGUMENT
        );
        assert!(message().contains("unknown operation 'frobnicate'"));
        assert_eq!(
            lf_apply(c("add").as_ptr(), args.as_ptr(), 1, &mut out),
            LF_ERROR_INVALID_ARGUMENT
        );
        assert!(
            message().contains("takes 2 arguments (got 1)"),
            "{}",
            message()
        );
        assert_eq!(
            lf_apply(null(), args.as_ptr(), 2, &mut out),
            LF_ERROR_NULL_POINTER
        );
        assert_eq!(
            lf_apply(c("add").as_ptr(), null(), 2, &mut out),
            LF_ERROR_NULL_POINTER
        );
        let with_null = [f.a as *const lf_array, null()];
        assert_eq!(
            lf_apply(c("add").as_ptr(), with_null.as_ptr(), 2, &mut out),
            LF_ERROR_NULL_POINTER
        );
        assert_eq!(
            lf_apply(c("sub").as_ptr(), args.as_ptr(), 2, null_mut()),
            LF_ERROR_NULL_POINTER
        );
        let two = [2usize, 2];
        let mut m = null_mut();
        assert_eq!(
            lf_array_from_data(
                f.cx,
                LF_F32,
                two.as_ptr(),
                2,
                [0f32; 4].as_ptr().cast(),
                &mut m
            ),
            LF_OK
        );
        let mismatched = [f.a as *const lf_array, m as *const lf_array];
        assert_eq!(
            lf_apply(c("add").as_ptr(), mismatched.as_ptr(), 2, &mut out),
            LF_ERROR_SHAPE
        );
        assert!(
            message().contains("could not be broadcast"),
            "{}",
            message()
        );
        lf_array_free(m);

        assert_eq!(
            lf_apply_scalar(c("sqrt").as_ptr(), f.a, 1.0, &mut out),
            LF_ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            lf_apply_scalar(c("add").as_ptr(), null(), 1.0, &mut out),
            LF_ERROR_NULL_POINTER
        );

        let names = [c("a")];
        let name_ptrs: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
        let mut uf = null_mut();
        assert_eq!(
            lf_ufunc_from_expr(c("sqrt(a").as_ptr(), name_ptrs.as_ptr(), 1, &mut uf),
            LF_ERROR_INVALID_ARGUMENT
        );
        assert!(
            message().contains("expected ')' at column 7"),
            "{}",
            message()
        );
        assert_eq!(
            lf_ufunc_from_expr(null(), name_ptrs.as_ptr(), 1, &mut uf),
            LF_ERROR_NULL_POINTER
        );
        assert_eq!(
            lf_ufunc_from_expr(c("a").as_ptr(), null(), 1, &mut uf),
            LF_ERROR_NULL_POINTER
        );
        let null_names = [null::<c_char>()];
        assert_eq!(
            lf_ufunc_from_expr(c("a").as_ptr(), null_names.as_ptr(), 1, &mut uf),
            LF_ERROR_NULL_POINTER
        );
        assert_eq!(
            lf_ufunc_from_expr(c("a + 1").as_ptr(), name_ptrs.as_ptr(), 1, &mut uf),
            LF_OK
        );
        assert_eq!(
            lf_ufunc_call(uf, args.as_ptr(), 2, &mut out),
            LF_ERROR_INVALID_ARGUMENT
        );
        assert!(
            message().contains("takes 1 arguments (got 2)"),
            "{}",
            message()
        );
        assert_eq!(
            lf_ufunc_call(null(), args.as_ptr(), 1, &mut out),
            LF_ERROR_NULL_POINTER
        );
        lf_ufunc_free(uf);

        assert_eq!(
            lf_reduce(c("median").as_ptr(), f.a, 0, true, &mut out),
            LF_ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            lf_reduce(c("sum").as_ptr(), f.a, 5, false, &mut out),
            LF_ERROR_INVALID_ARGUMENT
        );
        assert!(
            message().contains("axis 5 is out of bounds"),
            "{}",
            message()
        );
        let mut empty = null_mut();
        assert_eq!(
            lf_array_from_data(f.cx, LF_F32, [0usize].as_ptr(), 1, null(), &mut empty),
            LF_OK
        );
        assert_eq!(
            lf_reduce(c("max").as_ptr(), empty, 0, true, &mut out),
            LF_ERROR_INVALID_ARGUMENT
        );
        lf_array_free(empty);

        let mut small = [0f32; 2];
        assert_eq!(
            lf_array_read(f.a, small.as_mut_ptr().cast(), 8),
            LF_ERROR_BUFFER_TOO_SMALL
        );
        assert!(message().contains("needs 12"), "{}", message());
        assert_eq!(lf_array_read(f.a, null_mut(), 12), LF_ERROR_NULL_POINTER);
        assert_eq!(
            lf_array_read(null(), small.as_mut_ptr().cast(), 8),
            LF_ERROR_NULL_POINTER
        );
        let mut shape_out = [0usize; 1];
        assert_eq!(
            lf_array_shape(f.a, shape_out.as_mut_ptr(), 0),
            LF_ERROR_BUFFER_TOO_SMALL
        );
        assert_eq!(lf_array_shape(f.a, null_mut(), 1), LF_ERROR_NULL_POINTER);
        assert_eq!(lf_array_ndim(null(), null_mut()), LF_ERROR_NULL_POINTER);
        assert_eq!(lf_array_ndim(f.a, null_mut()), LF_ERROR_NULL_POINTER);
        assert_eq!(lf_array_dtype(f.a, null_mut()), LF_ERROR_NULL_POINTER);
        assert_eq!(lf_array_explain(null(), null_mut()), LF_ERROR_NULL_POINTER);

        lf_array_free(null_mut());
        lf_ufunc_free(null_mut());
        lf_context_free(null_mut());
        lf_string_free(null_mut());
    }
}

#[test]
fn errors_are_per_thread() {
    let mut cx = null_mut();
    unsafe {
        assert_eq!(
            lf_context_new(c("nope").as_ptr(), &mut cx),
            LF_ERROR_INVALID_ARGUMENT
        );
    }
    let other = std::thread::spawn(message).join().unwrap();
    assert_eq!(other, "");
    assert!(!message().is_empty());
}

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
