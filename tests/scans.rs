//! Scans (`cumsum`, `cumprod`, `cummax`, `cummin`): the same bits on every backend and for any
//! thread count (one chunked order, `core::reference::scan`), fused with
//! the element-wise work around them, and the device kernels that run them
//! compiled by NVRTC.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use lazyfuse::codegen::fusion::{compile, FusionOptions};
use lazyfuse::core::ExprGraph;
use lazyfuse::core::ReduceOp;
use lazyfuse::kernel::ScanKernels;
use lazyfuse::{Context, DType};

#[test]
fn long_scans_are_the_same_bits_everywhere() {
    // Three chunks of 4096 along the axis, two lines.
    let n = 10_000;
    let values: Vec<f32> = (0..2 * n)
        .map(|i| ((i * 7919) % 1000) as f32 * 0.001 - 0.3)
        .collect();
    let ints: Vec<i32> = (0..2 * n as i32).map(|i| (i * 31) % 17 - 8).collect();
    let want = Context::builder()
        .backend("cpu")
        .threads(1)
        .build()
        .unwrap();
    let reference = |cx: &Context| {
        let a = cx.from_vec(values.clone(), &[n, 2]).unwrap();
        let b = cx.from_vec(ints.clone(), &[2, n]).unwrap();
        (
            // Along the first axis, and along the last (chunks in parallel on the CPU).
            [a.cumsum(0), a.reshape(&[2, n]).cumsum(1)]
                .map(|x| x.to_vec::<f32>().unwrap())
                .concat(),
            b.cumsum(-1).to_vec::<i64>().unwrap(),
            (&a * 0.001f32 + 1.0f32).cumprod(0).to_vec::<f32>().unwrap(),
        )
    };
    let (sums, int_sums, products) = reference(&want);
    // The integer sums are exact: check them against a plain running sum.
    let mut run = 0i64;
    for (j, got) in int_sums[n..].iter().enumerate() {
        run += i64::from(ints[n + j]);
        assert_eq!(*got, run);
    }
    for cx in common::backends() {
        let (s, i, p) = reference(&cx);
        let name = cx.backend_name();
        assert!(
            s.iter().zip(&sums).all(|(a, b)| a.to_bits() == b.to_bits()),
            "{name}"
        );
        assert_eq!(i, int_sums, "{name}");
        assert!(
            p.iter()
                .zip(&products)
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "{name}"
        );
    }
}

#[test]
fn running_extremes_keep_the_dtype_and_a_nan_once_met_everywhere() {
    // Lines of 10,000 (three chunks) along each axis, with NaNs after the
    // first chunk in one line, and integers of the narrow dtypes.
    let n = 10_000;
    let mut values: Vec<f64> = (0..2 * n)
        .map(|i| (((i * 7919) % 1000) as f64 - 500.0) * (i as f64).sqrt())
        .collect();
    values[n + 5000] = f64::NAN;
    let ints: Vec<i8> = (0..2 * n).map(|i| ((i * 31) % 255) as i8).collect();
    let running = |line: &[f64], keep: fn(f64, f64) -> f64| -> Vec<f64> {
        let mut acc = line[0];
        let mut seen_nan = false;
        line.iter()
            .map(|&v| {
                seen_nan |= v.is_nan();
                acc = keep(acc, v);
                if seen_nan {
                    f64::NAN
                } else {
                    acc
                }
            })
            .collect()
    };
    let lines = |v: &[f64], keep| [running(&v[..n], keep), running(&v[n..], keep)].concat();
    let int_lines = |v: &[i8], keep: fn(i8, i8) -> i8| -> Vec<i8> {
        v.chunks(n)
            .flat_map(|line| {
                line.iter().scan(line[0], move |acc, &x| {
                    *acc = keep(*acc, x);
                    Some(*acc)
                })
            })
            .collect()
    };
    let same = |got: &[f64], want: &[f64]| {
        got.iter()
            .zip(want)
            .all(|(g, w)| g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()))
    };
    for cx in common::backends() {
        let name = cx.backend_name();
        let x = cx.from_vec(values.clone(), &[2, n]).unwrap();
        let maxima = x.cummax(1);
        assert_eq!(maxima.dtype(), DType::F64);
        assert!(
            same(&maxima.to_vec::<f64>().unwrap(), &lines(&values, f64::max)),
            "{name}"
        );
        // Along the first axis of the transpose: the same lines.
        let minima = x.transpose().cummin(0).transpose();
        assert!(
            same(&minima.to_vec::<f64>().unwrap(), &lines(&values, f64::min)),
            "{name}"
        );
        let k = cx.from_vec(ints.clone(), &[2, n]).unwrap();
        let (kmax, kmin) = (k.cummax(-1), k.cummin(-1));
        assert_eq!((kmax.dtype(), kmin.dtype()), (DType::I8, DType::I8));
        assert_eq!(
            kmax.to_vec::<i8>().unwrap(),
            int_lines(&ints, std::cmp::max),
            "{name}"
        );
        assert_eq!(
            kmin.to_vec::<i8>().unwrap(),
            int_lines(&ints, std::cmp::min),
            "{name}"
        );
        // Fused with a producer, and bool (NumPy's logical_or.accumulate).
        let seen = (&x * -1.0).gt(1000.0).cummax(1);
        assert_eq!(seen.dtype(), DType::Bool);
        let want: Vec<bool> = lines(
            &values
                .iter()
                .map(|&v| f64::from(u8::from(-v > 1000.0)))
                .collect::<Vec<_>>(),
            f64::max,
        )
        .iter()
        .map(|&v| v != 0.0)
        .collect();
        assert_eq!(seen.to_vec::<bool>().unwrap(), want, "{name}");
    }
}

