//! `take` (NumPy's `np.take`, the gather behind `x[indices]`) against a
//! by-hand reference on every backend: any axis of up to three, indices
//! of any shape and sign, every mode, several dtypes, and the errors.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use lazyfuse::{take, Context, DType, IndexMode, Result};

/// `values` (of `shape`) taken at `indices` along `axis` by hand, each
/// index already resolved by `resolve` (the mode's rule).
fn by_hand(
    values: &[i64],
    shape: &[usize],
    indices: &[i64],
    axis: usize,
    resolve: impl Fn(i64, usize) -> usize,
) -> Vec<i64> {
    let outer: usize = shape[..axis].iter().product();
    let inner: usize = shape[axis + 1..].iter().product();
    let n = shape[axis];
    let mut out = Vec::new();
    for a in 0..outer {
        for &index in indices {
            let j = resolve(index, n);
            out.extend_from_slice(&values[(a * n + j) * inner..][..inner]);
        }
    }
    out
}

fn wrap(index: i64, n: usize) -> usize {
    index.rem_euclid(n as i64) as usize
}

fn clip(index: i64, n: usize) -> usize {
    index.clamp(0, n as i64 - 1) as usize
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

/// A mode, its indices, and how the mode resolves each.
type Case = (IndexMode, Vec<i64>, fn(i64, usize) -> usize);

#[test]
fn take_along_every_axis_in_every_mode_is_numpys() -> Result<()> {
    for cx in common::backends() {
        for shape in SHAPES {
            let len: usize = shape.iter().product();
            let values: Vec<i64> = (0..len as i64).map(|v| v * 10 - 7).collect();
            let x = cx.from_vec(values.clone(), shape)?;
            for axis in 0..shape.len() {
                let n = shape[axis] as i64;
                let inside = [0, n - 1, -1, -n, n / 2];
                let outside = [n, -n - 1, 3 * n + 1, -5 * n];
                let cases: [Case; 3] = [
                    (IndexMode::Raise, inside.to_vec(), wrap),
                    (
                        IndexMode::Wrap,
                        inside.iter().chain(&outside).copied().collect(),
                        wrap,
                    ),
                    (
                        IndexMode::Clip,
                        inside.iter().chain(&outside).copied().collect(),
                        clip,
                    ),
                ];
                for (mode, indices, resolve) in cases {
                    // Indices as a 2-d array of int32: any shape, any integer dtype.
                    let i32s: Vec<i32> = indices.iter().map(|&i| i as i32).collect();
                    let rows = if indices.len() % 3 == 0 { 3 } else { 1 };
                    let index_array = cx.from_vec(i32s, &[rows, indices.len() / rows])?;
                    let taken = take(&x, &index_array, axis, mode)?;
                    let mut want_shape = shape[..axis].to_vec();
                    want_shape.extend([rows, indices.len() / rows]);
                    want_shape.extend_from_slice(&shape[axis + 1..]);
                    let name = cx.backend_name();
                    assert_eq!(
                        taken.shape(),
                        &want_shape[..],
                        "{name} {shape:?} axis {axis}"
                    );
                    assert_eq!(
                        taken.to_vec::<i64>()?,
                        by_hand(&values, shape, &indices, axis, resolve),
                        "{name} {shape:?} axis {axis} {mode:?} {indices:?}"
                    );
                }
            }
        }
    }
    Ok(())
}

#[test]
fn take_keeps_every_dtype_and_a_computed_array_and_indices() -> Result<()> {
    for cx in common::backends() {
        let floats = cx.from_slice(&[0.5f64, 1.5, 2.5, 3.5]);
        let indices = cx.from_slice(&[3u8, 0, 0]);
        let got = take(&(&floats * 2.0), &indices, 0, IndexMode::Raise)?;
        assert_eq!(got.to_vec::<f64>()?, [7.0, 1.0, 1.0]);
        let bools = cx.from_slice(&[true, false, true]);
        let got = take(&bools, &cx.from_slice(&[1i64, 2]), 0, IndexMode::Raise)?;
        assert_eq!(got.to_vec::<bool>()?, [false, true]);
        let halves = floats.astype(DType::F16);
        let got = take(&halves, &cx.from_slice(&[2i16]), 0, IndexMode::Raise)?;
        assert_eq!(got.dtype(), DType::F16);
        assert_eq!(got.astype(DType::F64).to_vec::<f64>()?, [2.5]);
        // Computed indices are not computed to be checked: they wrap.
        let lazy = &cx.from_slice(&[1i64, 2]) + 4i64;
        let got = take(&floats, &lazy, 0, IndexMode::Raise)?;
        assert_eq!(got.to_vec::<f64>()?, [1.5, 2.5], "{}", cx.backend_name());
    }
    Ok(())
}

#[test]
fn take_refuses_what_numpy_refuses() -> Result<()> {
    let cx = Context::cpu();
    let x = cx.from_vec((0..6).map(f64::from).collect(), &[2, 3])?;
    let err = common::refusal(take(&x, &cx.from_slice(&[0i64, 3]), 1, IndexMode::Raise));
    assert!(
        err.contains("index 3 is out of bounds for axis 1 with size 3"),
        "{err}"
    );
    let err = common::refusal(take(&x, &cx.from_slice(&[-3i64]), 0, IndexMode::Raise));
    assert!(
        err.contains("index -3 is out of bounds for axis 0 with size 2"),
        "{err}"
    );
    let err = common::refusal(take(&x, &cx.from_slice(&[0i64]), 2, IndexMode::Raise));
    assert!(err.contains("axis 2 of an array of shape (2, 3)"), "{err}");
    let err = common::refusal(take(&x, &cx.from_slice(&[0.0f64]), 0, IndexMode::Raise));
    assert!(err.contains("expected an integer dtype"), "{err}");
    let empty = cx.zeros(&[0, 3], DType::F32);
    let err = common::refusal(take(&empty, &cx.from_slice(&[0i64]), 0, IndexMode::Wrap));
    assert!(err.contains("length 0"), "{err}");
    // No indices: an empty result, even from an empty axis.
    let none = take(&empty, &cx.from_slice::<i64>(&[]), 0, IndexMode::Raise)?;
    assert_eq!(none.shape(), &[0, 3]);
    let other = Context::sim();
    let err = common::refusal(take(&x, &other.from_slice(&[0i64]), 0, IndexMode::Raise));
    assert!(err.contains("another context"), "{err}");
    Ok(())
}

#[test]
fn take_of_many_indices_along_every_axis_is_numpys() -> Result<()> {
    // 64 indices: along a last axis, blocks per row of indices.
    let indices: Vec<i64> = (0..64i64).map(|i| (i * 37) % 101 - 50).collect();
    for cx in common::backends() {
        for shape in [&[3usize, 120][..], &[4, 60, 2], &[2, 3, 77]] {
            let len: usize = shape.iter().product();
            let values: Vec<i64> = (0..len as i64).collect();
            let x = cx.from_vec(values.clone(), shape)?;
            for axis in 0..shape.len() {
                let n = shape[axis] as i64;
                let inside: Vec<i64> = indices.iter().map(|i| i % n).collect();
                let taken = take(&x, &cx.from_slice(&inside), axis, IndexMode::Raise)?;
                let want = by_hand(&values, shape, &inside, axis, wrap);
                let name = cx.backend_name();
                assert_eq!(taken.to_vec::<i64>()?, want, "{name} {shape:?} axis {axis}");
                let lazy = &cx.from_slice(&indices) * 1i64; // wraps
                let taken = take(&x, &lazy, axis, IndexMode::Raise)?;
                let want = by_hand(&values, shape, &indices, axis, wrap);
                assert_eq!(
                    taken.to_vec::<i64>()?,
                    want,
                    "{name} {shape:?} axis {axis} lazy"
                );
            }
        }
    }
    Ok(())
}

#[test]
fn rows_are_copied_whole_and_columns_run_compiled_on_the_cpu() -> Result<()> {
    let cx = Context::cpu();
    let x = cx.from_vec((0..64 * 100).map(|v| v as f64).collect(), &[64, 100])?;
    let rows = take(&x, &cx.from_slice(&[3i64, -1, 0]), 0, IndexMode::Raise)?;
    let plan = rows.explain();
    // Devices run a block per row; the CPU copies each row as a slice.
    assert!(plan.contains("lf_take_f64_rows_in_range"), "{plan}");
    assert!(plan.contains("a library routine: row copies"), "{plan}");
    let got = rows.to_vec::<f64>()?;
    assert_eq!(got[..100], x.to_vec::<f64>()?[300..400]);
    assert_eq!(got[100], 6300.0);
    // Single elements (a column's) run the compiled kernel.
    let columns = take(&x, &cx.from_slice(&vec![7i64; 40]), 1, IndexMode::Raise)?;
    let plan = columns.explain();
    assert!(plan.contains("lf_take_f64_index_rows_in_range"), "{plan}");
    assert!(plan.contains("runs on compiled code (JIT)"), "{plan}");
    assert_eq!(columns.to_vec::<f64>()?[40..80], [107.0; 40]);
    Ok(())
}

#[test]
fn gathers_and_products_read_into_a_buffer_copy_no_argument_on_the_cpu() -> Result<()> {
    // Their kernels overwrite their whole output: the fresh output's zeros
    // are neither copied into the caller's buffer nor into a new one.
    let cx = Context::cpu();
    let x = cx.from_vec((0..12).map(f64::from).collect(), &[4, 3])?;
    let idx = cx.from_slice(&[3i64, 0, 3]);
    let before = cx.stats().argument_copy_bytes;
    let mut rows = vec![-1.0f64; 9];
    take(&x, &idx, 0, IndexMode::Raise)?.read_into(&mut rows)?;
    assert_eq!(rows, [9.0, 10.0, 11.0, 0.0, 1.0, 2.0, 9.0, 10.0, 11.0]);
    let mut product = vec![-1.0f64; 16];
    lazyfuse::matmul(&x, &x.transpose())?.read_into(&mut product)?;
    assert_eq!(product[..4], [5.0, 14.0, 23.0, 32.0]);
    let mut order = vec![-1i64; 12];
    lazyfuse::argsort(&(&x * -1.0), 1)?.read_into(&mut order)?;
    assert_eq!(order[..3], [2, 1, 0]);
    let kept = take(&x, &idx, 1, IndexMode::Wrap)?.to_vec::<f64>()?; // not into a buffer
    assert_eq!(kept[..3], [0.0, 0.0, 0.0]);
    assert_eq!(cx.stats().argument_copy_bytes, before);
    Ok(())
}
