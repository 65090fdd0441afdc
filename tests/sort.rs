//! `sort` (NumPy's `np.sort`) and `argsort` (NumPy's stable `np.argsort`)
//! against Rust's sorts on every backend: every axis, row lengths around
//! powers of two, NaNs last, ties in order, several dtypes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use lazyfuse::{argsort, sort, Context, DType, Error, Result};

/// Scrambled values with repeats, and a NaN every `nan_every` (0: none).
fn scrambled(len: usize, nan_every: usize) -> Vec<f64> {
    (0..len)
        .map(|i| match nan_every {
            e if e > 0 && i % e == e - 1 => f64::NAN,
            _ => ((i * 7919 + 13) % 97) as f64 - 48.0,
        })
        .collect()
}

/// `values` (of `shape`) sorted along `axis` by hand, NaNs last.
fn by_hand(values: &[f64], shape: &[usize], axis: usize) -> Vec<f64> {
    let outer: usize = shape[..axis].iter().product();
    let inner: usize = shape[axis + 1..].iter().product();
    let n = shape[axis];
    let mut out = values.to_vec();
    for a in 0..outer {
        for b in 0..inner {
            let at = |j: usize| (a * n + j) * inner + b;
            let mut line: Vec<f64> = (0..n).map(|j| values[at(j)]).collect();
            line.sort_by(|x, y| {
                x.partial_cmp(y)
                    .unwrap_or_else(|| x.is_nan().cmp(&y.is_nan()))
            });
            for (j, v) in line.into_iter().enumerate() {
                out[at(j)] = v;
            }
        }
    }
    out
}

fn same(got: &[f64], want: &[f64]) -> bool {
    got.len() == want.len()
        && got
            .iter()
            .zip(want)
            .all(|(g, w)| g == w || (g.is_nan() && w.is_nan()))
}

/// Row lengths around powers of two, several axes, a length-1 axis.
const SHAPES: [&[usize]; 8] = [
    &[1],
    &[2],
    &[7],
    &[64],
    &[100],
    &[3, 33],
    &[4, 5, 6],
    &[2, 1, 3],
];

#[test]
fn sort_along_every_axis_is_numpys() -> Result<()> {
    for cx in common::backends() {
        let name = cx.backend_name();
        for shape in SHAPES {
            let len: usize = shape.iter().product();
            let values = scrambled(len, 5);
            let x = cx.from_vec(values.clone(), shape)?;
            for axis in 0..shape.len() {
                let sorted = sort(&(&x * 1.0), axis)?;
                assert_eq!(sorted.shape(), shape);
                let got = sorted.to_vec::<f64>()?;
                let want = by_hand(&values, shape, axis);
                assert!(same(&got, &want), "{name} {shape:?} axis {axis}: {got:?}");
            }
            // The input keeps its value.
            assert!(same(&x.to_vec::<f64>()?, &values));
        }
    }
    Ok(())
}

#[test]
fn sort_keeps_every_dtype() -> Result<()> {
    for cx in common::backends() {
        let name = cx.backend_name();
        let values = scrambled(37, 0);
        let x = cx.from_slice(&values);
        for dtype in [DType::I8, DType::U16, DType::I64, DType::F32, DType::F16] {
            let sorted = sort(&x.astype(dtype), 0)?;
            assert_eq!(sorted.dtype(), dtype);
            let got = sorted.astype(DType::F64).to_vec::<f64>()?;
            let mut want: Vec<f64> = x.astype(dtype).astype(DType::F64).to_vec()?;
            want.sort_by(f64::total_cmp);
            assert_eq!(got, want, "{name} {dtype}");
        }
        let flags = cx.from_slice(&[true, false, true, false]);
        assert_eq!(
            sort(&flags, 0)?.to_vec::<bool>()?,
            [false, false, true, true]
        );
    }
    Ok(())
}

