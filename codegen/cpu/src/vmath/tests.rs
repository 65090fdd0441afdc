//! Accuracy of the vectorised functions, in ulp, over special values, both
//! ends of each range and millions of random arguments.

use lazyfuse_core::UnaryOp;

use super::VectorMath;

/// Distance in representable values between two floats of one type (0 for
/// two NaNs; `u64::MAX` for NaN against a number).
trait Ulps: Copy {
    fn ulps(self, other: Self) -> u64;
}

macro_rules! ulps {
    ($t:ty, $i:ty) => {
        impl Ulps for $t {
            fn ulps(self, other: Self) -> u64 {
                if self.is_nan() || other.is_nan() {
                    return if self.is_nan() && other.is_nan() {
                        0
                    } else {
                        u64::MAX
                    };
                }
                if self == other {
                    // Signed zeros must match too.
                    return u64::from(self.is_sign_negative() != other.is_sign_negative());
                }
                // Map the floats onto a monotonic integer line.
                let key = |x: $t| {
                    let b = x.to_bits() as $i;
                    if b < 0 {
                        <$i>::MIN - b
                    } else {
                        b
                    }
                };
                (key(self) as i128 - key(other) as i128).unsigned_abs() as u64
            }
        }
    };
}
ulps!(f32, i32);
ulps!(f64, i64);

/// A small deterministic generator (xorshift*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `[lo, hi)`.
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

const OPS: [UnaryOp; 5] = [
    UnaryOp::Exp,
    UnaryOp::Log,
    UnaryOp::Sin,
    UnaryOp::Cos,
    UnaryOp::Tanh,
];

/// Arguments worth checking for `op`: specials, range ends, random values
/// on a linear and on a logarithmic scale.
fn arguments(op: UnaryOp, count: usize, seed: u64) -> Vec<f64> {
    let mut v = vec![
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1.0,
        -1.0,
        f64::MIN_POSITIVE,
        5e-324,
        1e-40,
        -1e-40,
        1e-300,
        88.72,
        88.73,
        -87.3,
        -103.9,
        -104.0,
        709.78,
        709.79,
        -745.1,
        -745.2,
        9.0,
        9.1,
        19.0,
        19.1,
        1e6,
        -1e6,
        1.0000001e6,
        1e7,
        3e38,
        1e300,
        f64::MAX,
    ];
    for j in 1..200 {
        let m = j as f64 * std::f64::consts::FRAC_PI_2;
        v.extend([m, -m, m.next_up(), m.next_down()]);
    }
    let mut rng = Rng(seed);
    let (lo, hi) = match op {
        UnaryOp::Exp => (-750.0, 750.0),
        UnaryOp::Log => (0.0, 10.0),
        UnaryOp::Tanh => (-25.0, 25.0),
        _ => (-1.1e6, 1.1e6),
    };
    for _ in 0..count / 2 {
        v.push(rng.uniform(lo, hi));
        v.push(rng.uniform(-2.0, 2.0));
    }
    for _ in 0..count / 2 {
        let magnitude = 10f64.powf(rng.uniform(-40.0, 40.0));
        v.push(if rng.next() & 1 == 0 {
            magnitude
        } else {
            -magnitude
        });
    }
    v
}

/// The largest error over `arguments`, and the argument that gave it.
fn worst<T: VectorMath + Ulps + std::fmt::Debug>(
    op: UnaryOp,
    args: &[T],
    exact: impl Fn(T) -> T,
) -> (u64, Option<T>) {
    let mut out = vec![args[0]; args.len()];
    assert!(T::apply(op, args, &mut out));
    let mut worst = (0, None);
    for (&x, &got) in args.iter().zip(&out) {
        let e = got.ulps(exact(x));
        if e > worst.0 {
            worst = (e, Some(x));
        }
    }
    worst
}

fn reference(op: UnaryOp, x: f64) -> f64 {
    match op {
        UnaryOp::Exp => x.exp(),
        UnaryOp::Log => x.ln(),
        UnaryOp::Sin => x.sin(),
        UnaryOp::Cos => x.cos(),
        UnaryOp::Tanh => x.tanh(),
        _ => unreachable!(),
    }
}

#[test]
fn f32_functions_are_within_2_ulp_of_the_correctly_rounded_value() {
    for op in OPS {
        let args: Vec<f32> = arguments(op, 400_000, 7)
            .iter()
            .map(|&x| x as f32)
            .collect();
        let (ulps, at) = worst(op, &args, |x: f32| reference(op, f64::from(x)) as f32);
        assert!(ulps <= 2, "{op:?}: {ulps} ulp at {at:?}");
    }
}

#[test]
fn f64_functions_are_within_2_ulp_of_libm_and_tanh_within_3() {
    for op in OPS {
        let args = arguments(op, 400_000, 11);
        let (ulps, at) = worst(op, &args, |x: f64| reference(op, x));
        let bound = if op == UnaryOp::Tanh { 3 } else { 2 };
        assert!(ulps <= bound, "{op:?}: {ulps} ulp at {at:?}");
    }
}

#[test]
fn every_f32_in_a_range_of_each_function_is_close() {
    // Exhaustive over [1, 2) and [-2^-10, 2^-10]-ish bit ranges: the
    // polynomials' whole interval for exp/tanh/log near 1 and tiny arguments.
    for op in OPS {
        let start = 1.0f32.to_bits();
        let args: Vec<f32> = (start..start + (1 << 23))
            .step_by(3)
            .map(f32::from_bits)
            .chain(
                (0..1u32 << 22)
                    .step_by(5)
                    .map(|b| -f32::from_bits(0x3a80_0000 - b)),
            )
            .collect();
        let (ulps, at) = worst(op, &args, |x: f32| reference(op, f64::from(x)) as f32);
        assert!(ulps <= 2, "{op:?}: {ulps} ulp at {at:?}");
    }
}

