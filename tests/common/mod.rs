//! Shared helpers of the facade's integration tests.
#![allow(dead_code, clippy::expect_used)]

use lazyfuse::Context;

/// Every backend available on this machine, plus the unfused ablation
/// setting: each shared test runs on all of them.
pub fn backends() -> Vec<Context> {
    let mut all = vec![
        Context::builder()
            .backend("reference")
            .build()
            .expect("the reference evaluator always builds"),
        Context::cpu(),
        Context::sim(),
        Context::builder()
            .backend("cpu")
            .fusion(false)
            .threads(1)
            .build()
            .expect("the cpu backend always builds"),
    ];
    match Context::cuda(0) {
        Ok(cx) => all.push(cx),
        Err(e) => {
            // Once per test binary, past the harness's capture: visible in every run.
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                use std::io::Write;
                let _ = writeln!(
                    std::io::stderr(),
                    "SKIPPED the cuda backend in this suite: {e}"
                );
            });
        }
    }
    all
}

/// Asserts two float slices agree within `rel` relative error (NaN equals NaN).
pub fn assert_close(got: &[f64], want: &[f64], rel: f64) {
    assert_eq!(got.len(), want.len(), "lengths differ: {got:?} vs {want:?}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let ok = (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= rel * w.abs().max(1e-300);
        assert!(
            ok,
            "element {i}: got {g}, want {w} (all: {got:?} vs {want:?})"
        );
    }
}
