//! `bincount` (NumPy's `np.bincount`) against counting by hand on every
//! backend: counts and weighted sums, values outside the bins skipped,
//! many elements (several worker threads and blocks), and the errors.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use lazyfuse::{bincount, Context, DType, Error, Result};

fn values(len: usize) -> Vec<i64> {
    (0..len).map(|i| ((i * 7919 + 3) % 23) as i64 - 2).collect()
}

#[test]
fn bincount_counts_and_sums_weights_on_every_backend() -> Result<()> {
    for cx in common::backends() {
        let name = cx.backend_name();
        for len in [1usize, 5, 300, 100_000] {
            let xs = values(len);
            let weights: Vec<f64> = (0..len).map(|i| (i % 5) as f64 * 0.25).collect();
            let x = cx.from_slice(&xs).astype(DType::I32);
            let w = cx.from_slice(&weights);
            for length in [1usize, 7, 30] {
                let (mut counts, mut sums) = (vec![0i64; length], vec![0.0f64; length]);
                for (&v, &wt) in xs.iter().zip(&weights) {
                    if (0..length as i64).contains(&v) {
                        counts[v as usize] += 1;
                        sums[v as usize] += wt;
                    }
                }
                let got = bincount(&x, None, length)?;
                assert_eq!(got.dtype(), DType::I64);
                assert_eq!(got.to_vec::<i64>()?, counts, "{name} {len} {length}");
                let got = bincount(&x, Some(&w), length)?.to_vec::<f64>()?;
                for (g, s) in got.iter().zip(&sums) {
                    // Quarters: exact in any order of addition.
                    assert_eq!(g, s, "{name} {len} {length} weighted");
                }
            }
        }
    }
    Ok(())
}

#[test]
fn bincount_takes_empty_arrays_and_refuses_floats_and_other_shapes() -> Result<()> {
    let cx = Context::cpu();
    let none = cx.zeros(&[0], DType::I64);
    assert_eq!(bincount(&none, None, 3)?.to_vec::<i64>()?, [0, 0, 0]);
    let x = cx.from_slice(&[1i64, 2]);
    assert!(matches!(
        bincount(&x.astype(DType::F32), None, 3),
        Err(Error::DTypeMismatch { .. })
    ));
    let w = cx.from_slice(&[1.0f64]);
    match bincount(&x, Some(&w), 3) {
        Err(e @ Error::ShapeMismatch { .. }) => {
            assert!(e.to_string().contains("weights of shape (1,)"), "{e}")
        }
        other => panic!("expected a shape error, got {other:?}"),
    }
    Ok(())
}
