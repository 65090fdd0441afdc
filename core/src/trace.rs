//! `Expr`: symbolic scalars that user closures are traced on.
//!
//! `Ufunc::new` and `Reducer::new` call the user's closure once with
//! parameter `Expr`s; every operation on them is recorded in a thread-local
//! trace. A trace is dtype-free: it records what the user wrote
//! (`(b * b - 4.0 * a * c).sqrt()`), and each call replays it through the
//! `Array` builders on the actual operands, so promotion, weak scalars and
//! errors are exactly those of the same expression written on arrays.

use std::cell::RefCell;
use std::ops::{Add, Div, Mul, Neg, Rem, Sub};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::array::{Array, Operand};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::{BinaryOp, UnaryOp};
use crate::scalar::Scalar;
use crate::session::Session;
use crate::shape::broadcast_shapes;
use crate::typing::{result_type, OperandType};

/// A symbolic scalar inside a traced closure (a small `Copy` handle into the
/// trace being recorded). It supports the operators and math methods of
/// [`Array`], plus [`Expr::select`] and [`Expr::astype`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expr {
    trace: u32,
    value: u32,
}

/// An operand of an `Expr` operation: another `Expr` or a Rust scalar (weak).
#[derive(Clone, Copy, Debug)]
pub enum ExprOperand {
    /// A traced value.
    Expr(Expr),
    /// A Rust scalar, weak in promotion.
    Scalar(Scalar),
}

impl From<Expr> for ExprOperand {
    fn from(e: Expr) -> ExprOperand {
        ExprOperand::Expr(e)
    }
}

macro_rules! expr_operand_from_scalar {
    ($($t:ty),*) => {$(
        impl From<$t> for ExprOperand {
            fn from(value: $t) -> ExprOperand {
                ExprOperand::Scalar(Scalar::from(value))
            }
        }
    )*};
}
expr_operand_from_scalar!(
    bool,
    i8,
    i16,
    i32,
    i64,
    isize,
    u8,
    u16,
    u32,
    u64,
    usize,
    f32,
    f64,
    half::f16,
    half::bf16
);

/// One recorded operand: a value index or a scalar.
#[derive(Clone, Copy, Debug)]
pub(crate) enum TraceArg {
    Value(u32),
    Scalar(Scalar),
}

/// One recorded operation; value `i` of a trace is the result of `ops[i]`.
#[derive(Clone, Debug)]
pub(crate) enum TraceOp {
    Param(usize),
    Unary(UnaryOp, u32),
    Binary(BinaryOp, TraceArg, TraceArg),
    Select(TraceArg, TraceArg, TraceArg),
    Cast(u32, DType),
    /// A constant of the arguments' broadcast shape (a body that uses none of them).
    Full(Scalar),
    /// `clip(x, lo, hi)`, replayed through [`Array::clip`].
    Clip(TraceArg, TraceArg, TraceArg),
    /// `isclose(a, b, rtol, atol)`, replayed through [`Array::isclose`].
    IsClose(TraceArg, TraceArg, f64, f64),
    /// `nan_to_num(x)`, replayed through [`Array::nan_to_num`].
    NanToNum(u32),
}

/// A recorded closure.
#[derive(Clone, Debug)]
pub(crate) struct Trace {
    pub(crate) params: usize,
    ops: Vec<TraceOp>,
    result: u32,
}

struct Recorder {
    id: u32,
    ops: Vec<TraceOp>,
    error: Option<String>,
}

thread_local! {
    static RECORDERS: RefCell<Vec<Recorder>> = const { RefCell::new(Vec::new()) };
}

static NEXT_TRACE: AtomicU32 = AtomicU32::new(1);

/// An `Expr` that belongs to no trace (used outside its closure).
const STRAY: Expr = Expr { trace: 0, value: 0 };

/// Records `f` called on `N` parameters. `what` names the ufunc or reducer in errors.
pub(crate) fn record<const N: usize>(
    what: &str,
    f: impl FnOnce([Expr; N]) -> Expr,
) -> Result<Trace> {
    record_dyn(what, N, |params| {
        let params: [Expr; N] = std::array::from_fn(|i| params[i]);
        f(params)
    })
}

/// Records `f` called on `n` parameters.
pub(crate) fn record_dyn(what: &str, n: usize, f: impl FnOnce(&[Expr]) -> Expr) -> Result<Trace> {
    let id = NEXT_TRACE.fetch_add(1, Ordering::Relaxed);
    RECORDERS.with(|r| {
        r.borrow_mut().push(Recorder {
            id,
            ops: (0..n).map(TraceOp::Param).collect(),
            error: None,
        })
    });
    // Pops the recorder even if the user's closure panics.
    struct PopOnDrop;
    impl Drop for PopOnDrop {
        fn drop(&mut self) {
            RECORDERS.with(|r| r.borrow_mut().pop());
        }
    }
    let guard = PopOnDrop;
    let params: Vec<Expr> = (0..n)
        .map(|i| Expr {
            trace: id,
            value: i as u32,
        })
        .collect();
    let out = f(&params);
    let recorder = RECORDERS.with(|r| r.borrow_mut().pop());
    std::mem::forget(guard);
    let recorder =
        recorder.ok_or_else(|| Error::internal(what, "the trace recorder disappeared"))?;
    if let Some(message) = recorder.error {
        return Err(Error::invalid(what, message));
    }
    if out.trace != id || out.value as usize >= recorder.ops.len() {
        return Err(Error::invalid(
            what,
            "the closure returned an Expr that was not built from its parameters \
             (expected an expression of the arguments it was given)",
        ));
    }
    Ok(Trace {
        params: n,
        ops: recorder.ops,
        result: out.value,
    })
}

