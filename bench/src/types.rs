//! The element types of the suite, the arithmetic the hand loops compute in,
//! and the deterministic inputs.

use std::ops::{Add, Div, Mul, Neg, Sub};

use lazyfuse::half::{f16, slice::HalfFloatSliceExt};
use lazyfuse::Element;

use crate::Result;

/// An element type the harness runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DTypeId {
    /// IEEE single precision.
    F32,
    /// IEEE double precision.
    F64,
    /// IEEE half precision (`lazyfuse::half::f16`).
    F16,
}

impl DTypeId {
    /// Every element type, in the default order.
    pub const ALL: [DTypeId; 3] = [DTypeId::F32, DTypeId::F64, DTypeId::F16];

    /// The short name (`f32`).
    pub fn name(self) -> &'static str {
        match self {
            DTypeId::F32 => "f32",
            DTypeId::F64 => "f64",
            DTypeId::F16 => "f16",
        }
    }

    /// Parses a short name.
    pub fn parse(text: &str) -> Result<DTypeId> {
        match text {
            "f32" | "float32" => Ok(DTypeId::F32),
            "f64" | "float64" => Ok(DTypeId::F64),
            "f16" | "float16" => Ok(DTypeId::F16),
            other => Err(format!("unknown dtype '{other}' (expected f32, f64 or f16)").into()),
        }
    }
}

/// Floating-point arithmetic the hand-written loops compute in (`f32`, `f64`).
pub trait Float:
    Copy
    + Send
    + Sync
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + 'static
{
    /// Zero.
    const ZERO: Self;
    /// Minus infinity (the identity of `max`).
    const NEG_INFINITY: Self;
    /// A constant, rounded to this type.
    fn lit(value: f64) -> Self;
    /// Square root (std's).
    fn sqrt(self) -> Self;
    /// Sine (std's scalar libm call).
    fn sin(self) -> Self;
    /// Cosine (std's scalar libm call).
    fn cos(self) -> Self;
    /// Exponential (std's scalar libm call).
    fn exp(self) -> Self;
    /// Hyperbolic tangent (std's scalar libm call).
    fn tanh(self) -> Self;
    /// Absolute value.
    fn abs(self) -> Self;
    /// E3 over the leading elements of `out` with libmvec; how many were
    /// done (a multiple of the vector width; 0 without libmvec).
    fn e3_mvec(a: &[Self], b: &[Self], c: &[Self], out: &mut [Self]) -> usize;
}

macro_rules! float_impl {
    ($t:ty, $e3:ident) => {
        impl Float for $t {
            const ZERO: Self = 0.0;
            const NEG_INFINITY: Self = <$t>::NEG_INFINITY;
            #[inline(always)]
            fn lit(value: f64) -> Self {
                value as $t
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline(always)]
            fn sin(self) -> Self {
                <$t>::sin(self)
            }
            #[inline(always)]
            fn cos(self) -> Self {
                <$t>::cos(self)
            }
            #[inline(always)]
            fn exp(self) -> Self {
                <$t>::exp(self)
            }
            #[inline(always)]
            fn tanh(self) -> Self {
                <$t>::tanh(self)
            }
            #[inline(always)]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            fn e3_mvec(a: &[Self], b: &[Self], c: &[Self], out: &mut [Self]) -> usize {
                crate::mvec::get().map_or(0, |m| m.$e3(a, b, c, out))
            }
        }
    };
}

float_impl!(f32, e3_f32);
float_impl!(f64, e3_f64);

/// An element type of the suite: stored as `Self`, computed in `Acc` by the
/// hand loops (`f16` computes in `f32`, as lazyfuse accumulates f16 sums in f32).
pub trait BenchElem: Element {
    /// The arithmetic type of the hand loops.
    type Acc: Float;
    /// Which element type this is.
    const ID: DTypeId;
    /// Widens to the arithmetic type.
    fn load(self) -> Self::Acc;
    /// Rounds back from the arithmetic type.
    fn store(value: Self::Acc) -> Self;
    /// The value as an `f64` (for result checks).
    fn to_f64(self) -> f64;
    /// Rounds an `f64` to this type (for inputs).
    fn from_f64(value: f64) -> Self;
    /// True when `Acc` is `Self`: the loops then read the slices directly;
    /// otherwise they convert blocks with [`BenchElem::load_block`] and
    /// [`BenchElem::store_block`] (vectorised f16 conversions).
    const DIRECT: bool;
    /// Widens `src` into `dst` (same length).
    fn load_block(src: &[Self], dst: &mut [Self::Acc]);
    /// Rounds `src` into `dst` (same length).
    fn store_block(src: &[Self::Acc], dst: &mut [Self]);
}

impl BenchElem for f32 {
    type Acc = f32;
    const ID: DTypeId = DTypeId::F32;
    #[inline(always)]
    fn load(self) -> f32 {
        self
    }
    #[inline(always)]
    fn store(value: f32) -> f32 {
        value
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn from_f64(value: f64) -> f32 {
        value as f32
    }
    const DIRECT: bool = true;
    fn load_block(src: &[f32], dst: &mut [f32]) {
        dst.copy_from_slice(src);
    }
    fn store_block(src: &[f32], dst: &mut [f32]) {
        dst.copy_from_slice(src);
    }
}

impl BenchElem for f64 {
    type Acc = f64;
    const ID: DTypeId = DTypeId::F64;
    #[inline(always)]
    fn load(self) -> f64 {
        self
    }
    #[inline(always)]
    fn store(value: f64) -> f64 {
        value
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(value: f64) -> f64 {
        value
    }
    const DIRECT: bool = true;
    fn load_block(src: &[f64], dst: &mut [f64]) {
        dst.copy_from_slice(src);
    }
    fn store_block(src: &[f64], dst: &mut [f64]) {
        dst.copy_from_slice(src);
    }
}

impl BenchElem for f16 {
    type Acc = f32;
    const ID: DTypeId = DTypeId::F16;
    #[inline(always)]
    fn load(self) -> f32 {
        self.to_f32()
    }
    #[inline(always)]
    fn store(value: f32) -> f16 {
        f16::from_f32(value)
    }
    fn to_f64(self) -> f64 {
        self.to_f64()
    }
    fn from_f64(value: f64) -> f16 {
        f16::from_f64(value)
    }
    const DIRECT: bool = false;
    fn load_block(src: &[f16], dst: &mut [f32]) {
        src.convert_to_f32_slice(dst);
    }
    fn store_block(src: &[f32], dst: &mut [f16]) {
        dst.convert_from_f32_slice(src);
    }
}

/// `n` deterministic values uniform in [1, 2): the LCG of
/// `examples/quickstart.rs`, rounded to `T`.
pub fn uniform<T: BenchElem>(n: usize, seed: u64) -> Vec<T> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            T::from_f64(1.0 + (state >> 40) as f64 / (1u64 << 24) as f64)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_deterministic_and_in_range() {
        let a = uniform::<f32>(1000, 7);
        assert_eq!(a, uniform::<f32>(1000, 7));
        assert!(a.iter().all(|&x| (1.0..2.0).contains(&x)));
        let h = uniform::<f16>(1000, 7);
        assert!(h.iter().all(|&x| (1.0..=2.0).contains(&x.to_f32())));
    }
}
