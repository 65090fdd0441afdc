//! Random arrays (`random_uniform`, `random_normal`): the same bits on every
//! backend and for any thread count, a pure function of index and seed,
//! generated inside the kernels that use them (never stored or copied).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use lazyfuse::{Context, DType};

#[test]
fn uniform_values_are_the_same_bits_everywhere() {
    let want = Context::cpu()
        .random_uniform(&[3, 700], DType::F32, 42)
        .to_vec::<f32>()
        .unwrap();
    let want64 = Context::cpu()
        .random_uniform(&[2100], DType::F64, 42)
        .to_vec::<f64>()
        .unwrap();
    let mut contexts = common::backends();
    contexts.push(
        Context::builder()
            .backend("cpu")
            .threads(1)
            .build()
            .unwrap(),
    );
    for cx in contexts {
        let name = cx.backend_name();
        let got = cx
            .random_uniform(&[3, 700], DType::F32, 42)
            .to_vec::<f32>()
            .unwrap();
        assert!(
            got.iter()
                .zip(&want)
                .all(|(g, w)| g.to_bits() == w.to_bits()),
            "{name}"
        );
        let got = cx
            .random_uniform(&[2100], DType::F64, 42)
            .to_vec::<f64>()
            .unwrap();
        assert!(
            got.iter()
                .zip(&want64)
                .all(|(g, w)| g.to_bits() == w.to_bits()),
            "{name}"
        );
    }
    // Element i is a function of i and the seed: a longer array starts the same.
    let short = Context::cpu()
        .random_uniform(&[10], DType::F32, 42)
        .to_vec::<f32>()
        .unwrap();
    assert_eq!(short, want[..10]);
    // Another seed, other values.
    let other = Context::cpu()
        .random_uniform(&[10], DType::F32, 43)
        .to_vec::<f32>()
        .unwrap();
    assert!(short.iter().zip(&other).all(|(a, b)| a != b));
}

#[test]
fn uniform_and_normal_values_have_their_distributions() {
    let cx = Context::cpu();
    let n = 100_000;
    for dtype in [DType::F64, DType::F32, DType::F16, DType::BF16] {
        let u = cx.random_uniform(&[n], dtype, 7).astype(DType::F64);
        let values = u.to_vec::<f64>().unwrap();
        assert!(values.iter().all(|&v| (0.0..1.0).contains(&v)), "{dtype}");
        let mean = u.mean().item::<f64>().unwrap();
        assert!((mean - 0.5).abs() < 0.01, "{dtype}: mean {mean}");
    }
    let z = cx.random_normal(&[n], DType::F64, 7);
    let (mean, std) = (
        z.mean().item::<f64>().unwrap(),
        z.std(0).item::<f64>().unwrap(),
    );
    assert!(
        mean.abs() < 0.02 && (std - 1.0).abs() < 0.02,
        "mean {mean}, std {std}"
    );
    let within_one = z.abs().lt(1.0).count_nonzero().item::<i64>().unwrap() as f64 / n as f64;
    assert!((within_one - 0.6827).abs() < 0.01, "{within_one}");
}

#[test]
fn normal_values_agree_across_backends() {
    let want = Context::cpu()
        .random_normal(&[500], DType::F64, 3)
        .to_vec::<f64>()
        .unwrap();
    for cx in common::backends() {
        let got = cx
            .random_normal(&[500], DType::F64, 3)
            .to_vec::<f64>()
            .unwrap();
        for (g, w) in got.iter().zip(&want) {
            // log and cos are within a few ulp of each other on each backend.
            assert!(
                (g - w).abs() <= 1e-13 * w.abs().max(1.0),
                "{}: {g} vs {w}",
                cx.backend_name()
            );
        }
    }
}

#[test]
fn a_random_array_is_generated_where_it_is_used() {
    let cx = Context::sim();
    let total = cx.random_uniform(&[1 << 16], DType::F32, 1).sum();
    cx.reset_stats();
    let value = total.item::<f32>().unwrap();
    let s = cx.stats();
    // One kernel generates and sums; nothing is uploaded, one scalar comes back.
    assert_eq!(
        (s.kernel_launches, s.h2d_copies, s.d2h_copies),
        (1, 0, 1),
        "{s:?}"
    );
    assert!((value / (1 << 16) as f32 - 0.5).abs() < 0.01, "{value}");
    let err = cx
        .random_uniform(&[4], DType::I32, 1)
        .check()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("random_uniform") && err.contains("expected a float dtype"),
        "{err}"
    );
}

