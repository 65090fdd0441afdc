//! Differential property test: random expression DAGs (every operation of
//! the core's unary and binary tables, mixed dtypes, broadcasting, views,
//! reductions, arg-reductions, statistics, scans, random arrays, scalars,
//! a user ufunc) built identically on every
//! backend must agree with the reference evaluator — both reject the same
//! expressions, and valid ones give the same values (exact for integers and
//! bool, within a few ulp-scaled units for floats, since reductions may sum
//! in another order). `PROPTEST_CASES=1000` runs a longer search. A failing
//! case shrinks to a minimal program, printed as the Rust code building it.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use lazyfuse::core::{BinaryOp, UnaryOp};
use lazyfuse::half::f16;
use lazyfuse::{Array, Context, DType, Element, Expr, Result, Ufunc};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Step {
    /// Any operation of the core's unary table.
    Unary(usize, UnaryOp),
    /// Any operation of the core's binary table, of two values.
    Binary(usize, usize, BinaryOp),
    /// Any binary operation, of a value and a Python-like scalar.
    Scalar(usize, BinaryOp, f64),
    Cast(usize, DType),
    Transpose(usize),
    Flatten(usize),
    Slice(usize, i64, Option<isize>, Option<isize>, isize),
    Reduce(usize, &'static str, Option<i64>),
    Where(usize, usize, usize),
    /// `cumsum`/`cumprod` along an axis.
    Scan(usize, &'static str, i64),
    /// `random_uniform`/`random_normal` of one of [`SHAPES`] with a seed.
    Random(usize, &'static str, u64),
    /// The user ufunc of [`ufunc`] on two values.
    Ufunc(usize, usize),
}

/// A user ufunc (traced closure, no signatures: dtypes follow promotion).
fn ufunc() -> Ufunc {
    Ufunc::new("blend", |[x, y]: [Expr; 2]| x.maximum(y) * 0.5 + x)
}

const REDUCE: &[&str] = &[
    "sum", "prod", "min", "max", "mean", "argmax", "argmin", "var", "std", "any", "all", "nansum",
    "nanmax",
];
const SHAPES: &[&[usize]] = &[&[], &[1], &[3], &[2, 3], &[2, 1], &[1, 3], &[0, 3], &[3, 2]];
const DTYPES: &[DType] = &[
    DType::F32,
    DType::F64,
    DType::I32,
    DType::I8,
    DType::U8,
    DType::Bool,
    DType::F16,
];

fn step() -> impl Strategy<Value = Step> {
    let i = 0usize..64;
    prop_oneof![
        // Every operation of the core's tables: a new row is tested here
        // with no list to extend.
        (i.clone(), prop::sample::select(UnaryOp::ALL)).prop_map(|(a, op)| Step::Unary(a, op)),
        (i.clone(), i.clone(), prop::sample::select(BinaryOp::ALL))
            .prop_map(|(a, b, op)| Step::Binary(a, b, op)),
        (
            i.clone(),
            prop::sample::select(BinaryOp::ALL),
            prop::sample::select(&[0.5, 2.0, -1.0, 3.0][..])
        )
            .prop_map(|(a, op, s)| Step::Scalar(a, op, s)),
        (i.clone(), prop::sample::select(DTYPES)).prop_map(|(a, d)| Step::Cast(a, d)),
        i.clone().prop_map(Step::Transpose),
        i.clone().prop_map(Step::Flatten),
        (
            i.clone(),
            -1i64..2,
            prop::option::of(-4isize..4),
            prop::option::of(-4isize..4),
            prop::sample::select(&[1isize, 2, -1, -2][..])
        )
            .prop_map(|(a, axis, start, stop, step)| Step::Slice(a, axis, start, stop, step)),
        (
            i.clone(),
            prop::sample::select(REDUCE),
            prop::option::of(-1i64..2)
        )
            .prop_map(|(a, op, ax)| Step::Reduce(a, op, ax)),
        (i.clone(), i.clone(), i.clone()).prop_map(|(c, a, b)| Step::Where(c, a, b)),
        (
            i.clone(),
            prop::sample::select(&["cumsum", "cumprod"][..]),
            -1i64..2
        )
            .prop_map(|(a, op, axis)| Step::Scan(a, op, axis)),
        (
            0..SHAPES.len(),
            prop::sample::select(&["random_uniform", "random_normal"][..]),
            0u64..4
        )
            .prop_map(|(shape, op, seed)| Step::Random(shape, op, seed)),
        (i.clone(), i).prop_map(|(a, b)| Step::Ufunc(a, b)),
    ]
}

/// One generated program: its inputs (shape index, dtype, seed) and steps.
/// Its `Debug` form is the Rust code that builds it, so a failing case
/// shrinks to a program one can paste into a test.
#[derive(Clone)]
struct Case {
    sources: Vec<(usize, DType, u64)>,
    steps: Vec<Step>,
}

impl std::fmt::Debug for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "Rust code of the case (`data` as in tests/differential.rs):"
        )?;
        writeln!(f, "let cx = Context::cpu();")?;
        for (i, &(shape, dtype, seed)) in self.sources.iter().enumerate() {
            writeln!(
                f,
                "let v{i} = data(&cx, &{:?}, DType::{dtype:?}, {seed});",
                SHAPES[shape]
            )?;
        }
        for (k, step) in self.steps.iter().enumerate() {
            let len = self.sources.len() + k;
            let v = |i: &usize| format!("v{}", i % len);
            let expr = match step {
                Step::Unary(a, op) => format!("{}.apply_unary(UnaryOp::{op:?})", v(a)),
                Step::Binary(a, b, op) => {
                    format!(
                        "{}.apply_binary(BinaryOp::{op:?}, (&{}).into())",
                        v(a),
                        v(b)
                    )
                }
                Step::Scalar(a, op, s) => {
                    format!("{}.apply_binary(BinaryOp::{op:?}, {s:?}.into())", v(a))
                }
                Step::Cast(a, d) => format!("{}.astype(DType::{d:?})", v(a)),
                Step::Transpose(a) => format!("{}.transpose()", v(a)),
                Step::Flatten(a) => format!("{0}.reshape(&[{0}.len()])", v(a)),
                Step::Slice(a, axis, start, stop, step) => {
                    format!("{}.slice_axis({axis}, {start:?}, {stop:?}, {step})", v(a))
                }
                Step::Reduce(a, op, None) => format!("{}.{op}()", v(a)),
                Step::Reduce(a, op, Some(x)) => format!("{}.{op}_axis({x})", v(a)),
                Step::Where(c, a, b) => format!("{}.where_(&{}, &{})", v(c), v(a), v(b)),
                Step::Scan(a, op, axis) => format!("{}.{op}({axis})", v(a)),
                Step::Random(shape, op, seed) => {
                    format!("cx.{op}(&{:?}, DType::F32, {seed})", SHAPES[*shape])
                }
                Step::Ufunc(a, b) => format!("ufunc().call(&[&{}, &{}])", v(a), v(b)),
            };
            writeln!(f, "let v{len} = {expr};")?;
        }
        Ok(())
    }
}

