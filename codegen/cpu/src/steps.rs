//! The steps of the register machine: one monomorphised function per
//! (operation family, dtypes, instruction set), chosen when a kernel is
//! compiled, so that running an operation over a tile costs one indirect
//! call and one checked frame access before its loop from `loops`.

use lazyfuse_core::half::{bf16, f16};
use lazyfuse_core::semantics::Arithmetic;
use lazyfuse_core::{with_dtype, BinaryOp, DType, Element, Error, Result, UnaryOp};
use lazyfuse_fusion::{Body, Inst};

use super::frame::Frame;
#[cfg(target_arch = "x86_64")]
use super::isa::has_avx2;
use super::loops;
use super::primitive::{Bits, Primitive};
use super::vmath::{self, VectorMath};
use super::widen::{self, Half};
use crate::with_primitive;

fn internal(message: &str) -> Error {
    Error::internal("cpu machine", message)
}

/// Runs a step over elements `start..start + len` of the chunk.
///
/// # Safety
/// The CPU must have the instruction set the function was compiled for:
/// [`compile`] only returns AVX2 steps after asking the CPU.
pub type StepFn = unsafe fn(&Step, &mut Frame<'_>, usize, usize) -> Result<()>;

/// The operation a step applies, for the families that take one.
#[derive(Clone, Copy, Debug)]
pub enum OpCode {
    /// Casts and copies.
    None,
    /// A unary operation.
    Unary(UnaryOp),
    /// A binary operation.
    Binary(BinaryOp),
}

/// One operation of a compiled kernel: its function, its operation and
/// the slots it writes and reads.
#[derive(Clone, Copy)]
pub struct Step {
    /// The monomorphised function.
    pub run: StepFn,
    /// The operation it applies.
    pub op: OpCode,
    /// The slot written.
    pub dst: usize,
    /// The slots read (unused ones repeat the first).
    pub src: [usize; 3],
}

impl std::fmt::Debug for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Step({:?}: {} <- {:?})", self.op, self.dst, self.src)
    }
}

impl Step {
    fn unary_op(&self) -> Result<UnaryOp> {
        match self.op {
            OpCode::Unary(op) => Ok(op),
            _ => Err(internal("a unary step without its operation")),
        }
    }

    fn binary_op(&self) -> Result<BinaryOp> {
        match self.op {
            OpCode::Binary(op) => Ok(op),
            _ => Err(internal("a binary step without its operation")),
        }
    }
}

/// The step bodies, written once; `portable` and `avx2` compile them for
/// each instruction set.
mod bodies {
    use super::*;

    type Out = Result<()>;

    #[inline(always)]
    pub fn unary<T: Arithmetic + Element>(s: &Step, f: &mut Frame<'_>, at: usize, n: usize) -> Out {
        let op = s.unary_op()?;
        let (out, a) = f.op1::<T, T>(s.dst, s.src[0], at, n)?;
        loops::unary(op, a, out);
        Ok(())
    }

    #[inline(always)]
    pub fn predicate<T: Arithmetic + Element>(
        s: &Step,
        f: &mut Frame<'_>,
        at: usize,
        n: usize,
    ) -> Out {
        let op = s.unary_op()?;
        let (out, a) = f.op1::<bool, T>(s.dst, s.src[0], at, n)?;
        loops::predicate(op, a, out);
        Ok(())
    }

    #[inline(always)]
    pub fn not(s: &Step, f: &mut Frame<'_>, at: usize, n: usize) -> Out {
        let (out, a) = f.op1::<bool, bool>(s.dst, s.src[0], at, n)?;
        loops::not(a, out);
        Ok(())
    }

    #[inline(always)]
    pub fn vector_math<T: VectorMath + Element>(
        s: &Step,
        f: &mut Frame<'_>,
        at: usize,
        n: usize,
    ) -> Out {
        let op = s.unary_op()?;
        let (out, a) = f.op1::<T, T>(s.dst, s.src[0], at, n)?;
        if vmath::unary(op, a, out) {
            Ok(())
        } else {
            Err(internal("a function vmath does not cover"))
        }
    }

    #[inline(always)]
    pub fn half_unary<H: Half + Element>(s: &Step, f: &mut Frame<'_>, at: usize, n: usize) -> Out {
        let op = s.unary_op()?;
        let (out, a) = f.op1::<H, H>(s.dst, s.src[0], at, n)?;
        widen::unary(op, a, out);
        Ok(())
    }

