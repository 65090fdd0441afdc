//! Element-wise kernels of the reference evaluator: one typed loop per
//! operation, over operands that have either `n` elements or one (broadcast).
//! Public so that other executors and constant folding share exactly these
//! semantics.

use crate::element::{Element, HostBuffer};
use crate::error::{Error, Result};
use crate::node::Op;
use crate::ops::{BinaryOp, UnaryOp};
use crate::semantics::{compare, logical, Arithmetic};
use crate::{with_buffer, DType};

/// Runs `$body` with `$v` bound to the typed vector of a numeric buffer;
/// a bool buffer runs `$bool_body` with `$b`.
macro_rules! with_numeric {
    ($buffer:expr, $v:ident => $body:expr, $b:ident => $bool_body:expr) => {
        match $buffer {
            HostBuffer::F16($v) => $body,
            HostBuffer::BF16($v) => $body,
            HostBuffer::F32($v) => $body,
            HostBuffer::F64($v) => $body,
            HostBuffer::I8($v) => $body,
            HostBuffer::I16($v) => $body,
            HostBuffer::I32($v) => $body,
            HostBuffer::I64($v) => $body,
            HostBuffer::U8($v) => $body,
            HostBuffer::U16($v) => $body,
            HostBuffer::U32($v) => $body,
            HostBuffer::U64($v) => $body,
            HostBuffer::Bool($b) => $bool_body,
        }
    };
}

fn mismatch(what: &str) -> Error {
    Error::internal(
        "reference kernel",
        format!("{what} (a normalisation invariant is broken)"),
    )
}

/// `f` over `n` elements of `a` and `b`, each of length `n` or 1.
fn zip_map<A: Copy, B: Copy, O: Clone>(
    a: &[A],
    b: &[B],
    n: usize,
    f: impl Fn(A, B) -> O,
) -> Result<Vec<O>> {
    match (a, b) {
        _ if a.len() == n && b.len() == n => Ok(a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect()),
        ([x], _) if b.len() == n => Ok(b.iter().map(|&y| f(*x, y)).collect()),
        (_, [y]) if a.len() == n => Ok(a.iter().map(|&x| f(x, *y)).collect()),
        ([x], [y]) => Ok(std::iter::repeat_n(f(*x, *y), n).collect()),
        _ => Err(mismatch("operand lengths do not match the output")),
    }
}

fn map<A: Copy, O: Clone>(a: &[A], n: usize, f: impl Fn(A) -> O) -> Result<Vec<O>> {
    match a {
        _ if a.len() == n => Ok(a.iter().map(|&x| f(x)).collect()),
        [x] => {
            let value = f(*x);
            Ok((0..n).map(|_| value.clone()).collect())
        }
        _ => Err(mismatch("operand length does not match the output")),
    }
}

fn same_type<'a, T: Element>(_like: &[T], other: &'a HostBuffer) -> Result<&'a [T]> {
    T::slice_of(other).ok_or_else(|| mismatch("binary operands differ in dtype"))
}

/// `op(x)` over `n` elements.
pub fn unary(op: UnaryOp, x: &HostBuffer, n: usize) -> Result<HostBuffer> {
    if op == UnaryOp::LogicalNot {
        let v = x
            .as_slice::<bool>()
            .ok_or_else(|| mismatch("logical_not of a non-bool"))?;
        return map(v, n, |b| !b).map(HostBuffer::Bool);
    }
    if op.is_predicate() {
        return with_numeric!(x,
            v => map(v, n, |e| Arithmetic::predicate(op, e)).map(HostBuffer::Bool),
            _b => Err(mismatch("a float predicate of bool")));
    }
    with_numeric!(x,
        v => map(v, n, |e| Arithmetic::unary(op, e)).map(Element::into_buffer),
        _b => Err(mismatch("an arithmetic unary op on bool")))
}

/// `op(a, b)` over `n` elements (operands of one dtype).
pub fn binary(op: BinaryOp, a: &HostBuffer, b: &HostBuffer, n: usize) -> Result<HostBuffer> {
    if op.is_comparison() {
        return with_buffer!(a, va => {
            let vb = same_type(va, b)?;
            zip_map(va, vb, n, |x, y| compare(op, x, y)).map(HostBuffer::Bool)
        });
    }
    with_numeric!(a,
    va => {
        let vb = same_type(va, b)?;
        zip_map(va, vb, n, |x, y| Arithmetic::binary(op, x, y)).map(Element::into_buffer)
    },
    ba => {
        let bb = same_type(ba, b)?;
        zip_map(ba, bb, n, |x, y| logical(op, x, y)).map(HostBuffer::Bool)
    })
}

/// `where(cond, x, y)` over `n` elements.
pub fn select(cond: &HostBuffer, x: &HostBuffer, y: &HostBuffer, n: usize) -> Result<HostBuffer> {
    let c = cond
        .as_slice::<bool>()
        .ok_or_else(|| mismatch("where with a non-bool condition"))?;
    let at = |len: usize, i: usize| if len == 1 { 0 } else { i };
    with_buffer!(x, vx => {
        let vy = same_type(vx, y)?;
        if [c.len(), vx.len(), vy.len()].iter().any(|&l| l != n && l != 1) {
            return Err(mismatch("where operand lengths do not match the output"));
        }
        Ok(Element::into_buffer(
            (0..n)
                .map(|i| if c[at(c.len(), i)] { vx[at(vx.len(), i)] } else { vy[at(vy.len(), i)] })
                .collect::<Vec<_>>(),
        ))
    })
}

/// An element-wise operation (`Unary`, `Binary`, `Select`, `Cast`,
/// `Bitcast`) of a node
/// of `dtype` with `n` elements.
pub fn elementwise(op: &Op, dtype: DType, inputs: &[&HostBuffer], n: usize) -> Result<HostBuffer> {
    match (op, inputs) {
        (Op::Unary(u), [x]) => unary(*u, x, n),
        (Op::Binary(b), [x, y]) => binary(*b, x, y, n),
        (Op::Select, [c, x, y]) => select(c, x, y, n),
        (Op::Bitcast, [x]) => {
            let bits = x.bitcast(dtype)?;
            if bits.len() == n {
                Ok(bits)
            } else {
                with_buffer!(&bits, v => map(v, n, |e| e).map(Element::into_buffer))
            }
        }
        (Op::Cast, [x]) => {
            let cast = x.cast(dtype);
            if cast.len() == n {
                Ok(cast)
            } else {
                with_buffer!(&cast, v => map(v, n, |e| e).map(Element::into_buffer))
            }
        }
        _ => Err(Error::internal(
            "reference kernel",
            format!(
                "{} is not element-wise with {} operands",
                op.name(),
                inputs.len()
            ),
        )),
    }
}