#[test]
fn a_scan_fuses_with_the_work_around_it_and_is_a_step_of_the_plan() {
    let cx = Context::sim();
    let a = cx.from_slice(&[1.0f32, 2.0, 3.0, 4.0]);
    let y = ((&a * 2.0f32).cumsum(0) + 1.0f32).sum();
    let plan = y.explain();
    assert!(
        plan.contains("scan s0") && plan.contains("cumsum"),
        "{plan}"
    );
    cx.reset_stats();
    assert_eq!(y.item::<f32>().unwrap(), 2.0 + 6.0 + 12.0 + 20.0 + 4.0);
    let s = cx.stats();
    // One upload; the scan's three device kernels (chunk totals, carries,
    // running values) computing the producer `a * 2` inside them; the
    // consumer with the sum.
    assert_eq!(
        (s.h2d_copies, s.kernel_launches, s.d2h_copies),
        (1, 4, 1),
        "{s:?}"
    );
    let err = a.cumsum(1).check().unwrap_err().to_string();
    assert!(
        err.contains("cumsum") && err.contains("out of bounds"),
        "{err}"
    );
}

/// The scan kernels that compute the producer of `(a * 2 + b - 1).cumsum(-1)`
/// (f32; and of an int8 producer's i64 cumsum) inside them.
fn fused_scan_kernels() -> Vec<ScanKernels> {
    let cx = Context::sim();
    let a = cx.from_vec(vec![1.0f32; 12], &[3, 4]).unwrap();
    let b = cx.from_vec(vec![2.0f32; 4], &[4]).unwrap();
    let k = cx.from_vec(vec![3i8; 12], &[3, 4]).unwrap();
    let mut kernels = Vec::new();
    for scanned in [(&a * 2.0f32 + &b - 1.0f32).cumsum(-1), (&k * 2i8).cumsum(0)] {
        let graph = ExprGraph::from_roots(&[scanned.node()]);
        let program = compile(&graph, &FusionOptions::default()).unwrap();
        for scan in &program.scans {
            let producer = &program.launches[scan.producer.expect("a sole producer")];
            let built = ScanKernels::build_fused(scan.op, scan.dtype, producer).unwrap();
            kernels.push(built.expect("a replayable producer"));
        }
    }
    kernels
}