    #[inline(always)]
    pub fn binary<T: Arithmetic + Element>(
        s: &Step,
        f: &mut Frame<'_>,
        at: usize,
        n: usize,
    ) -> Out {
        let op = s.binary_op()?;
        let (out, a, b) = f.op2::<T, T, T>(s.dst, [s.src[0], s.src[1]], at, n)?;
        loops::binary(op, a, b, out);
        Ok(())
    }

    #[inline(always)]
    pub fn philox(s: &Step, f: &mut Frame<'_>, at: usize, n: usize) -> Out {
        let op = s.binary_op()?;
        let (out, a, b) = f.op2::<u64, u64, u64>(s.dst, [s.src[0], s.src[1]], at, n)?;
        loops::generator(op, a, b, out);
        Ok(())
    }

    #[inline(always)]
    pub fn comparison<T: PartialOrd + Element>(
        s: &Step,
        f: &mut Frame<'_>,
        at: usize,
        n: usize,
    ) -> Out {
        let op = s.binary_op()?;
        let (out, a, b) = f.op2::<bool, T, T>(s.dst, [s.src[0], s.src[1]], at, n)?;
        loops::comparison(op, a, b, out);
        Ok(())
    }

    #[inline(always)]
    pub fn boolean(s: &Step, f: &mut Frame<'_>, at: usize, n: usize) -> Out {
        let op = s.binary_op()?;
        let (out, a, b) = f.op2::<bool, bool, bool>(s.dst, [s.src[0], s.src[1]], at, n)?;
        loops::boolean(op, a, b, out);
        Ok(())
    }

    #[inline(always)]
    pub fn half_binary<H: Half + Element>(s: &Step, f: &mut Frame<'_>, at: usize, n: usize) -> Out {
        let op = s.binary_op()?;
        let (out, a, b) = f.op2::<H, H, H>(s.dst, [s.src[0], s.src[1]], at, n)?;
        widen::binary(op, a, b, out);
        Ok(())
    }

    #[inline(always)]
    pub fn select<T: Element>(s: &Step, f: &mut Frame<'_>, at: usize, n: usize) -> Out {
        let (out, c, a, b) = f.op3::<T, bool, T, T>(s.dst, s.src, at, n)?;
        loops::select(c, a, b, out);
        Ok(())
    }

    #[inline(always)]
    pub fn cast<S: Element, D: Element>(s: &Step, f: &mut Frame<'_>, at: usize, n: usize) -> Out {
        let (out, a) = f.op1::<D, S>(s.dst, s.src[0], at, n)?;
        loops::cast(a, out);
        Ok(())
    }

    #[inline(always)]
    pub fn primitive_cast<S: Primitive, D: Primitive>(
        s: &Step,
        f: &mut Frame<'_>,
        at: usize,
        n: usize,
    ) -> Out {
        let (out, a) = f.op1::<D, S>(s.dst, s.src[0], at, n)?;
        loops::primitive_cast(a, out);
        Ok(())
    }

    #[inline(always)]
    pub fn bitcast<S: Bits, D: Bits>(s: &Step, f: &mut Frame<'_>, at: usize, n: usize) -> Out {
        let (out, a) = f.op1::<D, S>(s.dst, s.src[0], at, n)?;
        loops::bitcast(a, out);
        Ok(())
    }

    #[inline(always)]
    pub fn widen_cast<H: Half + Element>(s: &Step, f: &mut Frame<'_>, at: usize, n: usize) -> Out {
        let (out, a) = f.op1::<f32, H>(s.dst, s.src[0], at, n)?;
        widen::widen(a, out);
        Ok(())
    }

    #[inline(always)]
    pub fn narrow_cast<H: Half + Element>(s: &Step, f: &mut Frame<'_>, at: usize, n: usize) -> Out {
        let (out, a) = f.op1::<H, f32>(s.dst, s.src[0], at, n)?;
        widen::narrow(a, out);
        Ok(())
    }

    #[inline(always)]
    pub fn copy<T: Element>(s: &Step, f: &mut Frame<'_>, at: usize, n: usize) -> Out {
        let (out, a) = f.op1::<T, T>(s.dst, s.src[0], at, n)?;
        loops::copy(a, out);
        Ok(())
    }
}

