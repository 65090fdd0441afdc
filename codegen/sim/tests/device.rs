//! Device code generation, checked without a GPU: every kind of kernel the
//! lowering emits (every operation on every dtype it accepts, every cast,
//! every input layout, both index widths, every reduction layout) is
//! - executed by the SIMT simulator and compared with the reference evaluator,
//! - printed deterministically as CUDA C,
//! - compiled by real NVRTC to a cubin whose ptxas report shows no spills.
//!
//! NVRTC is found as documented in `lazyfuse_device::nvrtc`; the
//! test command installs it. Without it the NVRTC tests say they are skipped,
//! unless `LAZYFUSE_REQUIRE_NVRTC=1` (set by the test command) makes that a
//! failure.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::sync::Arc;

use lazyfuse_core::{
    Array, BinaryOp, DType, Error, ExprGraph, HostBuffer, Options, Reducer, ReferenceEngine,
    Session, UnaryOp,
};
use lazyfuse_device::nvrtc::{self, Target};
use lazyfuse_device::{bind, cuda, lower, DeviceProgram};
use lazyfuse_fusion::{compile, FusionOptions};
use lazyfuse_sim::SimEngine;

/// Deterministic data of `dtype` with a few negative, zero and (for floats)
/// special values.
fn data(cx: &Session, dtype: DType, shape: &[usize], seed: u64) -> Array {
    let n: usize = shape.iter().product();
    let values: Vec<f64> = (0..n)
        .map(|i| {
            let x = ((i as u64 * 2654435761 + seed * 97) % 23) as f64 - 7.0;
            match i % 11 {
                5 => 0.0,
                7 => x * 0.25 + 0.5,
                _ => x,
            }
        })
        .collect();
    let buffer = HostBuffer::F64(values).cast(dtype);
    cx.from_buffer(buffer, shape).unwrap()
}

