//! A gufunc's long `par_range` and `par_reduce` loops on the CPU run in
//! pieces on every worker thread: the same results as the simulator and
//! as plain loops, the same bits for any thread count, and an access
//! outside a buffer inside a piece still reported with its thread and
//! index.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../examples/gufuncs/library.rs"]
mod library;

use lazyfuse::{Context, Error, GUfunc};

fn cpu(threads: usize) -> Context {
    Context::builder()
        .backend("cpu")
        .threads(threads)
        .jit(lazyfuse::JitMode::Always)
        .build()
        .unwrap()
}

/// Values whose sums of squares round differently in different orders.
fn values(n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| ((i * 7919) % 1009) as f32 * 0.37 - 150.0)
        .collect()
}

/// `(n)->(n)`: `out[i] = 3 x[i] + 1`, its iterations spread by `par_range`.
fn affine() -> GUfunc {
    GUfunc::build(
        "affine",
        "(n)->(n)",
        &["void(f32[:], f32[:])"],
        |k, args| {
            let (x, out) = (&args[0], &args[1]);
            k.par_range(0i64, x.len(0), |k, i| {
                let value = x.at(&i) * 3.0 + 1.0;
                k.store(out, &i, value);
            });
        },
    )
    .unwrap()
}

#[test]
fn a_long_par_reduce_gives_the_same_bits_for_one_and_two_threads() {
    let norm = library::norm().unwrap();
    let min_max = library::min_max().unwrap();
    for n in [1 << 15, 100_003, 2_000_000] {
        let host = values(n);
        let want = host
            .iter()
            .map(|&v| f64::from(v) * f64::from(v))
            .sum::<f64>()
            .sqrt();
        let mut bits = Vec::new();
        for cx in [cpu(1), cpu(2), Context::sim()] {
            let x = cx.from_slice(&host);
            let got = norm.call(&[&x]).unwrap().remove(0).item::<f32>().unwrap();
            assert!(
                (f64::from(got) - want).abs() <= 1e-6 * want,
                "{} n={n}: {got} vs {want}",
                cx.backend_name()
            );
            bits.push(got.to_bits());
        }
        assert_eq!(bits[0], bits[1], "n={n}: 1 and 2 threads differ");

        let ints: Vec<i32> = (0..n as i32)
            .map(|i| (i * 37) % 1_000_003 - 500_000)
            .collect();
        for cx in [cpu(1), cpu(2)] {
            let outs = min_max.call(&[&cx.from_slice(&ints)]).unwrap();
            assert_eq!(outs[0].item::<i32>().unwrap(), *ints.iter().min().unwrap());
            assert_eq!(outs[1].item::<i32>().unwrap(), *ints.iter().max().unwrap());
        }
    }
}

/// What the CPU computes for a `par_reduce` sum over `terms`: pieces of
/// at least 2^14 iterations (at most 64, cut by length alone), each summed
/// in order from 0, their partial sums added in order.
fn sum_in_pieces(terms: &[f64]) -> f64 {
    let n = terms.len();
    let count = (n / (1 << 14)).clamp(1, 64);
    (0..count)
        .map(|p| {
            terms[n * p / count..n * (p + 1) / count]
                .iter()
                .sum::<f64>()
        })
        .fold(0.0, |acc, partial| acc + partial)
}

#[test]
fn the_pieces_are_cut_by_length_alone_and_combined_in_order() {
    let norm = library::norm().unwrap();
    let mut differs_from_one_pass = false;
    for n in [1 << 15, 1 << 16, 1_000_003] {
        let host: Vec<f64> = values(n).into_iter().map(|v| f64::from(v) / 7.0).collect();
        let squares: Vec<f64> = host.iter().map(|v| v * v).collect();
        let want = sum_in_pieces(&squares).sqrt();
        differs_from_one_pass |= want != squares.iter().sum::<f64>().sqrt();
        for cx in [cpu(1), cpu(2)] {
            let got = norm.call(&[&cx.from_slice(&host)]).unwrap()[0]
                .item::<f64>()
                .unwrap();
            assert_eq!(got.to_bits(), want.to_bits(), "n={n}");
        }
    }
    assert!(
        differs_from_one_pass,
        "the test cannot tell pieces from one pass"
    );
}

#[test]
fn many_long_rows_each_run_in_pieces_inside_the_parallel_launch() {
    let norm = library::norm().unwrap();
    let (rows, len) = (5, 70_001);
    let host: Vec<f64> = values(rows * len).into_iter().map(f64::from).collect();
    let outs: Vec<Vec<f64>> = [cpu(1), cpu(2)]
        .iter()
        .map(|cx| {
            let x = cx.from_slice(&host).reshape(&[rows, len]);
            norm.call(&[&x]).unwrap()[0].to_vec::<f64>().unwrap()
        })
        .collect();
    assert_eq!(outs[0], outs[1]);
    for (r, row) in host.chunks(len).enumerate() {
        let want = row.iter().map(|v| v * v).sum::<f64>().sqrt();
        assert!((outs[0][r] - want).abs() <= 1e-12 * want, "row {r}");
    }
}

#[test]
fn a_long_par_range_writes_every_element_once() {
    let affine = affine();
    let n = 300_007;
    let host = values(n);
    let want: Vec<f32> = host.iter().map(|&v| v * 3.0 + 1.0).collect();
    for cx in [cpu(1), cpu(2), Context::sim()] {
        let got = affine.call(&[&cx.from_slice(&host)]).unwrap()[0]
            .to_vec::<f32>()
            .unwrap();
        assert_eq!(got, want, "{}", cx.backend_name());
    }
    let text = affine.call(&[&cpu(2).from_slice(&host)]).unwrap()[0].explain();
    assert!(text.contains("runs in pieces"), "{text}");
}

#[test]
fn an_access_outside_a_buffer_inside_a_piece_is_reported() {
    let shifted = GUfunc::build(
        "shifted",
        "(n)->(n)",
        &["void(f32[:], f32[:])"],
        |k, args| {
            let (x, out) = (&args[0], &args[1]);
            // Wrong: the last iteration reads one past the end.
            k.par_range(0i64, x.len(0), |k, i| {
                let next = x.at(&i + lazyfuse::kernel::Val::from(1i64));
                k.store(out, &i, next);
            });
        },
    )
    .unwrap();
    let n = 100_000;
    for cx in [cpu(1), cpu(2)] {
        let x = cx.from_slice(&values(n));
        let err = shifted.call(&[&x]).unwrap()[0].to_vec::<f32>().unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::Device { .. }), "{text}");
        assert!(
            text.contains("shifted") && text.contains(&format!("in0[{n}]")),
            "{text}"
        );
    }
}
