//! Operations compiled as calls of the register machine's own loops: the
//! math functions (`exp`, `log`, `sin`, ... through `vmath`'s AVX2/AVX-512
//! routines where they cover them), `power`, `arctan2`, integer `//` and
//! `%`, the Philox generator, and every other numeric operation Cranelift
//! has no instruction for.
//!
//! The wide loop gathers the operand of such an operation for all of an
//! iteration's 128 elements into a stack buffer, calls the loop the machine
//! runs for that operation once over them, and reads the results back (the
//! vector loop after it does the same for 16 elements, the scalar loop for
//! one). So a body with an
//! `exp` still makes one pass over memory with its other values in
//! registers, and computes exactly what the register machine computes: the
//! same function over the same values.

use cranelift_codegen::ir::{
    types, AbiParam, InstBuilder, Signature, StackSlot, StackSlotData, StackSlotKind, Type, Value,
};
use cranelift_frontend::FunctionBuilder;
use lazyfuse_core::semantics::Arithmetic;
use lazyfuse_core::{BinaryOp, DType, UnaryOp};
use smallvec::SmallVec;

use super::ops::{Lowering, Val};
use super::support::{Call, Unsupported};
use crate::loops::{self, Arg};
use crate::vmath::{self, VectorMath};

/// The called function: `(op, a, b, out, n)`, `op` the operation's index in
/// its family's `ALL`, `b` unused by unary operations.
type Routine = unsafe extern "C" fn(u32, *const u8, *const u8, *mut u8, usize);

/// The machine's step for unary `op` over `n` values of `T` at `a`.
///
/// # Safety
/// `a` and `out` must hold `n` values of `T`, and not overlap.
unsafe fn unary_slice<T: Arithmetic + VectorMath>(op: u32, a: *const u8, out: *mut u8, n: usize) {
    let Some(&op) = UnaryOp::ALL.get(op as usize) else {
        return;
    };
    // SAFETY: the caller's contract.
    let (a, out) = unsafe {
        (
            std::slice::from_raw_parts(a.cast::<T>(), n),
            std::slice::from_raw_parts_mut(out.cast::<T>(), n),
        )
    };
    // As `steps::compile` chooses: `vmath` where it covers the function.
    if !(vmath::covers(op) && vmath::unary(op, Arg::Slice(a), out)) {
        loops::unary(op, Arg::Slice(a), out);
    }
}

/// The machine's step for binary `op` over `n` pairs of `T` at `a` and `b`.
///
/// # Safety
/// `a`, `b` and `out` must hold `n` values of `T`, `out` overlapping neither.
unsafe fn binary_slice<T: Arithmetic>(op: u32, a: *const u8, b: *const u8, out: *mut u8, n: usize) {
    let Some(&op) = BinaryOp::ALL.get(op as usize) else {
        return;
    };
    // SAFETY: the caller's contract.
    let (a, b, out) = unsafe {
        (
            std::slice::from_raw_parts(a.cast::<T>(), n),
            std::slice::from_raw_parts(b.cast::<T>(), n),
            std::slice::from_raw_parts_mut(out.cast::<T>(), n),
        )
    };
    loops::binary(op, Arg::Slice(a), Arg::Slice(b), out);
}

/// Integers have no vectorised functions: the generic loops run.
macro_rules! no_vector_math {
    ($($t:ty),*) => {$(
        impl VectorMath for $t {
            fn apply(_: UnaryOp, _: &[$t], _: &mut [$t]) -> bool {
                false
            }
        }
    )*};
}
no_vector_math!(i32, i64, u32, u64);

macro_rules! routines {
    ($(($t:ty, $unary:ident, $binary:ident)),*) => {$(
        /// # Safety
        /// As `unary_slice`'s.
        unsafe extern "C" fn $unary(op: u32, a: *const u8, _: *const u8, out: *mut u8, n: usize) {
            // Nothing may unwind into generated code.
            let _ = std::panic::catch_unwind(|| {
                // SAFETY: the generated code passes its stack buffers of `n` values.
                unsafe { unary_slice::<$t>(op, a, out, n) }
            });
        }

        /// # Safety
        /// As `binary_slice`'s.
        unsafe extern "C" fn $binary(op: u32, a: *const u8, b: *const u8, out: *mut u8, n: usize) {
            let _ = std::panic::catch_unwind(|| {
                // SAFETY: the generated code passes its stack buffers of `n` values.
                unsafe { binary_slice::<$t>(op, a, b, out, n) }
            });
        }
    )*};
}
routines!(
    (f32, unary_f32, binary_f32),
    (f64, unary_f64, binary_f64),
    (i32, unary_i32, binary_i32),
    (i64, unary_i64, binary_i64),
    (u32, unary_u32, binary_u32),
    (u64, unary_u64, binary_u64)
);

