//! Whole programs, as users write them: every program on every backend
//! against the reference evaluator, and on the simulated device the
//! launches and device allocations one demand of the program takes.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use lazyfuse::{Array, Context, Result};

fn prices(n: usize, seed: f64, lo: f64, hi: f64) -> Vec<f64> {
    (0..n)
        .map(|i| lo + (hi - lo) * ((i as f64 * 0.618_033_988_7 + seed) % 1.0))
        .collect()
}

/// The cumulative normal distribution by the polynomial of Numba's and
/// CuPy's Black–Scholes examples.
fn cnd(d: &Array) -> Array {
    let (a1, a2, a3, a4, a5) = (
        0.319_381_53,
        -0.356_563_782,
        1.781_477_937,
        -1.821_255_978,
        1.330_274_429,
    );
    let rsqrt2pi = 0.398_942_280_401_432_7;
    let k = 1.0 / (1.0 + 0.231_641_9 * d.abs());
    let poly = &k * (a1 + &k * (a2 + &k * (a3 + &k * (a4 + &k * a5))));
    let w = 1.0 - rsqrt2pi * (-0.5 * d * d).exp() * poly;
    d.lt(0.0).where_(1.0 - &w, &w)
}

/// Black–Scholes `call` and `put` of stock prices `s`, strikes `x` and
/// times `t`, at rate `r` and volatility `v`.
fn black_scholes(s: &Array, x: &Array, t: &Array, r: f64, v: f64) -> (Array, Array) {
    let sqrt_t = t.sqrt();
    let d1 = ((s / x).log() + (r + 0.5 * v * v) * t) / (v * &sqrt_t);
    let d2 = &d1 - v * &sqrt_t;
    let (cnd1, cnd2) = (cnd(&d1), cnd(&d2));
    let exp_rt = (-r * t).exp();
    let call = s * &cnd1 - x * &exp_rt * &cnd2;
    let put = x * &exp_rt * (1.0 - &cnd2) - s * (1.0 - &cnd1);
    (call, put)
}

fn black_scholes_inputs(cx: &Context, n: usize) -> Result<(Array, Array, Array)> {
    Ok((
        cx.from_vec(prices(n, 0.1, 5.0, 30.0), &[n])?,
        cx.from_vec(prices(n, 0.2, 1.0, 100.0), &[n])?,
        cx.from_vec(prices(n, 0.3, 0.25, 10.0), &[n])?,
    ))
}

#[test]
fn black_scholes_agrees_with_the_reference_on_every_backend() -> Result<()> {
    let n = 1000;
    let reference = Context::builder().backend("reference").build()?;
    let (s, x, t) = black_scholes_inputs(&reference, n)?;
    let (call, put) = black_scholes(&s, &x, &t, 0.02, 0.3);
    let (want_call, want_put) = (call.to_vec::<f64>()?, put.to_vec::<f64>()?);
    for cx in common::backends() {
        let (s, x, t) = black_scholes_inputs(&cx, n)?;
        let (call, put) = black_scholes(&s, &x, &t, 0.02, 0.3);
        cx.eval(&[&call, &put])?;
        common::assert_close(&call.to_vec::<f64>()?, &want_call, 1e-12);
        common::assert_close(&put.to_vec::<f64>()?, &want_put, 1e-12);
    }
    Ok(())
}

#[test]
fn black_scholes_call_and_put_are_one_launch_with_no_temporaries() -> Result<()> {
    let cx = Context::sim();
    let n = 4096;
    let (s, x, t) = black_scholes_inputs(&cx, n)?;
    let (call, put) = black_scholes(&s, &x, &t, 0.02, 0.3);
    cx.reset_stats();
    cx.eval(&[&call, &put])?;
    let stats = cx.stats();
    let listing = put.explain();
    assert_eq!(stats.kernel_launches, 1, "{stats:?}\n{listing}");
    // Three uploaded inputs and the two results: no buffer of the domain's
    // size for a shared value.
    assert_eq!(stats.device_allocations, 5, "{stats:?}\n{listing}");
    assert_eq!(stats.device_bytes_allocated, 5 * 8 * n as u64);
    Ok(())
}

