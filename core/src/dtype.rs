//! Element types and NumPy's type promotion (NEP 50).
//!
//! Promotion follows NumPy 2.x: `promote(a, b)` is the smallest type that
//! holds every value of both (so `i8 + u8 → i16`, `i64 + u64 → f64`,
//! `i16 + f16 → f32`). `bf16` is not a NumPy type; it follows the `ml_dtypes`
//! convention: it holds `i8`/`u8` exactly and meets `f16` at `f32`.
//!
//! Rust scalars mixed with arrays are *weak* (NEP 50): they take the array's
//! type when their kind (bool < integer < float) is not higher, so
//! `f32 array * 2.0 → f32` and `i8 array + 1 → i8`.

use std::fmt;
use std::str::FromStr;

/// The element type of an array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// IEEE 754 half precision (`half::f16`).
    F16,
    /// bfloat16 (`half::bf16`).
    BF16,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// `i8`.
    I8,
    /// `i16`.
    I16,
    /// `i32`.
    I32,
    /// `i64`.
    I64,
    /// `u8`.
    U8,
    /// `u16`.
    U16,
    /// `u32`.
    U32,
    /// `u64`.
    U64,
    /// `bool`, one byte holding 0 or 1.
    Bool,
}

/// The kind of a type, ordered as NEP 50 orders them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// `bool`.
    Bool,
    /// Unsigned integers.
    UInt,
    /// Signed integers.
    Int,
    /// Floating point.
    Float,
}

impl DType {
    /// Every element type, in declaration order.
    pub const ALL: [DType; 13] = [
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::Bool,
    ];

    /// Size of one element in bytes.
    pub const fn size(self) -> usize {
        match self {
            DType::I8 | DType::U8 | DType::Bool => 1,
            DType::F16 | DType::BF16 | DType::I16 | DType::U16 => 2,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F64 | DType::I64 | DType::U64 => 8,
        }
    }

    /// The kind (bool, unsigned, signed, float).
    pub const fn kind(self) -> Kind {
        match self {
            DType::Bool => Kind::Bool,
            DType::U8 | DType::U16 | DType::U32 | DType::U64 => Kind::UInt,
            DType::I8 | DType::I16 | DType::I32 | DType::I64 => Kind::Int,
            _ => Kind::Float,
        }
    }

    /// True for the four floating-point types.
    pub const fn is_float(self) -> bool {
        matches!(self.kind(), Kind::Float)
    }

    /// True for signed and unsigned integers (not bool).
    pub const fn is_integer(self) -> bool {
        matches!(self.kind(), Kind::Int | Kind::UInt)
    }

    /// True for `bool`.
    pub const fn is_bool(self) -> bool {
        matches!(self, DType::Bool)
    }

    /// The NumPy-style name (`"float32"`, `"int8"`, `"bfloat16"`, `"bool"`).
    pub const fn name(self) -> &'static str {
        match self {
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::U8 => "uint8",
            DType::U16 => "uint16",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
            DType::Bool => "bool",
        }
    }

    /// The short name used in signatures and listings (`"f32"`, `"bf16"`, `"u8"`).
    pub const fn short_name(self) -> &'static str {
        match self {
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::I8 => "i8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U8 => "u8",
            DType::U16 => "u16",
            DType::U32 => "u32",
            DType::U64 => "u64",
            DType::Bool => "bool",
        }
    }

    /// The type a reduction accumulates in: `f16` and `bf16` accumulate in
    /// `f32`; every other type in itself.
    pub const fn accumulator(self) -> DType {
        match self {
            DType::F16 | DType::BF16 => DType::F32,
            other => other,
        }
    }

    /// The smallest float that holds every value of `self` exactly, as NumPy
    /// picks the loop of a float-only ufunc (`sqrt(int8) → float16`,
    /// `sqrt(int16) → float32`, `sqrt(int32) → float64`).
    pub const fn smallest_float(self) -> DType {
        match self {
            DType::Bool | DType::I8 | DType::U8 => DType::F16,
            DType::I16 | DType::U16 => DType::F32,
            DType::I32 | DType::U32 | DType::I64 | DType::U64 => DType::F64,
            float => float,
        }
    }

    /// Number of value bits of an integer type (sign excluded), used by promotion.
    const fn int_value_bits(self) -> u32 {
        match self {
            DType::Bool => 1,
            DType::I8 => 7,
            DType::U8 => 8,
            DType::I16 => 15,
            DType::U16 => 16,
            DType::I32 => 31,
            DType::U32 => 32,
            DType::I64 => 63,
            DType::U64 => 64,
            _ => 0,
        }
    }

    /// Number of significand bits of a float type (implicit bit included).
    const fn mantissa_bits(self) -> u32 {
        match self {
            DType::F16 => 11,
            DType::BF16 => 8,
            DType::F32 => 24,
            DType::F64 => 53,
            _ => 0,
        }
    }

    /// The largest finite value of a float type (`None` for the others).
    pub fn max_finite(self) -> Option<f64> {
        Some(match self {
            DType::F16 => half::f16::MAX.to_f64(),
            DType::BF16 => half::bf16::MAX.to_f64(),
            DType::F32 => f64::from(f32::MAX),
            DType::F64 => f64::MAX,
            _ => return None,
        })
    }

    /// Range of an integer type as `(min, max)`; `None` for floats and bool.
    pub const fn int_range(self) -> Option<(i128, i128)> {
        Some(match self {
            DType::I8 => (i8::MIN as i128, i8::MAX as i128),
            DType::I16 => (i16::MIN as i128, i16::MAX as i128),
            DType::I32 => (i32::MIN as i128, i32::MAX as i128),
            DType::I64 => (i64::MIN as i128, i64::MAX as i128),
            DType::U8 => (0, u8::MAX as i128),
            DType::U16 => (0, u16::MAX as i128),
            DType::U32 => (0, u32::MAX as i128),
            DType::U64 => (0, u64::MAX as i128),
            _ => return None,
        })
    }

    fn signed_of_size(size: usize) -> Option<DType> {
        match size {
            1 => Some(DType::I8),
            2 => Some(DType::I16),
            4 => Some(DType::I32),
            8 => Some(DType::I64),
            _ => None,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.short_name())
    }
}

