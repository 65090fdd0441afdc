//! Shapes, row-major strides, NumPy broadcasting and axis normalisation.

use smallvec::SmallVec;

use crate::error::{Error, Result};

/// The extents of an array, outermost first (row-major).
pub type Shape = SmallVec<[usize; 4]>;

/// Element strides (not bytes); may be 0 for a broadcast dimension.
pub type Strides = SmallVec<[usize; 4]>;

/// Formats a shape as NumPy prints it: `(2, 3)`, `(5,)`, `()`.
pub fn format_shape(shape: &[usize]) -> String {
    match shape {
        [] => "()".to_string(),
        [n] => format!("({n},)"),
        dims => {
            let parts: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
            format!("({})", parts.join(", "))
        }
    }
}

/// Number of elements of a shape, or `None` when it overflows `usize`.
pub fn checked_len(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
}

/// Number of elements; shapes stored in nodes are validated, so this cannot overflow there.
pub fn len(shape: &[usize]) -> usize {
    checked_len(shape).unwrap_or(usize::MAX)
}

/// Row-major (C order) element strides of a dense array of `shape`.
pub fn contiguous_strides(shape: &[usize]) -> Strides {
    let mut strides: Strides = SmallVec::from_elem(0, shape.len());
    let mut step = 1usize;
    for (stride, &dim) in strides.iter_mut().zip(shape).rev() {
        *stride = step;
        step = step.saturating_mul(dim);
    }
    strides
}

/// Strides that read an array of `input` shape as if it had `output` shape
/// (right-aligned; broadcast dimensions get stride 0). `input` must broadcast
/// to `output`.
pub fn broadcast_strides(input: &[usize], output: &[usize]) -> Strides {
    let dense = contiguous_strides(input);
    let offset = output.len() - input.len();
    output
        .iter()
        .enumerate()
        .map(|(axis, &out_dim)| {
            if axis < offset {
                0
            } else {
                let i = axis - offset;
                if input[i] == 1 && out_dim != 1 {
                    0
                } else {
                    dense[i]
                }
            }
        })
        .collect()
}

/// NumPy broadcasting of several shapes; `op` names the operation for the error.
pub fn broadcast_shapes(op: &str, shapes: &[&[usize]]) -> Result<Shape> {
    let ndim = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out: Shape = SmallVec::from_elem(1, ndim);
    for shape in shapes {
        let offset = ndim - shape.len();
        for (i, &dim) in shape.iter().enumerate() {
            let slot = &mut out[offset + i];
            if *slot == 1 {
                *slot = dim;
            } else if dim != 1 && dim != *slot {
                let listed: Vec<String> = shapes.iter().map(|s| format_shape(s)).collect();
                return Err(Error::ShapeMismatch {
                    op: op.to_string(),
                    message: format!(
                        "operands could not be broadcast together with shapes {} \
                         (dimension {} is {} in one and {} in another; expected equal sizes or 1)",
                        listed.join(" "),
                        offset + i,
                        *slot,
                        dim
                    ),
                });
            }
        }
    }
    Ok(out)
}

/// Whether `from` broadcasts to exactly `to` (as `np.broadcast_to` requires).
pub fn broadcasts_to(from: &[usize], to: &[usize]) -> bool {
    if from.len() > to.len() {
        return false;
    }
    let offset = to.len() - from.len();
    from.iter()
        .zip(&to[offset..])
        .all(|(&f, &t)| f == t || f == 1)
}

/// Turns a possibly negative axis into an index below `ndim`.
pub fn normalize_axis(op: &str, axis: i64, ndim: usize) -> Result<usize> {
    let n = ndim as i64;
    let resolved = if axis < 0 { axis + n } else { axis };
    if (0..n).contains(&resolved) {
        Ok(resolved as usize)
    } else {
        Err(Error::InvalidArgument {
            op: op.to_string(),
            message: format!(
                "axis {axis} is out of bounds for an array of dimension {ndim} \
                 (expected {}..{})",
                -n, n
            ),
        })
    }
}

/// An integer usable as an axis: `i32`, `i64`, `isize`, `usize` and the other
/// primitive integers. Negative values count from the end.
pub trait AxisIndex: Copy {
    /// The axis as an `i64`, or `None` if it does not fit.
    fn to_axis(self) -> Option<i64>;
}

macro_rules! impl_axis_index {
    ($($t:ty),*) => {$(
        impl AxisIndex for $t {
            fn to_axis(self) -> Option<i64> {
                i64::try_from(self).ok()
            }
        }
    )*};
}
impl_axis_index!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting_follows_numpy() {
        let s = broadcast_shapes("add", &[&[2, 1, 3], &[4, 1]]).unwrap();
        assert_eq!(s.as_slice(), &[2, 4, 3]);
        let s = broadcast_shapes("add", &[&[0, 1], &[1, 5]]).unwrap();
        assert_eq!(s.as_slice(), &[0, 5]);
        let s = broadcast_shapes("add", &[&[], &[3]]).unwrap();
        assert_eq!(s.as_slice(), &[3]);
        let err = broadcast_shapes("add", &[&[2, 3], &[4]]).unwrap_err();
        assert!(err.to_string().contains("(2, 3) (4,)"), "{err}");
        assert!(broadcast_shapes("add", &[&[0], &[2]]).is_err());
    }

    #[test]
    fn strides() {
        assert_eq!(contiguous_strides(&[2, 3, 4]).as_slice(), &[12, 4, 1]);
        assert_eq!(
            broadcast_strides(&[3, 1], &[2, 3, 4]).as_slice(),
            &[0, 1, 0]
        );
    }

    #[test]
    fn axes() {
        assert_eq!(normalize_axis("sum", -1, 3).unwrap(), 2);
        assert!(normalize_axis("sum", 3, 3).is_err());
        assert!(normalize_axis("sum", -4, 3).is_err());
    }
}
