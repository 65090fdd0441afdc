//! Running sums and products along an axis (`cumsum`, `cumprod`): a scan
//! node over the input cast to the accumulator dtype (integers and bool in
//! i64/u64, f16/bf16 in f32), cast back to NumPy's result dtype.

use smallvec::smallvec;

use super::build::{cast_node, new_node};
use super::Array;
use crate::node::Op;
use crate::ops::ReduceOp;
use crate::shape::{normalize_axis, AxisIndex};
use crate::typing::{plan_reduce, Reduction};

impl Array {
    /// Running sums along `axis` (NumPy's `cumsum`; integers and bool give
    /// i64/u64, f16 and bf16 accumulate in f32). Deterministic for any
    /// thread count: see [`crate::reference::scan`] for the order.
    pub fn cumsum(&self, axis: impl AxisIndex) -> Array {
        self.scan(ReduceOp::Sum, axis)
    }

    /// Running products along `axis` (NumPy's `cumprod`), as [`Array::cumsum`].
    pub fn cumprod(&self, axis: impl AxisIndex) -> Array {
        self.scan(ReduceOp::Prod, axis)
    }

    fn scan(&self, op: ReduceOp, axis: impl AxisIndex) -> Array {
        let name = if op == ReduceOp::Sum {
            "cumsum"
        } else {
            "cumprod"
        };
        let result = (|| {
            let node = self.valid_node()?;
            let axis = axis.to_axis().unwrap_or(i64::MAX);
            let axis = normalize_axis(name, axis, node.shape().len())?;
            let plan = plan_reduce(Reduction::Builtin(op), node.dtype());
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
