//! Ufunc::parse: expression strings (numexpr style) traced and fused like closures.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::backends;
use lazyfuse::{DType, Error, Expr, Result, Ufunc};

#[test]
fn the_discriminant_string_equals_the_closure() -> Result<()> {
    for cx in backends() {
        let a = cx.from_slice(&[1.0f32, 2.0, 0.5]);
        let b = cx.from_slice(&[5.0f32, 9.0, 2.0]);
        let c = cx.from_slice(&[2.0f32, 1.0, 1.5]);
        let parsed = Ufunc::parse("disc", "sqrt(b*b - 4*a*c)", &["a", "b", "c"])?;
        let traced = Ufunc::new("disc", |[a, b, c]: [Expr; 3]| (b * b - 4 * a * c).sqrt());
        let want = traced.call(&[&a, &b, &c]).to_vec::<f32>()?;
        assert_eq!(parsed.call(&[&a, &b, &c]).to_vec::<f32>()?, want);
        assert_eq!(parsed.arity(), 3);
    }
    Ok(())
}

#[test]
fn operators_precedence_and_functions() -> Result<()> {
    let cx = lazyfuse::Context::cpu();
    let x = cx.from_slice(&[-2.0f64, 0.5, 3.0]);
    let y = cx.from_slice(&[1.0f64, 2.0, 3.0]);
    let eval = |text: &str| -> Result<Vec<f64>> {
        Ufunc::parse("f", text, &["x", "y"])?
            .call(&[&x, &y])
            .astype(DType::F64)
            .to_vec::<f64>()
    };
    assert_eq!(eval("-x**2 + y")?, vec![-3.0, 1.75, -6.0]);
    assert_eq!(eval("2**3**2 * y / y")?, vec![512.0; 3]);
    assert_eq!(eval("x // 1 + x % 1")?, vec![-2.0, 0.5, 3.0]);
    assert_eq!(
        eval("where(x > 0, x, -x) + 1.5e1 - 15")?,
        vec![2.0, 0.5, 3.0]
    );
    assert_eq!(
        eval("minimum(x, y) + maximum(x, y) - (x + y)")?,
        vec![0.0; 3]
    );
    assert_eq!(
        eval("abs(x) * (x >= 0.5) + exp(0 * x)")?,
        vec![1.0, 1.5, 4.0]
    );
    assert_eq!(eval("(x < 0) | (y == 3) & ~(x != 3)")?, vec![1.0, 0.0, 1.0]);
    assert_eq!(
        eval("arctan(tanh(sin(cos(log(exp(y))))) * 0) + .5 + 1.")?,
        vec![1.5; 3]
    );
    Ok(())
}

#[test]
fn parse_errors_name_the_column() {
    let err = |text: &str| -> Error { Ufunc::parse("f", text, &["a", "b", "c"]).unwrap_err() };
    let e = err("sqrt(b*b - 4*a*c");
    assert!(e.to_string().contains("expected ')' at column 17"), "{e}");
    assert!(matches!(e, Error::InvalidArgument { .. }));
    assert!(
        err("a + d")
            .to_string()
            .contains("unknown name 'd' at column 5"),
        "{}",
        err("a + d")
    );
    assert!(err("foo(a)")
        .to_string()
        .contains("unknown function 'foo' at column 1"));
    assert!(err("sqrt(a, b)")
        .to_string()
        .contains("sqrt takes 1 argument (got 2)"));
    assert!(
        err("a +").to_string().contains("column 4"),
        "{}",
        err("a +")
    );
    assert!(err("a $ b")
        .to_string()
        .contains("unexpected character '$' at column 3"));
    assert!(
        err("a b")
            .to_string()
            .contains("unexpected name 'b' at column 3"),
        "{}",
        err("a b")
    );
    assert!(err("a + 1 // 0")
        .to_string()
        .contains("floor_divide(1, 0) has no value"));
    assert!(err("a + (1.5 & 2)")
        .to_string()
        .contains("bitwise_and(1.5, 2) has no value"));
    assert!(err("a + gcd(1.5, 2)")
        .to_string()
        .contains("gcd(1.5, 2) has no value"));
    assert!(Ufunc::parse("f", "a", &["a", "a"]).is_err());
    assert!(Ufunc::parse("f", "a", &["1a"]).is_err());
    let deep = format!("{}a{}", "(".repeat(10_000), ")".repeat(10_000));
    assert!(err(&deep).to_string().contains("nested more than"));
}

#[test]
fn long_strings_parse_without_recursion() -> Result<()> {
    let cx = lazyfuse::Context::cpu();
    let text = vec!["a"; 20_000].join(" + ");
    let f = Ufunc::parse("sum", &text, &["a"])?;
    let a = cx.from_slice(&[1i64, 2]);
    assert_eq!(f.call(&[&a]).to_vec::<i64>()?, vec![20_000, 40_000]);
    Ok(())
}

