//! The tutorials' memory-management programs in lazyfuse (run on `sim`,
//! the simulated GPU, and on `cpu`): a destination made with `empty` and
//! filled by a ufunc's `out=` (Numba's `device_array` + `add(x, y,
//! out=out)` + `copy_to_host`), two streams whose copies and kernels
//! overlap on the simulated timeline, pinned host memory (uploads and
//! downloads with no staging copy), mapped host memory (read and written by
//! the device in place), deferred cleanup, and a per-thread local array in
//! a kernel; then, on `sim` only, the automatic pipeline that runs 64 MiB
//! inputs on a 16 MiB device. `docs/memory.md` puts them beside Numba's.
//!
//! Run: `cargo run --example memory`.

use lazyfuse::kernel::Kernel;
use lazyfuse::{Context, DType, Expr, Result, SimTiming, Ufunc};

fn main() -> Result<()> {
    // The simulated GPU with a timeline: 10 GB/s copies each way, 10^9
    // elements per second of compute.
    let sim = Context::builder()
        .backend("sim")
        .sim_timing(SimTiming {
            host_to_device: 1e10,
            device_to_host: 1e10,
            elements_per_second: 1e9,
            launch_overhead: 5e-6,
        })
        .build()?;
    for cx in [sim, Context::cpu()] {
        println!("== {}", cx.backend_name());
        destination(&cx)?;
        two_streams(&cx)?;
        pinned(&cx)?;
        mapped(&cx)?;
        deferred_cleanup(&cx)?;
        local_array(&cx)?;
    }
    out_of_core()
}

/// `out_device = cuda.device_array(n)`; `add_ufunc(x, y, out=out_device)`;
/// `out_device.copy_to_host()`.
fn destination(cx: &Context) -> Result<()> {
    let add = Ufunc::new("add", |[x, y]: [Expr; 2]| x + y);
    let n = 100_000;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let y: Vec<f32> = x.iter().map(|v| 2.0 * v).collect();
    let (x_device, y_device) = (
        cx.from_slice(&x).to_device()?,
        cx.from_slice(&y).to_device()?,
    );
    let out_device = cx.empty(&[n], DType::F32);
    add.call_into(&[&x_device, &y_device], &out_device)?;
    out_device.eval()?;
    let before = cx.stats();
    for _ in 0..3 {
        // Each new value of `out_device` reuses the buffer of the last.
        add.call_into(&[&x_device, &y_device], &out_device)?;
        out_device.eval()?;
    }
    let mut out_host = vec![0f32; n];
    out_device.read_into(&mut out_host)?;
    println!(
        "out= : {:?} … ({} device allocations in the steady loop)",
        &out_host[..4],
        cx.stats().device_allocations - before.device_allocations
    );
    Ok(())
}

/// Two streams, each uploading, computing and downloading its own half.
fn two_streams(cx: &Context) -> Result<()> {
    let (s1, s2) = (cx.stream(), cx.stream());
    let half = 1 << 16;
    let a = cx.from_slice(&vec![1.0f32; half]);
    let b = cx.from_slice(&vec![2.0f32; half]);
    let (ya, yb) = ((&a * 3.0f32).sqrt(), (&b * 3.0f32).sqrt());
    let (p1, p2) = (s1.eval(&[&ya])?, s2.eval(&[&yb])?);
    p1.wait()?;
    p2.wait()?;
    let (mut out1, mut out2) = (vec![0f32; half], vec![0f32; half]);
    ya.read_into_on(&mut out1, &s1)?;
    yb.read_into_on(&mut out2, &s2)?;
    s1.synchronize()?;
    s2.synchronize()?;
    println!("streams: {} and {}", out1[0], out2[0]);
    if let Some(events) = cx.timeline() {
        let ours = [s1.id(), s2.id()];
        for e in events.iter().filter(|e| ours.contains(&e.stream)) {
            println!(
                "  stream {} {:?} {:.1}–{:.1} µs {}",
                e.stream,
                e.engine,
                e.start * 1e6,
                e.end * 1e6,
                e.what
            );
        }
    }
    Ok(())
}

/// `cuda.pinned_array`: an upload from pinned memory and a download into
/// it, neither through a staging buffer.
fn pinned(cx: &Context) -> Result<()> {
    let n = 1 << 16;
    let mut h = cx.pinned::<f32>(n)?;
    for (i, v) in h.iter_mut().enumerate() {
        *v = i as f32;
    }
    let a = cx.from_slice(&h[..]); // shares the pinned buffer: no copy now
    let mut out = cx.pinned::<f32>(n)?;
    let before = cx.stats();
    (&a * 0.5f32).read_into(&mut out[..])?;
    let stats = cx.stats();
    println!(
        "pinned: out[8] = {}; {} bytes up, {} down, {} staged",
        out[8],
        stats.h2d_bytes - before.h2d_bytes,
        stats.d2h_bytes - before.d2h_bytes,
        stats.staged_bytes - before.staged_bytes
    );
    // Writing `h` while `a` shares it copies it first: `a` keeps its values.
    h[8] = -1.0;
    assert_eq!(a.to_vec::<f32>()?[8], 8.0);
    Ok(())
}