#[test]
fn a_shared_value_is_computed_once_inside_its_kernel() -> Result<()> {
    // `put` alone reads d1 and d2 through several users each: one kernel,
    // no materialised intermediate, and explain() shows one log.
    let cx = Context::sim();
    let n = 256;
    let (s, x, t) = black_scholes_inputs(&cx, n)?;
    let (_, put) = black_scholes(&s, &x, &t, 0.02, 0.3);
    let listing = put.explain();
    cx.reset_stats();
    put.eval()?;
    let stats = cx.stats();
    assert_eq!(stats.kernel_launches, 1, "{stats:?}\n{listing}");
    assert_eq!(stats.device_allocations, 4, "{stats:?}\n{listing}");
    assert_eq!(listing.matches("= log ").count(), 1, "{listing}");
    assert_eq!(listing.matches("= exp ").count(), 3, "{listing}");
    Ok(())
}

#[test]
fn demanding_call_keeps_what_put_shares_so_put_computes_no_logarithm() -> Result<()> {
    // `call` demanded alone while `put` lives: the values both read and that
    // cost a transcendental function to compute again (`cnd(d1)`,
    // `cnd(d2)`, `exp(-rT)`) are kept, and `put` reads them.
    for cx in common::backends() {
        let n = 512;
        let (s, x, t) = black_scholes_inputs(&cx, n)?;
        let (call, put) = black_scholes(&s, &x, &t, 0.02, 0.3);
        let before = put.explain();
        call.eval()?;
        let after = put.explain();
        assert!(before.contains("= log("), "{before}");
        assert!(
            !after.contains("= log(") && !after.contains("= exp("),
            "{after}"
        );
        let reference = Context::builder().backend("reference").build()?;
        let (rs, rx, rt) = black_scholes_inputs(&reference, n)?;
        let (want_call, want_put) = black_scholes(&rs, &rx, &rt, 0.02, 0.3);
        common::assert_close(&call.to_vec::<f64>()?, &want_call.to_vec::<f64>()?, 1e-12);
        common::assert_close(&put.to_vec::<f64>()?, &want_put.to_vec::<f64>()?, 1e-12);
    }
    Ok(())
}

#[test]
fn a_named_value_or_a_cheap_shared_one_is_not_kept() -> Result<()> {
    let cx = Context::sim();
    let a = cx.from_vec(prices(256, 0.4, 1.0, 2.0), &[256])?;
    // A handle alone: nothing outside the demand reads `e`.
    let e = a.exp();
    let y = &e * 2.0;
    y.eval()?;
    assert!(!e.is_materialized());
    // Read by a live expression, but one addition to compute again.
    let cheap = &a + 1.0;
    let (first, second) = (&cheap * 2.0, &cheap * 3.0);
    first.eval()?;
    assert!(!cheap.is_materialized());
    // Read by a live expression and costly: kept.
    let costly = a.log();
    let (third, fourth) = (&costly * 2.0, &costly * 3.0);
    third.eval()?;
    assert!(costly.is_materialized());
    common::assert_close(
        &fourth.to_vec::<f64>()?,
        &second
            .to_vec::<f64>()?
            .iter()
            .zip(a.to_vec::<f64>()?)
            .map(|(_, v)| v.ln() * 3.0)
            .collect::<Vec<_>>(),
        1e-12,
    );
    Ok(())
}

#[test]
fn a_shared_value_also_read_by_a_reduction_is_stored_once() -> Result<()> {
    // `e` feeds a reduction (another domain) and an element-wise result:
    // the cost rule still decides, and the results are right.
    for cx in common::backends() {
        let a = cx.from_vec(prices(64, 0.4, -2.0, 2.0), &[8, 8])?;
        let e = (&a * 1.5 + 0.25).exp().log1p().sqrt().tanh();
        let total = e.sum();
        let out = &e * 2.0 + &total;
        let reference = Context::builder().backend("reference").build()?;
        let ra = reference.from_vec(prices(64, 0.4, -2.0, 2.0), &[8, 8])?;
        let re = (&ra * 1.5 + 0.25).exp().log1p().sqrt().tanh();
        let want = (&re * 2.0 + &re.sum()).to_vec::<f64>()?;
        common::assert_close(&out.to_vec::<f64>()?, &want, 1e-12);
    }
    Ok(())
}

#[test]
fn black_scholes_compiles_for_sm_80_and_sm_90_without_spills() -> Result<()> {
    if !common::nvrtc_or_skip("black_scholes_compiles_for_sm_80_and_sm_90_without_spills") {
        return Ok(());
    }
    let cx = Context::sim();
    let (s, x, t) = black_scholes_inputs(&cx, 16)?;
    let (call, put) = black_scholes(&s, &x, &t, 0.02, 0.3);
    let source = lazyfuse::cuda_source(&[&call, &put])?;
    assert_eq!(source.matches("---- fused kernel").count(), 1, "{source}");
    for arch in ["sm_80", "sm_90"] {
        common::compiles_without_spills("black_scholes", &source, arch);
    }
    Ok(())
}

