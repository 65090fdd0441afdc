//! The automatic pipeline: a demand that moves a lot, or does not fit in
//! the device's memory, runs in chunks whose uploads, kernels and
//! downloads overlap, with no stream code from the user. On `sim`, with a
//! 16 MiB device, 64 MiB inputs still evaluate, to the reference's result;
//! the simulated timeline shows the overlap.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use lazyfuse::{is_pipeline_stream, Array, Context, SimTiming, TimelineEvent};

const MIB: usize = 1 << 20;
/// 64 MiB of f32.
const N: usize = 16 * MIB;

/// A simulated device whose kernels run at the speed of its uploads (3·10⁹
/// elements per second against 25 GB/s copies): the case where overlapping
/// copies with kernels matters. (With `SimTiming::default()`, kernels take
/// a few percent of the copies' time, and the pipeline can only overlap
/// uploads with downloads.)
fn balanced() -> SimTiming {
    SimTiming {
        elements_per_second: 3e9,
        ..SimTiming::default()
    }
}

/// A sim context with a 16 MiB device, keeping a timeline.
fn small_device(timing: SimTiming) -> Context {
    Context::builder()
        .backend("sim")
        .device_memory_limit(16 * MIB)
        .sim_timing(timing)
        .build()
        .unwrap()
}

/// A sim context that pipelines demands moving more than 1 MiB.
fn pipelining_above_a_mib() -> Context {
    Context::builder()
        .backend("sim")
        .pipeline_threshold(MIB)
        .build()
        .unwrap()
}

/// Values exact in f32 through `a*b + c`, so results compare bit for bit.
fn input(n: usize, seed: usize) -> Vec<f32> {
    (0..n)
        .map(|i| ((i * 7 + seed * 13) % 61) as f32 - 30.0)
        .collect()
}

/// The pipeline's events on the timeline, and how long they took in all
/// (first start to last end) against one after another.
fn pipelined_and_serial(events: &[TimelineEvent]) -> (f64, f64) {
    let ours: Vec<&TimelineEvent> = events
        .iter()
        .filter(|e| is_pipeline_stream(e.stream))
        .collect();
    assert!(!ours.is_empty(), "no work on pipeline streams");
    let start = ours.iter().map(|e| e.start).fold(f64::INFINITY, f64::min);
    let end = ours.iter().map(|e| e.end).fold(0.0, f64::max);
    let serial: f64 = ours.iter().map(|e| e.end - e.start).sum();
    (end - start, serial)
}

#[test]
fn a_product_sum_over_64_mib_inputs_runs_on_a_16_mib_device() {
    let cx = small_device(balanced());
    let (a, b, c) = (input(N, 1), input(N, 2), input(N, 3));
    let (xa, xb, xc) = (cx.from_slice(&a), cx.from_slice(&b), cx.from_slice(&c));
    let y = &(&xa * &xb) + &xc;
    let explain = y.explain();
    assert!(
        explain.contains(
            "pipeline (instead of the plan above): needs 256.0 MiB of device memory, 16.0 MiB free"
        ),
        "{explain}"
    );
    assert!(explain.contains("on 3 streams"), "{explain}");
    cx.reset_stats();
    let got = y.to_vec::<f32>().unwrap();
    for i in (0..N).step_by(4093).chain([N - 1]) {
        assert_eq!(got[i], a[i] * b[i] + c[i], "element {i}");
    }
    assert!(got
        .iter()
        .zip(&a)
        .zip(&b)
        .zip(&c)
        .all(|(((g, a), b), c)| *g == a * b + c));
    let stats = cx.stats();
    // Each input uploaded once, in parts; the result downloaded once.
    assert_eq!(stats.h2d_bytes, 3 * 4 * N as u64);
    assert_eq!(stats.d2h_bytes, 4 * N as u64);
    assert!(stats.h2d_copies > 3 * 8, "{stats:?}");
    let (pipelined, serial) = pipelined_and_serial(&cx.timeline().unwrap());
    assert!(
        pipelined <= 0.6 * serial,
        "pipelined {pipelined:.6} s against {serial:.6} s one after another"
    );
}

