//! Vectorised transcendental functions for the CPU backend: `exp`, `log`,
//! `sin`, `cos` and `tanh` of `f32` and `f64` slices.
//!
//! The bodies (`kernels`) are branch-free scalar code that the compiler
//! vectorises over a chunk — with AVX2 when the CPU has it (asked at run
//! time), SSE2 otherwise. Arguments outside a function's fast range (`sin`
//! and `cos` beyond ±10^6 and their infinities) are recomputed by std's
//! scalar functions after the vector pass, so every input is handled.
//!
//! Accuracy, measured by this module's tests over millions of arguments
//! per function (special values, subnormals, both ends of each range,
//! multiples of π/2): against the correctly rounded value (`f32`: std's
//! `f64` function rounded to `f32`) at most **2 ulp** for `f32`, and at
//! most **2 ulp from glibc's libm** for `f64` (which is itself within 1 ulp;
//! `tanh`: 3 ulp, between 0.3 and 0.6 where its series is not used).
//! Special values follow C99/NumPy: `exp(-inf) = 0`, `exp(inf) = inf`,
//! `log(0) = -inf`, `log(x < 0) = NaN`, `sin(inf) = NaN`, `tanh(±inf) = ±1`,
//! signed zeros kept, NaN in gives NaN out.

mod kernels;
#[cfg(test)]
mod tests;

use lazyfuse_core::{HostBuffer, UnaryOp};

use super::loops::Arg;

use kernels::{SIN_COS_LIMIT, TANH_SERIES};

/// The functions computed here.
pub fn covers(op: UnaryOp) -> bool {
    matches!(
        op,
        UnaryOp::Exp | UnaryOp::Log | UnaryOp::Sin | UnaryOp::Cos | UnaryOp::Tanh
    )
}

/// A float type with vectorised functions.
pub trait VectorMath: Copy {
    /// `out[i] = op(x[i])` for an operation `covers` accepts; `false` (and
    /// `out` untouched) for any other.
    fn apply(op: UnaryOp, x: &[Self], out: &mut [Self]) -> bool;
}

/// `out = op(a)` when `T` and `op` are vectorised here (a broadcast value
/// goes through the same function, so it equals the array's elements).
pub fn unary<T: VectorMath>(op: UnaryOp, a: Arg<'_, T>, out: &mut [T]) -> bool {
    match a {
        Arg::Slice(x) => T::apply(op, x, out),
        Arg::Scalar(x) => {
            let mut value = [x];
            if !T::apply(op, &[x], &mut value) {
                return false;
            }
            out.fill(value[0]);
            true
        }
    }
}

/// `op(x)` as a new buffer, when `x`'s dtype and `op` are vectorised here.
pub fn buffer(op: UnaryOp, x: &HostBuffer) -> Option<HostBuffer> {
    if !covers(op) {
        return None;
    }
    match x {
        HostBuffer::F32(v) => {
            let mut out = vec![0.0; v.len()];
            f32::apply(op, v, &mut out).then_some(HostBuffer::F32(out))
        }
        HostBuffer::F64(v) => {
            let mut out = vec![0.0; v.len()];
            f64::apply(op, v, &mut out).then_some(HostBuffer::F64(out))
        }
        _ => None,
    }
}

/// Runs `body` over `x`, then recomputes with `exact` the elements whose
/// argument is outside the body's range (`fallback`).
#[inline(always)]
fn map<T: Copy>(
    x: &[T],
    out: &mut [T],
    body: impl Fn(T) -> T,
    fallback: impl Fn(T) -> bool,
    exact: impl Fn(T) -> T,
) {
    let mut any = false;
    for (o, &v) in out.iter_mut().zip(x) {
        *o = body(v);
        any |= fallback(v);
    }
    if any {
        for (o, &v) in out.iter_mut().zip(x) {
            if fallback(v) {
                *o = exact(v);
            }
        }
    }
}

macro_rules! vector_math {
    ($t:ident, $module:ident) => {
        impl VectorMath for $t {
            fn apply(op: UnaryOp, x: &[$t], out: &mut [$t]) -> bool {
                #[cfg(target_arch = "x86_64")]
                if has_avx512() {
                    // SAFETY: the CPU supports AVX-512 (F, DQ, VL, BW), AVX2
                    // and FMA: asked at run time.
                    return unsafe { avx512::$t(op, x, out) };
                }
                #[cfg(target_arch = "x86_64")]
                if has_avx2_fma() {
                    // SAFETY: the CPU supports AVX2 and FMA: asked at run time.
                    return unsafe { avx2_fma::$t(op, x, out) };
                }
                portable::$t(op, x, out)
            }
        }
    };
}