/// K-means assignment and pairwise distances: a reduction over a short
/// inner axis of inputs broadcast against each other (each chunk of the
/// CPU's reduction gathers thousands of lines of 8 elements), and the
/// same over a transposed input (lines read with a stride).
fn short_axis_programs(cx: &Context) -> Result<Vec<Array>> {
    let (n, k, d) = (300, 16, 8);
    let points = cx.from_vec(prices(n * d, 0.5, -3.0, 3.0), &[n, d])?;
    let centroids = cx.from_vec(prices(k * d, 0.6, -3.0, 3.0), &[k, d])?;
    let gaps = points.reshape(&[n, 1, d]) - centroids.reshape(&[1, k, d]);
    let squared = gaps.pow(2.0).sum_axis(-1);
    let columns = cx.from_vec(prices(d * n, 0.7, -1.0, 1.0), &[d, n])?;
    Ok(vec![
        squared.argmin_axis(-1),
        squared.sqrt(),
        columns.transpose().exp().sum_axis(-1),
    ])
}

#[test]
fn short_axis_reductions_agree_with_the_reference_on_every_backend() -> Result<()> {
    let reference = Context::builder().backend("reference").build()?;
    let want = short_axis_programs(&reference)?;
    for cx in common::backends() {
        let got = short_axis_programs(&cx)?;
        assert_eq!(got[0].to_vec::<i64>()?, want[0].to_vec::<i64>()?);
        for (g, w) in got[1..].iter().zip(&want[1..]) {
            common::assert_close(&g.to_vec::<f64>()?, &w.to_vec::<f64>()?, 1e-12);
        }
    }
    Ok(())
}

#[test]
fn several_results_read_into_the_callers_memory_on_every_backend() -> Result<()> {
    use lazyfuse::SliceMut;
    for cx in common::backends() {
        let name = cx.backend_name();
        let (s, x, t) = black_scholes_inputs(&cx, 100)?;
        let (call, put) = black_scholes(&s, &x, &t, 0.02, 0.3);
        let (mut got_call, mut got_put) = (vec![0.0f64; 100], vec![0.0f64; 100]);
        cx.reset_stats();
        cx.read_all_into(
            &[&call, &put],
            vec![SliceMut::F64(&mut got_call), SliceMut::F64(&mut got_put)],
        )?;
        let stats = cx.stats();
        assert_eq!(stats.evaluations, 1, "{name}: one program for both");
        if name == "cpu" && cx.options().fusion {
            // Written straight into the slices by the one kernel: nothing is kept.
            assert!(!call.is_materialized() && !put.is_materialized());
            assert_eq!(stats.kernel_launches, 1, "{name}");
        }
        common::assert_close(&got_call, &call.to_vec::<f64>()?, 0.0);
        common::assert_close(&got_put, &put.to_vec::<f64>()?, 0.0);

        // A wrong destination is an error naming the operation.
        let mut short = vec![0.0f64; 99];
        let mut other = vec![0.0f32; 100];
        let error = cx
            .read_all_into(
                &[&call, &put],
                vec![SliceMut::F64(&mut short), SliceMut::F32(&mut other)],
            )
            .unwrap_err();
        assert!(error.to_string().contains("read_all_into"), "{error}");
        let error = cx
            .read_all_into(&[&call], Vec::new())
            .unwrap_err()
            .to_string();
        assert!(error.contains("1 arrays and 0 destinations"), "{error}");
    }
    Ok(())
}

