//! `lazyfuse::matmul` (NumPy's `matmul`): shapes, dtypes and errors on
//! every backend, against a plain loop.

mod common;

use lazyfuse::{matmul, matmul_kernel, Array, Context, DType, Error, Result};

/// Small integers (exact in every dtype, and in every order of sums).
fn data(len: usize, seed: usize) -> Vec<f64> {
    (0..len).map(|i| ((i * 5 + seed * 3) % 4) as f64).collect()
}

/// `matmul` of row-major `a` and `b` as NumPy defines it, in f64, by the
/// definition: every result element is a sum over the inner axis.
fn expected(a: (&[f64], &[usize]), b: (&[f64], &[usize])) -> (Vec<f64>, Vec<usize>) {
    let (a_shape, b_shape) = (matrix_shape(a.1, true), matrix_shape(b.1, false));
    let (m, k, n) = (
        a_shape[a_shape.len() - 2],
        a_shape[a_shape.len() - 1],
        b_shape[b_shape.len() - 1],
    );
    let rank = a_shape.len().max(b_shape.len()) - 2;
    let pad = |s: &[usize]| {
        let mut p = vec![1; rank + 2 - s.len()];
        p.extend_from_slice(s);
        p
    };
    let (a_shape, b_shape) = (pad(&a_shape), pad(&b_shape));
    let batch: Vec<usize> = (0..rank).map(|d| a_shape[d].max(b_shape[d])).collect();
    let count: usize = batch.iter().product();
    let mut out = Vec::new();
    for z in 0..count {
        // Each operand's batch offset, its length-1 axes broadcast.
        let (mut rest, mut a_at, mut b_at) = (z, 0, 0);
        let (mut a_stride, mut b_stride) = (m * k, k * n);
        for d in (0..rank).rev() {
            let i = rest % batch[d];
            rest /= batch[d];
            a_at += if a_shape[d] == 1 { 0 } else { i * a_stride };
            b_at += if b_shape[d] == 1 { 0 } else { i * b_stride };
            a_stride *= a_shape[d];
            b_stride *= b_shape[d];
        }
        for i in 0..m {
            for j in 0..n {
                out.push(
                    (0..k)
                        .map(|q| a.0[a_at + i * k + q] * b.0[b_at + q * n + j])
                        .sum(),
                );
            }
        }
    }
    let mut shape = batch;
    if a.1.len() > 1 {
        shape.push(m);
    }
    if b.1.len() > 1 {
        shape.push(n);
    }
    (out, shape)
}

/// A 1-d operand as a matrix: a row on the left, a column on the right.
fn matrix_shape(shape: &[usize], left: bool) -> Vec<usize> {
    match (shape, left) {
        ([k], true) => vec![1, *k],
        ([k], false) => vec![*k, 1],
        _ => shape.to_vec(),
    }
}

fn operand(cx: &Context, values: &[f64], shape: &[usize], dtype: DType) -> Array {
    cx.from_slice(values).reshape(shape).astype(dtype)
}

#[test]
fn matmul_follows_numpys_shapes_and_dtypes_on_every_backend() -> Result<()> {
    let shapes: [(&[usize], &[usize]); 11] = [
        (&[3, 4], &[4, 5]),
        (&[4], &[4]),
        (&[4], &[4, 3]),
        (&[2, 4], &[4]),
        (&[2, 3, 4], &[4, 5]),
        (&[3, 4], &[2, 4, 5]),
        (&[2, 1, 3, 4], &[5, 4, 2]),
        (&[17, 33], &[33, 19]),
        (&[3, 0], &[0, 2]),
        (&[0, 3], &[3, 2]),
        (&[1, 40], &[40, 1]),
    ];
    let dtypes = [
        DType::F32,
        DType::F64,
        DType::I32,
        DType::U8,
        DType::I64,
        DType::F16,
        DType::Bool,
    ];
    for cx in common::backends() {
        for (a_shape, b_shape) in shapes {
            let a_values = data(a_shape.iter().product(), 1);
            let b_values = data(b_shape.iter().product(), 2);
            let (want, want_shape) = expected((&a_values, a_shape), (&b_values, b_shape));
            for dtype in dtypes {
                let a = operand(&cx, &a_values, a_shape, dtype);
                let b = operand(&cx, &b_values, b_shape, dtype);
                let product = matmul(&a, &b)?;
                let what = format!("{} {dtype}: {a_shape:?} @ {b_shape:?}", cx.backend_name());
                assert_eq!(product.shape(), want_shape.as_slice(), "{what}");
                assert_eq!(product.dtype(), dtype, "{what}");
                let got = product.astype(DType::F64).to_vec::<f64>()?;
                let want: Vec<f64> = match dtype {
                    DType::Bool => want.iter().map(|&x| f64::from(x != 0.0)).collect(),
                    DType::U8 => want.iter().map(|&x| f64::from(x as u64 as u8)).collect(),
                    _ => want.clone(),
                };
                assert_eq!(got, want, "{what}");
            }
        }
    }
    Ok(())
}

