//! Complex arrays (`complex64`, `complex128`) as pairs of real lazy
//! arrays: a [`ComplexArray`] is its real and imaginary parts, two
//! `f32` or `f64` arrays of one shape, and every complex operation is
//! written in real operations on them. So complex work fuses exactly as
//! real work does, on every backend at once (one generated kernel computes
//! both parts of `exp(1j * phase) * w`, and values the two parts share are
//! computed once), and the parts are the strided views NumPy's `x.real`
//! and `x.imag` are. NumPy's interleaved layout exists only at the
//! boundary ([`ComplexArray::from_interleaved`],
//! [`ComplexArray::to_interleaved`]) and inside the CPU's FFT.
//!
//! The formulas are NumPy's (`npy_math`): Smith's division, `abs` as
//! `hypot`, `sqrt` and `tanh` as FreeBSD's `csqrt`/`ctanh` (which NumPy
//! vendors), integer powers by repeated multiplication. Special values
//! follow NumPy where the formulas reach them (see each function).
//!
//! ```
//! use lazyfuse::{ComplexArray, Context};
//!
//! let cx = Context::cpu();
//! let phase = cx.from_slice(&[0.0f64, 0.25, 0.5]);
//! let z = ComplexArray::from_polar(&cx.ones(&[3], lazyfuse::DType::F64), &(phase * std::f64::consts::TAU))?;
//! let (re, im) = z.mul(&z)?.to_parts::<f64>()?;
//! assert!((re[1] + 1.0).abs() < 1e-12 && im[1].abs() < 1e-12); // i * i = -1
//! # Ok::<(), lazyfuse::Error>(())
//! ```

mod functions;

pub use functions::ComplexUnary;

use std::fmt;

use lazyfuse_core::shape::format_shape;
use lazyfuse_core::{promote, Array, DType, Element, Error, Result, Session};

/// The dtype of a complex array, named by its parts' dtype as NumPy names
/// it: `complex64` has `f32` parts, `complex128` `f64` parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ComplexDType {
    /// Two `f32` parts (NumPy's `complex64`).
    C64,
    /// Two `f64` parts (NumPy's `complex128`).
    C128,
}

impl ComplexDType {
    /// The dtype of each part.
    pub fn part(self) -> DType {
        match self {
            ComplexDType::C64 => DType::F32,
            ComplexDType::C128 => DType::F64,
        }
    }

    /// The complex dtype holding values of real dtype `dtype` exactly
    /// where it can (NumPy's `np.result_type(dtype, 1j)` for arrays:
    /// `f16`, `bf16` and `f32` give `complex64`; `f64`, integers and bool
    /// `complex128`).
    pub fn holding(dtype: DType) -> ComplexDType {
        match dtype {
            DType::F16 | DType::BF16 | DType::F32 => ComplexDType::C64,
            _ => ComplexDType::C128,
        }
    }

    /// NumPy's name: `complex64` or `complex128`.
    pub fn name(self) -> &'static str {
        match self {
            ComplexDType::C64 => "complex64",
            ComplexDType::C128 => "complex128",
        }
    }

    /// The complex dtype of NumPy's name, if it is one.
    pub fn from_name(name: &str) -> Option<ComplexDType> {
        match name {
            "complex64" => Some(ComplexDType::C64),
            "complex128" => Some(ComplexDType::C128),
            _ => None,
        }
    }
}

impl fmt::Display for ComplexDType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A lazy complex array: its real and imaginary parts, real arrays of
/// one shape and one float dtype (`f32` or `f64`). Cloning is cheap.
#[derive(Clone, Debug)]
pub struct ComplexArray {
    re: Array,
    im: Array,
}

/// The other operand of a complex binary operation.
#[derive(Clone, Debug)]
pub enum ComplexOperand {
    /// A complex array.
    Complex(ComplexArray),
    /// A real array (its imaginary part is zero).
    Real(Array),
    /// A complex scalar (real and imaginary parts), weak in promotion as a
    /// Python `complex` is (NEP 50): it takes the array's precision.
    Scalar(f64, f64),
}