#[test]
fn constant_sub_expressions_are_computed_as_python_computes_them() -> Result<()> {
    let cx = lazyfuse::Context::cpu();
    let a = cx.from_slice(&[1.0f32, 2.0, 3.0]);
    let call = |text: &str| -> Result<Vec<f32>> {
        Ufunc::parse("f", text, &["a"])?.call(&[&a]).to_vec::<f32>()
    };
    // The folded constant is a weak scalar: cast to f32, then added (as NumPy).
    let plus = |c: f64| [1.0f32, 2.0, 3.0].map(|x| x + c as f32).to_vec();
    assert_eq!(call("a + sin(2.453)")?, plus(2.453f64.sin()));
    assert_eq!(call("a + abs(-2.285)")?, plus(2.285));
    assert_eq!(call("a + maximum(1.21, 2.561)")?, plus(2.561));
    assert_eq!(call("a + where(2.7 > 1.9, 2.7, 1.9)")?, plus(2.7));
    assert_eq!(
        call("a + 7 // 2 + 2 ** -1 + (5 & 3) + (1 << 4)")?,
        plus(3.0 + 0.5 + 1.0 + 16.0)
    );
    assert_eq!(call("a * (2 > 1)")?, vec![1.0, 2.0, 3.0]);
    // Python's math.gcd and math.lcm: of the magnitudes.
    assert_eq!(call("a + gcd(-12, 18) + lcm(-4, 6)")?, plus(18.0));
    assert_eq!(
        call("a * 0 + (nextafter(1.0, 2.0) - 1)")?,
        vec![f64::EPSILON as f32; 3]
    );
    assert_eq!(call("minimum(a, -inf)")?, vec![f32::NEG_INFINITY; 3]);
    assert!(call("a + nan")?.iter().all(|x| x.is_nan()));
    // An argument's name comes first.
    let inf = Ufunc::parse("f", "inf * 2", &["inf"])?.call(&[&a]);
    assert_eq!(inf.to_vec::<f32>()?, vec![2.0, 4.0, 6.0]);
    Ok(())
}

#[test]
fn an_expression_of_no_argument_is_its_constant_broadcast_to_the_arguments() -> Result<()> {
    let cx = lazyfuse::Context::cpu();
    let a = cx.from_vec(vec![1.0f32, 2.0], &[2, 1])?;
    let b = cx.from_vec(vec![1i16, 2, 3], &[3])?;
    let f = Ufunc::parse("f", "1.42", &["a", "b"])?;
    let y = f.call(&[&a, &b]);
    // NumPy: the weak 1.42 among f32 and i16 arrays is f32, of their broadcast shape.
    assert_eq!((y.dtype(), y.shape().to_vec()), (DType::F32, vec![2, 3]));
    assert_eq!(y.to_vec::<f32>()?, vec![1.42f32; 6]);
    assert_eq!(
        Ufunc::parse("f", "sqrt(16) + 1", &["a"])?
            .call(&[&a])
            .to_vec::<f32>()?,
        vec![5.0, 5.0]
    );
    Ok(())
}

#[test]
fn bitwise_operators_and_shifts_are_numpys() -> Result<()> {
    for cx in common::backends() {
        let a = cx.from_slice(&[0i32, 5, -6, 12, i32::MIN]);
        let f = |text: &str| -> Result<Vec<i32>> {
            Ufunc::parse("f", text, &["a"])?.call(&[&a]).to_vec::<i32>()
        };
        let name = cx.backend_name();
        assert_eq!(f("a & 6")?, vec![0, 4, 2, 4, 0], "{name}");
        assert_eq!(f("a | 1")?, vec![1, 5, -5, 13, i32::MIN + 1], "{name}");
        assert_eq!(f("a ^ 3")?, vec![3, 6, -7, 15, i32::MIN + 3], "{name}");
        assert_eq!(f("~a")?, vec![-1, -6, 5, -13, i32::MAX], "{name}");
        assert_eq!(f("a << 2")?, vec![0, 20, -24, 48, 0], "{name}");
        assert_eq!(f("a >> 1")?, vec![0, 2, -3, 6, i32::MIN / 2], "{name}");
        // Counts that are negative or at least the width: 0, or -1 for negative values.
        assert_eq!(f("a >> 40")?, vec![0, 0, -1, 0, -1], "{name}");
        assert_eq!(f("a << -1")?, vec![0; 5], "{name}");
        // On bool, & | ^ ~ are logical; comparisons bind tighter (as numexpr users write).
        let b = Ufunc::parse("g", "a > 0 & a < 10 | ~(a != 12)", &["a"])?.call(&[&a]);
        assert_eq!(
            b.to_vec::<bool>()?,
            vec![false, true, false, true, false],
            "{name}"
        );
        let err = Ufunc::parse("h", "x & 1", &["x"])?
            .call(&[&cx.from_slice(&[1.5f64])])
            .to_vec::<f64>()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("bitwise_and") && err.contains("floats"),
            "{err}"
        );
    }
    Ok(())
}

#[test]
fn clip_isclose_and_nan_to_num_are_functions_of_the_expression_language() -> Result<()> {
    for cx in common::backends() {
        let a = cx.from_slice(&[-1.0f32, 0.5, f32::NAN, f32::INFINITY, 3.0]);
        let b = cx.from_slice(&[-1.0f32, 0.5000001, f32::NAN, f32::INFINITY, 2.0]);
        let name = cx.backend_name();
        let clipped = Ufunc::parse("f", "clip(a, 0, 2) + 1", &["a"])?.call(&[&a]);
        let want = a.clip(0i64, 2i64) + 1.0f32;
        let (got, want) = (clipped.to_vec::<f32>()?, want.to_vec::<f32>()?);
        assert!(
            got.iter()
                .zip(&want)
                .all(|(g, w)| g.to_bits() == w.to_bits()),
            "{name}: {got:?}"
        );
        let close = Ufunc::parse("g", "isclose(a, b)", &["a", "b"])?.call(&[&a, &b]);
        assert_eq!(
            close.to_vec::<bool>()?,
            vec![true, true, false, true, false],
            "{name}"
        );
        let finite = Ufunc::parse("h", "nan_to_num(a)", &["a"])?.call(&[&a]);
        assert_eq!(
            finite.to_vec::<f32>()?,
            vec![-1.0, 0.5, 0.0, f32::MAX, 3.0],
            "{name}"
        );
    }
    let err = Ufunc::parse("f", "clip(1, a, 2)", &["a"])
        .unwrap_err()
        .to_string();
    assert!(err.contains("clip needs an argument"), "{err}");
    Ok(())
}