#[test]
fn sort_refuses_an_axis_outside_the_array() {
    let cx = Context::cpu();
    let x = cx.from_slice(&[1.0f32, 0.0]);
    match sort(&x, 1) {
        Err(e @ Error::InvalidArgument { .. }) => {
            assert!(
                e.to_string().contains("axis 1 of an array of shape (2,)"),
                "{e}"
            )
        }
        other => panic!("expected an argument error, got {other:?}"),
    }
    let empty = cx.zeros(&[0, 3], DType::F64);
    assert_eq!(sort(&empty, 1).unwrap().shape(), &[0, 3]);
}

/// The positions that stably sort each line of `values` (of `shape`)
/// along `axis`, by hand, NaNs last.
fn positions_by_hand(values: &[f64], shape: &[usize], axis: usize) -> Vec<i64> {
    let outer: usize = shape[..axis].iter().product();
    let inner: usize = shape[axis + 1..].iter().product();
    let n = shape[axis];
    let mut out = vec![0; values.len()];
    for a in 0..outer {
        for b in 0..inner {
            let at = |j: usize| (a * n + j) * inner + b;
            let mut line: Vec<usize> = (0..n).collect();
            line.sort_by(|&x, &y| {
                let (x, y) = (values[at(x)], values[at(y)]);
                x.partial_cmp(&y)
                    .unwrap_or_else(|| x.is_nan().cmp(&y.is_nan()))
            });
            for (j, p) in line.into_iter().enumerate() {
                out[at(j)] = p as i64;
            }
        }
    }
    out
}

#[test]
fn argsort_along_every_axis_is_numpys_stable_argsort() -> Result<()> {
    for cx in common::backends() {
        let name = cx.backend_name();
        for shape in SHAPES.iter().copied().chain([&[2usize, 300][..]]) {
            let len: usize = shape.iter().product();
            // Repeated values and NaNs: ties must keep their order.
            let values = scrambled(len, 5);
            let x = cx.from_vec(values.clone(), shape)?;
            for axis in 0..shape.len() {
                let positions = argsort(&(&x * 1.0), axis)?;
                assert_eq!(positions.shape(), shape);
                assert_eq!(positions.dtype(), DType::I64);
                let got = positions.to_vec::<i64>()?;
                let want = positions_by_hand(&values, shape, axis);
                assert_eq!(got, want, "{name} {shape:?} axis {axis}");
            }
        }
    }
    Ok(())
}

#[test]
fn argsort_orders_every_dtype_and_refuses_a_bad_axis() -> Result<()> {
    for cx in common::backends() {
        let name = cx.backend_name();
        let values = scrambled(37, 0);
        let x = cx.from_slice(&values);
        for dtype in [DType::I8, DType::U16, DType::F32, DType::F16, DType::Bool] {
            let typed = x.astype(dtype);
            let got = argsort(&typed, 0)?.to_vec::<i64>()?;
            let seen: Vec<f64> = typed.astype(DType::F64).to_vec()?;
            let want = positions_by_hand(&seen, &[37], 0);
            assert_eq!(got, want, "{name} {dtype}");
        }
        let signed_zeros = cx.from_slice(&[0.0f64, -0.0, 0.0, -1.0]);
        assert_eq!(argsort(&signed_zeros, 0)?.to_vec::<i64>()?, [3, 0, 1, 2]);
    }
    let cx = Context::cpu();
    let x = cx.from_slice(&[1.0f32, 0.0]);
    assert!(matches!(argsort(&x, 1), Err(Error::InvalidArgument { .. })));
    assert_eq!(argsort(&cx.zeros(&[0, 3], DType::F64), 1)?.shape(), &[0, 3]);
    assert_eq!(
        argsort(&cx.zeros(&[4, 1], DType::F64), 1)?.to_vec::<i64>()?,
        [0; 4]
    );
    Ok(())
}

