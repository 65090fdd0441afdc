//! Constant folding: operations of numbers computed while parsing, as
//! Python computes them on numbers (ints exactly, in `i128`; floats as
//! f64), giving weak scalars; no value where Python raises.

use crate::ops::{BinaryOp, UnaryClass, UnaryOp};
use crate::scalar::Scalar;
use crate::semantics::Arithmetic;

/// Python's truth value of a number.
pub(super) fn truthy(s: Scalar) -> bool {
    match s {
        Scalar::Bool(b) => b,
        Scalar::Int(v) => v != 0,
        Scalar::Float(v) => v != 0.0,
    }
}

/// The value as an f64 (ints rounded to nearest, as Python's `float()`).
fn f64_of(s: Scalar) -> f64 {
    s.to_wide().as_f64()
}

/// A bool as Python uses it in arithmetic: 0 or 1.
fn as_int(s: Scalar) -> Option<i128> {
    match s {
        Scalar::Bool(b) => Some(i128::from(b)),
        Scalar::Int(v) => Some(v),
        Scalar::Float(_) => None,
    }
}

/// An operation of one constant, as Python computes it on numbers: integers
/// exactly, floats (and integers through float functions) in f64 with
/// lazyfuse's semantics, predicates and `~` of bool giving bool.
pub(super) fn fold_unary(op: UnaryOp, s: Scalar) -> Option<Scalar> {
    use UnaryOp::*;
    if let Scalar::Bool(b) = s {
        if matches!(op, LogicalNot | Invert) {
            return Some(Scalar::Bool(!b));
        }
    }
    match (op.class(), as_int(s)) {
        (UnaryClass::Logical, _) => Some(Scalar::Bool(!truthy(s))),
        (UnaryClass::Predicate, _) => Some(Scalar::Bool(f64::predicate(op, f64_of(s)))),
        (UnaryClass::Arith | UnaryClass::Bitwise | UnaryClass::Rounding, Some(v)) => match op {
            Neg => v.checked_neg(),
            Abs => v.checked_abs(),
            Sign => Some(v.signum()),
            Square => v.checked_mul(v),
            Reciprocal => Some(if v == 0 { 0 } else { 1 / v }),
            Invert => Some(!v),
            _ => Some(v),
        }
        .map(Scalar::Int),
        (UnaryClass::Bitwise, None) => None,
        _ => Some(Scalar::Float(f64::unary(op, f64_of(s)))),
    }
}

/// An operation of two constants, as Python computes it on numbers.
pub(super) fn fold_binary(op: BinaryOp, a: Scalar, b: Scalar) -> Option<Scalar> {
    use BinaryOp::*;
    if op.is_comparison() {
        let ordering = match (as_int(a), as_int(b)) {
            (Some(x), Some(y)) => x.partial_cmp(&y),
            _ => f64_of(a).partial_cmp(&f64_of(b)),
        };
        let holds = match op {
            Eq => ordering == Some(std::cmp::Ordering::Equal),
            Ne => ordering != Some(std::cmp::Ordering::Equal),
            Lt => ordering == Some(std::cmp::Ordering::Less),
            Le => matches!(
                ordering,
                Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
            ),
            Gt => ordering == Some(std::cmp::Ordering::Greater),
            _ => matches!(
                ordering,
                Some(std::cmp::Ordering::Greater | std::cmp::Ordering::Equal)
            ),
        };
        return Some(Scalar::Bool(holds));
    }
    if op.is_logical() {
        return Some(Scalar::Bool(crate::semantics::logical(
            op,
            truthy(a),
            truthy(b),
        )));
    }
    if let (Scalar::Bool(x), Scalar::Bool(y), true) = (a, b, op.is_bitwise()) {
        return Some(Scalar::Bool(crate::semantics::logical(op, x, y)));
    }
    match (as_int(a), as_int(b)) {
        // Python: `/` and a negative power of integers give floats.
        (Some(x), Some(y)) if !op.is_float_only() && op != Div && !(op == Pow && y < 0) => {
            fold_int(op, x, y).map(Scalar::Int)
        }
        _ if op.is_bitwise() || op.is_integer_only() => None,
        _ => Some(Scalar::Float(f64::binary(op, f64_of(a), f64_of(b)))),
    }
}

/// Euclid's greatest common divisor.
fn gcd_of_magnitudes(mut a: u128, mut b: u128) -> u128 {
    while a != 0 {
        (a, b) = (b % a, a);
    }
    b
}

/// An integer operation as Python computes it: exact, or no value where
/// Python raises (division by zero, a negative shift, an overflow of i128).
fn fold_int(op: BinaryOp, x: i128, y: i128) -> Option<i128> {
    use BinaryOp::*;
    match op {
        Add => x.checked_add(y),
        Sub => x.checked_sub(y),
        Mul => x.checked_mul(y),
        FloorDiv => (y != 0).then(|| x / y - i128::from(x % y != 0 && (x < 0) != (y < 0))),
        Rem => (y != 0).then(|| {
            x % y
                + if x % y != 0 && (x % y < 0) != (y < 0) {
                    y
                } else {
                    0
                }
        }),
        Fmod => (y != 0).then(|| x % y),
        Pow => u32::try_from(y).ok().and_then(|e| x.checked_pow(e)),
        Minimum => Some(x.min(y)),
        Maximum => Some(x.max(y)),
        Gcd => Some(gcd_of_magnitudes(x.unsigned_abs(), y.unsigned_abs()) as i128),
        Lcm => {
            let (m, n) = (x.unsigned_abs(), y.unsigned_abs());
            match gcd_of_magnitudes(m, n) {
                0 => Some(0),
                g => (m / g).checked_mul(n).and_then(|l| i128::try_from(l).ok()),
            }
        }
        BitwiseAnd => Some(x & y),
        BitwiseOr => Some(x | y),
        BitwiseXor => Some(x ^ y),
        LeftShift => u32::try_from(y)
            .ok()
            .filter(|&n| n < 127)
            .and_then(|n| x.checked_mul(1i128 << n)),
        RightShift => u32::try_from(y).ok().map(|n| x >> n.min(127)),
        _ => None,
    }
}
