//! Discrete Fourier transforms (NumPy's `np.fft`): lazily, one launch of a
//! kernel per transformed axis. The CPU runs a host routine, `rustfft`'s
//! planned transforms (its AVX kernels where the CPU has them; `realfft`'s,
//! built on them, for `rfft` and `irfft`), lines spread over the worker
//! threads 16 at a time (columns gathered, not transposed); `sim` and
//! `cuda` run the kernel's device
//! program, a direct transform (one thread per output element summing the
//! `n` terms in `f64`: O(n²) work, exact to rounding, meant for checking
//! and small transforms until the CUDA backend calls cuFFT).
//!
//! The work around a transform fuses as it does around any launch: the
//! element-wise work computing its input is the kernel that writes that
//! input, and the scaling NumPy's `norm` asks for is a multiplication
//! fused into whatever reads the result.
//!
//! ```
//! use lazyfuse::{fft, ComplexArray, Context, Norm};
//!
//! let cx = Context::cpu();
//! let x = ComplexArray::from_real(&cx.from_slice(&[1.0f64, 2.0, 3.0, 4.0]), None)?;
//! let (re, im) = fft::fft(&x, None, -1, Norm::Backward)?.to_parts::<f64>()?;
//! assert_eq!(re, [10.0, -2.0, -2.0, -2.0]);
//! assert_eq!(im, [0.0, 2.0, 0.0, -2.0]);
//! # Ok::<(), lazyfuse::Error>(())
//! ```

mod host;
mod nd;
mod real;

use std::sync::Arc;

use lazyfuse_core::shape::format_shape;
use lazyfuse_core::{Array, BinaryOp, DType, Error, Result};

use crate::complex::{ComplexArray, ComplexDType};
use crate::kernel::{Kernel, KernelArg, Val};
use crate::kernel_cache::KernelCache;
use crate::lines;
use crate::{assign_region, Region};

pub use nd::{fft2, fftn, ifft2, ifftn, irfft2, irfftn, rfft2, rfftn};

/// NumPy's `norm`: which direction is scaled, and by what.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Norm {
    /// The inverse transform is scaled by `1/n` (NumPy's default).
    #[default]
    Backward,
    /// Both directions are scaled by `1/sqrt(n)`.
    Ortho,
    /// The forward transform is scaled by `1/n`.
    Forward,
}

impl Norm {
    /// The norm of NumPy's name (`None` in Python is `backward`).
    ///
    /// Errors: another name.
    pub fn from_name(name: &str) -> Result<Norm> {
        match name {
            "backward" => Ok(Norm::Backward),
            "ortho" => Ok(Norm::Ortho),
            "forward" => Ok(Norm::Forward),
            other => Err(Error::invalid(
                "fft",
                format!("norm {other:?} (expected \"backward\", \"ortho\" or \"forward\")"),
            )),
        }
    }

    /// The norm scaling the other direction as this one scales this one
    /// (NumPy's `_swap_direction`, used by `hfft` and `ihfft`).
    pub fn swapped(self) -> Norm {
        match self {
            Norm::Backward => Norm::Forward,
            Norm::Ortho => Norm::Ortho,
            Norm::Forward => Norm::Backward,
        }
    }

    /// The factor a transform of `n` points in direction `inverse` is
    /// multiplied by.
    fn factor(self, n: usize, inverse: bool) -> f64 {
        match (self, inverse) {
            (Norm::Ortho, _) => 1.0 / (n as f64).sqrt(),
            (Norm::Backward, true) | (Norm::Forward, false) => 1.0 / n as f64,
            _ => 1.0,
        }
    }
}

/// The axis `axis` (negative from the end) of an array of `ndim` axes.
pub(crate) fn resolve_axis(op: &str, axis: isize, ndim: usize) -> Result<usize> {
    let resolved = if axis < 0 { axis + ndim as isize } else { axis };
    match usize::try_from(resolved).ok().filter(|&a| a < ndim) {
        Some(a) => Ok(a),
        None => Err(Error::invalid(
            op,
            format!("axis {axis} of an array of {ndim} axes (expected -{ndim}..{ndim})"),
        )),
    }
}

