//! Numba's `to_device` / `device_array` / `copy_to_host` workflow, made
//! lazy: inputs are uploaded once, intermediates stay on the device (fused
//! away entirely here), and only what is read comes back. `cx.stats()`
//! counts every copy and launch, and the example checks those counts and
//! the values against plain Rust.
//!
//! Run: `cargo run --release --example device_arrays`

use lazyfuse::{Context, Error, Result};

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
        Err(Error::internal("device_arrays example", what))
    }
}

fn main() -> Result<()> {
    // `Context::new()` picks CUDA device 0 when there is one (else the CPU,
    // which has no device memory). The simulated device has its own memory
    // and real, counted copies on any machine, so it shows the workflow.
    let cx = Context::sim();
    let n = 100_000;
    let (ha, hb, hc) = (
        uniform(n, 1, 0.0, 1.0),
        uniform(n, 2, 2.0, 3.0),
        uniform(n, 3, 0.0, 1.0),
    );

    // d_a = cuda.to_device(a): each input is copied now, once.
    let a = cx.from_slice(&ha).to_device()?;
    let b = cx.from_slice(&hb).to_device()?;
    let c = cx.from_slice(&hc).to_device()?;
    let s = cx.stats();
    println!(
        "to_device x3:        {} h2d copies ({} bytes), {} kernel launches",
        s.h2d_copies, s.h2d_bytes, s.kernel_launches
    );
    ensure(s.h2d_copies == 3, "each input is uploaded once")?;
    ensure(
        a.is_on_device() && b.is_on_device() && c.is_on_device(),
        "inputs on the device",
    )?;

    // An expression with an intermediate (`disc`): building it runs nothing.
    cx.reset_stats();
    let disc = &b * &b - 4.0 * &a * &c;
    let root = disc.sqrt();
    ensure(cx.stats().kernel_launches == 0, "building is lazy")?;

    // d_out = cuda.device_array(n); kernel[...](d_a, d_b, d_c, d_out):
    // eval() computes the result and keeps it on the device.
    root.eval()?;
    let s = cx.stats();
    println!(
        "root.eval():         {} h2d, {} d2h, {} kernel launch (disc fused, never stored)",
        s.h2d_copies, s.d2h_copies, s.kernel_launches
    );
    ensure(
        s.h2d_copies == 0 && s.d2h_copies == 0,
        "eval copies nothing",
    )?;
    ensure(s.kernel_launches == 1, "one fused kernel")?;
    ensure(root.is_on_device(), "the result stays on the device")?;

    // d_out.copy_to_host(out): the only download, of exactly what is read.
    let mut out = vec![0.0f32; n];
    root.read_into(&mut out)?;
    let s = cx.stats();
    println!(
        "root.read_into(..):  {} d2h copy ({} bytes), {} kernel launch in all",
        s.d2h_copies, s.d2h_bytes, s.kernel_launches
    );
    ensure(
        s.d2h_copies == 1 && s.d2h_bytes == 4 * n as u64,
        "one download of the result",
    )?;

    for i in 0..n {
        let want = (hb[i] * hb[i] - 4.0 * ha[i] * hc[i]).sqrt();
        ensure(
            (out[i] - want).abs() <= 1e-5 * want.max(1.0),
            &format!("root[{i}] = {} but plain Rust gives {want}", out[i]),
        )?;
    }

    // A second expression on the same device inputs uploads nothing and
    // downloads one number.
    cx.reset_stats();
    let total = (&a * &b + &c).sum().item::<f32>()?;
    let s = cx.stats();
    println!(
        "sum(a*b + c) = {total:.1}: {} h2d, {} d2h ({} bytes), {} kernel launch",
        s.h2d_copies, s.d2h_copies, s.d2h_bytes, s.kernel_launches
    );
    ensure(s.h2d_copies == 0, "device inputs are reused")?;
    ensure(
        s.d2h_copies == 1 && s.d2h_bytes == 4,
        "only the sum comes back",
    )?;
    let want: f64 = (0..n).map(|i| f64::from(ha[i] * hb[i] + hc[i])).sum();
    ensure(
        (f64::from(total) - want).abs() <= 1e-5 * want,
        &format!("sum = {total} but plain Rust gives {want}"),
    )?;
    println!("all counts and values check out");
    Ok(())
}
