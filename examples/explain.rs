//! What lazyfuse does with an expression: the fusion groups and the copy
//! plan (`explain`), the generated CUDA C (`cuda_source`), and the graph as
//! Graphviz DOT (written to `target/explain.dot`).
//!
//! Run: `cargo run --release --example explain`

use lazyfuse::Context;

fn main() -> lazyfuse::Result<()> {
    let cx = Context::sim();
    let n = 1000;
    let a = cx.from_vec((0..n).map(|i| i as f32 / n as f32).collect(), &[n])?;
    let b = cx.from_vec(vec![2.5f32; n], &[n])?;
    let c = cx.from_vec(vec![0.5f32; n], &[n])?;

    // The discriminant and its mean: one fused kernel (element-wise work
    // feeding the reduction), three uploads, one download when read.
    let d = (&b * &b - 4.0 * &a * &c).sqrt();
    let mean = d.mean();

    println!("== explain()\n{}", mean.explain());
    println!("== generated CUDA C (prelude omitted)");
    let source = lazyfuse::cuda_source(&[&mean])?;
    let kernels = source
        .find("// ---- fused kernel")
        .map_or(source.as_str(), |start| &source[start..]);
    println!("{kernels}");

    let dot = mean.to_dot();
    let path = std::path::Path::new("target").join("explain.dot");
    std::fs::create_dir_all("target").map_err(|e| lazyfuse::Error::Device {
        op: "write target/explain.dot".into(),
        message: e.to_string(),
    })?;
    std::fs::write(&path, dot).map_err(|e| lazyfuse::Error::Device {
        op: "write target/explain.dot".into(),
        message: e.to_string(),
    })?;
    println!("== DOT graph written to {}", path.display());
    println!("mean = {}", mean.item::<f32>()?);
    Ok(())
}