/// Every expression of the zoo, on session `cx`.
fn zoo(cx: &Session) -> Vec<(String, Array)> {
    let mut cases: Vec<(String, Array)> = Vec::new();
    for dtype in DType::ALL {
        let a = data(cx, dtype, &[37], 1);
        let b = data(cx, dtype, &[37], 2);
        for &op in UnaryOp::ALL {
            let y = a.apply_unary(op);
            if y.check().is_ok() {
                cases.push((format!("{op}({dtype})"), y));
            }
        }
        for &op in BinaryOp::ALL {
            let y = a.apply_binary(op, (&b).into());
            if y.check().is_ok() {
                cases.push((format!("{op}({dtype}, {dtype})"), y));
            }
        }
        // Every cast from this dtype.
        for to in DType::ALL {
            cases.push((format!("cast {dtype} -> {to}"), a.astype(to)));
        }
        cases.push((format!("where({dtype})"), a.gt(&b).where_(&a, &b)));
    }
    // Layouts: broadcast, transpose, reversed slice, scalar, iota.
    let m = data(cx, DType::F32, &[6, 5], 3);
    let row = data(cx, DType::F32, &[5], 4);
    let col = data(cx, DType::F32, &[6, 1], 5);
    let one = data(cx, DType::F32, &[1], 6);
    cases.push(("broadcast".into(), &(&m + &row) * &col));
    cases.push(("transpose".into(), &m.transpose() * 2.0f32));
    cases.push((
        "reversed slice".into(),
        m.slice_axis(1, Some(4), None, -1) + 1.0f32,
    ));
    cases.push(("scalar input".into(), &m * &one));
    // A transcendental over a broadcast row in f64: it spilled for sm_90
    // once (8 bytes of stack) while sm_80 compiled it clean.
    let m64 = data(cx, DType::F64, &[64, 48], 10);
    let row64 = data(cx, DType::F64, &[48], 11);
    cases.push(("exp of broadcast f64".into(), (&m64 + &row64).exp()));
    cases.push((
        "iota".into(),
        cx.arange(0.0, 30.0, 1.0, DType::F32).reshape(&[6, 5]) * &m,
    ));
    // Reductions: full, axis with the last axis reduced, axis with it kept.
    for &dtype in &[
        DType::F32,
        DType::F64,
        DType::F16,
        DType::I32,
        DType::U8,
        DType::Bool,
    ] {
        let x = data(cx, dtype, &[9, 70], 7);
        cases.push((format!("sum({dtype})"), x.sum()));
        cases.push((format!("max({dtype})"), x.max()));
        cases.push((format!("min_axis1({dtype})"), x.min_axis(1)));
        cases.push((format!("sum_axis0({dtype})"), x.sum_axis(0)));
        cases.push((format!("prod_axis1({dtype})"), x.prod_axis(1)));
    }
    let x = data(cx, DType::F32, &[9, 70], 8);
    cases.push(("fused sum".into(), ((&x - 1.0f32) * &x).sum()));
    cases.push(("mean_axis1".into(), x.mean_axis(1)));
    cases.push(("sum of transpose".into(), x.transpose().sum_axis(1)));
    let wide = data(cx, DType::F64, &[3, 4, 50], 9);
    cases.push(("middle axis".into(), wide.sum_axis(1)));
    // Composite reductions and generated constructors (issue 18).
    cases.push(("argmax axis".into(), x.argmax_axis(1)));
    cases.push(("argmin".into(), x.argmin()));
    cases.push((
        "argmax of a fused expression".into(),
        (&x - 2.0f32).abs().argmax(),
    ));
    cases.push((
        "argmin f16 axis".into(),
        x.astype(DType::F16).argmin_axis(0),
    ));
    cases.push((
        "argmax u32".into(),
        (&x * 1000.0f32).astype(DType::U32).argmax_axis(1),
    ));
    // 64-bit values: the arg-reduction kernels.
    cases.push(("argmax f64 axis".into(), wide.argmax_axis(2)));
    cases.push((
        "argmin of a fused f64 expression".into(),
        (&wide - 0.5f64).abs().argmin_axis(1),
    ));
    cases.push((
        "argmax i64".into(),
        (&wide * 100.0f64).astype(DType::I64).argmax(),
    ));
    cases.push(("var axis".into(), x.var_axis(0, 1)));
    cases.push(("any axis".into(), x.gt(3.0f32).any_axis(1)));
    cases.push(("nanmax".into(), x.nanmax()));
    cases.push(("sum of two axes".into(), wide.sum_axes(&[0, 2], true)));
    cases.push((
        "linspace".into(),
        cx.linspace(-1.0, 2.0, 70, DType::F32) * &x,
    ));
    cases.push(("eye".into(), cx.eye(12, DType::F64) + 1.0));
    cases.push((
        "random uniform".into(),
        cx.random_uniform(&[9, 70], DType::F32, 5) * &x,
    ));
    cases.push((
        "random uniform f16".into(),
        cx.random_uniform(&[300], DType::F16, 5),
    ));
    cases.push((
        "random normal".into(),
        cx.random_normal(&[300], DType::F64, 5).sum(),
    ));
    let absmax = Reducer::new("absmax", |a, b| a.abs().maximum(b.abs()), 0.0f32);
    cases.push(("custom reducer".into(), absmax.reduce(&x)));
    cases.push(("custom reducer axis".into(), absmax.reduce_axis(&x, 1)));
    cases.retain(|(_, a)| a.check().is_ok());
    cases
}

fn programs(arrays: &[(String, Array)]) -> BTreeMap<String, DeviceProgram> {
    let mut out = BTreeMap::new();
    for (what, array) in arrays {
        let graph = ExprGraph::from_roots(&[array.node()]);
        let program = compile(&graph, &FusionOptions::default()).unwrap();
        for launch in &program.launches {
            for index in [bind::index_type(launch), DType::I64] {
                let lowered =
                    lower::lower(&launch.kernel, index).unwrap_or_else(|e| panic!("{what}: {e}"));
                out.insert(lowered.name.clone(), lowered);
            }
        }
    }
    out
}

fn sessions() -> (Session, Session) {
    let reference = Session::new(Arc::new(ReferenceEngine::new()), Options::default());
    let sim = Session::new(Arc::new(SimEngine::default()), Options::default());
    (reference, sim)
}

