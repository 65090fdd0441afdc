//! The CUDA backend. Without a GPU: `Context::cuda` explains why it is
//! unavailable and `Context::new` falls back to the CPU, with or without
//! NVRTC. With a GPU (tests print SKIPPED otherwise): exact copy counts,
//! large staged copies, the disk cache round trip, and out-of-memory
//! handling. The shared suites of the other test files run on the GPU
//! through `common::backends()`; `scripts/gpu-check.sh` runs them all there.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;
use std::sync::Arc;

use lazyfuse::codegen::cuda::disk_cache::DiskCache;
use lazyfuse::codegen::cuda::{CudaEngine, CudaRuntime};
use lazyfuse::codegen::device::nvrtc;
use lazyfuse::core::Options;
use lazyfuse::{Context, DType, Error};

fn gpu_or_skip(test: &str) -> Option<Context> {
    match Context::cuda(0) {
        Ok(cx) => Some(cx),
        Err(e) => {
            skipped(&format!("SKIPPED {test}: no usable GPU: {e}"));
            None
        }
    }
}

#[test]
fn without_a_driver_cuda_is_an_error_and_new_falls_back_to_the_cpu() {
    let cuda = Context::cuda(0);
    if let Err(e) = &cuda {
        assert!(matches!(e, Error::BackendUnavailable { .. }), "{e:?}");
        assert!(e.to_string().contains("cuda"), "{e}");
        assert_ne!(Context::new().backend_name(), "cuda");
    }
    let far = Context::cuda(1 << 20).unwrap_err().to_string();
    assert!(far.contains("cuda"), "{far}");
}

/// Run by `machine_without_any_cuda` in a child process whose environment
/// hides NVRTC: the library must still answer with errors.
#[test]
fn child_with_no_cuda_at_all() {
    if std::env::var("LAZYFUSE_TEST_CHILD").as_deref() != Ok("no-cuda") {
        return;
    }
    if nvrtc::load().is_ok() {
        // NVRTC is on the system's library path (a machine with a CUDA
        // toolkit): this process cannot play a machine without CUDA.
        skipped("SKIPPED child_with_no_cuda_at_all: NVRTC is on the system library path");
        return;
    }
    let err = Context::cuda(0).unwrap_err();
    assert!(matches!(err, Error::BackendUnavailable { .. }), "{err:?}");
    let cx = Context::new();
    assert_eq!(cx.backend_name(), "cpu");
    let x = cx.from_slice(&[1.0f32, 2.0, 3.0]);
    assert_eq!((&x * 2.0f32).sum().item::<f32>().unwrap(), 12.0);
}

