//! The bodies of the vectorised functions: branch-free scalar code (selects,
//! bit operations, polynomials) that the compiler turns into SIMD when it
//! runs over a slice. One macro writes them for `f32` and `f64`; the types
//! differ only in their constants (`consts32`, `consts64`) and in how
//! `sin`/`cos` reduce their argument.

/// Polynomial coefficients (Taylor series: `1/k!`, `1/(2i+1)`), the
/// range-reduction splits of `ln 2` and `π/2`, and the domain limits.
mod consts32 {
    pub const EXP: [f32; 8] = [
        1.0e+00,
        1.0e+00,
        5.0e-01,
        1.6666667e-01,
        4.1666668e-02,
        8.333334e-03,
        1.3888889e-03,
        1.984127e-04,
    ];
    pub const EXPM1: [f32; 8] = [
        1.0e+00,
        5.0e-01,
        1.6666667e-01,
        4.1666668e-02,
        8.333334e-03,
        1.3888889e-03,
        1.984127e-04,
        2.4801588e-05,
    ];
    pub const SIN: [f32; 4] = [-1.6666667e-01, 8.333334e-03, -1.984127e-04, 2.7557319e-06];
    pub const COS: [f32; 5] = [
        -5.0e-01,
        4.1666668e-02,
        -1.3888889e-03,
        2.4801588e-05,
        -2.755732e-07,
    ];
    pub const LOG: [f32; 4] = [6.666667e-01, 4.0e-01, 2.857143e-01, 2.2222222e-01];
    /// `ln 2 = LN2_HI + LN2_LO`, `LN2_HI` with 9 significant bits so that
    /// `n * LN2_HI` is exact for every exponent `n`.
    pub const LN2_HI: f32 = 6.933594e-01;
    pub const LN2_LO: f32 = -2.1219444e-04;
    /// `exp` saturates to `inf` above and to `0` below.
    pub const EXP_HI: f32 = 89.0;
    pub const EXP_LO: f32 = -104.0;
    /// `tanh(x)` rounds to 1 above this.
    pub const TANH_ONE: f32 = 9.1;
    /// Taylor series of `tanh` (`x^3`, `x^5`, …) for `|x| < TANH_SERIES`.
    pub const TANH: [f32; 6] = [
        -3.3333334e-01,
        1.3333334e-01,
        -5.3968254e-02,
        2.1869488e-02,
        -8.863236e-03,
        3.592128e-03,
    ];
}

mod consts64 {
    pub const EXP: [f64; 14] = [
        1.0,
        1.0,
        0.5,
        0.16666666666666666,
        0.041666666666666664,
        0.008333333333333333,
        0.001388888888888889,
        0.0001984126984126984,
        2.48015873015873e-05,
        2.7557319223985893e-06,
        2.755731922398589e-07,
        2.505210838544172e-08,
        2.08767569878681e-09,
        1.6059043836821613e-10,
    ];
    pub const EXPM1: [f64; 14] = [
        1.0,
        0.5,
        0.16666666666666666,
        0.041666666666666664,
        0.008333333333333333,
        0.001388888888888889,
        0.0001984126984126984,
        2.48015873015873e-05,
        2.7557319223985893e-06,
        2.755731922398589e-07,
        2.505210838544172e-08,
        2.08767569878681e-09,
        1.6059043836821613e-10,
        1.1470745597729725e-11,
    ];
    pub const SIN: [f64; 8] = [
        -0.16666666666666666,
        0.008333333333333333,
        -0.0001984126984126984,
        2.7557319223985893e-06,
        -2.505210838544172e-08,
        1.6059043836821613e-10,
        -7.647163731819816e-13,
        2.8114572543455206e-15,
    ];
    pub const COS: [f64; 9] = [
        -0.5,
        0.041666666666666664,
        -0.001388888888888889,
        2.48015873015873e-05,
        -2.755731922398589e-07,
        2.08767569878681e-09,
        -1.1470745597729725e-11,
        4.779477332387385e-14,
        -1.5619206968586225e-16,
    ];
    pub const LOG: [f64; 10] = [
        0.6666666666666666,
        0.4,
        0.2857142857142857,
        0.2222222222222222,
        0.18181818181818182,
        0.15384615384615385,
        0.13333333333333333,
        0.11764705882352941,
        0.10526315789473684,
        0.09523809523809523,
    ];
    /// fdlibm's split of `ln 2` (`LN2_HI` ends in 32 zero bits).
    pub const LN2_HI: f64 = 0.6931471803691238;
    pub const LN2_LO: f64 = 1.9082149292705877e-10;
    pub const EXP_HI: f64 = 710.0;
    pub const EXP_LO: f64 = -746.0;
    pub const TANH_ONE: f64 = 19.1;
    pub const TANH: [f64; 12] = [
        -0.3333333333333333,
        0.13333333333333333,
        -0.05396825396825397,
        0.021869488536155203,
        -0.008863235529902197,
        0.003592128036572481,
        -0.0014558343870513183,
        0.000590027440945586,
        -0.00023912911424355248,
        9.691537956929451e-05,
        -3.927832388331683e-05,
        1.5918905069328964e-05,
    ];
    /// fdlibm's split of `π/2` into 33-bit pieces (`j * PIO2_k` is exact for
    /// `|j| < 2^20`) and a tail.
    pub const PIO2: [f64; 4] = [
        1.5707963267341256,
        6.077100506303966e-11,
        2.0222662487111665e-21,
        8.4784276603689e-32,
    ];
}

