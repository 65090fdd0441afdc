//! The lowering of one loop iteration: loads, every operation of a body
//! as Cranelift instructions on 128-bit vectors (or scalars, in the tail
//! loop), and stores.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, InstBuilder, MemFlags, Type, Value};
use cranelift_frontend::FunctionBuilder;
use lazyfuse_core::{BinaryOp, DType, ReduceOp, UnaryOp};
use lazyfuse_fusion::{Body, Inst};
use smallvec::SmallVec;

use crate::reduce_table::{cpu_reduce, CpuReduce};

use super::support::{
    is_float, is_unsigned, scalar_type, shift_by_one_count, vector_type, Lanes, Unsupported,
};

/// One value over the elements of an iteration: `lower::ELEMENTS` lanes in
/// 128-bit vectors (or masks), or one scalar.
pub(super) type Val = SmallVec<[Value; 8]>;

/// Emits one group of elements of a loop iteration: in the vector loop,
/// [`Lanes::group`] elements (one vector of every 32-bit value, two of
/// every 64-bit one when the body has 32-bit values), in the scalar loop one.
pub(super) struct Lowering<'b, 'f> {
    pub(super) b: &'b mut FunctionBuilder<'f>,
    pub(super) body: &'b Body,
    pub(super) lanes: Lanes,
    pub(super) vector: bool,
    /// Which group of the iteration (0 in the scalar loop).
    pub(super) group: usize,
    pub(super) flags: MemFlags,
}

impl<'b, 'f> Lowering<'b, 'f> {
    /// Scalar lowering, one value per register: a user kernel's thread.
    pub(super) fn scalar(b: &'b mut FunctionBuilder<'f>, body: &'b Body) -> Self {
        Lowering {
            b,
            body,
            lanes: Lanes::W64,
            vector: false,
            group: 0,
            flags: MemFlags::trusted(),
        }
    }
}

/// Flags for bitcasts between vector types of one size.
pub(super) fn little() -> MemFlags {
    MemFlags::new().with_endianness(cranelift_codegen::ir::Endianness::Little)
}

impl Lowering<'_, '_> {
    /// Vectors (or scalars) one value of `dtype` takes in a group.
    pub(super) fn vectors(&self, dtype: DType) -> usize {
        if self.vector {
            (self.lanes.group() * dtype.size() / 16).max(1)
        } else {
            1
        }
    }

    pub(super) fn ty(&self, dtype: DType) -> Result<Type, Unsupported> {
        if self.vector {
            vector_type(dtype).ok_or("dtype")
        } else {
            scalar_type(dtype).ok_or("dtype")
        }
    }

    /// Lowers instructions `range` of the body for this group, appending
    /// to `values` (which holds the values before them). Operations
    /// compiled as calls are the caller's (`callout`): none is in `range`.
    pub(super) fn lower_range(
        &mut self,
        values: &mut Vec<Val>,
        range: std::ops::Range<usize>,
        i: Value,
        bases: &[Option<Value>],
        broadcast: &[Option<(Value, Val)>],
    ) -> Result<(), Unsupported> {
        let body = self.body;
        for k in range {
            let dtype = body.dtypes[k];
            let value = match &body.insts[k] {
                Inst::Load(_) | Inst::Iota(_) | Inst::Arg(_) => match (&broadcast[k], bases[k]) {
                    (Some((x, v)), _) => {
                        if self.vector {
                            SmallVec::from_elem(v[0], self.vectors(dtype))
                        } else {
                            SmallVec::from_elem(*x, 1)
                        }
                    }
                    (None, Some(base)) => self.load(base, i, dtype)?,
                    (None, None) => return Err("a leaf without a place"),
                },
                Inst::Unary(op, a) => self.unary(*op, &values[a.index()], body.dtype(*a), dtype)?,
                Inst::Binary(op, a, b) if shift_by_one_count(body, k) => {
                    let (count, _) = broadcast[b.index()]
                        .as_ref()
                        .ok_or("a shift count without its value")?;
                    self.shift(*op, &values[a.index()], *count, body.dtype(*a))?
                }
                Inst::Binary(op, a, b) => {
                    self.binary(*op, &values[a.index()], &values[b.index()], body.dtype(*a))?
                }
                Inst::Select(c, a, b) => self.select(
                    &values[c.index()],
                    &values[a.index()],
                    &values[b.index()],
                    dtype,
                )?,
                Inst::Cast(a) => self.cast(&values[a.index()], body.dtype(*a), dtype)?,
                _ => return Err("an operation the JIT does not compile"),
            };
            values.push(value);
        }
        Ok(())
    }

