//! Destinations (Numba's and NumPy's `out=`): `Array::assign`,
//! `Ufunc::call_into` and `GUfunc::call_into` re-bind a handle; values stay
//! immutable, so expressions built earlier keep the old value; wrong
//! shapes and dtypes are errors.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use lazyfuse::{DType, Expr, Ufunc};

#[test]
fn ufunc_call_into_rebinds_the_output_on_every_backend() {
    let add = Ufunc::new("add", |[x, y]: [Expr; 2]| x + y);
    for cx in common::backends() {
        let name = cx.backend_name();
        let x = cx.from_slice(&[1.0f32, 2.0, 3.0]);
        let y = cx.from_slice(&[10.0f32, 20.0, 30.0]);
        let out = cx.empty(&[3], DType::F32);
        let before = &out + 1.0f32;
        add.call_into(&[&x, &y], &out).unwrap();
        assert_eq!(out.to_vec::<f32>().unwrap(), [11.0, 22.0, 33.0], "{name}");
        assert_eq!(before.to_vec::<f32>().unwrap(), [1.0; 3], "{name}");

        // Arguments broadcast to the output's shape; a safe cast widens.
        let wide = cx.zeros(&[2, 3], DType::F64);
        add.call_into(&[&x, &y], &wide).unwrap();
        assert_eq!(
            wide.to_vec::<f64>().unwrap(),
            [11.0, 22.0, 33.0, 11.0, 22.0, 33.0],
            "{name}"
        );

        // The output may be an argument: its old value is read.
        add.call_into(&[&out, &out], &out).unwrap();
        assert_eq!(out.to_vec::<f32>().unwrap(), [22.0, 44.0, 66.0], "{name}");
    }
}

#[test]
fn wrong_outputs_are_errors_and_leave_the_output_alone() {
    let add = Ufunc::new("add", |[x, y]: [Expr; 2]| x + y);
    let cx = lazyfuse::Context::sim();
    let x = cx.from_slice(&[1.0f64, 2.0]);
    let small = cx.zeros(&[1], DType::F64);
    let err = add.call_into(&[&x, &x], &small).unwrap_err().to_string();
    assert!(
        err.contains("does not broadcast") && err.contains("(2,)"),
        "{err}"
    );
    let narrow = cx.zeros(&[2], DType::F32);
    let err = add.call_into(&[&x, &x], &narrow).unwrap_err().to_string();
    assert!(err.contains("f64") && err.contains("f32"), "{err}");
    assert_eq!(narrow.to_vec::<f32>().unwrap(), [0.0, 0.0]);
    let other = lazyfuse::Context::cpu().zeros(&[2], DType::F64);
    assert!(other
        .assign(&x)
        .unwrap_err()
        .to_string()
        .contains("another context"));
}

#[test]
fn a_steady_out_loop_allocates_no_device_memory_after_the_first_round() {
    let add = Ufunc::new("add", |[x, y]: [Expr; 2]| x * 2.0 + y);
    let cx = lazyfuse::Context::sim();
    let n = 1000;
    let x = cx.from_slice(&vec![1.0f32; n]);
    let y = cx.from_slice(&vec![0.5f32; n]);
    let out = cx.empty(&[n], DType::F32);
    add.call_into(&[&x, &y], &out).unwrap();
    out.eval().unwrap();
    let first = cx.stats();
    assert_eq!(first.device_allocations, 3, "two uploads and the output");
    assert_eq!(first.device_bytes_allocated, 3 * 4 * n as u64);
    for _ in 0..5 {
        add.call_into(&[&x, &y], &out).unwrap();
        out.eval().unwrap();
    }
    assert_eq!(
        cx.stats().device_allocations,
        3,
        "each new value of out reuses the buffer its old value freed"
    );
    assert_eq!(out.to_vec::<f32>().unwrap(), vec![2.5f32; n]);

    // While cleanup is deferred, freed buffers are queued, not reused.
    {
        let _guard = cx.defer_cleanup();
        add.call_into(&[&x, &y], &out).unwrap();
        out.eval().unwrap();
        assert_eq!(cx.stats().device_allocations, 4);
    }
    add.call_into(&[&x, &y], &out).unwrap();
    out.eval().unwrap();
    assert_eq!(
        cx.stats().device_allocations,
        4,
        "released at the guard's end, then reused"
    );

    // The cpu backend has no device memory.
    let host = lazyfuse::Context::cpu();
    let z = host.from_slice(&[1.0f32]);
    (&z * 2.0f32).eval().unwrap();
    assert_eq!(host.stats().device_allocations, 0);
}