#[test]
fn ten_million_draws_have_the_theoretical_mean_and_variance_within_four_sigma() {
    let cx = Context::cpu();
    let n = 10_000_000usize;
    let nf = n as f64;
    // U(0, 1): mean 1/2, variance 1/12; the sample variance's own variance
    // is (mu4 - sigma^4) / n with mu4 = 1/80.
    let u = cx.random_uniform(&[n], DType::F64, 11);
    let (mean, var) = (
        u.mean().item::<f64>().unwrap(),
        u.var(0).item::<f64>().unwrap(),
    );
    let sigma_mean = (1.0 / 12.0 / nf).sqrt();
    let sigma_var = ((1.0 / 80.0 - 1.0 / 144.0) / nf).sqrt();
    assert!((mean - 0.5).abs() < 4.0 * sigma_mean, "uniform mean {mean}");
    assert!(
        (var - 1.0 / 12.0).abs() < 4.0 * sigma_var,
        "uniform variance {var}"
    );
    // N(0, 1): mean 0 (sigma 1/sqrt(n)), variance 1 (sigma sqrt(2/n)).
    let z = cx.random_normal(&[n], DType::F64, 11);
    let (mean, var) = (
        z.mean().item::<f64>().unwrap(),
        z.var(0).item::<f64>().unwrap(),
    );
    assert!(mean.abs() < 4.0 / nf.sqrt(), "normal mean {mean}");
    assert!(
        (var - 1.0).abs() < 4.0 * (2.0 / nf).sqrt(),
        "normal variance {var}"
    );
}

#[test]
fn the_first_uniforms_of_seed_zero_are_the_known_answer_words_mapped() {
    // Random123's known answer for counter 0, key 0 (philox4x32_10):
    // words 6627e8d5 e169c58d bc57ac4c 9b00dbd8. f64 element i takes
    // words 2 (i % 2) and 2 (i % 2) + 1 at counter i / 2 as one 64-bit
    // number (the second high) and keeps its top 53 bits; f32 element i
    // the top 24 bits of word i % 4 at counter i / 4.
    let cx = Context::cpu();
    let words = [0x6627_e8d5u64, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8];
    let bits = (words[1] << 32) | words[0];
    let f32s = cx
        .random_uniform(&[16], DType::F32, 0)
        .to_vec::<f32>()
        .unwrap();
    let f64s = cx
        .random_uniform(&[16], DType::F64, 0)
        .to_vec::<f64>()
        .unwrap();
    for (i, word) in words.iter().enumerate() {
        assert_eq!(f32s[i], (word >> 8) as f32 / (1u64 << 24) as f32);
    }
    let high = (words[3] << 32) | words[2];
    assert_eq!(f64s[0], (bits >> 11) as f64 / (1u64 << 53) as f64);
    assert_eq!(f64s[1], (high >> 11) as f64 / (1u64 << 53) as f64);
    // The rest: the same generator (core's, checked against every
    // Random123 vector in core's tests).
    for (i, (&a, &b)) in f32s.iter().zip(&f64s).enumerate() {
        let word = lazyfuse::core::philox::word(i as u64, 0);
        assert_eq!(a, (word >> 8) as f32 / (1u64 << 24) as f32, "f32 {i}");
        let bits = lazyfuse::core::philox::pair(i as u64, 0);
        assert_eq!(b, (bits >> 11) as f64 / (1u64 << 53) as f64, "f64 {i}");
    }
}

/// Core's value of one form of the generator: `(counter, key) -> bits`.
type CoreForm = fn(u64, u64) -> u64;

/// `philox_word` and `philox_pair` over runs of counters that start
/// anywhere (a slice of a random array), lone counters and runs cut short,
/// on every backend, the CPU's machine and its compiled code: core's
/// `philox::word` and `philox::pair` of each counter (the CPU computes a
/// run's blocks once for every four or two counters).
#[test]
fn generator_words_are_cores_for_runs_and_lone_counters() {
    use lazyfuse::core::philox;
    use lazyfuse::core::BinaryOp;
    use lazyfuse::JitMode;
    let mut contexts = common::backends();
    for jit in [JitMode::Always, JitMode::Never] {
        contexts.push(Context::builder().backend("cpu").jit(jit).build().unwrap());
    }
    let key = 0x9E37_79B9_7F4A_7C15u64;
    for cx in &contexts {
        let name = cx.backend_name();
        for (start, step, n) in [
            (0, 1, 5000),
            (1, 1, 200),
            (6, 1, 65),
            (3, 1, 63),
            (0, 3, 300),
            (7, 2, 1),
        ] {
            let stop = (start + step * n) as f64;
            let counters = cx.arange(start as f64, stop, step as f64, DType::U64);
            let forms: [(BinaryOp, CoreForm); 2] = [
                (BinaryOp::PhiloxWord, philox::word),
                (BinaryOp::PhiloxPair, philox::pair),
            ];
            for (op, core) in forms {
                let got = counters
                    .apply_binary(op, key.into())
                    .to_vec::<u64>()
                    .unwrap();
                let want: Vec<u64> = (0..n)
                    .map(|i| core((start + step * i) as u64, key))
                    .collect();
                assert_eq!(
                    got, want,
                    "{name} {op:?}: counters {start}, +{step}, ... ({n})"
                );
            }
        }
    }
}
