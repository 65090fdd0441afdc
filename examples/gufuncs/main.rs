//! Generalized ufuncs (Numba's `@guvectorize`) on the default context:
//! the tutorial's `doubled_gufunc` with and without an output array, a
//! batched 4×4 matrix product over 10,000 matrices, a moving average, and
//! the norm of one row of 10^7 values whose terms `par_reduce` spreads
//! over threads. Each result is checked against a plain Rust loop.
//!
//! Run with `cargo run --release --example gufuncs`.

mod library;

use lazyfuse::{Context, Error, Result};

fn main() -> Result<()> {
    let cx = Context::new();
    println!("backend: {}", cx.backend_name());

    // doubled_gufunc(arr, out): with an output array (Numba's out=) ...
    let doubled = library::doubled()?;
    let host: Vec<f32> = (0..12).map(|i| i as f32).collect();
    let arr = cx.from_slice(&host).reshape(&[3, 4]);
    let out = cx.empty_like(&arr);
    doubled.call_into(&[&arr], &[&out])?;
    let twice: Vec<f32> = host.iter().map(|v| v * 2.0).collect();
    check("doubled (out=)", out.to_vec::<f32>()? == twice)?;
    // ... and returning a new array, lazily.
    let again = doubled.call(&[&arr])?.remove(0);
    check("doubled", again.to_vec::<f32>()? == twice)?;

    // A batched 4x4 matrix product over 10,000 matrices.
    let (count, n) = (10_000, 4);
    let a_host: Vec<f64> = (0..count * n * n)
        .map(|i| ((i * 7) % 13) as f64 - 6.0)
        .collect();
    let b_host: Vec<f64> = (0..count * n * n)
        .map(|i| ((i * 5) % 11) as f64 * 0.5)
        .collect();
    let a = cx.from_slice(&a_host).reshape(&[count, n, n]);
    let b = cx.from_slice(&b_host).reshape(&[count, n, n]);
    let product = library::matmul()?.call(&[&a, &b])?.remove(0);
    let got = product.to_vec::<f64>()?;
    let mut want = vec![0.0; count * n * n];
    for m in 0..count {
        let at = |x: &[f64], i: usize, j: usize| x[m * n * n + i * n + j];
        for i in 0..n {
            for j in 0..n {
                want[m * n * n + i * n + j] =
                    (0..n).fold(0.0, |acc, l| acc + at(&a_host, i, l) * at(&b_host, l, j));
            }
        }
    }
    check("batched matmul of 10,000 4x4 matrices", got == want)?;

    // A moving average over 3 values of each of 4 rows.
    let rows: Vec<f64> = (0..40).map(|i| (i % 7) as f64).collect();
    let x = cx.from_slice(&rows).reshape(&[4, 10]);
    let window = cx.from_slice(&[3i64]).reshape(&[]);
    let averaged = library::moving_average()?.call(&[&x, &window])?.remove(0);
    let got = averaged.to_vec::<f64>()?;
    let want: Vec<f64> = rows
        .chunks(10)
        .flat_map(|row| library::moving_average_loop(row, 3))
        .collect();
    check("moving average", got == want)?;

    // The norm of one row of 10^7 values: par_reduce spreads its terms.
    let len = 10_000_000;
    let values = cx.arange(0.0, len as f64, 1.0, lazyfuse::DType::F32) * (1.0 / len as f64);
    let norm = library::norm()?.call(&[&values])?.remove(0);
    let got = norm.item::<f32>()? as f64;
    let want = (0..len)
        .map(|i| ((i as f32) * (1.0 / len as f32)) as f64)
        .map(|v| v * v)
        .sum::<f64>()
        .sqrt();
    check(
        "norm of 10^7 values with par_reduce",
        ((got - want) / want).abs() < 1e-6,
    )?;
    println!("norm = {got} (plain loop: {want})");
    Ok(())
}

fn check(what: &str, ok: bool) -> Result<()> {
    println!("{what}: {}", if ok { "ok" } else { "WRONG" });
    if ok {
        Ok(())
    } else {
        Err(Error::internal(
            "gufuncs example",
            format!("{what} disagrees with the plain loop"),
        ))
    }
}
