//! Math functions in kernels (`exp`, `hypot`, `arctan2`, …: operations
//! Cranelift has no instruction for): the values the element-wise
//! operations give on the reference evaluator, on every backend, and on the
//! CPU compiled by the JIT — each thread calls the machine's loop for its
//! one value — rather than interpreted (a Mandelbrot kernel's `abs(z)` cost
//! 11× Numba's time interpreted, 1.8× compiled).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use lazyfuse::core::{BinaryOp, UnaryOp};
use lazyfuse::kernel::{Kernel, Val};
use lazyfuse::{Array, Context, DType, Result};

const UNARY: [UnaryOp; 4] = [UnaryOp::Exp, UnaryOp::Log1p, UnaryOp::Sin, UnaryOp::Asinh];
const BINARY: [BinaryOp; 3] = [BinaryOp::Hypot, BinaryOp::Arctan2, BinaryOp::Pow];

/// One thread per element: each function of `a[i]` (and `b[i]`) into an
/// output of its own, computed in a loop of one or two rounds (by the
/// thread's parity: rows of threads cannot run on vectors, each thread
/// runs as scalar code).
fn functions(dtype: DType) -> Kernel {
    Kernel::build(&format!("math_{dtype}"), |k| {
        let a = k.array("a", dtype, 1);
        let b = k.array("b", dtype, 1);
        let unary = UNARY.map(|op| k.array_mut(op.name(), dtype, 1));
        let binary = BINARY.map(|op| k.array_mut(op.name(), dtype, 1));
        let n = k.scalar("n", DType::I64);
        let i = k.grid(1).remove(0);
        k.if_(i.lt(&n), |k| {
            let (x, y) = (k.let_(a.at(&i)), k.let_(b.at(&i)));
            let one = Val::constant(1.0, DType::I64);
            let parity = i.apply_binary(BinaryOp::Rem, Val::constant(2.0, DType::I64));
            let rounds = k.let_(parity.apply_binary(BinaryOp::Add, one.clone()));
            let round = k.local(Val::constant(0.0, DType::I64));
            k.while_(round.get().lt(&rounds), |k| {
                for (op, out) in UNARY.iter().zip(&unary) {
                    k.store(out, &i, x.apply(*op));
                }
                for (op, out) in BINARY.iter().zip(&binary) {
                    k.store(out, &i, x.apply_binary(*op, &y));
                }
                k.set(&round, round.get().apply_binary(BinaryOp::Add, one.clone()));
            });
        });
    })
    .unwrap()
}

fn values(x: &Array) -> Result<Vec<f64>> {
    x.astype(DType::F64).to_vec::<f64>()
}

#[test]
fn math_functions_in_kernels_are_the_element_wise_ones_and_compiled_on_the_cpu() -> Result<()> {
    let reference = Context::builder().backend("reference").build()?;
    let host_a = [0.0, 0.5, -1.25, 3.0, 7.5, -0.0, 1e-3, 2.0];
    let host_b = [1.0, -2.0, 0.5, 4.0, 0.25, 3.0, -1e-3, 0.5];
    for dtype in [DType::F32, DType::F64] {
        let array = |cx: &Context, v: &[f64]| cx.from_slice(v).astype(dtype);
        let (ra, rb) = (array(&reference, &host_a), array(&reference, &host_b));
        let want: Vec<Vec<f64>> = UNARY
            .iter()
            .map(|&op| values(&ra.apply_unary(op)))
            .chain(
                BINARY
                    .iter()
                    .map(|&op| values(&ra.apply_binary(op, (&rb).into()))),
            )
            .collect::<Result<_>>()?;
        for cx in common::backends() {
            let n = host_a.len();
            let (a, b) = (array(&cx, &host_a), array(&cx, &host_b));
            let outs: Vec<Array> = (0..UNARY.len() + BINARY.len())
                .map(|_| cx.zeros(&[n], dtype))
                .collect();
            let mut args = vec![(&a).into(), (&b).into()];
            args.extend(outs.iter().map(|o| o.into()));
            args.push((n as i64).into());
            let results = functions(dtype).launch(&cx, 1u32, 64u32, &args)?;
            if cx.backend_name() == "cpu" {
                let plan = results[0].explain();
                let launch = plan.lines().find(|l| l.starts_with("u0: kernel 'math_"));
                assert!(
                    launch.is_some_and(|l| l.contains("runs on compiled code (JIT)")),
                    "{plan}"
                );
            }
            for (k, (got, want)) in results.iter().zip(&want).enumerate() {
                let got = values(got)?;
                let close = got.iter().zip(want).all(|(g, w)| {
                    (g.is_nan() && w.is_nan()) || (g - w).abs() <= 1e-6 * w.abs().max(1.0)
                });
                assert!(
                    close,
                    "output {k} of {dtype} on {}: {got:?} != {want:?}",
                    cx.backend_name()
                );
            }
        }
    }
    Ok(())
}

#[test]
fn a_row_of_threads_calls_math_functions_on_vectors() -> Result<()> {
    // out[i] = exp(a[i]) * hypot(a[i], 2): every access at the thread's
    // position, so rows of threads run on vectors, the calls over a group.
    let kernel = Kernel::build("row_math", |k| {
        let a = k.array("a", DType::F64, 1);
        let out = k.array_mut("out", DType::F64, 1);
        let n = k.scalar("n", DType::I64);
        let i = k.grid(1).remove(0);
        k.if_(i.lt(&n), |k| {
            let x = k.let_(a.at(&i));
            let two = Val::constant(2.0, DType::F64);
            let value = x
                .apply(UnaryOp::Exp)
                .apply_binary(BinaryOp::Mul, x.apply_binary(BinaryOp::Hypot, two));
            k.store(&out, &i, value);
        });
    })
    .unwrap();
    let host: Vec<f64> = (0..1000).map(|v| f64::from(v) / 250.0 - 2.0).collect();
    let want: Vec<f64> = host.iter().map(|x| x.exp() * x.hypot(2.0)).collect();
    for cx in common::backends() {
        let (a, out) = (cx.from_slice(&host), cx.zeros(&[host.len()], DType::F64));
        let n = host.len();
        let got = kernel.launch(
            &cx,
            4u32,
            256u32,
            &[(&a).into(), (&out).into(), (n as i64).into()],
        )?;
        if cx.backend_name() == "cpu" {
            let plan = got[0].explain();
            let launch = plan
                .lines()
                .find(|l| l.starts_with("u0: kernel 'row_math'"));
            assert!(
                launch.is_some_and(|l| l.contains("threads on vectors")),
                "{plan}"
            );
        }
        let got = got[0].to_vec::<f64>()?;
        assert!(
            got.iter()
                .zip(&want)
                .all(|(g, w)| (g - w).abs() <= 1e-12 * w.abs().max(1.0)),
            "{}",
            cx.backend_name()
        );
    }
    Ok(())
}
