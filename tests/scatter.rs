//! `scatter` (the write behind NumPy's `x[indices] = value`) against a
//! by-hand reference on every backend: any axis, indices of any sign,
//! every mode, one value or many, and the errors.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use lazyfuse::{scatter, Context, DType, IndexMode, Result};

/// `target` (of `shape`) with the elements at `indices` along `axis`
/// replaced by `values` (the indexed shape's elements, row-major).
fn by_hand(
    target: &[i64],
    shape: &[usize],
    indices: &[usize],
    axis: usize,
    values: &[i64],
) -> Vec<i64> {
    let outer: usize = shape[..axis].iter().product();
    let inner: usize = shape[axis + 1..].iter().product();
    let n = shape[axis];
    let mut out = target.to_vec();
    let mut next = values.iter().cycle();
    for a in 0..outer {
        for &j in indices {
            for b in 0..inner {
                out[(a * n + j) * inner + b] = *next.next().unwrap();
            }
        }
    }
    out
}

// The last two have rows of 32 or more after an axis: copied by blocks per row.
const SHAPES: [&[usize]; 6] = [
    &[7],
    &[3, 4],
    &[2, 3, 5],
    &[4, 1, 3],
    &[3, 300],
    &[2, 3, 40],
];

#[test]
fn scatter_along_every_axis_in_every_mode_is_numpys() -> Result<()> {
    for cx in common::backends() {
        let name = cx.backend_name();
        for shape in SHAPES {
            let len: usize = shape.iter().product();
            let start: Vec<i64> = (0..len as i64).map(|v| v * 10 - 7).collect();
            for axis in 0..shape.len() {
                let n = shape[axis] as i64;
                // Distinct elements each (which of several values lands on
                // one element is unspecified), in each mode's spelling.
                let last = (n - 1).max(0);
                let cases = [
                    (IndexMode::Raise, vec![last, 0]),
                    (IndexMode::Raise, vec![-1]),
                    (IndexMode::Wrap, vec![n + last, -n]),
                    (IndexMode::Clip, vec![n + 5, -4]),
                ];
                for (mode, indices) in cases {
                    let resolved: Vec<usize> = match mode {
                        IndexMode::Clip => {
                            indices.iter().map(|&i| i.clamp(0, last) as usize).collect()
                        }
                        _ => indices.iter().map(|&i| i.rem_euclid(n) as usize).collect(),
                    };
                    if resolved.len() == 2 && resolved[0] == resolved[1] {
                        continue; // an axis of length 1: both name one element
                    }
                    let mut indexed = shape[..axis].to_vec();
                    indexed.push(indices.len());
                    indexed.extend_from_slice(&shape[axis + 1..]);
                    let count: usize = indexed.iter().product();
                    let values: Vec<i64> = (0..count as i64).map(|v| 1000 + v).collect();
                    // A computed target, written in place or not, must not
                    // change the value it came from.
                    let base = cx.from_vec(start.clone(), shape)?;
                    let target = &base * 1i64;
                    let index_array = cx.from_slice(&indices);
                    let many = cx.from_vec(values.clone(), &indexed)?;
                    let got = scatter(&target, &index_array, axis, &many, mode)?;
                    let want = by_hand(&start, shape, &resolved, axis, &values);
                    assert_eq!(got.shape(), shape);
                    assert_eq!(
                        got.to_vec::<i64>()?,
                        want,
                        "{name} {shape:?} axis {axis} {mode:?} {indices:?}"
                    );
                    let one = scatter(&target, &index_array, axis, &cx.from_slice(&[-1i64]), mode)?;
                    let want = by_hand(&start, shape, &resolved, axis, &[-1]);
                    assert_eq!(one.to_vec::<i64>()?, want, "{name} one value");
                    assert_eq!(
                        target.to_vec::<i64>()?,
                        start,
                        "{name}: the target kept its value"
                    );
                }
            }
        }
    }
    Ok(())
}

#[test]
fn scatter_broadcasts_and_casts_the_value() -> Result<()> {
    for cx in common::backends() {
        let x = cx.zeros(&[3, 4], DType::I32);
        // A row of 4 into rows 2 and 0: broadcast along the indices' axis.
        let row = cx.from_slice(&[1.9f64, -2.9, 3.0, 4.5]);
        let got = scatter(&x, &cx.from_slice(&[2u8, 0]), 0, &row, IndexMode::Raise)?;
        assert_eq!(got.dtype(), DType::I32);
        assert_eq!(got.to_vec::<i32>()?, [1, -2, 3, 4, 0, 0, 0, 0, 1, -2, 3, 4]);
        // A column per index: shape (3, 1) against the indexed (3, 2).
        let column = cx.from_vec(vec![5i32, 6, 7], &[3, 1])?;
        let got = scatter(&x, &cx.from_slice(&[3i64, 1]), 1, &column, IndexMode::Raise)?;
        assert_eq!(got.to_vec::<i32>()?, [0, 5, 0, 5, 0, 6, 0, 6, 0, 7, 0, 7]);
        // Computed indices are not computed to be checked: they wrap.
        let lazy = &cx.from_slice(&[1i64]) + 4i64;
        let flags = cx.from_slice(&[false, false, false]);
        let got = scatter(&flags, &lazy, 0, &cx.from_slice(&[true]), IndexMode::Raise)?;
        assert_eq!(
            got.to_vec::<bool>()?,
            [false, false, true],
            "{}",
            cx.backend_name()
        );
    }
    Ok(())
}

