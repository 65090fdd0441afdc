//! Region assignment (NumPy's `x[a:b, ::s] = value`) against a by-hand
//! reference over random regions of up to four axes on every backend:
//! steps of either sign, axes written whole (which `assign_region` merges
//! into the axis before them), values broadcast along some axes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use lazyfuse::{assign_region, Region, Result};

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
    }
}

/// One random case: the target's shape, the region, the value's shape
/// (right-aligned, each axis the region's length or 1, leading axes
/// sometimes dropped).
fn case(rng: &mut Rng) -> (Vec<usize>, Vec<Region>, Vec<usize>) {
    let ndim = 1 + rng.below(4);
    let shape: Vec<usize> = (0..ndim).map(|_| 1 + rng.below(6)).collect();
    let region: Vec<Region> = shape
        .iter()
        .map(|&n| {
            if rng.below(2) == 0 {
                return Region {
                    start: 0,
                    step: 1,
                    len: n,
                };
            }
            let step = [1i64, 1, 2, -1, -2][rng.below(5)];
            let start = rng.below(n) as i64;
            // As many as fit from `start` in steps of `step`.
            let room = if step > 0 {
                (n as i64 - 1 - start) / step + 1
            } else {
                start / -step + 1
            };
            let len = 1 + rng.below(room as usize);
            Region { start, step, len }
        })
        .collect();
    let mut value: Vec<usize> = region
        .iter()
        .map(|r| if rng.below(3) == 0 { 1 } else { r.len })
        .collect();
    while !value.is_empty() && value[0] == 1 && rng.below(2) == 0 {
        value.remove(0);
    }
    (shape, region, value)
}

/// `base` (of `shape`) with the region set from `values` (of the value's
/// shape, right-aligned and broadcast), element by element.
fn by_hand(
    base: &[f64],
    shape: &[usize],
    region: &[Region],
    value_shape: &[usize],
    values: &[f64],
) -> Vec<f64> {
    let ndim = shape.len();
    let aligned: Vec<usize> = std::iter::repeat_n(1, ndim - value_shape.len())
        .chain(value_shape.iter().copied())
        .collect();
    let mut out = base.to_vec();
    let total: usize = region.iter().map(|r| r.len).product();
    for flat in 0..total {
        let (mut rest, mut at, mut from) = (flat, 0usize, 0usize);
        let (mut target_stride, mut value_stride) = (1usize, 1usize);
        for d in (0..ndim).rev() {
            let j = rest % region[d].len;
            rest /= region[d].len;
            let t = region[d].start + j as i64 * region[d].step;
            at += t as usize * target_stride;
            from += if aligned[d] == 1 { 0 } else { j } * value_stride;
            target_stride *= shape[d];
            value_stride *= aligned[d];
        }
        out[at] = values[from];
    }
    out
}

#[test]
fn random_regions_of_up_to_four_axes_are_written_as_by_hand() -> Result<()> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let cases: Vec<_> = (0..150).map(|_| case(&mut rng)).collect();
    for cx in common::backends() {
        for (shape, region, value_shape) in &cases {
            let len: usize = shape.iter().product();
            let base: Vec<f64> = (0..len).map(|i| i as f64).collect();
            let n: usize = value_shape.iter().product();
            let values: Vec<f64> = (0..n).map(|i| -1.0 - i as f64).collect();
            let x = cx.from_vec(base.clone(), shape)?;
            let value = cx.from_vec(values.clone(), value_shape)?;
            let written = assign_region(&x, region, &value)?;
            assert_eq!(written.shape(), &shape[..]);
            assert_eq!(
                written.to_vec::<f64>()?,
                by_hand(&base, shape, region, value_shape, &values),
                "{} shape {shape:?} region {region:?} value {value_shape:?}",
                cx.backend_name()
            );
        }
    }
    Ok(())
}

#[test]
fn joining_along_the_first_axis_writes_one_run_on_vectors_in_place() -> Result<()> {
    let cx = lazyfuse::Context::cpu();
    let (rows, cols) = (64usize, 48usize);
    let mut joined = cx.zeros(&[4 * rows, cols], lazyfuse::DType::F64);
    let mut want = Vec::new();
    for q in 0..4 {
        let piece: Vec<f64> = (0..rows * cols).map(|i| (q * 10_000 + i) as f64).collect();
        want.extend_from_slice(&piece);
        let region = [
            Region {
                start: (q * rows) as i64,
                step: 1,
                len: rows,
            },
            Region {
                start: 0,
                step: 1,
                len: cols,
            },
        ];
        joined = assign_region(&joined, &region, &cx.from_vec(piece, &[rows, cols])?)?;
    }
    let plan = joined.explain();
    // The rows merge into one axis: a one-axis kernel stepping by 1.
    assert!(plan.contains("lf_assign_f64_1d_unit"), "{plan}");
    assert!(plan.contains("on vectors"), "{plan}");
    let before = cx.stats().argument_copy_bytes;
    assert_eq!(joined.to_vec::<f64>()?, want);
    // The zeros are a temporary: every kernel writes in place.
    assert_eq!(cx.stats().argument_copy_bytes, before, "{plan}");
    Ok(())
}
