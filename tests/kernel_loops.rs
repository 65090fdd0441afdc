//! Loops of compiled kernels whose accesses are checked once, before the
//! loop (`codegen/cpu/src/jit/kernel/hoist.rs`): every stride and length
//! the checks must tell apart gives the simulator's results, including the
//! cases that must fall back to checking every access. And `read_into` of
//! a kernel's result, which the CPU computes in the destination.

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

/// `read_into` of a kernel's only written array: computed straight into
/// the destination on the CPU (the argument copied there, in pieces for a
/// large one), the same values on every backend, the argument unchanged,
/// and a bad access still an error naming it.
#[test]
fn read_into_of_a_kernel_result_computes_it_in_the_destination() {
    let increment = Kernel::build("increment", |k| {
        let a = k.array_mut("a", DType::F32, 1);
        let i = k.grid(1).remove(0);
        k.if_(i.lt(a.len(0)), |k| k.store(&a, &i, a.at(&i) + 1.0));
    })
    .unwrap();
    let unguarded = Kernel::build("unguarded", |k| {
        let a = k.array_mut("a", DType::F32, 1);
        let i = k.grid(1).remove(0);
        k.store(&a, &i, a.at(&i) + 1.0);
    })
    .unwrap();
    for cx in backends() {
        for n in [1000usize, 3 << 20] {
            let host: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
            let a = cx.from_slice(&host);
            let blocks = n.div_ceil(256) as u32;
            let out = increment
                .launch(&cx, blocks, 256u32, &[(&a).into()])
                .unwrap()
                .remove(0);
            let mut got = vec![0f32; n];
            out.read_into(&mut got).unwrap();
            assert!(
                got.iter().zip(&host).all(|(g, h)| *g == h + 1.0),
                "{} n={n}",
                cx.backend_name()
            );
            // Not kept, and the argument keeps its value: a second demand
            // runs the launch again from it.
            let mut again = vec![0f32; n];
            out.read_into(&mut again).unwrap();
            assert_eq!(again, got);
            assert_eq!(a.to_vec::<f32>().unwrap(), host);
        }
        let a = cx.zeros(&[100], DType::F32);
        let out = unguarded
            .launch(&cx, 1u32, 128u32, &[(&a).into()])
            .unwrap()
            .remove(0);
        let err = out.read_into(&mut [0f32; 100]).unwrap_err().to_string();
        assert!(err.contains("a[100] outside its 100 elements"), "{err}");
    }
}
