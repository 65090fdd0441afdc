//! Typed literals (constants of a known dtype) and weak Rust scalars (NEP
//! 50: they adapt to the array they meet).

use std::fmt;
use std::hash::{Hash, Hasher};

use half::{bf16, f16};

use crate::dtype::{DType, Kind};
use crate::element::{Element, HostBuffer, Wide};
use crate::error::{Error, Result};
use crate::{with_dtype, with_slice_mut};

/// One value of a known dtype, e.g. a constant in an expression.
///
/// Equality and hashing are bitwise (NaN equals NaN, -0.0 differs from 0.0),
/// which is what constant deduplication needs.
#[derive(Clone, Copy, Debug)]
pub struct Literal {
    dtype: DType,
    value: Wide,
}

impl Literal {
    /// A literal holding `value`.
    pub fn of<T: Element>(value: T) -> Literal {
        Literal {
            dtype: T::DTYPE,
            value: value.to_wide(),
        }
    }

    /// `value` cast to `dtype` by the module's rules.
    pub fn cast_from(value: Wide, dtype: DType) -> Literal {
        let value = with_dtype!(dtype, T => T::from_wide(value).to_wide());
        Literal { dtype, value }
    }

    /// The dtype.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The value, exactly.
    pub fn to_wide(&self) -> Wide {
        self.value
    }

    /// The value as `T`, or `None` if `T` is not the literal's type.
    pub fn get<T: Element>(&self) -> Option<T> {
        (T::DTYPE == self.dtype).then(|| T::from_wide(self.value))
    }

    /// Whether every bit of the value is zero (`0`, `+0.0`, `false`): a
    /// buffer of it is memory the system hands out zeroed.
    pub fn is_zero_bits(&self) -> bool {
        match self.value {
            Wide::Int(v) => v == 0,
            Wide::Float(v) => v.to_bits() == 0,
        }
    }

    fn key(&self) -> (DType, u8, u128) {
        match self.value {
            Wide::Int(v) => (self.dtype, 0, v as u128),
            Wide::Float(v) => (self.dtype, 1, v.to_bits() as u128),
        }
    }
}

impl PartialEq for Literal {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Literal {}

impl Hash for Literal {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.dtype, self.value) {
            (DType::Bool, v) => write!(f, "{}", v.truthy()),
            (_, Wide::Int(v)) => write!(f, "{v}"),
            (_, Wide::Float(v)) => write!(f, "{v:?}"),
        }
    }
}

/// A Rust scalar mixed into an expression. It is *weak* (NEP 50): it adapts
/// to the array's dtype unless its kind is higher (bool < int < float).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// A `bool`.
    Bool(bool),
    /// Any Rust integer, exactly.
    Int(i128),
    /// `f64`, `f32`, `f16` or `bf16`, exactly.
    Float(f64),
}

impl Scalar {
    /// The kind, for promotion.
    pub fn kind(self) -> Kind {
        match self {
            Scalar::Bool(_) => Kind::Bool,
            Scalar::Int(_) => Kind::Int,
            Scalar::Float(_) => Kind::Float,
        }
    }

    /// The dtype a scalar has when no array gives it one: bool, i64 or f64.
    pub fn default_dtype(self) -> DType {
        match self {
            Scalar::Bool(_) => DType::Bool,
            Scalar::Int(_) => DType::I64,
            Scalar::Float(_) => DType::F64,
        }
    }

    /// The value, exactly.
    pub fn to_wide(self) -> Wide {
        match self {
            Scalar::Bool(b) => Wide::Int(b as i128),
            Scalar::Int(v) => Wide::Int(v),
            Scalar::Float(v) => Wide::Float(v),
        }
    }

