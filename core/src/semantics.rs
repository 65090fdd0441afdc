//! The value semantics of every element-wise operation, per element type:
//! the single definition every executor must agree with.
//!
//! - Integers wrap on overflow (`i8::MAX + 1 == i8::MIN`, `abs(i8::MIN) == i8::MIN`).
//! - Integer `//` and `%` by zero give 0 (as NumPy); `%` takes the divisor's
//!   sign; `//` rounds toward -∞.
//! - Integer `**` with a negative exponent gives `1/x^n` truncated (1 for
//!   x = 1, ±1 for x = -1, 0 otherwise) where NumPy raises an error.
//! - Float `//` and `%` are NumPy's `divmod` (`npy_divmod`), bit for bit.
//! - `minimum`/`maximum` propagate NaN; of two equal values (±0) they return
//!   the second for f32/f64 and the first for f16/bf16, exactly as NumPy does.
//! - `f16` and `bf16` compute in `f32` and round once to their type, which for
//!   `+ - * / sqrt` is the correctly rounded result.

use half::{bf16, f16};

use crate::element::Element;
use crate::ops::{BinaryOp, UnaryOp};

mod special;

use special::{erf, erfc, gamma, lgamma};

/// Arithmetic on one element type (integers and floats).
pub trait Arithmetic: Element {
    /// A unary operation that keeps the type (`Neg`, `Abs`, `Sign`, `Square`,
    /// and for floats the math functions and rounding).
    fn unary(op: UnaryOp, x: Self) -> Self;
    /// A binary operation that keeps the type (not comparisons or logical ops).
    fn binary(op: BinaryOp, a: Self, b: Self) -> Self;
    /// `isnan`, `isinf`, `isfinite` (false, false, true for integers).
    fn predicate(op: UnaryOp, x: Self) -> bool;
}

/// Or-patterns of operation groups the value matches below name, each
/// written once: every match stays exhaustive (a new operation compiles
/// only once its group or arm says what it computes), without repeating
/// long lists.
macro_rules! float_only_unary {
    () => {
        UnaryOp::Sqrt
            | UnaryOp::Exp
            | UnaryOp::Exp2
            | UnaryOp::Expm1
            | UnaryOp::Log
            | UnaryOp::Log2
            | UnaryOp::Log10
            | UnaryOp::Log1p
            | UnaryOp::Sin
            | UnaryOp::Cos
            | UnaryOp::Tan
            | UnaryOp::Asin
            | UnaryOp::Acos
            | UnaryOp::Atan
            | UnaryOp::Sinh
            | UnaryOp::Cosh
            | UnaryOp::Tanh
            | UnaryOp::Asinh
            | UnaryOp::Acosh
            | UnaryOp::Atanh
            | UnaryOp::Rint
            | UnaryOp::Cbrt
            | UnaryOp::Erf
            | UnaryOp::Erfc
            | UnaryOp::Gamma
            | UnaryOp::Lgamma
            | UnaryOp::Deg2rad
            | UnaryOp::Rad2deg
    };
}

/// The rounding operations (the identity on integers).
macro_rules! rounding_unary {
    () => {
        UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Trunc | UnaryOp::Round
    };
}

/// The operations that give bool from one operand.
macro_rules! bool_valued_unary {
    () => {
        UnaryOp::LogicalNot | UnaryOp::IsNan | UnaryOp::IsInf | UnaryOp::IsFinite
    };
}

/// The binary operations defined on floats only.
macro_rules! float_only_binary {
    () => {
        BinaryOp::Arctan2
            | BinaryOp::Hypot
            | BinaryOp::Copysign
            | BinaryOp::Logaddexp
            | BinaryOp::Logaddexp2
            | BinaryOp::Heaviside
            | BinaryOp::Nextafter
    };
}

/// The comparisons.
macro_rules! comparison_binary {
    () => {
        BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
    };
}

/// The logical operations.
macro_rules! logical_binary {
    () => {
        BinaryOp::LogicalAnd | BinaryOp::LogicalOr | BinaryOp::LogicalXor
    };
}

/// NumPy's fast scalar powers: `x ** 2` is `square(x)`, and `x ** 0.5` is
/// `sqrt(x)` for f32 and f64 (whose values differ from `pow`'s at `-inf`
/// and `-0.0`; NumPy's float16 loop calls `pow`). The unary operation that
/// `x ** exponent` of a constant `exponent` on `dtype` is, if any: the one
/// rule the simplifier's rewrite and the reference evaluator both follow.
pub fn fast_power(exponent: f64, dtype: crate::DType) -> Option<UnaryOp> {
    match exponent {
        2.0 => Some(UnaryOp::Square),
        0.5 if matches!(dtype, crate::DType::F32 | crate::DType::F64) => Some(UnaryOp::Sqrt),
        _ => None,
    }
}

