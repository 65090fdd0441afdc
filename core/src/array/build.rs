//! Building nodes: promotion, casts, broadcasting and shape checks. Every
//! builder returns an array; failures become invalid arrays.

use std::sync::Arc;

use smallvec::{smallvec, SmallVec};

use super::{Array, Operand};
use crate::error::{Error, Result};
use crate::node::{Axes, Combine, Node, Op};
use crate::ops::{BinaryOp, ReduceOp, UnaryOp};
use crate::scalar::{Literal, Scalar};
use crate::session::{check_size, Session};
use crate::shape::{
    broadcast_shapes, broadcasts_to, checked_len, format_shape, normalize_axis, Shape,
};
use crate::typing::{self, OperandType, Reduction, UnaryPlan};
use crate::{AxisIndex, DType};

/// `node` cast to `dtype` (the node itself if it already has it; constants fold).
pub(crate) fn cast_node(node: &Arc<Node>, dtype: DType) -> Arc<Node> {
    if node.dtype() == dtype {
        return Arc::clone(node);
    }
    if let Op::Fill(literal) = node.op() {
        let folded = Literal::cast_from(literal.to_wide(), dtype);
        return Node::new(Op::Fill(folded), dtype, node.shape.clone(), SmallVec::new());
    }
    Node::new(
        Op::Cast,
        dtype,
        node.shape.clone(),
        smallvec![Arc::clone(node)],
    )
}

pub(crate) fn new_node(
    op_name: &str,
    op: Op,
    dtype: DType,
    shape: Shape,
    inputs: SmallVec<[Arc<Node>; 2]>,
) -> Result<Arc<Node>> {
    check_size(op_name, &shape, dtype)?;
    Ok(Node::new(op, dtype, shape, inputs))
}

impl Array {
    /// The node, or its error if the array is invalid.
    pub(crate) fn valid_node(&self) -> Result<Arc<Node>> {
        self.with_node(|node| match node.error() {
            Some(e) => Err((**e).clone()),
            None => Ok(Arc::clone(node)),
        })
    }

    /// Wraps a build result: a node of this session, or an invalid array.
    pub(crate) fn built(session: &Session, result: Result<Arc<Node>>) -> Array {
        match result {
            Ok(node) => session.wrap(node),
            Err(e) => session.wrap(Node::invalid(e)),
        }
    }

    /// Applies a unary operation by value (what the named methods call).
    pub fn apply_unary(&self, op: UnaryOp) -> Array {
        let result = self.valid_node().and_then(|ref node| {
            match typing::plan_unary(op, node.dtype()).map_err(|e| e.within_shape(node.shape()))? {
                UnaryPlan::Identity => Ok(Arc::clone(node)),
                UnaryPlan::Apply { operand, op, out } => new_node(
                    op.name(),
                    Op::Unary(op),
                    out,
                    node.shape.clone(),
                    smallvec![cast_node(node, operand)],
                ),
            }
        });
        Array::built(&self.session, result)
    }

    /// Applies `self op rhs` by value (what the named methods and operators call).
    pub fn apply_binary(&self, op: BinaryOp, rhs: Operand) -> Array {
        Array::binary(&self.session, op, Arg::Array(self), (&rhs).into())
    }

    /// Applies `lhs op self` (a scalar or array on the left).
    pub fn apply_binary_reversed(&self, op: BinaryOp, lhs: Operand) -> Array {
        Array::binary(&self.session, op, (&lhs).into(), Arg::Array(self))
    }

    /// `lhs op rhs` where at least one operand is an array of `session`.
    pub(crate) fn binary(session: &Session, op: BinaryOp, lhs: Arg<'_>, rhs: Arg<'_>) -> Array {
        let result = (|| {
            let name = op.name();
            let nodes = [resolve(session, name, lhs)?, resolve(session, name, rhs)?];
            let plan = typing::plan_binary(op, lhs.operand_type(), rhs.operand_type())
                .map_err(|e| e.within_shape(lhs.shape()))?;
            let shape = broadcast_shapes(name, &[lhs.shape(), rhs.shape()])?;
            let inputs = smallvec![
                operand_node(session, name, lhs, &nodes[0], plan.operand)?,
                operand_node(session, name, rhs, &nodes[1], plan.operand)?
            ];
            new_node(name, Op::Binary(plan.op), plan.out, shape, inputs)
        })();
        Array::built(session, result)
    }