/// Declares the step functions of `bodies` for each instruction set.
macro_rules! instruction_sets {
    ($($name:ident $(<$($T:ident: $B0:ident $(+ $B:ident)*),+>)?;)*) => {
        /// The steps compiled for the baseline instruction set.
        mod portable {
            use super::*;
            $(
                pub unsafe fn $name $(<$($T: $B0 $(+ $B)*),+>)? (
                    s: &Step, f: &mut Frame<'_>, at: usize, n: usize,
                ) -> Result<()> {
                    bodies::$name $(::<$($T),+>)? (s, f, at, n)
                }
            )*
        }

        /// The same steps compiled for AVX2 (wider vectors).
        #[cfg(target_arch = "x86_64")]
        mod avx2 {
            use super::*;
            $(
                #[target_feature(enable = "avx2")]
                pub unsafe fn $name $(<$($T: $B0 $(+ $B)*),+>)? (
                    s: &Step, f: &mut Frame<'_>, at: usize, n: usize,
                ) -> Result<()> {
                    bodies::$name $(::<$($T),+>)? (s, f, at, n)
                }
            )*
        }
    };
}

instruction_sets! {
    unary<T: Arithmetic + Element>;
    predicate<T: Arithmetic + Element>;
    not;
    vector_math<T: VectorMath + Element>;
    half_unary<H: Half + Element>;
    binary<T: Arithmetic + Element>;
    philox;
    comparison<T: PartialOrd + Element>;
    boolean;
    half_binary<H: Half + Element>;
    select<T: Element>;
    cast<S: Element, D: Element>;
    primitive_cast<S: Primitive, D: Primitive>;
    bitcast<S: Bits, D: Bits>;
    widen_cast<H: Half + Element>;
    narrow_cast<H: Half + Element>;
    copy<T: Element>;
}

/// Philox compiled for AVX-512 as well: its 32×32→64-bit products are the
/// whole cost of a random array, and AVX-512 does twice as many at once.
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::*;

    #[target_feature(enable = "avx512f")]
    pub unsafe fn philox(s: &Step, f: &mut Frame<'_>, at: usize, n: usize) -> Result<()> {
        bodies::philox(s, f, at, n)
    }

    #[target_feature(enable = "avx512f")]
    pub unsafe fn philox_slice(op: BinaryOp, counters: &[u64], keys: &[u64], out: &mut [u64]) {
        loops::generator_slice(op, counters, keys, out)
    }
}

/// The step function of `name` for the instruction set in use.
macro_rules! pick {
    ($name:ident $(::<$($T:ty),+>)?) => {{
        #[cfg(target_arch = "x86_64")]
        let f: StepFn = if has_avx2() {
            avx2::$name $(::<$($T),+>)?
        } else {
            portable::$name $(::<$($T),+>)?
        };
        #[cfg(not(target_arch = "x86_64"))]
        let f: StepFn = portable::$name $(::<$($T),+>)?;
        f
    }};
}

