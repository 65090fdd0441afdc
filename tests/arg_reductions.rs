//! `argmax`/`argmin`: one pass on the CPU (an arg-reduction step that
//! computes its element-wise producer inside it); on a device, one
//! reduction of packed (value, index) keys for values of at most 32 bits
//! and the arg-reduction kernels (`ArgKernels`, the producer computed
//! inside the first) for 64-bit ones; the same indices on every backend:
//! the first extreme, a NaN counting as the extreme.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use lazyfuse::codegen::fusion::{compile, FusionOptions};
use lazyfuse::core::{ExprGraph, ReduceOp};
use lazyfuse::kernel::ArgKernels;
use lazyfuse::{Array, Context, DType};

/// Values with ties and NaNs placed across chunk boundaries (4096 apart).
fn values(len: usize, nan_at: &[usize]) -> Vec<f32> {
    let mut v: Vec<f32> = (0..len)
        .map(|i| ((i * 7919) % 1000) as f32 * 1e-3)
        .collect();
    // The largest value, tied, in several chunks.
    for i in [5000, 4095, 300_000] {
        if i < len {
            v[i] = 2.0;
        }
    }
    for &i in nan_at {
        v[i] = f32::NAN;
    }
    v
}

#[test]
fn arg_reductions_give_the_same_indices_everywhere() {
    let (lines, n) = (3, 400_000);
    let mut x = values(lines * n, &[]);
    // Line 1 has two NaNs: the first wins, in argmin as in argmax.
    x[n + 123_456] = f32::NAN;
    x[n + 300_001] = f32::NAN;
    let y: Vec<f32> = x.iter().rev().copied().collect();
    let ints: Vec<i32> = (0..lines * n)
        .map(|i| ((i * 31) % 1017) as i32 - 500)
        .collect();
    let run = |cx: &Context| {
        let a = cx.from_vec(x.clone(), &[lines, n]).unwrap();
        let b = cx.from_vec(y.clone(), &[lines, n]).unwrap();
        let k = cx.from_vec(ints.clone(), &[lines, n]).unwrap();
        let d = (&a - &b).abs();
        let each: Vec<Array> = vec![
            d.argmax_axis(-1),
            d.argmin_axis(1),
            d.argmax(),
            d.argmax_axis(0),
            (&k * 3i32).argmin_axis(-1),
            k.argmax(),
            d.astype(DType::F16).argmax_axis(1),
            // 64-bit values (the arg-reduction kernels on a device).
            d.astype(DType::F64).argmax_axis(-1),
            (d.astype(DType::F64) * 2.0f64).argmin_axis(1),
            d.astype(DType::F64).argmin(),
            d.astype(DType::F64).argmax_axis(0),
            (k.astype(DType::I64) * 3i64).argmin_axis(-1),
            k.astype(DType::I64).argmax(),
            k.abs().astype(DType::U64).argmax_axis(1),
        ];
        each.iter()
            .map(|r| r.to_vec::<i64>().unwrap())
            .collect::<Vec<_>>()
    };
    let want = run(&Context::builder().backend("reference").build().unwrap());
    // y mirrors x, so |x - y| has line 1's NaNs at 123,456 and 300,001
    // and at their mirrors 276,543 and 99,998: the first is 99,998.
    assert_eq!(want[0][1], 99_998, "the first NaN of line 1");
    assert_eq!(want[1][1], 99_998, "argmin takes the first NaN too");
    for cx in common::backends() {
        assert_eq!(run(&cx), want, "{}", cx.backend_name());
    }
}