    /// `where(cond, x, y)` where at least one operand is an array of `session`.
    pub(crate) fn select(session: &Session, cond: Arg<'_>, x: Arg<'_>, y: Arg<'_>) -> Array {
        let result = (|| {
            let nodes = [
                resolve(session, "where", cond)?,
                resolve(session, "where", x)?,
                resolve(session, "where", y)?,
            ];
            let dtype = typing::plan_where(x.operand_type(), y.operand_type());
            let shape = broadcast_shapes("where", &[cond.shape(), x.shape(), y.shape()])?;
            let inputs = smallvec![
                operand_node(session, "where", cond, &nodes[0], DType::Bool)?,
                operand_node(session, "where", x, &nodes[1], dtype)?,
                operand_node(session, "where", y, &nodes[2], dtype)?
            ];
            new_node("where", Op::Select, dtype, shape, inputs)
        })();
        Array::built(session, result)
    }

    /// The array converted element-wise to `dtype` (casting rules in
    /// [`crate::element`]); the same array if it already has it.
    pub fn astype(&self, dtype: DType) -> Array {
        let result = self.valid_node().map(|n| cast_node(&n, dtype));
        Array::built(&self.session, result)
    }

    /// Each element's bits read as `dtype`, of the same size (NumPy's
    /// `a.view(dtype)` with the element size unchanged); an error for a
    /// dtype of another size. Element-wise: it fuses like a cast.
    pub fn view(&self, dtype: DType) -> Array {
        let result = self.valid_node().and_then(|node| {
            if node.dtype() == dtype {
                return Ok(node);
            }
            if node.dtype().size() != dtype.size()
                || node.dtype() == DType::Bool
                || dtype == DType::Bool
            {
                return Err(Error::dtype(
                    "view",
                    format!(
                        "cannot view {} elements as {dtype} (expected a numeric dtype of the \
                         same size, {} bytes)",
                        node.dtype(),
                        node.dtype().size()
                    ),
                ));
            }
            Ok(Node::new(
                Op::Bitcast,
                dtype,
                node.shape.clone(),
                smallvec![node],
            ))
        });
        Array::built(&self.session, result)
    }

    /// The same elements in row-major order with another shape (a view: no data moves).
    pub fn reshape(&self, shape: &[usize]) -> Array {
        let result = self.valid_node().and_then(|ref node| {
            if checked_len(shape) != Some(self.len()) {
                return Err(Error::ShapeMismatch {
                    op: "reshape".into(),
                    message: format!(
                        "cannot reshape an array of shape {} ({} elements) into shape {} \
                         (expected the same number of elements)",
                        format_shape(self.shape()),
                        self.len(),
                        format_shape(shape)
                    ),
                });
            }
            if node.shape() == shape {
                return Ok(Arc::clone(node));
            }
            // A reshape of a reshape reads the original directly.
            let source = match node.op() {
                Op::Reshape => &node.inputs()[0],
                _ => node,
            };
            new_node(
                "reshape",
                Op::Reshape,
                node.dtype(),
                Shape::from_slice(shape),
                smallvec![Arc::clone(source)],
            )
        });
        Array::built(&self.session, result)
    }

