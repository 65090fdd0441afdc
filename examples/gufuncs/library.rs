//! The generalized ufuncs of the `gufuncs` example (Numba's
//! `@guvectorize`), shared with the tests (`tests/gufuncs.rs`).

#![allow(dead_code)] // the example uses some; the tests use all

use lazyfuse::kernel::Val;
use lazyfuse::{core::ReduceOp, DType, GUfunc, Result};

/// The tutorial's `doubled_gufunc`: `(m,n)->(m,n)`, `out = 2 * arr`.
pub fn doubled() -> Result<GUfunc> {
    GUfunc::build(
        "doubled",
        "(m,n)->(m,n)",
        &[
            "void(f32[:,:], f32[:,:])",
            "void(float64[:, :], float64[:, :])",
            "void(f16[:,:], f16[:,:])",
            "void(int32[:,:], int32[:,:])",
        ],
        |k, args| {
            let (arr, out) = (&args[0], &args[1]);
            k.for_range(0i64, arr.len(0), 1i64, |k, i| {
                k.for_range(0i64, arr.len(1), 1i64, |k, j| {
                    let twice = arr.at((&i, &j)) * 2.0;
                    k.store(out, (&i, &j), twice);
                });
            });
        },
    )
}

/// Matrix product `(m,n),(n,p)->(m,p)`, one product per loop element.
pub fn matmul() -> Result<GUfunc> {
    GUfunc::build(
        "matmul",
        "(m,n),(n,p)->(m,p)",
        &[
            "void(f32[:,:], f32[:,:], f32[:,:])",
            "void(f64[:,:], f64[:,:], f64[:,:])",
        ],
        |k, args| {
            let (a, b, out) = (&args[0], &args[1], &args[2]);
            k.for_range(0i64, a.len(0), 1i64, |k, i| {
                k.for_range(0i64, b.len(1), 1i64, |k, j| {
                    let acc = k.local(Val::constant(0.0, out.dtype()));
                    k.for_range(0i64, a.len(1), 1i64, |k, l| {
                        k.set(&acc, acc.get() + a.at((&i, &l)) * b.at((&l, &j)));
                    });
                    k.store(out, (&i, &j), acc.get());
                });
            });
        },
    )
}

/// Numba's `move_mean`: `(n),()->(n)`, the mean of the last `window`
/// values (fewer at the start).
pub fn moving_average() -> Result<GUfunc> {
    GUfunc::build(
        "moving_average",
        "(n),()->(n)",
        &["void(f64[:], i64, f64[:])", "void(f32[:], i64, f32[:])"],
        |k, args| {
            let (a, window, out) = (&args[0], &args[1], &args[2]);
            let width = k.let_(window.at(()).max(1i64));
            let n = a.len(0);
            let sum = k.local(Val::constant(0.0, a.dtype()));
            let count = k.local(0i64);
            k.for_range(0i64, width.min(&n), 1i64, |k, i| {
                k.set(&sum, sum.get() + a.at(&i));
                k.set(&count, count.get() + 1.0);
                k.store(out, &i, sum.get() / count.get().cast(a.dtype()));
            });
            k.for_range(width.clone(), n, 1i64, |k, i| {
                let leaving = a.at(&i - &width);
                k.set(&sum, sum.get() + (a.at(&i) - leaving));
                k.store(out, &i, sum.get() / count.get().cast(a.dtype()));
            });
        },
    )
}

/// What [`moving_average`] computes for one row, as a plain loop.
pub fn moving_average_loop(a: &[f64], window: usize) -> Vec<f64> {
    let width = window.max(1);
    let (mut sum, mut count) = (0.0, 0usize);
    let mut out = vec![0.0; a.len()];
    for i in 0..width.min(a.len()) {
        sum += a[i];
        count += 1;
        out[i] = sum / count as f64;
    }
    for i in width..a.len() {
        sum += a[i] - a[i - width];
        out[i] = sum / count as f64;
    }
    out
}

/// The Euclidean norm `(n)->()`, its terms spread over threads with
/// `par_reduce` (Numba's `prange` reduction): fast on one long row.
pub fn norm() -> Result<GUfunc> {
    GUfunc::build(
        "norm",
        "(n)->()",
        &["void(f32[:], f32)", "void(f64[:], f64)"],
        |k, args| {
            let (x, out) = (&args[0], &args[1]);
            let squares = k.par_reduce(0i64, x.len(0), ReduceOp::Sum, |_, i| {
                let v = x.at(&i).cast(DType::F64);
                &v * &v
            });
            k.store(out, (), squares.sqrt());
        },
    )
}

/// Row-wise dot products `(n),(n)->()`, one row per thread.
pub fn dot() -> Result<GUfunc> {
    GUfunc::build(
        "dot",
        "(n),(n)->()",
        &["void(f32[:], f32[:], f32)", "void(f64[:], f64[:], f64)"],
        |k, args| {
            let (x, y, out) = (&args[0], &args[1], &args[2]);
            let acc = k.local(Val::constant(0.0, out.dtype()));
            k.for_range(0i64, x.len(0), 1i64, |k, i| {
                k.set(&acc, acc.get() + x.at(&i) * y.at(&i));
            });
            k.store(out, (), acc.get());
        },
    )
}

/// Two outputs, `(n)->(),()`: the smallest and largest element.
pub fn min_max() -> Result<GUfunc> {
    GUfunc::build(
        "min_max",
        "(n)->(),()",
        &["void(i32[:], i32, i32)", "void(f64[:], f64, f64)"],
        |k, args| {
            let (x, lo, hi) = (&args[0], &args[1], &args[2]);
            let smallest = k.par_reduce(0i64, x.len(0), ReduceOp::Min, |_, i| x.at(&i));
            let largest = k.par_reduce(0i64, x.len(0), ReduceOp::Max, |_, i| x.at(&i));
            k.store(lo, (), smallest);
            k.store(hi, (), largest);
        },
    )
}

/// Every gufunc above.
pub fn all() -> Result<Vec<GUfunc>> {
    Ok(vec![
        doubled()?,
        matmul()?,
        moving_average()?,
        norm()?,
        dot()?,
        min_max()?,
    ])
}