#[test]
fn the_scan_kernels_compile_with_nvrtc() {
    if !common::nvrtc_or_skip("the_scan_kernels_compile_with_nvrtc") {
        return;
    }
    let fused = fused_scan_kernels();
    assert_eq!(fused.len(), 2);
    let plain = ReduceOp::ALL.iter().flat_map(|&op| {
        [DType::I64, DType::U64, DType::F32, DType::F64]
            .map(|dtype| ScanKernels::build(op, dtype).unwrap())
    });
    for kernels in plain.chain(fused) {
        for kernel in kernels.kernels() {
            for arch in ["sm_80", "sm_90"] {
                common::compiles_without_spills(kernel.name(), &kernel.cuda_source(), arch);
            }
        }
    }
}

#[test]
fn the_cpu_computes_a_scans_producer_inside_the_scan() {
    // Three lines of 300,001 (enough for parallel passes, chunks that end
    // off the line's end): the fused scan against the materialised one
    // (fusion off) and against one thread, bit for bit.
    let (lines, n) = (3, 300_001);
    let x: Vec<f32> = (0..lines * n)
        .map(|i| ((i * 7919) % 1000) as f32 * 1e-3)
        .collect();
    let y: Vec<f32> = x.iter().rev().map(|v| v - 0.4).collect();
    let run = |cx: &Context| {
        let (a, b) = (
            cx.from_vec(x.clone(), &[lines, n]).unwrap(),
            cx.from_vec(y.clone(), &[lines, n]).unwrap(),
        );
        let sums = (&a * &b - 0.25f32).cumsum(-1);
        let products = (&a * 1e-6f32 + 1.0f32).cumprod(1);
        let counts = a.gt(0.5f32).cumsum(1);
        (
            sums.to_vec::<f32>().unwrap(),
            products.to_vec::<f32>().unwrap(),
            counts.to_vec::<i64>().unwrap(),
        )
    };
    let cpu = |threads: usize, fusion: bool| {
        Context::builder()
            .backend("cpu")
            .threads(threads)
            .fusion(fusion)
            .build()
            .unwrap()
    };
    let fused = cpu(2, true);
    let got = run(&fused);
    for (name, cx) in [("unfused", cpu(2, false)), ("one thread", cpu(1, true))] {
        let want = run(&cx);
        let same = |p: &[f32], q: &[f32]| p.iter().zip(q).all(|(u, v)| u.to_bits() == v.to_bits());
        assert!(same(&got.0, &want.0), "cumsum vs {name}");
        assert!(same(&got.1, &want.1), "cumprod vs {name}");
        assert_eq!(got.2, want.2, "count vs {name}");
    }
    let a = fused.from_vec(x.clone(), &[lines, n]).unwrap();
    let scan = (&a * 2.0f32).cumsum(1);
    assert!(
        scan.explain().contains("computes k0 inside it"),
        "{}",
        scan.explain()
    );
    fused.reset_stats();
    scan.to_vec::<f32>().unwrap();
    // One launch: the scan with its producer.
    assert_eq!(fused.stats().kernel_launches, 1, "{:?}", fused.stats());
}

#[test]
fn device_scans_compute_broadcast_and_transposed_producers_inside_them() {
    // A transposed input and a broadcast row: read with unravelled
    // coordinates inside the scan kernels, the same bits as everywhere.
    let (rows, n) = (5, 9_000);
    let m: Vec<f32> = (0..rows * n)
        .map(|i| ((i * 31) % 97) as f32 * 0.01)
        .collect();
    let row: Vec<f32> = (0..rows).map(|i| i as f32 - 2.0).collect();
    let run = |cx: &Context| {
        let a = cx.from_vec(m.clone(), &[rows, n]).unwrap();
        let r = cx.from_vec(row.clone(), &[rows]).unwrap();
        (&a.transpose() * &r + 1.0f32).cumsum(0)
    };
    let want = run(&Context::builder().backend("reference").build().unwrap())
        .to_vec::<f32>()
        .unwrap();
    let sim = Context::sim();
    let scanned = run(&sim);
    sim.reset_stats();
    let got = scanned.to_vec::<f32>().unwrap();
    assert!(got
        .iter()
        .zip(&want)
        .all(|(p, q)| p.to_bits() == q.to_bits()));
    assert_eq!(sim.stats().kernel_launches, 3, "{:?}", sim.stats());
}
