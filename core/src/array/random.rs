//! Random arrays from the counter-based generator (`crate::philox`): like
//! `arange`, a random array is generated where it is used, fused into its
//! consumers, never stored or copied unless demanded, and element `i` (in
//! row-major order) is a function of `i` and the seed alone: the same bits
//! on every backend and for any thread count.

use crate::dtype::DType;
use crate::error::Error;
use crate::ops::BinaryOp;
use crate::scalar::Scalar;
use crate::session::Session;

use super::{Array, Operand};

/// Counters of the second stream (`random_normal`'s angle) have this bit set.
const SECOND_STREAM: u64 = 1 << 63;

impl Session {
    /// Uniform values in `[0, 1)` of `shape` and the float `dtype`: the top
    /// bits of Philox4x32-10 under `seed` at each element's row-major index
    /// `i`, scaled exactly — for f64 the top 53 of words `2 (i % 2)` (low)
    /// and `2 (i % 2) + 1` of the block at counter `i / 2`; for f32, f16 and
    /// bf16 the top 24, 11 or 8 of word `i % 4` of the block at counter
    /// `i / 4`. (Two or four elements to a block: half or a quarter of the
    /// generator's work.) Errors for a non-float dtype.
    pub fn random_uniform(&self, shape: &[usize], dtype: DType, seed: u64) -> Array {
        let Some(bits) = mantissa_bits(dtype) else {
            return self.invalid(not_float("random_uniform", dtype));
        };
        self.uniform(shape, dtype, bits, seed, 0)
    }

    /// Standard normal values of `shape` and the float `dtype` (Box–Muller
    /// in f64 from two uniform streams of the generator, then cast). The
    /// same on every backend up to the last bits of `log` and `cos`.
    /// Errors for a non-float dtype.
    pub fn random_normal(&self, shape: &[usize], dtype: DType, seed: u64) -> Array {
        if mantissa_bits(dtype).is_none() {
            return self.invalid(not_float("random_normal", dtype));
        }
        // 1 - u is in (0, 1]: its logarithm is finite.
        let radius = (1.0 - self.uniform(shape, DType::F64, 53, seed, 0)).log() * -2.0;
        let angle =
            self.uniform(shape, DType::F64, 53, seed, SECOND_STREAM) * std::f64::consts::TAU;
        (radius.sqrt() * angle.cos()).astype(dtype)
    }

    /// `k * 2^-bits` for the top `bits` bits `k` of the generator's output
    /// at counter `index | stream` (`philox_word`'s 32 bits when `bits` fit
    /// them, else `philox_pair`'s 64), in `dtype` (exact: `k` has at most
    /// as many bits as the dtype's significand).
    fn uniform(&self, shape: &[usize], dtype: DType, bits: u32, seed: u64, stream: u64) -> Array {
        let count: usize = shape.iter().product();
        let mut counter = self
            .arange(0.0, count as f64, 1.0, DType::U64)
            .reshape(shape);
        if stream != 0 {
            counter = counter.bitwise_or(Scalar::Int(i128::from(stream)));
        }
        let (generator, width) = match bits <= 32 {
            true => (BinaryOp::PhiloxWord, 32),
            false => (BinaryOp::PhiloxPair, 64),
        };
        let random =
            counter.apply_binary(generator, Operand::Scalar(Scalar::Int(i128::from(seed))));
        // The top bits fit an i32 (an i64 for f64): casting through it
        // gives the same value, and a signed integer converts to a float in
        // one vector instruction where u64 has none.
        let through = if bits < 32 { DType::I32 } else { DType::I64 };
        let top = (random >> i64::from(width - bits)).astype(through);
        top.astype(dtype) * 0.5f64.powi(bits as i32)
    }
}

/// Significand bits of a float dtype (the uniform values it holds exactly).
fn mantissa_bits(dtype: DType) -> Option<u32> {
    match dtype {
        DType::F64 => Some(53),
        DType::F32 => Some(24),
        DType::F16 => Some(11),
        DType::BF16 => Some(8),
        _ => None,
    }
}

fn not_float(op: &str, dtype: DType) -> Error {
    Error::dtype(
        op,
        format!("got {dtype} (expected a float dtype: f16, bf16, f32 or f64)"),
    )
}