#[test]
fn a_reduction_over_64_mib_inputs_runs_on_a_16_mib_device() {
    let cx = small_device(balanced());
    let (a, b) = (input(N, 4), input(N, 5));
    let (xa, xb) = (cx.from_slice(&a), cx.from_slice(&b));
    let norm = ((&xa * &xa) + (&xb * &xb)).sqrt().sum();
    assert!(
        norm.explain().contains("partial results"),
        "{}",
        norm.explain()
    );
    let got = f64::from(norm.item::<f32>().unwrap());
    let want: f64 = a
        .iter()
        .zip(&b)
        .map(|(a, b)| (f64::from(*a).powi(2) + f64::from(*b).powi(2)).sqrt())
        .sum();
    assert!((got - want).abs() <= 1e-5 * want, "{got} against {want}");
    let (pipelined, serial) = pipelined_and_serial(&cx.timeline().unwrap());
    assert!(
        pipelined <= 0.6 * serial,
        "pipelined {pipelined:.6} s against {serial:.6} s one after another"
    );
}

#[test]
fn uploads_kernels_and_downloads_of_different_chunks_overlap() {
    let cx = Context::builder()
        .backend("sim")
        .pipeline_threshold(MIB)
        .sim_timing(balanced())
        .build()
        .unwrap();
    let n = MIB;
    let (xa, xb) = (cx.from_slice(&input(n, 6)), cx.from_slice(&input(n, 7)));
    (&xa - &xb).to_vec::<f32>().unwrap();
    let events = cx.timeline().unwrap();
    let find = |what: &str| -> Vec<&TimelineEvent> {
        events.iter().filter(|e| e.what.starts_with(what)).collect()
    };
    let (uploads, kernels, downloads) = (find("upload"), find("kernel"), find("download"));
    assert!(kernels.len() >= 2, "{events:#?}");
    // Some kernel runs while another chunk uploads, and while another downloads.
    assert!(kernels.iter().any(|k| uploads
        .iter()
        .any(|u| u.stream != k.stream && u.overlaps(k))));
    assert!(kernels.iter().any(|k| downloads
        .iter()
        .any(|d| d.stream != k.stream && d.overlaps(k))));
    // Within a stream, one thing at a time, in order.
    for e in &events {
        for f in &events {
            if e.stream == f.stream && !std::ptr::eq(e, f) {
                assert!(!e.overlaps(f), "{e:?} and {f:?}");
            }
        }
    }
}

/// The same demand on a plain `sim` context, without the pipeline.
fn unpipelined(build: impl Fn(&Context) -> Array) -> Vec<f64> {
    let cx = Context::builder()
        .backend("sim")
        .pipeline_threshold(usize::MAX)
        .build()
        .unwrap();
    let y = build(&cx);
    assert!(!y.explain().contains("pipeline"), "{}", y.explain());
    y.astype(lazyfuse::DType::F64).to_vec::<f64>().unwrap()
}

