//! Fusion and planning acceptance: exact kernel and copy counts on the
//! simulated device (separate device memory), and fused results equal to
//! the reference evaluator's.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use lazyfuse::{Context, DType, Result};

fn sim() -> Context {
    Context::sim()
}

fn vec_f32(n: usize, seed: f32) -> Vec<f32> {
    (0..n)
        .map(|i| 1.0 + ((i as f32 * 0.618 + seed) % 1.0))
        .collect()
}

#[test]
fn discriminant_is_one_kernel_three_uploads_one_download() -> Result<()> {
    let cx = sim();
    let n = 1000;
    let (a, b, c) = (
        cx.from_vec(vec_f32(n, 0.1), &[n])?,
        cx.from_vec(vec_f32(n, 0.2), &[n])?,
        cx.from_vec(vec_f32(n, 0.3), &[n])?,
    );
    let d = (&b * &b - 4.0 * &a * &c).abs().sqrt();
    let got = d.to_vec::<f32>()?;
    let s = cx.stats();
    assert_eq!(
        (s.kernel_launches, s.h2d_copies, s.d2h_copies),
        (1, 3, 1),
        "{s:?}\n{}",
        d.explain()
    );
    assert_eq!(s.h2d_bytes, 3 * 4 * n as u64);
    assert_eq!(s.d2h_bytes, 4 * n as u64);
    assert_eq!(s.kernels_compiled, 1);
    let reference = Context::builder().backend("reference").build()?;
    let (ra, rb, rc) = (
        reference.from_vec(vec_f32(n, 0.1), &[n])?,
        reference.from_vec(vec_f32(n, 0.2), &[n])?,
        reference.from_vec(vec_f32(n, 0.3), &[n])?,
    );
    assert_eq!(
        got,
        (&rb * &rb - 4.0 * &ra * &rc).abs().sqrt().to_vec::<f32>()?
    );

    // The same expression over new arrays of the same shape: a cache hit.
    cx.reset_stats();
    let (a2, b2, c2) = (
        cx.from_vec(vec_f32(n, 0.4), &[n])?,
        cx.from_vec(vec_f32(n, 0.5), &[n])?,
        cx.from_vec(vec_f32(n, 0.6), &[n])?,
    );
    (&b2 * &b2 - 4.0 * &a2 * &c2).abs().sqrt().to_vec::<f32>()?;
    let s = cx.stats();
    assert_eq!(
        (s.kernels_compiled, s.kernel_cache_hits, s.kernel_launches),
        (0, 1, 1),
        "{s:?}"
    );
    // Other sizes and constants hit the cache too.
    let (x, y, z) = (
        cx.from_slice(&[1.0f32, 2.0]),
        cx.from_slice(&[3.0f32, 4.0]),
        cx.from_slice(&[5.0f32, 6.0]),
    );
    (&y * &y - 7.5 * &x * &z).abs().sqrt().to_vec::<f32>()?;
    assert_eq!(cx.stats().kernels_compiled, 0);
    Ok(())
}

#[test]
fn a_shared_intermediate_is_never_written_to_memory() -> Result<()> {
    let cx = sim();
    let a = cx.from_slice(&[1.0f32, 2.0, 3.0]);
    let b = cx.from_slice(&[0.5f32, 0.25, 2.0]);
    let c = &a * &b;
    let d = (&c + 1.0).exp();
    let e = &c * 2.0;
    let text = d.explain();
    assert!(text.contains("kernel lf_ew_"), "{text}");
    cx.eval(&[&d, &e])?;
    let s = cx.stats();
    assert_eq!(
        (s.h2d_copies, s.kernel_launches),
        (2, 1),
        "{s:?}\n{}",
        d.explain()
    );
    assert!(!c.is_materialized(), "c is computed inside the kernel only");
    assert_eq!(e.to_vec::<f32>()?, vec![1.0, 1.0, 12.0]);
    assert_eq!(cx.stats().d2h_copies, 1, "only the demanded e comes back");
    Ok(())
}

