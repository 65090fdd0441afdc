//! The discriminant of the source tutorials (Numba's `@vectorize` with two
//! signatures), made lazy: build the expression, reduce it, then demand.
//!
//! Run: `cargo run --release --example quickstart`

use lazyfuse::{Context, Expr, Ufunc};

/// Deterministic values in [lo, hi) (a tiny LCG, so the example needs no RNG crate).
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

fn main() -> lazyfuse::Result<()> {
    let cx = Context::new();
    println!("backend: {}", cx.backend_name());

    let n = 1_000_000;
    let a = cx.from_vec(uniform(n, 1, 0.0, 1.0), &[n])?;
    let b = cx.from_vec(uniform(n, 2, 2.0, 3.0), &[n])?;
    let c = cx.from_vec(uniform(n, 3, 0.0, 1.0), &[n])?;

    // @vectorize(['float32(float32, float32, float32)', 'float64(float64, float64, float64)'])
    let discriminant = Ufunc::new("discriminant", |[a, b, c]: [Expr; 3]| {
        (b * b - 4.0 * a * c).sqrt()
    })
    .with_signatures(&["f32(f32,f32,f32)", "f64(f64,f64,f64)"])?;

    let d = discriminant.call(&[&a, &b, &c]);
    let mean = d.mean();
    let largest = d.max();
    println!(
        "built d, mean(d), max(d): {} kernels launched so far (lazy)",
        cx.stats().kernel_launches
    );

    println!("\nexplain(mean(d)) before any demand:\n{}", mean.explain());

    let head: Vec<f32> = d.to_vec::<f32>()?.into_iter().take(4).collect();
    println!("d[..4]    = {head:?}");
    println!("mean(d)   = {}", mean.item::<f32>()?);
    println!("max(d)    = {}", largest.item::<f32>()?);

    let stats = cx.stats();
    println!(
        "stats: {} kernel launches, {} evaluations, {} h2d copies, {} d2h copies",
        stats.kernel_launches, stats.evaluations, stats.h2d_copies, stats.d2h_copies
    );
    Ok(())
}