    /// Stores this group's `outputs` (`(value, slot)`) of `values`.
    pub(super) fn store_outputs(
        &mut self,
        values: &[Val],
        i: Value,
        bases: &[Option<Value>],
        outputs: &[(usize, usize)],
    ) -> Result<(), Unsupported> {
        for &(v, slot) in outputs {
            let base = bases
                .get(slot)
                .copied()
                .flatten()
                .ok_or("an output without a place")?;
            self.store(base, i, self.body.dtypes[v], &values[v])?;
        }
        Ok(())
    }

    /// `x < acc ? acc : x` for `Max` (`acc < x ? acc : x` for `Min`), lane
    /// by lane: one `maxps`/`minps` (the patterns Cranelift matches), which
    /// on ties keeps `x`, as `binary` does; a NaN `x` goes into the
    /// accumulator and a NaN accumulator may be dropped again (the caller
    /// tracks NaN arguments in a mask).
    pub(super) fn min_max(
        &mut self,
        op: ReduceOp,
        acc: &Val,
        x: &Val,
        dtype: DType,
    ) -> Result<Val, Unsupported> {
        let CpuReduce::Extreme { max } = cpu_reduce(op) else {
            return Err("min_max of an operation that is no extreme");
        };
        let ty = self.ty(dtype)?;
        let little = MemFlags::new().with_endianness(cranelift_codegen::ir::Endianness::Little);
        Ok(acc
            .iter()
            .zip(x)
            .map(|(&a, &v)| {
                let keep = match max {
                    true => self.b.ins().fcmp(FloatCC::LessThan, v, a),
                    false => self.b.ins().fcmp(FloatCC::LessThan, a, v),
                };
                let mask = self.b.ins().bitcast(ty, little, keep);
                self.b.ins().bitselect(mask, a, v)
            })
            .collect())
    }

    /// `acc[i..] = op(acc[i..], value)` for the accumulator array at `acc`.
    pub(super) fn accumulate(
        &mut self,
        acc: Value,
        i: Value,
        value: usize,
        op: ReduceOp,
        x: &Val,
    ) -> Result<(), Unsupported> {
        let dtype = self
            .body
            .dtypes
            .get(value)
            .copied()
            .ok_or("a reduced value outside the body")?;
        let old = self.load(acc, i, dtype)?;
        let new = self.binary(op.combiner(), &old, x, dtype)?;
        self.store(acc, i, dtype, &new)
    }

    /// Byte offset of this group's elements of `dtype` from the iteration's.
    pub(super) fn offset(&self, dtype: DType) -> i32 {
        if self.vector {
            (self.group * self.lanes.group() * dtype.size()) as i32
        } else {
            0
        }
    }

    pub(super) fn address(&mut self, base: Value, i: Value, dtype: DType) -> Value {
        // A shift (sizes are powers of two) folds into an x86 address.
        let offset = self
            .b
            .ins()
            .ishl_imm(i, dtype.size().trailing_zeros() as i64);
        self.b.ins().iadd(base, offset)
    }

    pub(super) fn load(&mut self, base: Value, i: Value, dtype: DType) -> Result<Val, Unsupported> {
        let ty = self.ty(dtype)?;
        let address = self.address(base, i, dtype);
        let at = self.offset(dtype);
        Ok((0..self.vectors(dtype))
            .map(|p| {
                self.b
                    .ins()
                    .load(ty, self.flags, address, at + (p * 16) as i32)
            })
            .collect())
    }