#[test]
fn slices_of_every_length_and_offset_match_single_values() {
    let x: Vec<f32> = (0..100).map(|i| (i as f32 - 50.0) * 0.37).collect();
    for op in OPS {
        for start in 0..8 {
            for len in 0..40 {
                let src = &x[start..start + len];
                let mut out = vec![0.0f32; len];
                assert!(f32::apply(op, src, &mut out));
                for (&v, &o) in src.iter().zip(&out) {
                    let mut one = [0.0f32];
                    f32::apply(op, &[v], &mut one);
                    assert_eq!(o.to_bits(), one[0].to_bits(), "{op:?}({v})");
                }
            }
        }
    }
}

#[test]
fn other_operations_are_declined() {
    let mut out = [0.0f64];
    assert!(!f64::apply(UnaryOp::Sqrt, &[1.0], &mut out));
    assert!(!super::covers(UnaryOp::Abs));
}

#[test]
fn tanh_of_chunks_without_small_arguments_skips_only_the_series() {
    use super::kernels::{double, double_fma, single, single_fma};
    // The kernels of the variant `apply` runs (`mul_add` outside FMA code
    // is a correctly rounded call: the same values).
    #[cfg(target_arch = "x86_64")]
    let fma = super::has_avx2_fma();
    #[cfg(not(target_arch = "x86_64"))]
    let fma = false;
    let tanh64 = if fma { double_fma::tanh } else { double::tanh };
    let tanh32 = if fma { single_fma::tanh } else { single::tanh };
    let x: Vec<f64> = arguments(UnaryOp::Tanh, 20_000, 3)
        .into_iter()
        .filter(|v| v.abs() >= 0.3 || v.is_nan())
        .collect();
    let mut out = vec![0.0; x.len()];
    assert!(f64::apply(UnaryOp::Tanh, &x, &mut out));
    for (&v, &o) in x.iter().zip(&out) {
        assert_eq!(o.to_bits(), tanh64(v).to_bits(), "tanh({v})");
    }
    let x: Vec<f32> = x
        .iter()
        .map(|&v| v as f32)
        .filter(|v| v.abs() >= 0.3 || v.is_nan())
        .collect();
    let mut out = vec![0.0; x.len()];
    assert!(f32::apply(UnaryOp::Tanh, &x, &mut out));
    for (&v, &o) in x.iter().zip(&out) {
        assert_eq!(o.to_bits(), tanh32(v).to_bits(), "tanh({v})");
    }
}

#[test]
#[cfg(target_arch = "x86_64")]
fn the_avx512_loops_give_the_bits_of_the_avx2_ones() {
    // `apply` runs the AVX-512 loops where the CPU has them, so the
    // accuracy tests above check those; the AVX2 loops run the same FMA
    // kernels and must give the same bits.
    if !super::has_avx512() {
        println!("SKIPPED the_avx512_loops_give_the_bits_of_the_avx2_ones: no AVX-512 here");
        return;
    }
    for op in [
        UnaryOp::Exp,
        UnaryOp::Log,
        UnaryOp::Sin,
        UnaryOp::Cos,
        UnaryOp::Tanh,
    ] {
        let x64 = arguments(op, 200_003, 11);
        let x32: Vec<f32> = x64.iter().map(|&v| v as f32).collect();
        let (mut wide64, mut narrow64) = (vec![0.0; x64.len()], vec![0.0; x64.len()]);
        let (mut wide32, mut narrow32) = (vec![0.0; x32.len()], vec![0.0; x32.len()]);
        // SAFETY: the CPU has AVX-512 (F, DQ, VL, BW), AVX2 and FMA (checked).
        unsafe {
            assert!(super::avx512::f64(op, &x64, &mut wide64));
            assert!(super::avx2_fma::f64(op, &x64, &mut narrow64));
            assert!(super::avx512::f32(op, &x32, &mut wide32));
            assert!(super::avx2_fma::f32(op, &x32, &mut narrow32));
        }
        for (i, (w, n)) in wide64.iter().zip(&narrow64).enumerate() {
            assert_eq!(w.ulps(*n), 0, "{op:?}({}) f64: {w} against {n}", x64[i]);
        }
        for (i, (w, n)) in wide32.iter().zip(&narrow32).enumerate() {
            assert_eq!(w.ulps(*n), 0, "{op:?}({}) f32: {w} against {n}", x32[i]);
        }
    }
}

/// `sin(±0) = ±0`, `tanh(±0) = ±0`, `cos(±0) = 1`, `exp(±0) = 1` exactly,
/// for both float types, through every instruction set's loop (a chunk of
/// zeros among other values, as arrays bring them).
#[test]
fn signed_zeros_keep_their_sign() {
    let mut x32 = vec![0.5f32; 37];
    let mut x64 = vec![0.5f64; 37];
    x32[3] = -0.0;
    x32[20] = 0.0;
    x64[3] = -0.0;
    x64[20] = 0.0;
    for op in [UnaryOp::Sin, UnaryOp::Tanh, UnaryOp::Cos, UnaryOp::Exp] {
        let (mut out32, mut out64) = (vec![0.0f32; 37], vec![0.0f64; 37]);
        assert!(f32::apply(op, &x32, &mut out32) && f64::apply(op, &x64, &mut out64));
        for i in [3, 20] {
            let want = match op {
                UnaryOp::Sin | UnaryOp::Tanh => x64[i],
                _ => 1.0,
            };
            assert_eq!(out64[i].to_bits(), want.to_bits(), "{op:?}({})", x64[i]);
            assert_eq!(
                out32[i].to_bits(),
                (want as f32).to_bits(),
                "{op:?}({})",
                x32[i]
            );
        }
    }
}