#[test]
fn matmul_wraps_integers_and_rounds_floats_as_a_sum_in_order() -> Result<()> {
    for cx in common::backends() {
        // 200 * 2 + 100 * 3 = 700, wrapped to 700 - 512 = 188 in u8.
        let a = cx.from_slice(&[200u8, 100]);
        let b = cx.from_slice(&[2u8, 3]);
        assert_eq!(
            matmul(&a, &b)?.to_vec::<u8>()?,
            [188],
            "{}",
            cx.backend_name()
        );
        // A product in several tiles of the kernel.
        let (m, k, n) = (150, 70, 90);
        let a_values: Vec<f64> = (0..m * k).map(|i| ((i % 17) as f64 - 8.0) / 7.0).collect();
        let b_values: Vec<f64> = (0..k * n).map(|i| ((i % 13) as f64 - 6.0) / 3.0).collect();
        let (want, _) = expected((&a_values, &[m, k]), (&b_values, &[k, n]));
        let a = cx.from_slice(&a_values).reshape(&[m, k]);
        let b = cx.from_slice(&b_values).reshape(&[k, n]);
        assert_product_in_f64_and_f32(&a, &b, &want)?;
    }
    Ok(())
}

/// `a @ b` (f64) is `want`, and so is it computed in f32, within f32's rounding.
fn assert_product_in_f64_and_f32(a: &Array, b: &Array, want: &[f64]) -> Result<()> {
    common::assert_close(&matmul(a, b)?.to_vec::<f64>()?, want, 1e-12);
    let got32 = matmul(&a.astype(DType::F32), &b.astype(DType::F32))?
        .astype(DType::F64)
        .to_vec::<f64>()?;
    common::assert_close(&got32, want, 1e-4);
    Ok(())
}

#[test]
fn products_large_enough_to_split_over_the_cpus_threads_are_whole() -> Result<()> {
    let cx = Context::cpu();
    // One matrix cut into bands of rows, then 40 matrices (against one
    // broadcast right operand) cut into groups: both past the work below
    // which the CPU runs a product on the calling thread. (Terms that
    // mostly add, so that no sum is rounding noise.)
    for (batches, m, k, n) in [(1, 150, 120, 130), (40, 40, 40, 40)] {
        let a_values: Vec<f64> = (0..batches * m * k)
            .map(|i| (i % 17) as f64 / 7.0 - 0.5)
            .collect();
        let b_values: Vec<f64> = (0..k * n).map(|i| (i % 13) as f64 / 3.0 + 0.25).collect();
        let (want, _) = expected((&a_values, &[batches, m, k]), (&b_values, &[k, n]));
        let a = cx.from_slice(&a_values).reshape(&[batches, m, k]);
        let b = cx.from_slice(&b_values).reshape(&[k, n]);
        assert_product_in_f64_and_f32(&a, &b, &want)?;
    }
    Ok(())
}

#[test]
fn work_around_a_product_fuses_and_its_result_is_read_into_place() -> Result<()> {
    for cx in common::backends() {
        let a = cx.from_slice(&data(12, 1)).reshape(&[3, 4]);
        let b = cx.from_slice(&data(8, 2)).reshape(&[4, 2]);
        let (want, _) = expected((&data(12, 1), &[3, 4]), (&data(8, 2), &[4, 2]));
        let result = &matmul(&(&a * 2.0), &b)? + 1.0;
        let mut out = vec![0.0f64; 6];
        result.read_into(&mut out)?;
        let want: Vec<f64> = want.iter().map(|x| 2.0 * x + 1.0).collect();
        assert_eq!(out, want, "{}", cx.backend_name());
    }
    let cx = Context::cpu();
    let a = cx.from_slice(&[1.0f32; 4]).reshape(&[2, 2]);
    let plan = matmul(&a, &a)?.explain();
    assert!(plan.contains("matrixmultiply"), "{plan}");
    Ok(())
}

#[test]
fn matmul_refuses_what_numpy_refuses() {
    let cx = Context::cpu();
    let m = |shape: &[usize]| cx.zeros(shape, DType::F32);
    let message = |r: Result<Array>| match r {
        Err(e) => e.to_string(),
        Ok(_) => "no error".to_string(),
    };
    let scalar = cx.from_slice(&[1.0f32]).reshape(&[]);
    assert!(message(matmul(&scalar, &m(&[2]))).contains("0-d"));
    let inner = message(matmul(&m(&[2, 3]), &m(&[4, 2])));
    assert!(
        inner.contains("(2, 3)") && inner.contains("(4, 2)"),
        "{inner}"
    );
    assert!(matches!(
        matmul(&m(&[2, 2, 3]), &m(&[3, 3, 1])),
        Err(Error::ShapeMismatch { .. })
    ));
    let other = Context::sim().zeros(&[2, 2], DType::F32);
    assert!(message(matmul(&m(&[2, 2]), &other)).contains("two contexts"));
}

#[test]
fn the_matmul_kernel_compiles_with_nvrtc() {
    if !common::nvrtc_or_skip("the_matmul_kernel_compiles_with_nvrtc") {
        return;
    }
    for dtype in [DType::F32, DType::F64, DType::I32, DType::U8] {
        for batched in [false, true] {
            let kernel = matmul_kernel(dtype, batched).unwrap_or_else(|e| panic!("{e}"));
            common::compiles_without_spills(kernel.name(), &kernel.cuda_source(), "sm_80");
        }
    }
}