/// `out = op(counters, keys)` as the generator's step computes it (`op`:
/// `philox`, `philox_word` or `philox_pair`), for compiled code's calls (which pass the
/// key of every element: one value for a random array, whose rounds then
/// run sixteen counters or blocks at a time).
pub(crate) fn philox_slice(op: BinaryOp, counters: &[u64], keys: &[u64], out: &mut [u64]) {
    #[cfg(target_arch = "x86_64")]
    {
        if super::isa::has_avx512() {
            // SAFETY: the CPU has AVX-512F (asked above).
            return unsafe { avx512::philox_slice(op, counters, keys, out) };
        }
        if has_avx2() {
            // SAFETY: the CPU has AVX2 (asked above).
            return unsafe { avx2_philox_slice(op, counters, keys, out) };
        }
    }
    loops::generator_slice(op, counters, keys, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn avx2_philox_slice(op: BinaryOp, counters: &[u64], keys: &[u64], out: &mut [u64]) {
    loops::generator_slice(op, counters, keys, out)
}

/// The Philox step for the instruction set in use.
fn philox_step() -> StepFn {
    #[cfg(target_arch = "x86_64")]
    if super::isa::has_avx512() {
        return avx512::philox;
    }
    pick!(philox)
}

/// Runs `$body` with `$T` set to a numeric dtype's Rust type, or `$bool` for bool.
macro_rules! numeric {
    ($d:expr, $T:ident => $body:expr, bool => $bool:expr) => {
        match $d {
            DType::F16 => {
                type $T = f16;
                $body
            }
            DType::BF16 => {
                type $T = bf16;
                $body
            }
            DType::F32 => {
                type $T = f32;
                $body
            }
            DType::F64 => {
                type $T = f64;
                $body
            }
            DType::I8 => {
                type $T = i8;
                $body
            }
            DType::I16 => {
                type $T = i16;
                $body
            }
            DType::I32 => {
                type $T = i32;
                $body
            }
            DType::I64 => {
                type $T = i64;
                $body
            }
            DType::U8 => {
                type $T = u8;
                $body
            }
            DType::U16 => {
                type $T = u16;
                $body
            }
            DType::U32 => {
                type $T = u32;
                $body
            }
            DType::U64 => {
                type $T = u64;
                $body
            }
            DType::Bool => $bool,
        }
    };
}

/// The step of operation `inst` (of `dtype`, in `body`), writing slot
/// `dst`; `Err` for a leaf.
pub fn compile(inst: &Inst, dtype: DType, body: &Body, dst: usize) -> Result<Step> {
    let step = |run: StepFn, op: OpCode, src: &[lazyfuse_fusion::ValueId]| {
        let first = src.first().map_or(dst, |v| v.index());
        let at = |i: usize| src.get(i).map_or(first, |v| v.index());
        Step {
            run,
            op,
            dst,
            src: [at(0), at(1), at(2)],
        }
    };
    let arithmetic_on_bool = || Err(internal("arithmetic on bool"));
    Ok(match inst {
        Inst::Unary(op, a) => {
            let run = match (op, dtype) {
                (UnaryOp::LogicalNot, _) => pick!(not),
                (op, _) if op.is_predicate() => {
                    numeric!(body.dtype(*a), T => pick!(predicate::<T>),
                        bool => return Err(internal("a predicate of bool")))
                }
                (op, DType::F32) if vmath::covers(*op) => pick!(vector_math::<f32>),
                (op, DType::F64) if vmath::covers(*op) => pick!(vector_math::<f64>),
                (op, DType::F16) if widen::covers_unary(*op) => pick!(half_unary::<f16>),
                (op, DType::BF16) if widen::covers_unary(*op) => pick!(half_unary::<bf16>),
                _ => numeric!(dtype, T => pick!(unary::<T>), bool => return arithmetic_on_bool()),
            };
            step(run, OpCode::Unary(*op), &[*a])
        }
        Inst::Binary(op, a, b) => {
            let run = match dtype {
                _ if op.is_comparison() => {
                    with_dtype!(body.dtype(*a), T => pick!(comparison::<T>))
                }
                DType::F16 if widen::covers_binary(*op) => pick!(half_binary::<f16>),
                DType::BF16 if widen::covers_binary(*op) => pick!(half_binary::<bf16>),
                DType::U64
                    if matches!(
                        op,
                        BinaryOp::Philox | BinaryOp::PhiloxWord | BinaryOp::PhiloxPair
                    ) =>
                {
                    philox_step()
                }
                _ => numeric!(dtype, T => pick!(binary::<T>), bool => pick!(boolean)),
            };
            step(run, OpCode::Binary(*op), &[*a, *b])
        }
        Inst::Select(c, a, b) => step(
            with_dtype!(dtype, T => pick!(select::<T>)),
            OpCode::None,
            &[*c, *a, *b],
        ),
        Inst::Cast(a) => {
            let run = match (body.dtype(*a), dtype) {
                (DType::F16, DType::F32) => pick!(widen_cast::<f16>),
                (DType::BF16, DType::F32) => pick!(widen_cast::<bf16>),
                (DType::F32, DType::F16) => pick!(narrow_cast::<f16>),
                (DType::F32, DType::BF16) => pick!(narrow_cast::<bf16>),
                (from, to) => with_primitive!(from, S => with_primitive!(to, D =>
                        pick!(primitive_cast::<S, D>),
                        else => with_dtype!(to, D => pick!(cast::<S, D>))),
                    else => with_dtype!(from, S => with_dtype!(to, D => pick!(cast::<S, D>)))),
            };
            step(run, OpCode::None, &[*a])
        }
        Inst::Bitcast(a) => {
            let not_bool = || Err(internal("a bitcast of bool"));
            let run = numeric!(body.dtype(*a), S => numeric!(dtype, D => pick!(bitcast::<S, D>),
                bool => return not_bool()), bool => return not_bool());
            step(run, OpCode::None, &[*a])
        }
        _ => return Err(internal("a leaf instruction compiled as an operation")),
    })
}

/// A step copying slot `src` (of `dtype`) into slot `dst` (an output that
/// repeats a value, or stores a leaf).
pub fn copy(dtype: DType, src: usize, dst: usize) -> Step {
    Step {
        run: with_dtype!(dtype, T => pick!(copy::<T>)),
        op: OpCode::None,
        dst,
        src: [src; 3],
    }
}
