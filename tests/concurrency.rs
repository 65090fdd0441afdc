//! A context shared by 8 threads: each builds and demands expressions over
//! shared and private arrays; every result is checked.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use lazyfuse::{Context, DType, Expr, Reducer, Result, Ufunc};

#[test]
fn eight_threads_share_a_context() -> Result<()> {
    for cx in common::backends() {
        let n = 50_000;
        let shared = cx.from_vec((0..n).map(|i| (i % 100) as f64).collect(), &[n])?;
        let poly = Arc::new(Ufunc::new("poly", |[x, k]: [Expr; 2]| x * k + 1.0));
        let sum = Arc::new(Reducer::new("sum", |a: Expr, b: Expr| a + b, 0.0));
        let shared_total = (&shared * 2.0).sum();
        std::thread::scope(|s| {
            for t in 0..8u32 {
                let (cx, shared, poly, sum, shared_total) = (
                    cx.clone(),
                    shared.clone(),
                    Arc::clone(&poly),
                    Arc::clone(&sum),
                    shared_total.clone(),
                );
                s.spawn(move || {
                    let private = cx.full(&[n], t as f64, DType::F64);
                    for round in 0..5 {
                        let k = (t * 10 + round) as f64;
                        let y = poly.call(&[&shared, &(&private + k)]);
                        let got = sum.reduce(&y).item::<f64>().expect("evaluates");
                        // Σ (x * (t + k) + 1) over x = i % 100.
                        let want = (0..n)
                            .map(|i| (i % 100) as f64 * (t as f64 + k) + 1.0)
                            .sum::<f64>();
                        assert!(
                            (got - want).abs() <= 1e-9 * want,
                            "thread {t} round {round}: {got} vs {want}"
                        );
                        let total = shared_total.item::<f64>().expect("shared result");
                        assert_eq!(total, 2.0 * (0..n).map(|i| (i % 100) as f64).sum::<f64>());
                    }
                });
            }
        });
        assert!(shared_total.is_materialized());
    }
    Ok(())
}

#[test]
fn contexts_and_arrays_move_between_threads() -> Result<()> {
    let cx = Context::cpu();
    let a = cx.from_slice(&[1.0f32, 2.0, 3.0]);
    let b = std::thread::spawn(move || (&a * 2.0).sum())
        .join()
        .expect("thread");
    assert_eq!(b.item::<f32>()?, 12.0);
    Ok(())
}
