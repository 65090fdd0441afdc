//! Rust element types, and host buffers of them (`buffer`; typed literals
//! and weak scalars are in `scalar`).
//!
//! Casts between element types go through [`Wide`], a value wide enough to
//! hold every element exactly (`i128` for integers and bool, `f64` for
//! floats). The rules, shared by every backend:
//! - integer → integer wraps (two's complement), as in NumPy and C;
//! - float → integer truncates toward zero and saturates at the target's
//!   range, NaN gives 0 (Rust's `as`, and the PTX `cvt.rzi.sat` CUDA uses);
//! - anything → bool is `x != 0` (NaN is true);
//! - → float rounds to nearest even (`f16`/`bf16` from a 64-bit integer above
//!   2^53 may round twice).

use std::fmt;

use half::{bf16, f16};

use crate::dtype::DType;

mod buffer;
pub mod spare;

pub use buffer::{try_vec, HostBuffer, SliceMut};

/// The machine's memory and swap in bytes, where the system says (Linux's
/// `/proc/meminfo`); read once.
fn machine_memory() -> Option<usize> {
    static TOTAL: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    *TOTAL.get_or_init(|| {
        let info = std::fs::read_to_string("/proc/meminfo").ok()?;
        let kib = |field: &str| -> Option<usize> {
            let line = info.lines().find(|l| l.starts_with(field))?;
            line.split_whitespace().nth(1)?.parse().ok()
        };
        let total = kib("MemTotal:")?.checked_add(kib("SwapTotal:").unwrap_or(0))?;
        total.checked_mul(1024)
    })
}

/// A value wide enough to hold any element exactly: the hub of every cast.
#[derive(Clone, Copy, Debug)]
pub enum Wide {
    /// Integers and bool (0 or 1).
    Int(i128),
    /// Floats (f16, bf16 and f32 convert to f64 exactly).
    Float(f64),
}

impl Wide {
    /// `x != 0`; NaN is true.
    pub fn truthy(self) -> bool {
        match self {
            Wide::Int(v) => v != 0,
            Wide::Float(v) => v != 0.0,
        }
    }

    /// The value as an `f64` (rounded for integers beyond 2^53).
    pub fn as_f64(self) -> f64 {
        match self {
            Wide::Int(v) => v as f64,
            Wide::Float(v) => v,
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A Rust type that is an element type of arrays: `f16`, `bf16`, `f32`,
/// `f64`, `i8`…`i64`, `u8`…`u64` and `bool`.
pub trait Element:
    Copy
    + Send
    + Sync
    + fmt::Debug
    + PartialEq
    + Default
    + bytemuck::NoUninit
    + 'static
    + sealed::Sealed
{
    /// The dtype of this Rust type.
    const DTYPE: DType;
    /// Wraps a vector in a [`HostBuffer`].
    fn into_buffer(values: Vec<Self>) -> HostBuffer;
    /// The elements of `buffer` if it holds this type.
    fn slice_of(buffer: &HostBuffer) -> Option<&[Self]>;
    /// The elements of `buffer`, mutably, if it holds this type.
    fn slice_of_mut(buffer: &mut HostBuffer) -> Option<&mut [Self]>;
    /// A mutable slice of this type, type-erased.
    fn wrap_mut(slice: &mut [Self]) -> SliceMut<'_>;
    /// The typed slice inside `slice`, if it holds this type.
    fn unwrap_mut(slice: SliceMut<'_>) -> Option<&mut [Self]>;
    /// The value, exactly.
    fn to_wide(self) -> Wide;
    /// Casts a value to this type by the module's rules.
    fn from_wide(value: Wide) -> Self;
}

macro_rules! int_element {
    ($($t:ty => $variant:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = DType::$variant;
            fn into_buffer(values: Vec<Self>) -> HostBuffer {
                HostBuffer::$variant(values)
            }
            fn slice_of(buffer: &HostBuffer) -> Option<&[Self]> {
                match buffer {
                    HostBuffer::$variant(v) => Some(v),
                    _ => None,
                }
            }
            fn slice_of_mut(buffer: &mut HostBuffer) -> Option<&mut [Self]> {
                match buffer {
                    HostBuffer::$variant(v) => Some(v),
                    _ => None,
                }
            }
            fn wrap_mut(slice: &mut [Self]) -> SliceMut<'_> {
                SliceMut::$variant(slice)
            }
            fn unwrap_mut(slice: SliceMut<'_>) -> Option<&mut [Self]> {
                match slice {
                    SliceMut::$variant(s) => Some(s),
                    _ => None,
                }
            }
            #[inline]
            fn to_wide(self) -> Wide {
                Wide::Int(self as i128)
            }
            #[inline]
            fn from_wide(value: Wide) -> Self {
                match value {
                    Wide::Int(v) => v as $t,
                    Wide::Float(v) => v as $t,
                }
            }
        }
    )*};
}
int_element!(i8 => I8, i16 => I16, i32 => I32, i64 => I64, u8 => U8, u16 => U16, u32 => U32, u64 => U64);

macro_rules! float_element {
    ($($t:ty => $variant:ident, $from_f64:expr, $to_f64:expr);* $(;)?) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = DType::$variant;
            fn into_buffer(values: Vec<Self>) -> HostBuffer {
                HostBuffer::$variant(values)
            }
            fn slice_of(buffer: &HostBuffer) -> Option<&[Self]> {
                match buffer {
                    HostBuffer::$variant(v) => Some(v),
                    _ => None,
                }
            }
            fn slice_of_mut(buffer: &mut HostBuffer) -> Option<&mut [Self]> {
                match buffer {
                    HostBuffer::$variant(v) => Some(v),
                    _ => None,
                }
            }
            fn wrap_mut(slice: &mut [Self]) -> SliceMut<'_> {
                SliceMut::$variant(slice)
            }
            fn unwrap_mut(slice: SliceMut<'_>) -> Option<&mut [Self]> {
                match slice {
                    SliceMut::$variant(s) => Some(s),
                    _ => None,
                }
            }
            #[inline]
            fn to_wide(self) -> Wide {
                let to_f64: fn($t) -> f64 = $to_f64;
                Wide::Float(to_f64(self))
            }
            #[inline]
            fn from_wide(value: Wide) -> Self {
                let from_f64: fn(f64) -> $t = $from_f64;
                match value {
                    Wide::Int(v) => from_f64(v as f64),
                    Wide::Float(v) => from_f64(v),
                }
            }
        }
    )*};
}
float_element! {
    f64 => F64, |v| v, |v| v;
    f16 => F16, f16::from_f64, f16::to_f64;
    bf16 => BF16, bf16::from_f64, bf16::to_f64;
}

