//! Transforms over several axes (NumPy's `fftn` family): one-axis
//! transforms in turn, with NumPy's rules for `s` and `axes`.

use lazyfuse_core::{Array, Error, Result};

use super::{fft, ifft, irfft, resolve_axis, rfft, Norm};
use crate::complex::ComplexArray;

/// The axes and lengths of an n-d transform of an array of shape `shape`
/// (NumPy's `_cook_nd_args`): `axes` default to the last `s.len()` axes,
/// or all of them; `s` to the axes' lengths. The last length of `s` is the
/// output length for `irfftn` (`last_from_terms`: `2 (m - 1)` by default).
fn cooked(
    op: &str,
    shape: &[usize],
    s: Option<&[usize]>,
    axes: Option<&[isize]>,
    last_from_terms: bool,
) -> Result<(Vec<usize>, Vec<usize>)> {
    let ndim = shape.len();
    let axes: Vec<isize> = match (axes, s) {
        (Some(axes), _) => axes.to_vec(),
        (None, Some(s)) => (ndim as isize - s.len() as isize..ndim as isize).collect(),
        (None, None) => (0..ndim as isize).collect(),
    };
    let axes = (axes.iter().map(|&a| resolve_axis(op, a, ndim))).collect::<Result<Vec<_>>>()?;
    let s = match s {
        Some(s) if s.len() != axes.len() => {
            return Err(Error::invalid(
                op,
                format!(
                    "s of {} lengths for {} axes (expected one per axis)",
                    s.len(),
                    axes.len()
                ),
            ))
        }
        Some(s) => s.to_vec(),
        None => {
            let mut s: Vec<usize> = axes.iter().map(|&a| shape[a]).collect();
            if let (true, Some(last)) = (last_from_terms, s.last_mut()) {
                *last = 2 * last.saturating_sub(1);
            }
            s
        }
    };
    Ok((axes, s))
}

/// Complex transforms of `z` over `axes` in turn, last first (NumPy's order).
fn complex_nd(
    op: &str,
    z: &ComplexArray,
    (s, axes): (Option<&[usize]>, Option<&[isize]>),
    norm: Norm,
    inverse: bool,
) -> Result<ComplexArray> {
    let (axes, s) = cooked(op, z.shape(), s, axes, false)?;
    let mut result = z.clone();
    for (&axis, &n) in axes.iter().zip(&s).rev() {
        result = match inverse {
            true => ifft(&result, Some(n), axis as isize, norm)?,
            false => fft(&result, Some(n), axis as isize, norm)?,
        };
    }
    Ok(result)
}

/// NumPy's `fftn`: the transform over `axes` (all by default) with
/// lengths `s`.
///
/// Errors: as [`fft`]'s; `s` and `axes` of different lengths.
pub fn fftn(
    z: &ComplexArray,
    s: Option<&[usize]>,
    axes: Option<&[isize]>,
    norm: Norm,
) -> Result<ComplexArray> {
    complex_nd("fftn", z, (s, axes), norm, false)
}

/// NumPy's `ifftn`: the inverse of [`fftn`].
///
/// Errors: as [`fftn`]'s.
pub fn ifftn(
    z: &ComplexArray,
    s: Option<&[usize]>,
    axes: Option<&[isize]>,
    norm: Norm,
) -> Result<ComplexArray> {
    complex_nd("ifftn", z, (s, axes), norm, true)
}

/// NumPy's `fft2`: [`fftn`] over the last two axes by default.
///
/// Errors: as [`fftn`]'s.
pub fn fft2(
    z: &ComplexArray,
    s: Option<&[usize]>,
    axes: Option<&[isize]>,
    norm: Norm,
) -> Result<ComplexArray> {
    fftn(z, s, Some(axes.unwrap_or(&[-2, -1])), norm)
}

/// NumPy's `ifft2`: [`ifftn`] over the last two axes by default.
///
/// Errors: as [`fftn`]'s.
pub fn ifft2(
    z: &ComplexArray,
    s: Option<&[usize]>,
    axes: Option<&[isize]>,
    norm: Norm,
) -> Result<ComplexArray> {
    ifftn(z, s, Some(axes.unwrap_or(&[-2, -1])), norm)
}

/// NumPy's `rfftn`: [`rfft`] over the last of `axes`, then [`fft`] over
/// the others.
///
/// Errors: as [`fftn`]'s.
pub fn rfftn(
    x: &Array,
    s: Option<&[usize]>,
    axes: Option<&[isize]>,
    norm: Norm,
) -> Result<ComplexArray> {
    x.check()?;
    let (axes, s) = cooked("rfftn", x.shape(), s, axes, false)?;
    let (Some(&last), Some(&last_n)) = (axes.last(), s.last()) else {
        return ComplexArray::from_real(x, None);
    };
    let mut result = rfft(x, Some(last_n), last as isize, norm)?;
    for (&axis, &n) in axes.iter().zip(&s).rev().skip(1) {
        result = fft(&result, Some(n), axis as isize, norm)?;
    }
    Ok(result)
}

/// NumPy's `irfftn`: [`ifft`] over all of `axes` but the last, then
/// [`irfft`] over the last (whose output length is the last of `s`,
/// `2 (m - 1)` by default).
///
/// Errors: as [`fftn`]'s.
pub fn irfftn(
    z: &ComplexArray,
    s: Option<&[usize]>,
    axes: Option<&[isize]>,
    norm: Norm,
) -> Result<Array> {
    let (axes, s) = cooked("irfftn", z.shape(), s, axes, true)?;
    let (Some(&last), Some(&last_n)) = (axes.last(), s.last()) else {
        return Ok(z.real());
    };
    let mut result = z.clone();
    for (&axis, &n) in axes.iter().zip(&s).take(axes.len() - 1) {
        result = ifft(&result, Some(n), axis as isize, norm)?;
    }
    irfft(&result, Some(last_n), last as isize, norm)
}

/// NumPy's `rfft2`: [`rfftn`] over the last two axes by default.
///
/// Errors: as [`fftn`]'s.
pub fn rfft2(
    x: &Array,
    s: Option<&[usize]>,
    axes: Option<&[isize]>,
    norm: Norm,
) -> Result<ComplexArray> {
    rfftn(x, s, Some(axes.unwrap_or(&[-2, -1])), norm)
}

/// NumPy's `irfft2`: [`irfftn`] over the last two axes by default.
///
/// Errors: as [`fftn`]'s.
pub fn irfft2(
    z: &ComplexArray,
    s: Option<&[usize]>,
    axes: Option<&[isize]>,
    norm: Norm,
) -> Result<Array> {
    irfftn(z, s, Some(axes.unwrap_or(&[-2, -1])), norm)
}
