//! Unit tests of the value semantics.

use super::*;

#[test]
fn special_functions_are_musls() {
    let close = |got: f64, want: f64| (got - want).abs() <= 4.0 * f64::EPSILON * want.abs();
    assert!(close(
        f64::unary(UnaryOp::Erf, 0.5),
        0.520_499_877_813_046_5
    ));
    assert!(close(
        f64::unary(UnaryOp::Erfc, 2.0),
        0.004_677_734_981_047_266
    ));
    assert_eq!(f64::unary(UnaryOp::Gamma, 5.0), 24.0);
    assert!(close(
        f64::unary(UnaryOp::Gamma, 0.5),
        std::f64::consts::PI.sqrt()
    ));
    assert!(close(
        f64::unary(UnaryOp::Lgamma, 0.5),
        0.572_364_942_924_700_1
    ));
    assert!(f64::unary(UnaryOp::Gamma, -3.0).is_nan());
    assert_eq!(f64::unary(UnaryOp::Lgamma, -3.0), f64::INFINITY);
    assert_eq!(f32::unary(UnaryOp::Erf, f32::INFINITY), 1.0);
    assert!((f32::unary(UnaryOp::Erfc, 1.0) - 0.157_299_2).abs() < 1e-7);
}

#[test]
fn integer_division_follows_numpy() {
    assert_eq!(i32::binary(BinaryOp::FloorDiv, -7, 2), -4);
    assert_eq!(i32::binary(BinaryOp::Rem, -7, 2), 1);
    assert_eq!(i32::binary(BinaryOp::Rem, 7, -2), -1);
    assert_eq!(i32::binary(BinaryOp::FloorDiv, 7, 0), 0);
    assert_eq!(i32::binary(BinaryOp::Rem, 7, 0), 0);
    assert_eq!(i8::binary(BinaryOp::FloorDiv, i8::MIN, -1), i8::MIN);
    assert_eq!(u8::binary(BinaryOp::FloorDiv, 7, 2), 3);
}

#[test]
fn gcd_and_lcm_follow_numpy() {
    assert_eq!(i32::binary(BinaryOp::Gcd, -12, 18), 6);
    assert_eq!(i32::binary(BinaryOp::Lcm, -4, 6), 12);
    assert_eq!(i8::binary(BinaryOp::Gcd, i8::MIN, 0), i8::MIN);
    assert_eq!(i8::binary(BinaryOp::Lcm, i8::MIN, 3), i8::MIN);
    assert_eq!(i8::binary(BinaryOp::Lcm, 100, 3), 44);
    assert_eq!(u64::binary(BinaryOp::Gcd, 0, 0), 0);
    assert_eq!(u64::binary(BinaryOp::Lcm, 0, 5), 0);
    assert_eq!(u64::binary(BinaryOp::Gcd, u64::MAX, 5), 5);
}

#[test]
fn nextafter_steps_one_float() {
    assert_eq!(
        f64::binary(BinaryOp::Nextafter, 1.0, 2.0),
        1.0 + f64::EPSILON
    );
    assert_eq!(
        f64::binary(BinaryOp::Nextafter, 1.0, 0.0),
        1.0 - f64::EPSILON / 2.0
    );
    assert_eq!(
        f32::binary(BinaryOp::Nextafter, -1.0, 0.0),
        -1.0 + f32::EPSILON / 2.0
    );
    assert_eq!(
        f64::binary(BinaryOp::Nextafter, 0.0, -1.0),
        -f64::from_bits(1)
    );
    assert!(f64::binary(BinaryOp::Nextafter, 0.0, -0.0).is_sign_negative());
    assert_eq!(
        f64::binary(BinaryOp::Nextafter, f64::MAX, f64::INFINITY),
        f64::INFINITY
    );
    assert!(f64::binary(BinaryOp::Nextafter, f64::NAN, 1.0).is_nan());
    let half =
        |a: f32, b: f32| f16::binary(BinaryOp::Nextafter, f16::from_f32(a), f16::from_f32(b));
    assert_eq!(half(1.0, 2.0), f16::from_f32(1.0) + f16::EPSILON);
    assert_eq!(
        half(-1.0, -2.0).to_bits(),
        f16::from_f32(-1.0).to_bits() + 1
    );
    assert_eq!(half(0.0, -1.0).to_bits(), 0x8001);
    assert!(
        half(0.0, -0.0).is_sign_positive(),
        "NumPy's half keeps the first of equal values"
    );
    assert_eq!(half(65504.0, f32::INFINITY), f16::INFINITY);
    assert_eq!(
        bf16::binary(BinaryOp::Nextafter, bf16::ONE, bf16::from_f32(2.0)),
        bf16::ONE + bf16::EPSILON
    );
}

#[test]
fn integer_power() {
    assert_eq!(i32::binary(BinaryOp::Pow, 3, 4), 81);
    assert_eq!(i32::binary(BinaryOp::Pow, 2, -1), 0);
    assert_eq!(i32::binary(BinaryOp::Pow, -1, -3), -1);
    assert_eq!(u8::binary(BinaryOp::Pow, 2, 9), 0);
}

#[test]
fn float_divmod_matches_numpy() {
    assert_eq!(f64::binary(BinaryOp::FloorDiv, -7.0, 2.0), -4.0);
    assert_eq!(f64::binary(BinaryOp::Rem, -7.0, 2.0), 1.0);
    assert_eq!(f64::binary(BinaryOp::Rem, 7.0, -2.0), -1.0);
    assert!(f64::binary(BinaryOp::Rem, 7.0, 0.0).is_nan());
    assert_eq!(f64::binary(BinaryOp::FloorDiv, 1.0, 0.0), f64::INFINITY);
    assert!(f64::binary(BinaryOp::Rem, -0.0, 2.0).is_sign_positive());
}

#[test]
fn integer_reciprocal_fmod_and_shifts_are_defined_everywhere() {
    // 1/0 is platform-dependent in NumPy (0 or the minimum); 0 here.
    assert_eq!(i32::unary(UnaryOp::Reciprocal, 0), 0);
    assert_eq!(i32::unary(UnaryOp::Reciprocal, -1), -1);
    assert_eq!(u8::unary(UnaryOp::Reciprocal, 255), 0);
    assert_eq!(i8::binary(BinaryOp::Fmod, -7, 2), -1);
    assert_eq!(i8::binary(BinaryOp::Fmod, i8::MIN, -1), 0);
    assert_eq!(i8::binary(BinaryOp::Fmod, 7, 0), 0);
    assert_eq!(i8::binary(BinaryOp::LeftShift, 1, 7), i8::MIN);
    assert_eq!(i8::binary(BinaryOp::LeftShift, 1, 8), 0);
    assert_eq!(i8::binary(BinaryOp::RightShift, -128, 9), -1);
    assert_eq!(i8::binary(BinaryOp::RightShift, -128, -1), -1);
    assert_eq!(u64::binary(BinaryOp::RightShift, u64::MAX, 64), 0);
    assert_eq!(i16::unary(UnaryOp::Invert, 0), -1);
}

#[test]
fn min_max_propagate_nan() {
    assert!(f32::binary(BinaryOp::Maximum, f32::NAN, 1.0).is_nan());
    assert!(f32::binary(BinaryOp::Maximum, 1.0, f32::NAN).is_nan());
    assert!(f32::binary(BinaryOp::Minimum, 1.0, f32::NAN).is_nan());
}
