//! Deep graphs and accurate sums.

mod common;

use lazyfuse::half::{bf16, f16};
use lazyfuse::{Context, DType, Result};

#[test]
fn a_chain_of_100_000_ops_builds_evaluates_and_drops() -> Result<()> {
    // Run on a thread with a small stack: no step may recurse per node.
    let worker = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| -> Result<()> {
            let cx = Context::cpu();
            let mut x = cx.from_slice(&[0.0f64, 1.0]);
            for i in 0..100_000 {
                x = if i % 2 == 0 { &x + 1.0 } else { &x * 1.0 };
            }
            assert!(x.explain().lines().count() > 100_000);
            assert_eq!(x.to_vec::<f64>()?, vec![50_000.0, 50_001.0]);
            drop(x);
            // A chain that is never evaluated drops iteratively too.
            let mut y = cx.from_slice(&[1i32]);
            for _ in 0..100_000 {
                y = y.neg();
            }
            drop(y);
            Ok(())
        })
        .expect("spawn");
    worker.join().expect("no stack overflow")
}

#[test]
fn float32_sums_are_accurate() -> Result<()> {
    let cx = Context::cpu();
    let n = 10_000_000;
    let tenth = cx.full(&[n], 0.1f32, DType::F32);
    let total = tenth.sum().item::<f32>()?;
    let relative = ((total as f64) - 1_000_000.0).abs() / 1_000_000.0;
    assert!(
        relative < 1e-6,
        "sum of 1e7 × 0.1f32 = {total} (relative error {relative:e})"
    );
    let data = cx.from_vec(vec![0.1f32; n], &[n])?;
    let mean = data.mean().item::<f32>()?;
    assert!(((mean as f64) - 0.1).abs() < 1e-7, "mean {mean}");
    Ok(())
}

#[test]
fn half_precision_accumulates_in_f32() -> Result<()> {
    let cx = Context::cpu();
    // 4096 ones: an f16 running sum sticks at 2048 (2049 is not representable).
    let ones = cx.from_slice(&vec![f16::ONE; 4096]);
    assert_eq!(ones.sum().dtype(), DType::F16);
    assert_eq!(ones.sum().item::<f16>()?.to_f32(), 4096.0);
    assert_eq!(ones.mean().item::<f16>()?.to_f32(), 1.0);
    let b = cx.from_slice(&vec![bf16::ONE; 1000]);
    assert_eq!(b.sum().item::<bf16>()?.to_f32(), 1000.0);
    assert_eq!(
        (&b + &ones.reshape(&[4096, 1]).sum_axis(1).sum()).dtype(),
        DType::F32
    );
    Ok(())
}

#[test]
fn bf16_promotion_and_arithmetic() -> Result<()> {
    let cx = Context::cpu();
    let b = cx.from_slice(&[bf16::from_f32(1.5), bf16::from_f32(-2.0)]);
    let i = cx.from_slice(&[3i8, 4]);
    let h = cx.from_slice(&[f16::from_f32(0.5), f16::from_f32(0.25)]);
    assert_eq!((&b + &i).dtype(), DType::BF16);
    assert_eq!((&b + &h).dtype(), DType::F32);
    assert_eq!(
        (&b * 2.0).to_vec::<bf16>()?,
        vec![bf16::from_f32(3.0), bf16::from_f32(-4.0)]
    );
    assert_eq!(b.sqrt().to_vec::<bf16>()?[0], bf16::from_f32(1.5f32.sqrt()));
    Ok(())
}