/// Below this `|x|`, `tanh` sums its Taylor series (each further term is
/// 0.037 times smaller), where `e / (e + 2)` would lose an ulp or two.
pub const TANH_SERIES: f64 = 0.3;

/// `sin` and `cos` are computed here for `|x| <= SIN_COS_LIMIT` (both
/// types): `|j| < 2^20` quadrants, where the reduction above is exact.
/// Larger arguments, infinities and NaN go to std's scalar functions.
pub const SIN_COS_LIMIT: f64 = 1.0e6;

macro_rules! float_kernels {
    ($module:ident, $t:ident, $u:ident, $i:ident, $c:ident, $reduce:ident, $fused:literal) => {
        /// The vectorisable bodies for this float type.
        pub mod $module {
            use super::$c as c;
            use super::$reduce as reduce;

            const MANT: u32 = $t::MANTISSA_DIGITS - 1;
            const BIAS: $i = $t::MAX_EXP as $i - 1;
            const SIGN: $u = 1 << ($u::BITS - 1);
            const MANT_MASK: $u = (1 << MANT) - 1;
            /// `1.5 * 2^MANT`: adding it rounds to an integer held in the low bits.
            const MAGIC: $t = (3u64 << (MANT - 1)) as $t;

            /// `c[0] + x*(c[1] + x*(c[2] + ...))`; with fused multiply-adds
            /// in the variant for CPUs that have them (only inlined into
            /// code compiled for FMA: elsewhere `mul_add` is a slow call).
            #[inline(always)]
            fn horner<const N: usize>(x: $t, coeffs: &[$t; N]) -> $t {
                let mut acc = coeffs[N - 1];
                for k in (0..N - 1).rev() {
                    acc = if $fused {
                        acc.mul_add(x, coeffs[k])
                    } else {
                        acc * x + coeffs[k]
                    };
                }
                acc
            }

            /// `x` rounded to the nearest integer (ties to even), as a
            /// float and as an integer; for `|x| < 2^(MANT-1)`.
            #[inline(always)]
            pub fn round_int(x: $t) -> ($t, $i) {
                let t = x + MAGIC;
                (t - MAGIC, t.to_bits().wrapping_sub(MAGIC.to_bits()) as $i)
            }

            /// `2^n` for a normal exponent `n`.
            #[inline(always)]
            fn pow2(n: $i) -> $t {
                $t::from_bits((n.wrapping_add(BIAS) as $u) << MANT)
            }

            /// `2^n` for an integer-valued float `n` with a normal result:
            /// adding `BIAS + MAGIC` leaves `n + BIAS` in the low bits, and
            /// the shift moves them into the exponent field (no integer
            /// conversion, which AVX2 lacks for 64-bit lanes).
            #[inline(always)]
            fn pow2_of(n: $t) -> $t {
                $t::from_bits((n + (BIAS as $t + MAGIC)).to_bits() << MANT)
            }

            /// `x` with the sign bit of `sign`.
            #[inline(always)]
            fn with_sign_of(x: $t, sign: $t) -> $t {
                $t::from_bits((x.to_bits() & !SIGN) | (sign.to_bits() & SIGN))
            }

            /// `e^x`: `x = n ln2 + r` (`|r| <= ln2/2`), `e^r` by its series,
            /// times `2^n` in two factors so that subnormal results round once.
            #[inline(always)]
            pub fn exp(x: $t) -> $t {
                // Comparisons are false for NaN, which flows through.
                let x = if x > c::EXP_HI { c::EXP_HI } else { x };
                let x = if x < c::EXP_LO { c::EXP_LO } else { x };
                let (n, _) = round_int(x * std::$t::consts::LOG2_E);
                let r = (x - n * c::LN2_HI) - n * c::LN2_LO;
                let (half, _) = round_int(n * 0.5);
                horner(r, &c::EXP) * pow2_of(half) * pow2_of(n - half)
            }

            /// `e^y - 1` for `0 <= y <= 2 * TANH_ONE`, without cancellation:
            /// `2^n expm1(r) + (2^n - 1)`, both terms of one sign.
            #[inline(always)]
            fn expm1_nonnegative(y: $t) -> $t {
                let (n, _) = round_int(y * std::$t::consts::LOG2_E);
                let r = (y - n * c::LN2_HI) - n * c::LN2_LO;
                let scale = pow2_of(n);
                scale * (r * horner(r, &c::EXPM1)) + (scale - 1.0)
            }

            /// `tanh(x)` for `|x| >= TANH_SERIES` (and NaN):
            /// `sign(x) * e / (e + 2)` with `e = expm1(2|x|)`.
            #[inline(always)]
            pub fn tanh_large(x: $t) -> $t {
                let a = $t::from_bits(x.to_bits() & !SIGN);
                let saturated = a > c::TANH_ONE;
                let e = expm1_nonnegative(if saturated { 0.0 } else { a + a });
                let t = if saturated { 1.0 } else { e / (e + 2.0) };
                with_sign_of(t, x)
            }

            /// `tanh(x)`: its series for small `|x|`, else `tanh_large`.
            #[inline(always)]
            pub fn tanh(x: $t) -> $t {
                let a = $t::from_bits(x.to_bits() & !SIGN);
                let z = a * a;
                let series = with_sign_of(a + a * z * horner(z, &c::TANH), x);
                if a < super::TANH_SERIES as $t {
                    series
                } else {
                    tanh_large(x)
                }
            }

            /// `sin(x)` (or `cos(x)` when `cosine`) for `|x| <= SIN_COS_LIMIT`
            /// and NaN: quadrant `q` and `r` in `[-π/4, π/4]` from `reduce`,
            /// then the series of `sin r` or `cos r` with the quadrant's sign.
            #[inline(always)]
            pub fn sin_cos(x: $t, cosine: bool) -> $t {
                let (r, q) = reduce(x);
                let z = r * r;
                let sin = r + r * z * horner(z, &c::SIN);
                let cos = 1.0 + z * horner(z, &c::COS);
                let q = if cosine { q.wrapping_add(1) } else { q };
                let v = if q & 1 != 0 { cos } else { sin };
                let v = $t::from_bits(v.to_bits() ^ (((q & 2) as $u) << ($u::BITS - 2)));
                // sin(±0) = ±0 (C99, the array API): the reduction loses
                // the zero's sign.
                if !cosine && x == 0.0 {
                    x
                } else {
                    v
                }
            }

            /// `ln x`: `x = 2^k m` with `m = 1 + f` in `[√½, √2)`; with
            /// `s = f/(2+f)` (`|s| < 0.172`), `ln m = 2 atanh(s) = f - s (f - R)`
            /// where `R = 2s²/3 + 2s⁴/5 + …` (fdlibm's arrangement: the
            /// exact `f` leads, the rounding errors stay in the small
            /// correction). Subnormals are scaled first; 0, negatives,
            /// infinity and NaN by selects.
            #[inline(always)]
            pub fn log(x: $t) -> $t {
                let tiny = x < $t::MIN_POSITIVE;
                let scaled = if tiny { x * pow2(MANT as $i) } else { x };
                let offset = (1.0 as $t).to_bits() - std::$t::consts::FRAC_1_SQRT_2.to_bits();
                let bits = scaled.to_bits().wrapping_add(offset);
                let k = ((bits >> MANT) as $i).wrapping_sub(BIAS);
                let k = if tiny { k.wrapping_sub(MANT as $i) } else { k };
                let m =
                    $t::from_bits((bits & MANT_MASK) + std::$t::consts::FRAC_1_SQRT_2.to_bits());
                let f = m - 1.0;
                let s = f / (2.0 + f);
                let z = s * s;
                let ln_m = f - s * (f - z * horner(z, &c::LOG));
                let kf = k as $t;
                let v = kf * c::LN2_HI + (ln_m + kf * c::LN2_LO);
                let v = if x == $t::INFINITY { x } else { v };
                let v = if x == 0.0 { $t::NEG_INFINITY } else { v };
                if x >= 0.0 {
                    v
                } else {
                    $t::NAN
                }
            }
        }
    };
}