/// Softmax, layer norm and a masked variant over rows, f64 and f32, with
/// rows longer than a block of threads and a row count past one grid step.
fn row_programs(cx: &Context, rows: usize, cols: usize) -> Result<Vec<Array>> {
    let x = cx.from_vec(prices(rows * cols, 0.8, -4.0, 4.0), &[rows, cols])?;
    let e = (&x - &x.max_axes(&[1], true)).exp();
    let softmax = &e / &e.sum_axes(&[1], true);
    let mean = x.mean_axes(&[-1], true);
    let centred = &x - &mean;
    let var = (&centred * &centred).mean_axes(&[-1], true);
    let gain = cx.from_vec(prices(cols, 0.9, 0.5, 1.5), &[cols])?;
    let norm = &centred / (&var + 1e-5).sqrt() * &gain + 0.25;
    let x32 = x.astype(lazyfuse::DType::F32);
    let e32 = (&x32 - &x32.max_axes(&[1], true)).exp();
    let softmax32 = (&e32 / &e32.sum_axes(&[1], true)).astype(lazyfuse::DType::F64);
    // Rows along the last of three axes, a transposed input.
    let x3 = x.reshape(&[rows, 1, cols]);
    let e3 = (&x3 - &x3.max_axes(&[-1], true)).exp();
    let softmax3 = (&e3 / &e3.sum_axes(&[-1], true)).reshape(&[rows, cols]);
    let t = x.transpose();
    let t_centred = &t - &t.mean_axes(&[-1], true);
    // A scan reading a row program's result (which it cannot compute a
    // chunk at a time).
    let running = softmax.cumsum(-1);
    // Column programs (the leading axes reduced): standardisation, and a
    // softmax down the columns of a 3-D array over its first two axes.
    let standard = (&x - &x.mean_axes(&[0], false)) / x.std_axis(0, 0);
    let x3 = x.reshape(&[rows, 1, cols]);
    let c3 = (&x3 - &x3.max_axes(&[0, 1], true)).exp();
    let column_softmax = (&c3 / &c3.sum_axes(&[0, 1], true)).reshape(&[rows, cols]);
    // Per-row results: logsumexp over the rows and down the columns.
    let m = x.max_axes(&[1], false);
    let logsumexp = &m
        + (&x - &m.reshape(&[rows, 1]))
            .exp()
            .sum_axes(&[1], false)
            .log();
    let mc = x.max_axes(&[0], false);
    let column_lse = &mc + (&x - &mc).exp().sum_axes(&[0], false).log();
    // Sibling reductions, neither reading the other: min-max scaling of
    // the rows and down the columns, and a masked mean of each row.
    let low = x.min_axes(&[1], true);
    let scaled = (&x - &low) / (x.max_axes(&[1], true) - &low);
    let column_low = x.min_axes(&[0], true);
    let column_scaled = (&x - &column_low) / (x.max_axes(&[0], true) - &column_low);
    let keep = x.gt(0.5);
    let masked_mean = keep.where_(&x, 0.0).sum_axes(&[1], false)
        / keep.astype(lazyfuse::DType::F64).sum_axes(&[1], false);
    Ok(vec![
        softmax,
        norm,
        softmax32,
        softmax3,
        t_centred,
        running,
        standard,
        column_softmax,
        logsumexp,
        column_lse,
        scaled,
        column_scaled,
        masked_mean,
    ])
}

#[test]
fn row_programs_agree_with_the_reference_on_every_backend() -> Result<()> {
    let reference = Context::builder().backend("reference").build()?;
    // One tile of rows on the CPU, several (the last one short), one row.
    for (rows, cols) in [(3, 1000), (70, 33), (200, 1000), (1, 5)] {
        let want = row_programs(&reference, rows, cols)?;
        for cx in common::backends() {
            let got = row_programs(&cx, rows, cols)?;
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                let (g, w) = (g.to_vec::<f64>()?, w.to_vec::<f64>()?);
                // Values minus their row's mean lose digits to cancellation:
                // within 1e-12 of the inputs' scale (about 1), summed in
                // another order.
                for (i, (g, w)) in g.iter().zip(&w).enumerate() {
                    let scale = if k == 2 {
                        1e-5 * w.abs()
                    } else {
                        1e-12 * w.abs().max(1.0)
                    };
                    // (Standardising one row divides 0 by 0.)
                    assert!(
                        (g - w).abs() <= scale || (g.is_nan() && w.is_nan()),
                        "output {k}, element {i}: {g} vs {w}"
                    );
                }
            }
        }
    }
    Ok(())
}

#[test]
fn row_programs_over_an_empty_axis_give_numpys_values() -> Result<()> {
    // Variance (two reductions) and a per-row end over rows of no
    // elements: NumPy's NaN (0 / 0), not the zeros of an unrun kernel.
    for cx in common::backends() {
        for (shape, axis) in [([0, 3], 0), ([4, 0], 1)] {
            let x = cx.from_vec(Vec::<f64>::new(), &shape)?;
            let v = x.var_axis(axis, 0);
            let out = (-&v).maximum(&(&v + 0.5)) * 0.5 - &v;
            let got = out.to_vec::<f64>()?;
            assert_eq!(got.len(), shape[1 - axis], "{}", cx.backend_name());
            assert!(
                got.iter().all(|g| g.is_nan()),
                "{}: {got:?}",
                cx.backend_name()
            );
            let sums = x.sum_axes(&[axis as isize], false) + 1.0;
            assert!(sums.to_vec::<f64>()?.iter().all(|&s| s == 1.0));
        }
    }
    Ok(())
}

