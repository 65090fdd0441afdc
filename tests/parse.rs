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
    assert!(err("2 + 3")
        .to_string()
        .contains("uses none of its arguments"));
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
