use lazyfuse::Context;
use rustfft::num_complex::Complex64;

use super::*;
use crate::complex::functions::ComplexUnary;

/// The reference of a function of one value.
type Reference1 = fn(Complex64) -> Complex64;
/// The reference of a function of two values.
type Reference2 = fn(Complex64, Complex64) -> Complex64;

/// Values with every sign and magnitude of part the formulas branch on.
fn samples() -> Vec<Complex64> {
    let parts = [-3.5, -1.0, -0.25, 0.0, 0.5, 2.0, 7.0];
    parts
        .iter()
        .flat_map(|&re| parts.iter().map(move |&im| Complex64::new(re, im)))
        .collect()
}

fn array_of(cx: &Context, values: &[Complex64]) -> ComplexArray {
    let re: Vec<f64> = values.iter().map(|z| z.re).collect();
    let im: Vec<f64> = values.iter().map(|z| z.im).collect();
    ComplexArray::new(&cx.from_slice(&re), &cx.from_slice(&im)).unwrap()
}

fn close(got: Complex64, want: Complex64, what: &str) {
    let scale = want.norm().max(1.0);
    let ok = |g: f64, w: f64| (g.is_nan() && w.is_nan()) || (g - w).abs() <= 1e-12 * scale;
    assert!(
        ok(got.re, want.re) && ok(got.im, want.im),
        "{what}: got {got}, want {want}"
    );
}

fn values(z: &ComplexArray) -> Vec<Complex64> {
    let (re, im) = z.to_parts::<f64>().unwrap();
    re.into_iter()
        .zip(im)
        .map(|(r, i)| Complex64::new(r, i))
        .collect()
}

#[test]
fn the_functions_match_num_complex() {
    let cx = Context::cpu();
    let xs = samples();
    let z = array_of(&cx, &xs);
    let cases: [(ComplexUnary, Reference1); 21] = [
        (ComplexUnary::Expm1, |z| z.exp() - 1.0),
        (ComplexUnary::Log1p, |z| (z + 1.0).ln()),
        (ComplexUnary::Arcsin, |z| z.asin()),
        (ComplexUnary::Arccos, |z| z.acos()),
        (ComplexUnary::Arctan, |z| z.atan()),
        (ComplexUnary::Arcsinh, |z| z.asinh()),
        (ComplexUnary::Arccosh, |z| z.acosh()),
        (ComplexUnary::Arctanh, |z| z.atanh()),
        (ComplexUnary::Exp, |z| z.exp()),
        (ComplexUnary::Sin, |z| z.sin()),
        (ComplexUnary::Cos, |z| z.cos()),
        (ComplexUnary::Tan, |z| z.tan()),
        (ComplexUnary::Sinh, |z| z.sinh()),
        (ComplexUnary::Cosh, |z| z.cosh()),
        (ComplexUnary::Tanh, |z| z.tanh()),
        (ComplexUnary::Square, |z| z * z),
        (ComplexUnary::Conjugate, |z| z.conj()),
        (ComplexUnary::Negative, |z| -z),
        (ComplexUnary::Log10, |z| z.log10()),
        (ComplexUnary::Log2, |z| z.log2()),
        (ComplexUnary::Sign, |z| {
            if z.norm() == 0.0 {
                z
            } else {
                z / z.norm()
            }
        }),
    ];
    for (op, reference) in cases {
        let got = values(&z.apply(op).complex(op.name()).unwrap());
        for (&x, g) in xs.iter().zip(got) {
            let singular = match op {
                ComplexUnary::Log10 | ComplexUnary::Log2 => x.norm() == 0.0,
                ComplexUnary::Log1p => x == Complex64::new(-1.0, 0.0),
                // On the branch cuts num_complex and C99 (NumPy) take
                // opposite sides; the Python tests check NumPy's there.
                ComplexUnary::Arcsin | ComplexUnary::Arccos | ComplexUnary::Arctanh => {
                    x.im == 0.0 && x.re.abs() >= 1.0
                }
                ComplexUnary::Arctan | ComplexUnary::Arcsinh => x.re == 0.0 && x.im.abs() >= 1.0,
                ComplexUnary::Arccosh => x.im == 0.0 && x.re <= 1.0,
                _ => false,
            };
            if singular {
                continue;
            }
            close(g, reference(x), &format!("{}({x})", op.name()));
        }
    }
    let nonzero: Vec<Complex64> = xs.iter().copied().filter(|z| z.norm() > 0.0).collect();
    let z = array_of(&cx, &nonzero);
    for (got, &x) in values(&z.log()).into_iter().zip(&nonzero) {
        close(got, x.ln(), &format!("log({x})"));
    }
    for (got, &x) in values(&z.sqrt()).into_iter().zip(&nonzero) {
        close(got, x.sqrt(), &format!("sqrt({x})"));
    }
    for (got, &x) in values(&z.reciprocal()).into_iter().zip(&nonzero) {
        close(got, x.inv(), &format!("1/{x}"));
    }
    let abs = z.abs().to_vec::<f64>().unwrap();
    let angle = z.angle().to_vec::<f64>().unwrap();
    for ((&x, a), t) in nonzero.iter().zip(abs).zip(angle) {
        assert!(
            (a - x.norm()).abs() < 1e-12 && (t - x.arg()).abs() < 1e-12,
            "{x}"
        );
    }
}