/// One thread's call of a user kernel (`kernel::lowering`): `op` of one
/// value (and a second one, for binary operations) by the loops the
/// machine runs, as the wide loops call them over many.
macro_rules! scalar_routines {
    ($(($t:ty, $unary:ident, $binary:ident)),*) => {$(
        extern "C" fn $unary(op: u32, a: $t) -> $t {
            let mut out = [<$t>::default()];
            // Nothing may unwind into generated code.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                // SAFETY: one value at `a`, room for one at `out`.
                unsafe { unary_slice::<$t>(op, (&a as *const $t).cast(), out.as_mut_ptr().cast(), 1) }
            }));
            out[0]
        }

        extern "C" fn $binary(op: u32, a: $t, b: $t) -> $t {
            let mut out = [<$t>::default()];
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                // SAFETY: one value at each of `a` and `b`, room for one at `out`.
                unsafe {
                    binary_slice::<$t>(
                        op,
                        (&a as *const $t).cast(),
                        (&b as *const $t).cast(),
                        out.as_mut_ptr().cast(),
                        1,
                    )
                }
            }));
            out[0]
        }
    )*};
}
scalar_routines!(
    (f32, unary_scalar_f32, binary_scalar_f32),
    (f64, unary_scalar_f64, binary_scalar_f64),
    (i32, unary_scalar_i32, binary_scalar_i32),
    (i64, unary_scalar_i64, binary_scalar_i64),
    (u32, unary_scalar_u32, binary_scalar_u32),
    (u64, unary_scalar_u64, binary_scalar_u64)
);

/// Calls `call` on the scalar `operands` of `dtype` (one thread of a user
/// kernel): the machine's loop over one value, its result.
pub(super) fn scalar_call(
    b: &mut FunctionBuilder<'_>,
    call_conv: cranelift_codegen::isa::CallConv,
    call: Call,
    dtype: DType,
    operands: &[Value],
) -> Result<Value, Unsupported> {
    let unary = call.operands() == 1;
    if operands.len() != call.operands() {
        return Err("a call with the wrong number of operands");
    }
    let address = match (dtype, unary) {
        (DType::F32, true) => unary_scalar_f32 as *const () as usize,
        (DType::F32, false) => binary_scalar_f32 as *const () as usize,
        (DType::F64, true) => unary_scalar_f64 as *const () as usize,
        (DType::F64, false) => binary_scalar_f64 as *const () as usize,
        (DType::I32, true) => unary_scalar_i32 as *const () as usize,
        (DType::I32, false) => binary_scalar_i32 as *const () as usize,
        (DType::I64, true) => unary_scalar_i64 as *const () as usize,
        (DType::I64, false) => binary_scalar_i64 as *const () as usize,
        (DType::U32, true) => unary_scalar_u32 as *const () as usize,
        (DType::U32, false) => binary_scalar_u32 as *const () as usize,
        (DType::U64, true) => unary_scalar_u64 as *const () as usize,
        (DType::U64, false) => binary_scalar_u64 as *const () as usize,
        _ => return Err("a call of a dtype without routines"),
    };
    let ty = super::support::scalar_type(dtype).ok_or("a call of a dtype without routines")?;
    let mut signature = Signature::new(call_conv);
    signature.params.push(AbiParam::new(types::I32));
    signature
        .params
        .extend(std::iter::repeat_n(AbiParam::new(ty), operands.len()));
    signature.returns.push(AbiParam::new(ty));
    let signature = b.import_signature(signature);
    let mut args: SmallVec<[Value; 3]> = SmallVec::new();
    args.push(b.ins().iconst(types::I32, i64::from(call.index())));
    args.extend_from_slice(operands);
    let callee = b.ins().iconst(types::I64, address as i64);
    let inst = b.ins().call_indirect(signature, callee, &args);
    Ok(b.inst_results(inst)[0])
}

