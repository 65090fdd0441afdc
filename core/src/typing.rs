//! Type rules: which dtype each operation computes in and returns, following
//! NumPy 2.x with NEP 50 weak scalars. Each `plan_*` function returns what the
//! graph builder must insert (casts, a remapped op), or an error naming the
//! operation and dtypes.

use crate::dtype::{promote, DType, Kind};
use crate::error::{Error, Result};
use crate::ops::{BinaryOp, ReduceClass, ReduceOp, UnaryOp};
use crate::scalar::Scalar;

/// The type of one operand: an array's dtype (strong) or a Rust scalar (weak).
#[derive(Clone, Copy, Debug)]
pub enum OperandType {
    /// An array of this dtype.
    Strong(DType),
    /// A Rust scalar.
    Weak(Scalar),
}

/// An operand's type as errors name it: `f32`, or `a float scalar`.
fn describe(operand: OperandType) -> String {
    match operand {
        OperandType::Strong(dtype) => dtype.to_string(),
        OperandType::Weak(Scalar::Bool(_)) => "a bool scalar".to_string(),
        OperandType::Weak(Scalar::Int(_)) => "an int scalar".to_string(),
        OperandType::Weak(Scalar::Float(_)) => "a float scalar".to_string(),
    }
}

/// NEP 50 result type of several operands.
pub fn result_type(operands: &[OperandType]) -> DType {
    let strong = operands
        .iter()
        .filter_map(|o| match o {
            OperandType::Strong(d) => Some(*d),
            OperandType::Weak(_) => None,
        })
        .reduce(promote);
    let weak_kind = operands
        .iter()
        .filter_map(|o| match o {
            OperandType::Weak(s) => Some(s.kind()),
            OperandType::Strong(_) => None,
        })
        .max();
    match (strong, weak_kind) {
        (Some(d), None) => d,
        (None, Some(kind)) => default_of_kind(kind),
        (None, None) => DType::Bool,
        (Some(d), Some(kind)) => {
            let strong_kind = if d.kind() == Kind::UInt {
                Kind::Int
            } else {
                d.kind()
            };
            if kind > strong_kind {
                default_of_kind(kind)
            } else {
                d
            }
        }
    }
}

fn default_of_kind(kind: Kind) -> DType {
    match kind {
        Kind::Bool => DType::Bool,
        Kind::Int | Kind::UInt => DType::I64,
        Kind::Float => DType::F64,
    }
}

/// How to build a unary operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryPlan {
    /// The operation does not change the value (`floor` of an integer, `abs` of a bool).
    Identity,
    /// Cast the operand to `operand`, apply `op`, giving `out`.
    Apply {
        /// Dtype the operand is cast to.
        operand: DType,
        /// The operation.
        op: UnaryOp,
        /// Result dtype.
        out: DType,
    },
}

/// The plan of a unary operation on `dtype`, or an error naming it.
pub fn plan_unary(op: UnaryOp, dtype: DType) -> Result<UnaryPlan> {
    use UnaryOp::*;
    let apply = |operand: DType| {
        let out = if op.is_predicate() || op == LogicalNot {
            DType::Bool
        } else {
            operand
        };
        Ok(UnaryPlan::Apply { operand, op, out })
    };
    match op {
        LogicalNot => apply(DType::Bool),
        // np.round of bool gives float16; floor, ceil and trunc keep bool.
        Round if dtype.is_bool() => apply(DType::F16),
        _ if op.is_rounding() && !dtype.is_float() => Ok(UnaryPlan::Identity),
        Abs if dtype.is_bool() => Ok(UnaryPlan::Identity),
        Neg | Sign if dtype.is_bool() => Err(Error::dtype(
            op.name(),
            format!(
                "not supported for bool (got {dtype}; expected an integer or float array{})",
                if op == Neg {
                    ", or use logical_not"
                } else {
                    ""
                }
            ),
        )),
        Square | Reciprocal if dtype.is_bool() => apply(DType::I8),
        Invert if dtype.is_bool() => Ok(UnaryPlan::Apply {
            operand: DType::Bool,
            op: LogicalNot,
            out: DType::Bool,
        }),
        Popc | Clz | Ffs | Brev if dtype.is_bool() || dtype.is_float() => Err(Error::dtype(
            op.name(),
            format!("not supported for {dtype} (expected an integer array)"),
        )),
        Invert if dtype.is_float() => Err(Error::dtype(
            op.name(),
            format!("not supported for floats (got {dtype}; expected an integer or bool array)"),
        )),
        _ if op.is_float_only() => apply(dtype.smallest_float()),
        _ => apply(dtype),
    }
}

