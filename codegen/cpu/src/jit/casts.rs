//! Conversions of the lowering: casts between dtypes (across 32- and
//! 64-bit lanes too) and bools as lane masks of either width.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, InstBuilder, Type, Value};
use lazyfuse_core::DType;
use smallvec::SmallVec;

use super::ops::{little, Lowering, Val};
use super::support::{is_float, is_unsigned, Lanes, Unsupported};

impl Lowering<'_, '_> {
    /// The mask type of a bool of `vectors` vectors (lane masks as wide as
    /// the values compared).
    pub(super) fn mask_type(&self, vectors: usize) -> Type {
        match (self.lanes, vectors) {
            (Lanes::W32, 1) => types::I32X4,
            _ => types::I64X2,
        }
    }

    /// `mask` as a bool of `vectors` vectors: 32-bit lane masks widened to
    /// two of 64-bit lanes, or two narrowed to one (the low halves).
    pub(super) fn mask_to(&mut self, mask: &Val, vectors: usize) -> Result<Val, Unsupported> {
        if !self.vector || mask.len() == vectors {
            return Ok(mask.clone());
        }
        match (mask.len(), vectors) {
            (1, 2) => Ok(SmallVec::from_slice(&[
                self.b.ins().swiden_low(mask[0]),
                self.b.ins().swiden_high(mask[0]),
            ])),
            (2, 1) => Ok(SmallVec::from_elem(self.low_halves(mask[0], mask[1]), 1)),
            _ => Err("a mask of an unexpected width"),
        }
    }

    /// The low 32 bits of every 64-bit lane of `a` then of `b`, as one I32X4.
    fn low_halves(&mut self, a: Value, b: Value) -> Value {
        let v = self.shuffle_bytes(
            a,
            b,
            [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27],
        );
        self.b.ins().bitcast(types::I32X4, little(), v)
    }

    /// The bytes of `a` (0-15) and `b` (16-31) that `order` lists, as one I8X16.
    fn shuffle_bytes(&mut self, a: Value, b: Value, order: [u8; 16]) -> Value {
        let order = self
            .b
            .func
            .dfg
            .immediates
            .push(cranelift_codegen::ir::ConstantData::from(order.to_vec()));
        let (a, b) = (
            self.b.ins().bitcast(types::I8X16, little(), a),
            self.b.ins().bitcast(types::I8X16, little(), b),
        );
        self.b.ins().shuffle(a, b, order)
    }