/// `x` cut or padded with zeros at the end of axis `axis` to `n` elements.
fn resized(x: &Array, axis: usize, n: usize) -> Result<Array> {
    let len = x.shape()[axis];
    if n == len {
        return Ok(x.clone());
    }
    if n < len {
        return Ok(x.slice_axis(axis, Some(0), Some(n as isize), 1));
    }
    let mut shape = x.shape().to_vec();
    shape[axis] = n;
    let zeros = x.session().zeros(&shape, x.dtype());
    let region: Vec<Region> = (0..shape.len())
        .map(|a| Region {
            start: 0,
            step: 1,
            len: x.shape()[a],
        })
        .collect();
    assign_region(&zeros, &region, x)
}

/// The transform of `z` along `axis` with `n` points (cut or padded),
/// unscaled: `sum_j z_j e^(∓2πi jk/n)` (minus sign forward); and the
/// points.
fn transform(
    op: &str,
    z: &ComplexArray,
    n: Option<usize>,
    axis: isize,
    inverse: bool,
) -> Result<(ComplexArray, usize)> {
    z.re().check()?;
    z.im().check()?;
    let (axis, n) = axis_and_points(op, z.shape(), n, axis)?;
    let z = ComplexArray::new(&resized(z.re(), axis, n)?, &resized(z.im(), axis, n)?)?;
    let shape = z.shape().to_vec();
    // (outer, n, inner): the transformed axis in the middle, no copy.
    let (outer, inner) = outer_inner(&shape, axis);
    if outer * inner == 0 {
        return Ok((z, n));
    }
    let lines = z.map_parts(|p| p.reshape(&[outer, n, inner]));
    let result = along_lines(&lines, inverse)?.map_parts(|p| p.reshape(&shape));
    Ok((result, n))
}

/// One launch transforming the 3-d `z` along its middle axis.
fn along_lines(z: &ComplexArray, inverse: bool) -> Result<ComplexArray> {
    let session = z.session();
    let dtype = z.dtype().part();
    let (re_out, im_out) = (
        session.zeros(z.shape(), dtype),
        session.zeros(z.shape(), dtype),
    );
    let args: [KernelArg<'_>; 5] = [
        z.re().into(),
        z.im().into(),
        (&re_out).into(),
        (&im_out).into(),
        KernelArg::from(i64::from(inverse)),
    ];
    let mut out = fft_kernel(z.dtype())?
        .launch(session, lines::blocks(z.len()), lines::BLOCK, &args)?
        .into_iter();
    match (out.next(), out.next()) {
        (Some(re), Some(im)) => ComplexArray::new(&re, &im),
        _ => Err(Error::internal("fft", "a launch without its two outputs")),
    }
}

/// `z` times `factor` (nothing when it is 1).
fn scaled(z: ComplexArray, factor: f64) -> ComplexArray {
    match factor == 1.0 {
        true => z,
        false => z.map_parts(|p| p * factor),
    }
}

/// NumPy's `fft`: the discrete Fourier transform of `z` along `axis`
/// with `n` points (the axis' length by default; fewer cut it, more pad
/// it with zeros).
///
/// Errors: `n` of 0, an axis outside the array, a 0-d array.
pub fn fft(z: &ComplexArray, n: Option<usize>, axis: isize, norm: Norm) -> Result<ComplexArray> {
    let (result, points) = transform("fft", z, n, axis, false)?;
    Ok(scaled(result, norm.factor(points, false)))
}

/// NumPy's `ifft`: the inverse of [`fft`].
///
/// Errors: as [`fft`]'s.
pub fn ifft(z: &ComplexArray, n: Option<usize>, axis: isize, norm: Norm) -> Result<ComplexArray> {
    let (result, points) = transform("ifft", z, n, axis, true)?;
    Ok(scaled(result, norm.factor(points, true)))
}