/// How to build a binary operation: both operands cast to `operand`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BinaryPlan {
    /// Dtype both operands are cast to.
    pub operand: DType,
    /// The operation (bool `+`/`*` become logical or/and).
    pub op: BinaryOp,
    /// Result dtype.
    pub out: DType,
}

/// The plan of `lhs op rhs`, or an error naming the operation and dtypes.
pub fn plan_binary(op: BinaryOp, lhs: OperandType, rhs: OperandType) -> Result<BinaryPlan> {
    use BinaryOp::*;
    if op.is_logical() {
        return Ok(BinaryPlan {
            operand: DType::Bool,
            op,
            out: DType::Bool,
        });
    }
    let mut common = result_type(&[lhs, rhs]);
    if op.is_comparison() {
        common = widen_for_out_of_range_scalar(common, lhs, rhs);
        return Ok(BinaryPlan {
            operand: common,
            op,
            out: DType::Bool,
        });
    }
    let plan = |operand: DType, op: BinaryOp| {
        Ok(BinaryPlan {
            operand,
            op,
            out: operand,
        })
    };
    match (op, common.kind()) {
        (Add, Kind::Bool) => plan(DType::Bool, LogicalOr),
        (Mul, Kind::Bool) => plan(DType::Bool, LogicalAnd),
        (Sub, Kind::Bool) => Err(Error::dtype(
            "subtract",
            "boolean subtract is not supported (got bool, bool; expected numbers, \
             or use logical_xor)",
        )),
        (Div, Kind::Bool | Kind::Int | Kind::UInt) => plan(DType::F64, Div),
        // NumPy raises for a negative exponent of an integer array; lazily
        // that can be told only of a scalar exponent (an exponent array's
        // negative elements give 0, as integer division would).
        (Pow, Kind::Bool | Kind::Int | Kind::UInt)
            if matches!(lhs, OperandType::Strong(_))
                && matches!(rhs, OperandType::Weak(Scalar::Int(v)) if v < 0) =>
        {
            Err(Error::invalid(
                "power",
                format!(
                    "integers to negative integer powers are not allowed (got {} ** {}; \
                     expected an exponent of at least 0, or a float operand)",
                    describe(lhs),
                    match rhs {
                        OperandType::Weak(Scalar::Int(v)) => v,
                        _ => 0,
                    }
                ),
            ))
        }
        (FloorDiv | Rem | Pow | Fmod | LeftShift | RightShift, Kind::Bool) => plan(DType::I8, op),
        // NumPy's loop choice: a weak scalar takes the operands' common
        // type, then each operand's smallest float, promoted (int8 with
        // uint8 is f16, not int16's f32).
        (_, _) if op.is_float_only() => {
            let float = [lhs, rhs]
                .map(|o| match o {
                    OperandType::Strong(d) => d.smallest_float(),
                    OperandType::Weak(_) => common.smallest_float(),
                })
                .into_iter()
                .reduce(promote)
                .unwrap_or(common);
            plan(float, op)
        }
        (BitwiseAnd, Kind::Bool) => plan(DType::Bool, LogicalAnd),
        (BitwiseOr, Kind::Bool) => plan(DType::Bool, LogicalOr),
        (BitwiseXor, Kind::Bool) => plan(DType::Bool, LogicalXor),
        (_, Kind::Float) if op.is_bitwise() => Err(Error::dtype(
            op.name(),
            format!(
                "not supported for floats (got {}, {}; expected integer or bool operands)",
                describe(lhs),
                describe(rhs)
            ),
        )),
        (_, Kind::Bool | Kind::Float) if op.is_integer_only() => Err(Error::dtype(
            op.name(),
            format!(
                "not supported for {} (got {}, {}; expected integer operands)",
                if common.kind() == Kind::Bool {
                    "two bools"
                } else {
                    "floats"
                },
                describe(lhs),
                describe(rhs)
            ),
        )),
        (Philox | PhiloxWord | PhiloxPair, _) => plan(DType::U64, op),
        _ => plan(common, op),
    }
}

/// NumPy 2 compares an integer array with an out-of-range Python integer
/// correctly (`int8 < 1000` is true) instead of raising: compare in a type
/// that holds both.
fn widen_for_out_of_range_scalar(common: DType, lhs: OperandType, rhs: OperandType) -> DType {
    let Some((min, max)) = common.int_range() else {
        return common;
    };
    let mut widened = common;
    for operand in [lhs, rhs] {
        if let OperandType::Weak(Scalar::Int(v)) = operand {
            if v < min || v > max {
                let scalar_type = if v > i64::MAX as i128 {
                    DType::U64
                } else {
                    DType::I64
                };
                widened = promote(widened, scalar_type);
            }
        }
    }
    widened
}

/// The dtype a three-operand `where` selects in.
pub fn plan_where(x: OperandType, y: OperandType) -> DType {
    result_type(&[x, y])
}