    pub(super) fn store(
        &mut self,
        base: Value,
        i: Value,
        dtype: DType,
        value: &Val,
    ) -> Result<(), Unsupported> {
        let address = self.address(base, i, dtype);
        let at = self.offset(dtype);
        for (p, &v) in value.iter().enumerate() {
            self.b
                .ins()
                .store(self.flags, v, address, at + (p * 16) as i32);
        }
        Ok(())
    }

    pub(super) fn map1(
        &mut self,
        a: &Val,
        f: impl Fn(&mut FunctionBuilder<'_>, Value) -> Value,
    ) -> Val {
        a.iter().map(|&x| f(self.b, x)).collect()
    }

    pub(super) fn map2(
        &mut self,
        a: &Val,
        b: &Val,
        f: impl Fn(&mut FunctionBuilder<'_>, Value, Value) -> Value,
    ) -> Val {
        a.iter().zip(b).map(|(&x, &y)| f(self.b, x, y)).collect()
    }

    /// A bool from a comparison result: vector masks are kept; scalar
    /// results (0/1 bytes) are kept as they are.
    pub(super) fn fcmp(&mut self, cc: FloatCC, a: &Val, b: &Val) -> Val {
        self.map2(a, b, |b, x, y| b.ins().fcmp(cc, x, y))
    }

    pub(super) fn icmp(&mut self, cc: IntCC, a: &Val, b: &Val) -> Val {
        self.map2(a, b, |b, x, y| b.ins().icmp(cc, x, y))
    }

    pub(super) fn or(&mut self, a: &Val, b: &Val) -> Val {
        self.map2(a, b, |b, x, y| b.ins().bor(x, y))
    }

    pub(super) fn not(&mut self, a: &Val) -> Val {
        if self.vector {
            self.map1(a, |b, x| b.ins().bnot(x))
        } else {
            self.map1(a, |b, x| b.ins().bxor_imm(x, 1))
        }
    }

    /// `cond ? a : b` lane by lane, for values of `dtype`.
    pub(super) fn select(
        &mut self,
        cond: &Val,
        a: &Val,
        b: &Val,
        dtype: DType,
    ) -> Result<Val, Unsupported> {
        if !self.vector {
            return Ok(cond
                .iter()
                .zip(a.iter().zip(b))
                .map(|(&c, (&x, &y))| self.b.ins().select(c, x, y))
                .collect());
        }
        if dtype == DType::Bool {
            let (a, b) = (self.mask_to(a, cond.len())?, self.mask_to(b, cond.len())?);
            return Ok(cond
                .iter()
                .zip(a.iter().zip(&b))
                .map(|(&c, (&x, &y))| self.b.ins().bitselect(c, x, y))
                .collect());
        }
        let ty = self.ty(dtype)?;
        let cond = self.mask_to(cond, a.len())?;
        let mask_type = self.mask_type(a.len());
        Ok(cond
            .iter()
            .zip(a.iter().zip(b))
            .map(|(&c, (&x, &y))| {
                let mask = if ty == mask_type {
                    c
                } else {
                    self.b.ins().bitcast(ty, little(), c)
                };
                self.b.ins().bitselect(mask, x, y)
            })
            .collect())
    }

    pub(super) fn unary(
        &mut self,
        op: UnaryOp,
        a: &Val,
        from: DType,
        dtype: DType,
    ) -> Result<Val, Unsupported> {
        let float = is_float(from);
        Ok(match op {
            UnaryOp::LogicalNot => self.not(a),
            UnaryOp::IsNan => self.fcmp(FloatCC::Unordered, a, a),
            UnaryOp::IsInf | UnaryOp::IsFinite => {
                let ty = self.ty(from)?;
                let infinity = self.constant(from, f64::INFINITY, ty);
                let magnitude = self.map1(a, |b, x| b.ins().fabs(x));
                let cc = if op == UnaryOp::IsInf {
                    FloatCC::Equal
                } else {
                    FloatCC::LessThan
                };
                self.fcmp(cc, &magnitude, &infinity)
            }
            UnaryOp::Neg if float => self.map1(a, |b, x| b.ins().fneg(x)),
            UnaryOp::Neg => self.map1(a, |b, x| b.ins().ineg(x)),
            UnaryOp::Abs if float => self.map1(a, |b, x| b.ins().fabs(x)),
            UnaryOp::Abs => {
                let ty = self.ty(dtype)?;
                let zero = self.constant(dtype, 0.0, ty);
                let negative = self.icmp(IntCC::SignedLessThan, a, &zero);
                let negated = self.map1(a, |b, x| b.ins().ineg(x));
                self.select(&negative, &negated, a, dtype)?
            }
            UnaryOp::Square if float => self.map1(a, |b, x| b.ins().fmul(x, x)),
            UnaryOp::Square => self.map1(a, |b, x| b.ins().imul(x, x)),
            UnaryOp::Sqrt => self.map1(a, |b, x| b.ins().sqrt(x)),
            UnaryOp::Floor => self.map1(a, |b, x| b.ins().floor(x)),
            UnaryOp::Ceil => self.map1(a, |b, x| b.ins().ceil(x)),
            UnaryOp::Trunc => self.map1(a, |b, x| b.ins().trunc(x)),
            UnaryOp::Round | UnaryOp::Rint => self.map1(a, |b, x| b.ins().nearest(x)),
            _ => return Err("an operation the JIT does not compile"),
        })
    }

    /// `value` of `dtype` in every lane (type `ty`).
    pub(super) fn constant(&mut self, dtype: DType, value: f64, ty: Type) -> Val {
        let x = match dtype {
            DType::F32 => self.b.ins().f32const(value as f32),
            DType::F64 => self.b.ins().f64const(value),
            DType::I32 | DType::U32 => self.b.ins().iconst(types::I32, value as i64),
            _ => self.b.ins().iconst(types::I64, value as i64),
        };
        let v = if self.vector {
            self.b.ins().splat(ty, x)
        } else {
            x
        };
        SmallVec::from_elem(v, self.vectors(dtype))
    }

    pub(super) fn binary(
        &mut self,
        op: BinaryOp,
        a: &Val,
        b: &Val,
        from: DType,
    ) -> Result<Val, Unsupported> {
        let float = is_float(from);
        let unsigned = is_unsigned(from);
        if from == DType::Bool {
            return self.boolean(op, a, b);
        }
        Ok(match op {
            BinaryOp::Add if float => self.map2(a, b, |b, x, y| b.ins().fadd(x, y)),
            BinaryOp::Sub if float => self.map2(a, b, |b, x, y| b.ins().fsub(x, y)),
            BinaryOp::Mul if float => self.map2(a, b, |b, x, y| b.ins().fmul(x, y)),
            BinaryOp::Div if float => self.map2(a, b, |b, x, y| b.ins().fdiv(x, y)),
            BinaryOp::Add => self.map2(a, b, |b, x, y| b.ins().iadd(x, y)),
            BinaryOp::BitwiseAnd => self.map2(a, b, |b, x, y| b.ins().band(x, y)),
            BinaryOp::BitwiseOr => self.map2(a, b, |b, x, y| b.ins().bor(x, y)),
            BinaryOp::BitwiseXor => self.map2(a, b, |b, x, y| b.ins().bxor(x, y)),
            BinaryOp::Sub => self.map2(a, b, |b, x, y| b.ins().isub(x, y)),
            BinaryOp::Mul => self.map2(a, b, |b, x, y| b.ins().imul(x, y)),
            BinaryOp::Minimum | BinaryOp::Maximum if float => {
                // a.is_nan() || a < b ? a : b (or a > b): NaN in either propagates.
                let cc = if op == BinaryOp::Minimum {
                    FloatCC::LessThan
                } else {
                    FloatCC::GreaterThan
                };
                let nan = self.fcmp(FloatCC::Unordered, a, a);
                let wins = self.fcmp(cc, a, b);
                let take_a = self.or(&nan, &wins);
                self.select(&take_a, a, b, from)?
            }
            BinaryOp::Minimum | BinaryOp::Maximum => {
                let cc = match (op == BinaryOp::Minimum, unsigned) {
                    (true, false) => IntCC::SignedLessThan,
                    (true, true) => IntCC::UnsignedLessThan,
                    (false, false) => IntCC::SignedGreaterThan,
                    (false, true) => IntCC::UnsignedGreaterThan,
                };
                let take_a = self.icmp(cc, a, b);
                self.select(&take_a, a, b, from)?
            }
            BinaryOp::Eq
            | BinaryOp::Ne
            | BinaryOp::Lt
            | BinaryOp::Le
            | BinaryOp::Gt
            | BinaryOp::Ge
                if float =>
            {
                let cc = match op {
                    BinaryOp::Eq => FloatCC::Equal,
                    BinaryOp::Ne => FloatCC::NotEqual,
                    BinaryOp::Lt => FloatCC::LessThan,
                    BinaryOp::Le => FloatCC::LessThanOrEqual,
                    BinaryOp::Gt => FloatCC::GreaterThan,
                    _ => FloatCC::GreaterThanOrEqual,
                };
                self.fcmp(cc, a, b)
            }
            BinaryOp::Eq
            | BinaryOp::Ne
            | BinaryOp::Lt
            | BinaryOp::Le
            | BinaryOp::Gt
            | BinaryOp::Ge => {
                let cc = match (op, unsigned) {
                    (BinaryOp::Eq, _) => IntCC::Equal,
                    (BinaryOp::Ne, _) => IntCC::NotEqual,
                    (BinaryOp::Lt, false) => IntCC::SignedLessThan,
                    (BinaryOp::Lt, true) => IntCC::UnsignedLessThan,
                    (BinaryOp::Le, false) => IntCC::SignedLessThanOrEqual,
                    (BinaryOp::Le, true) => IntCC::UnsignedLessThanOrEqual,
                    (BinaryOp::Gt, false) => IntCC::SignedGreaterThan,
                    (BinaryOp::Gt, true) => IntCC::UnsignedGreaterThan,
                    (_, false) => IntCC::SignedGreaterThanOrEqual,
                    (_, true) => IntCC::UnsignedGreaterThanOrEqual,
                };
                self.icmp(cc, a, b)
            }
            BinaryOp::FloorDiv | BinaryOp::Rem | BinaryOp::Fmod if !float => {
                self.integer_division(op, a, b, unsigned)?
            }
            _ => return Err("an operation the JIT does not compile"),
        })
    }

    /// `a << count` or `a >> count` by one `count` (a scalar) for every
    /// lane, as `core::semantics` shifts: a count past the width (or
    /// negative, read as unsigned) gives 0, or the sign in every bit for a
    /// signed value shifted right. The hardware takes the count modulo the
    /// width, so the range is checked once, on the scalar.
    pub(super) fn shift(
        &mut self,
        op: BinaryOp,
        a: &Val,
        count: Value,
        from: DType,
    ) -> Result<Val, Unsupported> {
        let scalar = scalar_type(from).ok_or("dtype")?;
        let bits = (from.size() * 8) as i64;
        let b = &mut *self.b;
        let in_range = b.ins().icmp_imm(IntCC::UnsignedLessThan, count, bits);
        if op == BinaryOp::RightShift && !is_unsigned(from) {
            // Past the width the sign fills every bit: a shift by width - 1.
            let last = b.ins().iconst(scalar, bits - 1);
            let count = b.ins().select(in_range, count, last);
            return Ok(self.map1(a, |b, x| b.ins().sshr(x, count)));
        }
        let (ones, zero) = (b.ins().iconst(scalar, -1), b.ins().iconst(scalar, 0));
        let keep = b.ins().select(in_range, ones, zero);
        let keep = if self.vector {
            let ty = vector_type(from).ok_or("dtype")?;
            b.ins().splat(ty, keep)
        } else {
            keep
        };
        Ok(self.map1(a, |b, x| {
            let shifted = if op == BinaryOp::LeftShift {
                b.ins().ishl(x, count)
            } else {
                b.ins().ushr(x, count)
            };
            b.ins().band(shifted, keep)
        }))
    }

    /// NumPy's integer `//`, `%` and C's `fmod` as `core::semantics` has
    /// them: division by zero gives 0 and `MIN // -1` wraps to `MIN`
    /// (where the hardware's division would trap). Scalars only: x86 has
    /// no vector integer division, so vector lowerings fail here and their
    /// callers compile without vectors.
    fn integer_division(
        &mut self,
        op: BinaryOp,
        a: &Val,
        b: &Val,
        unsigned: bool,
    ) -> Result<Val, Unsupported> {
        let (&[x], &[y]) = (a.as_slice(), b.as_slice()) else {
            return Err("integer division in vectors");
        };
        if self.vector {
            return Err("integer division in vectors");
        }
        let b = &mut *self.b;
        let ty = b.func.dfg.value_type(x);
        let (zero, one) = (b.ins().iconst(ty, 0), b.ins().iconst(ty, 1));
        let by_zero = b.ins().icmp_imm(IntCC::Equal, y, 0);
        let divisor = b.ins().select(by_zero, one, y);
        let result = if unsigned {
            match op {
                BinaryOp::FloorDiv => b.ins().udiv(x, divisor),
                _ => b.ins().urem(x, divisor),
            }
        } else {
            // `x / -1` is `-x` (wrapping); dividing by 1 instead avoids the trap.
            let by_minus_one = b.ins().icmp_imm(IntCC::Equal, y, -1);
            let divisor = b.ins().select(by_minus_one, one, divisor);
            let quotient = b.ins().sdiv(x, divisor);
            let negated = b.ins().ineg(x);
            let quotient = b.ins().select(by_minus_one, negated, quotient);
            let remainder = b.ins().srem(x, divisor);
            let remainder = b.ins().select(by_minus_one, zero, remainder);
            // Floor, not truncation: a remainder whose sign differs from
            // the divisor's moves the quotient down and the remainder by y.
            let nonzero = b.ins().icmp_imm(IntCC::NotEqual, remainder, 0);
            let signs = b.ins().bxor(remainder, y);
            let differ = b.ins().icmp_imm(IntCC::SignedLessThan, signs, 0);
            let adjust = b.ins().band(nonzero, differ);
            match op {
                BinaryOp::FloorDiv => {
                    let lower = b.ins().iadd_imm(quotient, -1);
                    b.ins().select(adjust, lower, quotient)
                }
                BinaryOp::Rem => {
                    let moved = b.ins().iadd(remainder, y);
                    b.ins().select(adjust, moved, remainder)
                }
                _ => remainder,
            }
        };
        Ok(SmallVec::from_elem(
            b.ins().select(by_zero, zero, result),
            1,
        ))
    }

    /// Operations on bools (masks or 0/1 bytes): `core::semantics::logical`.
    pub(super) fn boolean(&mut self, op: BinaryOp, a: &Val, b: &Val) -> Result<Val, Unsupported> {
        let b = &self.mask_to(b, a.len())?;
        let and = |s: &mut Self, x: &Val, y: &Val| s.map2(x, y, |b, p, q| b.ins().band(p, q));
        let xor = |s: &mut Self, x: &Val, y: &Val| s.map2(x, y, |b, p, q| b.ins().bxor(p, q));
        Ok(match op {
            BinaryOp::LogicalAnd | BinaryOp::Minimum | BinaryOp::Mul => and(self, a, b),
            BinaryOp::LogicalOr | BinaryOp::Maximum | BinaryOp::Add => self.or(a, b),
            BinaryOp::LogicalXor | BinaryOp::Ne => xor(self, a, b),
            BinaryOp::Eq => {
                let x = xor(self, a, b);
                self.not(&x)
            }
            // false < true.
            BinaryOp::Lt => {
                let not_a = self.not(a);
                and(self, &not_a, b)
            }
            BinaryOp::Le => {
                let not_a = self.not(a);
                self.or(&not_a, b)
            }
            BinaryOp::Gt => {
                let not_b = self.not(b);
                and(self, a, &not_b)
            }
            BinaryOp::Ge => {
                let not_b = self.not(b);
                self.or(a, &not_b)
            }
            _ => return Err("an operation the JIT does not compile"),
        })
    }
}
