//! Short reductions unrolled into element-wise work: a reduction or
//! arg-reduction combining at most 16 elements per result becomes part of
//! its readers' kernel (k-means' distances and their `argmin`, pairwise
//! distances). Every backend against the reference evaluator, NaN and tie
//! rules included; launch counts on the simulated device.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use lazyfuse::{Array, Context, DType, Result};

fn values(n: usize, seed: f64) -> Vec<f64> {
    (0..n)
        .map(|i| ((i as f64 + seed) * 12.9898).sin() * 4.0)
        .collect()
}

/// K-means assignment and pairwise distances over `n` points.
fn distances(cx: &Context, n: usize) -> Result<(Array, Array)> {
    let (k, d) = (16, 8);
    let points = cx.from_vec(values(n * d, 0.5), &[n, d])?;
    let centroids = cx.from_vec(values(k * d, 0.9), &[k, d])?;
    // f32, as k-means is run (devices find its argmin by one packed key).
    let (points, centroids) = (points.astype(DType::F32), centroids.astype(DType::F32));
    let squared = (points.reshape(&[n, 1, d]) - centroids.reshape(&[1, k, d]))
        .pow(2.0)
        .sum_axis(-1);
    Ok((squared.argmin_axis(-1), squared.sqrt()))
}

#[test]
fn k_means_and_pairwise_distances_agree_on_every_backend() -> Result<()> {
    let reference = Context::builder().backend("reference").build()?;
    let (want_assign, want_dist) = distances(&reference, 300)?;
    for cx in common::backends() {
        let (assign, dist) = distances(&cx, 300)?;
        let name = cx.backend_name();
        assert_eq!(
            assign.to_vec::<i64>()?,
            want_assign.to_vec::<i64>()?,
            "{name}"
        );
        let as_f64 = |a: &Array| a.astype(DType::F64).to_vec::<f64>();
        common::assert_close(&as_f64(&dist)?, &as_f64(&want_dist)?, 1e-5);
    }
    Ok(())
}

#[test]
fn k_means_assignment_is_one_launch_with_no_distance_buffer() -> Result<()> {
    for cx in [Context::sim(), Context::cpu()] {
        let (assign, _) = distances(&cx, 1000)?;
        let listing = assign.explain();
        cx.reset_stats();
        assign.eval()?;
        let stats = cx.stats();
        assert_eq!(stats.kernel_launches, 1, "{stats:?}\n{listing}");
        assert!(
            listing.contains("unrolled into element-wise work"),
            "{listing}"
        );
        if cx.backend_name() == "sim" {
            // Points, centroids and the assignment: nothing of n × k.
            assert_eq!(stats.device_allocations, 3, "{stats:?}\n{listing}");
        }
    }
    Ok(())
}

#[test]
fn pairwise_distances_are_one_element_wise_launch() -> Result<()> {
    let cx = Context::sim();
    let (_, dist) = distances(&cx, 64)?;
    let listing = dist.explain();
    cx.reset_stats();
    dist.eval()?;
    assert_eq!(cx.stats().kernel_launches, 1, "{listing}");
    assert!(listing.contains("kernel lf_ew_"), "{listing}");
    Ok(())
}

/// Distances between two sets of points, `a` (37 × 8) and `b` (50 × 8):
/// lines of 50 whose `b` columns are strided reads every line shares
/// (compiled code takes many such lines in one call, the gathered
/// columns copied once), on every backend against the reference.
#[test]
fn distances_between_two_point_sets_agree_on_every_backend() -> Result<()> {
    let program = |cx: &Context| -> Result<Array> {
        let (n, m, d) = (37, 50, 8);
        let a = cx.from_vec(values(n * d, 0.3), &[n, d])?.astype(DType::F32);
        let b = cx.from_vec(values(m * d, 0.7), &[m, d])?.astype(DType::F32);
        let diff = a.reshape(&[n, 1, d]) - b.reshape(&[1, m, d]);
        Ok(diff.pow(2.0).sum_axis(-1).sqrt())
    };
    let reference = Context::builder().backend("reference").build()?;
    let want = program(&reference)?.astype(DType::F64).to_vec::<f64>()?;
    for cx in common::backends() {
        // Twice: the second run of a kernel may be the first compiled one.
        for _ in 0..2 {
            let got = program(&cx)?.astype(DType::F64).to_vec::<f64>()?;
            common::assert_close(&got, &want, 1e-5);
        }
    }
    Ok(())
}

