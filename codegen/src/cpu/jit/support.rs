//! Which kernel bodies the JIT compiles, and the Cranelift types of their
//! values: all non-bool values 32-bit or all 64-bit (one lane width per
//! body), no bool in memory, operations `ops` lowers.

use cranelift_codegen::ir::{types, Type};
use lazyfuse_core::{BinaryOp, DType, UnaryOp};
use lazyfuse_fusion::{Body, Inst};

/// Why a body is not compiled (the register machine runs it instead).
pub type Unsupported = &'static str;

/// The width of a body's lanes: all its non-bool values are 32-bit or all 64-bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Lanes {
    W32,
    W64,
}

impl Lanes {
    pub(super) fn of(dtype: DType) -> Option<Lanes> {
        match dtype {
            DType::F32 | DType::I32 | DType::U32 => Some(Lanes::W32),
            DType::F64 | DType::I64 | DType::U64 => Some(Lanes::W64),
            _ => None,
        }
    }

    /// Elements per 128-bit vector.
    pub(super) fn per_vector(self) -> usize {
        match self {
            Lanes::W32 => 4,
            Lanes::W64 => 2,
        }
    }

    pub(super) fn mask_type(self) -> Type {
        match self {
            Lanes::W32 => types::I32X4,
            Lanes::W64 => types::I64X2,
        }
    }
}

pub(super) fn scalar_type(dtype: DType) -> Option<Type> {
    Some(match dtype {
        DType::F32 => types::F32,
        DType::F64 => types::F64,
        DType::I32 | DType::U32 => types::I32,
        DType::I64 | DType::U64 => types::I64,
        _ => return None,
    })
}

pub(super) fn vector_type(dtype: DType) -> Option<Type> {
    Some(match dtype {
        DType::F32 => types::F32X4,
        DType::F64 => types::F64X2,
        DType::I32 | DType::U32 => types::I32X4,
        DType::I64 | DType::U64 => types::I64X2,
        _ => return None,
    })
}

pub(super) fn is_float(dtype: DType) -> bool {
    matches!(dtype, DType::F32 | DType::F64)
}

pub(super) fn is_unsigned(dtype: DType) -> bool {
    matches!(dtype, DType::U32 | DType::U64)
}

/// `Ok` when every value and operation of `body` is one this module
/// compiles, and no output is a bool.
pub fn supports(body: &Body, outputs: &[(usize, usize)]) -> Result<(), Unsupported> {
    check(body, outputs).map(|_| ())
}

/// Casts compiled: within one lane width (same-width integers, integers to
/// floats of their width, f32 to 32-bit integers), and between bool and
/// numbers. f64 to 64-bit integers is not: Cranelift lowers that vector
/// conversion only with AVX-512.
fn cast_supported(from: DType, to: DType) -> bool {
    let width = |d: DType| Lanes::of(d);
    match (from, to) {
        (DType::Bool, DType::Bool) => true,
        (DType::Bool, d) | (d, DType::Bool) => width(d).is_some(),
        (DType::F64, DType::I64 | DType::U64) => false,
        (a, b) => width(a).is_some() && width(a) == width(b),
    }
}

/// Checks that every value and operation of `body` is one this module
/// compiles, and returns the lanes they use.
pub(super) fn check(body: &Body, outputs: &[(usize, usize)]) -> Result<Lanes, Unsupported> {
    let mut lanes = None;
    for (i, inst) in body.insts.iter().enumerate() {
        let dtype = body.dtypes[i];
        if dtype != DType::Bool {
            let l = Lanes::of(dtype).ok_or("a dtype other than f32, f64, i32, i64, u32, u64")?;
            if lanes.is_some_and(|x| x != l) {
                return Err("32-bit and 64-bit values in one body");
            }
            lanes = Some(l);
        }
        let operand = |k: usize| body.dtypes[inst.operands()[k].index()];
        let supported = match inst {
            Inst::Load(_) | Inst::Arg(_) => dtype != DType::Bool,
            Inst::Iota(_) | Inst::Param(_) | Inst::Reduced => false,
            Inst::Cast(_) => cast_supported(operand(0), dtype),
            Inst::Unary(op, _) => match op {
                UnaryOp::LogicalNot => dtype == DType::Bool,
                UnaryOp::IsNan | UnaryOp::IsInf | UnaryOp::IsFinite => is_float(operand(0)),
                UnaryOp::Neg | UnaryOp::Square => dtype != DType::Bool,
                UnaryOp::Abs => dtype != DType::Bool && !is_unsigned(dtype),
                UnaryOp::Sqrt
                | UnaryOp::Floor
                | UnaryOp::Ceil
                | UnaryOp::Trunc
                | UnaryOp::Round => is_float(dtype),
                _ => false,
            },
            Inst::Binary(op, _, _) => match op {
                BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul => {
                    dtype != DType::Bool || *op != BinaryOp::Sub
                }
                BinaryOp::Div => is_float(dtype),
                BinaryOp::Minimum | BinaryOp::Maximum => true,
                BinaryOp::Eq
                | BinaryOp::Ne
                | BinaryOp::Lt
                | BinaryOp::Le
                | BinaryOp::Gt
                | BinaryOp::Ge => true,
                BinaryOp::LogicalAnd | BinaryOp::LogicalOr | BinaryOp::LogicalXor => {
                    dtype == DType::Bool
                }
                _ => false,
            },
            Inst::Select(..) => true,
        };
        if !supported {
            return Err("an operation the JIT does not compile");
        }
    }
    if outputs.iter().any(|&(v, _)| body.dtypes[v] == DType::Bool) {
        return Err("a bool output");
    }
    lanes.ok_or("no numeric value")
}