#[test]
fn arithmetic_matches_num_complex_with_every_kind_of_operand() {
    let cx = Context::cpu();
    let xs = samples();
    let ys: Vec<Complex64> = xs.iter().rev().copied().collect();
    let (a, b) = (array_of(&cx, &xs), array_of(&cx, &ys));
    let ops: [(ComplexBinary, Reference2); 4] = [
        (ComplexBinary::Add, |a, b| a + b),
        (ComplexBinary::Sub, |a, b| a - b),
        (ComplexBinary::Mul, |a, b| a * b),
        (ComplexBinary::Div, |a, b| a / b),
    ];
    for (op, reference) in ops {
        let got = values(&a.binary(op, &b, false).unwrap().complex("t").unwrap());
        let flipped = values(&a.binary(op, &b, true).unwrap().complex("t").unwrap());
        let scalar = values(
            &a.binary(op, (1.5, -2.0), true)
                .unwrap()
                .complex("t")
                .unwrap(),
        );
        for (i, (&x, &y)) in xs.iter().zip(&ys).enumerate() {
            if y.norm() != 0.0 {
                close(got[i], reference(x, y), &format!("{}({x}, {y})", op.name()));
            }
            if x.norm() != 0.0 {
                close(
                    flipped[i],
                    reference(y, x),
                    &format!("{}({y}, {x})", op.name()),
                );
                let s = Complex64::new(1.5, -2.0);
                close(
                    scalar[i],
                    reference(s, x),
                    &format!("{}({s}, {x})", op.name()),
                );
            }
        }
    }
    let pow = values(&a.pow(&b).unwrap());
    for ((&x, &y), got) in xs.iter().zip(&ys).zip(pow) {
        if x.norm() != 0.0 {
            let want = (y * x.ln()).exp();
            let scale = want.norm().max(1.0);
            assert!(
                (got - want).norm() <= 1e-10 * scale,
                "{x} ** {y}: {got} vs {want}"
            );
        }
    }
    let eq = a.binary(ComplexBinary::Eq, &a, false).unwrap();
    let ComplexResult::Real(eq) = eq else {
        panic!("a complex comparison")
    };
    assert!(eq.to_vec::<bool>().unwrap().into_iter().all(|e| e));
}

#[test]
fn division_by_zero_and_powers_at_zero_are_numpys() {
    let cx = Context::cpu();
    let a = array_of(&cx, &[Complex64::new(1.0, -1.0), Complex64::new(0.0, 0.0)]);
    let got = values(&a.div(0.0).unwrap());
    assert!(got[0].re == f64::INFINITY && got[0].im == f64::NEG_INFINITY);
    assert!(got[1].re.is_nan() && got[1].im.is_nan());
    let p = values(&a.pow(0.0).unwrap());
    assert_eq!(p, [Complex64::new(1.0, 0.0), Complex64::new(1.0, 0.0)]);
    let p = values(&a.pow(2.0).unwrap());
    assert_eq!(p[1], Complex64::new(0.0, 0.0));
    let p = values(&a.pow((0.0, 1.0)).unwrap());
    assert!(p[1].re.is_nan());
}

#[test]
fn integer_powers_multiply_exactly() {
    let cx = Context::cpu();
    let z = array_of(&cx, &[Complex64::new(1.0, 1.0), Complex64::new(0.0, 2.0)]);
    assert_eq!(
        values(&z.powi(2).unwrap()),
        [Complex64::new(0.0, 2.0), Complex64::new(-4.0, 0.0)]
    );
    assert_eq!(values(&z.powi(0).unwrap()), [Complex64::new(1.0, 0.0); 2]);
    let inverse = values(&z.powi(-3).unwrap());
    close(inverse[0], Complex64::new(1.0, 1.0).powi(-3), "(1+1j)**-3");
}