#[test]
fn machine_without_any_cuda() {
    let status = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_with_no_cuda_at_all", "--nocapture"])
        .env("LAZYFUSE_TEST_CHILD", "no-cuda")
        .env_remove("LAZYFUSE_NVRTC")
        .env_remove("LAZYFUSE_CUDA_INCLUDE")
        .env("LD_LIBRARY_PATH", "")
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn machine_with_nvrtc_but_no_driver() {
    if nvrtc::load().is_err() {
        skipped("SKIPPED machine_with_nvrtc_but_no_driver: NVRTC is not installed here");
        return;
    }
    let (major, _) = nvrtc::version().unwrap();
    assert!(major >= 11);
    match Context::cuda(0) {
        Ok(cx) => eprintln!("a GPU is present: {}", cx.backend_name()),
        Err(e) => {
            assert!(matches!(e, Error::BackendUnavailable { .. }), "{e:?}");
            assert_eq!(Context::new().backend_name(), "cpu");
        }
    }
}

#[test]
fn gpu_copies_only_what_the_plan_needs() {
    let Some(cx) = gpu_or_skip("gpu_copies_only_what_the_plan_needs") else {
        return;
    };
    let n = 1 << 20;
    let a = cx.from_vec(vec![1.5f32; n], &[n]).unwrap();
    let b = cx.from_vec(vec![2.0f32; n], &[n]).unwrap();
    let c = cx.from_vec(vec![0.5f32; n], &[n]).unwrap();
    let y = &a * &b + &c;
    let total = y.sum();
    cx.reset_stats();
    assert_eq!(total.item::<f32>().unwrap(), 3.5 * n as f32);
    let s = cx.stats();
    assert_eq!(
        (s.h2d_copies, s.d2h_copies, s.kernel_launches),
        (3, 1, 1),
        "{s:?}"
    );
    // The inputs now live on the device: a second expression uploads nothing.
    cx.reset_stats();
    let again = (&a - &b).max().item::<f32>().unwrap();
    assert_eq!(again, -0.5);
    assert_eq!(cx.stats().h2d_copies, 0);
}

/// Copies larger than the pinned staging ring (several 32 MiB chunks, and a
/// last partial one) keep every byte, in both directions; several uploads
/// of one size in a row (the case that once shared one staging buffer and
/// overwrote it mid-copy) keep their own values.
#[test]
fn gpu_large_copies_keep_every_byte() {
    let Some(cx) = gpu_or_skip("gpu_large_copies_keep_every_byte") else {
        return;
    };
    let n = 25_000_003;
    let column = |k: u32| -> Vec<f32> {
        (0..n as u32)
            .map(|i| (i.wrapping_mul(2_654_435_761).wrapping_add(k) >> 9) as f32)
            .collect()
    };
    let (a, b, c) = (column(1), column(2), column(3));
    let [da, db, dc] = [&a, &b, &c].map(|v| cx.from_slice(v));
    let y = (&da * 2.0f32 + &db) - &dc;
    let mut got = vec![0f32; n];
    y.read_into(&mut got).unwrap();
    for i in 0..n {
        let want = (a[i] * 2.0 + b[i]) - c[i];
        assert_eq!(got[i].to_bits(), want.to_bits(), "element {i}");
    }
    // The uploaded inputs come back as they went (through `to_vec`).
    assert!(db.to_vec::<f32>().unwrap() == b);
}

#[test]
fn gpu_disk_cache_round_trip() {
    if gpu_or_skip("gpu_disk_cache_round_trip").is_none() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("lazyfuse-gpu-cache-{}", std::process::id()));
    let run = || {
        let engine = CudaEngine::new(CudaRuntime::with_disk_cache(0, DiskCache::at(&dir)).unwrap());
        let cx = Context::with_engine(Arc::new(engine), Options::default());
        let x = cx.from_slice(&[1.0f64, 2.0, 3.0]);
        assert_eq!((&x * &x).sum().item::<f64>().unwrap(), 14.0);
        cx.stats()
    };
    let first = run();
    let second = run();
    assert_eq!(first.kernels_compiled, 1, "{first:?}");
    assert_eq!(
        (second.kernels_compiled, second.kernel_cache_hits),
        (0, 1),
        "{second:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn gpu_out_of_memory_is_an_error() {
    let Some(cx) = gpu_or_skip("gpu_out_of_memory_is_an_error") else {
        return;
    };
    // 1 TiB of f32 on the device: no GPU has it.
    let n = 1usize << 38;
    let huge = cx.full(&[n], 1.0, DType::F32) + 1.0f32;
    // Too large for the device, the plan is a pipeline whose result comes
    // back to the host, which cannot hold it either.
    match huge.eval() {
        Err(Error::Device { message, .. }) => {
            assert!(
                message.contains("OUT_OF_MEMORY") || message.contains("out of memory"),
                "{message}"
            )
        }
        other => panic!("expected an out-of-memory error, got {other:?}"),
    }
    // The context is still usable.
    let x = cx.from_slice(&[1i32, 2, 3]);
    assert_eq!(x.sum().item::<i64>().unwrap(), 6);
    cx.release_device_memory();
}

#[test]
fn gpu_mapped_memory_is_read_in_place_and_large_demands_run_in_chunks() {
    let Some(cx) =
        gpu_or_skip("gpu_mapped_memory_is_read_in_place_and_large_demands_run_in_chunks")
    else {
        return;
    };
    let n = 1 << 20;
    let mut m = cx.mapped::<f32>(n).unwrap();
    m.iter_mut()
        .enumerate()
        .for_each(|(i, v)| *v = (i % 1000) as f32);
    let x = m.array(&[n]).unwrap();
    cx.reset_stats();
    let y = (&x * 2.0f32).to_vec::<f32>().unwrap();
    assert!(y
        .iter()
        .enumerate()
        .all(|(i, &v)| v == (2 * (i % 1000)) as f32));
    assert_eq!(cx.stats().h2d_copies, 0, "read in place: {:?}", cx.stats());

    // 3 × 256 MiB in, 256 MiB out, on 64 MiB of device memory.
    let cx = Context::builder()
        .backend("cuda")
        .device_memory_limit(64 << 20)
        .build()
        .unwrap();
    let n = 64 << 20;
    let a: Vec<f32> = (0..n).map(|i| (i % 61) as f32).collect();
    let (xa, xb, xc) = (cx.from_slice(&a), cx.from_slice(&a), cx.from_slice(&a));
    let y = &(&xa * &xb) + &xc;
    assert!(y.explain().contains("pipeline"), "{}", y.explain());
    let got = y.to_vec::<f32>().unwrap();
    assert!(got.iter().zip(&a).all(|(g, a)| *g == a * a + a));
    let norm = ((&xa * &xa) + (&xb * &xb))
        .sqrt()
        .sum()
        .item::<f32>()
        .unwrap();
    let want: f64 = a.iter().map(|v| (2.0 * f64::from(*v).powi(2)).sqrt()).sum();
    assert!(
        (f64::from(norm) - want).abs() <= 1e-4 * want,
        "{norm} against {want}"
    );
}

#[test]
fn gpu_streams_run_on_cuda_streams_of_their_own_and_agree_with_one() {
    let Some(cx) = gpu_or_skip("gpu_streams_run_on_cuda_streams_of_their_own_and_agree_with_one")
    else {
        return;
    };
    let n = 1 << 20;
    let base = cx.from_slice(&(0..n).map(|i| (i % 977) as f32).collect::<Vec<_>>());
    let streams: Vec<_> = (0..4).map(|_| cx.stream()).collect();
    // Each stream builds on the last value of the stream before it, so that
    // values cross streams while their buffers are freed and reused.
    let mut values = vec![base.clone(); streams.len()];
    for round in 0..25 {
        let mut pending = Vec::new();
        for (k, s) in streams.iter().enumerate() {
            let from = &values[(k + streams.len() - 1) % streams.len()];
            let next = (from * 0.5f32 + &base).sqrt() + (round as f32);
            pending.push(s.eval(&[&next]).unwrap());
            values[k] = next;
        }
        for p in pending {
            p.wait().unwrap();
        }
    }
    let on_cpu = Context::cpu();
    let base_cpu = on_cpu.from_slice(&base.to_vec::<f32>().unwrap());
    let mut want = vec![base_cpu.clone(); streams.len()];
    for round in 0..25 {
        for k in 0..streams.len() {
            let from = &want[(k + streams.len() - 1) % streams.len()];
            want[k] = (from * 0.5f32 + &base_cpu).sqrt() + (round as f32);
        }
    }
    for (got, want) in values.iter().zip(&want) {
        let (got, want) = (got.to_vec::<f32>().unwrap(), want.to_vec::<f32>().unwrap());
        assert!(got
            .iter()
            .zip(&want)
            .all(|(g, w)| (g - w).abs() <= 1e-5 * w.abs().max(1.0)));
    }
}

/// Says a test was skipped on the terminal itself (past the test harness's
/// output capture), so a run without a GPU or NVRTC shows what it did not check.
fn skipped(message: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{message}");
}
