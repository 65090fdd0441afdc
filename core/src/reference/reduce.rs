//! Reductions of the reference evaluator: a pairwise (halving) tree, which is
//! accurate for float sums (error grows with log n, not n) and identical for
//! built-in and user combine functions.

use std::collections::HashMap;
use std::sync::Arc;

use super::kernels;
use super::layout;
use crate::element::HostBuffer;
use crate::error::{Error, Result};
use crate::node::{Combine, Node, Op};
use crate::shape::len;
use crate::with_buffer;
use crate::Element;

/// Reduces `axes` of `input` (of `shape`), giving the kept axes in order.
pub(crate) fn reduce(
    input: &HostBuffer,
    shape: &[usize],
    axes: &[usize],
    combine: &Combine,
) -> Result<HostBuffer> {
    let kept: Vec<usize> = (0..shape.len()).filter(|a| !axes.contains(a)).collect();
    let perm: Vec<usize> = axes.iter().copied().chain(kept.iter().copied()).collect();
    let rows: usize = axes.iter().map(|&a| shape[a]).product();
    let width: usize = kept.iter().map(|&a| shape[a]).product();
    if rows == 0 {
        return identity(combine, input, width);
    }
    // Lay the data out as (reduced, kept): each "row" is one step of the reduction.
    let mut current = if perm.iter().enumerate().all(|(i, &p)| i == p) {
        input.clone()
    } else {
        layout::permute(input, shape, &perm)?
    };
    let mut count = rows;
    while count > 1 {
        let half = count / 2;
        let low = slice(&current, 0, half * width);
        let high = slice(&current, half * width, 2 * half * width);
        let mut next = apply(combine, &low, &high, half * width)?;
        if count % 2 == 1 {
            next = concat(&next, &slice(&current, 2 * half * width, count * width))?;
        }
        current = next;
        count = half + count % 2;
    }
    Ok(current)
}

fn identity(combine: &Combine, input: &HostBuffer, width: usize) -> Result<HostBuffer> {
    let literal = match combine {
        Combine::Custom(c) => c.identity,
        Combine::Builtin(op) => op.numpy_identity(input.dtype()).ok_or_else(|| {
            Error::internal(
                "reference reduce",
                format!("{op} of an empty extent reached the evaluator"),
            )
        })?,
    };
    Ok(HostBuffer::filled(literal, width))
}

fn slice(buffer: &HostBuffer, start: usize, end: usize) -> HostBuffer {
    with_buffer!(buffer, v => Element::into_buffer(v[start..end].to_vec()))
}

fn concat(a: &HostBuffer, b: &HostBuffer) -> Result<HostBuffer> {
    with_buffer!(a, va => {
        let vb = b.as_slice().ok_or_else(|| Error::internal("reference reduce", "concat of different dtypes"))?;
        let mut out = va.clone();
        out.extend_from_slice(vb);
        Ok(Element::into_buffer(out))
    })
}

/// `combine(a, b)` element-wise over `n` elements.
fn apply(combine: &Combine, a: &HostBuffer, b: &HostBuffer, n: usize) -> Result<HostBuffer> {
    match combine {
        Combine::Builtin(op) => kernels::binary(op.combiner(), a, b, n),
        Combine::Custom(custom) => evaluate_body(&custom.body, &[a, b], n),
    }
}

/// Evaluates a traced 0-d element-wise body over `n`-element parameters.
/// Iterative post-order walk, so deep bodies do not recurse.
pub fn evaluate_body(body: &Arc<Node>, params: &[&HostBuffer], n: usize) -> Result<HostBuffer> {
    let mut values: HashMap<usize, HostBuffer> = HashMap::new();
    let mut stack: Vec<(&Arc<Node>, bool)> = vec![(body, false)];
    while let Some((node, expanded)) = stack.pop() {
        let key = Arc::as_ptr(node) as usize;
        if values.contains_key(&key) {
            continue;
        }
        if !expanded && !node.inputs().is_empty() {
            stack.push((node, true));
            stack.extend(node.inputs().iter().map(|i| (i, false)));
            continue;
        }
        let value = match node.op() {
            Op::Param(i) => params
                .get(*i)
                .map(|p| (*p).clone())
                .ok_or_else(|| Error::internal("reduce body", "parameter out of range"))?,
            Op::Fill(literal) => HostBuffer::filled(*literal, 1),
            op if op.is_elementwise() => {
                let inputs: Vec<&HostBuffer> = node
                    .inputs()
                    .iter()
                    .map(|i| values.get(&(Arc::as_ptr(i) as usize)))
                    .collect::<Option<_>>()
                    .ok_or_else(|| {
                        Error::internal("reduce body", "operand evaluated out of order")
                    })?;
                kernels::elementwise(op, node.dtype(), &inputs, n)?
            }
            other => {
                return Err(Error::internal(
                    "reduce body",
                    format!("{} in a reduction body", other.name()),
                ))
            }
        };
        values.insert(key, value);
    }
    let result = values
        .remove(&(Arc::as_ptr(body) as usize))
        .ok_or_else(|| Error::internal("reduce body", "the body produced no value"))?;
    if result.len() == n {
        Ok(result)
    } else {
        // A body that ignores its parameters is a constant: broadcast it.
        result
            .get_wide(0)
            .map(|w| HostBuffer::filled(crate::Literal::cast_from(w, result.dtype()), n))
            .ok_or_else(|| Error::internal("reduce body", "empty body result"))
    }
}

/// Element count of a shape (re-exported for the evaluator).
pub(crate) fn count(shape: &[usize]) -> usize {
    len(shape)
}