fn cases() -> impl Strategy<Value = Case> {
    (inputs(), prop::collection::vec(step(), 1..16))
        .prop_map(|(sources, steps)| Case { sources, steps })
}

fn inputs() -> impl Strategy<Value = Vec<(usize, DType, u64)>> {
    prop::collection::vec(
        (0..SHAPES.len(), prop::sample::select(DTYPES), any::<u64>()),
        1..4,
    )
}

fn data(cx: &Context, shape: &[usize], dtype: DType, seed: u64) -> Array {
    let n: usize = shape.iter().product();
    let values: Vec<f64> = (0..n)
        .map(|i| {
            let x = (seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(i as u64 * 1442695040888963407)
                >> 40) as f64;
            (x / (1u64 << 24) as f64) * 8.0 - 3.0
        })
        .collect();
    let f = cx.from_vec(values, shape).expect("shape fits");
    f.astype(dtype)
}

fn build(cx: &Context, sources: &[(usize, DType, u64)], steps: &[Step]) -> Vec<Array> {
    let blend = ufunc();
    let mut values: Vec<Array> = sources
        .iter()
        .map(|&(s, d, seed)| data(cx, SHAPES[s], d, seed))
        .collect();
    for step in steps {
        let pick = |i: &usize| values[i % values.len()].clone();
        let next = match step {
            Step::Unary(a, op) => pick(a).apply_unary(*op),
            Step::Binary(a, b, op) => pick(a).apply_binary(*op, (&pick(b)).into()),
            Step::Scalar(a, op, s) => pick(a).apply_binary(*op, (*s).into()),
            Step::Cast(a, d) => pick(a).astype(*d),
            Step::Transpose(a) => pick(a).transpose(),
            Step::Flatten(a) => {
                let a = pick(a);
                a.reshape(&[a.len()])
            }
            Step::Slice(a, axis, start, stop, step) => {
                pick(a).slice_axis(*axis, *start, *stop, *step)
            }
            Step::Reduce(a, op, axis) => {
                let a = pick(a);
                match (*op, axis) {
                    ("sum", None) => a.sum(),
                    ("prod", None) => a.prod(),
                    ("min", None) => a.min(),
                    ("max", None) => a.max(),
                    ("mean", None) => a.mean(),
                    ("argmax", None) => a.argmax(),
                    ("argmin", None) => a.argmin(),
                    ("var", None) => a.var(0),
                    ("std", None) => a.std(1),
                    ("any", None) => a.any(),
                    ("all", None) => a.all(),
                    ("nansum", None) => a.nansum(),
                    ("nanmax", None) => a.nanmax(),
                    ("argmax", Some(x)) => a.argmax_axis(*x),
                    ("argmin", Some(x)) => a.argmin_axis(*x),
                    ("var", Some(x)) => a.var_axis(*x, 0),
                    ("std", Some(x)) => a.std_axis(*x, 1),
                    ("any", Some(x)) => a.any_axis(*x),
                    ("all", Some(x)) => a.all_axis(*x),
                    ("sum", Some(x)) => a.sum_axis(*x),
                    ("prod", Some(x)) => a.prod_axis(*x),
                    ("min", Some(x)) => a.min_axis(*x),
                    ("max", Some(x)) => a.max_axis(*x),
                    (_, Some(x)) => a.mean_axis(*x),
                    _ => a.mean(),
                }
            }
            Step::Where(c, a, b) => pick(c).where_(pick(a), pick(b)),
            Step::Scan(a, op, axis) => match *op {
                "cumsum" => pick(a).cumsum(*axis),
                _ => pick(a).cumprod(*axis),
            },
            Step::Random(shape, op, seed) => match *op {
                "random_uniform" => cx.random_uniform(SHAPES[*shape], DType::F32, *seed),
                _ => cx.random_normal(SHAPES[*shape], DType::F32, *seed),
            },
            Step::Ufunc(a, b) => blend.call(&[&pick(a), &pick(b)]),
        };
        values.push(next);
    }
    values
}