    /// Axes permuted: output axis `i` is input axis `axes[i]` (a view).
    pub fn permute(&self, axes: &[usize]) -> Array {
        let result = self.valid_node().and_then(|ref node| {
            let ndim = node.shape().len();
            let mut seen = vec![false; ndim];
            let valid = axes.len() == ndim
                && axes
                    .iter()
                    .all(|&a| a < ndim && !std::mem::replace(&mut seen[a], true));
            if !valid {
                return Err(Error::InvalidArgument {
                    op: "permute".into(),
                    message: format!(
                        "axes {axes:?} are not a permutation of the {ndim} axes of shape {} \
                         (expected each of 0..{ndim} once)",
                        format_shape(node.shape())
                    ),
                });
            }
            if axes.iter().enumerate().all(|(i, &a)| i == a) {
                return Ok(Arc::clone(node));
            }
            let shape: Shape = axes.iter().map(|&a| node.shape()[a]).collect();
            new_node(
                "permute",
                Op::Permute(Axes::from_slice(axes)),
                node.dtype(),
                shape,
                smallvec![Arc::clone(node)],
            )
        });
        Array::built(&self.session, result)
    }

    /// Axes reversed (NumPy's `.T`; a view).
    pub fn transpose(&self) -> Array {
        let axes: Vec<usize> = (0..self.ndim()).rev().collect();
        self.permute(&axes)
    }

    /// The array broadcast to `shape` (a view; NumPy's `broadcast_to`).
    pub fn broadcast_to(&self, shape: &[usize]) -> Array {
        let result = self.valid_node().and_then(|ref node| {
            if !broadcasts_to(node.shape(), shape) {
                return Err(Error::ShapeMismatch {
                    op: "broadcast_to".into(),
                    message: format!(
                        "cannot broadcast an array of shape {} to shape {} \
                         (expected each dimension equal or 1, right-aligned)",
                        format_shape(node.shape()),
                        format_shape(shape)
                    ),
                });
            }
            if node.shape() == shape {
                return Ok(Arc::clone(node));
            }
            new_node(
                "broadcast_to",
                Op::BroadcastTo,
                node.dtype(),
                Shape::from_slice(shape),
                smallvec![Arc::clone(node)],
            )
        });
        Array::built(&self.session, result)
    }

    /// NumPy's `a[..., start:stop:step, ...]` along one axis (a view: no data
    /// moves). `None` bounds mean the ends; negative bounds count from the
    /// end; bounds are clamped as in Python; `step` may be negative, not 0.
    pub fn slice_axis(
        &self,
        axis: impl AxisIndex,
        start: Option<isize>,
        stop: Option<isize>,
        step: isize,
    ) -> Array {
        let result = self.valid_node().and_then(|ref node| {
            let ndim = node.shape().len();
            let axis = axis
                .to_axis()
                .ok_or_else(|| {
                    Error::invalid(
                        "slice",
                        format!("axis is out of range for {ndim} dimensions"),
                    )
                })
                .and_then(|a| normalize_axis("slice", a, ndim))?;
            if step == 0 {
                return Err(Error::invalid(
                    "slice",
                    "slice step cannot be zero (expected a non-zero step)",
                ));
            }
            let n = node.shape()[axis] as isize;
            let (first, count) = slice_indices(n, start, stop, step);
            if first == 0 && step == 1 && count == n {
                return Ok(Arc::clone(node));
            }
            let mut shape = node.shape.clone();
            shape[axis] = count as usize;
            new_node(
                "slice",
                Op::Slice {
                    axis,
                    start: if count == 0 { 0 } else { first as usize },
                    step,
                },
                node.dtype(),
                shape,
                smallvec![Arc::clone(node)],
            )
        });
        Array::built(&self.session, result)
    }

    /// The axes `axes` names (negative count from the end), sorted; an
    /// error names `name`, a repeated axis or one out of range.
    pub(crate) fn several_axes(&self, name: &str, axes: &[isize]) -> Result<Axes> {
        let ndim = self.ndim();
        let mut resolved: Axes = axes
            .iter()
            .map(|&a| normalize_axis(name, a as i64, ndim))
            .collect::<Result<_>>()?;
        resolved.sort_unstable();
        if resolved.windows(2).any(|w| w[0] == w[1]) {
            return Err(Error::invalid(
                name,
                format!("duplicate value in axes {axes:?} (expected distinct axes)"),
            ));
        }
        Ok(resolved)
    }