    /// `x as to` by the casting rules of `core::element` (through `Wide`):
    /// integers wrap, floats saturate into integers (NaN to 0), a number is
    /// true when it is not 0 (NaN is true), and `true` is 1.
    pub(super) fn cast(&mut self, x: &Val, from: DType, to: DType) -> Result<Val, Unsupported> {
        if from == to {
            return Ok(x.clone());
        }
        if to == DType::Bool {
            let ty = self.ty(from)?;
            let zero = self.constant(from, 0.0, ty);
            return Ok(if is_float(from) {
                self.fcmp(FloatCC::NotEqual, x, &zero)
            } else {
                self.icmp(IntCC::NotEqual, x, &zero)
            });
        }
        let ty = self.ty(to)?;
        if from == DType::Bool {
            let one = self.constant(to, 1.0, ty);
            if !self.vector {
                let zero = self.constant(to, 0.0, ty);
                return self.select(x, &one, &zero, to);
            }
            // A mask and the bits of 1: 1 where true, 0 where false.
            let x = self.mask_to(x, one.len())?;
            let mask_type = self.mask_type(one.len());
            return Ok(x
                .iter()
                .zip(&one)
                .map(|(&m, &o)| {
                    let bits = self.b.ins().bitcast(mask_type, little(), o);
                    let bits = self.b.ins().band(m, bits);
                    if ty == mask_type {
                        bits
                    } else {
                        self.b.ins().bitcast(ty, little(), bits)
                    }
                })
                .collect());
        }
        if from.size() == to.size() {
            let unsigned = is_unsigned(from) || is_unsigned(to);
            if self.vector && from == DType::F64 && !is_float(to) {
                return Ok(self.f64_to_int_lanes(x, ty, unsigned));
            }
            return Ok(match (is_float(from), is_float(to), unsigned) {
                // Same-width integers are the same bits.
                (false, false, _) => x.clone(),
                (false, true, false) => self.map1(x, |b, v| b.ins().fcvt_from_sint(ty, v)),
                (false, true, true) => self.map1(x, |b, v| b.ins().fcvt_from_uint(ty, v)),
                (true, _, false) => self.map1(x, |b, v| b.ins().fcvt_to_sint_sat(ty, v)),
                (true, _, true) => self.map1(x, |b, v| b.ins().fcvt_to_uint_sat(ty, v)),
            });
        }
        if !self.vector {
            return Ok(match (from, to) {
                (DType::F32, DType::F64) => self.map1(x, |b, v| b.ins().fpromote(ty, v)),
                (DType::F64, DType::F32) => self.map1(x, |b, v| b.ins().fdemote(ty, v)),
                (DType::I32, DType::F64) => self.map1(x, |b, v| b.ins().fcvt_from_sint(ty, v)),
                (DType::U32, DType::F64) => self.map1(x, |b, v| b.ins().fcvt_from_uint(ty, v)),
                (DType::I32, _) => self.map1(x, |b, v| b.ins().sextend(ty, v)),
                (DType::U32, _) => self.map1(x, |b, v| b.ins().uextend(ty, v)),
                (DType::I64 | DType::U64, _) => self.map1(x, |b, v| b.ins().ireduce(ty, v)),
                _ => return Err("a cast the JIT does not compile"),
            });
        }
        // Across widths: one vector of 32-bit lanes is two of 64-bit lanes.
        let halves = |s: &mut Self, v: Value, vty: Type| [v, s.high_half(v, vty)];
        Ok(match (from, to, x.as_slice()) {
            (DType::F32, DType::F64, &[v]) => halves(self, v, types::F32X4)
                .iter()
                .map(|&h| self.b.ins().fvpromote_low(h))
                .collect(),
            // Widened to 64-bit integers, then converted for f64.
            (DType::I32 | DType::U32, _, &[v]) => {
                let signed = from == DType::I32;
                let halves = match signed {
                    true => [self.b.ins().swiden_low(v), self.b.ins().swiden_high(v)],
                    false => [self.b.ins().uwiden_low(v), self.b.ins().uwiden_high(v)],
                };
                halves
                    .iter()
                    .map(|&h| match (to, signed) {
                        (DType::F64, true) => self.b.ins().fcvt_from_sint(ty, h),
                        (DType::F64, false) => self.b.ins().fcvt_from_uint(ty, h),
                        _ => h,
                    })
                    .collect()
            }
            (DType::F64, DType::F32, &[a, b]) => {
                let (a, b) = (self.b.ins().fvdemote(a), self.b.ins().fvdemote(b));
                let joined = self.low_lanes(a, b);
                SmallVec::from_elem(self.b.ins().bitcast(ty, little(), joined), 1)
            }
            (DType::I64 | DType::U64, _, &[a, b]) => {
                let joined = self.low_halves(a, b);
                SmallVec::from_elem(joined, 1)
            }
            _ => return Err("a cast the JIT does not compile"),
        })
    }

    /// Lanes 2 and 3 of `v` (of type `ty`, 4 lanes) moved to lanes 0 and 1.
    /// f64 vectors to 64-bit integer vectors of type `ty`, saturating (NaN
    /// to 0), lane by lane: Cranelift lowers the vector conversion only
    /// with AVX-512, which the JIT does not use.
    fn f64_to_int_lanes(&mut self, x: &Val, ty: Type, unsigned: bool) -> Val {
        let lane_type = ty.lane_type();
        x.iter()
            .map(|&v| {
                let mut out: Option<Value> = None;
                for lane in 0..ty.lane_count() as u8 {
                    let element = self.b.ins().extractlane(v, lane);
                    let converted = match unsigned {
                        true => self.b.ins().fcvt_to_uint_sat(lane_type, element),
                        false => self.b.ins().fcvt_to_sint_sat(lane_type, element),
                    };
                    out = Some(match out {
                        None => self.b.ins().scalar_to_vector(ty, converted),
                        Some(o) => self.b.ins().insertlane(o, converted, lane),
                    });
                }
                out.unwrap_or(v)
            })
            .collect()
    }

    fn high_half(&mut self, v: Value, ty: Type) -> Value {
        let moved = self.shuffle_bytes(
            v,
            v,
            [8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15],
        );
        self.b.ins().bitcast(ty, little(), moved)
    }

    /// Lanes 0 and 1 of `a` then of `b` (4-lane vectors), as one I8X16.
    fn low_lanes(&mut self, a: Value, b: Value) -> Value {
        self.shuffle_bytes(
            a,
            b,
            [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23],
        )
    }
}
