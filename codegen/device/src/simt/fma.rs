//! `a * b + c` rounded once ([`Expr::Fma`](crate::ir::Expr)), element by
//! element as CUDA's `fma` computes it: floats through `mul_add` (f16 and
//! bf16 in f32, rounded to their type once more), integers wrapping.

use lazyfuse_core::{DType, Error, HostBuffer, Result};

/// `a * b + c` of three buffers of one dtype (one-element buffers stand
/// for every thread).
pub(super) fn fused(a: &HostBuffer, b: &HostBuffer, c: &HostBuffer) -> Result<HostBuffer> {
    let n = a.len().max(b.len()).max(c.len());
    let at = |len: usize, i: usize| if len == 1 { 0 } else { i };
    macro_rules! each {
        ($variant:ident, $f:expr) => {{
            let (HostBuffer::$variant(x), HostBuffer::$variant(y), HostBuffer::$variant(z)) =
                (a, b, c)
            else {
                return Err(Error::internal("sim fma", "operands of different dtypes"));
            };
            HostBuffer::$variant(
                (0..n)
                    .map(|i| $f(x[at(x.len(), i)], y[at(y.len(), i)], z[at(z.len(), i)]))
                    .collect(),
            )
        }};
    }
    Ok(match a.dtype() {
        DType::F64 => each!(F64, |x: f64, y: f64, z: f64| x.mul_add(y, z)),
        DType::F32 => each!(F32, |x: f32, y: f32, z: f32| x.mul_add(y, z)),
        DType::F16 | DType::BF16 => {
            let wide = |v: &HostBuffer| v.cast(DType::F32);
            fused(&wide(a), &wide(b), &wide(c))?.cast(a.dtype())
        }
        DType::I8 => each!(I8, |x: i8, y: i8, z: i8| x.wrapping_mul(y).wrapping_add(z)),
        DType::I16 => each!(I16, |x: i16, y: i16, z: i16| x
            .wrapping_mul(y)
            .wrapping_add(z)),
        DType::I32 => each!(I32, |x: i32, y: i32, z: i32| x
            .wrapping_mul(y)
            .wrapping_add(z)),
        DType::I64 => each!(I64, |x: i64, y: i64, z: i64| x
            .wrapping_mul(y)
            .wrapping_add(z)),
        DType::U8 => each!(U8, |x: u8, y: u8, z: u8| x.wrapping_mul(y).wrapping_add(z)),
        DType::U16 => each!(U16, |x: u16, y: u16, z: u16| x
            .wrapping_mul(y)
            .wrapping_add(z)),
        DType::U32 => each!(U32, |x: u32, y: u32, z: u32| x
            .wrapping_mul(y)
            .wrapping_add(z)),
        DType::U64 => each!(U64, |x: u64, y: u64, z: u64| x
            .wrapping_mul(y)
            .wrapping_add(z)),
        DType::Bool => each!(Bool, |x: bool, y: bool, z: bool| (x && y) || z),
    })
}
