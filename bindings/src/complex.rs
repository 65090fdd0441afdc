//! The `lf_*` entry point of complex arithmetic: complex values in C are
//! two arrays of one shape, their real and imaginary parts (`float` or
//! `double`), as `lazyfuse::ComplexArray` holds them and as the Fourier
//! transforms (`spectral`) take and give them. Lazy, as the rest of the API.

use std::ffi::c_char;
use std::ptr::null_mut;

use lazyfuse::{ComplexArray, ComplexBinary, ComplexResult, ComplexUnary};

use crate::arrange::hand_over;
use crate::guard::{borrow, guard, string, write, Failure};
use crate::{lf_array, lf_status};

/// The complex value of parts `re` and `im`, or of `re` alone (`im` NULL:
/// real values).
pub(crate) fn signal(re: *const lf_array, im: *const lf_array) -> Result<ComplexArray, Failure> {
    let re = &borrow(re, "the real part")?.array;
    Ok(match im.is_null() {
        true => ComplexArray::from_real(re, None)?,
        false => ComplexArray::new(re, &borrow(im, "the imaginary part")?.array)?,
    })
}

/// Hands both parts of `z` to the caller.
pub(crate) fn hand_over_parts(
    z: ComplexArray,
    re_out: *mut *mut lf_array,
    im_out: *mut *mut lf_array,
) -> Result<(), Failure> {
    if re_out.is_null() || im_out.is_null() {
        return Err(Failure::invalid("a NULL output pointer (expected two)"));
    }
    hand_over(re_out, z.re().clone())?;
    hand_over(im_out, z.im().clone())
}

/// Hands a result to the caller: a complex one's parts to `re_out` and
/// `im_out`, a real one (`abs`, `angle`, the tests, the comparisons) to
/// `re_out` with `*im_out` set to NULL.
fn hand_over_result(
    result: ComplexResult,
    re_out: *mut *mut lf_array,
    im_out: *mut *mut lf_array,
) -> Result<(), Failure> {
    match result {
        ComplexResult::Complex(z) => hand_over_parts(z, re_out, im_out),
        ComplexResult::Real(x) => {
            if im_out.is_null() {
                return Err(Failure::invalid("a NULL output pointer (expected two)"));
            }
            hand_over(re_out, x)?;
            write(im_out, null_mut(), "the imaginary part's output pointer")
        }
    }
}

/// Applies NumPy's complex operation `op` to the complex values with parts
/// `a_re`, `a_im` and, for a binary operation, `b_re`, `b_im` (an `*_im`
/// of NULL: real values). Unary (`b_re` NULL): `negative`, `conjugate`,
/// `absolute`, `angle`, `real`, `imag`, `exp`, `log`, `sqrt`, `sin`, …,
/// `isnan`, `isinf`, `isfinite`; binary (the operands broadcast as
/// NumPy's): `add`, `subtract`, `multiply`, `divide`, `power`, `equal`,
/// `not_equal`. A complex result's parts go to `re_out` and `im_out`
/// (`float` parts for `float` operands, else `double`), a real one to
/// `re_out` with `*im_out` set to NULL.
///
/// # Safety
/// `op` is a NUL-terminated string; `a_re` (and each other part unless
/// NULL) are live arrays of one context, an operand's two parts of one
/// shape; `re_out` and `im_out` are valid for a write.
#[no_mangle]
pub unsafe extern "C" fn lf_complex_apply(
    op: *const c_char,
    a_re: *const lf_array,
    a_im: *const lf_array,
    b_re: *const lf_array,
    b_im: *const lf_array,
    re_out: *mut *mut lf_array,
    im_out: *mut *mut lf_array,
) -> lf_status {
    guard("lf_complex_apply", || {
        let name = string(op, "op")?;
        let a = signal(a_re, a_im)?;
        let result = if b_re.is_null() {
            let Some(op) = ComplexUnary::from_name(name) else {
                return Err(Failure::invalid(format!(
                    "'{name}' of one complex operand (expected a NumPy ufunc with a complex form: \
                     negative, conjugate, absolute, exp, log, sqrt, sin, ...)"
                )));
            };
            a.apply(op)
        } else {
            let b = signal(b_re, b_im)?;
            let Some(op) = ComplexBinary::from_name(name) else {
                return Err(Failure::invalid(format!(
                    "'{name}' of two complex operands (expected add, subtract, multiply, divide, \
                     power, equal or not_equal)"
                )));
            };
            a.binary(op, &b, false)?
        };
        hand_over_result(result, re_out, im_out)
    })
}
