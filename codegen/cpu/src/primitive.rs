//! Casts between Rust's primitive number types as `as` does them. For
//! every pair of integer and f32/f64 types, `as` is exactly
//! `core::element`'s casting rule (integers wrap, integer → float rounds
//! once, float → integer truncates and saturates, NaN → 0), so these loops
//! compute the rule's values without its 128-bit detour, which keeps the
//! compiler from vectorising them. Halves and bool keep the general path.

use lazyfuse_core::Element;

macro_rules! primitive {
    ($($t:ident => $method:ident),* $(,)?) => {
        /// A primitive number type: converts to each of the others by `as`.
        pub trait Primitive: Element {
            /// `source as Self`.
            fn from_primitive<S: Primitive>(source: S) -> Self;
            $(
                /// `self as` the type of the method's name.
                fn $method(self) -> $t;
            )*
        }

        primitive!(@impls [$($t => $method),*] $($t => $method),*);
    };
    (@impls $all:tt $($t:ident => $method:ident),*) => {
        $(primitive!(@impl $t, $method, $all);)*
    };
    (@impl $t:ident, $own:ident, [$($to:ident => $method:ident),*]) => {
        impl Primitive for $t {
            #[inline(always)]
            fn from_primitive<S: Primitive>(source: S) -> $t {
                source.$own()
            }
            $(
                #[inline(always)]
                fn $method(self) -> $to {
                    self as $to
                }
            )*
        }
    };
}

primitive!(
    i8 => as_i8, i16 => as_i16, i32 => as_i32, i64 => as_i64,
    u8 => as_u8, u16 => as_u16, u32 => as_u32, u64 => as_u64,
    f32 => as_f32, f64 => as_f64,
);

/// Runs `$body` with `$T` set to the Rust type of a primitive dtype; `$other`
/// for f16, bf16 and bool.
#[macro_export]
#[doc(hidden)]
macro_rules! with_primitive {
    ($dtype:expr, $T:ident => $body:expr, else => $other:expr) => {
        match $dtype {
            lazyfuse_core::DType::I8 => {
                type $T = i8;
                $body
            }
            lazyfuse_core::DType::I16 => {
                type $T = i16;
                $body
            }
            lazyfuse_core::DType::I32 => {
                type $T = i32;
                $body
            }
            lazyfuse_core::DType::I64 => {
                type $T = i64;
                $body
            }
            lazyfuse_core::DType::U8 => {
                type $T = u8;
                $body
            }
            lazyfuse_core::DType::U16 => {
                type $T = u16;
                $body
            }
            lazyfuse_core::DType::U32 => {
                type $T = u32;
                $body
            }
            lazyfuse_core::DType::U64 => {
                type $T = u64;
                $body
            }
            lazyfuse_core::DType::F32 => {
                type $T = f32;
                $body
            }
            lazyfuse_core::DType::F64 => {
                type $T = f64;
                $body
            }
            _ => $other,
        }
    };
}

/// A numeric type's bits as a `u64` (zero-extended) and back (truncated):
/// a bitcast between two types of one size goes through it unchanged.
pub trait Bits: Element {
    /// The bits, zero-extended.
    fn to_bits64(self) -> u64;
    /// The value of the low bits of `bits`.
    fn from_bits64(bits: u64) -> Self;
}

macro_rules! bits {
    ($($t:ty => $raw:ty, $to:expr, $from:expr;)*) => {$(
        impl Bits for $t {
            #[inline(always)]
            fn to_bits64(self) -> u64 {
                let to: fn($t) -> $raw = $to;
                to(self) as u64
            }
            #[inline(always)]
            fn from_bits64(bits: u64) -> $t {
                let from: fn($raw) -> $t = $from;
                from(bits as $raw)
            }
        }
    )*};
}

bits! {
    i8 => u8, |v| v as u8, |b| b as i8;
    u8 => u8, |v| v, |b| b;
    i16 => u16, |v| v as u16, |b| b as i16;
    u16 => u16, |v| v, |b| b;
    i32 => u32, |v| v as u32, |b| b as i32;
    u32 => u32, |v| v, |b| b;
    i64 => u64, |v| v as u64, |b| b as i64;
    u64 => u64, |v| v, |b| b;
    f32 => u32, f32::to_bits, f32::from_bits;
    f64 => u64, f64::to_bits, f64::from_bits;
    lazyfuse_core::half::f16 => u16, lazyfuse_core::half::f16::to_bits, lazyfuse_core::half::f16::from_bits;
    lazyfuse_core::half::bf16 => u16, lazyfuse_core::half::bf16::to_bits, lazyfuse_core::half::bf16::from_bits;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `as` against the casting rule of `core::element`, on edge values of
    /// every pair.
    #[test]
    fn as_casts_follow_the_element_rule() {
        fn check<S: Primitive, D: Primitive + PartialEq + std::fmt::Debug>(values: &[S]) {
            for &v in values {
                let by_rule = D::from_wide(v.to_wide());
                let by_as = D::from_primitive(v);
                let same = by_rule == by_as || (by_rule != by_rule && by_as != by_as);
                assert!(
                    same,
                    "{:?} -> {:?}: {by_as:?} vs {by_rule:?}",
                    S::DTYPE,
                    D::DTYPE
                );
            }
        }
        macro_rules! each_target {
            ($values:expr) => {{
                check::<_, i8>($values);
                check::<_, i16>($values);
                check::<_, i32>($values);
                check::<_, i64>($values);
                check::<_, u8>($values);
                check::<_, u16>($values);
                check::<_, u32>($values);
                check::<_, u64>($values);
                check::<_, f32>($values);
                check::<_, f64>($values);
            }};
        }
        each_target!(&[0i8, 1, -1, i8::MIN, i8::MAX]);
        each_target!(&[0i16, -300, i16::MIN, i16::MAX]);
        each_target!(&[0i32, -70_000, 16_777_217, i32::MIN, i32::MAX]);
        each_target!(&[0i64, -1, (1 << 60) + (1 << 36) + 1, i64::MIN, i64::MAX]);
        each_target!(&[0u8, 200, u8::MAX]);
        each_target!(&[0u16, 60_000, u16::MAX]);
        each_target!(&[0u32, 4_000_000_000, u32::MAX]);
        each_target!(&[0u64, (1 << 63) + 1, u64::MAX]);
        each_target!(&[
            0.0f32,
            -0.0,
            1.5,
            -1.5,
            300.7,
            -3e9,
            3e9,
            1e20,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY
        ]);
        each_target!(&[
            0.0f64,
            -2.5,
            1e300,
            -1e19,
            1.8e19,
            f64::NAN,
            f64::NEG_INFINITY,
            16_777_217.0
        ]);
    }
}