/// The generator's step over `n` counters and keys of u64 (`op`: the
/// index of `philox`, `philox_word` or `philox_pair`).
///
/// # Safety
/// As `binary_slice`'s, for u64.
unsafe extern "C" fn philox_u64(op: u32, a: *const u8, b: *const u8, out: *mut u8, n: usize) {
    let op = match BinaryOp::ALL.get(op as usize) {
        Some(&op @ (BinaryOp::PhiloxWord | BinaryOp::PhiloxPair)) => op,
        _ => BinaryOp::Philox,
    };
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: the generated code passes its stack buffers of `n` values.
        let (counters, keys, out) = unsafe {
            (
                std::slice::from_raw_parts(a.cast::<u64>(), n),
                std::slice::from_raw_parts(b.cast::<u64>(), n),
                std::slice::from_raw_parts_mut(out.cast::<u64>(), n),
            )
        };
        crate::steps::philox_slice(op, counters, keys, out);
    });
}

fn routine(dtype: DType, call: Call) -> Result<Routine, Unsupported> {
    if let (
        Call::Binary(BinaryOp::Philox | BinaryOp::PhiloxWord | BinaryOp::PhiloxPair),
        DType::U64,
    ) = (call, dtype)
    {
        return Ok(philox_u64);
    }
    let is_unary = call.operands() == 1;
    let pick = |u: Routine, b: Routine| if is_unary { u } else { b };
    Ok(match dtype {
        DType::F32 => pick(unary_f32, binary_f32),
        DType::F64 => pick(unary_f64, binary_f64),
        DType::I32 => pick(unary_i32, binary_i32),
        DType::I64 => pick(unary_i64, binary_i64),
        DType::U32 => pick(unary_u32, binary_u32),
        DType::U64 => pick(unary_u64, binary_u64),
        _ => return Err("a call of a dtype without routines"),
    })
}

/// The stack buffer of an iteration's calls: room for two operands and the
/// result of an iteration's elements of 8 bytes.
pub(super) struct Scratch {
    slot: StackSlot,
    pointer: Type,
    /// Bytes of one operand (or the result).
    operand: u32,
}

impl Scratch {
    /// The buffer of calls over at most `elements` elements.
    pub(super) fn new(b: &mut FunctionBuilder<'_>, pointer: Type, elements: usize) -> Scratch {
        let operand = (elements * 8) as u32;
        let slot = b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            3 * operand,
            4,
        ));
        Scratch {
            slot,
            pointer,
            operand,
        }
    }

    /// Stores `lowering`'s group of operand `k` of a call on `dtype`
    /// values, of the sub-iteration starting `element` elements into the
    /// iteration.
    pub(super) fn put(
        &self,
        lowering: &mut Lowering<'_, '_>,
        (k, element): (usize, usize),
        x: &Val,
        dtype: DType,
    ) {
        let base = k as u32 * self.operand + (element * dtype.size()) as u32;
        let at = lowering.offset(dtype) as u32 + base;
        for (p, &v) in x.iter().enumerate() {
            lowering
                .b
                .ins()
                .stack_store(v, self.slot, (at + 16 * p as u32) as i32);
        }
    }

    /// Calls `call` over `n` elements of `dtype` in the buffer.
    pub(super) fn call(
        &self,
        b: &mut FunctionBuilder<'_>,
        call: Call,
        dtype: DType,
        n: usize,
    ) -> Result<(), Unsupported> {
        let routine = routine(dtype, call)?;
        let mut signature = Signature::new(b.func.signature.call_conv);
        signature.params.push(AbiParam::new(types::I32));
        for _ in 0..4 {
            signature.params.push(AbiParam::new(self.pointer));
        }
        let signature = b.import_signature(signature);
        let address = |b: &mut FunctionBuilder<'_>, k: u32| {
            b.ins()
                .stack_addr(self.pointer, self.slot, (k * self.operand) as i32)
        };
        let args: SmallVec<[Value; 5]> = SmallVec::from_buf([
            b.ins().iconst(types::I32, i64::from(call.index())),
            address(b, 0),
            address(b, 1),
            address(b, 2),
            b.ins().iconst(self.pointer, n as i64),
        ]);
        let callee = b.ins().iconst(self.pointer, routine as usize as i64);
        b.ins().call_indirect(signature, callee, &args);
        Ok(())
    }

    /// `lowering`'s group of the result of the last call, of `dtype`, in
    /// the sub-iteration starting `element` elements into the iteration.
    pub(super) fn take(
        &self,
        lowering: &mut Lowering<'_, '_>,
        element: usize,
        dtype: DType,
    ) -> Result<Val, Unsupported> {
        let ty = lowering.ty(dtype)?;
        let at = lowering.offset(dtype) as u32 + 2 * self.operand + (element * dtype.size()) as u32;
        Ok((0..lowering.vectors(dtype))
            .map(|p| {
                lowering
                    .b
                    .ins()
                    .stack_load(ty, self.slot, (at + 16 * p as u32) as i32)
            })
            .collect())
    }
}