#[test]
fn map_reduce_is_one_kernel() -> Result<()> {
    let cx = sim();
    let a = cx.from_slice(&[1.0f64, 2.0, 3.0]);
    let b = cx.from_slice(&[0.0f64, 4.0, 1.0]);
    let s = (&a - &b).pow(2.0).sum();
    assert_eq!(s.item::<f64>()?, 1.0 + 4.0 + 4.0);
    let st = cx.stats();
    assert_eq!(
        (st.kernel_launches, st.h2d_copies, st.d2h_copies),
        (1, 2, 1),
        "{st:?}"
    );

    cx.reset_stats();
    let x = cx.from_vec(
        (0..1_000_000).map(|i| (i % 1000) as f32).collect(),
        &[1000, 1000],
    )?;
    let m = x.mean_axis(0);
    let v = m.to_vec::<f32>()?;
    assert_eq!(
        cx.stats().kernel_launches,
        1,
        "mean's division fuses after the sum\n{}",
        m.explain()
    );
    assert!(
        v.iter().enumerate().all(|(j, &x)| x == j as f32),
        "{:?}",
        &v[..4]
    );
    Ok(())
}

#[test]
fn to_device_uploads_once_for_many_expressions() -> Result<()> {
    let cx = sim();
    let a = cx.from_slice(&[1.0f32, 2.0, 3.0]);
    let d_a = a.to_device()?;
    assert!(d_a.is_on_device());
    for k in 0..10 {
        (&d_a * k as f64 + 1.0).sum().item::<f32>()?;
    }
    assert_eq!(cx.stats().h2d_copies, 1);
    // A host array used by two demands is also uploaded once.
    let b = cx.from_slice(&[4.0f32, 5.0]);
    b.sum().item::<f32>()?;
    b.max().item::<f32>()?;
    assert_eq!(cx.stats().h2d_copies, 2);
    Ok(())
}

#[test]
fn a_1000_op_chain_is_one_kernel_unless_fusion_is_off() -> Result<()> {
    for (fusion, expected) in [(true, 1u64), (false, 1000)] {
        let cx = Context::builder().backend("sim").fusion(fusion).build()?;
        let mut x = cx.from_slice(&[0.5f64, 1.5]);
        for i in 0..1000 {
            x = if i % 2 == 0 { x.sin() } else { &x * 1.5 };
        }
        x.to_vec::<f64>()?;
        assert_eq!(cx.stats().kernel_launches, expected, "fusion {fusion}");
    }
    Ok(())
}

#[test]
fn views_fold_into_index_arithmetic() -> Result<()> {
    let cx = sim();
    let x = cx.from_vec((0..6).map(|v| v as f32).collect(), &[2, 3])?;
    let r = cx.from_slice(&[10.0f32, 20.0]);
    let y = (&x.transpose() + &r).sum_axis(1);
    assert_eq!(y.to_vec::<f32>()?, vec![33.0, 35.0, 37.0]);
    assert_eq!(cx.stats().kernel_launches, 1, "{}", y.explain());
    let g = cx.arange(0.0, 6.0, 1.0, DType::F32).reshape(&[2, 3]);
    assert_eq!(
        (&g + &x).to_vec::<f32>()?,
        vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    );
    Ok(())
}

#[test]
fn slices_fold_into_strides() -> Result<()> {
    let cx = sim();
    let x = cx.from_vec((0..100).map(|v| v as f32).collect(), &[10, 10])?;
    let y = (&x.slice_axis(0, None, None, -1)
        * &x.slice_axis(1, Some(1), None, 2)
            .sum_axis(1)
            .reshape(&[5, 2])
            .sum_axis(1)
            .reshape(&[1, 5])
            .broadcast_to(&[10, 5])
            .transpose()
            .reshape(&[5, 10])
            .slice_axis(0, None, Some(10), 1)
            .reshape(&[50])
            .slice_axis(0, Some(0), Some(10), 1)
            .reshape(&[1, 10]))
        .sum();
    let _ = y.item::<f32>()?;
    let z = x.slice_axis(1, None, None, -3).exp().sum();
    cx.reset_stats();
    z.item::<f32>()?;
    let s = cx.stats();
    assert_eq!(
        (s.kernel_launches, s.h2d_copies),
        (1, 0),
        "x is already on the device: {s:?}"
    );
    Ok(())
}