/// Comparison, shared by every type (bool included).
#[inline]
pub fn compare<T: PartialOrd>(op: BinaryOp, a: T, b: T) -> bool {
    match op {
        BinaryOp::Eq => a == b,
        BinaryOp::Ne => a != b,
        BinaryOp::Lt => a < b,
        BinaryOp::Le => a <= b,
        BinaryOp::Gt => a > b,
        BinaryOp::Ge => a >= b,
        // Not comparisons: callers branch on `is_comparison` first.
        BinaryOp::Add
        | BinaryOp::Sub
        | BinaryOp::Mul
        | BinaryOp::Div
        | BinaryOp::FloorDiv
        | BinaryOp::Rem
        | BinaryOp::Pow
        | BinaryOp::Fmod
        | BinaryOp::Minimum
        | BinaryOp::Maximum
        | BinaryOp::Gcd
        | BinaryOp::Lcm
        | BinaryOp::BitwiseAnd
        | BinaryOp::BitwiseOr
        | BinaryOp::BitwiseXor
        | BinaryOp::LeftShift
        | BinaryOp::RightShift
        | BinaryOp::Philox
        | BinaryOp::PhiloxWord
        | BinaryOp::PhiloxPair
        | logical_binary!()
        | float_only_binary!() => false,
    }
}

/// Logical operations and minimum/maximum on bool.
#[inline]
pub fn logical(op: BinaryOp, a: bool, b: bool) -> bool {
    match op {
        BinaryOp::LogicalAnd | BinaryOp::Minimum | BinaryOp::Mul | BinaryOp::BitwiseAnd => a && b,
        BinaryOp::LogicalOr | BinaryOp::Maximum | BinaryOp::Add | BinaryOp::BitwiseOr => a || b,
        BinaryOp::LogicalXor | BinaryOp::Ne | BinaryOp::BitwiseXor => a != b,
        BinaryOp::Eq => a == b,
        BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => compare(op, a, b),
        // Normalisation gives bool none of these (typing rejects the rest):
        // the first operand.
        BinaryOp::Sub
        | BinaryOp::Div
        | BinaryOp::FloorDiv
        | BinaryOp::Rem
        | BinaryOp::Pow
        | BinaryOp::Fmod
        | BinaryOp::Gcd
        | BinaryOp::Lcm
        | BinaryOp::LeftShift
        | BinaryOp::RightShift
        | BinaryOp::Philox
        | BinaryOp::PhiloxWord
        | BinaryOp::PhiloxPair
        | float_only_binary!() => a,
    }
}

macro_rules! int_arithmetic {
    ($($t:ty),*) => {$(
        impl Arithmetic for $t {
            #[inline]
            fn unary(op: UnaryOp, x: Self) -> Self {
                match op {
                    UnaryOp::Neg => x.wrapping_neg(),
                    UnaryOp::Abs => int_abs(x),
                    UnaryOp::Sign => int_sign(x),
                    UnaryOp::Square => x.wrapping_mul(x),
                    UnaryOp::Reciprocal => if x == 0 { 0 } else { (1 as $t).wrapping_div(x) },
                    UnaryOp::Invert => !x,
                    UnaryOp::Popc => x.count_ones() as $t,
                    UnaryOp::Clz => x.leading_zeros() as $t,
                    UnaryOp::Ffs => if x == 0 { 0 } else { x.trailing_zeros() as $t + 1 },
                    UnaryOp::Brev => x.reverse_bits(),
                    // Rounding is the identity on integers.
                    rounding_unary!() => x,
                    // Float-only operations never reach integers (normalisation
                    // casts first); the predicates and `logical_not` give bool
                    // (`predicate`, and a comparison with 0).
                    float_only_unary!() | bool_valued_unary!() => x,
                }
            }

            #[inline]
            fn binary(op: BinaryOp, a: Self, b: Self) -> Self {
                match op {
                    BinaryOp::Add => a.wrapping_add(b),
                    BinaryOp::Sub => a.wrapping_sub(b),
                    BinaryOp::Mul => a.wrapping_mul(b),
                    BinaryOp::FloorDiv => int_floor_div(a, b),
                    BinaryOp::Rem => int_rem(a, b),
                    BinaryOp::Pow => int_pow(a, b),
                    BinaryOp::Minimum => if a < b { a } else { b },
                    BinaryOp::Maximum => if a > b { a } else { b },
                    // True division of integers is computed in f64 (normalisation casts first).
                    BinaryOp::Div => int_floor_div(a, b),
                    BinaryOp::Fmod => if b == 0 { 0 } else { a.wrapping_rem(b) },
                    BinaryOp::BitwiseAnd => a & b,
                    BinaryOp::BitwiseOr => a | b,
                    BinaryOp::BitwiseXor => a ^ b,
                    // A shift by a negative count is one by a huge count (as NumPy).
                    BinaryOp::LeftShift if (b as u64) < u64::from(<$t>::BITS) => a << (b as u32),
                    BinaryOp::LeftShift => 0,
                    BinaryOp::RightShift if (b as u64) < u64::from(<$t>::BITS) => a >> (b as u32),
                    BinaryOp::RightShift => if (a as i128) < 0 { !0 } else { 0 },
                    BinaryOp::Philox => crate::philox::bits(a as u64, b as u64) as $t,
                    BinaryOp::PhiloxWord => crate::philox::word(a as u64, b as u64) as $t,
                    BinaryOp::PhiloxPair => crate::philox::pair(a as u64, b as u64) as $t,
                    BinaryOp::Gcd => gcd_of_magnitudes(magnitude(a), magnitude(b)) as $t,
                    BinaryOp::Lcm => lcm_of_magnitudes(magnitude(a), magnitude(b)) as $t,
                    // Comparisons and logical operations give bool (their
                    // own functions compute them); float-only operations
                    // never reach integers (normalisation casts first).
                    comparison_binary!() | logical_binary!() | float_only_binary!() => a,
                }
            }

            #[inline]
            fn predicate(op: UnaryOp, _x: Self) -> bool {
                op == UnaryOp::IsFinite
            }
        }
    )*};
}