float_kernels!(single, f32, u32, i32, consts32, reduce_f32, false);
float_kernels!(double, f64, u64, i64, consts64, reduce_f64, false);
float_kernels!(single_fma, f32, u32, i32, consts32, reduce_f32, true);
float_kernels!(double_fma, f64, u64, i64, consts64, reduce_f64, true);

/// The `f32` argument reduction, done in `f64`: `r = x - j π/2` with
/// `π/2` in two pieces, exact for `|j| < 2^20`, then rounded once to `f32`.
#[inline(always)]
fn reduce_f32(x: f32) -> (f32, i32) {
    let x = f64::from(x);
    let (j, q) = double::round_int(x * std::f64::consts::FRAC_2_PI);
    let r = (x - j * consts64::PIO2[0]) - j * (consts64::PIO2[1] + consts64::PIO2[2]);
    (r as f32, q as i32)
}

/// The `f64` argument reduction: `π/2` in four pieces (fdlibm's "medium" case).
#[inline(always)]
fn reduce_f64(x: f64) -> (f64, i64) {
    let (j, q) = double::round_int(x * std::f64::consts::FRAC_2_PI);
    let p = consts64::PIO2;
    let r = x - j * p[0];
    let r = r - j * p[1];
    let r = r - j * p[2];
    (r - j * p[3], q)
}
