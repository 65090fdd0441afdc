//! Building runs nothing; demanding runs once; results are memoised.

mod common;

use std::sync::Arc;

use common::backends;
use lazyfuse::{Context, DType, Element, Expr, Reducer, Result, Stats, Ufunc};

#[test]
fn building_does_no_work() {
    for cx in backends() {
        let a = cx.from_slice(&[1.0f32, 2.0, 3.0]);
        let b = cx.from_vec(vec![2.0f32; 3], &[3]).unwrap();
        let disc = Ufunc::new("d", |[a, b]: [Expr; 2]| (a * b - 1.0).sqrt());
        let r = Reducer::new("sum", |x: Expr, y: Expr| x + y, 0);
        let exprs = [
            disc.call(&[&a, &b]).exp().sum(),
            r.reduce(&(&a - &b)),
            a.reshape(&[3, 1])
                .broadcast_to(&[3, 3])
                .transpose()
                .mean_axis(0),
            cx.arange(0.0, 3.0, 1.0, DType::F32).mul(&a).max(),
            a.to_device().map(|d| d.sum()).unwrap_or_else(|_| a.sum()),
        ];
        let _ = exprs;
        let stats = cx.stats();
        // `to_device` of a source copies (on device backends) but computes nothing.
        assert_eq!(stats.kernel_launches, 0, "{}: {stats:?}", cx.backend_name());
        assert_eq!(stats.evaluations, 0);
        assert_eq!(stats.d2h_copies, 0);
        assert_eq!(stats.kernels_compiled, 0);
    }
}

#[test]
fn demanding_twice_computes_once() -> Result<()> {
    for cx in backends() {
        let a = cx.from_slice(&[1.0f64, 2.0, 3.0]);
        let c = (&a * &a + 1.0).sqrt();
        let first = c.to_vec::<f64>()?;
        let after_first = cx.stats();
        assert_eq!(after_first.evaluations, 1);
        assert!(after_first.kernel_launches >= 1);
        assert_eq!(c.to_vec::<f64>()?, first);
        c.eval()?;
        cx.eval(&[&c])?;
        let again = cx.stats();
        assert_eq!(again.evaluations, 1, "memoised: {again:?}");
        assert_eq!(again.kernel_launches, after_first.kernel_launches);
        // A consumer of a memoised array reads its value instead of recomputing it.
        cx.reset_stats();
        assert_eq!(cx.stats(), Stats::default());
        let d = c.sum();
        d.item::<f64>()?;
        assert_eq!(cx.stats().kernel_launches, 1, "only the sum runs");
        assert!(c.is_materialized() && d.is_materialized());
    }
    Ok(())
}

#[test]
fn one_plan_for_several_results() -> Result<()> {
    let cx = Context::cpu();
    let a = cx.from_slice(&[1.0f32, 2.0]);
    let shared = &a * 3.0;
    let d = shared.exp();
    let e = &shared + 1.0;
    cx.eval(&[&d, &e])?;
    assert_eq!(cx.stats().evaluations, 1);
    assert_eq!(e.to_vec::<f32>()?, vec![4.0, 7.0]);
    assert_eq!(cx.stats().evaluations, 1);
    Ok(())
}

/// A demand into the caller's memory evaluates once, whether the engine
/// writes there (an element-wise last launch) or declines (then the value
/// is kept and copied out: a second read evaluates nothing).
#[test]
fn a_demand_into_memory_evaluates_once() -> Result<()> {
    for cx in backends() {
        let name = cx.backend_name();
        let x = cx.from_slice(&[1.0f32, 2.0, 3.0, 4.0]);
        let total = (&x * 2.0).sum();
        let mut out = [0.0f32];
        total.read_into(&mut out)?;
        assert_eq!(out, [20.0], "{name}");
        assert_eq!(cx.stats().evaluations, 1, "{name}");
        total.read_into(&mut out)?;
        let kept = total.is_materialized();
        assert_eq!(cx.stats().evaluations, if kept { 1 } else { 2 }, "{name}");
        // Several arrays at once, one of them a reduction.
        let (mean, doubled) = (x.mean(), &x * 2.0);
        let before = cx.stats().evaluations;
        let (mut m, mut d) = ([0.0f32], [0.0f32; 4]);
        let outs = vec![f32::wrap_mut(&mut m), f32::wrap_mut(&mut d)];
        cx.read_all_into(&[&mean, &doubled], outs)?;
        assert_eq!((m, d), ([2.5], [2.0, 4.0, 6.0, 8.0]), "{name}");
        assert_eq!(cx.stats().evaluations, before + 1, "{name}");
    }
    Ok(())
}

/// A scalar operand value used several times is one constant node of the
/// graph (the session keeps one per value), whether a pass reads it (a
/// power's exponent) or a kernel argument carries it.
#[test]
fn a_scalar_used_twice_is_one_constant_node() -> Result<()> {
    for cx in backends() {
        let name = cx.backend_name();
        let x = cx.from_slice(&[1.0f32, 2.0, 3.0]);
        let y = (&x * 2.0 + 1.0) * 2.0 - 1.0;
        let plan = y.explain();
        let fills = plan.lines().filter(|l| l.contains("= fill")).count();
        assert_eq!(fills, 2, "{name}: 2.0 and 1.0 once each\n{plan}");
        assert_eq!(y.to_vec::<f32>()?, vec![5.0, 9.0, 13.0], "{name}");
        let z = x.pow(2.0) * 2.0;
        assert_eq!(z.to_vec::<f32>()?, vec![2.0, 8.0, 18.0], "{name}");
        let w = x.pow(3.0) * 3.0;
        assert_eq!(w.to_vec::<f32>()?, vec![3.0, 24.0, 81.0], "{name}");
    }
    Ok(())
}

#[test]
fn concurrent_demands_of_one_array_compute_it_once() -> Result<()> {
    let cx = Context::cpu();
    let n = 1 << 20;
    let a = cx.from_vec((0..n).map(|i| i as f64).collect(), &[n])?;
    let expensive = (&a.sin() * &a.cos() + 1.0).sqrt().sum();
    let barrier = Arc::new(std::sync::Barrier::new(8));
    let results: Vec<f64> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let expensive = expensive.clone();
                let barrier = Arc::clone(&barrier);
                s.spawn(move || {
                    barrier.wait();
                    expensive.item::<f64>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("no panic").expect("evaluates"))
            .collect()
    });
    assert!(results.windows(2).all(|w| w[0] == w[1]));
    assert_eq!(cx.stats().evaluations, 1, "{:?}", cx.stats());
    Ok(())
}

#[test]
fn explain_and_dot_show_the_graph_without_running_it() {
    let cx = Context::cpu();
    let a = cx.from_slice(&[1.0f32, 2.0]);
    let b = cx.from_slice(&[3.0f32, 4.0]);
    let c = ((&a - &b) * (&a - &b)).sum();
    let text = c.explain();
    assert!(text.contains("subtract"), "{text}");
    assert!(text.contains("multiply"), "{text}");
    assert!(text.contains("sum"), "{text}");
    assert!(text.contains("source"), "{text}");
    assert!(text.contains("backend: cpu"), "{text}");
    let dot = c.to_dot();
    assert!(dot.starts_with("digraph"), "{dot}");
    assert!(dot.contains("->"), "{dot}");
    assert_eq!(cx.stats().evaluations, 0);
    let bad = &a + &cx.from_slice(&[1.0f32, 2.0, 3.0]);
    assert!(bad.explain().contains("invalid expression"));
}