#[test]
fn special_values_follow_numpy() {
    let cx = Context::cpu();
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let z = array_of(
        &cx,
        &[
            Complex64::new(inf, 0.0),
            Complex64::new(-inf, 0.0),
            Complex64::new(nan, 0.0),
            Complex64::new(-4.0, 0.0),
            Complex64::new(-4.0, -0.0),
            Complex64::new(30.0, 1.0),
        ],
    );
    let e = values(&z.exp());
    assert_eq!((e[0].re, e[0].im), (inf, 0.0));
    assert_eq!((e[1].re, e[1].im), (0.0, 0.0));
    assert!(e[2].re.is_nan() && e[2].im == 0.0);
    let r = values(&z.sqrt());
    assert_eq!((r[0].re, r[0].im), (inf, 0.0));
    assert_eq!((r[1].re, r[1].im), (0.0, inf));
    assert_eq!((r[3].re, r[3].im), (0.0, 2.0));
    assert_eq!((r[4].re, r[4].im.to_bits()), (0.0, (-2.0f64).to_bits()));
    let t = values(&z.tanh());
    assert!((t[5].re - 1.0).abs() < 1e-15 && t[5].im.abs() < 1e-20);
    let flags = |a: Array| a.to_vec::<bool>().unwrap();
    assert_eq!(flags(z.isinf()), [true, true, false, false, false, false]);
    assert_eq!(flags(z.isnan()), [false, false, true, false, false, false]);
    assert_eq!(flags(z.isfinite()), [false, false, false, true, true, true]);
}

#[test]
fn promotion_follows_nep_50() {
    let cx = Context::cpu();
    let z64 = ComplexArray::from_real(&cx.from_slice(&[1.0f32]), None).unwrap();
    assert_eq!(z64.dtype(), ComplexDType::C64);
    assert_eq!(z64.mul((0.0, 1.0)).unwrap().dtype(), ComplexDType::C64);
    assert_eq!(
        z64.add(&cx.from_slice(&[1i8])).unwrap().dtype(),
        ComplexDType::C64
    );
    assert_eq!(
        z64.add(&cx.from_slice(&[1i32])).unwrap().dtype(),
        ComplexDType::C128
    );
    assert_eq!(
        z64.add(&cx.from_slice(&[1.0f64])).unwrap().dtype(),
        ComplexDType::C128
    );
    let half = cx.from_slice(&[lazyfuse::half::f16::ONE]);
    assert_eq!(
        ComplexArray::from_real(&half, None).unwrap().dtype(),
        ComplexDType::C64
    );
    let ints = ComplexArray::from_real(&cx.from_slice(&[3i64]), None).unwrap();
    assert_eq!(ints.dtype(), ComplexDType::C128);
    let bad = ComplexArray::new(&cx.from_slice(&[1.0f32, 2.0]), &cx.from_slice(&[1.0f32]));
    assert!(bad.is_err_and(|e| e.to_string().contains("one shape")));
}

#[test]
fn a_complex_chain_is_one_kernel_on_sim() {
    let cx = Context::sim();
    let turns = [0.0f32, 0.25, 0.5, 0.75];
    let phase = cx.from_slice(&turns);
    let z = ComplexArray::from_polar(
        &cx.ones(&[4], DType::F32),
        &(&phase * std::f64::consts::TAU),
    )
    .unwrap();
    let w = z.mul(&z).unwrap().add((1.0, 0.0)).unwrap().exp();
    cx.reset_stats();
    let got = w.to_parts::<f32>().unwrap();
    assert_eq!(cx.stats().kernel_launches, 1, "{:?}", cx.stats());
    for (i, &t) in turns.iter().enumerate() {
        let z = Complex64::from_polar(1.0, std::f64::consts::TAU * f64::from(t));
        let want = (z * z + 1.0).exp();
        assert!(
            (f64::from(got.0[i]) - want.re).abs() < 1e-4,
            "{t}: {:?} vs {want}",
            got
        );
        assert!(
            (f64::from(got.1[i]) - want.im).abs() < 1e-4,
            "{t}: {:?} vs {want}",
            got
        );
    }
}

#[test]
fn interleaved_values_round_trip() {
    let cx = Context::cpu();
    let x = cx
        .from_vec(vec![1.0f32, -1.0, 2.0, 0.5, 3.0, 0.0], &[3, 2])
        .unwrap();
    let z = ComplexArray::from_interleaved(&x).unwrap();
    assert_eq!(z.dtype(), ComplexDType::C64);
    assert_eq!(
        z.to_parts::<f32>().unwrap(),
        (vec![1.0, 2.0, 3.0], vec![-1.0, 0.5, 0.0])
    );
    let doubled = z.mul(2.0).unwrap().to_interleaved::<f32>().unwrap();
    assert_eq!(doubled, [2.0, -2.0, 4.0, 1.0, 6.0, 0.0]);
    assert!(ComplexArray::from_interleaved(&cx.from_slice(&[1.0f32, 2.0, 3.0])).is_err());
}
