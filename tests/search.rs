//! `searchsorted` (NumPy's `np.searchsorted`) against Rust's
//! `partition_point` on every backend: both sides, repeated elements,
//! NaNs last, values of any shape, promoted dtypes, and the errors.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use lazyfuse::{searchsorted, Context, DType, Error, Result, Side};

/// NumPy's order: numbers ascending, NaNs after them.
fn less(a: f64, b: f64) -> bool {
    a < b || (b.is_nan() && !a.is_nan())
}

fn by_hand(sorted: &[f64], values: &[f64], side: Side) -> Vec<i64> {
    values
        .iter()
        .map(|&v| match side {
            Side::Left => sorted.partition_point(|&e| less(e, v)),
            Side::Right => sorted.partition_point(|&e| !less(v, e)),
        } as i64)
        .collect()
}

#[test]
fn searchsorted_is_numpys_on_every_backend() -> Result<()> {
    let sorted = [-3.0, -1.0, 0.0, 0.0, 0.0, 2.5, 7.0, 7.0, f64::NAN, f64::NAN];
    let values: Vec<f64> = (0..60)
        .map(|i| match i % 13 {
            12 => f64::NAN,
            _ => ((i * 37) % 23) as f64 / 2.0 - 5.0,
        })
        .collect();
    for cx in common::backends() {
        let name = cx.backend_name();
        for n in [1, 2, 5, 8, 10] {
            let a = cx.from_slice(&sorted[..n]);
            let v = cx.from_vec(values.clone(), &[3, 4, 5])?;
            for side in [Side::Left, Side::Right] {
                let found = searchsorted(&a, &(&v * 1.0), side)?;
                assert_eq!(found.shape(), &[3, 4, 5]);
                assert_eq!(found.dtype(), DType::I64);
                let want = by_hand(&sorted[..n], &values, side);
                assert_eq!(found.to_vec::<i64>()?, want, "{name} n={n} {side:?}");
            }
        }
        // Integers against floats compare promoted (as f64 here).
        let ints = cx.from_slice(&[1i32, 3, 3, 8]);
        let probes = cx.from_slice(&[3.0f64, 2.5, 9.0]);
        assert_eq!(
            searchsorted(&ints, &probes, Side::Right)?.to_vec::<i64>()?,
            [3, 1, 4]
        );
        let halves = cx.from_slice(&[0.5f32, 1.5]).astype(DType::F16);
        let one = cx.from_slice(&[1.0f32]).astype(DType::F16);
        assert_eq!(
            searchsorted(&halves, &one, Side::Left)?.to_vec::<i64>()?,
            [1]
        );
    }
    Ok(())
}

#[test]
fn searchsorted_takes_empty_arrays_and_refuses_a_matrix() -> Result<()> {
    let cx = Context::cpu();
    let a = cx.from_slice(&[1.0f64, 2.0]);
    let none = cx.zeros(&[0, 3], DType::F64);
    assert_eq!(searchsorted(&a, &none, Side::Left)?.shape(), &[0, 3]);
    let empty = cx.zeros(&[0], DType::F64);
    assert_eq!(
        searchsorted(&empty, &a, Side::Right)?.to_vec::<i64>()?,
        [0, 0]
    );
    match searchsorted(&cx.zeros(&[2, 2], DType::F64), &a, Side::Left) {
        Err(e @ Error::InvalidArgument { .. }) => {
            assert!(e.to_string().contains("shape (2, 2) (expected 1-d)"), "{e}")
        }
        other => panic!("expected an argument error, got {other:?}"),
    }
    Ok(())
}

#[test]
fn values_spread_over_worker_threads_find_what_one_thread_finds() -> Result<()> {
    let sorted: Vec<f64> = (0..500).map(|i| (i / 3) as f64).collect();
    let values: Vec<f64> = (0..40_000)
        .map(|i| ((i * 7919) % 180) as f64 - 5.5)
        .collect();
    for threads in [1, 2, 3] {
        let cx = Context::builder().backend("cpu").threads(threads).build()?;
        let (a, v) = (cx.from_slice(&sorted), cx.from_slice(&values));
        for side in [Side::Left, Side::Right] {
            let got = searchsorted(&a, &v, side)?.to_vec::<i64>()?;
            assert_eq!(
                got,
                by_hand(&sorted, &values, side),
                "{threads} threads {side:?}"
            );
        }
    }
    Ok(())
}
