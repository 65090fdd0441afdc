//! Loops of compiled kernels whose accesses are checked once, before the
//! loop (`codegen/cpu/src/jit/kernel/hoist.rs`): every stride and length
//! the checks must tell apart gives the simulator's results, including the
//! cases that must fall back to checking every access.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use lazyfuse::kernel::{Kernel, Val};
use lazyfuse::{Context, DType, Error};

fn backends() -> [Context; 2] {
    let cpu = Context::builder()
        .backend("cpu")
        .jit(lazyfuse::JitMode::Always)
        .build()
        .unwrap();
    [cpu, Context::sim()]
}

/// One thread: `out[i] = x[base + i * step]` for `i` in `0..count`, and
/// `total[0]` the sum of those values in order.
fn gather() -> Kernel {
    Kernel::build("gather", |k| {
        let x = k.array("x", DType::F64, 1);
        let out = k.array_mut("out", DType::F64, 1);
        let total = k.array_mut("total", DType::F64, 1);
        let base = k.scalar("base", DType::I64);
        let step = k.scalar("step", DType::I64);
        let count = k.scalar("count", DType::I64);
        let first = k.grid(1).remove(0);
        k.if_(first.eq(0i64), |k| {
            let sum = k.local(Val::constant(0.0, DType::F64));
            k.for_range(0i64, count, 1i64, |k, i| {
                let value = k.let_(x.at(&base + &(&i * &step)));
                k.store(&out, &i, value.clone());
                k.set(&sum, sum.get() + value);
            });
            k.store(&total, 0i64, sum.get());
        });
    })
    .unwrap()
}

fn run(
    cx: &Context,
    x: &[f64],
    (base, step, count): (i64, i64, usize),
) -> Result<(Vec<f64>, f64), Error> {
    let kernel = gather();
    let (x, out, total) = (
        cx.from_slice(x),
        cx.zeros(&[count], DType::F64),
        cx.zeros(&[1], DType::F64),
    );
    let outs = kernel.launch(
        cx,
        1u32,
        32u32,
        &[
            (&x).into(),
            (&out).into(),
            (&total).into(),
            base.into(),
            step.into(),
            (count as i64).into(),
        ],
    )?;
    if cx.backend_name() == "cpu" {
        let text = outs[0].explain();
        assert!(text.contains("compiled code (JIT)"), "{text}");
    }
    Ok((outs[0].to_vec::<f64>()?, outs[1].to_vec::<f64>()?[0]))
}

fn want(x: &[f64], (base, step, count): (i64, i64, usize)) -> (Vec<f64>, f64) {
    let values: Vec<f64> = (0..count as i64)
        .map(|i| x[(base + i * step) as usize])
        .collect();
    let total = values.iter().fold(0.0, |acc, v| acc + v);
    (values, total)
}

#[test]
fn forward_backward_and_strided_loops_of_every_length() {
    let x: Vec<f64> = (0..40).map(|i| 1.0 / f64::from(i + 3)).collect();
    let mut cases = Vec::new();
    for count in 0..=9 {
        cases.push((0, 1, count));
        cases.push((5, 3, count));
        // A negative stride: not checked once, every access checked.
        cases.push((30, -2, count));
    }
    cases.push((0, 1, 40));
    cases.push((39, -1, 40));
    cases.push((0, 0, 7));
    for cx in backends() {
        for &case in &cases {
            let (values, total) = run(&cx, &x, case).unwrap();
            let (want_values, want_total) = want(&x, case);
            assert_eq!(values, want_values, "{} {case:?}", cx.backend_name());
            assert_eq!(total.to_bits(), want_total.to_bits(), "{case:?}");
        }
    }
}

#[test]
fn a_loop_running_past_its_buffer_is_still_reported() {
    let x: Vec<f64> = (0..40).map(f64::from).collect();
    for cx in backends() {
        for (case, bad) in [((1, 1, 40), 40), ((0, 2, 21), 40), ((3, -1, 5), -1)] {
            let err = run(&cx, &x, case).unwrap_err();
            let text = err.to_string();
            assert!(matches!(err, Error::Device { .. }), "{text}");
            assert!(
                text.contains("gather") && text.contains(&format!("x[{bad}]")),
                "{} {case:?}: {text}",
                cx.backend_name()
            );
        }
    }
}