#[test]
fn rows_spread_over_worker_threads_sort_as_on_one() -> Result<()> {
    // 90,000 elements: past the size the CPU sorts on one thread.
    let shape = [300usize, 300];
    let values = scrambled(90_000, 7);
    for threads in [1, 2, 3] {
        let cx = Context::builder().backend("cpu").threads(threads).build()?;
        let x = cx.from_vec(values.clone(), &shape)?;
        let sorted = sort(&x, 1)?.to_vec::<f64>()?;
        assert!(
            same(&sorted, &by_hand(&values, &shape, 1)),
            "{threads} threads"
        );
        let positions = argsort(&x, 0)?.to_vec::<i64>()?;
        assert_eq!(
            positions,
            positions_by_hand(&values, &shape, 0),
            "{threads} threads"
        );
    }
    Ok(())
}

/// Rows of `STAGED_FROM` elements or more run on devices as one launch
/// per step of the network: the same results as Rust's sorts on every
/// backend (the CPU keeps its library routine), along both axes, with
/// NaNs, repeats and a row length just past a power of two.
#[test]
fn long_rows_sort_one_step_per_launch_on_devices() -> Result<()> {
    let n = lazyfuse::STAGED_FROM + 5;
    for shape in [vec![n], vec![2, n]] {
        let len: usize = shape.iter().product();
        let values = scrambled(len, 11);
        for cx in common::backends() {
            let x = cx.from_vec(values.clone(), &shape)?;
            let axis = shape.len() - 1;
            let sorted = sort(&x, axis)?;
            if cx.backend_name() == "sim" {
                let plan = sorted.explain();
                assert!(plan.contains("lf_sort_step_f64"), "{plan}");
            }
            let got = sorted.to_vec::<f64>()?;
            assert!(
                same(&got, &by_hand(&values, &shape, axis)),
                "{}",
                cx.backend_name()
            );
            let positions = argsort(&x, axis)?.to_vec::<i64>()?;
            assert_eq!(
                positions,
                positions_by_hand(&values, &shape, axis),
                "{}",
                cx.backend_name()
            );
        }
    }
    Ok(())
}

/// `partition` puts each `kth` element where sorting would, the smaller
/// before and the larger after, on every backend (the CPU selects, devices
/// sort), NaNs last, along any axis; a `kth` outside the axis is an error.
#[test]
fn partition_places_each_kth_element_as_sorting_would() -> Result<()> {
    for (shape, axis) in [(vec![37usize], 0usize), (vec![5, 40], 1), (vec![40, 3], 0)] {
        let len: usize = shape.iter().product();
        let values = scrambled(len, 9);
        let sorted = by_hand(&values, &shape, axis);
        let n = shape[axis] as i64;
        let kth = [0i64, 3, n / 2, -1];
        for cx in common::backends() {
            let x = cx.from_vec(values.clone(), &shape)?;
            let got = lazyfuse::partition(&x, axis, &kth)?.to_vec::<f64>()?;
            let inner: usize = shape[axis + 1..].iter().product();
            let outer = len / (shape[axis] * inner);
            for o in 0..outer {
                for i in 0..inner {
                    let at = |j: usize| (o * shape[axis] + j) * inner + i;
                    for &k in &kth {
                        let k = k.rem_euclid(n) as usize;
                        let (want, here) = (sorted[at(k)], got[at(k)]);
                        assert!(
                            want == here || (want.is_nan() && here.is_nan()),
                            "{}",
                            cx.backend_name()
                        );
                        for j in 0..shape[axis] {
                            let v = got[at(j)];
                            // NumPy's order: NaNs last (a NaN `here` has
                            // anything before it, a NaN `v` may follow).
                            let ordered = if j < k {
                                v <= here || here.is_nan()
                            } else {
                                v >= here || v.is_nan()
                            };
                            assert!(ordered, "{} at {j} around {k}", cx.backend_name());
                        }
                    }
                }
            }
        }
    }
    let cx = Context::cpu();
    let x = cx.from_slice(&[1.0f64, 2.0, 3.0]);
    assert!(matches!(
        lazyfuse::partition(&x, 0, &[3]),
        Err(Error::InvalidArgument { .. })
    ));
    let axis_error = lazyfuse::partition(&x, 1, &[0]).unwrap_err().to_string();
    assert!(axis_error.contains("axis 1"), "{axis_error}");
    Ok(())
}
