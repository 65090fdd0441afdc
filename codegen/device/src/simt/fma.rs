//! `a * b + c` rounded once ([`Expr::Fma`](crate::ir::Expr)), element by
//! element as CUDA's `fma` computes it: floats through `mul_add` (f16 and
//! bf16 in f32, rounded to their type once more), integers wrapping.

use lazyfuse_core::reference::kernels;
use lazyfuse_core::{BinaryOp, DType, Error, HostBuffer, Result};

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
        // Integers and bool: exact, so the product then the sum (wrapping,
        // as CUDA's integer arithmetic; and then or for bool).
        DType::Bool
        | DType::I8
        | DType::I16
        | DType::I32
        | DType::I64
        | DType::U8
        | DType::U16
        | DType::U32
        | DType::U64 => {
            let product = kernels::binary(BinaryOp::Mul, a, b, n)?;
            kernels::binary(BinaryOp::Add, &product, c, n)?
        }
    })
}