vector_math!(f32, single);
vector_math!(f64, double);

/// True when the CPU runs AVX2 and FMA instructions (and AVX2 loops are not
/// turned off by `LAZYFUSE_NO_AVX2`), asked once.
#[cfg(target_arch = "x86_64")]
fn has_avx2_fma() -> bool {
    static FMA: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FMA.get_or_init(|| crate::isa::has_avx2() && std::arch::is_x86_feature_detected!("fma"))
}

/// True when the CPU also runs AVX-512 (F, DQ, VL and BW) and
/// `LAZYFUSE_NO_AVX512` does not turn it off, asked once: the same kernels
/// over 512-bit vectors, the same values (tested).
#[cfg(target_arch = "x86_64")]
fn has_avx512() -> bool {
    static AVX512: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVX512.get_or_init(|| {
        has_avx2_fma()
            && std::env::var_os("LAZYFUSE_NO_AVX512").is_none()
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("avx512bw")
    })
}

/// The slice loops of both float types, compiled once per instruction set
/// over the kernels `$single` and `$double`.
macro_rules! slice_loops {
    ($($attr:meta)?; $($unsafety:ident)?; $single:ident, $double:ident) => {
        use kernels::{$single as single, $double as double};

        #[inline(always)]
        fn never<T>(_: T) -> bool {
            false
        }

        $(#[$attr])?
        pub(super) $($unsafety)? fn f32(op: UnaryOp, x: &[f32], out: &mut [f32]) -> bool {
            let far = |v: f32| f64::from(v.abs()) > SIN_COS_LIMIT;
            match op {
                UnaryOp::Exp => map(x, out, single::exp, never, f32::exp),
                UnaryOp::Log => map(x, out, single::log, never, f32::ln),
                // The series is only computed for chunks that need it.
                UnaryOp::Tanh if x.iter().fold(false, |small, v| small | (v.abs() < TANH_SERIES as f32)) => {
                    map(x, out, single::tanh, never, f32::tanh)
                }
                UnaryOp::Tanh => map(x, out, single::tanh_large, never, f32::tanh),
                UnaryOp::Sin => map(x, out, |v| single::sin_cos(v, false), far, f32::sin),
                UnaryOp::Cos => map(x, out, |v| single::sin_cos(v, true), far, f32::cos),
                _ => return false,
            }
            true
        }

        $(#[$attr])?
        pub(super) $($unsafety)? fn f64(op: UnaryOp, x: &[f64], out: &mut [f64]) -> bool {
            let far = |v: f64| v.abs() > SIN_COS_LIMIT;
            match op {
                UnaryOp::Exp => map(x, out, double::exp, never, f64::exp),
                UnaryOp::Log => map(x, out, double::log, never, f64::ln),
                // The series is only computed for chunks that need it.
                UnaryOp::Tanh if x.iter().fold(false, |small, v| small | (v.abs() < TANH_SERIES as f64)) => {
                    map(x, out, double::tanh, never, f64::tanh)
                }
                UnaryOp::Tanh => map(x, out, double::tanh_large, never, f64::tanh),
                UnaryOp::Sin => map(x, out, |v| double::sin_cos(v, false), far, f64::sin),
                UnaryOp::Cos => map(x, out, |v| double::sin_cos(v, true), far, f64::cos),
                _ => return false,
            }
            true
        }
    };
}

mod portable {
    use super::*;
    slice_loops!(; ; single, double);
}

/// AVX2 vectors and fused multiply-adds in the polynomials (every CPU with
/// AVX2 that lazyfuse targets has FMA; one without runs the portable loops).
#[cfg(target_arch = "x86_64")]
mod avx2_fma {
    use super::*;
    slice_loops!(target_feature(enable = "avx2,fma"); unsafe; single_fma, double_fma);
}

/// The FMA kernels over 512-bit vectors: twice the lanes per instruction
/// (measured by `cargo bench -p lazyfuse-cpu --bench vmath`).
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::*;
    slice_loops!(
        target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw,avx2,fma");
        unsafe;
        single_fma,
        double_fma
    );
}