fn as_f64(a: &Array) -> Result<Vec<f64>> {
    fn conv<T: Element>(a: &Array) -> Result<Vec<f64>> {
        Ok(a.to_vec::<T>()?
            .into_iter()
            .map(|x| x.to_wide().as_f64())
            .collect())
    }
    match a.dtype() {
        DType::F16 => conv::<f16>(a),
        DType::BF16 => conv::<lazyfuse::half::bf16>(a),
        DType::F32 => conv::<f32>(a),
        DType::F64 => conv::<f64>(a),
        DType::I8 => conv::<i8>(a),
        DType::I16 => conv::<i16>(a),
        DType::I32 => conv::<i32>(a),
        DType::I64 => conv::<i64>(a),
        DType::U8 => conv::<u8>(a),
        DType::U16 => conv::<u16>(a),
        DType::U32 => conv::<u32>(a),
        DType::U64 => conv::<u64>(a),
        DType::Bool => conv::<bool>(a),
    }
}

/// The loosest float tolerance of any value in the expression: a value cast
/// to f64 after an f32 reduction is only as exact as the f32 sum.
fn precision(values: &[Array]) -> DType {
    let rank = |d: DType| match d {
        DType::F16 | DType::BF16 => 0,
        DType::F32 => 1,
        DType::F64 => 2,
        _ => 3,
    };
    values
        .iter()
        .filter(|a| a.check().is_ok())
        .map(|a| a.dtype())
        .min_by_key(|&d| rank(d))
        .unwrap_or(DType::F64)
}

