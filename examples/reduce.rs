//! User reductions (Numba's `cuda.reduce`): a `Reducer` from a binary
//! closure and its identity, over a whole array and along each axis,
//! checked against Rust folds. The element-wise work feeding a reduction is
//! fused into the reduction's kernel: one launch in `cx.stats()`.
//!
//! Run: `cargo run --release --example reduce`

use lazyfuse::{Context, Error, Expr, Reducer, Result};

/// Deterministic values in [lo, hi) (the LCG of the quickstart example).
fn uniform(n: usize, seed: u64, lo: f32, hi: f32) -> Vec<f32> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            lo + (hi - lo) * ((state >> 40) as f32 / (1u64 << 24) as f32)
        })
        .collect()
}

/// An error (not a panic) when a claim of the example does not hold.
fn ensure(ok: bool, what: &str) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(Error::internal("reduce example", what))
    }
}

fn close(got: f32, want: f64, what: &str) -> Result<()> {
    let ok = (f64::from(got) - want).abs() <= 1e-5 * want.abs().max(1.0);
    ensure(ok, &format!("{what} = {got} but a Rust fold gives {want}"))
}

fn main() -> Result<()> {
    let cx = Context::new();
    println!("backend: {}", cx.backend_name());

    // @cuda.reduce
    // def sum_reduce(a, b): return a + b
    let sum = Reducer::new("sum", |a: Expr, b: Expr| a + b, 0.0);
    // The largest magnitude: max(|a|, |b|) is associative, 0 its identity.
    let absmax = Reducer::new("absmax", |a: Expr, b: Expr| a.abs().maximum(b.abs()), 0.0);

    let n = 1_000_000;
    let hx = uniform(n, 1, -1.0, 1.0);
    let x = cx.from_slice(&hx);

    // Sum of squares: x*x fuses into the reduction's read (no n-element
    // temporary), so the whole thing is one kernel launch.
    cx.reset_stats();
    let sumsq = sum.reduce(&(&x * &x)).item::<f32>()?;
    let launches = cx.stats().kernel_launches;
    println!("sum(x*x)   = {sumsq:.3} ({launches} kernel launch)");
    close(
        sumsq,
        hx.iter().map(|&v| f64::from(v * v)).sum(),
        "sum(x*x)",
    )?;
    ensure(launches == 1, "x*x and the reduction run as one kernel")?;

    cx.reset_stats();
    let biggest = absmax.reduce(&(2.0 * &x - 0.5)).item::<f32>()?;
    let launches = cx.stats().kernel_launches;
    println!("absmax(2x - 0.5) = {biggest:.6} ({launches} kernel launch)");
    let want = hx
        .iter()
        .map(|&v| (2.0 * v - 0.5).abs())
        .fold(0.0f32, f32::max);
    close(biggest, f64::from(want), "absmax")?;
    ensure(launches == 1, "the element-wise work fuses into absmax")?;

    // Per axis, on a (rows, cols) view of the same data.
    let (rows, cols) = (1000, 1000);
    let m = x.reshape(&[rows, cols]);
    let at = |i: usize, j: usize| hx[i * cols + j];
    let col_sumsq = sum.reduce_axis(&(&m * &m), 0).to_vec::<f32>()?;
    let row_absmax = absmax.reduce_axis(&m, 1).to_vec::<f32>()?;
    ensure(
        col_sumsq.len() == cols && row_absmax.len() == rows,
        "axis shapes",
    )?;
    for (j, &got) in col_sumsq.iter().enumerate() {
        let want: f64 = (0..rows).map(|i| f64::from(at(i, j) * at(i, j))).sum();
        close(got, want, &format!("column {j} sum of squares"))?;
    }
    for (i, &got) in row_absmax.iter().enumerate() {
        let want = (0..cols).map(|j| at(i, j).abs()).fold(0.0f32, f32::max);
        close(got, f64::from(want), &format!("row {i} absmax"))?;
    }
    println!(
        "per column sum of squares [..3] = {:?}, per row absmax [..3] = {:?}",
        &col_sumsq[..3],
        &row_absmax[..3]
    );

    // A fractional identity cannot reduce an integer array: an error, not a panic.
    let half = Reducer::new("odd", |a: Expr, b: Expr| a + b, 0.5);
    let ints = cx.from_slice(&[1i32, 2, 3]);
    match half.reduce(&ints).item::<i32>() {
        Err(e) => println!("integer reduce with identity 0.5 -> error: {e}"),
        Ok(v) => ensure(false, &format!("expected an error, got {v}"))?,
    }
    println!("all values check out against Rust folds");
    Ok(())
}