impl From<&ComplexArray> for ComplexOperand {
    fn from(z: &ComplexArray) -> ComplexOperand {
        ComplexOperand::Complex(z.clone())
    }
}

impl From<&Array> for ComplexOperand {
    fn from(x: &Array) -> ComplexOperand {
        ComplexOperand::Real(x.clone())
    }
}

impl From<f64> for ComplexOperand {
    fn from(x: f64) -> ComplexOperand {
        ComplexOperand::Scalar(x, 0.0)
    }
}

impl From<(f64, f64)> for ComplexOperand {
    fn from((re, im): (f64, f64)) -> ComplexOperand {
        ComplexOperand::Scalar(re, im)
    }
}

/// The complex binary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ComplexBinary {
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`: `(ac - bd) + (ad + bc)i`, as NumPy (no recovery of
    /// infinities from NaN, as C99's Annex G would do).
    Mul,
    /// `a / b` by Smith's method, as NumPy.
    Div,
    /// `a ** b`: `exp(b log a)`, with NumPy's values at `b = 0` and `a = 0`.
    Pow,
    /// `a == b` (a bool array): both parts equal.
    Eq,
    /// `a != b` (a bool array): either part differs.
    Ne,
}

impl ComplexBinary {
    /// Every operation, in declaration order.
    pub const ALL: [ComplexBinary; 7] = [
        ComplexBinary::Add,
        ComplexBinary::Sub,
        ComplexBinary::Mul,
        ComplexBinary::Div,
        ComplexBinary::Pow,
        ComplexBinary::Eq,
        ComplexBinary::Ne,
    ];

    /// NumPy's name of the operation (`add`, …, `not_equal`).
    pub fn name(self) -> &'static str {
        match self {
            ComplexBinary::Add => "add",
            ComplexBinary::Sub => "subtract",
            ComplexBinary::Mul => "multiply",
            ComplexBinary::Div => "divide",
            ComplexBinary::Pow => "power",
            ComplexBinary::Eq => "equal",
            ComplexBinary::Ne => "not_equal",
        }
    }

    /// The operation of NumPy's name (`true_divide` too), if there is one.
    pub fn from_name(name: &str) -> Option<ComplexBinary> {
        match name {
            "true_divide" => Some(ComplexBinary::Div),
            _ => Self::ALL.into_iter().find(|op| op.name() == name),
        }
    }
}

/// The result of a complex binary operation: complex, or a bool array
/// for the comparisons.
#[derive(Clone, Debug)]
pub enum ComplexResult {
    /// A complex array.
    Complex(ComplexArray),
    /// A real array.
    Real(Array),
}

impl ComplexResult {
    /// The complex array, or an error naming `op` when it is real.
    pub fn complex(self, op: &str) -> Result<ComplexArray> {
        match self {
            ComplexResult::Complex(z) => Ok(z),
            ComplexResult::Real(_) => Err(Error::internal(
                op,
                "a real result where a complex one was expected",
            )),
        }
    }
}

/// The parts' dtype of lifting real dtype `dtype` into complex work
/// beside parts of `other`: NumPy's promotion with the lifted dtype's
/// complex kind (`f32` parts and an `int32` array give `f64` parts).
fn joint_part(a: DType, b: DType) -> DType {
    let lift = |d: DType| match d {
        DType::F16 | DType::BF16 => DType::F32,
        other => other,
    };
    match promote(lift(a), lift(b)) {
        d @ (DType::F32 | DType::F64) => d,
        _ => DType::F64,
    }
}

impl ComplexArray {
    /// The complex array of parts `re` and `im`: of one shape (no
    /// broadcasting) and one session; each is cast to the parts' dtype
    /// their promotion gives (integers to `f64`, `f16` to `f32`).
    pub fn new(re: &Array, im: &Array) -> Result<ComplexArray> {
        re.check()?;
        im.check()?;
        if !re.session().same_as(im.session()) {
            return Err(Error::invalid(
                "complex",
                "parts of two contexts (expected parts of one context)",
            ));
        }
        if re.shape() != im.shape() {
            return Err(Error::ShapeMismatch {
                op: "complex".into(),
                message: format!(
                    "a real part of shape {} and an imaginary part of shape {} (expected one shape)",
                    format_shape(re.shape()),
                    format_shape(im.shape())
                ),
            });
        }
        let part = joint_part(re.dtype(), im.dtype());
        Ok(ComplexArray::of_parts(re.astype(part), im.astype(part)))
    }

    /// Parts known to be of one shape and one float dtype.
    fn of_parts(re: Array, im: Array) -> ComplexArray {
        let cast = |a: Array, d: DType| if a.dtype() == d { a } else { a.astype(d) };
        let part = re.dtype();
        ComplexArray {
            im: cast(im, part),
            re,
        }
    }

    /// `x` as a complex array of dtype `dtype` (its imaginary part zero),
    /// or of the dtype holding it ([`ComplexDType::holding`]).
    pub fn from_real(x: &Array, dtype: Option<ComplexDType>) -> Result<ComplexArray> {
        x.check()?;
        let part = dtype
            .unwrap_or_else(|| ComplexDType::holding(x.dtype()))
            .part();
        let re = x.astype(part);
        let im = x.session().zeros_like(&re);
        Ok(ComplexArray { re, im })
    }

    /// `r * exp(i theta)`: parts `r cos(theta)` and `r sin(theta)`.
    pub fn from_polar(r: &Array, theta: &Array) -> Result<ComplexArray> {
        let part = joint_part(r.dtype(), theta.dtype());
        let (r, theta) = (r.astype(part), theta.astype(part));
        ComplexArray::new(&(&r * &theta.cos()), &(&r * &theta.sin()))
    }

    /// The real part (NumPy's `z.real`).
    pub fn re(&self) -> &Array {
        &self.re
    }

    /// The imaginary part (NumPy's `z.imag`).
    pub fn im(&self) -> &Array {
        &self.im
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        self.re.shape()
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.re.len()
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.re.is_empty()
    }

    /// The complex dtype.
    pub fn dtype(&self) -> ComplexDType {
        match self.re.dtype() {
            DType::F32 => ComplexDType::C64,
            _ => ComplexDType::C128,
        }
    }

    /// The session the parts belong to.
    pub fn session(&self) -> &Session {
        self.re.session()
    }

    /// Both parts cast to `dtype`'s.
    pub fn astype(&self, dtype: ComplexDType) -> ComplexArray {
        ComplexArray::of_parts(self.re.astype(dtype.part()), self.im.astype(dtype.part()))
    }

    /// Applies `f` to both parts (reshapes, views, transposes).
    pub fn map_parts(&self, f: impl Fn(&Array) -> Array) -> ComplexArray {
        ComplexArray::of_parts(f(&self.re), f(&self.im))
    }

    /// Both parts' values, computed in one demand.
    pub fn to_parts<T: Element>(&self) -> Result<(Vec<T>, Vec<T>)> {
        self.session().eval(&[&self.re, &self.im])?;
        Ok((self.re.to_vec::<T>()?, self.im.to_vec::<T>()?))
    }

    /// The values in NumPy's layout, real and imaginary part of each
    /// element one after the other (`2 * len()` values).
    pub fn to_interleaved<T: Element>(&self) -> Result<Vec<T>> {
        let (re, im) = self.to_parts::<T>()?;
        Ok(re.into_iter().zip(im).flat_map(|(r, i)| [r, i]).collect())
    }

    /// The complex array whose elements are the pairs along the last axis
    /// of `x` (of length 2), as NumPy's complex arrays viewed as reals:
    /// the parts are views of `x`.
    ///
    /// Errors: a last axis of another length, a 0-d `x`.
    pub fn from_interleaved(x: &Array) -> Result<ComplexArray> {
        x.check()?;
        let Some((&2, shape)) = x.shape().split_last() else {
            return Err(Error::ShapeMismatch {
                op: "complex".into(),
                message: format!(
                    "values of shape {} (expected a last axis of 2: real and imaginary parts)",
                    format_shape(x.shape())
                ),
            });
        };
        let last = shape.len();
        let part = |start: isize| {
            x.slice_axis(last, Some(start), Some(start + 1), 1)
                .reshape(shape)
        };
        ComplexArray::new(&part(0), &part(1))
    }

    /// The other operand's parts, in this array's session and of the
    /// parts' joint dtype, with this array's parts cast to it too.
    fn aligned(&self, other: ComplexOperand) -> Result<(ComplexArray, ComplexArray)> {
        let other = match other {
            ComplexOperand::Complex(z) => z,
            ComplexOperand::Real(x) => {
                x.check()?;
                let part = joint_part(x.dtype(), self.re.dtype());
                ComplexArray::from_real(&x, None)?.astype(complex_of(part))
            }
            ComplexOperand::Scalar(re, im) => {
                let (cx, part) = (self.session(), self.re.dtype());
                ComplexArray::of_parts(cx.full(&[], re, part), cx.full(&[], im, part))
            }
        };
        if !other.session().same_as(self.session()) {
            return Err(Error::invalid(
                "complex operation",
                "operands of two contexts (expected arrays of one context)",
            ));
        }
        let joint = complex_of(joint_part(self.re.dtype(), other.re.dtype()));
        Ok((self.astype(joint), other.astype(joint)))
    }

    /// `op(self, other)`, or `op(other, self)` when `reflected`.
    pub fn binary(
        &self,
        op: ComplexBinary,
        other: impl Into<ComplexOperand>,
        reflected: bool,
    ) -> Result<ComplexResult> {
        self.re.check()?;
        let (a, b) = self.aligned(other.into())?;
        let (a, b) = if reflected { (b, a) } else { (a, b) };
        Ok(match op {
            ComplexBinary::Add => ComplexResult::Complex(a.add_parts(&b)),
            ComplexBinary::Sub => {
                ComplexResult::Complex(ComplexArray::of_parts(&a.re - &b.re, &a.im - &b.im))
            }
            ComplexBinary::Mul => ComplexResult::Complex(a.mul_parts(&b)),
            ComplexBinary::Div => ComplexResult::Complex(a.div_parts(&b)),
            ComplexBinary::Pow => ComplexResult::Complex(a.pow_parts(&b)),
            ComplexBinary::Eq => ComplexResult::Real(a.re.eq(&b.re).logical_and(a.im.eq(&b.im))),
            ComplexBinary::Ne => ComplexResult::Real(a.re.ne(&b.re).logical_or(a.im.ne(&b.im))),
        })
    }

    /// `self + other`.
    pub fn add(&self, other: impl Into<ComplexOperand>) -> Result<ComplexArray> {
        self.binary(ComplexBinary::Add, other, false)?
            .complex("add")
    }

    /// `self - other`.
    pub fn sub(&self, other: impl Into<ComplexOperand>) -> Result<ComplexArray> {
        self.binary(ComplexBinary::Sub, other, false)?
            .complex("subtract")
    }

    /// `self * other`.
    pub fn mul(&self, other: impl Into<ComplexOperand>) -> Result<ComplexArray> {
        self.binary(ComplexBinary::Mul, other, false)?
            .complex("multiply")
    }

    /// `self / other` (Smith's method).
    pub fn div(&self, other: impl Into<ComplexOperand>) -> Result<ComplexArray> {
        self.binary(ComplexBinary::Div, other, false)?
            .complex("divide")
    }

    /// `self ** other`.
    pub fn pow(&self, other: impl Into<ComplexOperand>) -> Result<ComplexArray> {
        self.binary(ComplexBinary::Pow, other, false)?
            .complex("power")
    }

    fn add_parts(&self, b: &ComplexArray) -> ComplexArray {
        ComplexArray::of_parts(&self.re + &b.re, &self.im + &b.im)
    }

    fn sub_parts(&self, b: &ComplexArray) -> ComplexArray {
        ComplexArray::of_parts(&self.re - &b.re, &self.im - &b.im)
    }

    fn mul_parts(&self, b: &ComplexArray) -> ComplexArray {
        let (a, c) = (self, b);
        ComplexArray::of_parts(&a.re * &c.re - &a.im * &c.im, &a.re * &c.im + &a.im * &c.re)
    }

    /// Smith's division, as NumPy's loops: by the part of the divisor
    /// larger in magnitude, so that no square of it overflows; a zero
    /// divisor divides each part by zero (infinities or NaN).
    fn div_parts(&self, b: &ComplexArray) -> ComplexArray {
        let (ar, ai, br, bi) = (&self.re, &self.im, &b.re, &b.im);
        let real_larger = br.abs().ge(bi.abs());
        // |br| >= |bi|: rat = bi / br; scale = 1 / (br + bi * rat).
        let rat1 = bi / br;
        let scale1 = 1.0 / (br + bi * &rat1);
        let re1 = (ar + ai * &rat1) * &scale1;
        let im1 = (ai - ar * &rat1) * &scale1;
        // |br| < |bi| (or NaN): rat = br / bi; scale = 1 / (bi + br * rat).
        let rat2 = br / bi;
        let scale2 = 1.0 / (bi + br * &rat2);
        let re2 = (ar * &rat2 + ai) * &scale2;
        let im2 = (ai * &rat2 - ar) * &scale2;
        // Both zero: each part over |br| (a signed infinity or NaN).
        let zero = br.eq(0.0).logical_and(bi.eq(0.0));
        let (re0, im0) = (ar / br.abs(), ai / br.abs());
        let pick = |z: Array, one: Array, two: Array| zero.where_(z, real_larger.where_(one, two));
        ComplexArray::of_parts(pick(re0, re1, re2), pick(im0, im1, im2))
    }

    /// `exp(b log a)`, with NumPy's special values: `a ** 0` is 1, and
    /// `0 ** b` is 0 for real positive `b` and NaN otherwise.
    fn pow_parts(&self, b: &ComplexArray) -> ComplexArray {
        let general = b.mul_parts(&self.log()).exp();
        let exponent_zero = b.re.eq(0.0).logical_and(b.im.eq(0.0));
        let base_zero = self.re.eq(0.0).logical_and(self.im.eq(0.0));
        let positive_real = b.re.gt(0.0).logical_and(b.im.eq(0.0));
        let at_zero = positive_real.where_(0.0, f64::NAN);
        let pick = |one: f64, general: &Array| {
            exponent_zero.where_(one, base_zero.where_(&at_zero, general))
        };
        ComplexArray::of_parts(pick(1.0, &general.re), pick(0.0, &general.im))
    }

    /// `self ** n` for an integer `n`, by repeated squaring as NumPy does
    /// for `|n| < 100` (exact where the products are; a negative `n` is
    /// `1 / self ** |n|`); larger powers as [`pow`](Self::pow).
    pub fn powi(&self, n: i64) -> Result<ComplexArray> {
        self.re.check()?;
        if n.unsigned_abs() >= 100 {
            return self.pow(n as f64);
        }
        let mut result: Option<ComplexArray> = None;
        let (mut base, mut k) = (self.clone(), n.unsigned_abs());
        while k > 0 {
            if k & 1 == 1 {
                result = Some(match result {
                    Some(r) => r.mul_parts(&base),
                    None => base.clone(),
                });
            }
            k >>= 1;
            if k > 0 {
                base = base.mul_parts(&base);
            }
        }
        let cx = self.session();
        let one = || ComplexArray::of_parts(cx.full_like(&self.re, 1.0), cx.zeros_like(&self.im));
        let positive = result.unwrap_or_else(one);
        Ok(match n < 0 {
            true => one().div_parts(&positive),
            false => positive,
        })
    }

    /// The sum over `axes` (of each part).
    pub fn sum_axes(&self, axes: &[isize], keepdims: bool) -> ComplexArray {
        self.map_parts(|p| p.sum_axes(axes, keepdims))
    }

    /// The mean over `axes` (of each part).
    pub fn mean_axes(&self, axes: &[isize], keepdims: bool) -> ComplexArray {
        self.map_parts(|p| p.mean_axes(axes, keepdims))
    }
}

/// The complex dtype of float parts `part`.
fn complex_of(part: DType) -> ComplexDType {
    match part {
        DType::F32 => ComplexDType::C64,
        _ => ComplexDType::C128,
    }
}

#[cfg(test)]
mod tests;
