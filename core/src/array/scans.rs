//! Running sums, products and extremes along an axis (`cumsum`, `cumprod`,
//! `cummax`, `cummin`): a scan node over the input cast to the accumulator
//! dtype (integers and bool in i64/u64, f16/bf16 in f32), cast back to
//! NumPy's result dtype.

use smallvec::smallvec;

use super::build::{cast_node, new_node};
use super::Array;
use crate::node::Op;
use crate::ops::{ReduceClass, ReduceOp};
use crate::shape::{normalize_axis, AxisIndex};
use crate::typing::{plan_reduce, ReducePlan, Reduction};

impl Array {
    /// Running sums along `axis` (NumPy's `cumsum`; integers and bool give
    /// i64/u64, f16 and bf16 accumulate in f32). Deterministic for any
    /// thread count: see [`crate::reference::scan`] for the order.
    pub fn cumsum(&self, axis: impl AxisIndex) -> Array {
        self.apply_scan(ReduceOp::Sum, axis)
    }

    /// Running products along `axis` (NumPy's `cumprod`), as [`Array::cumsum`].
    pub fn cumprod(&self, axis: impl AxisIndex) -> Array {
        self.apply_scan(ReduceOp::Prod, axis)
    }

    /// Running maxima along `axis` (NumPy's `np.maximum.accumulate`, pandas'
    /// `cummax`): the dtype is kept, and a NaN, once met, stays.
    pub fn cummax(&self, axis: impl AxisIndex) -> Array {
        self.apply_scan(ReduceOp::Max, axis)
    }

    /// Running minima along `axis` (NumPy's `np.minimum.accumulate`), as
    /// [`Array::cummax`].
    pub fn cummin(&self, axis: impl AxisIndex) -> Array {
        self.apply_scan(ReduceOp::Min, axis)
    }

    /// The scan of the built-in reduction `op` along `axis` (the running
    /// results; NumPy's `np.<combiner>.accumulate`, cast as the methods
    /// say): `a.apply_scan(ReduceOp::Sum, 0)` is `a.cumsum(0)`.
    pub fn apply_scan(&self, op: ReduceOp, axis: impl AxisIndex) -> Array {
        let name = op.scan_name();
        let result = (|| {
            let node = self.valid_node()?;
            let axis = axis.to_axis().unwrap_or(i64::MAX);
            let axis = normalize_axis(name, axis, node.shape().len())?;
            let plan = match op.class() {
                ReduceClass::Arith => plan_reduce(Reduction::Builtin(op), node.dtype()),
                // Scans run in the accumulator dtypes (i64, u64, f32, f64):
                // the extremes there, exact, and back to the dtype.
                ReduceClass::Extreme => ReducePlan {
                    acc: plan_reduce(Reduction::Builtin(ReduceOp::Sum), node.dtype()).acc,
                    out: node.dtype(),
                },
            };
            let input = cast_node(&node, plan.acc);
            let scanned = new_node(
                name,
                Op::Scan { combine: op, axis },
                plan.acc,
                node.shape().into(),
                smallvec![input],
            )?;
            Ok(cast_node(&scanned, plan.out))
        })();
        Array::built(self.session(), result)
    }
}
