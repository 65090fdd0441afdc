//! Pinned host memory (Numba's `cuda.pinned_array`): `cx.pinned::<T>(n)`
//! gives a buffer that arrays share instead of copying, that uploads read
//! and `read_into` writes with no staging copy, and that copies itself on
//! write while an array shares it, so array values stay immutable.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use lazyfuse::{Context, DType};

#[test]
fn arrays_share_a_pinned_buffer_and_keep_their_values_when_it_is_rewritten() {
    for cx in common::backends() {
        let name = cx.backend_name();
        let mut h = cx.pinned::<f32>(1000).unwrap();
        assert_eq!(h.len(), 1000);
        assert!(h.iter().all(|&v| v == 0.0), "{name}: zeroed");
        for (i, v) in h.iter_mut().enumerate() {
            *v = i as f32;
        }
        let a = cx.from_slice(&h[..]);
        let b = h.array(&[10, 100]).unwrap();
        assert!(h.is_shared(), "{name}: the arrays share the buffer");
        let sum = a.sum();
        // Writing it now copies it first: the arrays keep their values.
        h[0] = 1e6;
        assert_eq!(sum.item::<f32>().unwrap(), 499_500.0, "{name}");
        assert_eq!(b.sum_axis(1).to_vec::<f32>().unwrap()[0], 4950.0, "{name}");
        assert_eq!(h[0], 1e6, "{name}");
        assert_eq!(
            cx.from_slice(&h[..]).max().item::<f32>().unwrap(),
            1e6,
            "{name}"
        );
        // A part of it is an ordinary copy.
        assert_eq!(cx.from_slice(&h[1..3]).to_vec::<f32>().unwrap(), [1.0, 2.0]);
    }
}

#[test]
fn copies_from_and_to_pinned_memory_are_not_staged() {
    let cx = Context::sim();
    let n = 4096;
    let mut h = cx.pinned::<f32>(n).unwrap();
    h.iter_mut().enumerate().for_each(|(i, v)| *v = i as f32);
    let pageable: Vec<f32> = h.to_vec();
    let (from_pinned, from_pageable) = (cx.from_slice(&h[..]), cx.from_slice(&pageable));

    cx.reset_stats();
    let doubled = &from_pinned * 2.0f32;
    doubled.eval().unwrap();
    let stats = cx.stats();
    assert_eq!((stats.h2d_copies, stats.h2d_bytes), (1, 4 * n as u64));
    assert_eq!(
        stats.staged_bytes, 0,
        "uploaded from the pinned memory itself"
    );

    let mut out = cx.pinned::<f32>(n).unwrap();
    doubled.read_into(&mut out[..]).unwrap();
    assert_eq!(out[5], 10.0);
    let stats = cx.stats();
    assert_eq!(
        (stats.d2h_copies, stats.staged_bytes),
        (1, 0),
        "downloaded into it"
    );

    cx.reset_stats();
    let tripled = &from_pageable * 3.0f32;
    let mut plain = vec![0f32; n];
    tripled.eval().unwrap();
    tripled.read_into(&mut plain).unwrap();
    assert_eq!(plain[5], 15.0);
    assert_eq!(
        cx.stats().staged_bytes,
        2 * 4 * n as u64,
        "pageable both ways"
    );
}

#[test]
fn pinned_buffers_of_every_dtype_and_misuse() {
    let cx = Context::sim();
    let mut flags = cx.pinned::<bool>(3).unwrap();
    flags[1] = true;
    let any = flags.array(&[3]).unwrap().any();
    assert!(any.item::<bool>().unwrap());
    let mut ints = cx.pinned::<i64>(4).unwrap();
    ints.copy_from_slice(&[1, 2, 3, 4]);
    let ints = ints.array(&[2, 2]).unwrap();
    assert_eq!(ints.dtype(), DType::I64);
    assert_eq!(ints.sum().item::<i64>().unwrap(), 10);
    let empty = cx.pinned::<f64>(0).unwrap();
    assert_eq!(empty.array(&[0]).unwrap().sum().item::<f64>().unwrap(), 0.0);

    let h = cx.pinned::<f32>(6).unwrap();
    let error = h.array(&[4, 2]).unwrap_err().to_string();
    assert!(
        error.contains("6 elements") && error.contains("(4, 2)"),
        "{error}"
    );
}

#[test]
fn a_pinned_buffer_outlives_its_arrays_and_they_outlive_it() {
    for cx in [Context::sim(), Context::cpu()] {
        let a = {
            let mut h = cx.pinned::<f64>(100).unwrap();
            h.fill(0.5);
            h.array(&[100]).unwrap()
        }; // the buffer's last holder is now the array
        assert_eq!(a.sum().item::<f64>().unwrap(), 50.0);
        drop(a);
        // Retired buffers are released at the next pinned allocation.
        for _ in 0..50 {
            let mut h = cx.pinned::<f32>(1 << 12).unwrap();
            h[0] = 1.0;
            assert_eq!(
                h.array(&[1 << 12]).unwrap().sum().item::<f32>().unwrap(),
                1.0
            );
        }
    }
}

#[test]
fn an_upload_of_a_pinned_buffer_is_made_now_and_does_not_share_it() {
    for cx in common::backends() {
        let name = cx.backend_name();
        let mut h = cx.pinned::<f32>(256).unwrap();
        h.iter_mut().enumerate().for_each(|(i, v)| *v = i as f32);
        cx.reset_stats();
        let d = h.upload(&[16, 16]).unwrap();
        assert!(
            !h.is_shared(),
            "{name}: the array keeps only its device copy"
        );
        if name == "sim" {
            let stats = cx.stats();
            assert_eq!((stats.h2d_copies, stats.staged_bytes), (1, 0), "{stats:?}");
        }
        h[0] = 1e6; // written in place: nothing shares it
        assert_eq!(d.max().item::<f32>().unwrap(), 255.0, "{name}");
        assert_eq!(d.shape(), [16, 16]);
        assert!(h.upload(&[3]).is_err(), "{name}: 256 elements are not 3");

        let mut m = cx.mapped::<f32>(4).unwrap();
        m.copy_from_slice(&[1.0, 2.0, 3.0, 4.0]);
        let copy = m.upload(&[4]).unwrap();
        m[0] = -1.0;
        assert_eq!(
            copy.to_vec::<f32>().unwrap(),
            [1.0, 2.0, 3.0, 4.0],
            "{name}"
        );
    }
}
