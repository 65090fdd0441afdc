//! NumPy's functions of one complex array, in real operations on the
//! parts: one table ([`ComplexUnary`]) names each with its NumPy name and
//! whether its result is real.

use lazyfuse_core::{Array, Result};

use super::{ComplexArray, ComplexResult};

/// Declares [`ComplexUnary`] from its rows: variant, NumPy name, the
/// method computing it (`ComplexArray::method`), and whether its result is
/// `Real` or `Complex`.
macro_rules! complex_unary_table {
    ($($(#[$doc:meta])* $variant:ident => $numpy:literal, $method:ident, $kind:ident;)*) => {
        /// The functions of one complex array.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ComplexUnary {
            $($(#[$doc])* $variant,)*
        }

        impl ComplexUnary {
            /// Every function, in the table's order.
            pub const ALL: &'static [ComplexUnary] = &[$(ComplexUnary::$variant),*];

            /// NumPy's name of the function.
            pub fn name(self) -> &'static str {
                match self {
                    $(ComplexUnary::$variant => $numpy,)*
                }
            }

            /// The function of NumPy's name (`abs`, `conj` as NumPy's
            /// aliases), if there is one.
            pub fn from_name(name: &str) -> Option<ComplexUnary> {
                match name {
                    "abs" => Some(ComplexUnary::Absolute),
                    "conj" => Some(ComplexUnary::Conjugate),
                    $($numpy => Some(ComplexUnary::$variant),)*
                    _ => None,
                }
            }
        }

        impl ComplexArray {
            /// Applies `op`.
            pub fn apply(&self, op: ComplexUnary) -> ComplexResult {
                match op {
                    $(ComplexUnary::$variant => ComplexResult::$kind(self.$method()),)*
                }
            }
        }
    };
}

complex_unary_table! {
    /// `-z`.
    Negative => "negative", neg, Complex;
    /// `+z` (a copy).
    Positive => "positive", positive, Complex;
    /// The complex conjugate.
    Conjugate => "conjugate", conj, Complex;
    /// `|z|`, as `hypot` (no overflow for large parts).
    Absolute => "absolute", abs, Real;
    /// The argument, `arctan2(im, re)`.
    Angle => "angle", angle, Real;
    /// The real part.
    Real => "real", real, Real;
    /// The imaginary part.
    Imag => "imag", imag, Real;
    /// `z * z`.
    Square => "square", square, Complex;
    /// `1 / z`.
    Reciprocal => "reciprocal", reciprocal, Complex;
    /// `z / |z|` (0 at 0), NumPy 2's complex sign.
    Sign => "sign", sign, Complex;
    /// `e^z`; `exp(x + 0j)` is `exp(x) + 0j` for every `x`.
    Exp => "exp", exp, Complex;
    /// Natural logarithm, principal branch.
    Log => "log", log, Complex;
    /// Base-10 logarithm.
    Log10 => "log10", log10, Complex;
    /// Base-2 logarithm.
    Log2 => "log2", log2, Complex;
    /// Principal square root (FreeBSD's `csqrt`, without its rescaling of
    /// parts near the largest float).
    Sqrt => "sqrt", sqrt, Complex;
    /// Sine.
    Sin => "sin", sin, Complex;
    /// Cosine.
    Cos => "cos", cos, Complex;
    /// Tangent, `-i tanh(iz)`.
    Tan => "tan", tan, Complex;
    /// Hyperbolic sine.
    Sinh => "sinh", sinh, Complex;
    /// Hyperbolic cosine.
    Cosh => "cosh", cosh, Complex;
    /// Hyperbolic tangent (Kahan's formula, as FreeBSD's `ctanh`).
    Tanh => "tanh", tanh, Complex;
    /// `e^z - 1`, accurate near 0 (NumPy's `nc_expm1`).
    Expm1 => "expm1", expm1, Complex;
    /// `log(1 + z)` (NumPy's `nc_log1p`).
    Log1p => "log1p", log1p, Complex;
    /// Inverse sine (Kahan's formulas).
    Arcsin => "arcsin", arcsin, Complex;
    /// Inverse cosine (Kahan's formulas).
    Arccos => "arccos", arccos, Complex;
    /// Inverse tangent, `(i/2) log((i + z) / (i - z))`.
    Arctan => "arctan", arctan, Complex;
    /// Inverse hyperbolic sine, `-i arcsin(iz)`.
    Arcsinh => "arcsinh", arcsinh, Complex;
    /// Inverse hyperbolic cosine (Kahan's formulas).
    Arccosh => "arccosh", arccosh, Complex;
    /// Inverse hyperbolic tangent, `-i arctan(iz)`.
    Arctanh => "arctanh", arctanh, Complex;
    /// True where either part is NaN.
    IsNan => "isnan", isnan, Real;
    /// True where either part is infinite.
    IsInf => "isinf", isinf, Real;
    /// True where both parts are finite.
    IsFinite => "isfinite", isfinite, Real;
}

impl ComplexArray {
    /// `-z`.
    pub fn neg(&self) -> ComplexArray {
        ComplexArray::of_parts(-&self.re, -&self.im)
    }

    /// `+z`.
    pub fn positive(&self) -> ComplexArray {
        self.clone()
    }

    /// The complex conjugate.
    pub fn conj(&self) -> ComplexArray {
        ComplexArray::of_parts(self.re.clone(), -&self.im)
    }

    /// `|z|` (real).
    pub fn abs(&self) -> Array {
        self.re.hypot(&self.im)
    }

    /// The argument (real).
    pub fn angle(&self) -> Array {
        self.im.arctan2(&self.re)
    }

    /// The real part.
    pub fn real(&self) -> Array {
        self.re.clone()
    }

    /// The imaginary part.
    pub fn imag(&self) -> Array {
        self.im.clone()
    }

    /// `z * z`.
    pub fn square(&self) -> ComplexArray {
        self.mul_parts(self)
    }

    /// `1 / z`.
    pub fn reciprocal(&self) -> ComplexArray {
        let cx = self.session();
        let one = ComplexArray::of_parts(cx.full_like(&self.re, 1.0), cx.zeros_like(&self.im));
        one.div_parts(self)
    }

    /// `z / |z|`, 0 at 0.
    pub fn sign(&self) -> ComplexArray {
        let size = self.abs();
        let zero = size.eq(0.0);
        let part = |p: &Array| zero.where_(p, p / &size);
        ComplexArray::of_parts(part(&self.re), part(&self.im))
    }

    /// `e^z`.
    pub fn exp(&self) -> ComplexArray {
        let scale = self.re.exp();
        let re = &scale * &self.im.cos();
        // exp(x + 0j) keeps its zero imaginary part even for infinite x.
        let im = self.im.eq(0.0).where_(&self.im, &scale * &self.im.sin());
        ComplexArray::of_parts(re, im)
    }

    /// Natural logarithm.
    pub fn log(&self) -> ComplexArray {
        ComplexArray::of_parts(self.abs().log(), self.angle())
    }

    /// Base-10 logarithm.
    pub fn log10(&self) -> ComplexArray {
        self.log_over(std::f64::consts::LN_10)
    }

    /// Base-2 logarithm.
    pub fn log2(&self) -> ComplexArray {
        self.log_over(std::f64::consts::LN_2)
    }

    fn log_over(&self, ln_base: f64) -> ComplexArray {
        let natural = self.log();
        ComplexArray::of_parts(&natural.re / ln_base, &natural.im / ln_base)
    }

    /// Principal square root.
    pub fn sqrt(&self) -> ComplexArray {
        let (a, b) = (&self.re, &self.im);
        let h = a.hypot(b);
        // a >= 0: t = sqrt((a + h) / 2), result (t, b / 2t); else
        // t = sqrt((h - a) / 2), result (|b| / 2t, copysign(t, b)).
        let t_pos = ((a + &h) * 0.5).sqrt();
        let t_neg = ((&h - a) * 0.5).sqrt();
        let non_negative = a.ge(0.0);
        let re = non_negative.where_(&t_pos, b.abs() / (&t_neg * 2.0));
        let im = non_negative.where_(b / (&t_pos * 2.0), t_neg.copysign(b));
        // Zero: (0, b). An infinite imaginary part: (inf, b). An infinite
        // real part with a finite imaginary one: (inf, ±0) or (0, ±inf).
        let zero = a.eq(0.0).logical_and(b.eq(0.0));
        let inf_b = b.isinf();
        let inf_a = a.isinf().logical_and(b.isfinite());
        let re = zero.where_(
            0.0,
            inf_b.where_(f64::INFINITY, inf_a.where_(a.gt(0.0).where_(a, 0.0), re)),
        );
        let signed = |v: f64| self.session().full_like(b, v).copysign(b);
        let im = zero.where_(
            b,
            inf_b.where_(
                b,
                inf_a.where_(a.gt(0.0).where_(signed(0.0), signed(f64::INFINITY)), im),
            ),
        );
        ComplexArray::of_parts(re, im)
    }

    /// Sine: `sin a cosh b + i cos a sinh b`.
    pub fn sin(&self) -> ComplexArray {
        let (a, b) = (&self.re, &self.im);
        ComplexArray::of_parts(a.sin() * b.cosh(), a.cos() * b.sinh())
    }

    /// Cosine: `cos a cosh b - i sin a sinh b`.
    pub fn cos(&self) -> ComplexArray {
        let (a, b) = (&self.re, &self.im);
        ComplexArray::of_parts(a.cos() * b.cosh(), -(a.sin() * b.sinh()))
    }

    /// Hyperbolic sine: `sinh a cos b + i cosh a sin b`.
    pub fn sinh(&self) -> ComplexArray {
        let (a, b) = (&self.re, &self.im);
        ComplexArray::of_parts(a.sinh() * b.cos(), a.cosh() * b.sin())
    }

    /// Hyperbolic cosine: `cosh a cos b + i sinh a sin b`.
    pub fn cosh(&self) -> ComplexArray {
        let (a, b) = (&self.re, &self.im);
        ComplexArray::of_parts(a.cosh() * b.cos(), a.sinh() * b.sin())
    }

    /// Hyperbolic tangent by Kahan's formula: with `t = tan b`,
    /// `s = sinh a`, `beta = 1 + t²`, `rho = sqrt(1 + s²)`:
    /// `(beta rho s + i t) / (1 + beta s²)`; for `|a| >= 22`, where `s²`
    /// overflows, `copysign(1, a) + 4i sin b cos b e^(-2|a|)`.
    pub fn tanh(&self) -> ComplexArray {
        let (a, b) = (&self.re, &self.im);
        let t = b.tan();
        let beta = &t * &t + 1.0;
        let s = a.sinh();
        let rho = (&s * &s + 1.0).sqrt();
        let denominator = &beta * &s * &s + 1.0;
        let re = &beta * &rho * &s / &denominator;
        let im = &t / &denominator;
        let large = a.abs().ge(22.0);
        let far_re = self.session().full_like(a, 1.0).copysign(a);
        let far_im = b.sin() * b.cos() * 4.0 * (a.abs() * -2.0).exp();
        let (re, im) = (large.where_(far_re, re), large.where_(far_im, im));
        // What is not finite, as FreeBSD's ctanh: tanh(±inf + i y) for y
        // infinite or NaN is ±1 + 0i (the sign of y's); tanh(a + i NaN) and tanh(a ± i inf) are NaN + NaN i for
        // finite a other than 0 (0 + NaN i at 0); tanh(NaN + 0i) is NaN + 0i.
        let signed_zero = self.session().zeros_like(b).copysign(b);
        let im = a
            .isinf()
            .logical_and(b.isfinite().logical_not())
            .where_(signed_zero, im);
        let bad_b = a.isfinite().logical_and(b.isfinite().logical_not());
        let re = bad_b.where_(a.eq(0.0).where_(a, f64::NAN), re);
        let im = bad_b.where_(f64::NAN, im);
        let nan_real_axis = a.isnan().logical_and(b.eq(0.0));
        ComplexArray::of_parts(re, nan_real_axis.where_(b, im))
    }

    /// Tangent: `-i tanh(iz)`.
    pub fn tan(&self) -> ComplexArray {
        let rotated = ComplexArray::of_parts(-&self.im, self.re.clone()).tanh();
        ComplexArray::of_parts(rotated.im.clone(), -&rotated.re)
    }

    /// `e^z - 1`: `expm1(a) cos b - 2 sin²(b/2) + i e^a sin b`.
    pub fn expm1(&self) -> ComplexArray {
        let (a, b) = (&self.re, &self.im);
        let half = (b * 0.5).sin();
        let re = a.expm1() * b.cos() - &half * &half * 2.0;
        ComplexArray::of_parts(re, a.exp() * b.sin())
    }

    /// `log(1 + z)`: `log |1 + z| + i arg(1 + z)`.
    pub fn log1p(&self) -> ComplexArray {
        let shifted = &self.re + 1.0;
        ComplexArray::of_parts(shifted.hypot(&self.im).log(), self.im.arctan2(&shifted))
    }

    /// `i z`.
    fn times_i(&self) -> ComplexArray {
        ComplexArray::of_parts(-&self.im, self.re.clone())
    }

    /// `-i z`.
    fn times_minus_i(&self) -> ComplexArray {
        ComplexArray::of_parts(self.im.clone(), -&self.re)
    }

    /// `c + z` for a real constant `c`.
    fn plus(&self, c: f64) -> ComplexArray {
        ComplexArray::of_parts(&self.re + c, self.im.clone())
    }

    /// `c - z` for a real constant `c`.
    fn minus_from(&self, c: f64) -> ComplexArray {
        ComplexArray::of_parts(-&self.re + c, -&self.im)
    }

    /// Inverse sine by Kahan's formulas (no cancellation far from 0):
    /// `atan2(a, Re(√(1-z) √(1+z))) + i asinh(Im(conj(√(1-z)) √(1+z)))`.
    pub fn arcsin(&self) -> ComplexArray {
        let (below, above) = (self.minus_from(1.0).sqrt(), self.plus(1.0).sqrt());
        let re = self.re.arctan2(&below.mul_parts(&above).re);
        ComplexArray::of_parts(re, below.conj().mul_parts(&above).im.arcsinh())
    }

    /// Inverse cosine by Kahan's formulas:
    /// `2 atan2(Re √(1-z), Re √(1+z)) + i asinh(Im(conj(√(1+z)) √(1-z)))`.
    pub fn arccos(&self) -> ComplexArray {
        let (below, above) = (self.minus_from(1.0).sqrt(), self.plus(1.0).sqrt());
        let re = below.re.arctan2(&above.re) * 2.0;
        ComplexArray::of_parts(re, above.conj().mul_parts(&below).im.arcsinh())
    }

    /// Inverse tangent: `(i/2) (log(1 - iz) - log(1 + iz))`.
    pub fn arctan(&self) -> ComplexArray {
        let iz = self.times_i();
        let difference = iz.minus_from(1.0).log().sub_parts(&iz.plus(1.0).log());
        ComplexArray::of_parts(&difference.re * 0.5, &difference.im * 0.5).times_i()
    }

    /// Inverse hyperbolic sine: `-i arcsin(iz)`.
    pub fn arcsinh(&self) -> ComplexArray {
        self.times_i().arcsin().times_minus_i()
    }

    /// Inverse hyperbolic cosine by Kahan's formulas:
    /// `asinh(Re(conj(√(z-1)) √(z+1))) + 2i atan2(Im √(z-1), Re √(z+1))`.
    pub fn arccosh(&self) -> ComplexArray {
        let (below, above) = (self.plus(-1.0).sqrt(), self.plus(1.0).sqrt());
        let re = below.conj().mul_parts(&above).re.arcsinh();
        ComplexArray::of_parts(re, below.im.arctan2(&above.re) * 2.0)
    }

    /// Inverse hyperbolic tangent: `-i arctan(iz)`.
    pub fn arctanh(&self) -> ComplexArray {
        self.times_i().arctan().times_minus_i()
    }

    /// True where either part is NaN.
    pub fn isnan(&self) -> Array {
        self.re.isnan().logical_or(self.im.isnan())
    }

    /// True where either part is infinite.
    pub fn isinf(&self) -> Array {
        self.re.isinf().logical_or(self.im.isinf())
    }

    /// True where both parts are finite.
    pub fn isfinite(&self) -> Array {
        self.re.isfinite().logical_and(self.im.isfinite())
    }

    /// Applies the function of NumPy's name `name`.
    ///
    /// Errors: a name no complex function has.
    pub fn apply_named(&self, name: &str) -> Result<ComplexResult> {
        match ComplexUnary::from_name(name) {
            Some(op) => Ok(self.apply(op)),
            None => Err(lazyfuse_core::Error::invalid(
                name,
                format!(
                    "a complex operand of dtype {} (this function has no complex form yet)",
                    self.dtype()
                ),
            )),
        }
    }
}