/// Error of [`DType::from_str`]: the text names no element type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownDType(pub String);

impl fmt::Display for UnknownDType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown dtype '{}' (expected one of f16 bf16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 bool)",
            self.0
        )
    }
}

impl std::error::Error for UnknownDType {}

impl FromStr for DType {
    type Err = UnknownDType;

    /// Parses short (`f32`) and NumPy (`float32`) names, and Numba's aliases
    /// (`float32`, `int64`, `boolean`, `b1`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        DType::ALL
            .into_iter()
            .find(|d| d.short_name() == t || d.name() == t)
            .or(match t {
                "half" => Some(DType::F16),
                "float" | "single" => Some(DType::F32),
                "double" => Some(DType::F64),
                "boolean" | "b1" | "bool_" => Some(DType::Bool),
                _ => None,
            })
            .ok_or_else(|| UnknownDType(t.to_string()))
    }
}

/// The common type of two types: NumPy's `np.promote_types`.
pub fn promote(a: DType, b: DType) -> DType {
    use Kind::*;
    if a == b {
        return a;
    }
    match (a.kind(), b.kind()) {
        (Bool, _) => b,
        (_, Bool) => a,
        (Float, Float) => promote_floats(a, b),
        (Float, _) => promote_floats(a, b.smallest_float_for_promotion(a)),
        (_, Float) => promote_floats(b, a.smallest_float_for_promotion(b)),
        (ka, kb) if ka == kb => {
            if a.size() >= b.size() {
                a
            } else {
                b
            }
        }
        _ => {
            let (signed, unsigned) = if a.kind() == Int { (a, b) } else { (b, a) };
            if signed.size() > unsigned.size() {
                signed
            } else {
                DType::signed_of_size(unsigned.size() * 2).unwrap_or(DType::F64)
            }
        }
    }
}

impl DType {
    /// The float an integer meets a float type at: the smallest float of the
    /// family holding the integer exactly.
    fn smallest_float_for_promotion(self, float: DType) -> DType {
        let bits = self.int_value_bits();
        if float == DType::BF16 && bits <= DType::BF16.mantissa_bits() {
            return DType::BF16;
        }
        self.smallest_float()
    }
}

fn promote_floats(a: DType, b: DType) -> DType {
    if a == b {
        return a;
    }
    match (a, b) {
        (DType::F16, DType::BF16) | (DType::BF16, DType::F16) => DType::F32,
        _ => {
            if a.size() >= b.size() {
                a
            } else {
                b
            }
        }
    }
}

/// NumPy's `np.can_cast(from, to, "safe")`: every value of `from` is a value of `to`.
pub fn can_cast_safely(from: DType, to: DType) -> bool {
    promote(from, to) == to
}

#[cfg(test)]
mod tests {
    use super::*;
    use DType::*;

    #[test]
    fn promotion_matches_numpy_table() {
        let cases = [
            (I8, U8, I16),
            (I64, U64, F64),
            (U32, I32, I64),
            (U8, I64, I64),
            (I16, F16, F32),
            (I8, F16, F16),
            (I32, F32, F64),
            (U64, F16, F64),
            (Bool, I8, I8),
            (Bool, F16, F16),
            (F16, F32, F32),
            (F16, BF16, F32),
            (BF16, F64, F64),
            (I8, BF16, BF16),
            (I16, BF16, F32),
        ];
        for (a, b, want) in cases {
            assert_eq!(promote(a, b), want, "{a} + {b}");
            assert_eq!(promote(b, a), want, "{b} + {a}");
        }
    }

    #[test]
    fn safe_casts() {
        assert!(can_cast_safely(I8, F16));
        assert!(!can_cast_safely(I16, F16));
        assert!(can_cast_safely(U8, I16));
        assert!(!can_cast_safely(I8, U64));
        assert!(!can_cast_safely(F64, F32));
        assert!(can_cast_safely(Bool, U8));
    }

    #[test]
    fn names_parse_back() {
        for d in DType::ALL {
            assert_eq!(d.short_name().parse::<DType>(), Ok(d));
            assert_eq!(d.name().parse::<DType>(), Ok(d));
        }
        assert!("complex64".parse::<DType>().is_err());
    }
}