/// `|x|` as a u64 (`|MIN|` included, exactly); computed as NumPy's
/// `gcd`/`lcm` do, in the unsigned type of `x`'s width, whose value this is.
#[inline]
fn magnitude(x: impl Into<i128>) -> u64 {
    x.into().unsigned_abs() as u64
}

/// Euclid's greatest common divisor (NumPy's `npy_gcdu`).
#[inline]
fn gcd_of_magnitudes(mut a: u64, mut b: u64) -> u64 {
    while a != 0 {
        (a, b) = (b % a, a);
    }
    b
}

/// NumPy's `npy_lcmu`: `a / gcd * b`, 0 when the gcd is; the product wraps
/// (the caller's cast to its type keeps the low bits, as NumPy's
/// arithmetic in that type would).
#[inline]
fn lcm_of_magnitudes(a: u64, b: u64) -> u64 {
    match gcd_of_magnitudes(a, b) {
        0 => 0,
        g => (a / g).wrapping_mul(b),
    }
}

#[inline]
fn int_abs<T: IntOps>(x: T) -> T {
    if x < T::ZERO {
        x.wrapping_neg()
    } else {
        x
    }
}

#[inline]
fn int_sign<T: IntOps>(x: T) -> T {
    if x > T::ZERO {
        T::ONE
    } else if x < T::ZERO {
        T::ZERO.wrapping_sub(T::ONE)
    } else {
        T::ZERO
    }
}

#[inline]
fn int_floor_div<T: IntOps>(a: T, b: T) -> T {
    if b == T::ZERO {
        return T::ZERO;
    }
    let q = a.wrapping_div(b);
    // Round toward -∞ when the signs differ and the division was inexact.
    if (a.wrapping_rem(b) != T::ZERO) && ((a < T::ZERO) != (b < T::ZERO)) {
        q.wrapping_sub(T::ONE)
    } else {
        q
    }
}

#[inline]
fn int_rem<T: IntOps>(a: T, b: T) -> T {
    if b == T::ZERO {
        return T::ZERO;
    }
    let r = a.wrapping_rem(b);
    if r != T::ZERO && ((r < T::ZERO) != (b < T::ZERO)) {
        r.wrapping_add(b)
    } else {
        r
    }
}

#[inline]
fn int_pow<T: IntOps>(base: T, exp: T) -> T {
    if exp < T::ZERO {
        return if base == T::ONE {
            T::ONE
        } else if base == T::ZERO.wrapping_sub(T::ONE) {
            if exp.is_odd() {
                base
            } else {
                T::ONE
            }
        } else {
            T::ZERO
        };
    }
    let mut result = T::ONE;
    let mut base = base;
    let mut exp = exp;
    while exp != T::ZERO {
        if exp.is_odd() {
            result = result.wrapping_mul(base);
        }
        base = base.wrapping_mul(base);
        exp = exp.shr1();
    }
    result
}

