//! Every entry point with NULLs and malformed arguments returns an error
//! status and a message, never a crash; the happy path computes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::{c_char, CStr};
use std::ptr::{null, null_mut};

mod common;

use common::{c, fixture, message};
use lazyfuse_ffi::*;

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

#[test]
fn several_arrays_are_computed_by_one_demand() {
    let f = fixture();
    unsafe {
        let args = [f.a as *const lf_array, f.b as *const lf_array];
        let (mut sum, mut product) = (null_mut(), null_mut());
        assert_eq!(
            lf_apply(c("add").as_ptr(), args.as_ptr(), 2, &mut sum),
            LF_OK
        );
        assert_eq!(
            lf_apply(c("mul").as_ptr(), args.as_ptr(), 2, &mut product),
            LF_OK
        );
        let both = [sum as *const lf_array, product as *const lf_array];
        assert_eq!(lf_eval(both.as_ptr(), 2), LF_OK);
        assert_eq!(lf_eval(both.as_ptr(), 0), LF_OK, "nothing to compute");
        let mut out = [0f32; 3];
        assert_eq!(lf_array_read(product, out.as_mut_ptr().cast(), 12), LF_OK);
        assert_eq!(out, [4.0, 10.0, 18.0]);
        assert_eq!(lf_eval(null(), 2), LF_ERROR_NULL_POINTER);
        assert!(message().contains("lf_eval"), "{}", message());
        let holes = [sum as *const lf_array, null()];
        assert_eq!(lf_eval(holes.as_ptr(), 2), LF_ERROR_NULL_POINTER);
        lf_array_free(sum);
        lf_array_free(product);
    }
}
