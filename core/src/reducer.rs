//! User reductions (Numba's `cuda.reduce`): an associative, commutative
//! binary function over `Expr`s and its identity.

use std::fmt;
use std::sync::Arc;

use smallvec::SmallVec;

use crate::array::build::{cast_node, reduce_node};
use crate::array::Array;
use crate::error::{Error, Result};
use crate::node::{Axes, Combine, CustomCombine, Node, Op};
use crate::scalar::Scalar;
use crate::shape::{AxisIndex, Shape};
use crate::trace::{record, Expr, Trace};

/// A user reduction: `combine(a, b)` must be associative and commutative
/// (executors reduce in any order), and `identity` its neutral element.
///
/// The reduction runs in the array's dtype (f16/bf16 in f32, like sums), so
/// the identity must be a value of it: a fractional identity cannot reduce
/// an integer array, nor a negative one an unsigned array.
///
/// ```
/// # use lazyfuse_core::{Expr, Reducer};
/// let sum = Reducer::new("sum", |a: Expr, b: Expr| a + b, 0.0);
/// assert_eq!(sum.name(), "sum");
/// ```
#[derive(Clone)]
pub struct Reducer {
    inner: Arc<ReducerInner>,
}

struct ReducerInner {
    name: String,
    trace: Result<Trace>,
    identity: Scalar,
}

impl fmt::Debug for Reducer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reducer")
            .field("name", &self.inner.name)
            .field("identity", &self.inner.identity)
            .finish()
    }
}

impl Reducer {
    /// Traces `combine` once on two symbolic operands.
    pub fn new(
        name: &str,
        combine: impl FnOnce(Expr, Expr) -> Expr,
        identity: impl Into<Scalar>,
    ) -> Reducer {
        let context = format!("reducer '{name}'");
        Reducer {
            inner: Arc::new(ReducerInner {
                name: name.to_string(),
                trace: record(&context, |[a, b]: [Expr; 2]| combine(a, b)),
                identity: identity.into(),
            }),
        }
    }

    /// A reducer whose combine function is an expression string of two
    /// arguments named `args` (the language of [`crate::Ufunc::parse`]),
    /// as language bindings build them: `Reducer::parse("sum", "a + b",
    /// ["a", "b"], 0)`. Errors name the column.
    pub fn parse(
        name: &str,
        expr: &str,
        args: [&str; 2],
        identity: impl Into<Scalar>,
    ) -> Result<Reducer> {
        let context = format!("reducer '{name}'");
        let mut failure = None;
        let trace = crate::trace::record_dyn(&context, 2, |params| {
            match crate::parse::parse(expr, &args, params) {
                Ok(e) => e,
                Err(e) => {
                    failure = Some(e);
                    params[0]
                }
            }
        });
        if let Some(e) = failure {
            return Err(e.within(&context));
        }
        Ok(Reducer {
            inner: Arc::new(ReducerInner {
                name: name.to_string(),
                trace: Ok(trace?),
                identity: identity.into(),
            }),
        })
    }

    /// The name given at creation.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The identity given at creation.
    pub fn identity(&self) -> Scalar {
        self.inner.identity
    }

    /// Reduces all elements to a 0-d array (lazy); element-wise work that
    /// produces `array` fuses into the reduction's read.
    pub fn reduce(&self, array: &Array) -> Array {
        let axes = array.reduction_axes(&self.inner.name, None::<i64>);
        Array::built(array.session(), self.build(array, axes))
    }

    /// Reduces along one axis (negative counts from the end).
    pub fn reduce_axis(&self, array: &Array, axis: impl AxisIndex) -> Array {
        let axes = array.reduction_axes(&self.inner.name, Some(axis));
        Array::built(array.session(), self.build(array, axes))
    }

    /// Reduces over several axes at once (negative counts from the end;
    /// distinct), in one reduction: the kept axes in order, as NumPy's
    /// `axis=(0, 2)`. Errors for an axis out of range or given twice.
    pub fn reduce_axes(&self, array: &Array, axes: &[isize]) -> Array {
        let axes = array.several_axes(&self.inner.name, axes);
        Array::built(array.session(), self.build(array, axes))
    }

    fn context(&self) -> String {
        format!("reducer '{}'", self.inner.name)
    }

    fn build(&self, array: &Array, axes: Result<Axes>) -> Result<Arc<Node>> {
        let node = array.valid_node()?;
        let context = self.context();
        let trace = self.inner.trace.as_ref().map_err(Clone::clone)?;
        let dtype = node.dtype();
        let acc = dtype.accumulator();
        let identity = self.inner.identity.to_literal(&context, acc).map_err(|_| {
            Error::DTypeMismatch {
                op: context.clone(),
                message: format!(
                    "cannot reduce a {dtype} array of shape {}: the identity {} is not a {acc} value \
                     (expected an identity exactly representable in {acc})",
                    crate::shape::format_shape(node.shape()),
                    self.inner.identity
                ),
            }
        })?;
        let session = array.session();
        let params: Vec<Array> = (0..2)
            .map(|i| session.wrap(Node::new(Op::Param(i), acc, Shape::new(), SmallVec::new())))
            .collect();
        let body = trace.replay(session, &params);
        body.check()
            .map_err(|e| e.within(&format!("{context} on {dtype}")))?;
        if body.dtype() != acc {
            return Err(Error::DTypeMismatch {
                op: context,
                message: format!(
                    "the combine function gives {} for two {acc} operands \
                     (expected {acc}, so partial results can be combined again)",
                    body.dtype()
                ),
            });
        }
        let combine = Combine::Custom(Arc::new(CustomCombine {
            name: self.inner.name.clone(),
            body: body.node(),
            identity,
        }));
        let reduced = reduce_node(combine, &cast_node(&node, acc), axes?)?;
        Ok(cast_node(&reduced, dtype))
    }
}