    /// The axes a reduction covers: all of them, or one given axis.
    pub(crate) fn reduction_axes(&self, name: &str, axis: Option<impl AxisIndex>) -> Result<Axes> {
        let ndim = self.ndim();
        match axis {
            None => Ok((0..ndim).collect()),
            Some(axis) => {
                let value = axis.to_axis().ok_or_else(|| {
                    Error::invalid(name, format!("axis is out of range for {ndim} dimensions"))
                })?;
                Ok(smallvec![normalize_axis(name, value, ndim)?])
            }
        }
    }

    pub(crate) fn reduce_builtin(
        &self,
        reduction: Reduction,
        axis: Option<impl AxisIndex>,
    ) -> Array {
        self.reduce_over(reduction, self.reduction_axes(reduction.name(), axis))
    }

    /// The reduction over `axes` (sorted, distinct), or the error that
    /// choosing them gave.
    pub(crate) fn reduce_over(&self, reduction: Reduction, axes: Result<Axes>) -> Array {
        let result = (|| {
            let node = self.valid_node()?;
            let name = reduction.name();
            let axes = axes?;
            let plan = typing::plan_reduce(reduction, node.dtype());
            let count = reduced_count(node.shape(), &axes);
            let op = match reduction {
                Reduction::Builtin(op) => op,
                Reduction::Mean => ReduceOp::Sum,
            };
            if count == 0 && op.numpy_identity(plan.acc).is_none() {
                return Err(Error::InvalidArgument {
                    op: name.into(),
                    message: format!(
                        "zero-size array to reduction operation {name} which has no identity \
                         (shape {}, axes {:?}; expected a non-empty extent)",
                        format_shape(node.shape()),
                        axes.as_slice()
                    ),
                });
            }
            let input = cast_node(&node, plan.acc);
            let mut result = reduce_node(Combine::Builtin(op), &input, axes)?;
            if reduction == Reduction::Mean {
                let divisor = Literal::cast_from(crate::Wide::Int(count as i128), plan.acc);
                let divisor = Node::new(Op::Fill(divisor), plan.acc, Shape::new(), SmallVec::new());
                let shape = result.shape.clone();
                result = Node::new(
                    Op::Binary(BinaryOp::Div),
                    plan.acc,
                    shape,
                    smallvec![result, divisor],
                );
            }
            Ok(cast_node(&result, plan.out))
        })();
        Array::built(&self.session, result)
    }
}

/// Python's `slice.indices`: the first index and the count of a slice of
/// an axis of `n` elements.
fn slice_indices(
    n: isize,
    start: Option<isize>,
    stop: Option<isize>,
    step: isize,
) -> (isize, isize) {
    let clamp = |v: isize, low: isize, high: isize| v.max(low).min(high);
    let resolve = |v: isize| if v < 0 { v + n } else { v };
    if step > 0 {
        let first = start.map_or(0, |v| clamp(resolve(v), 0, n));
        let end = stop.map_or(n, |v| clamp(resolve(v), 0, n));
        // Counted without `+ step`, which overflows for steps near the
        // largest isize (a C caller's "one element").
        let count = if end > first {
            (end - first - 1) / step + 1
        } else {
            0
        };
        (first, count)
    } else {
        let first = start.map_or(n - 1, |v| clamp(resolve(v), -1, n - 1));
        let end = stop.map_or(-1, |v| clamp(resolve(v), -1, n - 1));
        let count = if first > end {
            ((first - end - 1) as usize / step.unsigned_abs()) as isize + 1
        } else {
            0
        };
        (first, count)
    }
}

/// Product of the extents of `axes`.
pub(crate) fn reduced_count(shape: &[usize], axes: &[usize]) -> usize {
    axes.iter().map(|&a| shape[a]).product()
}