fn same(got: &HostBuffer, want: &HostBuffer) -> bool {
    if got.dtype() != want.dtype() || got.len() != want.len() {
        return false;
    }
    (0..got.len()).all(|i| {
        let (g, w) = (
            got.get_wide(i).unwrap().as_f64(),
            want.get_wide(i).unwrap().as_f64(),
        );
        (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= 1e-5 * w.abs().max(1e-30)
    })
}

#[test]
fn the_simulator_runs_every_kernel_like_the_reference() {
    let (reference, sim) = sessions();
    let want = zoo(&reference);
    let got = zoo(&sim);
    assert!(want.len() > 500, "the zoo has {} cases", want.len());
    let mut failures = Vec::new();
    for ((what, w), (_, g)) in want.iter().zip(&got) {
        let (w, g) = (w.to_host().unwrap(), g.to_host());
        match g {
            Ok(g) if same(&g, &w) => {}
            Ok(g) => failures.push(format!("{what}: sim {g:?} vs reference {w:?}")),
            Err(e) => failures.push(format!("{what}: {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(sim.stats().kernel_launches > 500, "{:?}", sim.stats());
}

#[test]
fn printing_is_stable_and_names_come_from_the_structure() {
    let (reference, _) = sessions();
    let programs = programs(&zoo(&reference));
    let all: String = programs.values().map(cuda::print_kernels).collect();
    for vector in [
        "float4",
        "int4",
        "uint4",
        "double2",
        "longlong2",
        "ulonglong2",
    ] {
        assert!(
            all.contains(&format!("make_{vector}(")),
            "no {vector} store in the zoo"
        );
    }
    for (name, program) in &programs {
        let text = cuda::print(program);
        assert_eq!(text, cuda::print(program), "{name} printed twice differs");
        for kernel in &program.kernels {
            assert!(kernel.name.starts_with(name.as_str()));
            assert!(text.contains(&format!(
                "void __launch_bounds__({}, {}) {}(",
                kernel.block,
                cuda::min_blocks_per_multiprocessor(kernel),
                kernel.name
            )));
        }
    }
}

fn nvrtc_or_skip(test: &str) -> bool {
    match nvrtc::load() {
        Ok(()) => true,
        Err(e) if std::env::var("LAZYFUSE_REQUIRE_NVRTC").as_deref() == Ok("1") => {
            panic!("{test}: NVRTC is required here: {e}")
        }
        Err(e) => {
            skipped(&format!("SKIPPED {test}: {e}"));
            false
        }
    }
}

/// One translation unit holding every kernel of `programs`.
fn translation_unit(programs: &BTreeMap<String, DeviceProgram>) -> String {
    let mut text = cuda::prelude();
    for program in programs.values() {
        text.push_str(&cuda::print_kernels(program));
    }
    text
}

#[test]
fn nvrtc_compiles_every_kernel_without_spills() {
    if !nvrtc_or_skip("nvrtc_compiles_every_kernel_without_spills") {
        return;
    }
    let (reference, _) = sessions();
    let programs = programs(&zoo(&reference));
    let source = translation_unit(&programs);
    let kernels: usize = programs.values().map(|p| p.kernels.len()).sum();
    // sm_80 (A100) and sm_90 (H100, H200): the GPUs this project runs on;
    // and the oldest architecture this NVRTC targets, as PTX (what older
    // GPUs get): no sm_60+ intrinsic may slip in. The three compilations of
    // the zoo are the suite's longest step: they run side by side.
    let oldest = nvrtc::supported_archs().unwrap()[0];
    let targets = [
        Target::Cubin("sm_80".into()),
        Target::Cubin("sm_90".into()),
        Target::Ptx(format!("compute_{oldest}")),
    ];
    let compiled: Vec<_> = std::thread::scope(|scope| {
        let jobs: Vec<_> = targets
            .iter()
            .map(|target| scope.spawn(|| nvrtc::compile("lazyfuse_zoo", &source, target)))
            .collect();
        jobs.into_iter().map(|job| job.join().unwrap()).collect()
    });
    let mut failures = Vec::new();
    let mut report = Vec::new();
    for (target, compiled) in targets.iter().zip(compiled) {
        let compiled = compiled.unwrap_or_else(|e| panic!("{target:?}: {e}"));
        assert!(!compiled.image.is_empty());
        let Target::Cubin(arch) = target else {
            continue;
        };
        report = nvrtc::resources(&compiled.log);
        assert_eq!(
            report.len(),
            kernels,
            "ptxas reported on every kernel for {arch}:\n{}",
            compiled.log
        );
        for k in &report {
            if (k.spill_stores, k.spill_loads) != (0, 0) || k.registers > 255 {
                failures.push(format!("{arch}: {k:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "spills:\n{}", failures.join("\n"));
    let most = report.iter().max_by_key(|k| k.registers).unwrap();
    eprintln!(
        "{} kernels compiled for sm_80 and sm_90, no spills; most registers on sm_90: {} ({})",
        report.len(),
        most.registers,
        most.name
    );
}

#[test]
fn nvrtc_emits_ptx_for_a_virtual_architecture() {
    if !nvrtc_or_skip("nvrtc_emits_ptx_for_a_virtual_architecture") {
        return;
    }
    let (reference, _) = sessions();
    let a = data(&reference, DType::F32, &[10], 1);
    let programs = programs(&[("sum".to_string(), (&a * &a).sum())]);
    let program = programs.values().next().unwrap();
    let ptx = nvrtc::compile(
        &program.name,
        &cuda::print(program),
        &Target::Ptx("compute_70".into()),
    )
    .unwrap();
    let text = String::from_utf8(ptx.image).unwrap();
    assert!(text.contains(".entry"), "{text}");
    assert!(text.contains(&program.kernels[0].name));
    let (major, _) = nvrtc::version().unwrap();
    assert!(major >= 11);
}

#[test]
fn a_compile_failure_returns_the_source_and_the_log() {
    if !nvrtc_or_skip("a_compile_failure_returns_the_source_and_the_log") {
        return;
    }
    let source = "extern \"C\" __global__ void broken(float* x) { x[0] = undefined_name; }";
    match nvrtc::compile("broken", source, &Target::Ptx("compute_70".into())) {
        Err(Error::Compile {
            kernel,
            source_code,
            log,
        }) => {
            assert_eq!(kernel, "broken");
            assert_eq!(source_code, source);
            assert!(log.contains("undefined_name"), "{log}");
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
}

/// Says a test was skipped on the terminal itself (past the test harness's
/// output capture), so a run without a GPU or NVRTC shows what it did not check.
fn skipped(message: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{message}");
}

/// Prints one kernel of the zoo (with the prelude when `PRELUDE` is set):
/// `KERNEL=lf_ew_… cargo test -p
/// lazyfuse-sim --test device dump_kernel -- --ignored --nocapture`.
#[test]
#[ignore]
fn dump_kernel() {
    let (reference, _) = sessions();
    let programs = programs(&zoo(&reference));
    let name = std::env::var("KERNEL").unwrap();
    let p = programs.get(&name).unwrap();
    println!(
        "{}",
        if std::env::var_os("PRELUDE").is_some() {
            cuda::print(p)
        } else {
            cuda::print_kernels(p)
        }
    );
}

#[test]
fn nvrtc_lists_the_architectures_it_targets() {
    if !nvrtc_or_skip("nvrtc_lists_the_architectures_it_targets") {
        return;
    }
    let archs = nvrtc::supported_archs().unwrap();
    assert!(archs.contains(&80), "{archs:?}");
    assert_eq!(
        nvrtc::target_for((8, 0), &archs),
        Some(Target::Cubin("sm_80".into()))
    );
    // A device newer than this NVRTC gets PTX for the newest it knows.
    let newest = *archs.last().unwrap();
    assert_eq!(
        nvrtc::target_for((99, 9), &archs),
        Some(Target::Ptx(format!("compute_{newest}")))
    );
}