/// A reduction as the user asked for it, including `mean`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    /// `sum`, `prod`, `min`, `max`.
    Builtin(ReduceOp),
    /// `mean`: a sum divided by the count.
    Mean,
}

impl Reduction {
    /// The NumPy name.
    pub fn name(self) -> &'static str {
        match self {
            Reduction::Builtin(op) => op.name(),
            Reduction::Mean => "mean",
        }
    }
}

/// How to build a reduction: cast the input to `acc`, reduce in it, cast the
/// result to `out`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReducePlan {
    /// Accumulator dtype.
    pub acc: DType,
    /// Result dtype.
    pub out: DType,
}

/// The dtypes a reduction of a `dtype` array accumulates in and returns (NumPy's rules).
pub fn plan_reduce(reduction: Reduction, dtype: DType) -> ReducePlan {
    match reduction {
        Reduction::Builtin(op) => match op.class() {
            ReduceClass::Arith => {
                let out = match dtype.kind() {
                    Kind::Bool | Kind::Int => DType::I64,
                    Kind::UInt => DType::U64,
                    Kind::Float => dtype,
                };
                ReducePlan {
                    acc: out.accumulator(),
                    out,
                }
            }
            ReduceClass::Extreme => ReducePlan {
                acc: dtype,
                out: dtype,
            },
        },
        Reduction::Mean => {
            let out = if dtype.is_float() { dtype } else { DType::F64 };
            ReducePlan {
                acc: out.accumulator(),
                out,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use OperandType::{Strong, Weak};

    #[test]
    fn weak_scalars_adapt() {
        assert_eq!(
            result_type(&[Strong(DType::F32), Weak(Scalar::Float(2.0))]),
            DType::F32
        );
        assert_eq!(
            result_type(&[Strong(DType::I8), Weak(Scalar::Int(1))]),
            DType::I8
        );
        assert_eq!(
            result_type(&[Strong(DType::U8), Weak(Scalar::Int(1))]),
            DType::U8
        );
        assert_eq!(
            result_type(&[Strong(DType::I8), Weak(Scalar::Float(1.0))]),
            DType::F64
        );
        assert_eq!(
            result_type(&[Strong(DType::Bool), Weak(Scalar::Int(1))]),
            DType::I64
        );
        assert_eq!(
            result_type(&[Strong(DType::F16), Weak(Scalar::Int(1))]),
            DType::F16
        );
    }

    #[test]
    fn integer_arrays_refuse_a_negative_scalar_exponent_as_numpy() {
        for dtype in [DType::Bool, DType::I8, DType::U64] {
            let err = plan_binary(BinaryOp::Pow, Strong(dtype), Weak(Scalar::Int(-1))).unwrap_err();
            assert!(err.to_string().contains("negative integer powers"), "{err}");
        }
        let ok = |lhs, rhs| plan_binary(BinaryOp::Pow, lhs, rhs).is_ok();
        assert!(ok(Strong(DType::F32), Weak(Scalar::Int(-1))));
        assert!(ok(Strong(DType::I32), Weak(Scalar::Int(0))));
        assert!(ok(Strong(DType::I32), Weak(Scalar::Float(-1.0))));
        assert!(
            ok(Weak(Scalar::Int(2)), Weak(Scalar::Int(-1))),
            "Python's 2 ** -1 is 0.5"
        );
    }

    #[test]
    fn division_and_float_functions_of_integers() {
        let p = plan_binary(BinaryOp::Div, Strong(DType::I8), Strong(DType::I8)).unwrap();
        assert_eq!(p.out, DType::F64);
        let p = plan_unary(UnaryOp::Sqrt, DType::I8).unwrap();
        assert_eq!(
            p,
            UnaryPlan::Apply {
                operand: DType::F16,
                op: UnaryOp::Sqrt,
                out: DType::F16
            }
        );
        assert_eq!(
            plan_unary(UnaryOp::Floor, DType::I32).unwrap(),
            UnaryPlan::Identity
        );
        assert!(plan_unary(UnaryOp::Neg, DType::Bool).is_err());
    }

    #[test]
    fn reductions_promote_like_numpy() {
        let sum = Reduction::Builtin(ReduceOp::Sum);
        assert_eq!(plan_reduce(sum, DType::I8).out, DType::I64);
        assert_eq!(plan_reduce(sum, DType::U16).out, DType::U64);
        assert_eq!(plan_reduce(sum, DType::Bool).out, DType::I64);
        assert_eq!(
            plan_reduce(sum, DType::F16),
            ReducePlan {
                acc: DType::F32,
                out: DType::F16
            }
        );
        assert_eq!(plan_reduce(Reduction::Mean, DType::I32).out, DType::F64);
    }
}
