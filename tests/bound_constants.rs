//! Demands that differ only in constants bound per demand (a random array's
//! key, a float operand) run one cached program with each demand's own
//! values, on every backend: element-wise kernels, reductions with their
//! epilogues, row programs, and constants that equal one another in one
//! demand but not in the next.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use lazyfuse::{Context, DType};

#[test]
fn random_draws_in_one_context_are_each_keys_values() {
    let fresh = |seed| {
        Context::cpu()
            .random_uniform(&[5, 300], DType::F32, seed)
            .to_vec::<f32>()
            .unwrap()
    };
    for cx in common::backends() {
        let name = cx.backend_name();
        for seed in [3, 4, 3, 1 << 40] {
            let got = cx
                .random_uniform(&[5, 300], DType::F32, seed)
                .to_vec::<f32>()
                .unwrap();
            let want = fresh(seed);
            let same = got
                .iter()
                .zip(&want)
                .all(|(g, w)| g.to_bits() == w.to_bits());
            assert!(same, "{name}, seed {seed}");
            // Two draws of one demand, with their own keys.
            let pair = cx.random_uniform(&[100], DType::F64, seed)
                - cx.random_uniform(&[100], DType::F64, seed + 1);
            let spread = pair.abs().max().item::<f64>().unwrap();
            assert!(spread > 0.5, "{name}, seed {seed}: {spread}");
        }
    }
}

/// `(x * t + c)`'s row softmax and its row sums times `t`, in f64.
fn expected(x: &[f64], cols: usize, t: f64, c: f64) -> (Vec<f64>, Vec<f64>) {
    let mut softmax = Vec::new();
    let mut sums = Vec::new();
    for row in x.chunks(cols) {
        let y: Vec<f64> = row.iter().map(|v| v * t + c).collect();
        let m = y.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = y.iter().map(|v| (v - m).exp()).collect();
        let s: f64 = e.iter().sum();
        softmax.extend(e.iter().map(|v| v / s));
        sums.push(row.iter().sum::<f64>() * t);
    }
    (softmax, sums)
}

#[test]
fn float_operands_in_a_loop_are_each_demands_values() {
    let (rows, cols) = (6, 50);
    let data: Vec<f64> = (0..rows * cols)
        .map(|i| ((i * 37) % 101) as f64 / 17.0)
        .collect();
    for cx in common::backends() {
        let name = cx.backend_name();
        let x = cx.from_vec(data.clone(), &[rows, cols]).unwrap();
        // Equal constants in one demand (one value) and unequal in the next.
        for (t, c) in [
            (0.5, 0.5),
            (2.0, -1.0),
            (0.5, 0.5),
            (-1.25, 3.0),
            (3.0, 3.0),
        ] {
            let y = &x * t + c;
            let e = (&y - y.max_axes(&[1], true)).exp();
            let softmax = &e / e.sum_axes(&[1], true);
            let sums = x.sum_axes(&[1], false) * t;
            cx.eval(&[&softmax, &sums]).unwrap();
            let (want_softmax, want_sums) = expected(&data, cols, t, c);
            let what = format!("{name}, t = {t}, c = {c}");
            common::assert_close(&softmax.to_vec::<f64>().unwrap(), &want_softmax, 1e-12);
            common::assert_close(&sums.to_vec::<f64>().unwrap(), &want_sums, 1e-12);
            let scaled = (&x * t).astype(DType::F32).to_vec::<f32>().unwrap();
            assert_eq!(scaled[7], (data[7] * t) as f32, "{what}");
        }
    }
}