fn close(got: f64, want: f64, dtype: DType) -> bool {
    if got.is_nan() || want.is_nan() {
        return got.is_nan() && want.is_nan();
    }
    if got == want {
        return true;
    }
    let tolerance = match dtype {
        DType::F16 | DType::BF16 => 2e-2,
        DType::F32 => 1e-4,
        DType::F64 => 1e-9,
        // An integer computed from floats (a cast, a comparison) may differ by one step.
        _ => return false,
    };
    (got - want).abs() <= tolerance * want.abs().max(1.0)
}

/// 96 cases by default (CI); `PROPTEST_CASES` overrides.
fn case_count() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(96)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(case_count()))]

    #[test]
    fn every_backend_agrees_with_the_reference(case in cases()) {
        let Case { sources, steps } = &case;
        let reference = Context::builder().backend("reference").build().expect("reference");
        let expected = build(&reference, sources, steps);
        // Demand the last few values together, as one plan.
        let tail = expected.len().saturating_sub(3);
        let loosest = precision(&expected);
        for cx in common::backends().into_iter().skip(1) {
            let got = build(&cx, sources, steps);
            let valid: Vec<&Array> = got[tail..].iter().filter(|a| a.check().is_ok()).collect();
            let _ = cx.eval(&valid);
            for (g, w) in got[tail..].iter().zip(&expected[tail..]) {
                prop_assert_eq!(g.check().is_ok(), w.check().is_ok(), "validity differs on {}", cx.backend_name());
                if w.check().is_err() {
                    continue;
                }
                prop_assert_eq!(g.dtype(), w.dtype());
                prop_assert_eq!(g.shape(), w.shape());
                let (gv, wv) = (as_f64(g), as_f64(w));
                prop_assert_eq!(gv.is_ok(), wv.is_ok(), "demand outcome differs on {}: {:?} vs {:?}", cx.backend_name(), gv, wv);
                if let (Ok(gv), Ok(wv)) = (gv, wv) {
                    for (x, y) in gv.iter().zip(&wv) {
                        let tolerance_dtype = if g.dtype().is_float() { loosest } else { g.dtype() };
                        prop_assert!(close(*x, *y, tolerance_dtype), "{} gives {} where the reference gives {} ({}, {:?})\n{}", cx.backend_name(), x, y, g.dtype(), g.shape(), g.explain());
                    }
                }
            }
        }
    }
}

#[test]
fn a_case_prints_as_the_rust_code_that_builds_it() {
    let case = Case {
        sources: vec![(2, DType::F32, 7)],
        steps: vec![
            Step::Unary(0, UnaryOp::Sqrt),
            Step::Binary(0, 1, BinaryOp::Add),
            Step::Reduce(5, "sum", Some(0)),
        ],
    };
    let text = format!("{case:?}");
    assert!(
        text.contains("let v0 = data(&cx, &[3], DType::F32, 7);"),
        "{text}"
    );
    assert!(
        text.contains("let v1 = v0.apply_unary(UnaryOp::Sqrt);"),
        "{text}"
    );
    assert!(
        text.contains("let v2 = v0.apply_binary(BinaryOp::Add, (&v1).into());"),
        "{text}"
    );
    assert!(text.contains("let v3 = v2.sum_axis(0);"), "{text}");
}
