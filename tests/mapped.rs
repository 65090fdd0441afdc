//! Mapped host memory (Numba's `cuda.mapped_array`): `cx.mapped::<T>(n)`
//! gives host memory the device reads and writes in place. Arrays over it
//! are read by kernels with no upload, results read into it are written
//! there with no copy (on `sim`, `Stats::mapped_bytes` counts that
//! traffic), and writing it while an array shares it copies it first.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use lazyfuse::Context;

#[test]
fn arrays_over_mapped_memory_compute_and_keep_their_values() {
    for cx in common::backends() {
        let name = cx.backend_name();
        let mut m = cx.mapped::<f64>(1000).unwrap();
        assert!(m.iter().all(|&v| v == 0.0), "{name}: zeroed");
        m.iter_mut().enumerate().for_each(|(i, v)| *v = i as f64);
        let a = m.array(&[10, 100]).unwrap();
        let b = cx.from_slice(&m[..]);
        assert!(m.is_shared(), "{name}");
        let total = (&b * 2.0).sum();
        let rows = a.sum_axis(1);
        // Writing it now copies it first: the arrays keep their values.
        m[0] = 1e6;
        assert_eq!(total.item::<f64>().unwrap(), 999_000.0, "{name}");
        assert_eq!(rows.to_vec::<f64>().unwrap()[0], 4950.0, "{name}");
        assert_eq!(
            cx.from_slice(&m[..]).max().item::<f64>().unwrap(),
            1e6,
            "{name}"
        );
        // As a destination.
        let mut out = cx.mapped::<f64>(1000).unwrap();
        (&b + 1.0).read_into(&mut out[..]).unwrap();
        assert_eq!((out[0], out[999]), (1.0, 1000.0), "{name}");
    }
}

#[test]
fn kernels_read_and_write_mapped_memory_in_place_on_sim() {
    let cx = Context::sim();
    let n = 1 << 16;
    let mut m = cx.mapped::<f32>(n).unwrap();
    m.iter_mut()
        .enumerate()
        .for_each(|(i, v)| *v = (i % 100) as f32);
    let x = m.array(&[n]).unwrap();
    let mut out = cx.mapped::<f32>(n).unwrap();
    cx.reset_stats();
    (&(&x * &x) + 1.0f32).read_into(&mut out[..]).unwrap();
    assert!(out
        .iter()
        .enumerate()
        .all(|(i, &v)| v == ((i % 100) * (i % 100)) as f32 + 1.0));
    let stats = cx.stats();
    assert_eq!((stats.h2d_copies, stats.d2h_copies), (0, 0), "{stats:?}");
    assert_eq!(stats.staged_bytes, 0);
    // The kernel read the input once and the result was written once.
    assert_eq!(stats.mapped_bytes, 2 * 4 * n as u64, "{stats:?}");

    // A pipelined demand reads a mapped input in place, chunk by chunk.
    let cx = Context::builder()
        .backend("sim")
        .pipeline_threshold(1 << 20)
        .build()
        .unwrap();
    let n = 1 << 20;
    let mut m = cx.mapped::<f32>(n).unwrap();
    m.iter_mut().enumerate().for_each(|(i, v)| *v = i as f32);
    let other: Vec<f32> = (0..n).map(|i| (n - i) as f32).collect();
    let y = &m.array(&[n]).unwrap() + &cx.from_slice(&other);
    assert!(y.explain().contains("pipeline"), "{}", y.explain());
    cx.reset_stats();
    assert!(y.to_vec::<f32>().unwrap().iter().all(|&v| v == n as f32));
    assert_eq!(
        cx.stats().h2d_bytes,
        4 * n as u64,
        "only `other` is uploaded"
    );
}

#[test]
fn a_mapped_buffer_of_the_wrong_size_is_an_error() {
    let cx = Context::sim();
    let m = cx.mapped::<i32>(12).unwrap();
    let err = m.array(&[5, 3]).unwrap_err().to_string();
    assert!(
        err.contains("12 elements") && err.contains("(5, 3)"),
        "{err}"
    );
    let empty = cx.mapped::<u8>(0).unwrap();
    assert_eq!(
        empty.array(&[0]).unwrap().to_vec::<u8>().unwrap(),
        Vec::<u8>::new()
    );
}