/// NumPy's `rfft`: the transform of real `x`, its `n / 2 + 1` terms of
/// non-negative frequency (the others are their conjugates), in half a
/// complex transform's work.
///
/// Errors: as [`fft`]'s.
pub fn rfft(x: &Array, n: Option<usize>, axis: isize, norm: Norm) -> Result<ComplexArray> {
    x.check()?;
    let (a, n) = axis_and_points("rfft", x.shape(), n, axis)?;
    let part = ComplexDType::holding(x.dtype()).part();
    let x = resized(&x.astype(part), a, n)?;
    let mut shape = x.shape().to_vec();
    let (outer, inner) = outer_inner(&shape, a);
    shape[a] = n / 2 + 1;
    if outer * inner == 0 {
        let zeros = x.session().zeros(&shape, part);
        return ComplexArray::new(&zeros, &zeros);
    }
    let lines = real::Array3 {
        values: x.reshape(&[outer, n, inner]),
        lines: [outer, n, inner],
        dtype: part,
    };
    let (re, im) = real::forward(&lines)?;
    let z = ComplexArray::new(&re.reshape(&shape), &im.reshape(&shape))?;
    Ok(scaled(z, norm.factor(n, false)))
}

/// The axis `axis` of `shape` and the points along it (`n`, else its
/// length).
///
/// Errors: a 0-d shape, an axis outside it, 0 points.
fn axis_and_points(
    op: &str,
    shape: &[usize],
    n: Option<usize>,
    axis: isize,
) -> Result<(usize, usize)> {
    if shape.is_empty() {
        return Err(Error::invalid(
            op,
            "a 0-d array (expected at least one axis)",
        ));
    }
    let a = resolve_axis(op, axis, shape.len())?;
    let n = n.unwrap_or(shape[a]);
    if n == 0 {
        return Err(Error::invalid(
            op,
            format!(
                "0 points along axis {a} of an array of shape {} (expected at least 1)",
                format_shape(shape)
            ),
        ));
    }
    Ok((a, n))
}

/// The elements before and after axis `a` of `shape`.
fn outer_inner(shape: &[usize], a: usize) -> (usize, usize) {
    (shape[..a].iter().product(), shape[a + 1..].iter().product())
}

/// NumPy's `irfft`: the real signal of `n` points (`2 (m - 1)` by default,
/// for `m` terms along `axis`) whose [`rfft`] is `z`; the imaginary parts
/// of the zero (and, for even `n`, the last) term are ignored.
///
/// Errors: as [`fft`]'s; `n` of 0 (also by default, from one term).
pub fn irfft(z: &ComplexArray, n: Option<usize>, axis: isize, norm: Norm) -> Result<Array> {
    z.re().check()?;
    z.im().check()?;
    let terms = match z.shape().is_empty() {
        true => 0,
        false => z.shape()[resolve_axis("irfft", axis, z.shape().len())?],
    };
    let (a, n) = axis_and_points(
        "irfft",
        z.shape(),
        Some(n.unwrap_or(2 * terms.saturating_sub(1))),
        axis,
    )?;
    let half = n / 2 + 1;
    let (re, im) = (resized(z.re(), a, half)?, resized(z.im(), a, half)?);
    let mut shape = re.shape().to_vec();
    let (outer, inner) = outer_inner(&shape, a);
    shape[a] = n;
    if outer * inner == 0 {
        return Ok(z.session().zeros(&shape, z.dtype().part()));
    }
    let lines = [outer, half, inner];
    let x = real::inverse((&re.reshape(&lines), &im.reshape(&lines)), n)?.reshape(&shape);
    let factor = norm.factor(n, true);
    Ok(if factor == 1.0 { x } else { &x * factor })
}