/// `out`'s listing, and what evaluating it on `cx` counted.
fn evaluated(cx: &Context, out: &lazyfuse::Array) -> Result<(String, lazyfuse::Stats)> {
    let listing = out.explain();
    cx.reset_stats();
    out.eval()?;
    Ok((listing, cx.stats()))
}

#[test]
fn softmax_and_layer_norm_are_one_launch_with_no_row_buffers() -> Result<()> {
    let cx = Context::sim();
    let (rows, cols) = (50, 300);
    for k in 0..2 {
        let (listing, stats) = evaluated(&cx, &row_programs(&cx, rows, cols)?.swap_remove(k))?;
        assert_eq!(stats.kernel_launches, 1, "{stats:?}\n{listing}");
        // No buffer of a row value (one element per row).
        assert!(!listing.contains(&format!("× {rows} (")), "{listing}");
        assert!(listing.contains("stage 1: reduce"), "{listing}");
    }
    Ok(())
}

#[test]
fn standardisation_is_one_launch_with_no_column_buffers() -> Result<()> {
    let cx = Context::sim();
    let (rows, cols) = (300, 40);
    let (listing, stats) = evaluated(&cx, &row_programs(&cx, rows, cols)?.swap_remove(6))?;
    assert_eq!(stats.kernel_launches, 1, "{stats:?}\n{listing}");
    // No buffer of a column's value (one element per column).
    assert!(!listing.contains(&format!("× {cols} (")), "{listing}");
    assert!(listing.contains("stage 1: reduce"), "{listing}");
    // The CPU runs the same kernel (its stages over the whole domain).
    let cpu = row_programs(&Context::cpu(), rows, cols)?.swap_remove(6);
    let listing = cpu.explain();
    assert!(listing.contains("1 kernels"), "{listing}");
    Ok(())
}

#[test]
fn logsumexp_is_one_launch_writing_one_value_per_row() -> Result<()> {
    let cx = Context::sim();
    let (rows, cols) = (50, 300);
    for k in [8, 9] {
        let (listing, stats) = evaluated(&cx, &row_programs(&cx, rows, cols)?.swap_remove(k))?;
        assert_eq!(stats.kernel_launches, 1, "{stats:?}\n{listing}");
        assert!(listing.contains("once per"), "{listing}");
        // The result is the only buffer written: none of a row's maximum
        // or sum.
        assert_eq!(
            listing.matches("written by a kernel").count(),
            1,
            "{listing}"
        );
        assert!(stats.device_allocations <= 2, "{stats:?}\n{listing}");
    }
    Ok(())
}

#[test]
fn sibling_reductions_are_stages_of_one_launch() -> Result<()> {
    // min-max scaling reads a row's minimum and maximum, a masked mean a
    // row's sum and count: each pair is two stages of one row program.
    let cx = Context::sim();
    let (rows, cols) = (50, 300);
    for k in [10, 11, 12] {
        let (listing, stats) = evaluated(&cx, &row_programs(&cx, rows, cols)?.swap_remove(k))?;
        assert_eq!(stats.kernel_launches, 1, "{stats:?}\n{listing}");
        assert!(listing.contains("stage 1: reduce"), "{listing}");
        assert_eq!(
            listing.matches("written by a kernel").count(),
            1,
            "{listing}"
        );
    }
    // A sibling another kernel reads too stays a kernel of its own, and
    // the chain still merges without it.
    let x = cx.from_vec(prices(rows * cols, 0.8, -4.0, 4.0), &[rows, cols])?;
    let low = x.min_axes(&[1], true);
    let high = x.max_axes(&[1], true);
    let scaled = (&x - &low) / (&high - &low);
    let shifted = &x + &high;
    cx.reset_stats();
    cx.eval(&[&scaled, &shifted])?;
    assert_eq!(cx.stats().kernel_launches, 3, "{}", scaled.explain());
    Ok(())
}

#[test]
fn row_programs_compile_for_sm_80_and_sm_90_without_spills() -> Result<()> {
    if !common::nvrtc_or_skip("row_programs_compile_for_sm_80_and_sm_90_without_spills") {
        return Ok(());
    }
    let cx = Context::sim();
    let outs = row_programs(&cx, 4, 64)?;
    let source = lazyfuse::cuda_source(&outs.iter().collect::<Vec<_>>())?;
    assert!(source.contains("lf_row_"), "{source}");
    for arch in ["sm_80", "sm_90"] {
        common::compiles_without_spills("row_programs", &source, arch);
    }
    Ok(())
}