/// Short reductions of every kind over rows of 5: NaNs, ties, integers
/// (summed in i64), bools, a full reduction of a small array, and an
/// arg-reduction over a leading axis.
fn kinds(cx: &Context) -> Result<Vec<Array>> {
    let mut data = values(40, 0.3);
    data[7] = f64::NAN; // row 1
    data[11] = data[13]; // a tie in row 2
    data[20] = f64::NAN; // row 4: two NaNs, the first wins
    data[23] = f64::NAN;
    let x = cx.from_vec(data, &[8, 5])?;
    let ints = x.nan_to_num().astype(DType::I32);
    let small = cx.from_vec(vec![3.0f32, -1.0, 2.5], &[3])?;
    Ok(vec![
        x.sum_axis(1),
        x.max_axis(1),
        x.min_axis(1),
        x.prod_axis(1),
        x.argmin_axis(1),
        x.argmax_axis(1),
        x.argmax_axis(0),
        ints.sum_axis(1),
        ints.argmin_axis(1),
        ints.max_axis(0),
        x.gt(1.0).any_axis(1),
        x.gt(-5.0).all_axis(1),
        small.sum(),
        small.argmax(),
    ])
}

#[test]
fn every_kind_of_short_reduction_agrees_on_every_backend() -> Result<()> {
    let reference = Context::builder().backend("reference").build()?;
    let want = kinds(&reference)?;
    for cx in common::backends() {
        let name = cx.backend_name();
        for (i, (got, want)) in kinds(&cx)?.iter().zip(&want).enumerate() {
            assert_eq!(got.dtype(), want.dtype(), "{name} #{i}");
            assert_eq!(got.shape(), want.shape(), "{name} #{i}");
            let as_f64 = |a: &Array| a.astype(DType::F64).to_vec::<f64>();
            let (g, w) = (as_f64(got)?, as_f64(want)?);
            common::assert_close(&g, &w, 1e-12);
        }
    }
    Ok(())
}

#[test]
fn a_reduction_whose_unrolled_body_reads_too_much_is_a_kernel_of_its_own() -> Result<()> {
    // 16 elements of each of two inputs: 32 streamed reads, over the limit.
    let cx = Context::sim();
    let a = cx.from_vec(values(64 * 16, 0.1), &[64, 16])?;
    let b = cx.from_vec(values(64 * 16, 0.2), &[64, 16])?;
    let total = (&a * &b).sum_axis(1);
    let listing = total.explain();
    assert!(listing.contains("a reduction of its own"), "{listing}");
    assert!(listing.contains("kernel lf_red_"), "{listing}");
    let reference = Context::builder().backend("reference").build()?;
    let ra = reference.from_vec(values(64 * 16, 0.1), &[64, 16])?;
    let rb = reference.from_vec(values(64 * 16, 0.2), &[64, 16])?;
    common::assert_close(
        &total.to_vec::<f64>()?,
        &(&ra * &rb).sum_axis(1).to_vec::<f64>()?,
        1e-12,
    );
    Ok(())
}

#[test]
fn k_means_and_pairwise_compile_for_sm_80_and_sm_90_without_spills() -> Result<()> {
    let test = "k_means_and_pairwise_compile_for_sm_80_and_sm_90_without_spills";
    if !common::nvrtc_or_skip(test) {
        return Ok(());
    }
    let cx = Context::sim();
    let (assign, dist) = distances(&cx, 32)?;
    for (name, array) in [("k_means", &assign), ("pairwise", &dist)] {
        let source = lazyfuse::cuda_source(&[array])?;
        assert_eq!(source.matches("---- fused kernel").count(), 1, "{source}");
        for arch in ["sm_80", "sm_90"] {
            common::compiles_without_spills(name, &source, arch);
        }
    }
    Ok(())
}

/// A built-in reduction of one element per result (Dask's tree
/// reductions sum the size-1 axes of their partials) is a view of its
/// input: no kernel of its own, the same values and dtypes as the
/// reference's.
#[test]
fn reducing_axes_of_length_one_is_a_view_not_a_kernel() -> Result<()> {
    let reference = Context::builder().backend("reference").build()?;
    let build = |cx: &Context| -> Result<Vec<Array>> {
        let x = cx.from_vec(values(24, 0.3), &[4, 1, 6])?;
        let f = x.astype(DType::F32);
        Ok(vec![
            (&x * 2.0).sum_axis(1),
            f.sum_axes(&[1], true),
            f.max_axis(1),
            f.mean_axis(1),
            x.astype(DType::I8).sum_axis(1),
            x.reshape(&[4, 6, 1]).sum_axes(&[-1], false),
        ])
    };
    let want = build(&reference)?;
    for cx in common::backends() {
        for (got, want) in build(&cx)?.iter().zip(&want) {
            assert_eq!((got.dtype(), got.shape()), (want.dtype(), want.shape()));
            assert_eq!(
                got.astype(DType::F64).to_vec::<f64>()?,
                want.astype(DType::F64).to_vec::<f64>()?
            );
        }
    }
    let cx = Context::sim();
    let x = cx.from_vec(values(24, 0.3), &[4, 1, 6])?;
    let partial = (x.exp() * 2.0).sum_axes(&[1], true).sum_axis(1);
    let listing = partial.explain();
    cx.reset_stats();
    partial.eval()?;
    assert_eq!(cx.stats().kernel_launches, 1, "{listing}");
    Ok(())
}
