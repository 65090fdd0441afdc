//! Shared helpers of the facade's integration tests.
#![allow(dead_code, clippy::expect_used, clippy::panic)]

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

/// Whether NVRTC loads; otherwise prints `SKIPPED <test>` (the test
/// command counts it), or fails where the test command requires NVRTC.
pub fn nvrtc_or_skip(test: &str) -> bool {
    if lazyfuse::codegen::device::nvrtc::load().is_ok() {
        return true;
    }
    assert_ne!(
        std::env::var("LAZYFUSE_REQUIRE_NVRTC").as_deref(),
        Ok("1"),
        "NVRTC is required here"
    );
    eprintln!("SKIPPED {test}: no NVRTC");
    false
}

/// Compiles the kernel `name` of CUDA `source` to a cubin for `arch` with
/// NVRTC and checks that it spills no register.
pub fn compiles_without_spills(name: &str, source: &str, arch: &str) {
    use lazyfuse::codegen::device::nvrtc::{self, Target};
    let target = Target::Cubin(arch.into());
    let compiled = nvrtc::compile(name, source, &target).unwrap_or_else(|e| panic!("{e}"));
    let report = nvrtc::resources(&compiled.log);
    assert!(
        report
            .iter()
            .all(|r| (r.spill_stores, r.spill_loads) == (0, 0)),
        "{name} {arch}: {report:?}"
    );
}

/// The message of an argument, dtype or shape error; panics on anything
/// else (a value, or another kind of error).
pub fn refusal(result: lazyfuse::Result<lazyfuse::Array>) -> String {
    use lazyfuse::Error;
    match result {
        Err(
            e @ (Error::InvalidArgument { .. }
            | Error::DTypeMismatch { .. }
            | Error::ShapeMismatch { .. }),
        ) => e.to_string(),
        other => panic!("expected an argument, dtype or shape error, got {other:?}"),
    }
}
