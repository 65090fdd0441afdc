//! Streams (Numba's `cuda.stream()`): demands queued on a stream return at
//! once and run in order on its worker; different streams run at the same
//! time; a demand needing another stream's value waits for it; errors come
//! back through `Pending::wait` and `Stream::synchronize`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use lazyfuse::kernel::Kernel;
use lazyfuse::{Context, DType};

#[test]
fn queued_demands_run_in_order_and_keep_their_values() {
    for cx in common::backends() {
        let name = cx.backend_name();
        let s = cx.stream();
        let x = cx.from_slice(&[1.0f32, 2.0, 3.0]);
        let y = &x * 2.0f32;
        let z = (&y + 1.0f32).sum();
        let first = s.eval(&[&y]).unwrap();
        let second = s.eval(&[&z]).unwrap();
        second.wait().unwrap();
        first.wait().unwrap();
        assert!(y.is_materialized() && z.is_materialized(), "{name}");
        assert_eq!(z.item::<f32>().unwrap(), 15.0, "{name}");
        let d = x.to_device_on(&s).unwrap();
        s.synchronize().unwrap();
        let mut out = [0f32; 3];
        (&d * 3.0f32).read_into_on(&mut out, &s).unwrap();
        assert_eq!(out, [3.0, 6.0, 9.0], "{name}");
    }
}

#[test]
fn a_demand_on_one_stream_waits_for_a_value_another_is_computing() {
    let cx = Context::sim();
    let (a, b) = (cx.stream(), cx.stream());
    let x = cx.from_slice(&(0..10_000).map(|i| i as f64).collect::<Vec<_>>());
    let shared = (&x * 0.5).sqrt();
    let left = shared.sum();
    let right = (&shared * 2.0).max();
    let p = a.eval(&[&left]).unwrap();
    let q = b.eval(&[&right]).unwrap();
    p.wait().unwrap();
    q.wait().unwrap();
    let want: f64 = (0..10_000).map(|i| (i as f64 * 0.5).sqrt()).sum();
    assert!((left.item::<f64>().unwrap() - want).abs() < 1e-6);
    assert_eq!(right.item::<f64>().unwrap(), (9999.0f64 * 0.5).sqrt() * 2.0);
}

#[test]
fn streams_are_shared_between_threads() {
    let cx = Context::cpu();
    let s = cx.stream();
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let (s, cx) = (s.clone(), cx.clone());
            std::thread::spawn(move || {
                let x = cx.from_slice(&[i as f32; 100]);
                let total = (&x + 1.0f32).sum();
                s.eval(&[&total]).unwrap().wait().unwrap();
                total.item::<f32>().unwrap()
            })
        })
        .collect();
    let sums: Vec<f32> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(sums, [100.0, 200.0, 300.0, 400.0]);
}

#[test]
fn errors_come_back_through_pending_and_synchronize() {
    let cx = Context::sim();
    let s = cx.stream();
    let bad = cx.from_slice(&[1.0f32, 2.0]).reshape(&[3]);
    assert!(s.eval(&[&bad]).unwrap_err().to_string().contains("reshape"));
    let other = Context::cpu().zeros(&[2], DType::F32);
    assert!(s
        .eval(&[&other])
        .unwrap_err()
        .to_string()
        .contains("another context"));

    let unguarded = Kernel::build("unguarded", |k| {
        let a = k.array_mut("a", DType::I32, 1);
        let i = k.grid(1).remove(0);
        k.store(&a, i, 7i32);
    })
    .unwrap();
    let a = cx.zeros(&[10], DType::I32);
    let out = unguarded
        .launch(&cx, 1u32, 32u32, &[(&a).into()])
        .unwrap()
        .remove(0);
    let err = s.eval(&[&out]).unwrap().wait().unwrap_err().to_string();
    assert!(err.contains("outside its 10 elements"), "{err}");
    // The stream goes on after a failure.
    let fine = cx.from_slice(&[4.0f32]);
    s.eval(&[&fine]).unwrap().wait().unwrap();
    s.synchronize().unwrap();
}

#[test]
fn the_simulated_timeline_shows_copies_of_one_stream_overlapping_kernels_of_another() {
    use lazyfuse::codegen::sim::SimTiming;
    use lazyfuse::DeviceEngine;
    let cx = Context::builder()
        .backend("sim")
        .sim_timing(SimTiming {
            host_to_device: 1e9,
            device_to_host: 1e9,
            elements_per_second: 1e8,
            launch_overhead: 1e-6,
        })
        .build()
        .unwrap();
    let (a, b) = (cx.stream(), cx.stream());
    let n = 4096;
    let xs: Vec<_> = (0..2).map(|i| cx.from_slice(&vec![i as f32; n])).collect();
    let ys: Vec<_> = xs.iter().map(|x| (x * 2.0f32 + 1.0f32).sqrt()).collect();
    // Stream a's work is queued first, then b's: b's upload then runs on
    // the copy engine while a's kernel runs. (Queued at once, the engines
    // take the work in whatever order the two workers reach them, and a
    // FIFO compute engine may then serialise both kernels after both
    // uploads.)
    let p = a.eval(&[&ys[0]]).unwrap();
    p.wait().unwrap();
    let q = b.eval(&[&ys[1]]).unwrap();
    q.wait().unwrap();
    let mut out = vec![0f32; n];
    ys[0].read_into_on(&mut out, &a).unwrap();
    assert_eq!(out[0], 1.0);

    let events = cx.timeline().expect("sim keeps a timeline");
    let on = |s: &lazyfuse::Stream, engine| -> Vec<_> {
        events
            .iter()
            .filter(|e| e.stream == s.id() && e.engine == engine)
            .collect()
    };
    assert_eq!(on(&a, DeviceEngine::HostToDevice).len(), 1, "{events:#?}");
    assert_eq!(on(&a, DeviceEngine::Compute).len(), 1, "{events:#?}");
    assert_eq!(on(&a, DeviceEngine::DeviceToHost).len(), 1, "{events:#?}");
    assert_eq!(on(&b, DeviceEngine::HostToDevice).len(), 1, "{events:#?}");
    // Within a stream, work is in order and never overlaps.
    for s in [&a, &b] {
        let mine: Vec<_> = events.iter().filter(|e| e.stream == s.id()).collect();
        for pair in mine.windows(2) {
            assert!(pair[0].end <= pair[1].start, "{events:#?}");
        }
    }
    // Across streams, one's kernel runs while the other's upload does.
    let overlap = [(&a, &b), (&b, &a)].iter().any(|(s, t)| {
        on(s, DeviceEngine::Compute).iter().any(|k| {
            on(t, DeviceEngine::HostToDevice)
                .iter()
                .any(|u| k.overlaps(u))
        })
    });
    assert!(overlap, "{events:#?}");
    // One copy engine per direction: the two uploads never overlap.
    let uploads: Vec<_> = events
        .iter()
        .filter(|e| e.engine == DeviceEngine::HostToDevice)
        .collect();
    assert!(!uploads[0].overlaps(uploads[1]), "{events:#?}");
    assert!(Context::cpu().timeline().is_none());
}
