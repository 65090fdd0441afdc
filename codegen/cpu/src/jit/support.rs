//! Which kernel bodies the JIT compiles, and the Cranelift types of their
//! values: all non-bool values 32-bit or all 64-bit (one lane width per
//! body), no bool in memory, operations `ops` lowers.

use cranelift_codegen::ir::{types, Type};
use lazyfuse_core::{BinaryOp, DType, UnaryOp};
use lazyfuse_fusion::{Body, Inst};

/// Why a body is not compiled (the register machine runs it instead).
pub type Unsupported = &'static str;

/// The narrowest lanes of a body: 32-bit when it has a 32-bit value, else
/// 64-bit (its values are 32- and 64-bit, and bools).
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

    /// Elements of a group: what one vector of the narrowest values holds
    /// (one 32-bit vector and two 64-bit ones, or one 64-bit vector).
    pub(super) fn group(self) -> usize {
        match self {
            Lanes::W32 => 4,
            Lanes::W64 => 2,
        }
    }
}

/// Elements per 128-bit vector of `dtype`.
pub(super) fn per_vector(dtype: DType) -> usize {
    16 / dtype.size()
}

/// The lane-mask type of comparisons of `dtype` values.
pub(super) fn mask_type(dtype: DType) -> Type {
    match dtype.size() {
        4 => types::I32X4,
        _ => types::I64X2,
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

/// Casts compiled: same-width integers, integers to floats, floats to
/// integers of their width (saturating; f64 to 64-bit integers lane by
/// lane, as Cranelift lowers that vector conversion only with AVX-512),
/// f32 and f64 both ways, 32-bit integers widened and 64-bit ones
/// truncated, i32/u32 to f64, and between bool and numbers. Not the
/// double-rounding ones (64-bit integers to f32).
pub(super) fn cast_supported(from: DType, to: DType) -> bool {
    use DType::*;
    let numeric = |d: DType| Lanes::of(d).is_some();
    match (from, to) {
        (Bool, Bool) => true,
        (Bool, d) | (d, Bool) => numeric(d),
        (a, b) if numeric(a) && numeric(b) && a.size() == b.size() => true,
        (F32, F64) | (F64, F32) => true,
        (I32 | U32, I64 | U64 | F64) => true,
        (I64 | U64, I32 | U32) => true,
        _ => false,
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
            if lanes != Some(Lanes::W32) {
                lanes = Some(l);
            }
        }
        let operand = |k: usize| body.dtypes[inst.operands()[k].index()];
        let supported = match inst {
            Inst::Load(_) | Inst::Arg(_) => dtype != DType::Bool,
            // Generated positions are gathered into a chunk register
            // (`run::Leaves`), which compiled code reads as it reads a load.
            Inst::Iota(_) => dtype == DType::I64,
            Inst::Param(_) | Inst::Reduced | Inst::Stage(_) => false,
            Inst::Cast(_) => cast_supported(operand(0), dtype),
            Inst::Bitcast(_) => false,
            Inst::Unary(op, _) => {
                unary_supported(*op, operand(0), dtype) || call_unary(*op, operand(0), dtype)
            }
            Inst::Binary(op, _, _) => {
                binary_supported(*op, dtype)
                    || shift_by_one_count(body, i)
                    || call_binary(*op, operand(0), dtype)
            }
            Inst::Select(..) => true,
        };
        if !supported {
            return Err("an operation the JIT does not compile");
        }
    }
    if outputs.iter().any(|&(v, _)| body.dtypes[v] == DType::Bool) {
        return Err("a bool output");
    }
    let lanes = lanes.ok_or("no numeric value")?;
    worth_calling(body)?;
    Ok(lanes)
}

/// Whether `op` of an `operand` giving `dtype` is compiled.
pub(super) fn unary_supported(op: UnaryOp, operand: DType, dtype: DType) -> bool {
    match op {
        UnaryOp::LogicalNot => dtype == DType::Bool,
        UnaryOp::IsNan | UnaryOp::IsInf | UnaryOp::IsFinite => is_float(operand),
        UnaryOp::Neg | UnaryOp::Square => dtype != DType::Bool,
        UnaryOp::Abs => dtype != DType::Bool && !is_unsigned(dtype),
        UnaryOp::Sqrt
        | UnaryOp::Floor
        | UnaryOp::Ceil
        | UnaryOp::Trunc
        | UnaryOp::Round
        | UnaryOp::Rint => is_float(dtype),
        _ => false,
    }
}

/// Whether `op` giving `dtype` is compiled.
pub(super) fn binary_supported(op: BinaryOp, dtype: DType) -> bool {
    match op {
        BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul => {
            dtype != DType::Bool || op != BinaryOp::Sub
        }
        BinaryOp::Div => is_float(dtype),
        BinaryOp::Minimum | BinaryOp::Maximum => true,
        BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => {
            true
        }
        BinaryOp::LogicalAnd | BinaryOp::LogicalOr | BinaryOp::LogicalXor => dtype == DType::Bool,
        BinaryOp::BitwiseAnd | BinaryOp::BitwiseOr | BinaryOp::BitwiseXor => {
            !is_float(dtype) && dtype != DType::Bool
        }
        _ => false,
    }
}

/// Whether instruction `k` of `body` is an integer shift by one count for
/// every element (a kernel argument, as a random array's `>> 40`): x86
/// shifts vectors by one count, not by a count per lane.
pub(super) fn shift_by_one_count(body: &Body, k: usize) -> bool {
    match body.insts[k] {
        Inst::Binary(BinaryOp::LeftShift | BinaryOp::RightShift, _, count) => {
            let dtype = body.dtypes[k];
            !is_float(dtype)
                && dtype != DType::Bool
                && matches!(body.insts[count.index()], Inst::Arg(_))
        }
        _ => false,
    }
}

// ---------------------------------------------------------------- calls
// Operations compiled as calls of the register machine's loops
// (`callout` emits them).

/// Whether the unary `op` from `from` to `dtype` is compiled as a call.
pub(super) fn call_unary(op: UnaryOp, from: DType, dtype: DType) -> bool {
    from == dtype && Lanes::of(dtype).is_some() && !op.is_predicate() && op != UnaryOp::LogicalNot
}

/// Whether the binary `op` giving `dtype` (of operands of `from`) is
/// compiled as a call.
pub(super) fn call_binary(op: BinaryOp, from: DType, dtype: DType) -> bool {
    from == dtype
        && Lanes::of(dtype).is_some()
        && !op.is_comparison()
        && !matches!(
            op,
            BinaryOp::LogicalAnd | BinaryOp::LogicalOr | BinaryOp::LogicalXor
        )
        // The generator's vectorised rounds are the u64 step's.
        && (!matches!(op, BinaryOp::Philox | BinaryOp::PhiloxWord | BinaryOp::PhiloxPair) || dtype == DType::U64)
}

/// Compiled operations a body needs per call for compiled code to beat
/// the register machine. Each call ends with the called loop's latency
/// (the results are read at once), where the machine runs the function
/// over whole tiles: `exp` alone runs at half the machine's speed compiled,
/// Black–Scholes (15 operations per call) 1.45 times faster (measured by
/// CPU time over 10^6 elements, `bench_programs.py`'s programs).
const OPERATIONS_PER_CALL: usize = 4;

/// `Ok` unless `body`'s calls outweigh its compiled work: then the
/// register machine runs it.
pub(super) fn worth_calling(body: &Body) -> Result<(), Unsupported> {
    let calls = (0..body.len())
        .filter(|&k| call_of(body, k).is_some())
        .count();
    let operations = body
        .insts
        .iter()
        .filter(|inst| !inst.operands().is_empty())
        .count()
        - calls;
    if operations < OPERATIONS_PER_CALL * calls {
        return Err(
            "its calls of the machine's loops (math functions) outweigh its \
                    compiled work",
        );
    }
    Ok(())
}

/// An operation compiled as a call.
#[derive(Clone, Copy, Debug)]
pub(super) enum Call {
    Unary(UnaryOp),
    Binary(BinaryOp),
}

impl Call {
    pub(super) fn index(self) -> u32 {
        match self {
            Call::Unary(op) => op as u32,
            Call::Binary(op) => op as u32,
        }
    }

    pub(super) fn operands(self) -> usize {
        match self {
            Call::Unary(_) => 1,
            Call::Binary(_) => 2,
        }
    }
}

/// The call that computes instruction `k` of `body`, when it is one (an
/// operation with no Cranelift lowering that the machine's loops run).
pub(super) fn call_of(body: &Body, k: usize) -> Option<Call> {
    let dtype = body.dtypes[k];
    match body.insts[k] {
        Inst::Unary(op, a) => {
            let from = body.dtype(a);
            (!unary_supported(op, from, dtype) && call_unary(op, from, dtype))
                .then_some(Call::Unary(op))
        }
        Inst::Binary(op, a, _) => {
            let from = body.dtype(a);
            (!binary_supported(op, dtype)
                && !shift_by_one_count(body, k)
                && call_binary(op, from, dtype))
            .then_some(Call::Binary(op))
        }
        _ => None,
    }
}