// f32 is separate: integer → f32 must round once, straight from the integer.
impl sealed::Sealed for f32 {}
impl Element for f32 {
    const DTYPE: DType = DType::F32;
    fn into_buffer(values: Vec<Self>) -> HostBuffer {
        HostBuffer::F32(values)
    }
    fn slice_of(buffer: &HostBuffer) -> Option<&[Self]> {
        match buffer {
            HostBuffer::F32(v) => Some(v),
            _ => None,
        }
    }
    fn slice_of_mut(buffer: &mut HostBuffer) -> Option<&mut [Self]> {
        match buffer {
            HostBuffer::F32(v) => Some(v),
            _ => None,
        }
    }
    fn wrap_mut(slice: &mut [Self]) -> SliceMut<'_> {
        SliceMut::F32(slice)
    }
    fn unwrap_mut(slice: SliceMut<'_>) -> Option<&mut [Self]> {
        match slice {
            SliceMut::F32(s) => Some(s),
            _ => None,
        }
    }
    #[inline]
    fn to_wide(self) -> Wide {
        Wide::Float(self as f64)
    }
    #[inline]
    fn from_wide(value: Wide) -> Self {
        match value {
            Wide::Int(v) => v as f32,
            Wide::Float(v) => v as f32,
        }
    }
}

impl sealed::Sealed for bool {}
impl Element for bool {
    const DTYPE: DType = DType::Bool;
    fn into_buffer(values: Vec<Self>) -> HostBuffer {
        HostBuffer::Bool(values)
    }
    fn slice_of(buffer: &HostBuffer) -> Option<&[Self]> {
        match buffer {
            HostBuffer::Bool(v) => Some(v),
            _ => None,
        }
    }
    fn slice_of_mut(buffer: &mut HostBuffer) -> Option<&mut [Self]> {
        match buffer {
            HostBuffer::Bool(v) => Some(v),
            _ => None,
        }
    }
    fn wrap_mut(slice: &mut [Self]) -> SliceMut<'_> {
        SliceMut::Bool(slice)
    }
    fn unwrap_mut(slice: SliceMut<'_>) -> Option<&mut [Self]> {
        match slice {
            SliceMut::Bool(s) => Some(s),
            _ => None,
        }
    }
    #[inline]
    fn to_wide(self) -> Wide {
        Wide::Int(self as i128)
    }
    #[inline]
    fn from_wide(value: Wide) -> Self {
        value.truthy()
    }
}
