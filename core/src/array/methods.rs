//! The public element-wise, selection and reduction methods of `Array`.

use super::{Array, Operand};
use crate::ops::ReduceOp;
use crate::scalar::Scalar;
use crate::shape::AxisIndex;
use crate::typing::Reduction;
use crate::typing::{result_type, OperandType};

impl Array {
    elementwise_methods!(Operand);

    /// `where(self, x, y)`: `x` where `self` is true, else `y` (NumPy's
    /// `where`; `self` is read as bool). Also callable as `Array::where_(&cond, x, y)`.
    pub fn where_(&self, x: impl Into<Operand>, y: impl Into<Operand>) -> Array {
        let (x, y) = (x.into(), y.into());
        Array::select(
            self.session(),
            super::build::Arg::Array(self),
            (&x).into(),
            (&y).into(),
        )
    }

    /// `self` limited to `[lo, hi]`, as NumPy's `clip`: the maximum with
    /// `lo`, then the minimum with `hi`, each keeping its first operand
    /// when equal (`-0.0` stays `-0.0`); NaN in `self` stays, a NaN bound
    /// gives NaN; `lo > hi` gives `hi`.
    pub fn clip(&self, lo: impl Into<Operand>, hi: impl Into<Operand>) -> Array {
        let (lo, hi) = (lo.into(), hi.into());
        let kept = |x: &Array, keep: Array| {
            if x.dtype().is_float() {
                keep.logical_or(x.isnan())
            } else {
                keep
            }
        };
        let raised = kept(self, self.ge(lo.clone())).where_(self, lo);
        kept(&raised, raised.le(hi.clone())).where_(&raised, hi)
    }

    /// Where `self` and `other` are equal within `atol + rtol * |other|`
    /// (NumPy's `isclose`: infinities are close only to themselves, NaN to
    /// nothing); computed in the operands' float type.
    pub fn isclose(&self, other: impl Into<Operand>, rtol: f64, atol: f64) -> Array {
        match other.into() {
            Operand::Array(b) => {
                // As NumPy: the other side in a float type (`abs(MIN_INT)` wraps).
                let float = result_type(&[
                    OperandType::Strong(b.dtype()),
                    OperandType::Weak(Scalar::Float(1.0)),
                ]);
                let y = b.astype(float);
                let within = (self - &y).abs().le(y.abs() * rtol + atol);
                within.logical_and(y.isfinite()).logical_or(self.eq(&y))
            }
            // A Python number stays weak (NumPy 2): the comparison runs in `self`'s type.
            Operand::Scalar(s) => {
                let y = s.to_wide().as_f64();
                if !y.is_finite() {
                    return self.eq(y);
                }
                (self - y)
                    .abs()
                    .le(y.abs() * rtol + atol)
                    .logical_or(self.eq(y))
            }
        }
    }

    /// NaN replaced by 0, +∞ by the largest finite value of the dtype, -∞ by
    /// the smallest (NumPy's `nan_to_num`); other dtypes unchanged.
    pub fn nan_to_num(&self) -> Array {
        let dtype = self.dtype();
        let Some(max) = dtype.max_finite() else {
            return self.clone();
        };
        self.isnan().where_(
            0.0,
            self.eq(f64::INFINITY)
                .where_(max, self.eq(f64::NEG_INFINITY).where_(-max, self)),
        )
    }

    /// The built-in reduction `op` of all elements (a 0-d array):
    /// `a.apply_reduce(ReduceOp::Sum)` is `a.sum()`. What the C API and
    /// the Python package call, by [`ReduceOp::from_name`].
    pub fn apply_reduce(&self, op: ReduceOp) -> Array {
        self.reduce_builtin(Reduction::Builtin(op), None::<i64>)
    }

    /// The built-in reduction `op` along one axis (negative counts from
    /// the end); the axis is removed. `a.apply_reduce_axis(ReduceOp::Sum,
    /// 0)` is `a.sum_axis(0)`.
    pub fn apply_reduce_axis(&self, op: ReduceOp, axis: impl AxisIndex) -> Array {
        self.reduce_builtin(Reduction::Builtin(op), Some(axis))
    }

    /// Sum of all elements (a 0-d array). Small integers and bool sum in
    /// i64/u64 as NumPy; floats sum pairwise; f16/bf16 accumulate in f32.
    pub fn sum(&self) -> Array {
        self.apply_reduce(ReduceOp::Sum)
    }

    /// Product of all elements (a 0-d array); promotes like [`Array::sum`].
    pub fn prod(&self) -> Array {
        self.apply_reduce(ReduceOp::Prod)
    }

    /// Smallest element (a 0-d array); NaN if any is NaN; an error when empty.
    pub fn min(&self) -> Array {
        self.apply_reduce(ReduceOp::Min)
    }

    /// Largest element (a 0-d array); NaN if any is NaN; an error when empty.
    pub fn max(&self) -> Array {
        self.apply_reduce(ReduceOp::Max)
    }

    /// Mean of all elements (a 0-d array): f64 for integers, the float type otherwise.
    pub fn mean(&self) -> Array {
        self.reduce_builtin(Reduction::Mean, None::<i64>)
    }

    /// Sum along one axis (negative counts from the end); the axis is removed.
    pub fn sum_axis(&self, axis: impl AxisIndex) -> Array {
        self.apply_reduce_axis(ReduceOp::Sum, axis)
    }

    /// Product along one axis.
    pub fn prod_axis(&self, axis: impl AxisIndex) -> Array {
        self.apply_reduce_axis(ReduceOp::Prod, axis)
    }

    /// Minimum along one axis (an error when that axis is empty).
    pub fn min_axis(&self, axis: impl AxisIndex) -> Array {
        self.apply_reduce_axis(ReduceOp::Min, axis)
    }

    /// Maximum along one axis (an error when that axis is empty).
    pub fn max_axis(&self, axis: impl AxisIndex) -> Array {
        self.apply_reduce_axis(ReduceOp::Max, axis)
    }

    /// Mean along one axis.
    pub fn mean_axis(&self, axis: impl AxisIndex) -> Array {
        self.reduce_builtin(Reduction::Mean, Some(axis))
    }
}