/// `cuda.mapped_array`: the device reads the input and writes the result
/// in host memory, in place: nothing is copied.
fn mapped(cx: &Context) -> Result<()> {
    let n = 1 << 16;
    let mut m = cx.mapped::<f32>(n)?;
    for (i, v) in m.iter_mut().enumerate() {
        *v = i as f32;
    }
    let a = m.array(&[n])?;
    let mut out = cx.mapped::<f32>(n)?;
    let before = cx.stats();
    (&a * 2.0f32).read_into(&mut out[..])?;
    let stats = cx.stats();
    println!(
        "mapped: out[8] = {}; {} copies, {} bytes read and written in place",
        out[8],
        (stats.h2d_copies + stats.d2h_copies) - (before.h2d_copies + before.d2h_copies),
        stats.mapped_bytes - before.mapped_bytes
    );
    Ok(())
}

/// No stream code: 3 × 64 MiB in, 64 MiB out, on a simulated device of
/// 16 MiB; the plan runs in chunks whose copies overlap the kernels.
fn out_of_core() -> Result<()> {
    let cx = Context::builder()
        .backend("sim")
        .device_memory_limit(16 << 20)
        .sim_timing(SimTiming {
            elements_per_second: 3e9, // a kernel as slow as its copies
            ..SimTiming::default()
        })
        .build()?;
    let n = 16 << 20;
    let a: Vec<f32> = (0..n).map(|i| (i % 100) as f32).collect();
    let (x, y, z) = (cx.from_slice(&a), cx.from_slice(&a), cx.from_slice(&a));
    let e = &(&x * &y) + &z;
    let explain = e.explain();
    for line in explain
        .lines()
        .filter(|l| l.contains("pipeline") || l.contains("chunk"))
    {
        println!("{line}");
    }
    let v = e.to_vec::<f32>()?;
    let events = cx.timeline().unwrap_or_default();
    let start = events.iter().map(|e| e.start).fold(f64::INFINITY, f64::min);
    let end = events.iter().map(|e| e.end).fold(0.0, f64::max);
    let serial: f64 = events.iter().map(|e| e.end - e.start).sum();
    println!(
        "out of core: v[12345] = {} ({}); {:.2} ms pipelined against {:.2} ms one after another",
        v[12345],
        a[12345] * a[12345] + a[12345],
        (end - start) * 1e3,
        serial * 1e3
    );
    Ok(())
}

/// `with cuda.defer_cleanup():` freed device buffers wait for the guard.
fn deferred_cleanup(cx: &Context) -> Result<()> {
    let x = cx.from_slice(&[1.0f64, 2.0, 3.0]);
    {
        let _guard = cx.defer_cleanup();
        for _ in 0..3 {
            let y = (&x * 2.0).sum();
            y.eval()?; // its buffers are queued here, not reused
        }
    } // released when the last guard drops
    cx.release_device_memory();
    println!("defer_cleanup: done");
    Ok(())
}

/// `cuda.local.array(4, float32)`: each thread reverses its four values.
fn local_array(cx: &Context) -> Result<()> {
    let kernel = Kernel::build("reverse_in_fours", |k| {
        let a = k.array("a", DType::F32, 1);
        let out = k.array_mut("out", DType::F32, 1);
        let i = k.grid(1).remove(0);
        k.if_((&i * 4.0 + 3.0).lt(a.len(0)), |k| {
            let window = k.local_array(DType::F32, &[4]);
            k.for_range(0i64, 4i64, 1i64, |k, j| {
                k.store_local(&window, &j, a.at(&i * 4.0 + &j));
            });
            k.for_range(0i64, 4i64, 1i64, |k, j| {
                k.store(&out, &i * 4.0 + &j, window.at(3.0 - &j));
            });
        });
    })?;
    let a = cx.from_slice(&(0..16).map(|v| v as f32).collect::<Vec<_>>());
    let out = cx.zeros(&[16], DType::F32);
    let reversed = kernel
        .launch(cx, 1u32, 4u32, &[(&a).into(), (&out).into()])?
        .remove(0);
    println!("local array: {:?}", reversed.to_vec::<f32>()?);
    Ok(())
}
