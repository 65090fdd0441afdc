//! Scalar kernel arguments: a launch pushes references, so the values live
//! here until it is made. `__half` and `__nv_bfloat16` parameters are their
//! 16 bits.

use cudarc::driver::{LaunchArgs, PushKernelArg};
use lazyfuse_core::{DType, Error, Literal, Result};

/// A scalar kernel argument, kept alive until its launch.
pub(super) enum ScalarArg {
    Bool(bool),
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    F32(f32),
    F64(f64),
}

impl ScalarArg {
    /// The argument for a parameter of `dtype`: the driver reads as many
    /// bytes as the parameter has, so a literal of another dtype is refused.
    pub(super) fn for_param(literal: Literal, dtype: DType) -> Result<ScalarArg> {
        if literal.dtype() != dtype {
            return Err(Error::internal(
                "cuda launch",
                format!("a {} value for a {dtype} parameter", literal.dtype()),
            ));
        }
        ScalarArg::of(literal)
    }

    fn of(literal: Literal) -> Result<ScalarArg> {
        let missing = || Error::internal("cuda launch", "a literal of the wrong dtype");
        Ok(match literal.dtype() {
            DType::Bool => ScalarArg::Bool(literal.get().ok_or_else(missing)?),
            DType::I8 => ScalarArg::I8(literal.get().ok_or_else(missing)?),
            DType::I16 => ScalarArg::I16(literal.get().ok_or_else(missing)?),
            DType::I32 => ScalarArg::I32(literal.get().ok_or_else(missing)?),
            DType::I64 => ScalarArg::I64(literal.get().ok_or_else(missing)?),
            DType::U8 => ScalarArg::U8(literal.get().ok_or_else(missing)?),
            DType::U16 => ScalarArg::U16(literal.get().ok_or_else(missing)?),
            DType::U32 => ScalarArg::U32(literal.get().ok_or_else(missing)?),
            DType::U64 => ScalarArg::U64(literal.get().ok_or_else(missing)?),
            DType::F32 => ScalarArg::F32(literal.get().ok_or_else(missing)?),
            DType::F64 => ScalarArg::F64(literal.get().ok_or_else(missing)?),
            // __half and __nv_bfloat16 parameters are their 16 bits.
            DType::F16 => ScalarArg::U16(
                literal
                    .get::<lazyfuse_core::half::f16>()
                    .ok_or_else(missing)?
                    .to_bits(),
            ),
            DType::BF16 => ScalarArg::U16(
                literal
                    .get::<lazyfuse_core::half::bf16>()
                    .ok_or_else(missing)?
                    .to_bits(),
            ),
        })
    }

    pub(super) fn push<'a>(&'a self, args: &mut LaunchArgs<'a>) {
        match self {
            ScalarArg::Bool(v) => args.arg(v),
            ScalarArg::I8(v) => args.arg(v),
            ScalarArg::I16(v) => args.arg(v),
            ScalarArg::I32(v) => args.arg(v),
            ScalarArg::I64(v) => args.arg(v),
            ScalarArg::U8(v) => args.arg(v),
            ScalarArg::U16(v) => args.arg(v),
            ScalarArg::U32(v) => args.arg(v),
            ScalarArg::U64(v) => args.arg(v),
            ScalarArg::F32(v) => args.arg(v),
            ScalarArg::F64(v) => args.arg(v),
        };
    }
}