/// Appends an operation to the active trace, checking its operands belong to it.
fn push(op: TraceOp, operands: &[ExprOperand]) -> Expr {
    RECORDERS.with(|r| {
        let mut stack = r.borrow_mut();
        let Some(recorder) = stack.last_mut() else {
            return STRAY;
        };
        let foreign = operands
            .iter()
            .any(|o| matches!(o, ExprOperand::Expr(e) if e.trace != recorder.id));
        if foreign && recorder.error.is_none() {
            recorder.error = Some(
                "an Expr from another closure (or kept from an earlier trace) was used \
                 (expected only the closure's own parameters and values built from them)"
                    .to_string(),
            );
        }
        recorder.ops.push(op);
        Expr {
            trace: recorder.id,
            value: (recorder.ops.len() - 1) as u32,
        }
    })
}

fn arg(operand: ExprOperand) -> TraceArg {
    match operand {
        ExprOperand::Expr(e) => TraceArg::Value(e.value),
        ExprOperand::Scalar(s) => TraceArg::Scalar(s),
    }
}

impl Expr {
    pub(crate) fn apply_unary(&self, op: UnaryOp) -> Expr {
        push(TraceOp::Unary(op, self.value), &[ExprOperand::Expr(*self)])
    }

    pub(crate) fn apply_binary(&self, op: BinaryOp, rhs: ExprOperand) -> Expr {
        let lhs = ExprOperand::Expr(*self);
        push(TraceOp::Binary(op, arg(lhs), arg(rhs)), &[lhs, rhs])
    }

    pub(crate) fn scalar_left(lhs: Scalar, op: BinaryOp, rhs: Expr) -> Expr {
        let rhs = ExprOperand::Expr(rhs);
        push(TraceOp::Binary(op, TraceArg::Scalar(lhs), arg(rhs)), &[rhs])
    }

    elementwise_methods!(ExprOperand);

    /// `a` where `cond` is true, else `b` (NumPy's `where`).
    pub fn select(cond: Expr, a: impl Into<ExprOperand>, b: impl Into<ExprOperand>) -> Expr {
        let (cond, a, b) = (ExprOperand::Expr(cond), a.into(), b.into());
        push(TraceOp::Select(arg(cond), arg(a), arg(b)), &[cond, a, b])
    }

    /// `where(self, a, b)`: the same as [`Expr::select`] with `self` as the condition.
    pub fn where_(&self, a: impl Into<ExprOperand>, b: impl Into<ExprOperand>) -> Expr {
        Expr::select(*self, a, b)
    }

    /// The value converted to `dtype` (casting rules of [`crate::element`]).
    pub fn astype(&self, dtype: DType) -> Expr {
        push(
            TraceOp::Cast(self.value, dtype),
            &[ExprOperand::Expr(*self)],
        )
    }

    /// `self` limited to `[lo, hi]` (NumPy's `clip`; see [`Array::clip`]).
    pub fn clip(&self, lo: impl Into<ExprOperand>, hi: impl Into<ExprOperand>) -> Expr {
        let (x, lo, hi) = (ExprOperand::Expr(*self), lo.into(), hi.into());
        push(TraceOp::Clip(arg(x), arg(lo), arg(hi)), &[x, lo, hi])
    }

    /// Where `self` and `other` are equal within `atol + rtol * |other|`
    /// (NumPy's `isclose`; see [`Array::isclose`]).
    pub fn isclose(&self, other: impl Into<ExprOperand>, rtol: f64, atol: f64) -> Expr {
        let (a, b) = (ExprOperand::Expr(*self), other.into());
        push(TraceOp::IsClose(arg(a), arg(b), rtol, atol), &[a, b])
    }

    /// NaN to 0 and infinities to the dtype's extremes (NumPy's `nan_to_num`).
    pub fn nan_to_num(&self) -> Expr {
        push(TraceOp::NanToNum(self.value), &[ExprOperand::Expr(*self)])
    }

    /// The constant `value` broadcast to the arguments' shape, in the dtype
    /// NumPy gives a weak scalar among them (an expression string such as
    /// `"1.42"`, which uses none of its arguments).
    pub(crate) fn full(value: Scalar) -> Expr {
        push(TraceOp::Full(value), &[])
    }

