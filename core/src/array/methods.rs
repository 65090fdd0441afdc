//! The public element-wise, selection and reduction methods of `Array`.

use super::{Array, Operand};
use crate::ops::ReduceOp;
use crate::shape::AxisIndex;
use crate::typing::Reduction;

impl Array {
    elementwise_methods!(Operand);

    /// `where(self, x, y)`: `x` where `self` is true, else `y` (NumPy's
    /// `where`; `self` is read as bool). Also callable as `Array::where_(&cond, x, y)`.
    pub fn where_(&self, x: impl Into<Operand>, y: impl Into<Operand>) -> Array {
        Array::select(
            self.session(),
            &Operand::Array(self.clone()),
            &x.into(),
            &y.into(),
        )
    }

    /// Sum of all elements (a 0-d array). Small integers and bool sum in
    /// i64/u64 as NumPy; floats sum pairwise; f16/bf16 accumulate in f32.
    pub fn sum(&self) -> Array {
        self.reduce_builtin(Reduction::Builtin(ReduceOp::Sum), None::<i64>)
    }

    /// Product of all elements (a 0-d array); promotes like [`Array::sum`].
    pub fn prod(&self) -> Array {
        self.reduce_builtin(Reduction::Builtin(ReduceOp::Prod), None::<i64>)
    }

    /// Smallest element (a 0-d array); NaN if any is NaN; an error when empty.
    pub fn min(&self) -> Array {
        self.reduce_builtin(Reduction::Builtin(ReduceOp::Min), None::<i64>)
    }

    /// Largest element (a 0-d array); NaN if any is NaN; an error when empty.
    pub fn max(&self) -> Array {
        self.reduce_builtin(Reduction::Builtin(ReduceOp::Max), None::<i64>)
    }

    /// Mean of all elements (a 0-d array): f64 for integers, the float type otherwise.
    pub fn mean(&self) -> Array {
        self.reduce_builtin(Reduction::Mean, None::<i64>)
    }

    /// Sum along one axis (negative counts from the end); the axis is removed.
    pub fn sum_axis(&self, axis: impl AxisIndex) -> Array {
        self.reduce_builtin(Reduction::Builtin(ReduceOp::Sum), Some(axis))
    }

    /// Product along one axis.
    pub fn prod_axis(&self, axis: impl AxisIndex) -> Array {
        self.reduce_builtin(Reduction::Builtin(ReduceOp::Prod), Some(axis))
    }

    /// Minimum along one axis (an error when that axis is empty).
    pub fn min_axis(&self, axis: impl AxisIndex) -> Array {
        self.reduce_builtin(Reduction::Builtin(ReduceOp::Min), Some(axis))
    }

    /// Maximum along one axis (an error when that axis is empty).
    pub fn max_axis(&self, axis: impl AxisIndex) -> Array {
        self.reduce_builtin(Reduction::Builtin(ReduceOp::Max), Some(axis))
    }

    /// Mean along one axis.
    pub fn mean_axis(&self, axis: impl AxisIndex) -> Array {
        self.reduce_builtin(Reduction::Mean, Some(axis))
    }
}