/// The kernel of [`rfft`] (`inverse`: of [`irfft`]) for real parts of
/// `dtype` (`f32` or `f64`); public to inspect its code.
pub fn rfft_kernel(dtype: DType, inverse: bool) -> Result<Kernel> {
    let direction = match inverse {
        true => real::Direction::Inverse,
        false => real::Direction::Forward,
    };
    real::real_kernel(dtype, direction)
}

/// NumPy's `hfft`: the real transform of a signal with Hermitian symmetry
/// given by its first half `z` (`irfft` of the conjugate, the norm's
/// direction swapped).
///
/// Errors: as [`irfft`]'s.
pub fn hfft(z: &ComplexArray, n: Option<usize>, axis: isize, norm: Norm) -> Result<Array> {
    irfft(&z.conj(), n, axis, norm.swapped())
}

/// NumPy's `ihfft`: the inverse of [`hfft`] (the conjugate of `rfft`, the
/// norm's direction swapped).
///
/// Errors: as [`rfft`]'s.
pub fn ihfft(x: &Array, n: Option<usize>, axis: isize, norm: Norm) -> Result<ComplexArray> {
    Ok(rfft(x, n, axis, norm.swapped())?.conj())
}

/// The kernel transforming a 3-d array of `dtype`'s parts along its
/// middle axis (arguments: real and imaginary parts in, real and
/// imaginary parts out, and `inverse`, 0 or 1); public to inspect its code.
pub fn fft_kernel(dtype: ComplexDType) -> Result<Kernel> {
    static KERNELS: KernelCache<ComplexDType> = KernelCache::new();
    KERNELS.get_or_build(dtype, || {
        let part = dtype.part();
        let built = lazyfuse_kernel::Kernel::build(&format!("lf_fft_{dtype}"), |k| {
            let (re, im) = (k.array("re", part, 3), k.array("im", part, 3));
            let re_out = k.array_mut("re_out", part, 3);
            let im_out = k.array_mut("im_out", part, 3);
            let inverse = k.scalar("inverse", DType::I64);
            let (start, stride) = lines::grid_stride(k);
            let (outer, n, inner) = (re.len(0), re.len(1), re.len(2));
            // e^(∓2πi jk/n): the sign is + for the inverse.
            let sign = Val::constant(-1.0, DType::F64) + inverse.cast(DType::F64) * 2.0;
            let step = k.let_(sign * (2.0 * std::f64::consts::PI) / n.cast(DType::F64));
            let total = &outer * &n * &inner;
            k.for_range(start, total, stride, |k, t| {
                // Output `col` of line (o, i).
                let [o, col, i] = lines::line_index(k, &t, &n, &inner);
                let zero = Val::constant(0.0, DType::F64);
                let (sum_re, sum_im) = (k.local(zero.clone()), k.local(zero));
                k.for_range(0i64, n.clone(), 1i64, |k, j| {
                    // (j col) mod n keeps the angle small and exact.
                    let turn = (&j * &col).apply_binary(BinaryOp::Rem, &n);
                    let angle = k.let_(turn.cast(DType::F64) * &step);
                    let (c, s) = (angle.cos(), angle.sin());
                    let at = [o.clone(), j, i.clone()];
                    let x_re = k.let_(re.at(at.clone()).cast(DType::F64));
                    let x_im = k.let_(im.at(at).cast(DType::F64));
                    k.set(&sum_re, sum_re.get() + &x_re * &c - &x_im * &s);
                    k.set(&sum_im, sum_im.get() + x_re * s + x_im * c);
                });
                let here = [o, col, i];
                k.store(&re_out, here.clone(), sum_re.get().cast(part));
                k.store(&im_out, here, sum_im.get().cast(part));
            });
        })?
        .with_host_routine(Arc::new(host::CpuFft))?
        .overwriting()?;
        Ok(Kernel::from_built(built))
    })
}

#[cfg(test)]
mod tests;