#[test]
fn explain_and_dot_show_kernels() {
    let cx = Context::cpu();
    // 64 elements: a reduction kernel (16 or fewer would be unrolled).
    let a = cx
        .from_vec((0..64).map(|i| i as f32).collect(), &[64])
        .unwrap();
    let e = ((&a - 1.0) * (&a - 1.0)).sum();
    let text = e.explain();
    assert!(text.contains("1 kernels"), "{text}");
    assert!(text.contains("reduce"), "{text}");
    assert!(e.to_dot().contains("subgraph cluster_k0"));
    // Common subexpressions are computed once.
    assert_eq!(text.matches("= subtract %").count(), 1, "{text}");
}

#[test]
fn cached_programs_read_each_demands_own_arrays() -> Result<()> {
    for cx in [Context::cpu(), sim()] {
        let mut results = Vec::new();
        for k in 0..3 {
            let a = cx.from_slice(&[k as f32, 1.0]);
            let b = cx.from_slice(&[2.0f32, k as f32]);
            results.push((&a * &b + 1.0).to_vec::<f32>()?);
            // User reducers are not cached (known by address): each gives its own result.
            let x = cx.from_slice(&[k as f32 + 5.0, 3.0]);
            let r = match k {
                0 => {
                    lazyfuse::Reducer::new("sum", |p: lazyfuse::Expr, q: lazyfuse::Expr| p + q, 0.0)
                }
                1 => lazyfuse::Reducer::new(
                    "max",
                    |p: lazyfuse::Expr, q: lazyfuse::Expr| p.maximum(q),
                    f32::MIN,
                ),
                _ => lazyfuse::Reducer::new(
                    "min",
                    |p: lazyfuse::Expr, q: lazyfuse::Expr| p.minimum(q),
                    f32::MAX,
                ),
            };
            assert_eq!(r.reduce(&x).item::<f32>()?, [8.0, 6.0, 3.0][k]);
        }
        assert_eq!(
            results,
            vec![vec![1.0, 1.0], vec![3.0, 2.0], vec![5.0, 3.0]]
        );
    }
    Ok(())
}

/// NumPy computes `x ** 0.5` of a scalar exponent as `sqrt(x)` for f32 and
/// f64 (NaN at `-inf`, `-0.0` at `-0.0`), but `pow` for float16 and for an
/// array of exponents (`inf`, `0.0`); the simplifier's rewrite and the
/// reference evaluator agree with it on every backend (a differential case
/// once found them apart).
#[test]
fn fast_powers_give_numpys_values_on_every_backend() -> Result<()> {
    let bits = |v: Vec<f64>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let sqrt_like = bits(vec![f64::NAN, -0.0, 2.0, f64::NAN]);
    let pow_like = bits(vec![f64::INFINITY, 0.0, 2.0, f64::NAN]);
    for cx in common::backends() {
        let x = cx.from_slice(&[f64::NEG_INFINITY, -0.0, 4.0, f64::NAN]);
        let name = cx.backend_name();
        let read = |a: &lazyfuse::Array| -> Result<Vec<u64>> {
            let v = a.astype(DType::F64).to_vec::<f64>()?;
            // One NaN pattern: backends may differ in the NaN's sign.
            Ok(bits(
                v.into_iter()
                    .map(|e| if e.is_nan() { f64::NAN } else { e })
                    .collect(),
            ))
        };
        assert_eq!(read(&x.pow(0.5))?, sqrt_like, "{name}: f64 x ** 0.5");
        let x32 = x.astype(DType::F32);
        assert_eq!(read(&x32.pow(0.5))?, sqrt_like, "{name}: f32 x ** 0.5");
        let x16 = x.astype(DType::F16);
        assert_eq!(read(&x16.pow(0.5))?, pow_like, "{name}: f16 x ** 0.5");
        let halves = cx.from_slice(&[0.5f64; 4]);
        assert_eq!(read(&x.pow(&halves))?, pow_like, "{name}: x ** array");
    }
    Ok(())
}