/// The integer operations the generic helpers need.
trait IntOps: Copy + PartialOrd {
    const ZERO: Self;
    const ONE: Self;
    fn wrapping_neg(self) -> Self;
    fn wrapping_add(self, o: Self) -> Self;
    fn wrapping_sub(self, o: Self) -> Self;
    fn wrapping_mul(self, o: Self) -> Self;
    fn wrapping_div(self, o: Self) -> Self;
    fn wrapping_rem(self, o: Self) -> Self;
    fn is_odd(self) -> bool;
    fn shr1(self) -> Self;
}

macro_rules! int_ops {
    ($($t:ty),*) => {$(
        impl IntOps for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            #[inline] fn wrapping_neg(self) -> Self { <$t>::wrapping_neg(self) }
            #[inline] fn wrapping_add(self, o: Self) -> Self { <$t>::wrapping_add(self, o) }
            #[inline] fn wrapping_sub(self, o: Self) -> Self { <$t>::wrapping_sub(self, o) }
            #[inline] fn wrapping_mul(self, o: Self) -> Self { <$t>::wrapping_mul(self, o) }
            #[inline] fn wrapping_div(self, o: Self) -> Self { <$t>::wrapping_div(self, o) }
            #[inline] fn wrapping_rem(self, o: Self) -> Self { <$t>::wrapping_rem(self, o) }
            #[inline] fn is_odd(self) -> bool { self & 1 == 1 }
            #[inline] fn shr1(self) -> Self { self >> 1 }
        }
    )*};
}
int_ops!(i8, i16, i32, i64, u8, u16, u32, u64);
int_arithmetic!(i8, i16, i32, i64, u8, u16, u32, u64);