/// A reduction node over `axes` of `input` (already in the accumulator dtype).
pub(crate) fn reduce_node(combine: Combine, input: &Arc<Node>, axes: Axes) -> Result<Arc<Node>> {
    let shape: Shape = input
        .shape()
        .iter()
        .enumerate()
        .filter(|(i, _)| !axes.contains(i))
        .map(|(_, &d)| d)
        .collect();
    let name = match &combine {
        // A built-in reduction of one element per output is that element
        // (Dask's tree reductions sum size-1 axes of their partials): a
        // view, not a kernel of its own.
        Combine::Builtin(_) if reduced_count(input.shape(), &axes) == 1 => {
            if input.shape() == &shape[..] {
                return Ok(Arc::clone(input));
            }
            let source = match input.op() {
                Op::Reshape => &input.inputs()[0],
                _ => input,
            };
            return new_node(
                "reshape",
                Op::Reshape,
                input.dtype(),
                shape,
                smallvec![Arc::clone(source)],
            );
        }
        Combine::Builtin(op) => op.name().to_string(),
        Combine::Custom(c) => c.name.clone(),
    };
    new_node(
        &name,
        Op::Reduce { combine, axes },
        input.dtype(),
        shape,
        smallvec![Arc::clone(input)],
    )
}

/// An operand as the builders read it: a borrowed array (no handle is
/// cloned) or a scalar.
#[derive(Clone, Copy)]
pub(crate) enum Arg<'a> {
    Array(&'a Array),
    Scalar(Scalar),
}

impl<'a> From<&'a Operand> for Arg<'a> {
    fn from(operand: &'a Operand) -> Arg<'a> {
        match operand {
            Operand::Array(a) => Arg::Array(a),
            Operand::Scalar(s) => Arg::Scalar(*s),
        }
    }
}

impl Arg<'_> {
    fn operand_type(self) -> OperandType {
        match self {
            Arg::Array(a) => OperandType::Strong(a.dtype()),
            Arg::Scalar(s) => OperandType::Weak(s),
        }
    }

    fn shape(&self) -> &[usize] {
        match self {
            Arg::Array(a) => a.shape(),
            Arg::Scalar(_) => &[],
        }
    }
}

/// The node of an array operand (checked valid and of `session`), once.
fn resolve(session: &Session, op: &str, arg: Arg<'_>) -> Result<Option<Arc<Node>>> {
    let Arg::Array(a) = arg else {
        return Ok(None);
    };
    let node = a.valid_node()?;
    if !a.session().same_as(session) {
        return Err(Error::invalid(
            op,
            "the operands belong to different contexts (expected arrays of one context)",
        ));
    }
    Ok(Some(node))
}

fn operand_node(
    session: &Session,
    op: &str,
    arg: Arg<'_>,
    node: &Option<Arc<Node>>,
    dtype: DType,
) -> Result<Arc<Node>> {
    match (arg, node) {
        (_, Some(node)) => Ok(cast_node(node, dtype)),
        (Arg::Scalar(s), None) => Ok(session.constant(s.to_literal(op, dtype)?)),
        (Arg::Array(_), None) => Err(Error::internal(op, "an array operand was not resolved")),
    }
}

impl Error {
    /// Adds the operand's shape to a type error's message.
    fn within_shape(self, shape: &[usize]) -> Error {
        match self {
            Error::DTypeMismatch { op, message } => Error::DTypeMismatch {
                op,
                message: format!("{message} [operand shape {}]", format_shape(shape)),
            },
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::slice_indices;

    /// Python's `range(*slice(start, stop, step).indices(n))`: first index
    /// and count, extreme bounds and steps included (no overflow).
    #[test]
    fn slices_count_as_pythons() {
        let cases = [
            (5, None, None, 1, (0, 5)),
            (5, Some(1), Some(4), 2, (1, 2)),
            (5, None, None, -1, (4, 5)),
            (5, Some(-2), None, -2, (3, 2)),
            (5, Some(isize::MIN), Some(isize::MAX), isize::MAX, (0, 1)),
            (5, Some(isize::MAX), Some(isize::MIN), isize::MIN, (4, 1)),
            (5, Some(isize::MAX), Some(isize::MIN), -2, (4, 3)),
            (0, None, None, 3, (0, 0)),
            (5, Some(3), Some(1), 1, (3, 0)),
        ];
        for (n, start, stop, step, want) in cases {
            assert_eq!(
                slice_indices(n, start, stop, step),
                want,
                "{start:?}:{stop:?}:{step}"
            );
        }
    }
}