#[test]
fn argmax_of_a_fused_expression_is_one_kernel_on_the_simulator() {
    // Values of at most 32 bits: one reduction of packed (value, index) keys.
    let cx = Context::sim();
    let n = 100_000;
    let (x, y) = (
        values(n, &[70_000, 90_000]),
        values(n + 7, &[])[7..].to_vec(),
    );
    let (a, b) = (cx.from_slice(&x), cx.from_slice(&y));
    let index = (&a - &b).abs().argmax();
    cx.reset_stats();
    let got = index.item::<i64>().unwrap();
    let stats = cx.stats();
    assert_eq!(
        (stats.kernel_launches, stats.h2d_copies),
        (1, 2),
        "{stats:?}"
    );
    assert_eq!(got, 70_000, "the first NaN");
    // 64-bit values: the arg-reduction kernels, the first computing the
    // producer (never materialised), the second merging chunks' bests.
    let (a64, b64) = (a.astype(DType::F64), b.astype(DType::F64));
    let index = (&a64 - &b64).abs().argmin();
    assert!(index.explain().contains("argmin"), "{}", index.explain());
    cx.reset_stats();
    assert_eq!(index.item::<i64>().unwrap(), 70_000);
    let stats = cx.stats();
    // `a` and `b` are on the device since the demand above.
    assert_eq!(
        (stats.kernel_launches, stats.h2d_copies),
        (2, 0),
        "{stats:?}"
    );
    // Nothing of the producer's size was allocated on the device: the two
    // kernels' tables are about sqrt(n) values and indices.
    assert!(
        stats.device_bytes_allocated < 64 * 1024 + 2 * 4 * n as u64,
        "{stats:?}"
    );
}

/// The arg-reduction kernels of every 64-bit dtype, and one computing its
/// producer, compile with NVRTC without spills.
#[test]
fn the_arg_kernels_compile_with_nvrtc() {
    if !common::nvrtc_or_skip("the_arg_kernels_compile_with_nvrtc") {
        return;
    }
    let cx = Context::sim();
    // Rows longer than 16: an arg-reduction step, not unrolled.
    let a = cx.from_vec(vec![1.0f64; 120], &[3, 40]).unwrap();
    let graph = ExprGraph::from_roots(&[(&a * 2.0f64 - 1.0f64).abs().argmax_axis(-1).node()]);
    let program = compile(&graph, &FusionOptions::default()).unwrap();
    let scan = program.scans.first().expect("an arg-reduction step");
    let producer = &program.launches[scan.producer.expect("a sole producer")];
    let fused = ArgKernels::of_producer(scan.op, scan.dtype, producer)
        .unwrap()
        .expect("a replayable producer");
    let plain = [ReduceOp::Max, ReduceOp::Min].into_iter().flat_map(|op| {
        [DType::I64, DType::U64, DType::F64].map(|dtype| ArgKernels::of_buffer(op, dtype).unwrap())
    });
    for kernels in plain.chain([fused]) {
        for kernel in kernels.kernels() {
            common::compiles_without_spills(kernel.name(), &kernel.cuda_source(), "sm_80");
        }
    }
}

#[test]
fn argmax_of_a_fused_expression_is_one_kernel_on_the_cpu() {
    let cx = Context::builder()
        .backend("cpu")
        .threads(2)
        .build()
        .unwrap();
    let n = 1_000_000;
    let a = cx.from_vec(values(n, &[]), &[n]).unwrap();
    let b = cx.from_vec(values(n, &[])[7..].to_vec(), &[n - 7]).unwrap();
    let index = (&a.slice_axis(0, Some(7), None, 1) - &b).abs().argmax();
    assert!(index.explain().contains("argmax"), "{}", index.explain());
    cx.reset_stats();
    let got = index.item::<i64>().unwrap();
    assert_eq!(cx.stats().kernel_launches, 1, "{:?}", cx.stats());
    let reference = Context::builder().backend("reference").build().unwrap();
    let (ra, rb) = (
        reference.from_vec(values(n, &[]), &[n]).unwrap(),
        reference
            .from_vec(values(n, &[])[7..].to_vec(), &[n - 7])
            .unwrap(),
    );
    let want = (&ra.slice_axis(0, Some(7), None, 1) - &rb).abs().argmax();
    assert_eq!(got, want.item::<i64>().unwrap());
}