/// The float value column of `unary_table!` as one `match`.
macro_rules! float_unary_values {
    ([$op:ident, $input:ident, $t:ty] $($(#[$doc:meta])* $variant:ident => $numpy:literal, $method:ident, $class:ident, |$x:ident| $value:expr;)*) => {
        match $op {
            $(UnaryOp::$variant => {
                let $x: $t = $input;
                $value
            })*
        }
    };
}

/// The float value column of `binary_table!` as one `match`.
macro_rules! float_binary_values {
    ([$op:ident, $left:ident, $right:ident, $t:ty] $($(#[$doc:meta])* $variant:ident => $numpy:literal, [$($method:ident)?], $class:ident, [$($symbol:literal)?], |$a:ident, $b:ident| $value:expr;)*) => {
        match $op {
            $(BinaryOp::$variant => {
                let ($a, $b): ($t, $t) = ($left, $right);
                $value
            })*
        }
    };
}

macro_rules! float_arithmetic {
    ($($t:ident in $module:ident),*) => {$(
        mod $module {
            use super::*;
            // For the tables' values (`deg2rad`, `logaddexp`): π in this
            // type, as NumPy's `NPY_PI`, and the logarithms of 2.
            use core::$t::consts::{LN_2, LOG2_E, PI};

            /// The table's value of `op` (predicates and `logical_not`
            /// never reach a float-valued result: their line is `x`).
            #[inline]
            pub(super) fn unary(op: UnaryOp, x: $t) -> $t {
                crate::unary_table!(float_unary_values [op, x, $t])
            }

            /// The table's value of `op` (operations no float reaches —
            /// comparisons, logical, integer and bitwise ones — give `a`).
            #[inline]
            pub(super) fn binary(op: BinaryOp, a: $t, b: $t) -> $t {
                crate::binary_table!(float_binary_values [op, a, b, $t])
            }

            /// NumPy's `npy_logaddexp` (and `2`): the larger operand plus
            /// `log1p_of_exp(|a - b|)`, the log of `1 + base^-|a - b|`;
            /// equal operands (infinities included) give `a + log_of_2`,
            /// a NaN difference NaN.
            #[inline]
            fn logaddexp(a: $t, b: $t, log_of_2: $t, log1p_of_exp: impl Fn($t) -> $t) -> $t {
                if a == b {
                    return a + log_of_2;
                }
                let d = a - b;
                if d > 0.0 {
                    a + log1p_of_exp(d)
                } else if d <= 0.0 {
                    b + log1p_of_exp(-d)
                } else {
                    d
                }
            }

            /// C's `nextafter` (NumPy's for f32/f64): `b` when they are
            /// equal, the smallest subnormal with `b`'s sign after zero.
            #[inline]
            fn nextafter(a: $t, b: $t) -> $t {
                if a.is_nan() || b.is_nan() {
                    return a + b;
                }
                if a == b {
                    return b;
                }
                if a == 0.0 {
                    return <$t>::from_bits(1).copysign(b);
                }
                let bits = a.to_bits();
                // Away from zero is one more in the bits of the magnitude.
                <$t>::from_bits(if (b > a) == (a > 0.0) { bits + 1 } else { bits - 1 })
            }

            /// NumPy's `npy_divmod`: (floor quotient, remainder with the divisor's sign).
            #[inline]
            pub(super) fn divmod(a: $t, b: $t) -> ($t, $t) {
                let mut rem = a % b;
                if b == 0.0 {
                    return (a / b, rem);
                }
                let mut div = (a - rem) / b;
                if rem != 0.0 {
                    if (b < 0.0) != (rem < 0.0) {
                        rem += b;
                        div -= 1.0;
                    }
                } else {
                    rem = (0.0 as $t).copysign(b);
                }
                let floordiv = if div != 0.0 {
                    let mut f = div.floor();
                    if div - f > 0.5 {
                        f += 1.0;
                    }
                    f
                } else {
                    (0.0 as $t).copysign(a / b)
                };
                (floordiv, rem)
            }

            #[inline]
            pub(super) fn predicate(op: UnaryOp, x: $t) -> bool {
                match op {
                    UnaryOp::IsNan => x.is_nan(),
                    UnaryOp::IsInf => x.is_infinite(),
                    UnaryOp::IsFinite => x.is_finite(),
                    // Not predicates: no caller asks (`is_predicate` first).
                    UnaryOp::Neg
                    | UnaryOp::Abs
                    | UnaryOp::Sign
                    | UnaryOp::Square
                    | UnaryOp::Reciprocal
                    | UnaryOp::Invert
                    | UnaryOp::Popc
                    | UnaryOp::Clz
                    | UnaryOp::Ffs
                    | UnaryOp::Brev
                    | UnaryOp::LogicalNot
                    | rounding_unary!()
                    | float_only_unary!() => false,
                }
            }
        }

        impl Arithmetic for $t {
            #[inline]
            fn unary(op: UnaryOp, x: Self) -> Self {
                $module::unary(op, x)
            }
            #[inline]
            fn binary(op: BinaryOp, a: Self, b: Self) -> Self {
                $module::binary(op, a, b)
            }
            #[inline]
            fn predicate(op: UnaryOp, x: Self) -> bool {
                $module::predicate(op, x)
            }
        }
    )*};
}
float_arithmetic!(f32 in f32_ops, f64 in f64_ops);

macro_rules! half_arithmetic {
    ($($t:ty),*) => {$(
        impl Arithmetic for $t {
            #[inline]
            fn unary(op: UnaryOp, x: Self) -> Self {
                <$t>::from_f32(f32_ops::unary(op, x.to_f32()))
            }
            #[inline]
            fn binary(op: BinaryOp, a: Self, b: Self) -> Self {
                // NumPy's half minimum/maximum keep the first of two equal values.
                match op {
                    BinaryOp::Minimum if a.is_nan() || a <= b => a,
                    BinaryOp::Maximum if a.is_nan() || a >= b => a,
                    BinaryOp::Minimum | BinaryOp::Maximum => b,
                    // NumPy's `npy_half_nextafter`: `a` (not `b`) when they are equal.
                    BinaryOp::Nextafter if a.is_nan() || b.is_nan() => <$t>::NAN,
                    BinaryOp::Nextafter if a == b => a,
                    BinaryOp::Nextafter => <$t>::from_bits(half_step(a.to_bits(), b.to_bits())),
                    _ => <$t>::from_f32(f32_ops::binary(op, a.to_f32(), b.to_f32())),
                }
            }
            #[inline]
            fn predicate(op: UnaryOp, x: Self) -> bool {
                f32_ops::predicate(op, x.to_f32())
            }
        }
    )*};
}
half_arithmetic!(f16, bf16);

/// The bits of the 16-bit float after `a` toward `b` (f16 and bf16 alike:
/// sign, then magnitude), two numbers that differ: one step of the
/// magnitude, from zero to the smallest subnormal with `b`'s sign.
#[inline]
fn half_step(a: u16, b: u16) -> u16 {
    const SIGN: u16 = 0x8000;
    if a & !SIGN == 0 {
        return (b & SIGN) + 1;
    }
    let toward_zero = if a & SIGN == 0 {
        (a as i16) > (b as i16)
    } else {
        b & SIGN == 0 || a & !SIGN > b & !SIGN
    };
    if toward_zero {
        a - 1
    } else {
        a + 1
    }
}

#[cfg(test)]
mod tests;
