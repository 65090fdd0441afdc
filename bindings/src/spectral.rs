//! The `lf_*` entry points of Fourier transforms: complex values in C are
//! two arrays of one shape, their real and imaginary parts (`float` or
//! `double`), as `lazyfuse::ComplexArray` holds them. All lazy.

use lazyfuse::{fft, Array, Norm};

use crate::arrange::hand_over;
use crate::complex::{hand_over_parts, signal};
use crate::guard::{borrow, guard, Failure};
use crate::{lf_array, lf_status};

/// NumPy's `norm="backward"`: the inverse transform scaled by `1/n`.
pub const LF_NORM_BACKWARD: i32 = 0;
/// NumPy's `norm="ortho"`: both directions scaled by `1/sqrt(n)`.
pub const LF_NORM_ORTHO: i32 = 1;
/// NumPy's `norm="forward"`: the forward transform scaled by `1/n`.
pub const LF_NORM_FORWARD: i32 = 2;

fn norm_of(norm: i32) -> Result<Norm, Failure> {
    match norm {
        LF_NORM_BACKWARD => Ok(Norm::Backward),
        LF_NORM_ORTHO => Ok(Norm::Ortho),
        LF_NORM_FORWARD => Ok(Norm::Forward),
        other => Err(Failure::invalid(format!(
            "norm {other} (expected LF_NORM_BACKWARD, LF_NORM_ORTHO or LF_NORM_FORWARD)"
        ))),
    }
}

/// `n` of 0: the axis' length.
fn points(n: i64) -> Result<Option<usize>, Failure> {
    match n {
        0 => Ok(None),
        n => usize::try_from(n).map(Some).map_err(|_| {
            Failure::invalid(format!(
                "{n} points (expected 0 for the axis' length, or more)"
            ))
        }),
    }
}

/// The discrete Fourier transform (`inverse`: its inverse) of the complex
/// values with parts `re` and `im` (`im` NULL: real values) along `axis`
/// (negative counts from the end) with `n` points (0: the axis' length;
/// fewer cut it, more pad it with zeros), scaled as `norm` says (NumPy's
/// `np.fft.fft`/`ifft`). The result's parts go to `re_out` and `im_out`,
/// `float` for `float` input, else `double`.
///
/// # Safety
/// `re` (and `im` unless NULL) are live arrays of one context and shape;
/// `re_out` and `im_out` are valid for a write.
#[no_mangle]
pub unsafe extern "C" fn lf_fft(
    re: *const lf_array,
    im: *const lf_array,
    n: i64,
    axis: i64,
    norm: i32,
    inverse: bool,
    re_out: *mut *mut lf_array,
    im_out: *mut *mut lf_array,
) -> lf_status {
    guard("lf_fft", || {
        let (z, n, norm) = (signal(re, im)?, points(n)?, norm_of(norm)?);
        let axis = axis as isize;
        let result = match inverse {
            true => fft::ifft(&z, n, axis, norm)?,
            false => fft::fft(&z, n, axis, norm)?,
        };
        hand_over_parts(result, re_out, im_out)
    })
}

/// The transform of real `x` along `axis`, its `n / 2 + 1` terms of
/// non-negative frequency (NumPy's `np.fft.rfft`); parts to `re_out` and
/// `im_out`.
///
/// # Safety
/// `x` is a live array; `re_out` and `im_out` are valid for a write.
#[no_mangle]
pub unsafe extern "C" fn lf_rfft(
    x: *const lf_array,
    n: i64,
    axis: i64,
    norm: i32,
    re_out: *mut *mut lf_array,
    im_out: *mut *mut lf_array,
) -> lf_status {
    guard("lf_rfft", || {
        let x: &Array = &borrow(x, "the array")?.array;
        let result = fft::rfft(x, points(n)?, axis as isize, norm_of(norm)?)?;
        hand_over_parts(result, re_out, im_out)
    })
}

/// The real signal of `n` points (0: `2 (m - 1)` for `m` terms) whose
/// `lf_rfft` is the complex values `re`, `im` along `axis` (NumPy's
/// `np.fft.irfft`).
///
/// # Safety
/// `re` and `im` are live arrays of one context and shape; `out` is valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn lf_irfft(
    re: *const lf_array,
    im: *const lf_array,
    n: i64,
    axis: i64,
    norm: i32,
    out: *mut *mut lf_array,
) -> lf_status {
    guard("lf_irfft", || {
        if im.is_null() {
            return Err(Failure::invalid(
                "a NULL imaginary part (expected complex terms)",
            ));
        }
        let z = signal(re, im)?;
        hand_over(
            out,
            fft::irfft(&z, points(n)?, axis as isize, norm_of(norm)?)?,
        )
    })
}