    /// An `Expr` belonging to no trace (a placeholder after a parse error).
    pub(crate) fn select_stray() -> Expr {
        STRAY
    }

    /// Alias of [`Expr::astype`].
    pub fn cast(&self, dtype: DType) -> Expr {
        self.astype(dtype)
    }
}

macro_rules! expr_operators {
    ($($trait:ident $method:ident $op:ident),*) => {$(
        impl<R: Into<ExprOperand>> $trait<R> for Expr {
            type Output = Expr;
            fn $method(self, rhs: R) -> Expr {
                self.apply_binary(BinaryOp::$op, rhs.into())
            }
        }

        impl $trait<Expr> for f64 {
            type Output = Expr;
            fn $method(self, rhs: Expr) -> Expr {
                Expr::scalar_left(Scalar::from(self), BinaryOp::$op, rhs)
            }
        }

        impl $trait<Expr> for i64 {
            type Output = Expr;
            fn $method(self, rhs: Expr) -> Expr {
                Expr::scalar_left(Scalar::from(self), BinaryOp::$op, rhs)
            }
        }
    )*};
}
expr_operators!(Add add Add, Sub sub Sub, Mul mul Mul, Div div Div, Rem rem Rem);

impl Neg for Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        self.apply_unary(UnaryOp::Neg)
    }
}

impl Trace {
    /// Builds the traced expression on `args` (one per parameter).
    pub(crate) fn replay(&self, session: &Session, args: &[Array]) -> Array {
        let fail =
            |message: &str| Array::built(session, Err(Error::internal("trace replay", message)));
        if args.len() != self.params {
            return fail("argument count differs from the trace's parameters");
        }
        let mut values: Vec<Array> = Vec::with_capacity(self.ops.len());
        for op in &self.ops {
            let operand = |a: &TraceArg| -> Option<Operand> {
                match a {
                    TraceArg::Value(i) => values.get(*i as usize).cloned().map(Operand::Array),
                    TraceArg::Scalar(s) => Some(Operand::Scalar(*s)),
                }
            };
            let value = match op {
                TraceOp::Param(i) => args.get(*i).cloned(),
                TraceOp::Unary(op, x) => values.get(*x as usize).map(|v| v.apply_unary(*op)),
                TraceOp::Binary(op, a, b) => operand(a)
                    .zip(operand(b))
                    .map(|(a, b)| Array::binary(session, *op, (&a).into(), (&b).into())),
                TraceOp::Select(c, a, b) => match (operand(c), operand(a), operand(b)) {
                    (Some(c), Some(a), Some(b)) => Some(Array::select(
                        session,
                        (&c).into(),
                        (&a).into(),
                        (&b).into(),
                    )),
                    _ => None,
                },
                TraceOp::Cast(x, dtype) => values.get(*x as usize).map(|v| v.astype(*dtype)),
                TraceOp::Full(value) => Some(full_like_args(session, args, *value)),
                TraceOp::Clip(x, lo, hi) => match (operand(x), operand(lo), operand(hi)) {
                    (Some(Operand::Array(x)), Some(lo), Some(hi)) => Some(x.clip(lo, hi)),
                    _ => None,
                },
                TraceOp::IsClose(a, b, rtol, atol) => match (operand(a), operand(b)) {
                    (Some(Operand::Array(a)), Some(b)) => Some(a.isclose(b, *rtol, *atol)),
                    _ => None,
                },
                TraceOp::NanToNum(x) => values.get(*x as usize).map(Array::nan_to_num),
            };
            match value {
                Some(v) => values.push(v),
                None => return fail("an operation refers to a value recorded after it"),
            }
        }
        match values.get(self.result as usize) {
            Some(v) => v.clone(),
            None => fail("the result index is out of range"),
        }
    }
}

/// `value` broadcast to the shape of `args`, in their result type with
/// `value` as a weak scalar.
fn full_like_args(session: &Session, args: &[Array], value: Scalar) -> Array {
    let shapes: Vec<&[usize]> = args.iter().map(|a| a.shape()).collect();
    let mut types: Vec<OperandType> = args
        .iter()
        .map(|a| OperandType::Strong(a.dtype()))
        .collect();
    types.push(OperandType::Weak(value));
    match broadcast_shapes("ufunc", &shapes) {
        Ok(shape) => session.full(&shape, value, result_type(&types)),
        Err(e) => Array::built(session, Err(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traces_record_operations_in_order() {
        let trace = record("t", |[a, b]: [Expr; 2]| (a * b + 1.0).sqrt()).unwrap();
        assert_eq!(trace.params, 2);
        assert_eq!(trace.ops.len(), 5);
    }

    #[test]
    fn a_stray_expr_is_an_error() {
        let mut kept = None;
        let _ = record("first", |[a]: [Expr; 1]| {
            kept = Some(a);
            a
        });
        let err = record("second", |[b]: [Expr; 1]| b + kept.unwrap_or(b)).unwrap_err();
        assert!(err.to_string().contains("another closure"), "{err}");
    }
}