#[test]
fn every_shape_of_pipelined_work_matches_the_unchunked_plan() {
    let (rows, cols) = (600, 1000);
    let a = input(rows * cols, 8);
    let row = input(cols, 9);
    type Case = (&'static str, bool, fn(&Array, &Array) -> Array);
    /// `0, 1, 2, ...` over `n` elements of `a`'s session.
    fn positions(a: &Array, n: usize) -> Array {
        a.session().arange(0.0, n as f64, 1.0, lazyfuse::DType::F32)
    }
    let cases: [Case; 10] = [
        ("element-wise with a broadcast row", true, |a, r| {
            &(a * 2.0f32) + r
        }),
        ("sum of everything", true, |a, r| (a + r).sum()),
        ("sum over rows", true, |a, _| a.sum_axis(0)),
        ("sum within rows", true, |a, _| a.sum_axis(1)),
        ("mean of everything", true, |a, _| a.mean()),
        ("min of squares", true, |a, _| (a * a).min()),
        ("cast to f64 and summed over rows", true, |a, _| {
            a.astype(lazyfuse::DType::F64).sum_axis(0)
        }),
        ("flattened, plus its positions (arange)", true, |a, _| {
            &a.reshape(&[600_000]) + &positions(a, 600_000)
        }),
        ("weighted by positions along rows, summed", true, |a, _| {
            (a * &positions(a, 1000)).sum()
        }),
        // A strided view is read whole by the plain plan: not pipelined.
        ("max of a slice", false, |a, _| {
            a.slice_axis(1, Some(10), Some(900), 1).max()
        }),
    ];
    for (what, pipelined, build) in cases {
        let make = |cx: &Context| {
            let xa = cx.from_slice(&a).reshape(&[rows, cols]);
            let xr = cx.from_slice(&row);
            build(&xa, &xr)
        };
        let want = unpipelined(make);
        let cx = Context::builder()
            .backend("sim")
            .pipeline_threshold(64 << 10)
            .build()
            .unwrap();
        let y = make(&cx);
        let explain = y.explain();
        assert_eq!(explain.contains("pipeline"), pipelined, "{what}\n{explain}");
        let got = y.astype(lazyfuse::DType::F64).to_vec::<f64>().unwrap();
        assert_eq!(got.len(), want.len(), "{what}");
        for (g, w) in got.iter().zip(&want) {
            assert!(
                (g - w).abs() <= 1e-4 * w.abs().max(1.0),
                "{what}: {g} against {w}"
            );
        }
    }
}

#[test]
fn inputs_already_on_the_device_are_read_in_place() {
    let cx = pipelining_above_a_mib();
    let n = MIB;
    let (a, b) = (input(n, 10), input(n, 11));
    let xa = cx.from_slice(&a).to_device().unwrap();
    let xb = cx.from_slice(&b);
    cx.reset_stats();
    let y = &(&xa * &xb) + 1.0f32;
    assert!(y.explain().contains("pipeline"), "{}", y.explain());
    let mut out = vec![0f32; n];
    y.read_into(&mut out).unwrap();
    for (i, ((o, a), b)) in out.iter().zip(&a).zip(&b).enumerate() {
        assert_eq!(*o, a * b + 1.0, "element {i}");
    }
    // Only `b` moved up; the result came straight into `out`.
    let stats = cx.stats();
    assert_eq!(stats.h2d_bytes, 4 * n as u64);
    assert_eq!(stats.d2h_bytes, 4 * n as u64);
}

#[test]
fn eval_keeps_its_result_on_the_device() {
    // A pipeline's chunks send their outputs to the host: worth it for
    // demands that read them there, not for `eval`, whose result stays in
    // device memory (the GPU run of 2026-11-27 found `eval` of work over
    // device inputs sent through the host in chunks, 250 times slower).
    let cx = pipelining_above_a_mib();
    let n = MIB;
    let (a, b) = (input(n, 13), input(n, 14));
    let xa = cx.from_slice(&a).to_device().unwrap();
    let xb = cx.from_slice(&b).to_device().unwrap();
    cx.reset_stats();
    let y = &(&xa * &xb) + 1.0f32;
    y.eval().unwrap();
    assert!(y.is_on_device());
    let stats = cx.stats();
    assert_eq!((stats.h2d_bytes, stats.d2h_bytes), (0, 0));
    // Read on the host, the same work is worth pipelining.
    let z = &(&xa * &xb) + 2.0f32;
    assert!(z.explain().contains("pipeline"), "{}", z.explain());
    let got = z.to_vec::<f32>().unwrap();
    assert!(got
        .iter()
        .zip(&a)
        .zip(&b)
        .all(|((g, a), b)| *g == a * b + 2.0));
    assert_eq!(cx.stats().d2h_bytes, 4 * n as u64);
    // Over host inputs: uploaded, and the result kept on the device.
    let (ha, hb) = (cx.from_slice(&a), cx.from_slice(&b));
    cx.reset_stats();
    let w = &(&ha * &hb) + 3.0f32;
    w.eval().unwrap();
    assert!(w.is_on_device());
    let stats = cx.stats();
    assert_eq!((stats.h2d_bytes, stats.d2h_bytes), (8 * n as u64, 0));
}

#[test]
fn work_that_cannot_be_chunked_and_does_not_fit_is_an_error() {
    let cx = small_device(SimTiming::default());
    let x = cx.from_slice(&input(8 * MIB, 12));
    // A running sum reads its whole input: not pipelined, and 32 MiB in and
    // out do not fit in 16 MiB.
    let err = x.cumsum(0).to_vec::<f32>().unwrap_err().to_string();
    assert!(
        err.contains("out of device memory") && err.contains("device_memory_limit"),
        "{err}"
    );
    // The device is usable afterwards.
    let small = cx.from_slice(&[1.0f32, 2.0, 3.0]);
    assert_eq!((&small * 2.0f32).to_vec::<f32>().unwrap(), [2.0, 4.0, 6.0]);
}