#[test]
fn scatter_refuses_what_numpy_refuses() -> Result<()> {
    let cx = Context::cpu();
    let x = cx.from_vec((0..6).map(f64::from).collect(), &[2, 3])?;
    let one = cx.from_slice(&[1.0f64]);
    let err = common::refusal(scatter(
        &x,
        &cx.from_slice(&[0i64, 3]),
        1,
        &one,
        IndexMode::Raise,
    ));
    assert!(
        err.contains("index 3 is out of bounds for axis 1 with size 3"),
        "{err}"
    );
    let err = common::refusal(scatter(
        &x,
        &cx.from_slice(&[0i64]),
        2,
        &one,
        IndexMode::Raise,
    ));
    assert!(err.contains("axis 2 of an array of shape (2, 3)"), "{err}");
    let err = common::refusal(scatter(
        &x,
        &cx.from_slice(&[0.0f64]),
        0,
        &one,
        IndexMode::Raise,
    ));
    assert!(err.contains("expected an integer dtype"), "{err}");
    let pair = cx.from_slice(&[1.0f64, 2.0]);
    let err = common::refusal(scatter(
        &x,
        &cx.from_slice(&[0i64]),
        0,
        &pair,
        IndexMode::Raise,
    ));
    assert!(
        err.contains("value of shape (2,) to the indexed shape (1, 3)"),
        "{err}"
    );
    let empty = cx.zeros(&[0, 3], DType::F32);
    let err = common::refusal(scatter(
        &empty,
        &cx.from_slice(&[0i64]),
        0,
        &one,
        IndexMode::Wrap,
    ));
    assert!(err.contains("length 0"), "{err}");
    // No indices: the target as it was.
    let none = scatter(&x, &cx.from_slice::<i64>(&[]), 0, &one, IndexMode::Raise)?;
    assert_eq!(none.to_vec::<f64>()?, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    let other = Context::sim();
    let err = common::refusal(scatter(
        &x,
        &cx.from_slice(&[0i64]),
        0,
        &other.from_slice(&[1.0f64]),
        IndexMode::Raise,
    ));
    assert!(err.contains("another context"), "{err}");
    Ok(())
}

#[test]
fn a_chain_of_scatters_into_a_temporary_writes_it_in_place_on_the_cpu() -> Result<()> {
    let cx = Context::cpu();
    let n = 1 << 12;
    let x = cx.from_slice(&vec![1.0f64; n]);
    let before = cx.stats().argument_copy_bytes;
    let mut y = &x * 2.0; // a temporary: the first scatter may take it
    for i in 0..4i64 {
        y = scatter(
            &y,
            &cx.from_slice(&[i, -1 - i]),
            0,
            &cx.from_slice(&[-(i as f64)]),
            IndexMode::Raise,
        )?;
    }
    let got = y.to_vec::<f64>()?;
    assert_eq!(&got[..5], [0.0, -1.0, -2.0, -3.0, 2.0]);
    assert_eq!(&got[n - 4..], [-3.0, -2.0, -1.0, 0.0]);
    assert_eq!(cx.stats().argument_copy_bytes - before, 0);
    Ok(())
}

#[test]
fn repeated_known_indices_land_the_last_value_as_numpy() -> Result<()> {
    for cx in common::backends() {
        let name = cx.backend_name();
        let x = cx.from_vec((0..8).collect::<Vec<i64>>(), &[4, 2])?;
        // Rows 1 and 3 twice each (as 1, -3, 3, -1): the later values land.
        let indices = cx.from_slice(&[1i32, -3, 3, -1, 0]);
        let values = cx.from_vec((10..20).collect::<Vec<i64>>(), &[5, 2])?;
        let got = scatter(&x, &indices, 0, &values, IndexMode::Raise)?;
        assert_eq!(
            got.to_vec::<i64>()?,
            [18, 19, 12, 13, 4, 5, 16, 17],
            "{name}"
        );
        let wrapped = cx.from_slice(&[5i64, 1, 9]); // all name row 1
        let got = scatter(
            &x,
            &wrapped,
            0,
            &cx.from_vec(vec![1i64, 2, 3, 4, 5, 6], &[3, 2])?,
            IndexMode::Wrap,
        )?;
        assert_eq!(got.to_vec::<i64>()?, [0, 1, 5, 6, 4, 5, 6, 7], "{name}");
        let clipped = cx.from_slice(&[-7i64, 0, 2]); // 0, 0 and 1, clipped
        let got = scatter(
            &x,
            &clipped,
            1,
            &cx.from_vec(vec![9i64, 8, 7], &[1, 3])?,
            IndexMode::Clip,
        )?;
        assert_eq!(got.to_vec::<i64>()?, [8, 7, 8, 7, 8, 7, 8, 7], "{name}");
    }
    Ok(())
}

#[test]
fn scatter_of_many_indices_along_every_axis_is_numpys() -> Result<()> {
    for cx in common::backends() {
        for shape in [&[3usize, 120][..], &[4, 60, 2], &[2, 3, 77]] {
            let len: usize = shape.iter().product();
            let start: Vec<i64> = (0..len as i64).collect();
            for axis in 0..shape.len() {
                let n = shape[axis];
                // Distinct elements, in a scrambled order, negative half the time.
                let resolved: Vec<usize> = (0..n)
                    .map(|i| (i * 7 + 3) % n)
                    .filter(|i| i % 3 != 1)
                    .collect();
                if (0..resolved.len()).any(|i| resolved[..i].contains(&resolved[i])) {
                    continue;
                }
                let indices: Vec<i64> = resolved
                    .iter()
                    .map(|&j| {
                        if j % 2 == 0 {
                            j as i64
                        } else {
                            j as i64 - n as i64
                        }
                    })
                    .collect();
                let mut indexed = shape[..axis].to_vec();
                indexed.push(indices.len());
                indexed.extend_from_slice(&shape[axis + 1..]);
                let count: usize = indexed.iter().product();
                let values: Vec<i64> = (0..count as i64).map(|v| -1 - v).collect();
                let x = cx.from_vec(start.clone(), shape)?;
                let got = scatter(
                    &x,
                    &cx.from_slice(&indices),
                    axis,
                    &cx.from_vec(values.clone(), &indexed)?,
                    IndexMode::Raise,
                )?;
                let want = by_hand(&start, shape, &resolved, axis, &values);
                assert_eq!(
                    got.to_vec::<i64>()?,
                    want,
                    "{} {shape:?} axis {axis}",
                    cx.backend_name()
                );
            }
        }
    }
    Ok(())
}

#[test]
fn values_broadcast_along_whole_groups_of_axes_are_read_in_place() -> Result<()> {
    // Target (2, 5, 40) indexed along axis 1 at [4, 0, 2] (indexed shape
    // (2, 3, 40)): values that vary along some of (outer, indices, inner)
    // and are broadcast along the others, on every layout's scale (the
    // inner rows of 40 take the row layout; a last axis the elements one).
    for cx in common::backends() {
        let name = cx.backend_name();
        for (shape, axis) in [
            (&[2usize, 5, 40][..], 1usize),
            (&[2, 40, 5], 2),
            (&[5, 6], 0),
        ] {
            let len: usize = shape.iter().product();
            let start: Vec<i64> = (0..len as i64).map(|v| -v).collect();
            let indices = [4usize, 0, 2];
            let mut indexed = shape.to_vec();
            indexed[axis] = indices.len();
            let value_shapes: Vec<Vec<usize>> = (0..1usize << indexed.len())
                .map(|mask| {
                    // Each axis kept or broadcast (length 1).
                    (0..indexed.len())
                        .map(|d| if mask >> d & 1 == 1 { indexed[d] } else { 1 })
                        .collect()
                })
                .collect();
            for value_shape in value_shapes {
                let count: usize = value_shape.iter().product();
                let values: Vec<i64> = (0..count as i64).map(|v| 1000 + v).collect();
                let target = cx.from_vec(start.clone(), shape)?;
                let value = cx.from_vec(values.clone(), &value_shape)?;
                let idx = cx.from_slice(&indices.map(|i| i as i64));
                let got =
                    scatter(&target, &idx, axis, &value, IndexMode::Raise)?.to_vec::<i64>()?;
                // The value broadcast to the indexed shape, row-major.
                let total: usize = indexed.iter().product();
                let broadcast: Vec<i64> = (0..total)
                    .map(|t| {
                        let (mut rest, mut at, mut stride) = (t, 0, 1);
                        for d in (0..indexed.len()).rev() {
                            let i = rest % indexed[d];
                            rest /= indexed[d];
                            if value_shape[d] > 1 {
                                at += i * stride;
                            }
                            stride *= value_shape[d];
                        }
                        values[at]
                    })
                    .collect();
                let want = by_hand(&start, shape, &indices, axis, &broadcast);
                assert_eq!(
                    got, want,
                    "{name} {shape:?} axis {axis} value {value_shape:?}"
                );
            }
        }
    }
    // A row assigned to many rows: one launch, the row read as it is.
    let cx = Context::cpu();
    let target = cx.from_vec(vec![0.0f32; 2000], &[50, 40])?;
    let row = cx.from_vec((0..40).map(|v| v as f32).collect(), &[40])?;
    let idx = cx.from_slice(&[3i64, 7, 3]);
    let written = scatter(&target, &idx, 0, &row, IndexMode::Raise)?;
    let before = cx.stats().kernel_launches;
    let got = written.to_vec::<f32>()?;
    assert_eq!(cx.stats().kernel_launches - before, 1);
    assert_eq!(got[7 * 40..8 * 40], *row.to_vec::<f32>()?);
    Ok(())
}