    /// The scalar as a literal of `dtype`. An integer outside an integer
    /// dtype's range is an error (NumPy 2 raises `OverflowError`), as is a
    /// float with a fraction or out of range for an integer dtype; floats
    /// round to nearest.
    pub fn to_literal(self, op: &str, dtype: DType) -> Result<Literal> {
        let wide = self.to_wide();
        if let Some((min, max)) = dtype.int_range() {
            let exact = match wide {
                Wide::Int(v) => (min..=max).contains(&v).then_some(v),
                Wide::Float(v) => {
                    (v.fract() == 0.0 && v >= min as f64 && v <= max as f64).then_some(v as i128)
                }
            };
            if exact.is_none() {
                return Err(Error::invalid(
                    op,
                    format!(
                        "the scalar {} is out of bounds for {} (expected {min}..={max}{})",
                        self,
                        dtype,
                        if matches!(wide, Wide::Float(_)) {
                            ", a whole number"
                        } else {
                            ""
                        }
                    ),
                ));
            }
        }
        Ok(Literal::cast_from(wide, dtype))
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Bool(b) => write!(f, "{b}"),
            Scalar::Int(v) => write!(f, "{v}"),
            Scalar::Float(v) => write!(f, "{v:?}"),
        }
    }
}

macro_rules! scalar_from {
    ($variant:ident: $($t:ty),*) => {$(
        impl From<$t> for Scalar {
            fn from(value: $t) -> Scalar {
                Scalar::$variant(value.into())
            }
        }
    )*};
}
scalar_from!(Int: i8, i16, i32, i64, u8, u16, u32, u64, i128);
scalar_from!(Float: f32, f64);
scalar_from!(Bool: bool);

impl From<isize> for Scalar {
    fn from(value: isize) -> Scalar {
        Scalar::Int(value as i128)
    }
}

impl From<usize> for Scalar {
    fn from(value: usize) -> Scalar {
        Scalar::Int(value as i128)
    }
}

impl From<f16> for Scalar {
    fn from(value: f16) -> Scalar {
        Scalar::Float(value.to_f64())
    }
}

impl From<bf16> for Scalar {
    fn from(value: bf16) -> Scalar {
        Scalar::Float(value.to_f64())
    }
}

/// Buffers filled with a literal (here, beside [`Literal`], so that
/// `element` does not depend on this module).
impl HostBuffer {
    /// A buffer of `len` copies of a literal.
    pub fn filled(literal: Literal, len: usize) -> HostBuffer {
        with_dtype!(literal.dtype(), T => T::into_buffer(vec![T::from_wide(literal.to_wide()); len]))
    }

    /// `len` copies of `literal`, or an [`Error::Device`] when the host
    /// cannot provide the memory.
    pub fn try_filled(literal: Literal, len: usize) -> Result<HostBuffer> {
        let mut buffer = HostBuffer::try_zeros(literal.dtype(), len)?;
        if literal.is_zero_bits() {
            return Ok(buffer); // zeroed memory: no pass that writes it
        }
        with_slice_mut!(buffer.as_slice_mut(), s => {
            let value = Element::from_wide(literal.to_wide());
            s.fill(value);
        });
        Ok(buffer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_bits_are_zero_false_and_positive_zero_only() {
        assert!(Literal::of(0i32).is_zero_bits());
        assert!(Literal::of(false).is_zero_bits());
        assert!(Literal::of(0.0f64).is_zero_bits());
        assert!(!Literal::of(-0.0f32).is_zero_bits());
        assert!(!Literal::of(f64::NAN).is_zero_bits());
        assert!(!Literal::of(1u8).is_zero_bits());
        assert!(HostBuffer::try_filled(Literal::of(-0.0f32), 3)
            .unwrap()
            .as_slice::<f32>()
            .unwrap()
            .iter()
            .all(|v| v.is_sign_negative()));
    }

    #[test]
    fn weak_scalars_check_range() {
        assert!(Scalar::Int(300).to_literal("add", DType::I8).is_err());
        assert!(Scalar::Int(-1).to_literal("add", DType::U8).is_err());
        assert_eq!(
            Scalar::Int(-1).to_literal("add", DType::I8).unwrap(),
            Literal::of(-1i8)
        );
        assert_eq!(
            Scalar::Float(0.1).to_literal("add", DType::F32).unwrap(),
            Literal::of(0.1f32)
        );
    }

    #[test]
    fn literal_equality_is_bitwise() {
        assert_eq!(Literal::of(f32::NAN), Literal::of(f32::NAN));
        assert_ne!(Literal::of(0.0f32), Literal::of(-0.0f32));
        assert_ne!(Literal::of(1i32), Literal::of(1i64));
    }
}
